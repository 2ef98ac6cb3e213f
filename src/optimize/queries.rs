//! The trigger queries an optimisation works on: those of every suite that tests the skill
//! with triggers (or of the `--queries` file), each query once, numbered `q001`…; and the
//! suite trigger evals of them run in.

use super::Query;
use crate::suite::{Skill, Suite};

/// The base suite (the first with trigger queries, given the skill) and the queries of every
/// suite of `suites` that tests `skill` with triggers; every suite's when `any_skill` (they
/// come from a `--queries` file). None when no suite has any.
pub fn gather(suites: &[Suite], skill: &Skill, any_skill: bool) -> Option<(Suite, Vec<Query>)> {
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
    let mut queries: Vec<Query> = Vec::new();
    for s in &suites {
        for t in &s.triggers {
            if !queries.iter().any(|q| q.query == t.query) {
                queries.push(Query {
                    id: format!("q{:03}", queries.len() + 1),
                    query: t.query.clone(),
                    should_trigger: t.should_trigger,
                });
            }
        }
    }
    Some((base, queries))
}
