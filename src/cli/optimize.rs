//! `assay optimize description`: a skill's description improved against its trigger queries,
//! changed only when the gain on the holdout is significant.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{JudgeChoice, print_problems};
use crate::discover::{self, Options};
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::optimize::{self, Error, Optimization, OptimizeSettings};
use crate::run::{RunOptions, RunSettings};
use crate::suite::{Skill, Suite};

#[derive(Debug, Subcommand)]
pub enum OptimizeCommand {
    /// Rewrite a skill's description with a proposer model and keep a rewrite only when its
    /// holdout trigger accuracy is significantly higher (Fisher's exact test, Bonferroni).
    Description(Box<DescriptionArgs>),
}

#[derive(Debug, Args)]
pub struct DescriptionArgs {
    /// The skill: a folder with SKILL.md, or a command file.
    pub skill: PathBuf,
    /// Where to find the suites with its trigger queries (default: the current folder).
    pub paths: Vec<PathBuf>,
    /// Take the queries from this file instead (BMAD `triggers.json`'s shape: a list of
    /// `{"query", "should_trigger"}`).
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// The share of each kind of query (should fire, should not) in train; the rest is holdout.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.6, value_parser = inside_zero_one)]
    pub train_fraction: f64,
    /// The split's seed: the same seed, the same split.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Rounds of proposing and measuring.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub iterations: u32,
    /// Candidates asked for each round.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub candidates: u32,
    /// Of each round's candidates, how many of the best on train are measured on holdout.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub holdout_top: u32,
    /// The significance level, shared among every holdout comparison the run may make.
    #[arg(long, default_value_t = 0.05, value_parser = inside_zero_one)]
    pub alpha: f64,
    /// The proposer: a judge provider (anthropic, openai, claude-cli, codex-cli),
    /// provider:model, or a model name; default: the judge `--judge` or `ASSAY_JUDGE` chooses.
    #[arg(long, value_name = "JUDGE")]
    pub proposer: Option<String>,
    /// A reviewer's notes to guide the proposer: a run folder holding `feedback.json`, or a
    /// feedback file (repeatable). Notes on trigger case-runs whose query is a train query are
    /// shown to the proposer; those on holdout queries never are (optimize.json says which).
    #[arg(long, value_name = "RUN_DIR or FILE")]
    pub feedback: Vec<PathBuf>,
    /// Write the winning description into the skill's file (only when it won significantly).
    #[arg(long)]
    pub write: bool,
    /// Print `optimize.json` on standard output (progress goes to standard error).
    #[arg(long)]
    pub json: bool,
    /// The trigger evals' settings (harness, model, --trigger-runs, --trigger-threshold,
    /// sandbox, network, --max-cost); `--output-dir` names the optimisation's folder and
    /// `--resume` goes on with one.
    #[command(flatten)]
    pub settings: super::run_flags::RunFlags,
    #[command(flatten)]
    pub judge: JudgeChoice,
}

fn inside_zero_one(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(format!("{v} is not between 0 and 1"))
    }
}

pub fn run(ctx: &LoadCtx, cmd: &OptimizeCommand, plugins: &crate::plugin::Plugins) -> Exit {
    let OptimizeCommand::Description(args) = cmd;
    let (skill, gathered, notes) = match inputs(ctx, args) {
        Ok(found) => found,
        Err(o) => return o,
    };
    let base = gathered.base;
    let (proposer, info) = match proposer(args, &base) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let settings = args.settings.from(&ctx.cwd);
    let (dir, resume) = match folder(ctx, &settings) {
        Ok(f) => f,
        Err(o) => return o,
    };
    let opts = run_options(&settings, plugins);
    let job = Optimization {
        ctx,
        base: &base,
        skill: &skill,
        queries: gathered.queries,
        holdout: gathered.holdout,
        opts: &opts,
        settings: optimize_settings(args, &settings),
        proposer: &proposer,
        proposer_name: format!("{} {}", info.provider, info.model),
        dir: dir.clone(),
        resume,
        feedback: notes,
    };
    tell!("optimisation folder: {}", ctx.shown(&dir).display());
    let mut progress = |line: String| tell!("{line}");
    match optimize::optimize(&job, &mut progress) {
        Ok(rec) => print_record(ctx, args, &rec),
        Err(Error::Input(e)) => {
            tell!("error: {e}");
            Exit::BadInput
        }
        Err(Error::Infrastructure(e)) => {
            tell!("error: {e}");
            tell!(
                "what was done is recorded; go on with: --resume {}",
                ctx.shown(&dir).display()
            );
            Exit::Infrastructure
        }
    }
}

/// The skill, its queries (and the holdout they give) and the reviewer's notes, or the exit
/// saying why not.
fn inputs(
    ctx: &LoadCtx,
    args: &DescriptionArgs,
) -> Result<
    (
        Skill,
        optimize::queries::Gathered,
        Vec<optimize::feedback::Note>,
    ),
    Exit,
> {
    let path = ctx.cwd.join(&args.skill);
    let Some(skill) = crate::suite::skill::read(&path) else {
        tell!(
            "error: {} is neither a skill folder with a SKILL.md nor a command file",
            args.skill.display()
        );
        return Err(Exit::BadInput);
    };
    let gathered = queries_for(ctx, args, &skill)?;
    let notes = notes(ctx, args)?;
    Ok((skill, gathered, notes))
}

/// What each measurement runs with: the trigger evals' settings, cached, without the
/// optimisation's own folder, resume and budget.
fn run_options(settings: &RunSettings, plugins: &crate::plugin::Plugins) -> RunOptions {
    RunOptions {
        settings: RunSettings {
            resume: None,
            output_dir: None,
            max_cost: None,
            ..settings.clone()
        },
        plugins: plugins.clone(),
        cache: true,
        ..RunOptions::default()
    }
}

/// How the optimisation goes, from the flags and the trigger evals' settings.
fn optimize_settings(args: &DescriptionArgs, settings: &RunSettings) -> OptimizeSettings {
    OptimizeSettings {
        train_fraction: args.train_fraction,
        seed: args.seed,
        iterations: args.iterations,
        candidates: args.candidates,
        holdout_top: args.holdout_top,
        alpha: args.alpha,
        max_cost: settings.max_cost,
        threshold: settings.trigger_threshold,
    }
}

/// The reviewer notes of every `--feedback`, saying how many items each left out.
fn notes(ctx: &LoadCtx, args: &DescriptionArgs) -> Result<Vec<optimize::feedback::Note>, Exit> {
    let mut notes = Vec::new();
    for f in &args.feedback {
        let path = ctx.cwd.join(f);
        let shown = ctx.shown(&path).display().to_string();
        let read = optimize::feedback::read(&path, &ctx.cwd, &shown).map_err(|e| {
            tell!("error: {e}");
            Exit::BadInput
        })?;
        if read.other > 0 {
            tell!(
                "note: {} item(s) of {}'s feedback are not on a trigger case-run recorded there, and are left out",
                read.other,
                ctx.shown(&path).display()
            );
        }
        notes.extend(read.notes);
    }
    Ok(notes)
}

/// The proposer: `--proposer`, else the judge `--judge` or `ASSAY_JUDGE` chooses.
fn proposer(
    args: &DescriptionArgs,
    base: &Suite,
) -> Result<(crate::judge::provider::Judge, crate::judge::JudgeInfo), Exit> {
    let host = crate::host::HostEnv::from_process();
    let flags = crate::judge::Flags {
        judge: args.proposer.as_deref().or(args.judge.judge.as_deref()),
        transport: args.judge.transport.as_deref(),
    };
    crate::run::resolve::judge::select(
        flags,
        &base.defaults.judge,
        &host,
        crate::judge::CallLimits::from_env(&host),
        &crate::suite::RunnerVars::default(),
    )
    .map_err(|why| {
        tell!("error: no proposer: {why}");
        tell!(
            "  fix: pass --proposer (anthropic, openai, claude-cli, codex-cli, or provider:model)"
        );
        Exit::Infrastructure
    })
}

/// The optimisation's folder (`--resume`'s, `--output-dir`, or a fresh one under
/// `.assay/optimize`) and the record to go on from.
fn folder(
    ctx: &LoadCtx,
    settings: &RunSettings,
) -> Result<(PathBuf, Option<optimize::Record>), Exit> {
    let resume = match &settings.resume {
        Some(dir) => Some(optimize::load(&ctx.cwd.join(dir)).map_err(|e| {
            tell!("error: {e}");
            Exit::BadInput
        })?),
        None => None,
    };
    let dir = match (&settings.resume, &settings.output_dir) {
        (Some(d), _) | (None, Some(d)) => ctx.cwd.join(d),
        (None, None) => crate::record::folder::fresh_stamped(&ctx.cwd.join(".assay/optimize")),
    };
    Ok((dir, resume))
}

/// The record (with `--json`), before and after, the verdict and the diff; the description
/// written with `--write`. Lines go to stderr with `--json`.
fn print_record(ctx: &LoadCtx, args: &DescriptionArgs, rec: &optimize::Record) -> Exit {
    if args.json {
        super::print_json(rec);
    }
    let best = rec
        .best
        .as_ref()
        .map(|b| b.description.clone())
        .unwrap_or_default();
    let say_or_tell = |line: &str| {
        if args.json {
            tell!("{line}");
        } else {
            say!("{line}");
        }
    };
    if let Some(start) = &rec.start {
        say_or_tell(&format!("before: {}", optimize::line(start)));
    }
    if let Some(b) = &rec.best {
        say_or_tell(&format!("after:  {}", optimize::line(b)));
    }
    if let Some(why) = &rec.stopped {
        say_or_tell(&format!("stopped early by {why}"));
    }
    say_or_tell(&rec.verdict);
    if !rec.improved {
        return Exit::Success;
    }
    let text = std::fs::read_to_string(&rec.file).unwrap_or_default();
    let diff = optimize::diff(&text, &optimize::description::replace(&text, &best));
    for l in diff.lines() {
        say_or_tell(l);
    }
    if !args.write {
        say_or_tell("(pass --write to apply it)");
        return Exit::Success;
    }
    match optimize::apply(&rec.file, &best) {
        Ok(_) => say_or_tell(&format!("wrote {}", ctx.shown(&rec.file).display())),
        Err(e) => {
            tell!(
                "error: cannot write {}: {e}",
                ctx.shown(&rec.file).display()
            );
            return Exit::Infrastructure;
        }
    }
    Exit::Success
}

/// The suite trigger evals of the skill run in, and its queries (and the holdout they give):
/// from `--queries`, or from every suite under the paths whose skill is this one.
fn queries_for(
    ctx: &LoadCtx,
    args: &DescriptionArgs,
    skill: &Skill,
) -> Result<optimize::queries::Gathered, Exit> {
    let options = match &args.queries {
        Some(file) => Options {
            evals: Some(file.clone()),
            ..Options::default()
        },
        None => Options {
            paths: args.paths.clone(),
            ..Options::default()
        },
    };
    let loaded = discover::discover(ctx, &options);
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) {
        return Err(Exit::BadInput);
    }
    optimize::queries::gather(&loaded.suites, skill, args.queries.is_some()).ok_or_else(|| {
        tell!(
            "error: no trigger queries for {}: none of the suites found tests it with triggers",
            skill.name
        );
        tell!(
            "  fix: add triggers (BMAD triggers.json, agentskills.io train_queries.json, clauditor trigger_tests), or pass --queries FILE"
        );
        Exit::BadInput
    })
}
