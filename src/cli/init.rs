//! `assay init [SKILL_PATH] [--format F] [--force]`: a starter suite for a skill or slash
//! command, in the chosen format, where that format's runner looks: two cases that exercise
//! the skill, trigger queries (some that should fire, near misses that should not), checks a
//! first run can pass, and an `assay.toml` when the project has none. What it writes is loaded
//! back and validated before it says so; nothing is overwritten without `--force`.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{Selection, load, print_problems};
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::formats::from_run::{self, SkillRun};
use crate::formats::starter::{self, Starter, UndoError, WriteError, Written};
use crate::formats::write::{self, RunSeed};
use crate::record::feedback::Review;
use crate::record::layout;

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The skill (a folder with SKILL.md) or slash command file (`.claude/commands/<name>.md`).
    /// Default: the project's only one, under `.claude/skills`, `.claude/commands`,
    /// `.agents/skills` or `skills`.
    pub skill: Option<PathBuf>,
    /// The format to write: clauditor, bmad, skill-creator (`<skill>/evals/evals.json`),
    /// bmad-cases (the current BMAD runner's cases.json), skillet or uaaps.
    #[arg(long, default_value = "clauditor", value_parser = clap::builder::PossibleValuesParser::new(write::names()))]
    pub format: String,
    /// Replace files that already exist.
    #[arg(long)]
    pub force: bool,
    /// Turn a recorded case-run into a new case of its suite (with --case): its prompt, and
    /// its output as what is expected (as Skillet's `/gap` saves a bad answer as a test); a
    /// reviewer's `bad` note in the run's feedback.json becomes what the case must get right.
    /// Without --case: lists the run's cases.
    #[arg(long, value_name = "RUN_DIR", conflicts_with = "skill")]
    pub from_run: Option<PathBuf>,
    /// The case id whose recorded case-run --from-run takes (its first run with the skill that
    /// a reviewer judged in feedback.json, else its first run with the skill).
    #[arg(long, value_name = "ID", requires = "from_run")]
    pub case: Option<String>,
}

pub fn run(ctx: &LoadCtx, args: &InitArgs) -> Exit {
    match (&args.from_run, &args.case) {
        (Some(run_dir), Some(case)) => return from_run(ctx, &ctx.cwd.join(run_dir), case),
        (Some(run_dir), None) => return list_cases(ctx, &ctx.cwd.join(run_dir)),
        _ => {}
    }
    let (dialect, skill, planned) = match plan(ctx, args) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let existing = planned.existing();
    if !existing.is_empty() && !args.force {
        for p in existing {
            tell!(
                "error: {} already exists (pass --force to replace it)",
                ctx.shown(p).display()
            );
        }
        return Exit::BadInput;
    }
    let loaded = match write_and_validate(ctx, dialect, &planned) {
        Ok(loaded) => loaded,
        Err(outcome) => return outcome,
    };
    let cases: usize = loaded.suites.iter().map(|s| s.cases.len()).sum();
    let triggers: usize = loaded.suites.iter().map(|s| s.triggers.len()).sum();
    say!(
        "ok: a {} suite for `{}`: {cases} case(s), {triggers} trigger queries; it validates.",
        dialect.title(),
        skill.name
    );
    say!("next:");
    say!("  - edit the prompts so they ask for what the skill really does, with real inputs;");
    say!(
        "  - replace the placeholder checks with ones that fail when the skill does its job badly;"
    );
    if triggers > 0 {
        say!("  - make the trigger queries look like what your users type (near misses too);");
    }
    say!("  - `assay doctor`, then `assay run` (or `assay run --dry-run` to see the plan).");
    Exit::Success
}

/// The dialect, the skill and the starter planned for it.
fn plan(
    ctx: &LoadCtx,
    args: &InitArgs,
) -> Result<(&'static dyn write::Dialect, crate::suite::Skill, Starter), Exit> {
    let bad = |why: String| {
        tell!("error: {why}");
        Exit::BadInput
    };
    let path = match &args.skill {
        Some(p) => ctx.cwd.join(p),
        None => starter::only_skill(&ctx.cwd).map_err(bad)?,
    };
    let Some(skill) = crate::suite::skill::read(&path) else {
        return Err(bad(format!(
            "{} is neither a skill folder with a SKILL.md nor a command file",
            ctx.shown(&path).display()
        )));
    };
    let Some(dialect) = write::by_name(&args.format) else {
        return Err(bad(format!(
            "`{}` is not a format assay writes",
            args.format
        )));
    };
    let planned =
        starter::starter(dialect, &ctx.cwd, &path, args.skill.is_some(), &skill).map_err(bad)?;
    Ok((dialect, skill, planned))
}

/// Writes a starter's files (never through a symbolic link) and loads them back as `assay
/// validate` would; what does not validate is undone (files created removed, files `--force`
/// replaced put back).
fn write_and_validate(
    ctx: &LoadCtx,
    dialect: &dyn write::Dialect,
    planned: &Starter,
) -> Result<crate::suite::Loaded, Exit> {
    let written = write(ctx, &planned.root, &planned.files, true)?;
    let loaded = load(
        ctx,
        &Selection {
            paths: planned.suite_paths(dialect),
            skill: None,
            evals: None,
        },
    );
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) || loaded.suites.is_empty() {
        for e in written.undo() {
            tell!("{}", shown_undo(ctx, &e));
        }
        tell!("error: the starter suite does not validate (what was written is undone)");
        return Err(Exit::Infrastructure);
    }
    Ok(loaded)
}

/// Writes the files (saying each when `say_each`), or says why not: through a link is bad
/// input, a write that fails is the machine's.
fn write(
    ctx: &LoadCtx,
    root: &Path,
    files: &[(PathBuf, String)],
    say_each: bool,
) -> Result<Written, Exit> {
    let mut wrote = |p: &Path| {
        if say_each {
            say!("wrote {}", ctx.shown(p).display());
        }
    };
    starter::write_files(root, files, &mut wrote).map_err(|e| match e {
        WriteError::Link(link) => {
            tell!(
                "error: {} is a symbolic link: assay init writes no file through one",
                ctx.shown(&link).display()
            );
            Exit::BadInput
        }
        WriteError::Write(p, e) => {
            tell!("error: cannot write {}: {e}", ctx.shown(&p).display());
            Exit::Infrastructure
        }
    })
}

/// What could not be undone, its path shown from the current folder.
fn shown_undo(ctx: &LoadCtx, e: &UndoError) -> String {
    let verb = match e {
        UndoError::Remove(..) => "remove",
        UndoError::Restore(..) => "restore",
    };
    format!(
        "error: cannot {verb} {}: {}",
        ctx.shown(e.path()).display(),
        e.io()
    )
}

/// The run folder's feedback.json, or the error naming it.
fn run_feedback(run_dir: &Path) -> Result<Option<crate::record::feedback::FeedbackFile>, Exit> {
    crate::record::feedback::read(run_dir).map_err(|e| {
        tell!("error: {e}");
        Exit::BadInput
    })
}

/// `--from-run <run-dir>` alone: the cases it can take, with any reviewer's verdict.
fn list_cases(ctx: &LoadCtx, run_dir: &Path) -> Exit {
    use crate::record::grading::Verdict;
    let found = from_run::skill_case_runs(run_dir);
    if found.is_empty() {
        tell!(
            "error: {} has no recorded case-run of a case with the skill",
            ctx.shown(run_dir).display()
        );
        return Exit::BadInput;
    }
    let feedback = match run_feedback(run_dir) {
        Ok(f) => f,
        Err(o) => return o,
    };
    for found in &found {
        let r = &found.record;
        let review = found
            .review(feedback.as_ref())
            .map(|i| {
                let note = crate::text::shorten(&crate::text::one_line(&i.note), 80);
                if note.is_empty() {
                    format!("  reviewed {}", i.verdict.word())
                } else {
                    format!("  reviewed {}: {note}", i.verdict.word())
                }
            })
            .unwrap_or_default();
        say!(
            "{}  --case {}  (run {}, {}){review}",
            crate::text::one_line(&r.suite),
            crate::text::one_line(&r.case),
            r.run,
            match r.grade.as_ref().map(|g| g.verdict) {
                Some(Verdict::Pass) => "passed",
                Some(Verdict::Fail) => "failed",
                Some(Verdict::NotGraded) | None => "not graded",
            }
        );
    }
    say!(
        "pick one: assay init --from-run {} --case <ID>",
        ctx.shown(run_dir).display()
    );
    Exit::Success
}

/// `--from-run <run-dir> --case <id>`: the case-run's prompt (the case's own, as its suite
/// says it) and its recorded output, as a new case of the same suite. A reviewer's verdict on
/// it in the run's feedback.json is used: a `bad` one's note becomes what the new case must
/// get right (the recorded answer kept only as the one not to give), a `good` one is said.
fn from_run(ctx: &LoadCtx, run_dir: &Path, case: &str) -> Exit {
    let (picked, review, output) = match picked(ctx, run_dir, case) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let (source, path, text) = match new_case(ctx, case, &picked, review.clone(), output) {
        Ok(c) => c,
        Err(o) => return o,
    };
    let written = match write(ctx, &ctx.cwd, &[(path.clone(), text)], false) {
        Ok(w) => w,
        Err(o) => return o,
    };
    let again = load(
        ctx,
        &Selection {
            paths: vec![source],
            skill: None,
            evals: None,
        },
    );
    print_problems(&again.problems);
    if again.problems.iter().any(|p| p.is_error()) {
        // Put back what was there.
        for e in written.undo() {
            let shown = ctx.shown(e.path());
            tell!("error: cannot restore {}: {}", shown.display(), e.io());
        }
        tell!("error: the new case does not validate (undone); this is a bug in assay init");
        return Exit::Infrastructure;
    }
    let (shown, run) = (ctx.shown(&path), picked.record.run);
    match &review {
        Some((Review::Bad, _)) => say!(
            "wrote {}: a new case with the prompt of `{case}` (run {run}), and the reviewer's `bad` note as what it must get right",
            shown.display()
        ),
        Some((Review::Good, _)) => say!(
            "wrote {}: a new case with the prompt of `{case}` (run {run}) and its recorded output, which a reviewer marked good, as expected",
            shown.display()
        ),
        None => say!(
            "wrote {}: a new case with the prompt of `{case}` and its recorded output as expected",
            shown.display()
        ),
    }
    Exit::Success
}

/// The case-run `--from-run` takes, the reviewer's verdict on it and its recorded output
/// (which a case-run not reviewed `bad` must have).
type Picked = (SkillRun, Option<(Review, String)>, String);

fn picked(ctx: &LoadCtx, run_dir: &Path, case: &str) -> Result<Picked, Exit> {
    let feedback = run_feedback(run_dir)?;
    let Some(picked) = from_run::pick(run_dir, case, feedback.as_ref()) else {
        tell!(
            "error: {} has no recorded case-run of a case `{case}` (with the skill)",
            ctx.shown(run_dir).display()
        );
        return Err(Exit::BadInput);
    };
    let review = picked.verdict(feedback.as_ref());
    let bad = review.as_ref().is_some_and(|(v, _)| *v == Review::Bad);
    let output = std::fs::read_to_string(picked.dir.join(layout::OUTPUT_TXT)).unwrap_or_default();
    if output.trim().is_empty() && !bad {
        tell!(
            "error: the case-run in {} recorded no output to expect",
            ctx.shown(&picked.dir).display()
        );
        return Err(Exit::BadInput);
    }
    Ok((picked, review, output))
}

/// The new case made of the case-run, in its suite's file as it is now: that file, the file
/// to write (the same, or one beside it) and its new text.
fn new_case(
    ctx: &LoadCtx,
    case: &str,
    picked: &SkillRun,
    review: Option<(Review, String)>,
    output: String,
) -> Result<(PathBuf, PathBuf, String), Exit> {
    let record = &picked.record;
    let source = ctx.cwd.join(&record.suite_source);
    let selection = Selection {
        paths: vec![source.clone()],
        skill: None,
        evals: None,
    };
    let suites = load(ctx, &selection).suites;
    let Some((suite, prompt)) = from_run::suite_and_prompt(&suites, record) else {
        tell!(
            "error: the suite {} (from {}) no longer has the case `{case}`",
            record.suite,
            record.suite_source.display()
        );
        return Err(Exit::BadInput);
    };
    let seed = RunSeed {
        case: case.to_string(),
        run: record.run,
        prompt,
        output,
        review,
        recorded_in: ctx.shown(&picked.dir).display().to_string(),
    };
    match from_run::case_from_run(suite, &source, &seed) {
        Ok((path, text)) => Ok((source, path, text)),
        Err(why) => {
            tell!("error: {why}");
            Err(Exit::BadInput)
        }
    }
}
