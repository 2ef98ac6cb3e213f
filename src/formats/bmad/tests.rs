//! The BMAD and skill-creator readers, on files of each shape.

use super::*;
use crate::formats::checks::testing::{
    assert_budget_checks, assert_no_errors, at, errors, help_of,
};

/// Loads `text` as a skill's evals.json.
fn load_evals(text: &str) -> Loaded {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("evals/brief");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("evals.json"), text).unwrap();
    let input = Input {
        evals_file: Some(dir.join("evals.json")),
        cases_file: None,
        triggers_file: None,
        validation_file: None,
        skill_name: "brief".into(),
        skill: None,
        project_root: d.path().to_path_buf(),
        dir,
    };
    load(&LoadCtx::new(d.path()), &input)
}

/// One eval whose `x-assay-checks` (and other extra keys) are `extra`.
fn one_eval(extra: &str) -> String {
    format!(
        "{{\n  \"evals\": [\n    {{\n      \"id\": \"one\",\n      \"prompt\": \"Write a brief.\",\n      \"expectations\": [\"It is brief.\"],\n{extra}\n    }}\n  ]\n}}\n"
    )
}

#[test]
fn x_assay_checks_reach_the_budget_checks() {
    let text = one_eval(
        r#"      "x-assay-checks": [
    {"type": "max_turns", "turns": 3},
    {"type": "max_cost", "usd": 0.5},
    {"type": "max_duration", "seconds": 60}
  ]"#,
    );
    let loaded = load_evals(&text);
    assert_no_errors(&loaded.problems);
    let case = &loaded.suites[0].cases[0];
    assert_budget_checks(&case.checks.iter().collect::<Vec<_>>());
    let at_check = case.checks[2].location.as_ref().unwrap();
    assert_eq!(
        (at_check.line, at_check.column),
        at(&text, r#"{"type": "max_duration""#)
    );
    // The expectations are still the judge's.
    assert_eq!(case.judge.expectations, ["It is brief."]);
}

#[test]
fn a_bad_x_assay_check_is_an_error_at_its_place() {
    let text = one_eval(
        r#"      "x-assay-check": [],
  "x-assay-checks": [
    {"type": "max_turn", "turns": 3},
    {"type": "max_cost", "dollars": 0.5}
  ]"#,
    );
    let loaded = load_evals(&text);
    assert!(loaded.suites.is_empty());
    let f = "evals[0].x-assay-checks";
    assert_eq!(
        errors(&loaded.problems),
        [
            (
                "unknown-key",
                at(&text, r#""x-assay-check""#),
                "evals[0].x-assay-check".to_string(),
                "unknown key `x-assay-check` in an eval".to_string()
            ),
            (
                "unknown-check-type",
                at(&text, r#""max_turn""#),
                format!("{f}[0].type"),
                "`max_turn` is not a check type".to_string()
            ),
            (
                "missing-field",
                at(&text, r#"{"type": "max_cost""#),
                format!("{f}[1].usd"),
                "missing required field `usd`".to_string()
            ),
            (
                "unknown-key",
                at(&text, r#""dollars""#),
                format!("{f}[1].dollars"),
                "unknown key `dollars` in a `max_cost` check".to_string()
            ),
        ]
    );
    assert_eq!(
        help_of(&loaded.problems, "unknown key `x-assay-check` in an eval"),
        "did you mean `x-assay-checks`?"
    );
    assert_eq!(
        help_of(&loaded.problems, "`max_turn` is not a check type"),
        "did you mean `max_turns`?"
    );
}

#[test]
fn x_assay_check_ids_are_unique_in_the_eval() {
    let text = one_eval(
        r#"      "x-assay-checks": [
    {"id": "budget", "type": "max_turns", "turns": 3},
    {"id": "budget", "type": "max_cost", "usd": 0.5}
  ]"#,
    );
    let loaded = load_evals(&text);
    assert_eq!(
        errors(&loaded.problems),
        [(
            "duplicate-id",
            at(&text, r#""budget", "type": "max_cost""#),
            "evals[0].x-assay-checks[1].id".to_string(),
            "check id `budget` is used twice".to_string()
        )]
    );
    // Each eval has its own ids.
    let two = r#"{"evals": [
  {"id": "a", "prompt": "p", "expectations": [], "x-assay-checks": [{"id": "t", "type": "max_turns", "turns": 1}]},
  {"id": "b", "prompt": "p", "expectations": [], "x-assay-checks": [{"id": "t", "type": "max_turns", "turns": 1}]}
]}"#;
    let loaded = load_evals(two);
    assert_no_errors(&loaded.problems);
    // An eval graded by checks alone is not "nothing to grade".
    assert!(!loaded.problems.iter().any(|p| p.code == "nothing-to-grade"));
}

/// A project with the skill `brief` at `skills/brief/`, the given files (paths from the project
/// root), and the eval folder `skills/brief/evals/` read as discovery would.
fn load_project(files: &[(&str, &str)]) -> (Loaded, tempfile::TempDir) {
    let d = tempfile::tempdir().unwrap();
    let skill = d.path().join("skills/brief");
    std::fs::create_dir_all(skill.join("evals")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: brief\ndescription: Writes briefs.\n---\nBody\n",
    )
    .unwrap();
    for (path, text) in files {
        let p = d.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let dir = skill.join("evals");
    let file = |n: &str| Some(dir.join(n)).filter(|p| p.is_file());
    let found = super::find::EvalFiles::in_dir(&dir);
    let input = Input {
        evals_file: file("evals.json"),
        cases_file: file("cases.json"),
        triggers_file: found.triggers,
        validation_file: found.validation,
        skill_name: "brief".into(),
        skill: crate::suite::skill::read(&skill),
        project_root: d.path().to_path_buf(),
        dir,
    };
    (load(&LoadCtx::new(d.path()), &input), d)
}

/// The warnings among `problems`, as `(code, (line, column), message)`.
fn warnings(problems: &[Problem]) -> Vec<(&'static str, (usize, usize), String)> {
    problems
        .iter()
        .filter(|p| !p.is_error())
        .map(|p| (p.code, p.line_col().unwrap_or((0, 0)), p.message.clone()))
        .collect()
}

#[test]
fn a_skill_creator_suite_loads_with_its_extra_keys_and_no_expectations_said() {
    // skill-creator writes cases first and expectations later; suites carry keys its runner
    // ignores. Both load, each said once at its place.
    let text = r#"{
  "skill_name": "brief",
  "target_skill": "other",
  "evals": [
    {"id": 1, "name": "first", "prompt": "Write a brief.", "expected_output": "A brief.", "files": []},
    {"id": 2, "category": "edge", "prompt": "Write two.", "expectation": ["Two briefs."]}
  ]
}"#;
    let (loaded, _d) = load_project(&[("skills/brief/evals/evals.json", text)]);
    assert_no_errors(&loaded.problems);
    assert_eq!(loaded.suites[0].cases.len(), 2);
    let w = warnings(&loaded.problems);
    let said = |code: &str, needle: &str| {
        w.iter()
            .any(|(c, at_, m)| *c == code && *at_ == at(text, needle) && !m.is_empty())
    };
    assert!(said("ignored-key", r#""target_skill""#), "{w:#?}");
    // skill-creator's `name` is kept as the case's name, never warned about.
    assert!(!w.iter().any(|(_, _, m)| m.contains("`name`")), "{w:#?}");
    assert_eq!(loaded.suites[0].cases[0].name.as_deref(), Some("first"));
    assert!(said("ignored-key", r#""category""#), "{w:#?}");
    assert!(said("ignored-key", r#""expectation""#), "{w:#?}");
    assert_eq!(
        w.iter()
            .filter(|(c, _, _)| *c == "nothing-to-grade")
            .count(),
        2,
        "{w:#?}"
    );
    assert_eq!(
        help_of(
            &loaded.problems,
            "unknown key `expectation` in an eval is ignored, as its runner ignores it"
        ),
        "did you mean `expectations`?"
    );
}

#[test]
fn skill_creator_assertions_are_expectations_when_they_are_sentences() {
    let text = r#"{"evals": [
  {"id": 1, "prompt": "p", "assertions": ["It is short.", "It names the customer."]},
  {"id": 2, "prompt": "q", "assertions": [{"name": "x", "type": "contains_concept"}]}
]}"#;
    let (loaded, _d) = load_project(&[("skills/brief/evals/evals.json", text)]);
    assert_no_errors(&loaded.problems);
    let cases = &loaded.suites[0].cases;
    assert_eq!(
        cases[0].judge.expectations,
        ["It is short.", "It names the customer."]
    );
    assert!(cases[1].judge.expectations.is_empty());
    let w = warnings(&loaded.problems);
    assert!(
        w.iter()
            .any(|(c, at_, _)| *c == "ignored-key" && *at_ == at(text, r#"[{"name""#)),
        "{w:#?}"
    );
    assert!(w.iter().any(|(c, _, _)| *c == "nothing-to-grade"), "{w:#?}");
}

#[test]
fn a_folder_fixture_stages_every_file_under_it_from_the_skill_folder() {
    // skill-creator: `files` are relative to the skill's folder, and may name a folder.
    let text = r#"{"evals": [{"id": 1, "prompt": "p", "expectations": ["e"], "files": ["evals/files/repo"]}]}"#;
    let (loaded, d) = load_project(&[
        ("skills/brief/evals/evals.json", text),
        ("skills/brief/evals/files/repo/a.md", "a"),
        ("skills/brief/evals/files/repo/src/b.rs", "b"),
    ]);
    assert_no_errors(&loaded.problems);
    let f = &loaded.suites[0].cases[0].fixtures;
    let dests: Vec<_> = f.iter().map(|f| f.dest.display().to_string()).collect();
    assert_eq!(
        dests,
        ["evals/files/repo/a.md", "evals/files/repo/src/b.rs"]
    );
    assert!(f[1].source.starts_with(d.path().join("skills/brief")));
}

#[cfg(unix)]
#[test]
fn a_folder_fixture_with_a_link_out_of_it_is_refused() {
    let text = r#"{"evals": [{"id": 1, "prompt": "p", "expectations": ["e"], "files": ["evals/files/repo"]}]}"#;
    let (loaded, _d) = {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("skills/brief/evals/files/repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), repo.join("leak")).unwrap();
        std::fs::write(d.path().join("skills/brief/evals/evals.json"), text).unwrap();
        std::fs::write(
            d.path().join("skills/brief/SKILL.md"),
            "---\nname: brief\n---\n",
        )
        .unwrap();
        let dir = d.path().join("skills/brief/evals");
        let input = Input {
            evals_file: Some(dir.join("evals.json")),
            cases_file: None,
            triggers_file: None,
            validation_file: None,
            skill_name: "brief".into(),
            skill: crate::suite::skill::read(&d.path().join("skills/brief")),
            project_root: d.path().to_path_buf(),
            dir,
        };
        (load(&LoadCtx::new(d.path()), &input), d)
    };
    let e = errors(&loaded.problems);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].0, "bad-fixture");
    assert!(
        e[0].3.contains("leak") && e[0].3.contains("escapes"),
        "{e:#?}"
    );
}

#[test]
fn bmad_cases_compose_state_prefix_and_grade_the_rubric() {
    let text = r#"{
  "skill_name": "brief",
  "cases": [
    {"id": "E1", "input": "Go on.", "state_prefix": "[Step 3 of 5 done]\n", "rubric": ["brief.md exists"],
     "files": ["files/fixture/notes.md"], "timeout": 900},
    {"id": "E2", "input": "Start.", "rubric": []}
  ]
}"#;
    let (loaded, _d) = load_project(&[
        ("skills/brief/evals/cases.json", text),
        ("skills/brief/evals/files/fixture/notes.md", "n"),
    ]);
    assert_no_errors(&loaded.problems);
    let cases = &loaded.suites[0].cases;
    assert_eq!(cases[0].turns, ["[Step 3 of 5 done]\n\nGo on."]);
    assert_eq!(cases[0].judge.expectations, ["brief.md exists"]);
    assert_eq!(cases[0].timeout_secs, Some(900));
    assert_eq!(
        cases[0].fixtures[0].dest,
        PathBuf::from("files/fixture/notes.md")
    );
    assert_eq!(cases[1].turns, ["Start."]);
    let w = warnings(&loaded.problems);
    assert_eq!(
        w.iter()
            .filter(|(c, at_, _)| *c == "nothing-to-grade" && *at_ == at(text, "[]}"))
            .count(),
        1,
        "{w:#?}"
    );
}

#[test]
fn a_bare_list_of_cases_loads_and_a_missing_fixture_fails_only_its_case() {
    // The current runner fails a case whose fixture is not found, not the file.
    let text = r#"[
  {"id": "ok", "input": "a", "rubric": ["r"]},
  {"id": "gone", "input": "b", "rubric": ["r"], "files": ["files/nowhere.md"]}
]"#;
    let (loaded, _d) = load_project(&[("skills/brief/evals/cases.json", text)]);
    assert_no_errors(&loaded.problems);
    let cases = &loaded.suites[0].cases;
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].unrunnable, None);
    let why = cases[1].unrunnable.as_deref().unwrap();
    assert!(why.contains("files/nowhere.md"), "{why}");
    assert!(
        warnings(&loaded.problems)
            .iter()
            .any(|(c, at_, _)| *c == "missing-fixture" && *at_ == at(text, r#""files/nowhere.md""#))
    );
}

#[test]
fn ids_are_unique_across_a_folders_evals_and_cases() {
    let evals = r#"{"evals": [{"id": "E1", "prompt": "p", "expectations": ["e"]}]}"#;
    let cases = r#"{"cases": [{"id": "E1", "input": "i", "rubric": ["r"]}]}"#;
    let (loaded, _d) = load_project(&[
        ("skills/brief/evals/evals.json", evals),
        ("skills/brief/evals/cases.json", cases),
    ]);
    let e = errors(&loaded.problems);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].0, "duplicate-id");
    assert_eq!(e[0].1, at(cases, r#""E1""#));
    assert!(loaded.suites.is_empty());
}

#[test]
fn a_trigger_entry_with_an_extra_key_loads_with_a_warning() {
    let text = r#"[{"query": "Write a brief", "should_trigger": true, "note": "core"}]"#;
    let (loaded, _d) = load_project(&[("skills/brief/evals/triggers.json", text)]);
    assert_no_errors(&loaded.problems);
    assert_eq!(loaded.suites[0].triggers.len(), 1);
    assert!(
        warnings(&loaded.problems)
            .iter()
            .any(|(c, at_, _)| *c == "ignored-key" && *at_ == at(text, r#""note""#))
    );
}

/// agentskills.io's training set and, beside it, its validation set.
const TRAIN: &str = r#"[
  {"query": "draft a product brief", "should_trigger": true},
  {"query": "what is the capital of Australia", "should_trigger": false}
]"#;

#[test]
fn train_queries_are_the_trigger_set_and_validation_queries_its_holdout() {
    let validation = r#"[
  {"query": "turn my notes into a brief", "should_trigger": true},
  {"query": "fix the typo in README.md", "should_trigger": false}
]"#;
    let (loaded, _d) = load_project(&[
        ("skills/brief/evals/train_queries.json", TRAIN),
        ("skills/brief/evals/validation_queries.json", validation),
    ]);
    assert_no_errors(&loaded.problems);
    assert!(loaded.problems.is_empty(), "{:#?}", loaded.problems);
    let t = &loaded.suites[0].triggers;
    let seen: Vec<(&str, bool)> = t.iter().map(|t| (t.id.as_str(), t.holdout)).collect();
    assert_eq!(
        seen,
        [
            ("trigger-1", false),
            ("trigger-2", false),
            ("validation-1", true),
            ("validation-2", true)
        ]
    );
    assert!(t[2].location.file.ends_with("validation_queries.json"));
    assert_eq!(t[3].location.line, 3);
}

#[test]
fn a_validation_query_also_in_training_is_an_error_at_its_place() {
    let validation = r#"[
  {"query": "turn my notes into a brief", "should_trigger": true},
  {"query": "what is the capital of Australia", "should_trigger": false}
]"#;
    let (loaded, _d) = load_project(&[
        ("skills/brief/evals/train_queries.json", TRAIN),
        ("skills/brief/evals/validation_queries.json", validation),
    ]);
    let e = errors(&loaded.problems);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].0, "holdout-overlap");
    assert_eq!(e[0].1, at(validation, r#""what is"#));
    assert_eq!(e[0].2, "[1].query");
    assert!(e[0].3.contains("train_queries.json line 3"), "{e:#?}");
    assert!(loaded.suites.is_empty());
}

#[test]
fn a_validation_set_without_its_training_set_is_named_not_read() {
    // Beside another trigger set, or alone: said, never read as a holdout of something else.
    for files in [
        vec![
            ("skills/brief/evals/triggers.json", TRAIN),
            ("skills/brief/evals/validation_queries.json", TRAIN),
        ],
        vec![
            (
                "skills/brief/evals/evals.json",
                r#"{"evals": [{"id": 1, "prompt": "p", "expectations": ["e"]}]}"#,
            ),
            ("skills/brief/evals/validation_queries.json", TRAIN),
        ],
    ] {
        let (loaded, _d) = load_project(&files);
        assert_no_errors(&loaded.problems);
        assert!(loaded.suites[0].triggers.iter().all(|t| !t.holdout));
        let w = warnings(&loaded.problems);
        assert!(
            w.iter()
                .any(|(c, _, m)| *c == "unread-triggers"
                    && m.contains("holdout of train_queries.json")),
            "{w:#?}"
        );
    }
}
