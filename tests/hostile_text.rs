//! Text that tries to break what assay prints and writes: control characters and escape
//! sequences in suite file names, agent output, check values and setup-script stderr; raw
//! HTML and Markdown in ids and reasons. Every terminal line shows them escaped, `junit.xml`
//! stays well-formed XML 1.0, and `summary.md` renders them as text.

use crate::support;

use std::path::Path;
use std::process::Output;

use support::*;

/// A Skillet file name that, printed raw, erases the line and writes a green PASS over it.
const FORGED_PASS: &str = "x\u{1b}[2K\r\u{1b}[32mPASS\u{7}";

/// What an agent (or a setup script) writes: colours, a NUL, a backspace, a carriage return,
/// an erase-line, a window title, a C1 CSI, raw HTML and table-breaking pipes.
const HOSTILE: &str =
    r"out \033[31mRED\000\b\r\033[2K\033]0;PWNED\007 \302\233 <script>alert(1)</script> | cell";

fn hostile_project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let case = |value: &str, setup: Option<&str>| {
        format!(
            "timestamp: 2026-11-22T00:00:00Z\nname: n\nprompt: say it\nexpected: x\n{}assertions:\n  - type: contains\n    value: {value}\n",
            setup
                .map(|s| format!("setup: |\n  {s}\n"))
                .unwrap_or_default()
        )
    };
    let forged = format!("evals/n/{FORGED_PASS}.yaml");
    let html = "evals/n/<img src=x onerror=alert(1)>.yaml";
    let setup = case("out", Some(&format!("printf '{HOSTILE}\\n' >&2; exit 3")));
    write_tree(
        d.path(),
        &[
            (
                "assay.toml",
                "[run]\nharness = \"command\"\n[harness.command]\ncommand = [\"sh\", \"agent.sh\"]\n",
            ),
            ("agent.sh", &format!("printf '{HOSTILE}\\n'\n")),
            // Fails: the output never says this; its message quotes the value.
            (&forged, &case("\"never <b>bold</b> | `x` \\e[2K\"", None)),
            (html, &case("never", None)),
            ("evals/n/setup.yaml", &setup),
        ],
    );
    d
}

/// No byte of `o`'s stdout or stderr is a control character but newline or tab, nor a C1
/// control (U+0080–U+009F).
fn assert_printable(what: &str, o: &Output) {
    for (stream, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        let bad: Vec<char> = text
            .chars()
            .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
            .collect();
        assert!(
            bad.is_empty(),
            "{what}: {stream} holds {bad:?}:\n{}",
            text.escape_debug()
        );
    }
}

/// Runs assay with no judge: these suites' judged items are simply not graded.
fn run(dir: &Path, args: &[&str]) -> Output {
    assay_env(dir, args, &[("ASSAY_JUDGE", "none".into())])
}

#[test]
fn no_control_character_reaches_the_terminal() {
    let d = hostile_project();
    let p = d.path();
    let out = run(
        p,
        &[
            "run",
            "--trust",
            "--output-dir",
            "out",
            "--reporter",
            "junit,markdown,html,json",
            "-j",
            "1",
        ],
    );
    // A setup script failed (its case is skipped, as Skillet does), and two cases failed.
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    assert_printable("assay run", &out);
    let said = stdout(&out);
    // The forged file name is shown escaped on its FAIL line, never as a PASS.
    assert!(
        said.contains("FAIL       skillet:n/x\\u{1b}[2K\\u{d}\\u{1b}[32mPASS\\u{7}"),
        "{said}"
    );
    assert!(said.contains("setup failed"), "{said}");

    for args in [
        vec!["report", "out"],
        vec!["report", "out", "--format", "junit"],
        vec!["report", "out", "--format", "html"],
        vec!["report", "out", "--format", "json"],
        vec!["report", "out", "--format", "uaaps"],
        vec!["report", "diff", "out", "out"],
        vec!["report", "diff", "out", "out", "--json"],
        vec!["list", "."],
        vec!["list", ".", "--json"],
        vec!["validate", "."],
        vec!["validate", ".", "--format", "json"],
        vec!["grade", "out"],
        vec!["grade", "out", "--json"],
    ] {
        let o = run(p, &args);
        assert!(matches!(code(&o), 0 | 1 | 3), "{args:?}: {}", stderr(&o));
        assert_printable(&args.join(" "), &o);
    }

    // A captured output graded against the spec: its evidence quotes the output.
    std::fs::write(p.join("said.txt"), "\u{1b}[2K\rPASS \u{9b}31m").unwrap();
    let spec = format!("evals/n/{FORGED_PASS}.yaml");
    let o = run(p, &["grade", &spec, "--output", "said.txt"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_printable("assay grade --output", &o);
}

#[test]
fn diagnostics_naming_a_hostile_file_are_escaped() {
    let d = tempfile::tempdir().unwrap();
    let bad = format!("evals/{FORGED_PASS}/001.yaml");
    write_tree(
        d.path(),
        &[(
            &bad,
            // The hostile unknown key is a warning (Skillet ignores unknown keys); the
            // unsupported schema version makes it an error that stops everything.
            "timestamp: 2026-11-22T00:00:00Z\nname: n\nprompt: \"\u{1b}[2K\"\nexpected: x\nbogus\u{1b}[2K: 1\nschema_version: 7\n",
        )],
    );
    for args in [
        vec!["validate", "."],
        vec!["list", "."],
        vec!["run", "--output-dir", "out"],
    ] {
        let o = run(d.path(), &args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert_printable(&args.join(" "), &o);
        assert!(stderr(&o).contains("\\u{1b}[2K"), "{}", stderr(&o));
    }
}

#[test]
fn junit_stays_well_formed_and_marks_what_it_replaced() {
    let d = hostile_project();
    let out = run(
        d.path(),
        &[
            "run",
            "--trust",
            "--output-dir",
            "out",
            "--reporter",
            "junit",
        ],
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let xml = std::fs::read_to_string(d.path().join("out/junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml)
        .unwrap_or_else(|e| panic!("junit.xml is not well-formed: {e}\n{}", xml.escape_debug()));
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 3, "{xml}");
    let names: Vec<&str> = cases.iter().filter_map(|c| c.attribute("name")).collect();
    assert!(
        names.contains(&"x\\u{1b}[2K \\u{1b}[32mPASS\\u{7}"),
        "the case id keeps a visible marker: {names:?}"
    );
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    assert_eq!(failures, 2, "{xml}");
    assert!(
        doc.descendants().any(|n| n.has_tag_name("skipped")
            && n.attribute("message")
                .is_some_and(|m| m.contains("\\u{1b}[31mRED\\u{0}\\u{8}"))),
        "the setup script's stderr, marked: {xml}"
    );
    // `assay report` prints the same document.
    let again = stdout(&run(d.path(), &["report", "out", "--format", "junit"]));
    assert_eq!(again, xml);
}

#[test]
fn markdown_shows_html_and_markup_as_text() {
    let d = hostile_project();
    let out = run(
        d.path(),
        &[
            "run",
            "--trust",
            "--output-dir",
            "out",
            "--reporter",
            "markdown",
        ],
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let md = std::fs::read_to_string(d.path().join("out/summary.md")).unwrap();
    assert!(
        !md.chars().any(|c| c.is_control() && c != '\n'),
        "{}",
        md.escape_debug()
    );
    // Read back by a CommonMark parser (GitHub's tables on): no HTML, no link, image,
    // emphasis or strikethrough came from the text, and every row of the case-run table
    // kept its five cells.
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let (mut cells, mut rows, mut shown) = (Vec::new(), 0, String::new());
    for event in Parser::new_ext(&md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Html(h) | Event::InlineHtml(h) => panic!("raw HTML {h:?} in {md}"),
            Event::Start(
                t @ (Tag::Link { .. } | Tag::Image { .. } | Tag::Emphasis | Tag::Strikethrough),
            ) => panic!("markup {t:?} in {md}"),
            Event::Start(Tag::TableRow) => {
                rows += 1;
                cells.push(0);
            }
            Event::Start(Tag::TableCell) => {
                if let Some(n) = cells.last_mut() {
                    *n += 1;
                }
            }
            Event::Text(t) | Event::Code(t) => shown.push_str(&t),
            _ => {}
        }
    }
    assert_eq!(rows, 3, "{md}");
    assert_eq!(cells, [5, 5, 5], "{md}");
    // What a reader sees is the text itself.
    for text in [
        "<script>alert(1)</script> | cell",
        "skillet:n/<img src=x onerror=alert(1)>",
        "\"never <b>bold</b> | `x` \\u{1b}[2K\"",
    ] {
        assert!(shown.contains(text), "{text} not in {shown}");
    }
}
