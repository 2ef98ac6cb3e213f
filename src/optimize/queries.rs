//! The trigger queries an optimisation works on: those of every suite that tests the skill
//! with triggers (or of the `--queries` file), each query once, numbered `q001`…; the suite
//! trigger evals of them run in; and the holdout the suites give, when they give one
//! (agentskills.io's `validation_queries.json` beside its `train_queries.json`).

use super::Query;
use crate::suite::{Skill, Suite};

/// What [`gather`] found.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The first suite with trigger queries, given the skill: where trigger evals run.
    pub base: Suite,
    /// Every query; the training queries when the suites give a holdout.
    pub queries: Vec<Query>,
    /// The validation queries the suites hold out, when they hold out any.
    pub holdout: Option<GivenHoldout>,
}

/// A holdout the suites give: used as it is, never split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenHoldout {
    pub queries: Vec<Query>,
    /// The files it was read from, as shown.
    pub files: Vec<String>,
}

/// The queries of every suite of `suites` that tests `skill` with triggers; every suite's
/// when `any_skill` (they come from a `--queries` file). A query held out (a validation
/// query) goes to the holdout, every other to `queries`; a query seen before is not taken
/// again. None when no suite has any.
pub fn gather(suites: &[Suite], skill: &Skill, any_skill: bool) -> Option<Gathered> {
    let same = |s: &Suite| {
        s.skill
            .as_ref()
            .is_some_and(|k| k.path.canonicalize().ok() == skill.path.canonicalize().ok())
    };
    let suites: Vec<&Suite> = suites
        .iter()
        .filter(|s| any_skill || same(s))
        .filter(|s| !s.triggers.is_empty())
        .collect();
    let mut base = (*suites.first()?).clone();
    base.skill = Some(skill.clone());
    let (mut queries, mut held, mut files) = (Vec::new(), Vec::new(), Vec::<String>::new());
    let mut seen = std::collections::HashSet::new();
    for t in suites.iter().flat_map(|s| &s.triggers) {
        if !seen.insert(t.query.clone()) {
            continue;
        }
        let q = Query {
            id: format!("q{:03}", seen.len()),
            query: t.query.clone(),
            should_trigger: t.should_trigger,
        };
        if t.holdout {
            let file = t.location.file.display().to_string();
            if !files.contains(&file) {
                files.push(file);
            }
            held.push(q);
        } else {
            queries.push(q);
        }
    }
    let holdout = (!held.is_empty()).then_some(GivenHoldout {
        queries: held,
        files,
    });
    Some(Gathered {
        base,
        queries,
        holdout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Location, TriggerCase};

    fn trigger(query: &str, should: bool, holdout: bool) -> TriggerCase {
        TriggerCase {
            id: query.into(),
            query: query.into(),
            should_trigger: should,
            routing: Default::default(),
            location: Location {
                file: if holdout {
                    "evals/validation_queries.json".into()
                } else {
                    "evals/train_queries.json".into()
                },
                line: 1,
                column: 1,
            },
            holdout,
        }
    }

    fn suite(triggers: Vec<TriggerCase>) -> Suite {
        Suite {
            id: "bmad:brief".into(),
            format: crate::suite::Format::Bmad,
            source: "evals".into(),
            project_root: ".".into(),
            skill: None,
            description: None,
            notes: None,
            defaults: Default::default(),
            base_overlay: None,
            package: None,
            cases: Vec::new(),
            triggers,
            policies: crate::formats::bmad::POLICIES,
        }
    }

    fn skill() -> Skill {
        Skill {
            name: "brief".into(),
            path: "skills/brief".into(),
            kind: crate::suite::SkillKind::Dir,
            description: None,
        }
    }

    #[test]
    fn validation_queries_are_the_holdout_and_the_others_train() {
        let s = suite(vec![
            trigger("a", true, false),
            trigger("b", false, false),
            trigger("c", true, true),
            trigger("d", false, true),
            // Seen already: not taken twice.
            trigger("a", true, true),
        ]);
        let g = gather(&[s], &skill(), true).unwrap();
        let texts = |qs: &[Query]| qs.iter().map(|q| q.query.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&g.queries), ["a", "b"]);
        let h = g.holdout.unwrap();
        assert_eq!(texts(&h.queries), ["c", "d"]);
        assert_eq!(h.files, ["evals/validation_queries.json"]);
        let ids: Vec<&str> = h.queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["q003", "q004"]);
    }

    #[test]
    fn without_validation_queries_there_is_no_given_holdout() {
        let s = suite(vec![trigger("a", true, false), trigger("b", false, false)]);
        let g = gather(&[s], &skill(), true).unwrap();
        assert_eq!(g.queries.len(), 2);
        assert!(g.holdout.is_none());
        assert!(gather(&[suite(Vec::new())], &skill(), true).is_none());
    }
}
