//! Runs over time: the history lines of a finished run, `assay report trend` (per case, pass
//! rate and cost across the last runs, the direction, what to look at) and the comparability
//! guard shared with `assay report diff`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::rows::Row;
use crate::record::RunRecord;
use crate::record::history::{HistoryLine, SCHEMA};

/// The history lines of a run: one per suite, case, kind and variant.
pub fn lines(
    rows: &[Row],
    run: &RunRecord,
    run_dir: &str,
    skill_hashes: &BTreeMap<String, String>,
    suite_hashes: &BTreeMap<String, String>,
) -> Vec<HistoryLine> {
    let mut groups: BTreeMap<(String, String, bool, bool), Vec<&Row>> = BTreeMap::new();
    for r in rows {
        groups
            .entry((r.suite.clone(), r.case.clone(), r.trigger, r.baseline))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((suite, case, trigger, baseline), rs)| {
            use crate::record::Outcome;
            let graded: Vec<&&Row> = rs
                .iter()
                .filter(|r| {
                    matches!(
                        r.outcome,
                        Outcome::Passed | Outcome::Failed | Outcome::Error
                    )
                })
                .collect();
            let passed = graded
                .iter()
                .filter(|r| r.outcome == Outcome::Passed)
                .count() as u64;
            let n = graded.len() as u64;
            let costs: Vec<f64> = rs.iter().filter_map(|r| r.cost_usd).collect();
            let harness = rs.first().map(|r| r.harness.clone()).unwrap_or_default();
            HistoryLine {
                schema: SCHEMA.into(),
                run: run_dir.to_string(),
                at: run.started.clone().unwrap_or_default(),
                kind: if trigger { "trigger" } else { "case" }.into(),
                variant: if baseline { "baseline" } else { "skill" }.into(),
                runs: n,
                passed,
                pass_rate: (n > 0).then(|| passed as f64 / n as f64),
                cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
                tokens: rs.iter().map(|r| r.tokens).sum(),
                duration_ms_mean: (!rs.is_empty()).then(|| {
                    rs.iter().map(|r| r.duration_ms as f64).sum::<f64>() / rs.len() as f64
                }),
                agent_version: run.harnesses.get(&harness).cloned(),
                model: rs.first().and_then(|r| r.model.clone()),
                harness,
                skill_hash: skill_hashes.get(&suite).cloned(),
                suite_hash: suite_hashes.get(&suite).cloned(),
                suite,
                case,
            }
        })
        .collect()
}

/// What makes two runs comparable: the same harness, model and agent CLI version.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Fingerprint {
    pub harness: String,
    pub model: Option<String>,
    pub agent_version: Option<String>,
}

impl Fingerprint {
    pub fn of(l: &HistoryLine) -> Fingerprint {
        Fingerprint {
            harness: l.harness.clone(),
            model: l.model.clone(),
            agent_version: l.agent_version.clone(),
        }
    }
}

/// Why a set of runs cannot be compared as they are: each of harness, model and agent
/// version that differs, with its values; `None` when they agree.
pub fn incomparable(prints: &BTreeSet<Fingerprint>) -> Option<String> {
    let mut differs = Vec::new();
    let field =
        |f: fn(&Fingerprint) -> String| -> BTreeSet<String> { prints.iter().map(f).collect() };
    for (name, values) in [
        ("harness", field(|p| p.harness.clone())),
        (
            "model",
            field(|p| p.model.clone().unwrap_or_else(|| "(default)".into())),
        ),
        (
            "agent CLI version",
            field(|p| {
                p.agent_version
                    .clone()
                    .unwrap_or_else(|| "(unknown)".into())
            }),
        ),
    ] {
        if values.len() > 1 {
            differs.push(format!(
                "{name} ({})",
                values.into_iter().collect::<Vec<_>>().join(" vs ")
            ));
        }
    }
    (!differs.is_empty()).then(|| format!("the runs differ in {}", differs.join(", ")))
}

/// One case across runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseTrend {
    pub suite: String,
    pub case: String,
    /// Pass rate per run, oldest first (`None`: not in that run, or nothing graded).
    pub pass_rates: Vec<Option<f64>>,
    pub costs: Vec<Option<f64>>,
    /// `improving`, `worsening` or `steady`.
    pub direction: &'static str,
    /// What to look at: `regressed` (down from its best by a quarter or more in the latest run),
    /// `flaky` (between 0 and 100% in two or more runs), `skill changed` (its skill's files
    /// differ from the run before, and the pass rate moved).
    pub flags: Vec<&'static str>,
}

/// The trend report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trend {
    /// The runs compared, oldest first.
    pub runs: Vec<String>,
    pub cases: Vec<CaseTrend>,
    /// Lines that were not read (cut, or another schema).
    pub unreadable_lines: usize,
}

/// Per case (of the skill variant), pass rate and cost over the last `last` runs.
pub fn trend(lines: &[HistoryLine], last: usize) -> Trend {
    // Runs in the order they started (then by name), each once.
    let mut runs: Vec<(String, String)> = lines
        .iter()
        .map(|l| (l.at.clone(), l.run.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if runs.len() > last {
        runs.drain(..runs.len() - last);
    }
    let index: BTreeMap<&str, usize> = runs
        .iter()
        .enumerate()
        .map(|(i, (_, r))| (r.as_str(), i))
        .collect();
    let mut by_case: BTreeMap<(String, String), Vec<Option<&HistoryLine>>> = BTreeMap::new();
    for l in lines
        .iter()
        .filter(|l| l.kind == "case" && l.variant == "skill")
    {
        if let Some(&i) = index.get(l.run.as_str()) {
            let slot = by_case
                .entry((l.suite.clone(), l.case.clone()))
                .or_insert_with(|| vec![None; runs.len()]);
            slot[i] = Some(l);
        }
    }
    let cases = by_case
        .into_iter()
        .map(|((suite, case), per_run)| {
            // An edit of the eval breaks comparability: only the runs since the last edit are
            // compared (said, not averaged in).
            let since = eval_edit(&per_run);
            let pass_rates: Vec<Option<f64>> = per_run
                .iter()
                .enumerate()
                .map(|(i, l)| l.filter(|_| i >= since).and_then(|l| l.pass_rate))
                .collect();
            let costs: Vec<Option<f64>> =
                per_run.iter().map(|l| l.and_then(|l| l.cost_usd)).collect();
            let known: Vec<f64> = pass_rates.iter().flatten().copied().collect();
            let direction = match (known.first(), known.last()) {
                (Some(a), Some(b)) if known.len() > 1 && b > a => "improving",
                (Some(a), Some(b)) if known.len() > 1 && b < a => "worsening",
                _ => "steady",
            };
            let mut flags = Vec::new();
            if let Some((latest, before)) = known.split_last()
                && let Some(best) = before.iter().copied().reduce(f64::max)
                && best - latest >= 0.25
            {
                flags.push("regressed");
            }
            if known.iter().filter(|r| **r > 0.0 && **r < 1.0).count() >= 2 {
                flags.push("flaky");
            }
            if since > 0 {
                flags.push("eval changed");
            }
            let present: Vec<&HistoryLine> =
                per_run.iter().skip(since).flatten().copied().collect();
            if let [.., prev, latest] = present.as_slice()
                && prev.skill_hash != latest.skill_hash
                && prev.pass_rate != latest.pass_rate
            {
                flags.push("skill changed");
            }
            CaseTrend {
                suite,
                case,
                pass_rates,
                costs,
                direction,
                flags,
            }
        })
        .collect();
    Trend {
        runs: runs.into_iter().map(|(_, r)| r).collect(),
        cases,
        unreadable_lines: 0,
    }
}

/// The first run since the suite's files last changed (0 when they did not, or when an
/// earlier line does not say): the runs before it measured another eval.
fn eval_edit(per_run: &[Option<&HistoryLine>]) -> usize {
    let Some((last, latest)) = per_run
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, l)| l.map(|l| (i, l)))
    else {
        return 0;
    };
    let Some(hash) = &latest.suite_hash else {
        return 0;
    };
    per_run[..last]
        .iter()
        .enumerate()
        .rev()
        .find(|(_, l)| {
            l.and_then(|l| l.suite_hash.as_ref())
                .is_some_and(|h| h != hash)
        })
        .map_or(0, |(i, _)| i + 1)
}

/// A sparkline of values in [0, max]: one block per run, a space where there is none.
pub fn sparkline(values: &[Option<f64>], max: f64) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    values
        .iter()
        .map(|v| match v {
            Some(v) if max > 0.0 => {
                let i = ((v / max).clamp(0.0, 1.0) * 7.0).round() as usize;
                BLOCKS[i]
            }
            Some(_) => BLOCKS[0],
            None => ' ',
        })
        .collect()
}

/// The trend for people: a line per case, flagged cases first.
pub fn render_trend(t: &Trend) -> String {
    let mut out = format!(
        "trend over {} run(s): {} … {}\n",
        t.runs.len(),
        t.runs.first().map_or("-", String::as_str),
        t.runs.last().map_or("-", String::as_str)
    );
    let max_cost = t
        .cases
        .iter()
        .flat_map(|c| c.costs.iter().flatten())
        .copied()
        .fold(0.0, f64::max);
    let width = t
        .cases
        .iter()
        .map(|c| {
            crate::text::one_line(&format!("{}/{}", c.suite, c.case))
                .chars()
                .count()
        })
        .max()
        .unwrap_or(0);
    let mut cases: Vec<&CaseTrend> = t.cases.iter().collect();
    cases.sort_by_key(|c| c.flags.is_empty());
    for c in cases {
        let latest = c
            .pass_rates
            .iter()
            .rev()
            .flatten()
            .next()
            .map_or("-".to_string(), |r| format!("{:.0}%", r * 100.0));
        let cost = c
            .costs
            .iter()
            .rev()
            .flatten()
            .next()
            .map_or(String::new(), |c| format!(" ${c:.4}"));
        out.push_str(&format!(
            "{:<width$}  pass {} {:>4} {:<9}  cost {}{}{}\n",
            crate::text::one_line(&format!("{}/{}", c.suite, c.case)),
            sparkline(&c.pass_rates, 1.0),
            latest,
            c.direction,
            sparkline(&c.costs, max_cost),
            cost,
            if c.flags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", c.flags.join(", "))
            }
        ));
    }
    if t.unreadable_lines > 0 {
        out.push_str(&format!(
            "({} history line(s) could not be read and were left out)\n",
            t.unreadable_lines
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(run: &str, case: &str, rate: f64, hash: &str) -> HistoryLine {
        HistoryLine {
            schema: SCHEMA.into(),
            run: run.into(),
            at: run.into(),
            suite: "s".into(),
            case: case.into(),
            kind: "case".into(),
            variant: "skill".into(),
            runs: 4,
            passed: (rate * 4.0) as u64,
            pass_rate: Some(rate),
            cost_usd: Some(rate / 10.0),
            harness: "claude-code".into(),
            skill_hash: Some(hash.into()),
            ..HistoryLine::default()
        }
    }

    #[test]
    fn trends_flag_regressions_flakiness_and_skill_changes() {
        let lines = vec![
            line("r1", "a", 1.0, "h1"),
            line("r2", "a", 1.0, "h1"),
            line("r3", "a", 0.5, "h2"),
            line("r1", "b", 0.5, "h1"),
            line("r2", "b", 0.75, "h1"),
            line("r3", "b", 1.0, "h1"),
            line("r0", "gone", 1.0, "h0"),
        ];
        let t = trend(&lines, 3);
        assert_eq!(t.runs, ["r1", "r2", "r3"]);
        let a = &t.cases[0];
        assert_eq!(a.direction, "worsening");
        assert_eq!(a.flags, ["regressed", "skill changed"]);
        let b = &t.cases[1];
        assert_eq!(
            (b.direction, b.flags.as_slice()),
            ("improving", ["flaky"].as_slice())
        );
        assert_eq!(t.cases.len(), 2, "r0 is outside the last 3 runs");
        assert_eq!(sparkline(&a.pass_rates, 1.0), "██▅");
        let text = render_trend(&t);
        assert!(text.starts_with("trend over 3 run(s): r1 … r3\n"), "{text}");
        assert!(text.contains("s/a  pass ██▅  50% worsening"), "{text}");
        assert!(text.contains("[regressed, skill changed]"), "{text}");
    }

    #[test]
    fn runs_differing_in_harness_model_or_version_are_named() {
        let mut a = line("r1", "a", 1.0, "h");
        let mut b = a.clone();
        assert_eq!(
            incomparable(&[Fingerprint::of(&a), Fingerprint::of(&b)].into()),
            None
        );
        b.harness = "codex".into();
        b.agent_version = Some("0.169".into());
        a.agent_version = Some("2.1.197".into());
        let why = incomparable(&[Fingerprint::of(&a), Fingerprint::of(&b)].into()).unwrap();
        assert_eq!(
            why,
            "the runs differ in harness (claude-code vs codex), agent CLI version (0.169 vs 2.1.197)"
        );
    }
}
