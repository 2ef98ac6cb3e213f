//! The skill itself: SKILL.md's front matter by the Agent Skills specification, its size
//! against a token budget, and the files it points at.
//!
//! The specification (agentskills.io): `name` is required, 1–64 characters, lowercase letters,
//! digits and hyphens, not starting or ending with a hyphen, no `--`, and the same as the
//! skill's folder; `description` is required, 1–1024 characters, and says what the skill does
//! and when to use it; `compatibility` is at most 500 characters; `metadata` maps strings to
//! strings; `license` and `allowed-tools` are strings. The body is loaded whole when the skill
//! fires, so it is meant to stay under about 5,000 tokens and 500 lines, with detail in files
//! it links to. A slash command (`.claude/commands/<name>.md`) has optional front matter and
//! no name of its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fancy_regex::Regex;

use super::place::{finding, read_text};
use crate::diag::Severity::{Error, Warning};
use crate::diag::source::{Source, Span};
use crate::diag::{Problem, did_you_mean};
use crate::suite::SkillKind;
use crate::syntax::node::{Key, Node, Value};

/// The keys the Agent Skills specification defines.
const SPEC_KEYS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Keys Claude Code reads besides the specification's (skills and commands).
const CLAUDE_CODE_KEYS: &[&str] = &[
    "argument-hint",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "context",
    "agent",
    "hooks",
];

/// Body lines the specification recommends staying under.
const MAX_LINES: usize = 500;

/// A skill file to lint: a folder's SKILL.md or a command file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SkillFile {
    /// The SKILL.md or command file, as shown.
    pub file: PathBuf,
    pub kind: SkillKind,
}

/// The token estimate used for the budget: a quarter of the characters, rounded up (within
/// about a fifth of the tokenizers' counts for English prose and Markdown).
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Every finding in one skill file.
pub fn lint(skill: &SkillFile, cwd: &Path, max_tokens: u64, out: &mut Vec<Problem>) {
    let shown = &skill.file;
    if links_out(&cwd.join(shown)) {
        out.push(finding(
            Error,
            "unreadable",
            shown,
            None,
            "the file is a link to a file outside its own folder; lint does not follow it there",
            "put the file itself in the skill's folder (the folder may be a link)",
        ));
        return;
    }
    let Some(text) = read_text(&cwd.join(shown)) else {
        out.push(finding(
            Error,
            "unreadable",
            shown,
            None,
            "cannot read the file as UTF-8 text",
            "save it as UTF-8",
        ));
        return;
    };
    let src = Source::new(shown, text);
    let dir = cwd
        .join(shown)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let body_start = match front_matter(&src) {
        FrontMatter::Missing => {
            if skill.kind == SkillKind::Dir {
                out.push(finding(
                    Error,
                    "front-matter-missing",
                    shown,
                    Some((src.clone(), Span::new(0, 0))),
                    "SKILL.md has no front matter, so no agent can tell what the skill is for",
                    format!(
                        "start the file with `---`, `name: {}`, `description: <what it does and when to use it>`, `---`",
                        folder_name(&dir)
                    ),
                ));
            }
            0
        }
        FrontMatter::Unclosed => {
            out.push(finding(
                Error,
                "front-matter-unclosed",
                shown,
                Some((src.clone(), Span::new(0, 3))),
                "the front matter opened with `---` is never closed",
                "end it with a line holding only `---`",
            ));
            return;
        }
        FrontMatter::At { yaml, body } => {
            keys(skill, &src, &yaml, &dir, out);
            body
        }
    };
    let body = &src.text[body_start..];
    size(shown, &src, body_start, body, max_tokens, out);
    references(shown, &src, body_start, (&dir, cwd), out);
}

/// Whether `file`, links followed, lies outside its folder (links followed too): a SKILL.md
/// linked to `/etc/passwd` or `~/.ssh/config` is never read, so its text never reaches a
/// finding. A linked skill folder is fine; so is a file that cannot be resolved (the read says
/// so).
fn links_out(file: &Path) -> bool {
    let (Some(dir), Ok(real)) = (file.parent(), file.canonicalize()) else {
        return false;
    };
    dir.canonicalize().is_ok_and(|d| !real.starts_with(d))
}

enum FrontMatter {
    Missing,
    Unclosed,
    /// The front matter as a source of the same length as the file up to its closing line
    /// (so spans point into the file), and where the body starts.
    At {
        yaml: Arc<Source>,
        body: usize,
    },
}

/// Finds `---` front matter at the top of a Markdown file.
fn front_matter(src: &Arc<Source>) -> FrontMatter {
    let text = &src.text;
    let first_end = text.find('\n').unwrap_or(text.len());
    if text[..first_end].trim_end() != "---" {
        return FrontMatter::Missing;
    }
    let mut at = first_end + 1;
    while at <= text.len() {
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        if text[at..end].trim_end() == "---" {
            // The opening line blanked: the YAML parser sees the same offsets as the file.
            let yaml = format!("{}{}", " ".repeat(first_end), &text[first_end..at]);
            return FrontMatter::At {
                yaml: Source::new(src.path.clone(), yaml),
                body: (end + 1).min(text.len()),
            };
        }
        if end == text.len() {
            break;
        }
        at = end + 1;
    }
    FrontMatter::Unclosed
}

/// The front matter's keys and values.
fn keys(
    skill: &SkillFile,
    src: &Arc<Source>,
    yaml: &Arc<Source>,
    dir: &Path,
    out: &mut Vec<Problem>,
) {
    let shown = &skill.file;
    let Some(node) = parse_front_matter(shown, src, yaml, out) else {
        return;
    };
    let Some(map) = node.as_map() else {
        if !matches!(node.value, Value::Null) {
            out.push(finding(
                Error,
                "front-matter-not-a-map",
                shown,
                Some((src.clone(), node.span)),
                format!(
                    "the front matter is {}, not `key: value` lines",
                    node.value.kind_name()
                ),
                "write the front matter as `name: …` and `description: …` lines",
            ));
        }
        return;
    };
    let is_dir = skill.kind == SkillKind::Dir;
    let folder = folder_name(dir);
    for (key, value) in map {
        let known = SPEC_KEYS.contains(&key.name.as_str())
            || CLAUDE_CODE_KEYS.contains(&key.name.as_str())
            || (!is_dir && key.name == "name");
        if known {
            value_of(shown, src, &key.name, value, is_dir, &folder, out);
        } else {
            out.push(unknown_key(shown, src, key));
        }
    }
    missing_keys(shown, src, map, is_dir, &folder, out);
}

/// The front matter parsed as YAML, each syntax error a finding.
fn parse_front_matter(
    shown: &Path,
    src: &Arc<Source>,
    yaml: &Arc<Source>,
    out: &mut Vec<Problem>,
) -> Option<Node> {
    let (node, problems) = crate::syntax::yaml::parse(yaml);
    for p in problems {
        let span = p.span.unwrap_or_default();
        out.push(finding(
            Error,
            "front-matter-syntax",
            shown,
            Some((src.clone(), span)),
            format!("the front matter is not valid YAML: {}", p.message),
            "fix the YAML between the `---` lines (quote a value holding `: `)",
        ));
    }
    node
}

/// A key neither the specification nor Claude Code reads.
fn unknown_key(shown: &Path, src: &Arc<Source>, key: &Key) -> Problem {
    let all = SPEC_KEYS.iter().chain(CLAUDE_CODE_KEYS).copied();
    let fix = match did_you_mean(&key.name, all) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!(
            "the Agent Skills keys are {}; Claude Code also reads {}",
            SPEC_KEYS.join(", "),
            CLAUDE_CODE_KEYS.join(", ")
        ),
    };
    finding(
        Warning,
        "front-matter-unknown-key",
        shown,
        Some((src.clone(), key.span)),
        format!("`{}` is not a front matter key agents read", key.name),
        fix,
    )
}

/// The value of a known key, by the rules of that key.
fn value_of(
    shown: &Path,
    src: &Arc<Source>,
    key: &str,
    value: &Node,
    is_dir: bool,
    folder: &str,
    out: &mut Vec<Problem>,
) {
    match key {
        "name" if is_dir => name(shown, src, value, folder, out),
        "description" => description(shown, src, value, is_dir, out),
        "compatibility" => compatibility(shown, src, value, out),
        "license" | "argument-hint" | "model" | "context" | "agent" => {
            text_value(shown, src, key, value, out);
        }
        "metadata" => metadata(shown, src, value, out),
        "allowed-tools" => {
            let ok = match &value.value {
                Value::Str(_) => true,
                Value::Seq(items) => items.iter().all(|i| matches!(i.value, Value::Str(_))),
                _ => false,
            };
            if !ok {
                out.push(type_error(
                    shown,
                    src,
                    "allowed-tools",
                    value,
                    "a space-separated string of tool names (or a list of them)",
                ));
            }
        }
        "disable-model-invocation" | "user-invocable" if !matches!(value.value, Value::Bool(_)) => {
            out.push(type_error(shown, src, key, value, "`true` or `false`"));
        }
        _ => {}
    }
}

/// `compatibility`: a string of at most 500 characters.
fn compatibility(shown: &Path, src: &Arc<Source>, value: &Node, out: &mut Vec<Problem>) {
    if let Some(s) = text_value(shown, src, "compatibility", value, out)
        && s.chars().count() > 500
    {
        out.push(finding(
            Error,
            "compatibility-too-long",
            shown,
            Some((src.clone(), value.span)),
            format!("`compatibility` is {} characters, over the 500 allowed", s.chars().count()),
            "say only what the skill needs from its environment (a product, a tool, network access)",
        ));
    }
}

/// The required keys left out: a skill's `name`, and the `description` (only a warning for a
/// command, whose first line stands in for it).
fn missing_keys(
    shown: &Path,
    src: &Arc<Source>,
    map: &[(Key, Node)],
    is_dir: bool,
    folder: &str,
    out: &mut Vec<Problem>,
) {
    let here = Some((src.clone(), Span::new(0, 3)));
    let has = |k: &str| map.iter().any(|(key, _)| key.name == k);
    if is_dir && !has("name") {
        out.push(finding(
            Error,
            "name-missing",
            shown,
            here.clone(),
            "the front matter has no `name` (the Agent Skills specification requires it; Codex skips a skill without one)",
            format!("add `name: {folder}`"),
        ));
    }
    if !has("description") {
        out.push(finding(
            if is_dir { Error } else { Warning },
            "description-missing",
            shown,
            here,
            if is_dir {
                "the front matter has no `description`: agents choose a skill by it, so this one never fires on its own"
            } else {
                "the command has no `description` (its first line is shown in `/help` instead)"
            },
            "add `description: <what it does>. Use when <the requests it is for>.`",
        ));
    }
}

/// `name`: the specification's rules, and the folder's name.
fn name(shown: &Path, src: &Arc<Source>, value: &Node, folder: &str, out: &mut Vec<Problem>) {
    let Some(name) = text_value(shown, src, "name", value, out) else {
        return;
    };
    let here = Some((src.clone(), value.span));
    let len = name.chars().count();
    let bad_char = name
        .chars()
        .find(|c| !(c.is_lowercase() || c.is_numeric() || *c == '-'));
    let problem = if len == 0 || len > 64 {
        Some(format!("`name` is {len} characters; it must be 1 to 64"))
    } else if let Some(c) = bad_char {
        Some(format!(
            "`name` holds {c:?}; only lowercase letters, digits and hyphens are allowed"
        ))
    } else if name.starts_with('-') || name.ends_with('-') {
        Some("`name` starts or ends with a hyphen".to_string())
    } else if name.contains("--") {
        Some("`name` holds two hyphens in a row".to_string())
    } else {
        None
    };
    if let Some(message) = problem {
        out.push(finding(
            Error,
            "name-invalid",
            shown,
            here,
            message,
            format!("name it `{}`, and its folder too", suggest_name(&name)),
        ));
    } else if !folder.is_empty() && name != folder {
        out.push(finding(
            Error,
            "name-not-folder",
            shown,
            here,
            format!(
                "`name` is `{name}` but the skill's folder is `{folder}`; they must be the same"
            ),
            format!("rename the folder to `{name}`, or set `name: {folder}`"),
        ));
    }
}

/// A name the specification accepts, made from one it does not.
fn suggest_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        let c = if c.is_alphanumeric() { c } else { '-' };
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    let out = out.trim_end_matches('-');
    out.chars()
        .take(64)
        .collect::<String>()
        .trim_end_matches('-')
        .to_string()
}

/// `description`: present, within 1024 characters, and (for a skill an agent chooses by
/// itself) saying when to use it.
fn description(
    shown: &Path,
    src: &Arc<Source>,
    value: &Node,
    is_dir: bool,
    out: &mut Vec<Problem>,
) {
    let Some(text) = text_value(shown, src, "description", value, out) else {
        return;
    };
    let here = || Some((src.clone(), value.span));
    let len = text.trim().chars().count();
    if len == 0 {
        out.push(finding(
            Error,
            "description-missing",
            shown,
            here(),
            "`description` is empty",
            "say what the skill does and when to use it",
        ));
    } else if len > 1024 {
        out.push(finding(
            Error,
            "description-too-long",
            shown,
            here(),
            format!("`description` is {len} characters, over the 1024 allowed"),
            "keep what it does and when to use it; move the rest into the body",
        ));
    } else if is_dir {
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .map(str::to_lowercase)
            .collect();
        let says_when = words.iter().any(|w| {
            matches!(
                w.as_str(),
                "when" | "whenever" | "use" | "used" | "using" | "if" | "asked" | "ask" | "asks"
            )
        });
        if !says_when {
            out.push(finding(
                Warning,
                "description-no-when",
                shown,
                here(),
                "`description` says what the skill does but not when to use it; agents fire a skill by this text",
                "add a sentence such as `Use when the user asks to …`",
            ));
        }
    }
}

fn metadata(shown: &Path, src: &Arc<Source>, value: &Node, out: &mut Vec<Problem>) {
    let Some(entries) = value.as_map() else {
        out.push(type_error(
            shown,
            src,
            "metadata",
            value,
            "a map of string keys to string values",
        ));
        return;
    };
    for (k, v) in entries {
        if !matches!(v.value, Value::Str(_)) {
            out.push(type_error(
                shown,
                src,
                &format!("metadata.{}", k.name),
                v,
                "a string (quote it)",
            ));
        }
    }
}

/// A string value, or a type finding.
fn text_value(
    shown: &Path,
    src: &Arc<Source>,
    key: &str,
    value: &Node,
    out: &mut Vec<Problem>,
) -> Option<String> {
    match &value.value {
        Value::Str(s) => Some(s.clone()),
        _ => {
            out.push(type_error(shown, src, key, value, "a string"));
            None
        }
    }
}

fn type_error(shown: &Path, src: &Arc<Source>, key: &str, value: &Node, wanted: &str) -> Problem {
    finding(
        Error,
        "front-matter-type",
        shown,
        Some((src.clone(), value.span)),
        format!("`{key}` is {}, not {wanted}", value.value.kind_name()),
        format!("write `{key}` as {wanted}"),
    )
}

fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The body against the token budget and the line recommendation.
fn size(
    shown: &Path,
    src: &Arc<Source>,
    body_start: usize,
    body: &str,
    max_tokens: u64,
    out: &mut Vec<Problem>,
) {
    let here = Some((src.clone(), Span::new(body_start, body_start)));
    let tokens = estimate_tokens(body);
    if tokens > max_tokens {
        out.push(finding(
            Warning,
            "skill-over-budget",
            shown,
            here.clone(),
            format!(
                "the body is about {tokens} tokens (a quarter of its {} characters), over the budget of {max_tokens}; it is all loaded each time the skill fires",
                body.chars().count()
            ),
            "move detail into files under references/ that the body links to (they load only when needed), or raise the budget with --max-tokens or [lint] max_tokens",
        ));
    }
    let lines = body.lines().count();
    if lines > MAX_LINES {
        out.push(finding(
            Warning,
            "skill-too-many-lines",
            shown,
            here,
            format!("the body is {lines} lines, over the {MAX_LINES} the Agent Skills specification recommends"),
            "split it: keep the steps here and link reference files for the detail",
        ));
    }
}

/// Markdown links and backticked `scripts/`, `references/`, `assets/` paths in the body,
/// outside code fences, that name a file of the skill which is not there (or lie outside the
/// skill). `dirs` are the skill's folder and the folder lint runs in.
fn references(
    shown: &Path,
    src: &Arc<Source>,
    body_start: usize,
    dirs: (&Path, &Path),
    out: &mut Vec<Problem>,
) {
    static LINK: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r#"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"\n]*")?\s*\)"#).expect("valid")
    });
    static CODE: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"`((?:\./)?(?:scripts|references|assets)/[^`\s]+)`").expect("valid")
    });
    let mut in_fence = false;
    let mut at = body_start;
    for line in src.text[body_start..].split_inclusive('\n') {
        let start = at;
        at += line.len();
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut found: Vec<(usize, usize)> = [&*LINK, &*CODE]
            .into_iter()
            .flat_map(|re| re.captures_iter(line).flatten())
            .filter_map(|caps| caps.get(1).map(|m| (m.start(), m.end())))
            .collect();
        found.sort_unstable();
        {
            for (m_start, m_end) in found {
                let target = &line[m_start..m_end];
                if target.contains("://")
                    || target.starts_with('#')
                    || target.starts_with("mailto:")
                    || target.contains('$')
                    || target.contains('<')
                    || target.contains('*')
                {
                    continue;
                }
                let path = target.split(['#', '?']).next().unwrap_or("");
                if path.is_empty() {
                    continue;
                }
                let path = percent_decoded(path);
                let span = Span::new(start + m_start, start + m_end);
                check_reference(shown, src, span, dirs, &path, out);
            }
        }
    }
}

fn check_reference(
    shown: &Path,
    src: &Arc<Source>,
    span: Span,
    (dir, cwd): (&Path, &Path),
    path: &str,
    out: &mut Vec<Problem>,
) {
    let here = Some((src.clone(), span));
    let rel = Path::new(path);
    // Outside the skill's folder, as written or through a link in it: said without looking the
    // path up, so lint tells nobody which host files exist.
    let inside = !rel.is_absolute()
        && crate::suite::paths::normalize(rel).is_some()
        && resolves_inside(dir, &dir.join(rel));
    if !inside {
        out.push(finding(
            Warning,
            "reference-outside-skill",
            shown,
            here,
            format!("`{path}` points outside the skill's folder, so a copy of the skill installed elsewhere will not have it"),
            "move the file into the skill's folder (references/, scripts/ or assets/) and link it from there",
        ));
    } else if !dir.join(rel).exists() && names_a_skill_file(dir, cwd, rel) {
        out.push(finding(
            Warning,
            "missing-reference",
            shown,
            here,
            format!(
                "`{path}` does not exist (looked for it beside {})",
                shown.display()
            ),
            "create the file, or fix the path (relative to the skill's folder)",
        ));
    }
}

/// Whether a path missing from the skill reads as one of the skill's files rather than a
/// mention in prose: the folder it names is in the skill (`references/` for
/// `references/guide.md`), and no other place in the project has it — a folder above the skill
/// up to where lint runs (a script at the repository's root), or a sibling skill.
fn names_a_skill_file(dir: &Path, cwd: &Path, rel: &Path) -> bool {
    let folder = rel.parent().map_or(dir.to_path_buf(), |p| dir.join(p));
    if !folder.is_dir() {
        return false;
    }
    let above = dir.ancestors().skip(1).take_while(|a| a.starts_with(cwd));
    let siblings = dir
        .parent()
        .filter(|p| p.starts_with(cwd))
        .and_then(|p| std::fs::read_dir(p).ok())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p != dir);
    !above
        .map(Path::to_path_buf)
        .chain(siblings)
        .any(|base| base.join(rel).exists())
}

/// Whether `full`, or the nearest of its folders that exists, links followed, lies inside
/// `dir` (links followed too).
fn resolves_inside(dir: &Path, full: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    full.ancestors()
        .find_map(|a| a.canonicalize().ok())
        .is_some_and(|real| real.starts_with(dir))
}

/// `%20` and the like turned back into their characters (Markdown link targets are URLs).
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(h) = path.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(h, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lint_text(folder: &str, text: &str) -> Vec<Problem> {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(folder);
        std::fs::create_dir_all(dir.join("references")).unwrap();
        std::fs::write(dir.join("references/guide.md"), "x").unwrap();
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
        let mut out = Vec::new();
        let skill = SkillFile {
            file: PathBuf::from(folder).join("SKILL.md"),
            kind: SkillKind::Dir,
        };
        lint(&skill, d.path(), 5000, &mut out);
        out
    }

    fn codes(p: &[Problem]) -> Vec<&str> {
        p.iter().map(|p| p.code).collect()
    }

    #[test]
    fn a_good_skill_is_clean() {
        let p = lint_text(
            "pdf-tools",
            "---\nname: pdf-tools\ndescription: Extracts text from PDFs. Use when asked to read a PDF.\nlicense: MIT\nmetadata:\n  author: me\n---\nSee [the guide](references/guide.md) and `references/guide.md#top`.\n\n```\n[not a link](nowhere.md)\n```\n",
        );
        assert!(p.is_empty(), "{p:?}");
    }

    #[test]
    fn names_break_each_rule_with_a_place() {
        let p = lint_text(
            "Bad_Name",
            "---\nname: Bad_Name\ndescription: Does things when asked.\n---\n",
        );
        assert_eq!(codes(&p), ["name-invalid"]);
        assert_eq!(p[0].line_col(), Some((2, 7)));
        assert!(p[0].help.as_deref().unwrap().contains("`bad-name`"));
        let p = lint_text(
            "a",
            "---\nname: b\ndescription: Does things when asked.\n---\n",
        );
        assert_eq!(codes(&p), ["name-not-folder"]);
        for bad in ["-a", "a-", "a--b", &"a".repeat(65)] {
            let p = lint_text(
                bad.trim_matches('-'),
                &format!("---\nname: {bad}\ndescription: Use when x.\n---\n"),
            );
            assert_eq!(codes(&p), ["name-invalid"], "{bad}");
        }
    }

    #[test]
    fn front_matter_problems() {
        assert_eq!(
            codes(&lint_text("a", "# no front matter\n")),
            ["front-matter-missing"]
        );
        assert_eq!(
            codes(&lint_text("a", "---\nname: a\n")),
            ["front-matter-unclosed"]
        );
        let p = lint_text("a", "---\nname: a\ndescripton: x\nmetadata:\n  n: 1\n---\n");
        assert_eq!(
            codes(&p),
            [
                "front-matter-unknown-key",
                "front-matter-type",
                "description-missing"
            ]
        );
        assert_eq!(p[0].help.as_deref(), Some("did you mean `description`?"));
        assert_eq!(p[1].line_col(), Some((5, 6)));
        let long = "x ".repeat(600);
        let p = lint_text("a", &format!("---\nname: a\ndescription: {long}\n---\n"));
        assert_eq!(codes(&p), ["description-too-long"]);
        let p = lint_text("a", "---\nname: a\ndescription: Reviews prose.\n---\n");
        assert_eq!(codes(&p), ["description-no-when"]);
    }

    #[test]
    fn paths_merely_mentioned_are_not_missing_references() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for (path, text) in [
            ("scripts/release.sh", "x"),
            ("skills/other/references/shared.md", "x"),
            ("skills/a/references/guide.md", "x"),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        std::fs::write(
            root.join("skills/a/SKILL.md"),
            "---\nname: a\ndescription: Use when x.\n---\n\
             Bare paths (e.g. `assets/logo.png`) resolve from the skill.\n\
             Run `scripts/release.sh`; see `references/shared.md`.\n\
             Read `references/gone.md`.\n",
        )
        .unwrap();
        let mut out = Vec::new();
        let skill = SkillFile {
            file: PathBuf::from("skills/a/SKILL.md"),
            kind: SkillKind::Dir,
        };
        lint(&skill, root, 5000, &mut out);
        // Only the path in the skill's own references/ folder that is not there.
        assert_eq!(codes(&out), ["missing-reference"], "{out:?}");
        assert_eq!(out[0].line_col(), Some((7, 7)));
        assert!(!out[0].is_error());
    }

    #[test]
    fn references_and_budget() {
        let p = lint_text(
            "a",
            "---\nname: a\ndescription: Use when x.\n---\nRun `scripts/go.sh`; read [it](references/gone.md) and [up](../x.md).\n",
        );
        // `scripts/go.sh` is a mention: the skill has no scripts/ folder.
        assert_eq!(codes(&p), ["missing-reference", "reference-outside-skill"]);
        assert_eq!(p[0].line_col(), Some((5, 32)));
        assert!(!p[0].is_error(), "a warning");
        let body = "word ".repeat(5000);
        let p = lint_text(
            "a",
            &format!("---\nname: a\ndescription: Use when x.\n---\n{body}"),
        );
        assert_eq!(codes(&p), ["skill-over-budget"]);
        assert!(p[0].message.contains("6250 tokens"), "{}", p[0].message);
    }

    proptest::proptest! {
        /// Any text, made of front matter pieces, links and odd characters, gives findings,
        /// never a panic.
        #[test]
        fn never_panics(parts in proptest::collection::vec(proptest::prop_oneof![
            proptest::strategy::Just("---\n".to_string()),
            proptest::strategy::Just("name: ".to_string()),
            proptest::strategy::Just("description: ".to_string()),
            proptest::strategy::Just("metadata:\n  a: [1]\n".to_string()),
            proptest::strategy::Just("[x](references/%E2%82%AC.md#a)".to_string()),
            proptest::strategy::Just("`scripts/é`".to_string()),
            proptest::strategy::Just("```\n".to_string()),
            proptest::strategy::Just("\r\n".to_string()),
            "\\PC{0,12}",
        ], 0..24)) {
            let text: String = parts.concat();
            let _ = lint_text("a", &text);
            let _ = suggest_name(&text);
            let _ = percent_decoded(&text);
        }
    }

    #[test]
    fn a_skill_file_linked_out_of_its_folder_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("secret.md"),
            "---\nname: a\ndescription: Use when x.\nhunter2: 1\n---\n",
        )
        .unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        std::os::unix::fs::symlink(d.path().join("secret.md"), d.path().join("a/SKILL.md"))
            .unwrap();
        let mut out = Vec::new();
        let skill = SkillFile {
            file: PathBuf::from("a/SKILL.md"),
            kind: SkillKind::Dir,
        };
        lint(&skill, d.path(), 5000, &mut out);
        assert_eq!(codes(&out), ["unreadable"]);
        assert!(!format!("{out:?}").contains("hunter2"), "{out:?}");
        // A linked skill folder is read as usual.
        std::fs::create_dir(d.path().join("real")).unwrap();
        std::fs::write(
            d.path().join("real/SKILL.md"),
            "---\nname: real\ndescription: Use when x.\n---\n",
        )
        .unwrap();
        std::os::unix::fs::symlink(d.path().join("real"), d.path().join("linked")).unwrap();
        let mut out = Vec::new();
        let skill = SkillFile {
            file: PathBuf::from("linked/SKILL.md"),
            kind: SkillKind::Dir,
        };
        lint(&skill, d.path(), 5000, &mut out);
        assert_eq!(codes(&out), ["name-not-folder"]);
    }

    #[test]
    fn references_out_of_the_skill_never_tell_whether_a_host_file_exists() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        std::os::unix::fs::symlink("/", d.path().join("a/root")).unwrap();
        std::fs::write(
            d.path().join("a/SKILL.md"),
            "---\nname: a\ndescription: Use when x.\n---\n[p](/etc/passwd) [n](/etc/nothere-x)\n[p](../../../../../../etc/passwd) [n](../../../../../../nothere-x)\n[p](root/etc/passwd) [n](root/etc/nothere-x) [n](root/nothere-x/y)\n",
        )
        .unwrap();
        let mut out = Vec::new();
        let skill = SkillFile {
            file: PathBuf::from("a/SKILL.md"),
            kind: SkillKind::Dir,
        };
        lint(&skill, d.path(), 5000, &mut out);
        assert_eq!(codes(&out), ["reference-outside-skill"; 7], "{out:?}");
    }

    #[test]
    fn front_matter_edges_never_panic_and_place_in_characters() {
        for text in [
            "---",
            "---\n",
            "---\r\n---\r\n",
            "--- \nname: a\ndescription: Use when x.\n---  \r\nbody",
            "---\r\nname: a\r\ndescription: Use when x.\r\n---\r\n[é](gone.md)\r\n",
            "\u{feff}---\nname: a\ndescription: Use when x.\n---\n",
            "---\nname: é€😀_X\ndescription: Use when x.\n---\n",
        ] {
            let _ = lint_text("a", text);
        }
        let p = lint_text(
            "a",
            "---\r\nname: a\r\ndescription: Use when x.\r\n---\r\né€ [x](gone.md)\r\n",
        );
        assert_eq!(codes(&p), ["missing-reference"]);
        assert_eq!(p[0].line_col(), Some((5, 8)));
    }

    #[test]
    fn suggested_names_follow_the_rules() {
        assert_eq!(suggest_name("My Skill__v2"), "my-skill-v2");
        assert_eq!(suggest_name("--x--"), "x");
    }
}
