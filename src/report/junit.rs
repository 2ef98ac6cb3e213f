//! JUnit XML: one `<testsuite>` per suite, one `<testcase>` per case-run. Failures carry the
//! reason as their message and every failed check in their body; errors are `<error>`;
//! skipped and not-graded case-runs are `<skipped>` (with why), so CI parsers never count them
//! as passed.

use std::collections::BTreeMap;

use quick_xml::escape::escape;

use super::model::{CaseRun, Outcome, Report};

fn secs(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

fn attr(s: &str) -> String {
    // Attribute values: escaped, and on one line.
    escape(s.replace(['\n', '\r'], " ").as_str()).into_owned()
}

fn failed_checks(c: &CaseRun) -> String {
    let mut out = String::new();
    for check in c.checks.iter().filter(|k| k["passed"] == false) {
        out.push_str(&format!(
            "✗ {} ({}): {}\n",
            check["id"].as_str().unwrap_or(""),
            check["kind"].as_str().unwrap_or(""),
            check["message"].as_str().unwrap_or("")
        ));
        if let Some(e) = check["evidence"].as_str() {
            out.push_str(&format!("    evidence: {e}\n"));
        }
    }
    out
}

/// One testcase for a case's runs, a trigger query's runs, or a baseline's runs.
fn grouped(r: &Report, c: &CaseRun, runs: &[&CaseRun]) -> String {
    let st = &r.statistics;
    let time = secs(runs.iter().map(|c| c.duration_ms).sum());
    let detail: String = runs
        .iter()
        .map(|o| {
            format!(
                "run {}: {}{} ({})\n",
                o.run,
                o.outcome.word(),
                o.reason
                    .as_deref()
                    .map(|w| format!(": {w}"))
                    .unwrap_or_default(),
                o.dir.display()
            )
        })
        .collect();
    let (name, failure) = if c.variant == "baseline" {
        // The baseline is expected to do worse: what it did is information, not a failure.
        (format!("{} (baseline)", c.case), None)
    } else if c.kind == "trigger" {
        let t = st
            .triggers
            .iter()
            .find(|t| t.suite == c.suite && t.id == c.case);
        (
            format!("{} (trigger)", c.case),
            t.filter(|t| !t.passed).map(|t| {
                format!(
                    "fired in {}/{} runs; should {}trigger (threshold {})",
                    t.fired,
                    t.runs,
                    if t.should_trigger { "" } else { "not " },
                    t.threshold
                )
            }),
        )
    } else {
        let cs = st
            .cases
            .iter()
            .find(|s| s.suite == c.suite && s.case == c.case);
        (
            format!("{} ({} runs)", c.case, runs.len()),
            cs.filter(|s| s.verdict == "fail")
                .map(|s| s.reason.clone().unwrap_or_default()),
        )
    };
    let mut x = format!(
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{time}\">\n",
        attr(&name),
        attr(&c.suite)
    );
    if let Some(f) = failure {
        x.push_str(&format!(
            "      <failure message=\"{}\" type=\"failed\"/>\n",
            attr(&f)
        ));
    }
    x.push_str(&format!(
        "      <system-out>{}</system-out>\n    </testcase>\n",
        escape(&detail)
    ));
    x
}

pub fn render(r: &Report) -> String {
    let mut by_suite: BTreeMap<&str, Vec<&CaseRun>> = BTreeMap::new();
    for c in &r.case_runs {
        by_suite.entry(&c.suite).or_default().push(c);
    }
    let s = &r.summary;
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x.push_str(&format!(
        "<testsuites name=\"assay\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">\n",
        s.total,
        s.failed,
        s.errors,
        s.skipped + s.not_graded,
        secs(s.duration_ms)
    ));
    for (suite, cases) in by_suite {
        let count = |o: Outcome| cases.iter().filter(|c| c.outcome == o).count();
        x.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">\n",
            attr(suite),
            cases.len(),
            count(Outcome::Failed),
            count(Outcome::Error),
            count(Outcome::Skipped) + count(Outcome::NotGraded),
            secs(cases.iter().map(|c| c.duration_ms).sum())
        ));
        for c in cases {
            // Repeated runs, trigger queries and baselines are judged over their runs: one
            // testcase each, with the verdict the statistics give (see `aggregate`).
            let group = |o: &&CaseRun| o.case == c.case && o.variant == c.variant;
            let runs: Vec<&CaseRun> = r
                .case_runs
                .iter()
                .filter(|o| o.suite == c.suite)
                .filter(group)
                .collect();
            if runs.len() > 1 || c.kind == "trigger" || c.variant == "baseline" {
                if runs[0].run == c.run {
                    x.push_str(&grouped(r, c, &runs));
                }
                continue;
            }
            let name = c.case.clone();
            x.push_str(&format!(
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
                attr(&name),
                attr(&c.suite),
                secs(c.duration_ms)
            ));
            let reason = c.reason.clone().unwrap_or_default();
            let body = match c.outcome {
                Outcome::Passed => None,
                Outcome::Failed => Some(format!(
                    "      <failure message=\"{}\" type=\"failed\">{}</failure>\n",
                    attr(&reason),
                    escape(failed_checks(c).as_str())
                )),
                Outcome::Error => Some(format!(
                    "      <error message=\"{}\" type=\"error\"/>\n",
                    attr(&reason)
                )),
                Outcome::Skipped => {
                    Some(format!("      <skipped message=\"{}\"/>\n", attr(&reason)))
                }
                Outcome::NotGraded => Some(format!(
                    "      <skipped message=\"not graded: {}\"/>\n",
                    attr(&reason)
                )),
            };
            match body {
                None => x.push_str("/>\n"),
                Some(b) => {
                    x.push_str(">\n");
                    x.push_str(&b);
                    x.push_str(&format!(
                        "      <system-out>folder: {}</system-out>\n",
                        escape(c.dir.display().to_string().as_str())
                    ));
                    x.push_str("    </testcase>\n");
                }
            }
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}
