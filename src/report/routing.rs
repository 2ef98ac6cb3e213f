//! Trigger queries over their runs, and routing across skills installed side by side: how often
//! each query fired ([`TriggerStats`]), which skills it reached, its routing expectations over
//! its runs, and each skill's precision and recall across every suite's queries.
//!
//! A query's ground truth for a skill `s`: positive when the query names `s` in `must_fire`,
//! negative in `must_not_fire`; for the suite's own skill, its `should_trigger`; and a query that
//! should trigger another skill is a negative for `s` (a request is routed to one skill), as is
//! one whose `no_other_skill` does not allow `s`. Otherwise the query says nothing of `s`.

use serde::Serialize;

use super::rows::Row;
use crate::record::case_run::Routing;
use crate::stats;

/// One trigger query over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriggerStats {
    pub suite: String,
    pub id: String,
    pub query: String,
    pub should_trigger: bool,
    /// Runs that could tell (the agent did not fail).
    pub runs: u64,
    /// Runs that could not tell (they ended in error before the agent answered: the model API
    /// down, say): counted neither as firing nor as not firing.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub untold: u64,
    pub fired: u64,
    pub trigger_rate: f64,
    pub threshold: f64,
    /// `agent` (observed) or `judge` (estimated from the name and description).
    pub mode: String,
    pub passed: bool,
    pub note: Option<String>,
    /// The skill under test.
    pub skill: String,
    /// Every skill that fired on the query, most often first (observed through the agent).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<SkillRate>,
    /// The query's routing expectations (`must_fire`, `must_not_fire`, `no_other_skill`).
    #[serde(skip_serializing_if = "Routing::is_empty")]
    pub expect: Routing,
    /// How each held over the runs; the query passes only when each does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleStats>,
}

impl TriggerStats {
    /// No run could tell whether the skill fires: the query is neither passed nor failed, it
    /// is an error.
    pub fn undecided(&self) -> bool {
        self.runs == 0 && self.untold > 0
    }

    /// How a query's firing missed: `fired in 0/2 runs; should trigger (threshold 0.5)`, or
    /// `could not tell in 3 run(s) …` when no run could.
    pub fn shortfall(&self) -> String {
        format!(
            "{}; should {}trigger (threshold {})",
            self.fired_in(),
            if self.should_trigger { "" } else { "not " },
            self.threshold
        )
    }

    /// `fired in 1/2 runs`, with the runs that could not tell; or `could not tell in 3 run(s)
    /// (each ended in error before the agent answered)`.
    pub fn fired_in(&self) -> String {
        if self.undecided() {
            return format!(
                "could not tell in {} run(s) (each ended in error before the agent answered)",
                self.untold
            );
        }
        let untold = match self.untold {
            0 => String::new(),
            n => format!(" ({n} more could not tell)"),
        };
        format!("fired in {}/{} runs{untold}", self.fired, self.runs)
    }
}

/// One trigger query's statistics from its rows (its runs, in order).
pub fn trigger_stats(rows: &[&Row]) -> TriggerStats {
    let told: Vec<&&Row> = rows.iter().filter(|r| r.fired.is_some()).collect();
    let fired = told.iter().filter(|r| r.fired == Some(true)).count() as u64;
    let n = told.len() as u64;
    let r0 = rows[0];
    let rate = if n == 0 { 0.0 } else { fired as f64 / n as f64 };
    let judged = r0.trigger_mode == "judge";
    let routed = of_query(rows, &r0.skill, r0.should_trigger, r0.threshold);
    // A judge guesses for the skill under test only: routing is not observed then.
    let rules = if judged { Vec::new() } else { routed.rules };
    TriggerStats {
        suite: r0.suite.clone(),
        id: r0.case.clone(),
        query: r0.query.clone(),
        should_trigger: r0.should_trigger,
        runs: n,
        untold: rows.len() as u64 - n,
        fired,
        trigger_rate: rate,
        threshold: r0.threshold,
        mode: r0.trigger_mode.clone(),
        // No run that could tell is never a pass.
        passed: n > 0
            && ((rate >= r0.threshold) == r0.should_trigger)
            && rules.iter().all(|r| r.passed),
        note: r0.note.clone(),
        skill: r0.skill.clone(),
        skills: if judged { Vec::new() } else { routed.skills },
        expect: routed.expect,
        rules,
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How often one skill fired on a query, over the runs that could tell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillRate {
    pub skill: String,
    pub fired: u64,
    pub rate: f64,
}

/// One routing expectation of a query over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleStats {
    /// As written: "must_fire `b`", "no_other_skill (only `a`)".
    pub rule: String,
    /// `must_fire`, `must_not_fire` or `no_other_skill`.
    pub kind: &'static str,
    /// The skill that must (not) fire, or the skills `no_other_skill` allows.
    pub skills: Vec<String>,
    /// How often what the rule is about happened: the skill fired (`must_fire`,
    /// `must_not_fire`), or a skill outside the allowed ones did (`no_other_skill`).
    pub rate: f64,
    pub passed: bool,
}

/// The skills a query's runs reached, most often first, and its rules' outcomes.
fn of_query(rows: &[&Row], skill: &str, should: bool, threshold: f64) -> Routed {
    let told: Vec<&&Row> = rows.iter().filter(|r| r.fired.is_some()).collect();
    let n = told.len() as u64;
    let rate = |k: u64| if n == 0 { 0.0 } else { k as f64 / n as f64 };
    let mut skills: Vec<SkillRate> = Vec::new();
    for r in &told {
        for s in &r.skills_fired {
            match skills.iter_mut().find(|x| x.skill == *s) {
                Some(x) => x.fired += 1,
                None => skills.push(SkillRate {
                    skill: s.clone(),
                    fired: 1,
                    rate: 0.0,
                }),
            }
        }
    }
    for s in &mut skills {
        s.rate = rate(s.fired);
    }
    skills.sort_by(|a, b| b.fired.cmp(&a.fired).then_with(|| a.skill.cmp(&b.skill)));
    let routing = rows.first().map(|r| r.routing.clone()).unwrap_or_default();
    let rules = routing
        .rules(skill, should)
        .into_iter()
        .map(|rule| {
            // What the rule is about happened when the rule does not hold, except for
            // `must_fire`, whose event is the firing it asks for.
            let happened = told
                .iter()
                .filter(|r| rule.holds(&r.skills_fired) == rule.demands_firing())
                .count() as u64;
            let r = rate(happened);
            RuleStats {
                rule: rule.describe(),
                kind: rule.kind(),
                skills: rule.skills(),
                rate: r,
                passed: n > 0 && ((r >= threshold) == rule.demands_firing()),
            }
        })
        .collect();
    Routed {
        skills,
        rules,
        expect: routing,
    }
}

/// What [`of_query`] found.
struct Routed {
    pub skills: Vec<SkillRate>,
    pub rules: Vec<RuleStats>,
    pub expect: Routing,
}

/// One skill as a classifier over every query that says whether it should fire.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillRouting {
    pub skill: String,
    /// Queries that say whether it should fire (and could tell).
    pub queries: usize,
    pub true_positives: u64,
    pub false_positives: u64,
    pub true_negatives: u64,
    pub false_negatives: u64,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    /// Queries it fired on (at the threshold) that say nothing of it, by suite/id: a sign the
    /// query sets leave it out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unlabelled_firings: Vec<String>,
}

/// Whether query `t` should reach `skill`; `None` when it does not say.
fn expected(t: &TriggerStats, skill: &str) -> Option<bool> {
    if t.expect.must_fire.iter().any(|s| s == skill) {
        return Some(true);
    }
    if t.expect.must_not_fire.iter().any(|s| s == skill) {
        return Some(false);
    }
    if t.skill == skill {
        return Some(t.should_trigger);
    }
    if t.should_trigger {
        return Some(false);
    }
    (t.expect.no_other_skill && !t.expect.allow.iter().any(|s| s == skill)).then_some(false)
}

/// Every skill's precision and recall over the observed trigger queries; empty unless more
/// than one skill is in play (fired, is under test, or is named by a rule).
pub fn per_skill(triggers: &[TriggerStats]) -> Vec<SkillRouting> {
    let observed: Vec<&TriggerStats> = triggers
        .iter()
        .filter(|t| t.mode != "judge" && t.runs > 0)
        .collect();
    let mut names: Vec<String> = Vec::new();
    for t in &observed {
        let named = std::iter::once(&t.skill)
            .chain(t.skills.iter().map(|s| &s.skill))
            .chain(&t.expect.must_fire)
            .chain(&t.expect.must_not_fire);
        for n in named {
            if !n.is_empty() && !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    if names.len() < 2 {
        return Vec::new();
    }
    names.sort();
    names
        .into_iter()
        .map(|skill| {
            let mut c = stats::Confusion::default();
            let mut queries = 0;
            let mut unlabelled = Vec::new();
            for t in &observed {
                let rate = t
                    .skills
                    .iter()
                    .find(|s| s.skill == skill)
                    .map_or(0.0, |s| s.rate);
                let fires = rate >= t.threshold;
                match expected(t, &skill) {
                    Some(should) => {
                        queries += 1;
                        c.count(fires, should);
                    }
                    None if fires => unlabelled.push(format!("{}/{}", t.suite, t.id)),
                    None => {}
                }
            }
            SkillRouting {
                precision: c.precision(),
                recall: c.recall(),
                skill,
                queries,
                true_positives: c.tp,
                false_positives: c.fp,
                true_negatives: c.tn,
                false_negatives: c.fn_,
                unlabelled_firings: unlabelled,
            }
        })
        .collect()
}

/// "a 3/3, b 1/3": the skills a query reached, with their counts over `runs`.
pub fn reached(t: &TriggerStats) -> String {
    if t.skills.is_empty() {
        return "none".into();
    }
    t.skills
        .iter()
        .map(|s| format!("{} {}/{}", crate::text::one_line(&s.skill), s.fired, t.runs))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a query expects: "`a`" / "not `a`", then its rules.
pub fn expects(t: &TriggerStats) -> String {
    let own = if t.should_trigger {
        format!("`{}`", t.skill)
    } else {
        format!("not `{}`", t.skill)
    };
    let all = std::iter::once(own)
        .chain(
            t.expect
                .rules(&t.skill, t.should_trigger)
                .iter()
                .map(|r| r.describe()),
        )
        .collect::<Vec<_>>()
        .join("; ");
    crate::text::one_line(&all)
}

/// The rules that did not hold, with how often what they are about happened.
pub fn broken(t: &TriggerStats) -> Vec<String> {
    t.rules
        .iter()
        .filter(|r| !r.passed)
        .map(|r| {
            format!(
                "{} did not hold (rate {:.0}%, threshold {:.0}%)",
                crate::text::one_line(&r.rule),
                r.rate * 100.0,
                t.threshold * 100.0
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::aggregate::{VerdictSettings, aggregate};

    /// A trigger run of `skill`'s suite on query `id` that saw `fired` fire.
    fn run(skill: &str, id: &str, should: bool, fired: &[&str], routing: &Routing) -> Row {
        let mut r = crate::record::CaseRunRecord {
            suite: format!("s-{skill}"),
            case: id.into(),
            kind: crate::record::case_run::Kind::Trigger,
            skills_invoked: fired.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        r.trigger = Some(crate::record::case_run::TriggerRecord {
            query: id.into(),
            should_trigger: should,
            fired: Some(fired.contains(&skill)),
            mode: Default::default(),
            threshold: 0.5,
            skill: skill.into(),
            note: None,
            reason: None,
            routing: routing.clone(),
        });
        Row::of(&r)
    }

    const SETTINGS: VerdictSettings = VerdictSettings {
        min_pass_rate: 1.0,
        pass_k: 3,
    };

    #[test]
    fn rules_hold_over_runs_at_the_threshold_and_gate_the_query() {
        let must = Routing {
            must_fire: vec!["b".into()],
            ..Default::default()
        };
        // `b` fires in one run of two: 50% reaches the threshold.
        let rows = vec![
            run("a", "q", false, &["b"], &must),
            run("a", "q", false, &[], &must),
        ];
        let agg = aggregate(&rows, SETTINGS);
        let t = &agg.triggers[0];
        assert_eq!(t.rules[0].rate, 0.5);
        assert!(t.passed, "{t:?}");
        assert_eq!(reached(t), "b 1/2");
        // must_not_fire at 50% fails, as a should-not query firing half the time does.
        let not = Routing {
            must_not_fire: vec!["b".into()],
            ..Default::default()
        };
        let rows = vec![
            run("a", "q", false, &["b"], &not),
            run("a", "q", false, &[], &not),
        ];
        let t = &aggregate(&rows, SETTINGS).triggers[0];
        assert!(!t.passed);
        assert_eq!(
            broken(t),
            ["must_not_fire `b` did not hold (rate 50%, threshold 50%)"]
        );
        // no_other_skill lets the skill under test fire on its own query, not another.
        let only = Routing {
            no_other_skill: true,
            ..Default::default()
        };
        let ok = vec![run("a", "q", true, &["a"], &only)];
        assert!(aggregate(&ok, SETTINGS).triggers[0].passed);
        let bad = vec![run("a", "q", true, &["a", "c"], &only)];
        let t = &aggregate(&bad, SETTINGS).triggers[0];
        assert!(!t.passed);
        assert_eq!(t.rules[0].rule, "no_other_skill (only `a`)");
    }

    #[test]
    fn each_skill_is_scored_on_the_queries_that_say_whether_it_should_fire() {
        let none = Routing::default();
        let rows = vec![
            // a's suite: its positive reaches a (tp for a, tn for b: a query for a is not b's).
            run("a", "a1", true, &["a"], &none),
            // a's positive that b takes: fn for a, fp for b.
            run("a", "a2", true, &["b"], &none),
            // a's negative that b takes: says nothing of b (unlabelled firing).
            run("a", "a3", false, &["b"], &none),
            // b's suite: its positive reaches b.
            run("b", "b1", true, &["b"], &none),
        ];
        let agg = aggregate(&rows, SETTINGS);
        let a = agg.routing.iter().find(|s| s.skill == "a").unwrap();
        assert_eq!(
            (
                a.true_positives,
                a.false_positives,
                a.true_negatives,
                a.false_negatives
            ),
            (1, 0, 2, 1)
        );
        assert_eq!(a.recall, Some(0.5));
        let b = agg.routing.iter().find(|s| s.skill == "b").unwrap();
        assert_eq!(
            (
                b.true_positives,
                b.false_positives,
                b.true_negatives,
                b.false_negatives
            ),
            (1, 1, 1, 0)
        );
        assert_eq!(b.unlabelled_firings, ["s-a/a3"]);
        // One skill alone: no routing table.
        let alone = vec![run("a", "a1", true, &["a"], &none)];
        assert!(aggregate(&alone, SETTINGS).routing.is_empty());
    }

    #[test]
    fn a_hostile_skill_name_stays_on_its_line() {
        let rows = vec![run(
            "a",
            "q",
            false,
            &["evil\n::error::x\u{1b}[2J"],
            &Routing::default(),
        )];
        let agg = aggregate(&rows, SETTINGS);
        let line = reached(&agg.triggers[0]);
        assert!(!line.contains('\n') && !line.contains('\u{1b}'), "{line}");
    }
}
