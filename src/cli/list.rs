//! `assay list`: the suites, their cases and trigger cases.

use super::{ListArgs, load, print_problems};
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::suite::{Case, Suite};
use crate::text::printable;

pub fn run(ctx: &LoadCtx, args: &ListArgs) -> Exit {
    let loaded = load(ctx, &args.selection);
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) {
        // A script reading `--json` gets JSON either way: the problems as `validate` shows them.
        if args.json {
            super::print_json(&serde_json::json!({
                "ok": false,
                "problems": crate::diag::render_json(&loaded.problems),
            }));
        }
        return Exit::BadInput;
    }
    if args.json {
        super::print_json(&loaded.suites);
    } else {
        print!("{}", printable(&render_table(&loaded.suites)));
    }
    Exit::Success
}

/// A table: one row per case and trigger case, grouped under their suite.
pub fn render_table(suites: &[Suite]) -> String {
    let mut rows: Vec<[String; 4]> =
        vec![["SUITE".into(), "KIND".into(), "ID".into(), "WHAT".into()]];
    for s in suites {
        for c in &s.cases {
            rows.push([s.id.clone(), "case".into(), c.id.clone(), describe_case(c)]);
        }
        for t in &s.triggers {
            let what = format!(
                "{} {}",
                if t.should_trigger {
                    "fires on:"
                } else {
                    "stays quiet on:"
                },
                one_line(&t.query, 60)
            );
            rows.push([s.id.clone(), "trigger".into(), t.id.clone(), what]);
        }
        if s.cases.is_empty() && s.triggers.is_empty() {
            rows.push([s.id.clone(), "-".into(), "-".into(), "(no cases)".into()]);
        }
    }
    let w: Vec<usize> = (0..3)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        out.push_str(&format!(
            "{:<w0$}  {:<w1$}  {:<w2$}  {}\n",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2]
        ));
    }
    out
}

fn describe_case(c: &Case) -> String {
    let what = match (&c.command, c.turns.as_slice()) {
        (Some(cmd), _) => {
            let shown = match cmd.argv.as_slice() {
                [sh, c, script, ..] if sh == "sh" && c == "-c" => script.clone(),
                argv => argv.join(" "),
            };
            format!("$ {}", one_line(&shown, 50))
        }
        (None, [one]) => one_line(one, 50),
        (None, turns) => format!(
            "{} turns: {}",
            turns.len(),
            one_line(turns.first().map(String::as_str).unwrap_or(""), 40)
        ),
    };
    let mut graded = Vec::new();
    if !c.checks.is_empty() {
        graded.push(format!(
            "{} check{}",
            c.checks.len(),
            if c.checks.len() == 1 { "" } else { "s" }
        ));
    }
    if !c.judge.expectations.is_empty() {
        graded.push(format!("{} expectations", c.judge.expectations.len()));
    }
    if !c.judge.rubric.is_empty() {
        graded.push(format!("{} criteria", c.judge.rubric.len()));
    }
    if c.judge.criteria.is_some() {
        graded.push("judge".into());
    }
    if graded.is_empty() {
        what
    } else {
        format!("{what} [{}]", graded.join(", "))
    }
}

/// The first line of `s`, cut to `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    if line.chars().count() > max || s.trim().lines().count() > 1 {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}
