//! The BMAD runner's platform adapter, `adapter.json`: `{name, invocation, auth_env,
//! transcript, skill_dir, load_signal, env_passthrough}` (bmad-builder's
//! `references/platform-adapter.md`). Read strictly where a mistake would run the wrong thing
//! (the argv, the variable names, the folders); other keys are ignored with a warning, as the
//! runner ignores them.

use std::path::Path;

use super::{is_note, is_strict};
use crate::diag::Problem;
use crate::formats::LoadCtx;
use crate::suite::AdapterSpec;
use crate::syntax::reader::{Doc, Map};

/// The names an adapter file goes by beside the eval files.
pub const ADAPTER_FILES: &[&str] = &["adapter.json", ".bmad-eval-adapter.json"];

/// Where skills may be installed for an adapter's runtime (the folders assay installs into).
pub const SKILL_DIRS: &[&str] = &[".claude/skills", ".agents/skills"];

const KEYS: &[&str] = &[
    "name",
    "invocation",
    "auth_env",
    "transcript",
    "skill_dir",
    "load_signal",
    "env_passthrough",
];

/// The adapter file beside some eval files, if there is one.
pub fn beside(dir: &Path) -> Option<std::path::PathBuf> {
    ADAPTER_FILES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// Reads an adapter file; `chosen` when the user named it.
pub fn read(
    ctx: &LoadCtx,
    file: &Path,
    chosen: bool,
) -> Result<(AdapterSpec, Vec<Problem>), Vec<Problem>> {
    let (mut doc, root) = ctx.parse(file, &ctx.shown(file))?;
    let spec = doc
        .map(&root, "")
        .and_then(|m| read_map(&mut doc, &m, file, chosen));
    match spec {
        Some(spec) if !doc.has_errors() => Ok((spec, doc.problems)),
        _ => Err(doc.problems),
    }
}

fn read_map(doc: &mut Doc, m: &Map<'_>, file: &Path, chosen: bool) -> Option<AdapterSpec> {
    m.warn_unknown_keys(doc, "adapter.json", KEYS, is_note, is_strict);
    let invocation = m.req(doc, "invocation").and_then(|n| {
        let items = doc.strings(n, "invocation")?;
        if items.is_empty() || items[0].0.trim().is_empty() {
            doc.error(
                "empty",
                n.span,
                "invocation",
                "the invocation names no program",
            )
            .help = Some("write the command as a list: [\"program\", \"-p\", \"{prompt}\"]".into());
            return None;
        }
        Some(items.into_iter().map(|(s, _)| s).collect::<Vec<_>>())
    });
    let auth_env = m.str(doc, "auth_env").filter(|v| !v.is_empty());
    let env_passthrough: Vec<String> = m
        .strings(doc, "env_passthrough")
        .unwrap_or_default()
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    for (key, name) in auth_env
        .iter()
        .map(|v| ("auth_env", v))
        .chain(env_passthrough.iter().map(|v| ("env_passthrough", v)))
    {
        if !is_variable_name(name) {
            let span = m.opt(key).map(|n| n.span).unwrap_or(m.span);
            doc.error(
                "bad-value",
                span,
                key,
                format!("`{name}` is not an environment variable name"),
            );
        }
    }
    let skill_dir = m
        .str(doc, "skill_dir")
        .unwrap_or_else(|| SKILL_DIRS[0].to_string());
    if !SKILL_DIRS.contains(&skill_dir.trim_end_matches('/')) {
        let span = m.opt("skill_dir").map(|n| n.span).unwrap_or(m.span);
        doc.error(
            "bad-value",
            span,
            "skill_dir",
            format!(
                "assay installs skills in {}, not `{skill_dir}`",
                SKILL_DIRS.join(" and ")
            ),
        );
    }
    if !chosen {
        withheld(doc, m, auth_env.iter().chain(&env_passthrough));
    }
    let transcript_file = read_transcript(doc, m);
    Some(AdapterSpec {
        source: file.to_path_buf(),
        name: m.str(doc, "name"),
        invocation: invocation?,
        auth_env,
        transcript_file: transcript_file?,
        skill_dir: skill_dir.trim_end_matches('/').to_string(),
        env_passthrough,
        chosen,
    })
}

/// `transcript`: `{"format": "stdout-jsonl"}` (the default) or `{"format": "file", "path":
/// …}`, a path inside the working folder. `Some(None)` is stdout.
fn read_transcript(doc: &mut Doc, m: &Map<'_>) -> Option<Option<String>> {
    let Some(node) = m.opt("transcript") else {
        return Some(None);
    };
    let t = doc.map(node, "transcript")?;
    t.check_keys(doc, "transcript", &["format", "path"]);
    match t.str(doc, "format").as_deref() {
        None | Some("stdout-jsonl") => Some(None),
        Some("file") => {
            let path = t
                .str(doc, "path")
                .unwrap_or_else(|| "transcript.jsonl".into());
            match crate::suite::paths::workspace_relative(&path) {
                Ok(_) => Some(Some(path)),
                Err(e) => {
                    let span = t.opt("path").map(|n| n.span).unwrap_or(node.span);
                    doc.error("bad-path", span, "transcript.path", e.to_string());
                    None
                }
            }
        }
        Some(other) => {
            let span = t.opt("format").map(|n| n.span).unwrap_or(node.span);
            doc.error(
                "bad-value",
                span,
                "transcript.format",
                format!("`{other}` is not a transcript format"),
            )
            .help = Some("write `stdout-jsonl` or `file`".into());
            None
        }
    }
}

/// An adapter found beside the eval files comes with them, not from the user running assay:
/// the host variables it asks for are forwarded only with `--trust`, and it is said.
fn withheld<'a>(doc: &mut Doc, m: &Map<'_>, names: impl Iterator<Item = &'a String>) {
    // The harnesses' own login variables reach every agent anyway.
    let names: Vec<&str> = names
        .map(String::as_str)
        .filter(|n| !crate::host::AUTH.contains(n))
        .collect();
    let Some(span) = m.key_span("env_passthrough").or(m.key_span("auth_env")) else {
        return;
    };
    if names.is_empty() {
        return;
    }
    doc.warning(
        "adapter-env",
        span,
        "env_passthrough",
        format!(
            "this adapter asks for the host's {}: forwarded to the agent only with --trust",
            names.join(", ")
        ),
    )
    .help = Some("an adapter.json beside the eval files comes with them; name it with --adapter (or BMAD_EVAL_ADAPTER) or pass --trust to forward them".into());
}

fn is_variable_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Result<(AdapterSpec, Vec<Problem>), Vec<Problem>> {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("adapter.json");
        std::fs::write(&f, text).unwrap();
        read(&LoadCtx::new(d.path()), &f, false)
    }

    #[test]
    fn the_runners_claude_code_adapter_reads() {
        let (spec, problems) = read_text(
            r#"{"name": "claude-code", "invocation": ["claude", "-p", "{prompt}", "--output-format", "stream-json", "--verbose"],
                "auth_env": "ANTHROPIC_API_KEY", "transcript": {"format": "stdout-jsonl"}, "skill_dir": ".claude/skills",
                "load_signal": {"skill_tool": "Skill", "read_tool": "Read"}, "env_passthrough": []}"#,
        )
        .unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
        assert_eq!(spec.invocation[2], "{prompt}");
        assert_eq!(spec.auth_env.as_deref(), Some("ANTHROPIC_API_KEY"));
        assert_eq!(spec.transcript_file, None);
        assert_eq!(spec.skill_dir, ".claude/skills");
    }

    #[test]
    fn what_would_run_the_wrong_thing_is_refused_at_its_place() {
        let problems = read_text(
            r#"{"invocation": [], "auth_env": "A B", "skill_dir": "../x", "transcript": {"format": "file", "path": "/etc/passwd"}, "extra": 1}"#,
        )
        .unwrap_err();
        let codes: Vec<(&str, bool)> = problems.iter().map(|p| (p.code, p.is_error())).collect();
        for code in ["empty", "bad-value", "bad-path"] {
            assert!(codes.contains(&(code, true)), "{code}: {problems:#?}");
        }
        assert!(codes.contains(&("ignored-key", false)), "{problems:#?}");
    }

    #[test]
    fn host_variables_an_adapter_beside_the_evals_asks_for_are_said_to_need_trust() {
        let (_, problems) = read_text(
            r#"{"invocation": ["agent", "{prompt}"], "auth_env": "ACME_TOKEN", "env_passthrough": ["ACME_REGION"]}"#,
        )
        .unwrap();
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].code, "adapter-env");
        assert!(
            problems[0].message.contains("ACME_TOKEN, ACME_REGION"),
            "{problems:#?}"
        );
    }
}
