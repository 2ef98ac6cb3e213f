//! What is already done: results kept from the run being resumed (`--resume`), then cache
//! hits. The rest of the plan is run.

use std::path::{Path, PathBuf};

use super::plan::Planned;
use super::{Context, RunOptions, cache, cache_key};
use crate::record;
use crate::{
    grade::JudgeSlot,
    record::case_run::{Arm, CaseRunRecord, Status},
};

/// A case-run not run again: its result is already in the run folder (`--resume`) or came
/// from the cache.
#[derive(Debug)]
pub struct Reused {
    pub suite: String,
    pub case: String,
    pub run: u32,
    pub variant: Arm,
    pub outcome: record::Outcome,
    /// `cache` or `resume`.
    pub from: &'static str,
    pub dir: PathBuf,
}

/// The secret that authenticates cache entries, read once; without it, no cache.
pub(super) fn cache_secret(opts: &RunOptions) -> Option<cache_key::CacheKey> {
    opts.cache
        .then(|| {
            cache_key::load()
                .inspect_err(|e| eprintln!("warning: the cache is off: {e}"))
                .ok()
        })
        .flatten()
}

/// The plan, split: what is reused, and what runs (each with its cache key when the cache is
/// on).
pub(super) struct Partition<'p, 'a> {
    pub reused: Vec<Reused>,
    /// How many of `reused` would have started an agent.
    pub reused_agents: usize,
    pub to_run: Vec<(&'p Planned<'a>, Option<String>)>,
}

/// Kept results of a resumed run, then cache hits (restored into the run folder; the cache is
/// on when `cache_secret` is given); the rest of the plan is to run. `stage`: the environment
/// the agents are given, and `sandboxes`, each suite's sandbox, both part of every cache key;
/// what staging keeps out of a workspace (the suites' specs) is no part of a skill's digest.
pub(super) fn partition<'p, 'a>(
    run: &'p Context<'a>,
    stage: &crate::workspace::StageOptions,
    sandboxes: &[crate::sandbox::Setting],
    cache_secret: Option<&cache_key::CacheKey>,
) -> Partition<'p, 'a> {
    let key_parts = KeyParts {
        run,
        plugins: serde_json::Value::Array(run.opts.plugins.record()),
        env: cache::env_key(&stage.host_env, &run.opts.settings.pass_env),
        sandboxes: sandboxes.iter().map(cache::sandbox_key).collect(),
    };
    let mut digests = cache::Digests::new(stage.exclude.clone());
    let mut reused: Vec<Reused> = Vec::new();
    let mut to_run: Vec<(&Planned<'_>, Option<String>)> = Vec::new();
    for p in &run.plan.case_runs {
        let case_dir = p.dir(run.dir);
        if run.opts.settings.resume.is_some()
            && let Some(v) = kept_result(&case_dir)
        {
            reused.push(reused_from(p, &v, "resume", case_dir));
            continue;
        }
        let key = cache_secret
            .is_some()
            .then(|| key_parts.key(p, &mut digests));
        if let (Some(k), Some(secret)) = (&key, cache_secret) {
            let _ = crate::workspace::remove::tree(&case_dir);
            let root = cache::root(&p.suite.project_root);
            if let Some(v) = cache::restore(&root, k, &case_dir, run.dir, secret) {
                reused.push(reused_from(p, &v, "cache", case_dir));
                continue;
            }
        }
        to_run.push((p, key));
    }
    let reused_agents = reused
        .len()
        .saturating_sub(reused_without_agent(run, &to_run));
    Partition {
        reused,
        reused_agents,
        to_run,
    }
}

/// How many reused case-runs would have started no agent (judged trigger queries, scripts
/// without `--trust`): those of the plan, less those still to run.
fn reused_without_agent(run: &Context<'_>, to_run: &[(&Planned<'_>, Option<String>)]) -> usize {
    let none = |p: &Planned<'_>| !super::plan::starts_agent(p, run.opts);
    let planned = run.plan.case_runs.iter().filter(|p| none(p)).count();
    planned.saturating_sub(to_run.iter().filter(|(p, _)| none(p)).count())
}

/// A result already in the run folder that `--resume` keeps: any that did not end in error.
fn kept_result(dir: &Path) -> Option<record::CaseRunRecord> {
    record::read_case_run(dir)
        .ok()
        .filter(|r| !matches!(r.status, Status::Error | Status::Missing))
}

fn reused_from(
    p: &Planned<'_>,
    v: &record::CaseRunRecord,
    from: &'static str,
    dir: PathBuf,
) -> Reused {
    Reused {
        suite: p.suite.id.clone(),
        case: p.case.id.clone(),
        run: p.run,
        variant: p.variant,
        outcome: v.outcome(),
        from,
        dir,
    }
}

/// Only case-runs that completed and were fully graded are worth reusing.
pub(super) fn cacheable(r: &CaseRunRecord) -> bool {
    r.status == Status::Completed
        && r.grade
            .as_ref()
            .is_some_and(|g| g.verdict != crate::record::grading::Verdict::NotGraded)
        && r.judge.as_ref().is_none_or(|j| j.error.is_none())
}

/// What a case-run's cache key is made of besides the case-run itself.
struct KeyParts<'r, 'a> {
    /// The options, harnesses and their versions, baseline skills.
    run: &'r Context<'a>,
    /// The loaded plugins, as run.json records them.
    plugins: serde_json::Value,
    /// The environment that reaches the agent ([`cache::env_key`]).
    env: String,
    /// Each suite's sandbox ([`cache::sandbox_key`]), by suite index.
    sandboxes: Vec<String>,
}

impl KeyParts<'_, '_> {
    /// The case-run's cache key: everything that could change its result.
    fn key(&self, p: &Planned<'_>, digests: &mut cache::Digests) -> String {
        let Context {
            suites,
            opts,
            setup,
            plan,
            versions,
            ..
        } = *self.run;
        let (harness_key, h) = &plan.harnesses[p.harness];
        cache::key(
            &cache::KeyInput {
                suite: p.suite,
                case: p.case,
                trigger: p.trigger.map(|t| {
                    serde_json::json!({
                        "query": t.query, "should_trigger": t.should_trigger,
                        "mode": opts.settings.trigger_mode, "threshold": opts.settings.trigger_threshold,
                        "routing": t.routing, "full": opts.settings.trigger_full_runs,
                        "turns": opts.settings.trigger_turns,
                    })
                }),
                variant: p.variant.word(),
                skill: match p.variant {
                    Arm::Skill => p.suite.skill.as_ref(),
                    Arm::Baseline | Arm::Variant => {
                        setup.baseline_skills[super::suite_index(suites, p.suite)].as_ref()
                    }
                },
                siblings: &setup.siblings,
                run: p.run,
                harness: format!(
                    "{}\u{0}{}\u{0}{}\u{0}{}",
                    harness_key,
                    h.name(),
                    versions.get(h.name()).cloned().unwrap_or_default(),
                    digests.program((harness_key, h.as_ref()), &p.suite.project_root)
                ),
                model: p.model.as_deref(),
                timeout_secs: p.timeout.as_secs(),
                judge: p.judge.as_ref().map(|j| match j {
                    JudgeSlot::Ready(_, info) => format!("{}:{}", info.provider, info.model),
                    JudgeSlot::Unavailable(why) => why.clone(),
                }),
                plugins: &self.plugins,
                grants: serde_json::json!([
                    opts.settings.tools,
                    opts.settings.mocks,
                    opts.settings.allow_real_servers,
                ])
                .to_string(),
                env: &self.env,
                sandbox: self
                    .sandboxes
                    .get(super::suite_index(suites, p.suite))
                    .cloned()
                    .unwrap_or_default(),
            },
            digests,
        )
    }
}
