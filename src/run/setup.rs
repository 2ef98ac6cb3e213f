//! What a run needs before it is planned: every project's configuration, the folder `--resume`
//! names, trigger evals as cases and baseline skills, the shard; and the run's settings,
//! resolved from them once ([`super::resolve`]). And the run's folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::NotStarted;
use super::options::{OtherArm, RunOptions};
use super::resolve::Settings;
use super::shard;
use crate::config::{self, Config};
use crate::formats::LoadCtx;
use crate::host::{HostEnv, Unavailable};
use crate::record::layout;
use crate::suite::{Case, Skill, SkillKind, Suite, TriggerCase};

/// What the plan is made from besides the suites and the options.
pub(super) struct Setup {
    /// Each project's `assay.toml`, by project root.
    pub configs: BTreeMap<PathBuf, Config>,
    /// Trigger evals become cases with one prompt, owned here for the plan to borrow (one list
    /// per suite).
    pub trigger_cases: Vec<Vec<Case>>,
    /// The skill each suite's baseline case-runs install instead (`--baseline-skill`).
    pub baseline_skills: Vec<Option<Skill>>,
    /// The skills `--with-skills` installs beside the one under test, by name.
    pub siblings: Vec<Skill>,
    /// `--shard`: the slice this run takes, and the timings it is cut by.
    pub shard: Option<shard::Chosen>,
    /// The host's environment, read once for the whole run.
    pub host: HostEnv,
    /// The run's settings, every precedence rule applied.
    pub settings: Settings,
}

impl Setup {
    /// Configuration of every project involved, before anything runs; bad input stops the run,
    /// and so does a `--resume` folder that is not a run folder.
    pub(super) fn load(
        ctx: &LoadCtx,
        suites: &[Suite],
        opts: &RunOptions,
    ) -> Result<Setup, NotStarted> {
        let mut configs: BTreeMap<PathBuf, Config> = BTreeMap::new();
        let mut problems = Vec::new();
        for s in suites {
            if !configs.contains_key(&s.project_root) {
                match config::load(&s.project_root, &ctx.shown(&s.project_root)) {
                    Ok(c) => {
                        configs.insert(s.project_root.clone(), c);
                    }
                    Err(p) => problems.push(*p),
                }
            }
        }
        if !problems.is_empty() {
            return Err(NotStarted::BadInput(problems));
        }
        if let Some(dir) = &opts.settings.resume
            && !ctx.cwd.join(dir).join(layout::RUN_JSON).is_file()
        {
            return Err(NotStarted::Unavailable(vec![(
                "resume".into(),
                Unavailable {
                    message: format!("{} is not a run folder (it has no run.json)", dir.display()),
                    fix: "pass the folder `assay run` printed as `run folder:`".into(),
                },
            )]));
        }

        if let Some(b) = &opts.baseline {
            check_other_skill(ctx, b)?;
        }
        let trigger_cases = suites
            .iter()
            .map(|s| s.triggers.iter().map(trigger_case).collect())
            .collect();
        let baseline_skills = suites
            .iter()
            .map(|s| {
                opts.baseline
                    .as_ref()
                    .and_then(OtherArm::skill_path)
                    .map(|p| baseline_skill(p, s))
            })
            .collect();
        let siblings = match &opts.settings.with_skills {
            Some(dir) => siblings(ctx, &ctx.cwd.join(dir))?,
            None => Vec::new(),
        };
        let host = HostEnv::from_process();
        let shard = match opts.settings.shard {
            Some(spec) => Some(choose_shard(ctx, suites, opts, spec, &host)?),
            None => None,
        };
        let settings = Settings::resolve(suites, &configs, opts, &host);
        Ok(Setup {
            configs,
            trigger_cases,
            baseline_skills,
            siblings,
            shard,
            host,
            settings,
        })
    }

    /// `[run.limits]` as the run records it (for `doctor`).
    pub(super) fn limits_config(&self) -> crate::sandbox::limits::LimitsConfig {
        self.settings.recorded_limits
    }
}

/// A folder for this run: `.assay/runs/<UTC timestamp>` unless given.
pub(super) fn run_dir(ctx: &LoadCtx, opts: &RunOptions) -> PathBuf {
    if let Some(d) = opts
        .settings
        .resume
        .as_ref()
        .or(opts.settings.output_dir.as_ref())
    {
        return ctx.cwd.join(d);
    }
    crate::record::folder::fresh_stamped(&ctx.cwd.join(".assay/runs"))
}

/// `--shard`: the slice (read from the environment for `auto`), the timings the cases are
/// dealt by, and, for `--resume` of a shard, the cut it recorded. A slice or timings that
/// cannot be had stop the run before it starts (exit 2).
fn choose_shard(
    ctx: &LoadCtx,
    suites: &[Suite],
    opts: &RunOptions,
    spec: shard::ShardSpec,
    host: &HostEnv,
) -> Result<shard::Chosen, NotStarted> {
    let bad = |flag: &str, message: String, help: &str| {
        NotStarted::BadInput(vec![
            crate::diag::Problem::error("shard", Path::new(flag), message).help(help),
        ])
    };
    let var = |k: &str| host.raw(k).map(str::to_string);
    let flag = match spec {
        shard::ShardSpec::Auto => "--shard auto",
        shard::ShardSpec::Fixed(_) => "--shard",
    };
    let (slice, source) = shard::choose(spec, opts.settings.shards, &var).map_err(|m| {
        bad(
            flag,
            m,
            "pass --shard K/N, or run where an orchestrator sets the shard (docs/kubernetes.md)",
        )
    })?;
    let timings = match &opts.settings.shard_timings {
        Some(p) => {
            let path = ctx.cwd.join(p);
            shard::Timings::load(&path, &ctx.shown(&path).display().to_string()).map_err(|m| {
                bad(
                    "--shard-timings",
                    m,
                    "pass a run folder (a merged run of every shard) or a history file (.assay/history.jsonl)",
                )
            })?
        }
        None => {
            let default = ctx.cwd.join(".assay/history.jsonl");
            let shown = ctx.shown(&default).display().to_string();
            shard::Timings::load(&default, &shown).unwrap_or_default()
        }
    };
    let recorded = match &opts.settings.resume {
        Some(dir) => resumed_cut(&ctx.cwd.join(dir), slice).map_err(|m| {
            bad(
                "--resume",
                m,
                "resume a shard with the --shard it first ran with",
            )
        })?,
        None => None,
    };
    let suites = suites
        .iter()
        .map(|s| {
            let digest = crate::record::run::SuiteDigest {
                spec: crate::run::cache::suite_hash(s, &ctx.cwd),
                skill: s
                    .skill
                    .as_ref()
                    .map(|k| crate::run::cache::skill_hash(k, &s.spec_paths(&ctx.cwd))),
            };
            (s.id.clone(), digest)
        })
        .collect();
    Ok(shard::Chosen {
        shard: slice,
        source,
        timings,
        recorded,
        suites,
    })
}

/// The cut a resumed shard first recorded; an error when it was another slice.
fn resumed_cut(
    dir: &Path,
    slice: shard::Shard,
) -> Result<Option<Box<crate::record::run::ShardRecord>>, String> {
    let Ok(run) = crate::record::read_run(dir) else {
        return Ok(None);
    };
    match run.shard {
        Some(r) if (r.index, r.count) != (slice.index, slice.count) => Err(format!(
            "the run being resumed is shard {}/{}; this run asks for {slice}",
            r.index, r.count
        )),
        Some(r) => Ok(Some(Box::new(r))),
        None => Ok(None),
    }
}

/// A trigger eval as a case: its query is the one prompt; nothing else is staged.
fn trigger_case(t: &TriggerCase) -> Case {
    Case::new(t.id.clone(), t.location.clone(), vec![t.query.clone()])
}

/// `--baseline-skill` and `--variant-path` name a skill: a folder with SKILL.md, or a command
/// file. Anything else stops the run before it starts.
fn check_other_skill(ctx: &LoadCtx, b: &OtherArm) -> Result<(), NotStarted> {
    let Some(path) = b.skill_path() else {
        return Ok(());
    };
    let is_skill = path.join("SKILL.md").is_file()
        || (path.is_file() && path.extension().is_some_and(|e| e == "md"));
    if is_skill {
        return Ok(());
    }
    let flag = match b {
        OtherArm::Variant(_) => "--variant-path",
        _ => "--baseline-skill",
    };
    Err(NotStarted::BadInput(vec![
        crate::diag::Problem::error(
            "not-a-skill",
            &ctx.shown(path),
            format!("{flag}: not a skill (no SKILL.md in this folder, and not a command file)"),
        )
        .help("pass the other version's folder (the one holding SKILL.md), or its <name>.md command file"),
    ]))
}

/// The skill a baseline case-run installs instead of the suite's (`--baseline-skill`).
fn baseline_skill(path: &Path, suite: &Suite) -> Skill {
    let kind = if path.is_dir() {
        SkillKind::Dir
    } else {
        SkillKind::Command
    };
    let description = suite.skill.as_ref().and_then(|s| s.description.clone());
    Skill {
        // Under the same name, so the baseline differs only in the skill's content.
        name: suite
            .skill
            .as_ref()
            .map(|s| s.name.clone())
            .unwrap_or_else(|| {
                path.file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_default()
            }),
        path: path.to_path_buf(),
        kind,
        description,
    }
}

/// The skills of a `--with-skills` folder: each folder in it holding SKILL.md, by name.
fn siblings(ctx: &LoadCtx, dir: &std::path::Path) -> Result<Vec<Skill>, NotStarted> {
    let shown = ctx.shown(dir);
    let bad = |message: String| {
        NotStarted::BadInput(vec![
            crate::diag::Problem::error("with-skills", &shown, message).help(
                "pass a folder of skills, each a folder with SKILL.md (as .claude/skills is)",
            ),
        ])
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return Err(bad(format!("--with-skills: cannot read the folder: {e}"))),
    };
    let mut out: Vec<Skill> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter_map(|p| crate::suite::skill::read(&p))
        .collect();
    if out.is_empty() {
        return Err(bad(
            "--with-skills: the folder holds no skill (a folder with SKILL.md)".into(),
        ));
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}
