//! Native plugins run unsandboxed, in assay's process: loading one runs its code. Only
//! `--allow-native` on the command line of that invocation loads one (a `trusted = true` in a
//! toml, which a pull request can carry, is not consent); `validate`, `list` and `plugin
//! inspect` never do. And no plugin's `read_dirs` grant reaches outside its project.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::*;

/// An assay native plugin (ABI 1) providing the check type `marker-check`, whose constructor
/// writes `marker` when the library is loaded.
fn marker_library(dir: &Path, marker: &Path) -> PathBuf {
    let src = dir.join("marker.c");
    let lib = dir.join("libmarker.so");
    std::fs::write(
        &src,
        format!(
            r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((constructor)) static void loaded(void) {{
    FILE *f = fopen("{}", "w");
    if (f) {{ fputs("loaded", f); fclose(f); }}
}}
unsigned int assay_plugin_abi(void) {{ return 1; }}
char *assay_plugin_describe(void) {{
    return strdup("{{\"check_types\": [{{\"name\": \"marker-check\", \"summary\": \"always passes\"}}], \"formats\": []}}");
}}
char *assay_plugin_call(const char *request) {{
    if (strstr(request, "\"evaluate\"")) return strdup("{{\"ok\": {{\"passed\": true, \"message\": \"marked\"}}}}");
    return strdup("{{\"ok\": null}}");
}}
void assay_plugin_free(char *s) {{ free(s); }}
"#,
            marker.display()
        ),
    )
    .unwrap();
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .output();
    // Never a silent pass: without a C compiler the test fails, saying so.
    match built {
        Ok(o) if o.status.success() => lib,
        other => {
            panic!("no C compiler to build a native plugin with (apt-get install gcc): {other:?}")
        }
    }
}

/// A folder holding, below it, a project whose `assay.toml` declares the marker library as a
/// trusted native plugin and whose Skillet case uses its check type.
struct Nested {
    root: tempfile::TempDir,
    marker: PathBuf,
}

fn nested() -> Nested {
    let root = tempfile::tempdir().unwrap();
    let marker = root.path().join("MARKER");
    let sub = root.path().join("pr/sub");
    std::fs::create_dir_all(&sub).unwrap();
    marker_library(&sub, &marker);
    write_tree(
        &sub,
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"echo\", \"hi\"]\n\n[[plugin]]\npath = \"libmarker.so\"\ntrusted = true\n",
            ),
            (
                "evals/n/001.yaml",
                "timestamp: 2026-11-22T00:00:00Z\nname: n\nprompt: say hi\nexpected: hi\nassertions:\n  - type: marker-check\n    value: 1\n",
            ),
        ],
    );
    Nested { root, marker }
}

fn run(dir: &Path, args: &[&str]) -> Output {
    assay_env(dir, args, &[("ASSAY_JUDGE", "none".into())])
}

#[test]
fn read_only_commands_never_load_a_native_library() {
    let n = nested();
    let p = n.root.path();
    for args in [
        vec!["validate", "."],
        vec!["validate", ".", "--format", "json"],
        vec!["list", "."],
        vec!["list", ".", "--json"],
        // Not even when the flag is given: these commands do not run code.
        vec!["validate", ".", "--allow-native"],
        vec!["list", ".", "--allow-native"],
        vec!["plugin", "inspect", "pr/sub/libmarker.so"],
        vec!["plugin", "inspect", "pr/sub/libmarker.so", "--allow-native"],
        vec!["plugin", "inspect", "pr/sub/libmarker.so", "--json"],
    ] {
        let o = run(p, &args);
        assert_eq!(code(&o), 0, "{args:?}: {}\n{}", stdout(&o), stderr(&o));
        assert!(
            !n.marker.exists(),
            "{args:?} loaded the native library (its constructor ran)"
        );
    }
    // It says what it did not load, and the suite using the plugin's check type still loads.
    let o = run(p, &["validate", "."]);
    assert!(
        stderr(&o).contains("libmarker.so was not loaded"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("ok: 1 suite"), "{}", stdout(&o));
    let o = run(p, &["plugin", "inspect", "pr/sub/libmarker.so"]);
    assert!(
        stdout(&o).contains("NATIVE library (ELF)") && stdout(&o).contains("not loaded"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_native_plugin_loads_only_with_allow_native_on_the_command_line() {
    let n = nested();
    let p = n.root.path();
    // `trusted = true` alone is not consent: a load error naming the toml and the flag.
    let o = run(p, &["run", ".", "--output-dir", "out"]);
    assert_eq!(code(&o), 2, "{}\n{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("pr/sub/assay.toml") && err.contains("--allow-native"),
        "{err}"
    );
    assert!(!n.marker.exists(), "loaded without consent");
    assert!(!p.join("out").exists(), "nothing ran");
    let o = run(
        p,
        &[
            "grade",
            "pr/sub/evals/n/001.yaml",
            "--output",
            "pr/sub/assay.toml",
        ],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(!n.marker.exists(), "grade loaded it without consent");

    // With the flag, for this invocation, it loads and its check runs.
    let o = run(p, &["run", ".", "--output-dir", "out", "--allow-native"]);
    assert_ne!(code(&o), 2, "{}\n{}", stdout(&o), stderr(&o));
    assert!(n.marker.exists(), "--allow-native loads it");
    let r = &results(&p.join("out"))["001"];
    let check = r["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["kind"] == "marker-check"))
        .unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(check["passed"], true, "{check:#}");
}

#[test]
fn a_read_dirs_grant_stays_inside_the_project() {
    let d = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("p/inside")).unwrap();
    std::os::unix::fs::symlink(outside.path(), d.path().join("p/link")).unwrap();
    for grant in ["../../../etc", "..", "link", "inside/../../p/../.."] {
        write_tree(
            d.path(),
            &[(
                "p/assay.toml",
                &format!("[[plugin]]\npath = \"x.wasm\"\nread_dirs = [\"{grant}\"]\n"),
            )],
        );
        for args in [vec!["validate", "."], vec!["run", "--output-dir", "out"]] {
            let o = run(&d.path().join("p"), &args);
            assert_eq!(code(&o), 2, "{grant} {args:?}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(
                err.contains("assay.toml")
                    && err.contains(&format!("read_dirs: `{grant}`"))
                    && err.contains("outside the project"),
                "{grant}: {err}"
            );
        }
    }
}
