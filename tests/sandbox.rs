//! The sandbox against a hostile agent: every attack a case-run's agent tries fails, the run
//! still records the case-run, and nothing of it outlives assay. These run real bubblewrap
//! (`.ci/run` installs it); without it they fail rather than pass untested.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::{
    HOSTILE_CASE, assay_run, code, process_with_arg, read_json, results, stderr, stdout, write_tree,
};

/// A TCP server on 127.0.0.1 answering every connection with an HTTP 200; `hit` is set when
/// anything connects.
fn server() -> (u16, Arc<AtomicBool>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hit = Arc::new(AtomicBool::new(false));
    let flag = hit.clone();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            flag.store(true, Ordering::SeqCst);
            let mut buf = [0u8; 256];
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok");
        }
    });
    (port, hit)
}

/// Every file under `root` with its content, to see that nothing changed.
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

per_backend! {
/// Every attack of a hostile agent fails, under each backend.
fn a_hostile_agent_cannot_escape_the_sandbox(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let project = d.path().join("project");
    let outside = d.path().join("outside");
    let linked = d.path().join("linked");
    let home = d.path().join("home");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(&linked).unwrap();
    write_tree(&home, &[(".bashrc", "export BASHRC_SECRET=hunter2\n")]);
    let (model_port, model_hit) = server();
    let (other_port, other_hit) = server();
    // Another case-run's workspace beside this one's (the workspaces' parent is the temp folder).
    let decoy = tempfile::Builder::new().prefix("assay-ws-").tempdir().unwrap();
    write_tree(decoy.path(), &[("work/decoy.txt", "DECOY-7\n")]);
    let script = format!(
        r#"
(echo pwned > {outside}/marker) 2>/dev/null && echo "write-outside: DONE"
(echo pwned > {project}/pwned-by-agent) 2>/dev/null
grep -qs hunter2 {home}/.bashrc && echo "bashrc: LEAKED"
for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f" 2>/dev/null; done | grep -q sk-live-secret && echo "environ: LEAKED"
setsid sleep 314159 >/dev/null 2>&1 < /dev/null &
(sh -c 'sleep 271828 >/dev/null 2>&1 < /dev/null &' &)
(exec 3<>/dev/tcp/127.0.0.1/{other_port} && echo "other-port: CONNECTED") 2>/dev/null
(exec 3<>/dev/tcp/127.0.0.1/{model_port} && echo "DIRECT-MODEL") 2>/dev/null
mp=${{ANTHROPIC_BASE_URL##*:}}
(exec 3<>/dev/tcp/127.0.0.1/$mp && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && head -c 15 <&3 | grep -q 200 && echo "model-port: REACHED") 2>/dev/null
cat {decoy}/work/decoy.txt 2>/dev/null | grep -q DECOY && echo "other-workspaces: VISIBLE"
ls {decoy_parent} >/dev/null 2>&1 && ls {decoy_parent} | grep -q "$(basename {decoy})" && echo "other-workspaces: LISTED"
cat {project}/hostile.sh >/dev/null 2>&1 && echo "project: VISIBLE"
for p in $(pgrep -f -- --output-dir); do kill -0 "$p" 2>/dev/null && echo "signal-assay-$p: DONE"; tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -q sk-live && echo "assay-environ: LEAKED"; done
kill -0 $PPID 2>/dev/null && echo "HELPER-SIGNALLED"
perl -e 'my $n = `uname -m` =~ /aarch64/ ? 117 : 101; print "ptrace: ATTACHED\n" if syscall($n, 16, $ARGV[0], 0, 0) == 0' $PPID
python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", {other_port}))' 2>/dev/null && echo "UDP-SENT"
perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => "127.0.0.1:{other_port}", Proto => "udp") or exit 1; print "UDP-SOCKET\n"' 2>/dev/null
(echo pwned > escape/pwned) 2>/dev/null
(mkdir -p {project}/.assay/cache/forged && echo '{{}}' > {project}/.assay/cache/forged/result.json) 2>/dev/null
(umount /root 2>/dev/null || umount /tmp 2>/dev/null) && echo "umount: DONE"
(mount -o remount,rw,bind / 2>/dev/null && touch /usr/assay-escaped) 2>/dev/null && echo "remount: DONE"
unshare -Urm true 2>/dev/null && echo "userns: DONE"
ws=$(cd .. && pwd)
(echo pwned > "$ws/layers/upper/planted") 2>/dev/null && echo "upper-layer: DONE"
(echo pwned > "$ws/layers/stage/planted") 2>/dev/null && echo "stage-layer: DONE"
umount -l "$PWD" 2>/dev/null && echo "umount-workspace: DONE"
cat /tmp/assay-base-*/hostile.sh >/dev/null 2>&1 && echo "base: VISIBLE"
grep -Eq '^CapEff:[[:space:]]+0+$' /proc/self/status || echo "caps: LEAKED"
grep -Eq '^CapBnd:[[:space:]]+0+$' /proc/self/status || echo "caps: LEAKED"
test -e evals/hostile/001.yaml && echo "spec: VISIBLE"
tok=grading-secret; grep -rqs "$tok-7f3a" . && echo "spec: VISIBLE"
echo finished
"#,
        outside = outside.display(),
        project = project.display(),
        home = home.display(),
        decoy = decoy.path().display(),
        decoy_parent = std::env::temp_dir().display(),
    );
    write_tree(
        &project,
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"bash\", \"hostile.sh\"]\n",
            ),
            ("hostile.sh", &script),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
    std::os::unix::fs::symlink(&linked, project.join("escape")).unwrap();
    let before = tree(&project);

    let out = assay_run(&project)
        .args(["--sandbox", backend])
        .arg("--output-dir")
        .arg(d.path().join("run"))
        .env("HOME", &home)
        .env("SECRET_TOKEN", "sk-live-secret")
        .env(
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{model_port}"),
        )
        .output()
        .unwrap();
    let said = support::hostile_output(&d.path().join("run"), &out);
    assert_eq!(code(&out), 0, "{}\n{}\n{said}", stdout(&out), stderr(&out));

    // The case-run is recorded, sandboxed, and the agent really ran to its end.
    let r = &results(&d.path().join("run"))["001"];
    assert_eq!(r["status"], "completed", "{r:#}");
    assert!(said.contains("finished"), "{said}");
    // Every attack failed.
    assert!(!said.contains("DONE"), "{said}");
    assert!(
        !said.contains("VISIBLE"),
        "the agent read its own spec: {said}"
    );
    assert!(!outside.join("marker").exists(), "wrote outside");
    assert!(
        !Path::new("/usr/assay-escaped").exists(),
        "remounted the host writable"
    );
    assert!(!said.contains("LEAKED"), "{said}");
    assert!(!said.contains("LISTED"), "{said}");
    assert!(!said.contains("CONNECTED"), "{said}");
    assert!(
        !other_hit.load(Ordering::SeqCst),
        "reached another loopback port"
    );
    assert!(
        std::fs::read_dir(&linked).unwrap().next().is_none(),
        "wrote through the project's symlink"
    );
    assert_eq!(
        tree(&project),
        before,
        "the project changed (a file, or the cache)"
    );
    // …while the model endpoint stays reachable through the forwarder.
    assert!(said.contains("model-port: REACHED"), "{said}");
    assert!(model_hit.load(Ordering::SeqCst));
    // Nothing of the case-run outlives it: neither the setsid daemon nor the double fork.
    std::thread::sleep(Duration::from_millis(300));
    for arg in ["314159", "271828"] {
        assert!(!process_with_arg(arg), "`sleep {arg}` outlived the run");
    }
    assert_eq!(r["skipped_links"], serde_json::json!(["escape"]), "{r:#}");
    // The run records the sandbox.
    assert_eq!(r["sandbox"]["kind"], backend);
    assert_eq!(r["sandbox"]["network"], "model");
    let run = read_json(&d.path().join("run/run.json"));
    assert_eq!(run["sandbox"]["kind"], backend, "{run:#}");
    if backend == "bwrap" {
        // …in a copy-on-write workspace, whose layers the agent could not touch.
        assert_eq!(run["sandbox"]["workspaces"], "overlay", "{run:#}");
    } else {
        // The first process inside is out of the agent's reach (inside bubblewrap it is the
        // agent's own namespace's, and harmless).
        assert!(!said.contains("HELPER-SIGNALLED"), "{said}");
        // No UDP: the host's network is shared (inside bubblewrap, the sandbox's own).
        assert!(!said.contains("UDP-"), "{said}");
        // Only the forwarder's port: not even the model's own.
        assert!(!said.contains("DIRECT-MODEL"), "{said}");
        assert!(!said.contains("ATTACHED"), "{said}");
        assert!(!run["sandbox"]["gaps"].as_array().unwrap().is_empty(), "{run:#}");
    }
}
}

per_backend! {
fn network_none_reaches_nothing_not_even_the_model(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let (model_port, model_hit) = server();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!(
                    "[run]\nharness = \"command\"\nnetwork = \"none\"\n[harness.command]\ncommand = [\"bash\", \"-c\", \"(exec 3<>/dev/tcp/127.0.0.1/{model_port} && echo REACHED) 2>/dev/null; echo finished\"]\n"
                ),
            ),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
    let out = assay_run(d.path())
        .args(["--output-dir", "run", "--sandbox", backend])
        .env(
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{model_port}"),
        )
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("run"))["001"];
    assert_eq!(r["sandbox"]["network"], "none");
    let said = r["turns"][0]["final_message"].as_str().unwrap_or_default();
    assert!(said.contains("finished"), "the agent ran: {said}");
    assert!(!said.contains("REACHED"), "{said}");
    assert!(!model_hit.load(Ordering::SeqCst));
}
}

per_backend! {
/// `--network host` is the host's network: any loopback port, name resolution (read under
/// `/etc`, or `/run` behind a link), while Unix sockets stay refused.
fn network_host_reaches_the_hosts_loopback(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let (port, hit) = server();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                &format!(
                    "[run]\nharness = \"command\"\nnetwork = \"host\"\n[harness.command]\ncommand = [\"bash\", \"-c\", \"(exec 3<>/dev/tcp/127.0.0.1/{port} && echo REACHED) 2>/dev/null; getent hosts localhost >/dev/null && echo RESOLVED; echo finished\"]\n"
                ),
            ),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
    let out = assay_run(d.path())
        .args(["--output-dir", "run", "--sandbox", backend])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("run"))["001"];
    assert_eq!(r["sandbox"]["network"], "host");
    let said = r["turns"][0]["final_message"].as_str().unwrap_or_default();
    assert!(said.contains("REACHED") && said.contains("RESOLVED"), "{said}");
    assert!(hit.load(Ordering::SeqCst));
}
}

per_backend! {
fn writes_outside_uaaps_writable_paths_fail(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "package.agent.json",
                r#"{"name": "pkg", "version": "1.0.0"}"#,
            ),
            (
                "evals/eval-config.json",
                r#"{"version": 1, "engine": "claude-code", "sandbox": {"network": false, "writable-paths": ["out/"]}}"#,
            ),
            (
                "evals/cases/write.yaml",
                "name: write\ninput:\n  prompt: write files\nexpected:\n  files-created: [out/ok.txt]\njudge:\n  criteria: anything\n",
            ),
        ],
    );
    write_tree(
        d.path(),
        &[(
            "agent.sh",
            "echo ok > out/ok.txt && echo wrote-ok\n(echo bad > bad.txt) 2>/dev/null && echo wrote-bad\n(echo bad > evals/eval-config.json) 2>/dev/null && echo wrote-spec\necho finished\n",
        )],
    );
    let out = assay_run(d.path())
        .args([
            "--output-dir",
            "run2",
            "--sandbox",
            backend,
            "--harness",
            "command",
            "--judge",
            "none",
            "--command",
            "bash agent.sh",
        ])
        .output()
        .unwrap();
    let r = &results(&d.path().join("run2"))["write"];
    let said = r["turns"][0]["final_message"].as_str().unwrap_or_default();
    assert!(
        said.contains("finished"),
        "{}\n{}\n{r:#}",
        stdout(&out),
        stderr(&out)
    );
    assert!(said.contains("wrote-ok"), "{said}");
    assert!(!said.contains("wrote-bad"), "{said}");
    assert!(!said.contains("wrote-spec"), "{said}");
    let created: Vec<&str> = r["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["path"].as_str())
        .collect();
    assert_eq!(created, ["out/ok.txt"], "{r:#}");
}
}

per_backend! {
fn a_sandboxed_agent_still_gets_its_grace_period_on_timeout(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\ntimeout = 2\n[harness.command]\ncommand = [\"bash\", \"agent.sh\"]\n",
            ),
            (
                "agent.sh",
                "trap 'sleep 1; echo cleaned > cleaned.txt; exit 0' TERM\necho started\nwhile :; do sleep 0.1; done\n",
            ),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
    let out = assay_run(d.path())
        .args(["--output-dir", "run", "--keep-workspaces", "--sandbox", backend])
        .output()
        .unwrap();
    let r = &results(&d.path().join("run"))["001"];
    assert_eq!(r["sandbox"]["kind"], backend, "{}", stderr(&out));
    assert_eq!(r["timed_out"], true, "{r:#}");
    // The agent caught SIGTERM and cleaned up inside the sandbox before it ended.
    let ws = Path::new(r["workspace"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(ws.join("work/cleaned.txt")).unwrap_or_default(),
        "cleaned\n",
        "{r:#}"
    );
    let _ = std::fs::remove_dir_all(ws);
}
}

/// A folder for PATH with only the tools these agents use, and no bubblewrap.
fn path_without_bwrap(d: &Path) -> std::path::PathBuf {
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["sh", "bash", "cat", "echo"] {
        let real = ["/usr/bin", "/bin"]
            .iter()
            .map(|p| Path::new(p).join(tool))
            .find(|p| p.exists())
            .unwrap();
        std::os::unix::fs::symlink(real, bin.join(tool)).unwrap();
    }
    bin
}

#[test]
fn without_bubblewrap_auto_takes_landlock_bwrap_refuses_and_none_runs_and_says_so_everywhere() {
    let d = tempfile::tempdir().unwrap();
    let project = d.path().join("p");
    write_tree(
        &project,
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo finished\"]\n",
            ),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
    let bin = path_without_bwrap(d.path());
    let run = |args: &[&str]| {
        assay_run(&project)
            .args(args)
            .env("PATH", &bin)
            .output()
            .unwrap()
    };
    // auto (the default): contained by Landlock, and the run says so and what it lacks.
    let out = run(&["--output-dir", "auto", "--reporter", "junit,markdown,html"]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("contained by Landlock ABI"), "{err}");
    assert!(
        err.contains("bubblewrap (`bwrap`) is not installed"),
        "{err}"
    );
    let run_json = read_json(&project.join("auto/run.json"));
    assert_eq!(run_json["sandbox"]["kind"], "landlock", "{run_json:#}");
    assert!(
        run_json["sandbox"]["gaps"][0]
            .as_str()
            .unwrap()
            .contains("/proc")
    );
    assert_eq!(
        results(&project.join("auto"))["001"]["sandbox"]["kind"],
        "landlock"
    );

    // bwrap, asked for by name: exit 3, nothing run, the package to install and the opt-out.
    let out = run(&["--sandbox", "bwrap", "--output-dir", "refused"]);
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("apt-get install bubblewrap"), "{err}");
    assert!(err.contains("--sandbox none"), "{err}");
    assert!(err.contains("nothing was run"), "{err}");
    assert!(!project.join("refused").exists(), "nothing ran half-way");

    // A kernel without Landlock's network rules (ABI 3) and no bubblewrap: no backend works,
    // so auto refuses, naming what to install.
    let out = assay_run(&project)
        .args(["--output-dir", "none-works"])
        .env("PATH", &bin)
        .env("ASSAY_LANDLOCK_ABI", "3")
        .output()
        .unwrap();
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("no sandbox works on this machine"), "{err}");
    assert!(
        err.contains("landlock: this kernel's Landlock (ABI 3) cannot limit the network"),
        "{err}"
    );
    assert!(err.contains("apt-get install bubblewrap"), "{err}");
    assert!(!project.join("none-works").exists(), "nothing ran half-way");

    // none: it runs, and the terminal and every report say it was unsandboxed.
    let out = run(&[
        "--sandbox",
        "none",
        "--output-dir",
        "open",
        "--reporter",
        "json,junit,markdown,html",
    ]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("unsandboxed"), "{}", stderr(&out));
    let dir = project.join("open");
    assert_eq!(read_json(&dir.join("run.json"))["sandbox"]["kind"], "none");
    assert_eq!(results(&dir)["001"]["sandbox"]["kind"], "none");
    assert_eq!(
        read_json(&dir.join("report.json"))["summary"]["unsandboxed"],
        1
    );
    let run = read_json(&dir.join("run.json"));
    assert_eq!(run["sandbox"]["kind"], "none", "{run:#}");
    for f in ["junit.xml", "summary.md", "report.html"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(text.contains("unsandboxed"), "{f}: {text}");
    }
}

#[test]
fn a_sandbox_that_cannot_start_is_an_error_not_the_agents_failure() {
    let d = tempfile::tempdir().unwrap();
    // A bubblewrap that passes the probe (`… true`) and fails every case-run's command.
    let fake = d.path().join("bwrap");
    write_tree(
        d.path(),
        &[(
            "bwrap",
            "#!/bin/sh\nfor a; do last=$a; done\n[ \"$last\" = true ] && exit 0\necho 'bwrap: Creating new namespace failed: boom' >&2\nexit 1\n",
        )],
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let project = d.path().join("p");
    write_tree(
        &project,
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo finished\"]\n",
            ),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
    let out = assay_run(&project)
        .args(["--output-dir", "run"])
        .env("ASSAY_BWRAP", &fake)
        .output()
        .unwrap();
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&project.join("run"))["001"];
    assert_eq!(r["status"], "error", "{r:#}");
    assert!(
        r["reason"].as_str().unwrap().contains(
            "the sandbox could not start the command: bwrap: Creating new namespace failed: boom"
        ),
        "{r:#}"
    );
}

#[test]
fn a_project_that_turns_the_sandbox_off_is_named_and_the_flag_overrides_it() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\nsandbox = \"none\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo finished\"]\n",
            ),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
    let out = assay_run(d.path())
        .args(["--output-dir", "open"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("assay.toml turns the sandbox off"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        results(&d.path().join("open"))["001"]["sandbox"]["kind"],
        "none"
    );
    // The operator's flag wins over the project's file.
    let out = assay_run(d.path())
        .args(["--output-dir", "closed", "--sandbox", "auto"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("turns the sandbox off"));
    assert_eq!(
        results(&d.path().join("closed"))["001"]["sandbox"]["kind"],
        "bwrap"
    );
}

per_backend! {
fn an_https_endpoint_is_reached_through_the_proxy_and_nothing_else_is(backend: &str) {
    // The proxy tunnels bytes, whatever they are: a plain server stands in for TLS here.
    let (model_port, model_hit) = server();
    let (other_port, other_hit) = server();
    let d = tempfile::tempdir().unwrap();
    support::hostile_project(
        d.path(),
        &format!(
            r#"
proxy=${{HTTPS_PROXY#http://}}; host=${{proxy%:*}}; port=${{proxy##*:}}
echo "proxy: $HTTPS_PROXY"
exec 3<>/dev/tcp/$host/$port
printf 'CONNECT 127.0.0.1:{model_port} HTTP/1.1\r\nHost: 127.0.0.1:{model_port}\r\n\r\n' >&3
read -r status <&3; echo "model: $status"
read -r blank <&3
printf 'GET / HTTP/1.0\r\n\r\n' >&3
head -c 15 <&3 | grep -q 200 && echo "model: TUNNELLED"
exec 3>&-
exec 4<>/dev/tcp/$host/$port
printf 'CONNECT 127.0.0.1:{other_port} HTTP/1.1\r\n\r\n' >&4
read -r status <&4; echo "other: $status"
echo finished
"#
        ),
    );
    let out = assay_run(d.path())
        .args(["--output-dir", "run", "--sandbox", backend])
        .env(
            "ANTHROPIC_BASE_URL",
            format!("https://127.0.0.1:{model_port}"),
        )
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let r = &results(&d.path().join("run"))["001"];
    let said = support::hostile_output(&d.path().join("run"), &out);
    // bubblewrap's proxy is inside the sandbox, Landlock's on the host's loopback.
    let proxy = if backend == "bwrap" { "proxy: http://127.0.0.1:3128" } else { "proxy: http://127.0.0.1:" };
    assert!(said.contains(proxy), "{said}");
    assert!(said.contains("model: HTTP/1.1 200"), "{said}");
    assert!(said.contains("model: TUNNELLED"), "{said}");
    assert!(said.contains("other: HTTP/1.1 403"), "{said}");
    assert!(model_hit.load(Ordering::SeqCst));
    assert!(
        !other_hit.load(Ordering::SeqCst),
        "the proxy reached another port"
    );
    assert_eq!(
        r["sandbox"]["endpoints"],
        serde_json::json!([format!("127.0.0.1:{model_port}")])
    );
}
}

#[test]
fn a_folder_name_cannot_rewrite_the_terminal_through_the_sandbox_warning() {
    let d = tempfile::tempdir().unwrap();
    let name = "p\u{1b}]0;PWNED\u{7}\r\u{1b}[2K";
    write_tree(
        &d.path().join(name),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\nsandbox = \"none\"\n[harness.command]\ncommand = [\"sh\", \"-c\", \"echo finished\"]\n",
            ),
            ("evals/hostile/001.yaml", HOSTILE_CASE),
        ],
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["run", "--output-dir", "run"])
        .arg(name)
        .current_dir(d.path())
        .env("NO_COLOR", "1")
        .env("ASSAY_NO_CACHE", "1")
        .env_remove("ASSAY_SANDBOX")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(err.contains("turns the sandbox off"), "{err:?}");
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
}

/// Every result.json of a run folder by variant, with the agent's output beside it.
fn by_variant(run_dir: &Path) -> std::collections::BTreeMap<String, (serde_json::Value, String)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![run_dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "result.json") {
                let v = read_json(&p);
                let said = std::fs::read_to_string(p.with_file_name("output.txt")).unwrap();
                out.insert(v["variant"].as_str().unwrap().to_string(), (v, said));
            }
        }
    }
    out
}

#[test]
fn copy_on_write_workspaces_record_what_copied_ones_do() {
    // The agent edits, deletes (a file and a folder), creates, and says whether the skill
    // under test is installed (the baseline must not have it); its changes must read the same
    // whether its workspace was an overlay or a copy (a `:` in the workspaces' folder rules
    // the overlay out), and the kept workspaces must hold the same files.
    let d = tempfile::tempdir().unwrap();
    let project = d.path().join("project");
    let script = r#"
test -f .claude/commands/hostile.md && echo "skill: present" || echo "skill: absent"
cat keep.txt
echo changed >> edit.txt
rm gone.txt
rm -r dir
mkdir -p new && echo made > new/file.txt
echo finished
"#;
    support::hostile_project(&project, script);
    write_tree(
        &project,
        &[
            (".claude/commands/hostile.md", "Be hostile.\n"),
            ("keep.txt", "kept\n"),
            ("edit.txt", "before\n"),
            ("gone.txt", "bye\n"),
            ("dir/inner.txt", "in\n"),
        ],
    );
    let before = tree(&project);
    let mut seen = Vec::new();
    for (mode, ws) in [("overlay", "ws"), ("copy", "ws:copy")] {
        let run = d.path().join(format!("run-{mode}"));
        let out = assay_run(&project)
            .args(["--baseline", "--keep-workspaces", "--output-dir"])
            .arg(&run)
            .arg("--workspace-dir")
            .arg(d.path().join(ws))
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{mode}: {}\n{}", stdout(&out), stderr(&out));
        let record = read_json(&run.join("run.json"));
        assert_eq!(record["sandbox"]["workspaces"], mode, "{record:#}");
        let results = by_variant(&run);
        assert_eq!(results.len(), 2, "{mode}: {results:#?}");
        let mut per_variant = Vec::new();
        for (variant, (r, said)) in &results {
            assert_eq!(r["status"], "completed", "{mode} {variant}: {r:#}");
            let skill = if variant == "baseline" {
                "absent"
            } else {
                "present"
            };
            assert!(
                said.contains(&format!("skill: {skill}")),
                "{mode} {variant}: {said}"
            );
            assert!(said.contains("kept") && said.contains("finished"), "{said}");
            let kept = Path::new(r["workspace"].as_str().unwrap()).join("work");
            per_variant.push((variant.clone(), r["artifacts"].clone(), tree(&kept)));
        }
        seen.push(per_variant);
    }
    assert_eq!(seen[0], seen[1], "overlay and copy differ");
    let artifacts: Vec<(String, String)> = seen[0][0]
        .1
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().into(),
                a["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        artifacts,
        [
            ("dir/inner.txt".to_string(), "deleted".to_string()),
            ("edit.txt".into(), "modified".into()),
            ("gone.txt".into(), "deleted".into()),
            ("new/file.txt".into(), "created".into()),
        ]
    );
    assert_eq!(tree(&project), before, "the project changed");
}
