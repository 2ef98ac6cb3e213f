//! `assay grade`: grade a pre-captured output against a spec without running any agent
//! (clauditor's captured-output mode), or re-grade a past run folder (for changed checks or
//! a different judge). `--against` adds a blind A/B comparison.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{GradeArgs, Selection, load, print_problems};
use crate::assert::builtin::urls::UrlPolicy;
use crate::assert::check::Checks;
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::grade::ab::Tally;
use crate::grade::captured::{Captured, needs_judge, pick_case};
use crate::grade::regrade::{self, Recorded};
use crate::grade::regrading::{self, CaseRunRegraded, Regrading};
use crate::grade::{self, Graded};
use crate::host::HostEnv;
use crate::judge::compare::{Comparison, Preference};
use crate::record::grading::Verdict;
use crate::record::layout;
use crate::suite::{Case, Suite};

pub fn run(ctx: &LoadCtx, args: &GradeArgs, plugins: &crate::plugin::Plugins) -> Exit {
    let path = ctx.cwd.join(&args.path);
    if path.join(layout::RUN_JSON).is_file() {
        if args.output.is_some() {
            tell!(
                "error: {} is a run folder; --output grades a captured output against a spec",
                args.path.display()
            );
            return Exit::BadInput;
        }
        return regrade_run(ctx, args, &path, plugins);
    }
    captured(ctx, args, &path, plugins)
}

/// What `assay grade` looks at, for finding plugins: the spec, or a run folder's projects.
pub fn scope(ctx: &LoadCtx, args: &GradeArgs) -> Vec<PathBuf> {
    let path = ctx.cwd.join(&args.path);
    let run = path.join(layout::RUN_JSON);
    if !run.is_file() {
        return vec![path];
    }
    let projects: Vec<PathBuf> = std::fs::read_to_string(&run)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("projects").and_then(Value::as_object).cloned())
        .map(|o| o.keys().map(PathBuf::from).collect())
        .unwrap_or_default();
    if projects.is_empty() {
        vec![ctx.cwd.clone()]
    } else {
        projects
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, Exit> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            tell!("error: cannot start the async runtime: {e}");
            Exit::Infrastructure
        })
}

fn checks(args: &GradeArgs, plugins: &crate::plugin::Plugins) -> Checks {
    let mut checks = Checks::builtin(UrlPolicy {
        allow_private: args.checks.allow_private_urls,
        ..UrlPolicy::default()
    });
    plugins.install(&mut checks);
    checks
}

/// `assay grade <spec> --output <file>`.
fn captured(
    ctx: &LoadCtx,
    args: &GradeArgs,
    path: &Path,
    plugins: &crate::plugin::Plugins,
) -> Exit {
    let (output_path, output, against) = match captured_inputs(ctx, args) {
        Ok(read) => read,
        Err(o) => return o,
    };
    let Some(loaded) = load_specs(ctx, vec![path.to_path_buf()]) else {
        return Exit::BadInput;
    };
    let (suite, case) = match pick_case(&loaded.suites, args.case.as_deref()) {
        Ok(found) => found,
        Err(why) => {
            tell!("error: {why}");
            return Exit::BadInput;
        }
    };
    if !case.fixtures.is_empty() {
        match suite.policies.output_bypass_warning {
            Some(said) => tell!("{said}"),
            None => {
                tell!("warning: --output bypasses the runner; the case's fixtures are ignored.")
            }
        }
    }
    let host = HostEnv::from_process();
    let mut judges = Vec::new();
    let slot = (needs_judge(case) || against.is_some())
        .then(|| crate::run::judge_for(&mut judges, args.judge.flags(), suite, &host, None));
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(o) => return o,
    };
    let captured = rt.block_on(grade::captured::grade(
        suite,
        case,
        output,
        against.as_deref(),
        &checks(args, plugins),
        slot.as_ref(),
    ));
    if args.json {
        super::print_json(&captured.json(suite, case, output_path));
    } else {
        print_captured(args, (suite, case), output_path, &captured);
    }
    exit_for([&captured.graded].into_iter(), captured.comparison.iter())
}

/// The captured output's file and text, and the text of the one to compare it with.
fn captured_inputs<'a>(
    ctx: &LoadCtx,
    args: &'a GradeArgs,
) -> Result<(&'a Path, String, Option<String>), Exit> {
    let Some(output_path) = &args.output else {
        tell!(
            "error: {} is not a run folder (no run.json); to grade a captured output give it with --output <file>",
            args.path.display()
        );
        return Err(Exit::BadInput);
    };
    let output = std::fs::read_to_string(ctx.cwd.join(output_path)).map_err(|e| {
        tell!(
            "error: {}: cannot read the output: {e}",
            output_path.display()
        );
        Exit::BadInput
    })?;
    let against = match &args.against {
        Some(p) => Some(std::fs::read_to_string(ctx.cwd.join(p)).map_err(|e| {
            tell!(
                "error: {}: cannot read the output to compare against: {e}",
                p.display()
            );
            Exit::BadInput
        })?),
        None => None,
    };
    Ok((output_path, output, against))
}

/// The specs at `paths`, their problems printed; none when one is an error.
fn load_specs(ctx: &LoadCtx, paths: Vec<PathBuf>) -> Option<super::Loaded> {
    let loaded = load(
        ctx,
        &Selection {
            paths,
            skill: None,
            evals: None,
        },
    );
    print_problems(&loaded.problems);
    (!loaded.problems.iter().any(|p| p.is_error())).then_some(loaded)
}

/// A captured output graded, as text: the verdict and its detail, the checks it skipped,
/// the comparison.
fn print_captured(args: &GradeArgs, (suite, case): (&Suite, &Case), output: &Path, c: &Captured) {
    print_graded(&format!("{}/{}", suite.id, case.id), &c.graded, true);
    for c in &c.skipped {
        say!(
            "  - {} ({}): skipped, it needs a run, not a captured output",
            c.id,
            c.kind
        );
    }
    if let Some(comparison) = &c.comparison {
        let label = format!(
            "{} vs {}",
            output.display(),
            args.against.as_deref().unwrap_or(Path::new("")).display()
        );
        print_comparison(&label, comparison);
    }
}

fn print_comparison(label: &str, c: &Result<Comparison, String>) {
    match c {
        Ok(c) => {
            let who = match c.preferred {
                Preference::A => "A is better",
                Preference::B => "B is better",
                Preference::Tie => "tie",
            };
            say!(
                "blind A/B {label}: {who} (confidence {:.2}{})",
                c.confidence,
                if c.consistent {
                    ""
                } else {
                    "; the two orders disagreed"
                }
            );
            for r in &c.rounds {
                let first = if r.shown_first == Preference::A {
                    "A"
                } else {
                    "B"
                };
                say!(
                    "  {first} shown first: {:?} at {:.2}: {}",
                    r.preferred,
                    r.confidence,
                    r.reasoning
                );
            }
        }
        Err(e) => say!("blind A/B {label}: {e}"),
    }
}

fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS      ",
        Verdict::Fail => "FAIL      ",
        Verdict::NotGraded => "NOT GRADED",
    }
}

fn tick(passed: bool) -> &'static str {
    if passed { "✓" } else { "✗" }
}

/// The verdict line, then (with `detail`) every check and the judge's findings.
fn print_graded(label: &str, g: &Graded, detail: bool) {
    let mut line = format!("{} {label}", mark(g.grade.verdict));
    if g.grade.checks_total > 0 {
        line.push_str(&format!(
            " [{}/{} checks]",
            g.grade.checks_passed, g.grade.checks_total
        ));
    }
    if !detail && let Some(r) = g.grade.reasons.first() {
        line.push_str(&format!(": {}", r.lines().next().unwrap_or("")));
    }
    say!("{line}");
    if !detail {
        return;
    }
    for c in &g.checks {
        say!("  {} {} ({}): {}", tick(c.passed), c.id, c.kind, c.message);
        if !c.passed
            && let Some(e) = &c.evidence
        {
            say!("      evidence: {e}");
        }
    }
    if let Some(j) = &g.judge {
        print_judge(j);
    }
    if g.grade.verdict != Verdict::Pass {
        for r in &g.grade.reasons {
            say!("  reason: {r}");
        }
    }
}

/// What the judge found: each expectation, the rubric, the criteria, its failure.
fn print_judge(j: &crate::record::grading::JudgeRecord) {
    say!(
        "  judge {}:{} (chosen by {})",
        j.provider,
        j.model,
        j.chosen_by
    );
    if let Some(e) = &j.expectations {
        for x in &e.expectations {
            say!("  {} {}: {}", tick(x.passed), x.text, x.evidence);
        }
    }
    if let Some(r) = &j.rubric {
        print_rubric(r);
    }
    if let Some(c) = &j.criteria {
        say!("  {} criteria: {}", tick(c.pass), c.reasoning);
    }
    if let Some(e) = &j.error {
        say!("  the judge failed: {e}");
    }
}

fn print_rubric(r: &crate::record::grading::RubricGrade) {
    for c in &r.criteria {
        say!(
            "  {} {} ({:.2}): {}",
            tick(c.passed),
            c.id,
            c.score,
            c.reasoning
        );
    }
    match r.thresholds {
        Some(t) => say!(
            "  rubric: pass rate {:.2} (min {:.2}), mean score {:.2} (min {:.2})",
            r.pass_rate,
            t.min_pass_rate,
            r.mean_score,
            t.min_mean_score
        ),
        None => say!(
            "  rubric: pass rate {:.2}, mean score {:.2} (no grade_thresholds: not a gate)",
            r.pass_rate,
            r.mean_score
        ),
    }
}

/// 3 when the judge failed or a comparison could not be made, 1 when something failed, else 0.
fn exit_for<'a>(
    graded: impl Iterator<Item = &'a Graded>,
    comparisons: impl Iterator<Item = &'a Result<Comparison, String>>,
) -> Exit {
    let mut failed = false;
    let mut broken = false;
    for g in graded {
        failed |= g.grade.verdict == Verdict::Fail;
        broken |= g.judge.as_ref().is_some_and(|j| j.error.is_some()) || g.output_cut;
    }
    for c in comparisons {
        broken |= c.is_err();
    }
    if broken {
        Exit::Infrastructure
    } else if failed {
        Exit::Failed
    } else {
        Exit::Success
    }
}

/// The blind A/B tally: `this run better in 3, the other in 1, ties 0, not compared 0`.
fn ab_line(t: Tally) -> String {
    format!(
        "blind A/B: this run better in {}, the other in {}, ties {}, not compared {}",
        t.a, t.b, t.ties, t.not_compared
    )
}

/// `assay grade <run-dir>`.
fn regrade_run(
    ctx: &LoadCtx,
    args: &GradeArgs,
    dir: &Path,
    plugins: &crate::plugin::Plugins,
) -> Exit {
    let (mut recorded, others) = match read_runs(ctx, args, dir) {
        Ok(read) => read,
        Err(o) => return o,
    };
    let Some(loaded) = specs_now(ctx, dir, &recorded) else {
        return Exit::BadInput;
    };
    let host = HostEnv::from_process();
    let home = HostEnv::process_home();
    let redactor = crate::run::redact::for_host(&host.vars, home.as_deref());
    let mut judges = Vec::new();
    let mut judge =
        |s: &Suite| crate::run::judge_for(&mut judges, args.judge.flags(), s, &host, None);
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(o) => return o,
    };
    let with = Regrading {
        suites: &loaded.suites,
        others: others.as_deref(),
        checks: &checks(args, plugins),
    };
    let done = rt.block_on(regrading::regrade_all(
        &mut recorded,
        &with,
        &mut judge,
        &|p: &Path| redactor.file(p),
        &mut |one| print_regraded(args, one),
    ));
    regraded(ctx, args, dir, others.is_some(), &done)
}

/// What re-grading a run folder ends with: the A/B tally, the JSON or the count, the
/// reports written again; the exit.
fn regraded(
    ctx: &LoadCtx,
    args: &GradeArgs,
    dir: &Path,
    against: bool,
    done: &[CaseRunRegraded],
) -> Exit {
    let graded: Vec<&Graded> = done
        .iter()
        .filter_map(|d| d.regraded())
        .map(|r| &r.graded)
        .collect();
    let comparisons = || {
        done.iter()
            .filter_map(|d| d.regraded()?.comparison.as_ref())
    };
    if against && !args.json {
        say!("{}", ab_line(Tally::of(comparisons())));
    }
    if args.json {
        super::print_json(&regrading::json(dir, done));
    } else {
        say!(
            "re-graded {} case-run(s) in {}",
            graded.len(),
            ctx.shown(dir).display()
        );
    }
    let unrecorded = done
        .iter()
        .any(|d| d.regraded().is_some_and(|r| r.unrecorded.is_some()));
    let rewritten = graded.is_empty() || rewrite_reports(ctx, dir);
    if unrecorded || !rewritten {
        return Exit::Infrastructure;
    }
    exit_for(graded.into_iter(), comparisons())
}

/// The run folder's case-runs, and the other run's (`--against`).
fn read_runs(
    ctx: &LoadCtx,
    args: &GradeArgs,
    dir: &Path,
) -> Result<(Vec<Recorded>, Option<Vec<Recorded>>), Exit> {
    let bad = |e: crate::record::ReadError| {
        tell!("error: {e}");
        Exit::BadInput
    };
    let recorded = regrade::read_run(dir).map_err(bad)?;
    let others = match &args.against {
        Some(b) => Some(regrade::read_run(&ctx.cwd.join(b)).map_err(bad)?),
        None => None,
    };
    Ok((recorded, others))
}

/// One case-run graded again (or skipped), as it is done: what it says, and why its new
/// grading is not recorded when it is not.
fn print_regraded(args: &GradeArgs, one: &CaseRunRegraded) {
    let label = &one.label;
    let r = match &one.regrade {
        regrading::Regrade::Skipped { said, .. } => {
            if !args.json {
                say!("skipped    {label}: {said}");
            }
            return;
        }
        regrading::Regrade::Graded(r) => r,
    };
    if let Some(e) = &r.unrecorded {
        tell!(
            "error: {label}: the new grading was not recorded in {}: {e}",
            r.dir.display()
        );
    }
    if args.json {
        return;
    }
    print_graded(label, &r.graded, false);
    if let Some(c) = &r.comparison {
        print_comparison(label, c);
    }
}

/// The specs as they are now, from where each suite of the run folder was read.
fn specs_now(ctx: &LoadCtx, dir: &Path, recorded: &[Recorded]) -> Option<super::Loaded> {
    let sources = regrade::suite_sources(recorded);
    if sources.is_empty() {
        tell!(
            "error: {}: the run folder does not say where its suites came from",
            dir.display()
        );
        return None;
    }
    load_specs(ctx, sources)
}

/// Every report the run folder holds, written again from it with the new verdicts (the JUnit
/// file, the summary, the HTML page, skill-creator's benchmark and workspace, …); false when
/// one could not be.
fn rewrite_reports(ctx: &LoadCtx, dir: &Path) -> bool {
    let formats = crate::report::written_in(dir);
    if formats.is_empty() {
        return true;
    }
    let mut r = match crate::report::read(dir) {
        Ok(r) => r,
        Err(e) => {
            tell!("error: the reports were not written again: {e}");
            return false;
        }
    };
    r.dir = ctx.shown(dir);
    let mut ok = true;
    for f in formats {
        match crate::report::write(&r, f, dir) {
            Ok(_) => tell!("report: {}", ctx.shown(&dir.join(f.file_name())).display()),
            Err(e) => {
                tell!("error: writing the {f:?} report again: {e}");
                ok = false;
            }
        }
    }
    ok
}
