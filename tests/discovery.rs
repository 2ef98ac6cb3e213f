//! BMAD's discovery order, and `--skill` / `--evals`, as a user runs them.

use crate::support;

use serde_json::Value;
use support::*;

const EVALS: &str = r#"{"evals": [{"id": "A1", "prompt": "p", "expectations": ["e"]}]}"#;
const SKILL: &str = "---\nname: brief\ndescription: Writes briefs.\n---\nbody\n";

fn suites(dir: &std::path::Path, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["list", "--json"];
    all.extend_from_slice(args);
    let out = assay(dir, &all);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    serde_json::from_str::<Value>(&stdout(&out))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn skill_evals_are_found_in_the_runners_order() {
    // Each layout puts evals in one more place; the earliest place in BMAD's order must win.
    let layouts: &[(&[&str], &str)] = &[
        (&["skills/brief/evals"], "skills/brief/evals/evals.json"),
        (&["evals/brief"], "evals/brief/evals.json"),
        (&["evals/group/brief"], "evals/group/brief/evals.json"),
        (
            &["skills/brief/evals", "evals/brief"],
            "skills/brief/evals/evals.json",
        ),
        (
            &["evals/brief", "evals/group/brief"],
            "evals/brief/evals.json",
        ),
    ];
    for (dirs, winner) in layouts {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("proj");
        let mut files = vec![
            ("proj/assay.toml".to_string(), ""),
            ("proj/skills/brief/SKILL.md".to_string(), SKILL),
        ];
        for dir in *dirs {
            files.push((format!("proj/{dir}/evals.json"), EVALS));
        }
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        write_tree(d.path(), &refs);
        let s = suites(&root, &["--skill", "skills/brief"]);
        assert_eq!(s.len(), 1, "{dirs:?}");
        assert_eq!(s[0]["source"], *winner, "{dirs:?}");
        assert_eq!(s[0]["skill"]["name"], "brief");
        assert_eq!(s[0]["skill"]["description"], "Writes briefs.");
    }
}

#[test]
fn skill_path_sibling_layout_is_found() {
    // <skill-path>/../../evals/<skill-name>/
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("src/skills/brief/SKILL.md", SKILL),
            ("src/evals/brief/evals.json", EVALS),
            (
                "src/evals/brief/triggers.json",
                r#"[{"query": "q", "should_trigger": true}]"#,
            ),
        ],
    );
    let s = suites(d.path(), &["--skill", "src/skills/brief"]);
    assert_eq!(s[0]["source"], "src/evals/brief/evals.json");
    assert_eq!(s[0]["triggers"].as_array().unwrap().len(), 1);
    // Scanning the whole project finds the same pairing.
    let s = suites(d.path(), &[]);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["skill"]["name"], "brief");
}

#[test]
fn explicit_evals_path_comes_first() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("skills/brief/SKILL.md", SKILL),
            ("skills/brief/evals/evals.json", EVALS),
            (
                "elsewhere/triggers.json",
                r#"[{"query": "q", "should_trigger": false}]"#,
            ),
        ],
    );
    let s = suites(
        d.path(),
        &[
            "--skill",
            "skills/brief",
            "--evals",
            "elsewhere/triggers.json",
        ],
    );
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["source"], "elsewhere/triggers.json");
    assert_eq!(s[0]["cases"].as_array().unwrap().len(), 0);
    assert_eq!(s[0]["triggers"][0]["should_trigger"], false);

    // A file that is not there is an error naming it (any name is taken; see below).
    let out = assay(d.path(), &["list", "--evals", "elsewhere/notes.json"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("elsewhere/notes.json") && stderr(&out).contains("no such file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn evals_takes_any_json_file_in_either_bmad_shape() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("skills/brief/SKILL.md", SKILL),
            ("ci/brief-smoke.json", EVALS),
            (
                "ci/brief-queries.json",
                r#"[{"query": "q", "should_trigger": true}]"#,
            ),
            (
                "ci/bare-list.json",
                r#"[{"id": "B1", "prompt": "p", "expectations": ["e"]}]"#,
            ),
            (
                "ci/broken.json",
                r#"{"evals": [{"id": "A1", "promt": "p", "expectations": []}]}"#,
            ),
        ],
    );
    // Artifact evals from a file of any name, with the skill from --skill.
    let s = suites(
        d.path(),
        &["--skill", "skills/brief", "--evals", "ci/brief-smoke.json"],
    );
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["source"], "ci/brief-smoke.json");
    assert_eq!(s[0]["skill"]["name"], "brief");
    assert_eq!(s[0]["cases"][0]["id"], "A1");
    // Trigger evals, told apart by their shape; without --skill the file's stem names it.
    let s = suites(d.path(), &["--evals", "ci/brief-queries.json"]);
    assert_eq!(s[0]["id"], "bmad:brief-queries");
    assert_eq!(s[0]["cases"].as_array().unwrap().len(), 0);
    assert_eq!(s[0]["triggers"][0]["should_trigger"], true);
    // The runner's bare list of evals.
    let s = suites(d.path(), &["--evals", "ci/bare-list.json"]);
    assert_eq!(s[0]["cases"][0]["id"], "B1");
    // Loaded as strictly as evals.json: a typo is an error naming the file and key.
    let out = assay(d.path(), &["validate", "--evals", "ci/broken.json"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        all.contains("ci/broken.json") && all.contains("promt"),
        "{all}"
    );
}

#[test]
fn skill_without_evals_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[("assay.toml", ""), ("skills/brief/SKILL.md", SKILL)],
    );
    let out = assay(d.path(), &["validate", "--skill", "skills/brief"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no evals found for skill `brief`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn clauditor_spec_beside_a_skill_dir_is_found() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("skills/brief/SKILL.md", SKILL),
            (
                "skills/brief/SKILL.eval.json",
                r#"{"assertions": [{"id": "a", "type": "min_length", "length": 10}]}"#,
            ),
        ],
    );
    let s = suites(d.path(), &[]);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["id"], "clauditor:brief");
    assert_eq!(s[0]["skill"]["kind"], "dir");
    assert_eq!(s[0]["cases"][0]["turns"][0], "/brief");
}

#[test]
fn a_clauditor_spec_in_the_skills_assets_folder_pairs_with_the_skill() {
    // clauditor's own repository keeps specs at `<skill>/assets/<name>.eval.json` and runs them
    // with `clauditor grade <skill>/SKILL.md --eval <that spec>`.
    let d = tempfile::tempdir().unwrap();
    let spec = r#"{"input_files": ["sample.txt"], "assertions": [{"id": "a", "type": "min_length", "length": 10}]}"#;
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("skills/brief/SKILL.md", SKILL),
            ("skills/brief/assets/brief.eval.json", spec),
            ("skills/brief/assets/sample.txt", "some input"),
        ],
    );
    let out = assay(d.path(), &["validate"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("skill-not-found") && !stderr(&out).contains("no skill beside"),
        "{}",
        stderr(&out)
    );
    let found = suites(d.path(), &[]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["id"], "clauditor:brief");
    assert_eq!(found[0]["skill"]["name"], "brief");
    assert_eq!(found[0]["cases"][0]["turns"][0], "/brief");

    // `--skill` finds it too, beside (not instead of) a `SKILL.eval.json`.
    let by_flag = suites(d.path(), &["--skill", "skills/brief"]);
    assert_eq!(by_flag.len(), 1, "{by_flag:#?}");
    assert_eq!(by_flag[0]["source"], "skills/brief/assets/brief.eval.json");
    write_tree(
        d.path(),
        &[(
            "skills/brief/SKILL.eval.json",
            r#"{"assertions": [{"id": "b", "type": "min_length", "length": 5}]}"#,
        )],
    );
    let both = suites(d.path(), &["--skill", "skills/brief"]);
    let sources: Vec<_> = both.iter().map(|s| s["source"].as_str().unwrap()).collect();
    assert_eq!(
        sources,
        [
            "skills/brief/SKILL.eval.json",
            "skills/brief/assets/brief.eval.json"
        ]
    );
}

#[test]
fn a_clauditor_spec_in_an_assets_folder_without_a_skill_still_warns() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "tools/assets/brief.eval.json",
                r#"{"assertions": [{"id": "a", "type": "min_length", "length": 10}]}"#,
            ),
        ],
    );
    let out = assay(d.path(), &["validate"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no skill beside this spec"),
        "{}",
        stderr(&out)
    );
}

/// A Skillet eval named `name` (its category; Skillet does not group by it).
fn skillet_eval(name: &str) -> String {
    format!("timestamp: 2025-01-15T10:30:00Z\nname: {name}\nprompt: p\nexpected: e\n")
}

#[test]
fn a_skillet_eval_set_is_its_folder_with_every_subfolder_as_skillet_loads_it() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("evals/add/001.yaml", &skillet_eval("add")),
            ("evals/add/002.yaml", &skillet_eval("add-multiturn")),
            ("evals/add/folders/001.yaml", &skillet_eval("suggest")),
            ("evals/add/folders/002.yaml", &skillet_eval("suggest-more")),
            ("sets/mine/001.yaml", &skillet_eval("a")),
            ("sets/mine/deep/001.yaml", &skillet_eval("b")),
        ],
    );
    let cases = |s: &Value| -> Vec<String> {
        s["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect()
    };
    for (dir, arg) in [(".", "evals/add"), ("evals/add", "."), (".", "evals")] {
        let out = assay(&d.path().join(dir), &["validate", arg]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_eq!(stderr(&out), "", "no warnings from {dir} {arg}");
        let found = suites(&d.path().join(dir), &[arg]);
        assert_eq!(found.len(), 1, "{dir} {arg}: {found:#?}");
        assert_eq!(found[0]["id"], "skillet:add");
        assert_eq!(
            cases(&found[0]),
            ["001", "002", "folders/001", "folders/002"]
        );
    }
    // The folder named is the set, as `skillet eval <dir>` loads it.
    let found = suites(d.path(), &["sets/mine"]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["id"], "skillet:mine");
    assert_eq!(cases(&found[0]), ["001", "deep/001"]);
    let found = suites(d.path(), &["evals/add/folders"]);
    assert_eq!(found[0]["id"], "skillet:folders");
    assert_eq!(cases(&found[0]), ["001", "002"]);
}

#[test]
fn a_root_evals_file_pairs_with_the_skill_it_names_whatever_the_checkout_is_called() {
    // skill-creator's shape at the repository root: `evals/evals.json` beside `skills/<name>/`.
    // Paired by its `skill_name`, not by the folder the repository was cloned into.
    for checkout in ["loop-kit", "workspace"] {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join(checkout);
        let evals = r#"{"skill_name": "looper", "evals": [{"id": 1, "prompt": "p", "expectations": ["e"]}]}"#;
        write_tree(
            &root,
            &[
                ("assay.toml", ""),
                (
                    "skills/looper/SKILL.md",
                    "---\nname: looper\ndescription: Loops.\n---\n",
                ),
                (
                    "skills/other/SKILL.md",
                    "---\nname: other\ndescription: Other.\n---\n",
                ),
                ("evals/evals.json", evals),
            ],
        );
        let s = suites(&root, &[]);
        assert_eq!(s.len(), 1, "{checkout}: {s:#?}");
        assert_eq!(s[0]["skill"]["name"], "looper", "{checkout}");
        assert_eq!(s[0]["id"], "bmad:looper", "{checkout}");
    }
}

#[test]
fn bmad_cases_and_skill_creator_trigger_files_are_found() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("skills/brief/SKILL.md", SKILL),
            (
                "skills/brief/evals/cases.json",
                r#"{"cases": [{"id": "E1", "input": "i", "rubric": ["r"]}]}"#,
            ),
            (
                "skills/brief/evals/trigger-evals.json",
                r#"[{"query": "q", "should_trigger": true}]"#,
            ),
            (
                "skills/memo/SKILL.md",
                "---\nname: memo\ndescription: Memos.\n---\n",
            ),
            (
                "skills/memo/evals/description-evals.json",
                r#"[{"query": "q", "should_trigger": false}]"#,
            ),
            // Another tool's cases.json: not BMAD's shape, left alone.
            ("tests/cases.json", r#"{"name": "x", "steps": []}"#),
        ],
    );
    let s = suites(d.path(), &[]);
    assert_eq!(s.len(), 2, "{s:#?}");
    assert_eq!(s[0]["source"], "skills/brief/evals/cases.json");
    assert_eq!(s[0]["cases"].as_array().unwrap().len(), 1);
    assert_eq!(s[0]["triggers"].as_array().unwrap().len(), 1);
    assert_eq!(s[1]["source"], "skills/memo/evals/description-evals.json");
    assert_eq!(s[1]["triggers"][0]["should_trigger"], false);
    // `--evals` takes a cases file by its name.
    let s = suites(d.path(), &["--evals", "skills/brief/evals/cases.json"]);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["cases"][0]["id"], "E1");
}

#[test]
fn an_eval_folder_inside_a_skill_or_a_plugin_pairs_with_that_skill() {
    let d = tempfile::tempdir().unwrap();
    let evals = |name: &str| {
        format!(
            r#"{{"skill_name": "{name}", "evals": [{{"id": 1, "prompt": "p", "expectations": ["e"]}}]}}"#
        )
    };
    let plugin = evals("refactor");
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            // `<skill>/tests/evals.json`, a bare list: the skill whose folder holds it.
            (
                "skills/pith/SKILL.md",
                "---\nname: pith\ndescription: Compresses.\n---\n",
            ),
            (
                "skills/pith/tests/evals.json",
                r#"[{"id": "TC01", "prompt": "p", "expectations": ["e"]}]"#,
            ),
            // A plugin's evals beside the plugin's skills: found by skill_name from the folder up.
            (
                "plugins/refactor/skills/refactor/SKILL.md",
                "---\nname: refactor\ndescription: Refactors.\n---\n",
            ),
            ("plugins/refactor/evals/evals.json", &plugin),
        ],
    );
    let s = suites(d.path(), &[]);
    let pairs: Vec<(String, String)> = s
        .iter()
        .map(|s| {
            (
                s["source"].as_str().unwrap().to_string(),
                s["skill"]["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            (
                "plugins/refactor/evals/evals.json".to_string(),
                "refactor".to_string()
            ),
            (
                "skills/pith/tests/evals.json".to_string(),
                "pith".to_string()
            ),
        ],
        "{s:#?}"
    );
}

#[test]
fn a_skill_name_that_is_a_path_pairs_with_nothing() {
    // `skill_name` comes from the suite file: a name that climbs out of `skills/` must not
    // install whatever SKILL.md it reaches.
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            (
                "secret/SKILL.md",
                "---\nname: secret\ndescription: Not the skill.\n---\n",
            ),
            // `skills/` exists, so `skills/../secret` would resolve.
            (
                "skills/other/SKILL.md",
                "---\nname: other\ndescription: Other.\n---\n",
            ),
            (
                "evals/evals.json",
                r#"{"skill_name": "../secret", "evals": [{"id": 1, "prompt": "p", "expectations": ["e"]}]}"#,
            ),
        ],
    );
    let out = assay(d.path(), &["list", "--json"]);
    let listed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let suite = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == "evals/evals.json")
        .unwrap_or_else(|| panic!("{listed:#}"));
    assert!(suite["skill"].is_null(), "{suite:#}");
}

/// skill-creator's trigger set as repositories keep it: `evals/trigger-eval.json`, an object
/// whose `queries` holds the `{query, should_trigger}` list.
const TRIGGER_EVAL: &str = r#"{"skill_name": "brief", "queries": [
  {"query": "Write me a brief for the launch", "should_trigger": true},
  {"query": "What is the capital of France?", "should_trigger": false}
]}"#;

#[test]
fn a_trigger_eval_object_is_read_and_every_trigger_file_not_read_is_named() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("skills/brief/SKILL.md", SKILL),
            ("skills/brief/evals/evals.json", EVALS),
            ("skills/brief/evals/trigger-eval.json", TRIGGER_EVAL),
            // A second trigger set under a name no runner reads.
            (
                "skills/brief/evals/old-triggers.json",
                r#"[{"query": "q", "should_trigger": true}]"#,
            ),
        ],
    );
    let out = assay(d.path(), &["list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(s[0]["cases"].as_array().unwrap().len(), 1, "{s:#?}");
    let triggers = s[0]["triggers"].as_array().unwrap();
    assert_eq!(triggers.len(), 2, "{s:#?}");
    assert_eq!(triggers[1]["should_trigger"], false);
    // The file left out is named, with why and the shape read.
    let err = stderr(&out);
    assert!(
        err.contains("old-triggers.json") && err.contains("not read"),
        "{err}"
    );
    assert!(
        err.contains("trigger-eval.json") && err.contains("`queries`"),
        "{err}"
    );
    // `--evals` takes the object as a trigger set too, never as evals missing `evals`.
    let s = suites(
        d.path(),
        &["--evals", "skills/brief/evals/trigger-eval.json"],
    );
    assert_eq!(s[0]["triggers"].as_array().unwrap().len(), 2, "{s:#?}");
    let s = suites(
        d.path(),
        &[
            "--skill",
            "skills/brief",
            "--evals",
            "skills/brief/evals/old-triggers.json",
        ],
    );
    assert_eq!(s[0]["triggers"].as_array().unwrap().len(), 1, "{s:#?}");
}

#[test]
fn of_two_trigger_files_the_one_not_read_is_named_with_the_one_read() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("skills/brief/SKILL.md", SKILL),
            (
                "skills/brief/evals/triggers.json",
                r#"[{"query": "q", "should_trigger": true}]"#,
            ),
            ("skills/brief/evals/trigger-eval.json", TRIGGER_EVAL),
        ],
    );
    let out = assay(d.path(), &["list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(s[0]["triggers"].as_array().unwrap().len(), 1, "{s:#?}");
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("trigger-eval.json"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("not read") && line.contains("triggers.json"),
        "{err}"
    );
}

#[test]
fn a_trigger_eval_at_the_root_pairs_with_the_skill_it_names() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            ("assay.toml", ""),
            ("skills/brief/SKILL.md", SKILL),
            ("skills/brief/evals/evals.json", EVALS),
            ("evals/trigger-eval.json", TRIGGER_EVAL),
        ],
    );
    let out = assay(d.path(), &["list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let triggers = s
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == "evals/trigger-eval.json")
        .unwrap_or_else(|| panic!("{s:#}"));
    assert_eq!(triggers["skill"]["name"], "brief", "{triggers:#}");
    assert_eq!(triggers["id"], "bmad:brief", "{triggers:#}");
    assert!(
        !stderr(&out).contains("skill-name-mismatch"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn benchflow_evals_json_is_named_and_never_read_as_skill_creators() {
    let d = tempfile::tempdir().unwrap();
    write_tree(
        d.path(),
        &[
            (
                "myskill/SKILL.md",
                "---\nname: myskill\ndescription: Adds.\n---\nAdd.\n",
            ),
            (
                "myskill/evals/evals.json",
                r#"{"cases": [{"id": "c1", "question": "What is 2+2?", "ground_truth": "4", "expected_behavior": "answers 4"}]}"#,
            ),
        ],
    );
    let out = assay(d.path(), &["validate", "."]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("this evals.json is BenchFlow's"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("missing required field"),
        "{}",
        stderr(&out)
    );
}
