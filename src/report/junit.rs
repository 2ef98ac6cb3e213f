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
            let name = if c.run > 1
                || r.case_runs
                    .iter()
                    .any(|o| o.suite == c.suite && o.case == c.case && o.run > 1)
            {
                format!("{} (run {})", c.case, c.run)
            } else {
                c.case.clone()
            };
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
