//! Routing across skills installed side by side: a case's `no_other_skill` check allows the
//! skill under test (or the UAAPS case's target skill) and the skills the case's `must_fire` checks name, besides its own `allow`.
//! Filled in once every suite is loaded, so grading and re-grading see the same list.

use serde_json::Value;

use super::model::Suite;

/// Completes the `allow` list of every `no_other_skill` check of `suite`'s cases.
pub fn resolve(suite: &mut Suite) {
    let own = suite.skill.as_ref().map(|s| s.name.clone());
    for case in &mut suite.cases {
        // A UAAPS case's `target: skill:<name>` is the skill it evaluates.
        let target = case
            .target
            .as_ref()
            .filter(|t| t.kind == super::model::TargetKind::Skill)
            .map(|t| t.name.clone());
        let must: Vec<String> = case
            .checks
            .iter()
            .filter(|c| c.kind == "must_fire" && !c.negate)
            .filter_map(|c| c.config.get("skill").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        for check in case
            .checks
            .iter_mut()
            .filter(|c| c.kind == "no_other_skill")
        {
            let mut allow: Vec<String> = check
                .config
                .get("allow")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            allow.extend(own.iter().cloned());
            allow.extend(target.iter().cloned());
            allow.extend(must.iter().cloned());
            allow.sort();
            allow.dedup();
            if let Some(map) = check.config.as_object_mut() {
                map.insert("allow".into(), Value::from(allow));
            } else {
                check.config = serde_json::json!({ "allow": allow });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Case, Check, CheckTarget, Location, Skill, SkillKind};

    #[test]
    fn no_other_skill_allows_the_skill_under_test_and_the_must_fire_ones() {
        let at = Location {
            file: "s.json".into(),
            line: 1,
            column: 1,
        };
        let mut case = Case::new("c", at, vec!["p".into()]);
        let check = |kind: &str, config: Value| {
            Check::new("x".into(), kind, config, CheckTarget::Transcript, None)
        };
        case.checks = vec![
            check("must_fire", serde_json::json!({"skill": "slides"})),
            check("no_other_skill", serde_json::json!({"allow": ["notes"]})),
        ];
        let mut suite = Suite {
            id: "bmad:brief".into(),
            format: crate::suite::Format::Bmad,
            source: "s.json".into(),
            project_root: ".".into(),
            description: None,
            notes: None,
            defaults: Default::default(),
            base_overlay: None,
            package: None,
            triggers: Vec::new(),
            policies: crate::formats::bmad::POLICIES,
            skill: Some(Skill {
                name: "brief".into(),
                path: "brief".into(),
                kind: SkillKind::Dir,
                description: None,
            }),
            cases: vec![case],
        };
        resolve(&mut suite);
        assert_eq!(
            suite.cases[0].checks[1].config,
            serde_json::json!({"allow": ["brief", "notes", "slides"]})
        );
    }
}
