//! The evals: expectations too vague to grade, checks that cannot tell a good answer from
//! none, cases that never tell the agent what their checks look for, repeated prompts.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::place::{Files, finding, read_text};
use crate::assert::builtin::urls::UrlPolicy;
use crate::assert::check::Checks;
use crate::assert::view::CaseRunView;
use crate::diag::Problem;
use crate::diag::Severity::Warning;
use crate::suite::{Case, Check, Location, SkillKind, Suite};

/// Check types that guard rather than ask for something: passing on an empty answer is what
/// they do, so only a case made of nothing else is suspect.
const GUARDS: &[&str] = &[
    "not_contains",
    "max_length",
    "tool_not_called",
    "fixture_unchanged",
    "max_turns",
    "max_cost",
    "max_duration",
];

/// Types never evaluated here: `urls_reachable` would reach the network.
const NOT_EVALUATED: &[&str] = &["urls_reachable"];

/// Words that say nothing a grader could check, alone or together.
const VAGUE_WORDS: &[&str] = &[
    "is",
    "are",
    "be",
    "it",
    "its",
    "the",
    "a",
    "an",
    "and",
    "very",
    "really",
    "should",
    "must",
    "good",
    "great",
    "fine",
    "ok",
    "okay",
    "nice",
    "correct",
    "correctly",
    "right",
    "works",
    "work",
    "working",
    "worked",
    "helpful",
    "useful",
    "accurate",
    "clear",
    "complete",
    "reasonable",
    "appropriate",
    "high",
    "quality",
    "well",
    "written",
    "done",
    "valid",
    "proper",
    "properly",
    "expected",
    "as",
    "looks",
    "look",
    "seems",
    "makes",
    "sense",
    "succeeds",
    "passes",
    "output",
    "response",
    "answer",
    "result",
    "results",
    "skill",
    "agent",
    "does",
    "job",
    "what",
    "was",
    "were",
    "asked",
    "task",
    "follows",
    "instructions",
];

/// The built-in check types, as lint evaluates them (`urls_reachable` never is).
pub fn checks() -> Checks {
    Checks::builtin(UrlPolicy::default())
}

/// Every finding in one suite's cases.
pub fn lint(suite: &Suite, cwd: &Path, checks: &Checks, files: &mut Files, out: &mut Vec<Problem>) {
    let skill = skill_text(suite, cwd);
    // Made once per suite, not per case: a skill may be megabytes, a suite thousands of cases.
    let mut echo = skill.as_deref().map(Echo::new);
    let skill_lower = skill.as_deref().map(str::to_lowercase);
    let mut prompts: HashMap<String, &Case> = HashMap::new();
    for case in &suite.cases {
        vague(case, files, out);
        for c in &case.checks {
            empty_pass(c, case, checks, files, out);
        }
        if case.command.is_none() {
            cannot_fail(case, checks, echo.as_mut(), files, out);
            unnamed(suite, case, skill_lower.as_deref(), cwd, files, out);
            duplicate(case, &mut prompts, files, out);
        }
    }
}

/// A case asking what an earlier one asks and graded on the same criteria. The same prompt
/// graded on other criteria is a deliberate variant, not a repeat.
fn duplicate<'a>(
    case: &'a Case,
    seen: &mut HashMap<String, &'a Case>,
    files: &mut Files,
    out: &mut Vec<Problem>,
) {
    let key = format!(
        "{}\n{}",
        case.turns.join("\n").trim().to_lowercase(),
        criteria_of(case)
    );
    let Some(first) = seen.get(&key) else {
        seen.insert(key, case);
        return;
    };
    out.push(finding(
        Warning,
        "duplicate-prompt",
        &case.location.file,
        files.at(&case.location),
        format!(
            "case `{}` has the same prompt and criteria as case `{}`",
            case.id, first.id
        ),
        "vary the prompt (another input, phrasing or edge case) or what it is graded on, or remove the repeat: it costs a run and measures nothing new",
    ));
}

/// What a case is graded on: its checks (without their ids and places), expectations, rubric,
/// judge criterion and expected output.
fn criteria_of(case: &Case) -> String {
    let checks: Vec<_> = case
        .checks
        .iter()
        .map(|c| serde_json::json!([c.kind, c.config, c.negate, c.weight, c.target]))
        .collect();
    let rubric: Vec<_> = case.judge.rubric.iter().map(|c| &c.criterion).collect();
    serde_json::json!([
        checks,
        case.judge.expectations,
        rubric,
        case.judge.criteria,
        case.expected_output
    ])
    .to_string()
}

/// The skill's text (front matter and body), for checks run against it.
fn skill_text(suite: &Suite, cwd: &Path) -> Option<String> {
    let skill = suite.skill.as_ref()?;
    let file = match skill.kind {
        SkillKind::Dir => skill.path.join("SKILL.md"),
        SkillKind::Command => skill.path.clone(),
    };
    read_text(&cwd.join(file))
}

/// Expectations and criteria that name nothing checkable.
fn vague(case: &Case, files: &mut Files, out: &mut Vec<Problem>) {
    let mut items: Vec<&str> = case.judge.expectations.iter().map(String::as_str).collect();
    items.extend(case.judge.rubric.iter().map(|c| c.criterion.as_str()));
    items.extend(case.judge.criteria.as_deref());
    for text in items {
        if is_vague(text) {
            out.push(finding(
                Warning,
                "vague-expectation",
                &case.location.file,
                files.find(&case.location, text),
                format!("\"{}\" is too vague to grade: a judge can pass anything against it", text.trim()),
                "name something a reader can check: a section, a value, a file, a fact from the input (\"brief.md lists three risks, each with an owner\")",
            ));
        }
    }
}

/// Whether an expectation says nothing beyond "it is good".
pub fn is_vague(text: &str) -> bool {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_' || c == '/'))
        .map(|w| w.trim_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    words.is_empty() || words.iter().all(|w| VAGUE_WORDS.contains(&w.as_str()))
}

/// A case-run with nothing in it: no output, no tool calls, no files.
fn empty_view() -> Arc<CaseRunView> {
    Arc::new(CaseRunView::default())
}

/// The most of a skill's text the echo case-run answers with: 64k tokens' worth, a dozen
/// times the recommended budget (a larger skill is flagged `skill-over-budget` anyway). Each
/// check's cost grows with the text, and a suite may hold thousands.
const ECHO_BYTES: usize = 256 << 10;

/// A case-run whose output is the skill's own text (its first [`ECHO_BYTES`]), and nothing
/// else, with each check's verdict on it kept: a suite repeating one check in every case
/// evaluates it once.
struct Echo {
    view: Arc<CaseRunView>,
    seen: HashMap<(String, String, bool), Option<bool>>,
}

impl Echo {
    fn new(skill: &str) -> Self {
        let mut end = skill.len().min(ECHO_BYTES);
        while !skill.is_char_boundary(end) {
            end -= 1;
        }
        let text = skill[..end].to_string();
        Echo {
            view: Arc::new(CaseRunView {
                output: text.as_str().into(),
                final_message: text.into(),
                ..CaseRunView::default()
            }),
            seen: HashMap::new(),
        }
    }

    fn passes(&mut self, checks: &Checks, c: &Check) -> Option<bool> {
        let key = (c.kind.clone(), c.config.to_string(), c.negate);
        if let Some(v) = self.seen.get(&key) {
            return *v;
        }
        let v = passes(checks, c, &self.view);
        self.seen.insert(key, v);
        v
    }
}

/// Whether a check passes on a case-run, negation applied; `None` for a type not evaluated
/// here (a plugin's, or one that would reach the network).
fn passes(checks: &Checks, c: &Check, view: &Arc<CaseRunView>) -> Option<bool> {
    if NOT_EVALUATED.contains(&c.kind.as_str()) {
        return None;
    }
    let result = checks.evaluate(&c.kind, &c.config, view)?;
    Some(result.map(|f| f.passed).unwrap_or(false) != c.negate)
}

fn is_guard(c: &Check) -> bool {
    c.negate || GUARDS.contains(&c.kind.as_str())
}

/// A check that asks for something, yet passes when there is nothing.
fn empty_pass(c: &Check, case: &Case, checks: &Checks, files: &mut Files, out: &mut Vec<Problem>) {
    if is_guard(c) || passes(checks, c, &empty_view()) != Some(true) {
        return;
    }
    let loc = c.location.as_ref().unwrap_or(&case.location);
    out.push(finding(
        Warning,
        "check-passes-on-empty",
        &loc.file,
        files.at(loc),
        format!(
            "check `{}` ({}) passes on an empty answer, so it cannot fail",
            c.id, c.kind
        ),
        "make it ask for something the answer must hold (a count above 0, a pattern that needs text, a needle)",
    ));
}

/// A case whose every check passes on an empty case-run, or on the skill's own text given as
/// the answer, with no judge to tell them apart.
fn cannot_fail(
    case: &Case,
    checks: &Checks,
    echo: Option<&mut Echo>,
    files: &mut Files,
    out: &mut Vec<Problem>,
) {
    if case.checks.is_empty() || !case.judge.is_empty() {
        return;
    }
    let all_pass = |view: &Arc<CaseRunView>| {
        case.checks
            .iter()
            .all(|c| passes(checks, c, view).unwrap_or(false))
    };
    let what = if all_pass(&empty_view()) {
        "an agent that does nothing"
    } else if echo.is_some_and(|e| {
        case.checks
            .iter()
            .all(|c| e.passes(checks, c).unwrap_or(false))
    }) {
        "an agent that answers with the skill's own text"
    } else {
        return;
    };
    out.push(finding(
        Warning,
        "case-cannot-fail",
        &case.location.file,
        files.at(&case.location),
        format!(
            "case `{}` passes {what}: none of its {} check(s) can tell that from doing the task",
            case.id,
            case.checks.len()
        ),
        "add a check on what only doing the task produces (a file it writes, a value from the input), or a judge expectation",
    ));
}

/// Checks that look for a file, or for words, that nothing the agent is given mentions
/// (`skill_lower`: the skill's text, lowercased).
fn unnamed(
    suite: &Suite,
    case: &Case,
    skill_lower: Option<&str>,
    cwd: &Path,
    files: &mut Files,
    out: &mut Vec<Problem>,
) {
    let mut given = case.turns.join("\n");
    for extra in [
        case.expected_output.as_deref(),
        suite.defaults.system_prompt.as_deref(),
        case.judge.criteria.as_deref(),
    ]
    .into_iter()
    .flatten()
    {
        given.push('\n');
        given.push_str(extra);
    }
    for f in &case.fixtures {
        given.push('\n');
        given.push_str(&f.dest.to_string_lossy());
        if let Some(text) = read_text(&cwd.join(&f.source)) {
            given.push('\n');
            given.push_str(&text);
        }
    }
    let given = given.to_lowercase();
    let mentions = |s: &str| given.contains(s) || skill_lower.is_some_and(|k| k.contains(s));
    for c in case.checks.iter().filter(|c| !c.negate) {
        let (what, missing) = match c.kind.as_str() {
            "file_exists" | "file_created" | "file_contains" | "file_matches" => {
                let Some(path) = c.config.get("path").and_then(|v| v.as_str()) else {
                    continue;
                };
                let name = Path::new(path)
                    .file_name()
                    .map(|n| n.to_string_lossy().to_lowercase())
                    .unwrap_or_default();
                (format!("the file `{path}`"), !mentions(&name))
            }
            "contains" | "starts_with" | "ends_with" => {
                let Some(needle) = c.config.get("needle").and_then(|v| v.as_str()) else {
                    continue;
                };
                let words: Vec<String> = needle
                    .split(|ch: char| !ch.is_alphanumeric())
                    .filter(|w| w.chars().count() >= 3)
                    .map(str::to_lowercase)
                    .collect();
                let missing = !words.is_empty() && !words.iter().any(|w| mentions(w));
                (format!("\"{needle}\""), missing)
            }
            _ => continue,
        };
        if missing {
            let loc: &Location = c.location.as_ref().unwrap_or(&case.location);
            out.push(finding(
                Warning,
                "check-not-in-prompt",
                &loc.file,
                files.at(loc),
                format!(
                    "check `{}` looks for {what}, which neither the prompt, the skill nor the case's inputs mention: an agent can only hit it by chance",
                    c.id
                ),
                "name it in the prompt (or in the skill's instructions), or check for what the prompt asks",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_is_cut_on_a_character_boundary_and_remembers_verdicts() {
        let skill = format!("{}€€", "a".repeat(ECHO_BYTES - 1));
        let mut echo = Echo::new(&skill);
        assert_eq!(echo.view.output.len(), ECHO_BYTES - 1);
        let c = Check::new(
            "c".into(),
            "contains",
            serde_json::json!({"needle": "aaa"}),
            crate::suite::CheckTarget::Output,
            None,
        );
        let checks = checks();
        assert_eq!(echo.passes(&checks, &c), Some(true));
        assert_eq!(echo.seen.len(), 1);
        assert_eq!(echo.passes(&checks, &c), Some(true));
        assert_eq!(echo.seen.len(), 1);
    }

    #[test]
    fn vague_expectations_are_told_from_concrete_ones() {
        for v in [
            "is good",
            "Works",
            "The output is correct and helpful.",
            "looks good",
            "It does what was asked",
            "",
        ] {
            assert!(is_vague(v), "{v:?}");
        }
        for c in [
            "brief.md exists",
            "lists three risks",
            "the total is $1,200",
            "mentions pricing",
        ] {
            assert!(!is_vague(c), "{c:?}");
        }
    }
}
