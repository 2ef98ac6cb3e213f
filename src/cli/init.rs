//! `assay init [SKILL_PATH] [--format F] [--force]`: a starter suite for a skill or slash
//! command, in the chosen format, where that format's runner looks: two cases that exercise
//! the skill, trigger queries (some that should fire, near misses that should not), checks a
//! first run can pass, and an `assay.toml` when the project has none. What it writes is loaded
//! back and validated before it says so; nothing is overwritten without `--force`.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{Selection, load, print_problems};
use crate::exit::Outcome;
use crate::spec::formats::LoadCtx;
use crate::spec::formats::write::{self, RunSeed};

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

pub fn run(ctx: &LoadCtx, args: &InitArgs) -> Outcome {
    match (&args.from_run, &args.case) {
        (Some(run_dir), Some(case)) => return from_run(ctx, &ctx.cwd.join(run_dir), case),
        (Some(run_dir), None) => return list_cases(ctx, &ctx.cwd.join(run_dir)),
        _ => {}
    }
    let path = match &args.skill {
        Some(p) => ctx.cwd.join(p),
        None => match only_skill(&ctx.cwd) {
            Ok(p) => p,
            Err(why) => {
                tell!("error: {why}");
                return Outcome::BadInput;
            }
        },
    };
    let Some(skill) = crate::spec::skill::read(&path) else {
        tell!(
            "error: {} is neither a skill folder with a SKILL.md nor a command file",
            ctx.shown(&path).display()
        );
        return Outcome::BadInput;
    };
    // The skill's own project (its nearest assay.toml, .git, _bmad or .claude), where that
    // project's runner looks; the current folder when nothing marks one.
    let Some(format) = write::by_name(&args.format) else {
        tell!("error: `{}` is not a format assay writes", args.format);
        return Outcome::BadInput;
    };
    // A format's own root (a UAAPS package: the folder holding its `skills/`).
    let root = match (&args.skill, format.own_root(&path)) {
        (Some(_), Some(own)) => own,
        (Some(_), None) => {
            crate::discover::project_root(path.parent().unwrap_or(&ctx.cwd), &ctx.cwd)
        }
        (None, _) => ctx.cwd.clone(),
    };
    let files = match format.starter(&root, &skill) {
        Ok(f) => f,
        Err(why) => {
            tell!("error: {why}");
            return Outcome::BadInput;
        }
    };
    let mut files = files;
    if !root.join("assay.toml").exists() {
        files.push((
            root.join("assay.toml"),
            "# assay's settings for this project (see docs/running.md). The harness: claude-code,\n# codex, command or a plugin's.\n[run]\nharness = \"claude-code\"\n".into(),
        ));
    }
    let existing: Vec<&PathBuf> = files
        .iter()
        .map(|(p, _)| p)
        .filter(|p| p.exists() && !p.ends_with("assay.toml"))
        .collect();
    if !existing.is_empty() && !args.force {
        for p in existing {
            tell!(
                "error: {} already exists (pass --force to replace it)",
                ctx.shown(p).display()
            );
        }
        return Outcome::BadInput;
    }
    let loaded = match write_and_validate(ctx, &root, format, &files) {
        Ok(loaded) => loaded,
        Err(outcome) => return outcome,
    };
    let cases: usize = loaded.suites.iter().map(|s| s.cases.len()).sum();
    let triggers: usize = loaded.suites.iter().map(|s| s.triggers.len()).sum();
    say!(
        "ok: a {} suite for `{}`: {cases} case(s), {triggers} trigger queries; it validates.",
        format.title(),
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
    Outcome::Success
}

/// Writes a starter's files (never through a symbolic link) and loads them back as `assay
/// validate` would; what does not validate is undone (files created removed, files `--force`
/// replaced put back).
fn write_and_validate(
    ctx: &LoadCtx,
    root: &Path,
    format: &dyn write::Dialect,
    files: &[(PathBuf, String)],
) -> Result<crate::spec::Loaded, Outcome> {
    // Never through a symbolic link (a repository can ship one pointing anywhere): neither the
    // file nor any folder on its way below the project may be a link.
    for (p, _) in files {
        if let Some(link) = link_on_the_way(root, p) {
            tell!(
                "error: {} is a symbolic link: assay init writes no file through one",
                ctx.shown(&link).display()
            );
            return Err(Outcome::BadInput);
        }
    }
    // Kept so that a failure puts back what --force replaced.
    let replaced: Vec<(PathBuf, Vec<u8>)> = files
        .iter()
        .filter_map(|(p, _)| Some((p.clone(), std::fs::read(p).ok()?)))
        .collect();
    // What this run creates (not what --force replaces), removed again if it does not validate.
    let created: Vec<PathBuf> = files
        .iter()
        .map(|(p, _)| p.clone())
        .filter(|p| !p.exists())
        .collect();
    for (p, text) in files {
        if let Err(e) = p
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(p, text))
        {
            tell!("error: cannot write {}: {e}", ctx.shown(p).display());
            return Err(Outcome::Infrastructure);
        }
        say!("wrote {}", ctx.shown(p).display());
    }
    // Loaded back as `assay validate` would: what was written must be a valid suite.
    // One path per suite: a BMAD suite is its folder's evals.json (with triggers.json), a
    // Skillet suite its folder of cases.
    let mut suite_files: Vec<PathBuf> = files
        .iter()
        .map(|(p, _)| p.clone())
        .filter(|p| !p.ends_with("assay.toml") && !p.ends_with("package.agent.json"))
        .filter(|p| {
            !p.file_name().is_some_and(|n| {
                crate::spec::formats::bmad::triggers::TRIGGER_FILES
                    .iter()
                    .any(|t| n == *t)
            })
        })
        .map(|p| format.suite_path(&p))
        .collect();
    suite_files.dedup();
    let loaded = load(
        ctx,
        &Selection {
            paths: suite_files,
            skill: None,
            evals: None,
        },
    );
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) || loaded.suites.is_empty() {
        for p in &created {
            if let Err(e) = std::fs::remove_file(p) {
                tell!("error: cannot remove {}: {e}", ctx.shown(p).display());
            }
        }
        for (p, bytes) in &replaced {
            if let Err(e) = std::fs::write(p, bytes) {
                tell!("error: cannot restore {}: {e}", ctx.shown(p).display());
            }
        }
        tell!("error: the starter suite does not validate (what was written is undone)");
        return Err(Outcome::Infrastructure);
    }
    Ok(loaded)
}

/// The project's only skill or command, where agents look for them.
fn only_skill(root: &Path) -> Result<PathBuf, String> {
    let mut found = Vec::new();
    for dir in [".claude/skills", ".agents/skills", "skills"] {
        for e in std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            if e.path().join("SKILL.md").is_file() {
                found.push(e.path());
            }
        }
    }
    for e in std::fs::read_dir(root.join(".claude/commands"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "md") && p.is_file() {
            found.push(p);
        }
    }
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err("no skill or slash command here: pass its path (a folder with SKILL.md, or .claude/commands/<name>.md)".into()),
        n => Err(format!(
            "{n} skills and commands here: pass the one to write evals for ({})",
            found
                .iter()
                .filter_map(|p| p.strip_prefix(root).ok())
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The most of a reviewer's note written into a case (characters).
const MAX_NOTE: usize = 2000;

/// A run folder's case-runs of artifact cases with the skill (not triggers, not baselines), by
/// suite, case and run.
fn skill_case_runs(run_dir: &Path) -> Vec<(PathBuf, crate::record::CaseRunRecord)> {
    use crate::record::case_run::{Kind, Variant};
    let mut found: Vec<(PathBuf, crate::record::CaseRunRecord)> =
        crate::record::folder::case_run_dirs(run_dir)
            .into_iter()
            .filter_map(|d| Some((d.clone(), crate::record::read_case_run(&d).ok()?)))
            .filter(|(_, r)| r.kind == Kind::Case && r.variant == Variant::Skill)
            .collect();
    found.sort_by(|(_, a), (_, b)| (&a.suite, &a.case, a.run).cmp(&(&b.suite, &b.case, b.run)));
    found
}

/// The run folder's feedback.json, or the error naming it.
fn run_feedback(run_dir: &Path) -> Result<Option<crate::record::feedback::FeedbackFile>, Outcome> {
    crate::record::feedback::read(run_dir).map_err(|e| {
        tell!("error: {e}");
        Outcome::BadInput
    })
}

/// `--from-run <run-dir>` alone: the cases it can take, with any reviewer's verdict.
fn list_cases(ctx: &LoadCtx, run_dir: &Path) -> Outcome {
    use crate::record::case_run::Variant;
    use crate::record::grading::Verdict;
    let found = skill_case_runs(run_dir);
    if found.is_empty() {
        tell!(
            "error: {} has no recorded case-run of a case with the skill",
            ctx.shown(run_dir).display()
        );
        return Outcome::BadInput;
    }
    let feedback = match run_feedback(run_dir) {
        Ok(f) => f,
        Err(o) => return o,
    };
    for (_, r) in &found {
        let review = feedback
            .as_ref()
            .and_then(|f| f.find(&r.suite, &r.case, r.run, Variant::Skill))
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
    Outcome::Success
}

/// `--from-run <run-dir> --case <id>`: the case-run's prompt (the case's own, as its suite
/// says it) and its recorded output, as a new case of the same suite. A reviewer's verdict on
/// it in the run's feedback.json is used: a `bad` one's note becomes what the new case must
/// get right (the recorded answer kept only as the one not to give), a `good` one is said.
fn from_run(ctx: &LoadCtx, run_dir: &Path, case: &str) -> Outcome {
    use crate::record::case_run::Variant;
    use crate::record::feedback::Review;
    let feedback = match run_feedback(run_dir) {
        Ok(f) => f,
        Err(o) => return o,
    };
    let found: Vec<(PathBuf, crate::record::CaseRunRecord)> = skill_case_runs(run_dir)
        .into_iter()
        .filter(|(_, r)| r.case == case)
        .collect();
    let review_of = |r: &crate::record::CaseRunRecord| {
        feedback
            .as_ref()
            .and_then(|f| f.find(&r.suite, &r.case, r.run, Variant::Skill))
            .map(|i| (i.verdict, crate::text::shorten(i.note.trim(), MAX_NOTE)))
    };
    // The first reviewed run, else the first run.
    let pick = found
        .iter()
        .position(|(_, r)| review_of(r).is_some())
        .unwrap_or(0);
    let Some((dir, record)) = found.into_iter().nth(pick) else {
        tell!(
            "error: {} has no recorded case-run of a case `{case}` (with the skill)",
            ctx.shown(run_dir).display()
        );
        return Outcome::BadInput;
    };
    let review = review_of(&record);
    let bad = review.as_ref().is_some_and(|(v, _)| *v == Review::Bad);
    let output = std::fs::read_to_string(dir.join("output.txt")).unwrap_or_default();
    if output.trim().is_empty() && !bad {
        tell!(
            "error: the case-run in {} recorded no output to expect",
            ctx.shown(&dir).display()
        );
        return Outcome::BadInput;
    }
    // The suite as it is now, and the case's own prompt (not the expanded one that was sent).
    let loaded = load(
        ctx,
        &Selection {
            paths: vec![ctx.cwd.join(&record.suite_source)],
            skill: None,
            evals: None,
        },
    );
    let Some((suite, prompt)) = loaded
        .suites
        .iter()
        .find(|s| s.id == record.suite)
        .and_then(|s| {
            let c = s.cases.iter().find(|c| c.id == record.case)?;
            Some((s, c.turns.first()?.clone()))
        })
    else {
        tell!(
            "error: the suite {} (from {}) no longer has the case `{case}`",
            record.suite,
            record.suite_source.display()
        );
        return Outcome::BadInput;
    };
    let source = ctx.cwd.join(&record.suite_source);
    let seed = RunSeed {
        case: case.to_string(),
        run: record.run,
        prompt,
        output,
        review: review.clone(),
        recorded_in: ctx.shown(&dir).display().to_string(),
    };
    let written = match write::for_suite(suite) {
        Some(format) => format.case_from_run(&source, &seed),
        None => Err(format!("assay writes no case into {}", source.display())),
    };
    let (path, text) = match written {
        Ok(w) => w,
        Err(why) => {
            tell!("error: {why}");
            return Outcome::BadInput;
        }
    };
    if let Some(link) = link_on_the_way(&ctx.cwd, &path) {
        tell!(
            "error: {} is a symbolic link: assay init writes no file through one",
            ctx.shown(&link).display()
        );
        return Outcome::BadInput;
    }
    let before = std::fs::read(&path).ok();
    if let Err(e) = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, &text))
    {
        tell!("error: cannot write {}: {e}", ctx.shown(&path).display());
        return Outcome::Infrastructure;
    }
    let again = load(
        ctx,
        &Selection {
            paths: vec![source.clone()],
            skill: None,
            evals: None,
        },
    );
    print_problems(&again.problems);
    if again.problems.iter().any(|p| p.is_error()) {
        // Put back what was there.
        let restored = match &before {
            Some(b) => std::fs::write(&path, b),
            None => std::fs::remove_file(&path),
        };
        if let Err(e) = restored {
            tell!("error: cannot restore {}: {e}", ctx.shown(&path).display());
        }
        tell!("error: the new case does not validate (undone); this is a bug in assay init");
        return Outcome::Infrastructure;
    }
    match &review {
        Some((Review::Bad, _)) => say!(
            "wrote {}: a new case with the prompt of `{case}` (run {}), and the reviewer's `bad` note as what it must get right",
            ctx.shown(&path).display(),
            record.run
        ),
        Some((Review::Good, _)) => say!(
            "wrote {}: a new case with the prompt of `{case}` (run {}) and its recorded output, which a reviewer marked good, as expected",
            ctx.shown(&path).display(),
            record.run
        ),
        None => say!(
            "wrote {}: a new case with the prompt of `{case}` and its recorded output as expected",
            ctx.shown(&path).display()
        ),
    }
    Outcome::Success
}

/// The first symbolic link on the way from `root` to `path` (the file itself included), if
/// any; a path outside `root` counts as its own first step.
fn link_on_the_way(root: &Path, path: &Path) -> Option<PathBuf> {
    let rel = path.strip_prefix(root).ok()?;
    let mut at = root.to_path_buf();
    for c in rel.components() {
        at.push(c);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(at);
        }
    }
    None
}
