//! Logins and the run folder (issue 42, item 6): every vendor's login reached every agent, and
//! what an agent printed or copied of it landed unredacted in a run folder other local users
//! could read. Each test plants fake logins — variables in assay's environment and login files
//! in the HOME it runs with — and a hostile agent that prints, base64s and copies all it finds;
//! each runs under both Linux backends (`name::bwrap`, `name::landlock`), as root in CI.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;
use support::{HOSTILE_CASE, assay_run, hostile_project as project, stderr, stdout, write_tree};

/// Fake vendor logins in assay's environment: (name, value).
const VARS: &[(&str, &str)] = &[
    (
        "ANTHROPIC_API_KEY",
        "sk-ant-api03-FAKEanthropic1e3c5a7b9d2f4e6a8c",
    ),
    ("OPENAI_API_KEY", "sk-proj-FAKEopenai9a1f3c7e5b2d4a6c8e0f1a"),
    ("CODEX_API_KEY", "sk-FAKEcodexvar5d7f9b1c3e5a7d9f1b3c5e"),
    ("GEMINI_API_KEY", "AIzaSyFAKEgemini4c2e6a8b0d1f3e5a7c9b1d"),
    ("GOOGLE_API_KEY", "AIzaSyFAKEgoogle7e9a1c3e5b7d9f1a3c5e7b"),
    (
        "COPILOT_GITHUB_TOKEN",
        "ghp_FAKEcopilot7b3d5f1a9c2e4b6d8f0a1c",
    ),
    (
        "COPILOT_PROVIDER_API_KEY",
        "cpk-FAKEprovider2b4d6f8a0c2e4b6d8f0a",
    ),
];

/// Fake login files in the HOME assay runs with: (path below HOME, contents).
const FILES: &[(&str, &str)] = &[
    (
        ".claude/.credentials.json",
        r#"{"claudeAiOauth":{"accessToken":"sk-ant-oat01-FAKEclaudeaccess3f5a7c9e1b3d5f7a9c1e3b5d7f","refreshToken":"sk-ant-ort01-FAKEclauderefresh8c0e2a4c6e8a0c2e4a6c8e0a2c","expiresAt":1893456000000,"scopes":["user:inference","user:profile"],"subscriptionType":"max"}}"#,
    ),
    (
        ".codex/auth.json",
        r#"{"OPENAI_API_KEY":"sk-FAKEcodexfilekey6a8c0e2a4c6e8a0c2e4a6c","tokens":{"id_token":"eyJFAKEcodexidtoken.eyJzdWIiOiJmYWtlIn0.c2lnbmF0dXJl","access_token":"eyJFAKEcodexaccess.eyJhdWQiOiJmYWtlIn0.YWNjZXNzc2ln","refresh_token":"rt_FAKEcodexrefresh4e6a8c0e2a4c6e8a0c2e4a6c8e","account_id":"0f1e2d3c-FAKE-4b5a-9687-a1b2c3d4e5f6"},"last_refresh":"2026-11-20T10:00:00Z"}"#,
    ),
    (
        ".gemini/oauth_creds.json",
        r#"{"access_token":"ya29.FAKEgeminiaccess1c3e5a7c9e1b3d5f7a9c1e3b5d","scope":"https://www.googleapis.com/auth/cloud-platform openid","token_type":"Bearer","id_token":"eyJFAKEgeminiidtoken.eyJlbWFpbCI6ImZha2UifQ.c2ln","expiry_date":1893456000000,"refresh_token":"1//0FAKEgeminirefresh9d1f3b5d7f9b1d3f5b7d9f1b3d"}"#,
    ),
];

/// The secret strings planted: every variable's value and every token of the login files.
fn secrets() -> Vec<&'static str> {
    let mut s: Vec<&str> = VARS.iter().map(|(_, v)| *v).collect();
    s.extend([
        "sk-ant-oat01-FAKEclaudeaccess3f5a7c9e1b3d5f7a9c1e3b5d7f",
        "sk-ant-ort01-FAKEclauderefresh8c0e2a4c6e8a0c2e4a6c8e0a2c",
        "sk-FAKEcodexfilekey6a8c0e2a4c6e8a0c2e4a6c",
        "eyJFAKEcodexidtoken.eyJzdWIiOiJmYWtlIn0.c2lnbmF0dXJl",
        "eyJFAKEcodexaccess.eyJhdWQiOiJmYWtlIn0.YWNjZXNzc2ln",
        "rt_FAKEcodexrefresh4e6a8c0e2a4c6e8a0c2e4a6c8e",
        "ya29.FAKEgeminiaccess1c3e5a7c9e1b3d5f7a9c1e3b5d",
        "eyJFAKEgeminiidtoken.eyJlbWFpbCI6ImZha2UifQ.c2ln",
        "1//0FAKEgeminirefresh9d1f3b5d7f9b1d3f5b7d9f1b3d",
    ]);
    s
}

/// The base64 text that stands for `secret` wherever it sits in an encoded blob: for each of
/// the three offsets, the characters made of its bytes alone, in both alphabets.
fn base64_forms(secret: &str) -> Vec<String> {
    let mut forms = Vec::new();
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(secret.as_bytes());
        let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes);
        let (first, end) = (8 * offset, 8 * bytes.len());
        let core: String = encoded
            .chars()
            .enumerate()
            .filter(|(i, _)| 6 * i >= first && 6 * i + 6 <= end)
            .map(|(_, c)| c)
            .collect();
        forms.push(core.replace('+', "-").replace('/', "_"));
        forms.push(core);
    }
    forms
}

/// Every file under `root` (links not followed), with its contents.
fn all_files(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
                out.push((e.path(), text));
            }
        }
    }
    out
}

/// Each planted secret found in the run folder, in the clear or base64'd, with where.
fn leaks(run: &Path) -> Vec<String> {
    let files = all_files(run);
    let mut found = Vec::new();
    for s in secrets() {
        let forms = std::iter::once(s.to_string()).chain(base64_forms(s));
        for form in forms {
            for (p, text) in &files {
                if text.contains(&form) {
                    found.push(format!("{s} as {form} in {}", p.display()));
                }
            }
        }
    }
    found
}

/// The hostile part of every agent here: it says which variables and login files it has,
/// prints and base64s all of them (stdout and stderr), and copies them into its workspace.
const LOOTER: &str = r#"
echo "VARS: $(env | cut -d= -f1 | sort | tr '\n' ' ')" >&2
env >&2
env | base64 -w0 >&2; echo >&2
mkdir -p loot
env > loot/env.txt
env | base64 > loot/env.b64
for v in $(env | cut -d= -f1); do printf '%s' "${!v}" | base64 -w0; echo; done > loot/values.b64
for f in .claude/.credentials.json .codex/auth.json .gemini/oauth_creds.json; do
  if [ -f "$HOME/$f" ]; then
    echo "HAS $f" >&2
    cat "$HOME/$f"; echo; cat "$HOME/$f" >&2; echo >&2
    base64 "$HOME/$f"; base64 -w0 "$HOME/$f" >&2; echo >&2
    base64 -w0 "$HOME/$f" | tr '+/' '-_' >> loot/urlsafe.txt
    cp "$HOME/$f" "loot/$(basename "$f")"
    base64 "$HOME/$f" > "loot/$(basename "$f").b64"
  else
    echo "NO $f" >&2
  fi
done
"#;

/// A temp folder holding `home/` with the planted login files.
fn planted() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write_tree(&d.path().join("home"), FILES);
    d
}

/// `cmd` with the planted variables, a HOME of `d/home`, the run in `d/run` and the workspaces
/// in `d/ws`.
fn with_logins(mut cmd: Command, d: &Path, backend: &str) -> Output {
    cmd.args(["--sandbox", backend])
        .arg("--output-dir")
        .arg(d.join("run"))
        .arg("--workspace-dir")
        .arg(d.join("ws"))
        .env("HOME", d.join("home"))
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
        .envs(VARS.iter().copied());
    cmd.output().unwrap()
}

/// What the agent said it had: its variables' names, and the login files it found.
fn seen(run: &Path, out: &Output) -> (Vec<String>, Vec<String>) {
    let files = all_files(run);
    let said = files
        .iter()
        .find(|(p, t)| p.ends_with("stderr.txt") && t.contains("VARS: "))
        .map(|(_, t)| t.clone())
        .unwrap_or_else(|| panic!("the agent never ran\n{}\n{}", stdout(out), stderr(out)));
    let vars = said
        .lines()
        .find_map(|l| l.strip_prefix("VARS: "))
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let has = said
        .lines()
        .filter_map(|l| l.strip_prefix("HAS "))
        .map(str::to_string)
        .collect();
    (vars, has)
}

/// A fake agent CLI at `d/bin/<name>`: its version, then [`LOOTER`], then Claude Code's
/// closing `result` event.
fn fake_cli(d: &Path, name: &str) -> PathBuf {
    let bin = d.join("bin");
    write_tree(
        &bin,
        &[(
            name,
            &format!(
                "#!/bin/bash\nif [ \"$1\" = --version ]; then echo '9.9.9 (fake)'; exit 0; fi\n{LOOTER}\necho '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"finished\",\"session_id\":\"s1\"}}'\n"
            ),
        )],
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    bin.join(name)
}

per_backend! {
/// The `command` harness's agent (any program) was handed every vendor's login: all the key
/// variables assay had, and copies of `~/.claude/.credentials.json`, `~/.codex/auth.json` and
/// `~/.gemini/oauth_creds.json`; what it printed of a login file, and every base64 of them,
/// landed unredacted in `stderr.txt`, `output.txt` and `artifacts/`.
fn the_command_agent_gets_no_vendor_login_and_nothing_of_one_is_recorded(backend: &str) {
    let d = planted();
    let p = d.path().join("project");
    project(&p, &format!("{LOOTER}\necho finished\n"));
    let out = with_logins(assay_run(&p), d.path(), backend);
    let run = d.path().join("run");
    let (vars, has) = seen(&run, &out);
    let vendor: Vec<&String> = vars
        .iter()
        .filter(|v| VARS.iter().any(|(k, _)| k == v))
        .collect();
    assert!(vendor.is_empty(), "the command agent saw {vendor:?}");
    assert!(has.is_empty(), "the command agent found login files {has:?}");
    let leaked = leaks(&run);
    assert!(leaked.is_empty(), "secrets in the run folder:\n{}", leaked.join("\n"));
}
}

per_backend! {
/// `--pass-env` still hands the command agent a variable the user names, and its value (and
/// its base64) is redacted from everything recorded.
fn a_login_passed_by_name_reaches_the_command_agent_and_is_redacted(backend: &str) {
    let d = planted();
    let p = d.path().join("project");
    project(&p, &format!("{LOOTER}\necho finished\n"));
    let mut cmd = assay_run(&p);
    cmd.args(["--pass-env", "OPENAI_API_KEY"]);
    let out = with_logins(cmd, d.path(), backend);
    let run = d.path().join("run");
    let (vars, has) = seen(&run, &out);
    let vendor: Vec<&String> = vars
        .iter()
        .filter(|v| VARS.iter().any(|(k, _)| k == v))
        .collect();
    assert_eq!(vendor, ["OPENAI_API_KEY"], "{vars:?}");
    assert!(has.is_empty(), "{has:?}");
    let leaked = leaks(&run);
    assert!(leaked.is_empty(), "secrets in the run folder:\n{}", leaked.join("\n"));
}
}

per_backend! {
/// A fake `claude` through the claude-code harness: it gets Claude's login (its variable and
/// `~/.claude/.credentials.json`) and no other vendor's, and nothing of its own login — the
/// file's tokens in the clear or base64'd, in any alphabet — is recorded.
fn the_claude_code_agent_gets_its_own_login_only_and_it_is_redacted(backend: &str) {
    let d = planted();
    let claude = fake_cli(d.path(), "claude");
    let p = d.path().join("project");
    write_tree(&p, &[("evals/hostile/001.yaml", HOSTILE_CASE)]);
    let mut cmd = assay_run(&p);
    cmd.args(["--harness", "claude-code"]).env("ASSAY_CLAUDE_BIN", &claude);
    let out = with_logins(cmd, d.path(), backend);
    let run = d.path().join("run");
    let (vars, has) = seen(&run, &out);
    let vendor: Vec<&String> = vars
        .iter()
        .filter(|v| VARS.iter().any(|(k, _)| k == v))
        .collect();
    assert_eq!(vendor, ["ANTHROPIC_API_KEY"], "{vars:?}");
    assert_eq!(has, [".claude/.credentials.json"]);
    let leaked = leaks(&run);
    assert!(leaked.is_empty(), "secrets in the run folder:\n{}", leaked.join("\n"));
}
}

per_backend! {
/// The same through the codex harness: OpenAI's variables and `~/.codex/auth.json`, nothing
/// of Anthropic's, Google's or GitHub's.
fn the_codex_agent_gets_its_own_login_only_and_it_is_redacted(backend: &str) {
    let d = planted();
    let codex = fake_cli(d.path(), "codex");
    let p = d.path().join("project");
    write_tree(&p, &[("evals/hostile/001.yaml", HOSTILE_CASE)]);
    let mut cmd = assay_run(&p);
    cmd.args(["--harness", "codex"]).env("ASSAY_CODEX_BIN", &codex);
    let out = with_logins(cmd, d.path(), backend);
    let run = d.path().join("run");
    let (vars, has) = seen(&run, &out);
    let mut vendor: Vec<&String> = vars
        .iter()
        .filter(|v| VARS.iter().any(|(k, _)| k == v))
        .collect();
    vendor.sort();
    assert_eq!(vendor, ["CODEX_API_KEY", "OPENAI_API_KEY"], "{vars:?}");
    assert_eq!(has, [".codex/auth.json"]);
    let leaked = leaks(&run);
    assert!(leaked.is_empty(), "secrets in the run folder:\n{}", leaked.join("\n"));
}
}

/// The permission bits of `p`.
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// Whether `nobody`, as another local user would (`su`), can read `file`.
fn nobody_reads(file: &Path) -> bool {
    Command::new("su")
        .args(["-s", "/bin/sh", "nobody", "-c"])
        .arg(format!("cat '{}' >/dev/null", file.display()))
        .output()
        .unwrap()
        .status
        .success()
}

per_backend! {
/// The run folder was made with the umask's modes (0755, files 0644; 0777 and 0666 under
/// umask 0): another local user read what the agent printed of a login in `stderr.txt`. The
/// run folder, `.assay/` and the workspaces' folder are now their owner's alone (0700),
/// whatever the umask.
fn another_local_user_cannot_read_the_run_folder(backend: &str) {
    if !Command::new("su").arg("--help").output().is_ok_and(|o| o.status.success()) {
        panic!("needs su (util-linux) to act as nobody");
    }
    let d = planted();
    use std::os::unix::fs::PermissionsExt;
    // Everything up to the project is open to other users, as a home folder often is.
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = d.path().join("project");
    project(&p, &format!("{LOOTER}\necho finished\n"));
    for dir in [d.path().join("project"), d.path().join("project/evals")] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(p.join("hostile.sh"), std::fs::Permissions::from_mode(0o644))
        .unwrap();
    assert!(nobody_reads(&p.join("hostile.sh")), "nobody cannot read a 0644 file: su is broken");
    // umask 0: nothing but assay's own choice keeps the folders private.
    let out = Command::new("sh")
        .args(["-c", "umask 0; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_assay"))
        .args(["run", ".", "--sandbox", backend, "--workspace-dir"])
        .arg(d.path().join("ws"))
        .current_dir(&p)
        .env("HOME", d.path().join("home"))
        .env("NO_COLOR", "1")
        .env("ASSAY_NO_CACHE", "1")
        .env_remove("ASSAY_SANDBOX")
        .env_remove("ASSAY_NETWORK")
        .output()
        .unwrap();
    let runs = p.join(".assay/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap_or_else(|e| panic!("{e}\n{}\n{}", stdout(&out), stderr(&out)))
        .flatten()
        .next()
        .unwrap()
        .path();
    let said = run.join("skillet_hostile/001/run-1/stderr.txt");
    assert!(said.is_file(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(!nobody_reads(&said), "another user read {}", said.display());
    assert!(!nobody_reads(&run.join("run.json")), "another user read run.json");
    assert_eq!(mode(&p.join(".assay")), 0o700, ".assay/");
    assert_eq!(mode(&run), 0o700, "the run folder");
    assert_eq!(mode(&d.path().join("ws")), 0o700, "the workspaces' folder");
}
}
