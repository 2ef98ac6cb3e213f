//! An engine set up from the docs alone: `assay doctor` names what is missing before a run
//! fails on it (Copilot and OpenCode pointed at an endpoint of one's own need a model named),
//! `assay run` refuses up front naming the variable, and doctor takes `--command` as its own
//! fix line says.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::*;

fn with_path(bin: &Path) -> Vec<(&'static str, String)> {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    vec![("PATH", path), ("ASSAY_JUDGE", "none".into())]
}

fn project(root: &Path, toml: &str) {
    one_skill_project(
        root,
        toml,
        "greeter",
        "---\nname: greeter\ndescription: Writes greeting cards\n---\nGreet.\n",
        json!({"id": "card", "prompt": "Write a card.", "x-assay-checks": [
            {"type": "contains", "needle": "card"}]}),
    );
}

fn said(out: &std::process::Output) -> String {
    format!("{}\n{}", stdout(out), stderr(out))
}

/// Without a model, doctor says which variable is missing and the run stops before anything
/// starts (exit 3, in well under the minute the engine would take to fail); with `--model`
/// or the variable, doctor says it is ready.
fn a_model_is_needed(
    harness: &str,
    cli: &str,
    mut env: Vec<(&'static str, String)>,
    var: &'static str,
) {
    let d = tempfile::tempdir().unwrap();
    project(d.path(), &format!("[run]\nharness = \"{harness}\"\n"));
    env.extend(with_path(agent_cli(cli).parent().unwrap()));
    let doctor = assay_env(d.path(), &["doctor"], &env);
    let text = said(&doctor);
    assert_eq!(code(&doctor), 3, "{text}");
    assert!(
        text.contains(&format!("✗ harness {harness}")) && text.contains(var),
        "{harness}: {text}"
    );
    assert!(text.contains("fix: pass --model <name>"), "{text}");
    let started = std::time::Instant::now();
    let run = assay_env(d.path(), &["run", "--output-dir", "out"], &env);
    assert_eq!(code(&run), 3, "{}", said(&run));
    assert!(said(&run).contains(var), "{}", said(&run));
    assert!(started.elapsed().as_secs() < 30, "refused up front");
    for ready in [assay_env(d.path(), &["doctor", "--model", "m1"], &env), {
        let mut env = env.clone();
        env.push((var, "m1".to_string()));
        assay_env(d.path(), &["doctor"], &env)
    }] {
        let text = said(&ready);
        assert!(
            text.contains(&format!("✓ harness {harness}")) && !text.contains(var),
            "{harness}: {text}"
        );
    }
}

#[test]
fn copilot_with_a_model_of_one_s_own_needs_copilot_model() {
    let env = vec![
        ("COPILOT_PROVIDER_BASE_URL", "http://127.0.0.1:9/v1".into()),
        ("COPILOT_PROVIDER_API_KEY", "sk-test".into()),
        ("COPILOT_PROVIDER_TYPE", "openai".into()),
    ];
    a_model_is_needed("copilot", "copilot", env, "COPILOT_MODEL");
}

#[test]
fn opencode_with_an_endpoint_of_one_s_own_needs_openai_model() {
    let env = vec![
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1".into()),
        ("OPENAI_API_KEY", "sk-test".into()),
    ];
    a_model_is_needed("opencode", "opencode", env, "OPENAI_MODEL");
}

/// The generic `acp` harness with no command: doctor's fix names `--command`, and doctor takes
/// it (the agent then found and ready); a command that cannot be split is bad input.
#[test]
fn doctor_takes_the_command_its_fix_line_names() {
    let tools = tempfile::tempdir().unwrap();
    let bin = tools.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(
        repo().join("tests/fixtures/acp/fake-acp-agent"),
        bin.join("fake-acp-agent"),
    )
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    project(d.path(), "[run]\nharness = \"acp\"\n");
    let env = with_path(&bin);
    let bare = assay_env(d.path(), &["doctor"], &env);
    assert_eq!(code(&bare), 3, "{}", said(&bare));
    assert!(said(&bare).contains("or pass --command"), "{}", said(&bare));
    let given = assay_env(d.path(), &["doctor", "--command", "fake-acp-agent"], &env);
    let text = said(&given);
    assert_eq!(code(&given), 0, "{text}");
    assert!(text.contains("✓ harness acp"), "{text}");
    let bad = assay_env(d.path(), &["doctor", "--command", "'unclosed"], &env);
    assert_eq!(code(&bad), 2, "{}", said(&bad));
}
