//! `assay grade`: grade a pre-captured output against a spec without running any agent
//! (clauditor's captured-output mode), or re-grade a past run folder (for changed checks or
//! a different judge). `--against` adds a blind A/B comparison.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{GradeArgs, Selection, load, print_problems};
use crate::assert::builtin::urls::UrlPolicy;
use crate::assert::check::Checks;
use crate::assert::verdict::Verdict;
use crate::exit::Outcome;
use crate::grade::regrade::{self, Recorded};
use crate::grade::{self, Graded};
use crate::host::HostEnv;
use crate::judge::compare::{Comparison, Preference};
use crate::record::Status;
use crate::record::case_run::Kind;
use crate::spec::formats::LoadCtx;
use crate::spec::{Case, Suite};

pub fn run(ctx: &LoadCtx, args: &GradeArgs, plugins: &crate::plugin::Plugins) -> Outcome {
    let path = ctx.cwd.join(&args.path);
    if path.join("run.json").is_file() {
        if args.output.is_some() {
            tell!(
                "error: {} is a run folder; --output grades a captured output against a spec",
                args.path.display()
            );
            return Outcome::BadInput;
        }
        return regrade_run(ctx, args, &path, plugins);
    }
    captured(ctx, args, &path, plugins)
}

/// What `assay grade` looks at, for finding plugins: the spec, or a run folder's projects.
pub fn scope(ctx: &LoadCtx, args: &GradeArgs) -> Vec<PathBuf> {
    let path = ctx.cwd.join(&args.path);
    let run = path.join("run.json");
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

fn runtime() -> Result<tokio::runtime::Runtime, Outcome> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            tell!("error: cannot start the async runtime: {e}");
            Outcome::Infrastructure
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

/// What a blind comparison is asked about: clauditor's `user_prompt`, else the case's prompt.
/// `assay grade <spec> --output <file>`.
fn captured(
    ctx: &LoadCtx,
    args: &GradeArgs,
    path: &Path,
    plugins: &crate::plugin::Plugins,
) -> Outcome {
    let Some(output_path) = &args.output else {
        tell!(
            "error: {} is not a run folder (no run.json); to grade a captured output give it with --output <file>",
            args.path.display()
        );
        return Outcome::BadInput;
    };
    let output = match std::fs::read_to_string(ctx.cwd.join(output_path)) {
        Ok(t) => t,
        Err(e) => {
            tell!(
                "error: {}: cannot read the output: {e}",
                output_path.display()
            );
            return Outcome::BadInput;
        }
    };
    let against = match &args.against {
        Some(p) => match std::fs::read_to_string(ctx.cwd.join(p)) {
            Ok(t) => Some(t),
            Err(e) => {
                tell!(
                    "error: {}: cannot read the output to compare against: {e}",
                    p.display()
                );
                return Outcome::BadInput;
            }
        },
        None => None,
    };
    let loaded = load(
        ctx,
        &Selection {
            paths: vec![path.to_path_buf()],
            skill: None,
            evals: None,
        },
    );
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) {
        return Outcome::BadInput;
    }
    let (suite, case) = match pick_case(&loaded.suites, args.case.as_deref()) {
        Ok(found) => found,
        Err(why) => {
            tell!("error: {why}");
            return Outcome::BadInput;
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
    let slot = (grade::captured::needs_judge(case) || against.is_some())
        .then(|| crate::run::judge_for(&mut judges, args.judge.flags(), suite, &host, None));
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(o) => return o,
    };
    let grade::captured::Captured {
        graded,
        skipped,
        comparison,
    } = rt.block_on(grade::captured::grade(
        suite,
        case,
        output,
        against.as_deref(),
        &checks(args, plugins),
        slot.as_ref(),
    ));

    if args.json {
        let mut out = json!({
            "suite": suite.id,
            "case": case.id,
            "output": output_path,
            "grading": grade::grading_json(&graded.checks, graded.judge.as_ref(), Some(&graded.grade)),
            "skipped_checks": skipped.iter().map(|c| json!({"id": c.id, "kind": c.kind, "reason": "needs a run (transcript, workspace or process), not a captured output"})).collect::<Vec<_>>(),
        });
        if let Some(c) = &comparison {
            out["comparison"] = comparison_json(c);
        }
        super::print_json(&out);
    } else {
        print_graded(&format!("{}/{}", suite.id, case.id), &graded, true);
        for c in &skipped {
            say!(
                "  - {} ({}): skipped, it needs a run, not a captured output",
                c.id,
                c.kind
            );
        }
        if let Some(c) = &comparison {
            print_comparison(
                &format!(
                    "{} vs {}",
                    output_path.display(),
                    args.against.as_deref().unwrap_or(Path::new("")).display()
                ),
                c,
            );
        }
    }
    exit_for([&graded].into_iter(), comparison.iter())
}

/// The case to grade: the only one, or the one `--case` names (`case` or `suite/case`).
fn pick_case<'a>(
    suites: &'a [Suite],
    wanted: Option<&str>,
) -> Result<(&'a Suite, &'a Case), String> {
    let all: Vec<(&Suite, &Case)> = suites
        .iter()
        .flat_map(|s| s.cases.iter().map(move |c| (s, c)))
        .collect();
    let names = || {
        all.iter()
            .map(|(s, c)| format!("{}/{}", s.id, c.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match wanted {
        Some(w) => {
            let found: Vec<_> = all
                .iter()
                .filter(|(s, c)| c.id == w || format!("{}/{}", s.id, c.id) == w)
                .collect();
            match found.as_slice() {
                [one] => Ok(**one),
                [] => Err(format!("no case `{w}`; the cases are: {}", names())),
                _ => Err(format!(
                    "`{w}` names several cases; use suite/case: {}",
                    names()
                )),
            }
        }
        None => match all.as_slice() {
            [one] => Ok(*one),
            [] => Err("no cases found to grade".into()),
            _ => Err(format!(
                "the spec has {} cases; choose one with --case: {}",
                all.len(),
                names()
            )),
        },
    }
}

fn comparison_json(c: &Result<Comparison, String>) -> Value {
    match c {
        Ok(c) => serde_json::to_value(c).unwrap_or_default(),
        Err(e) => json!({"error": e}),
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
        say!(
            "  {} {} ({}): {}",
            if c.passed { "✓" } else { "✗" },
            c.id,
            c.kind,
            c.message
        );
        if !c.passed
            && let Some(e) = &c.evidence
        {
            say!("      evidence: {e}");
        }
    }
    if let Some(j) = &g.judge {
        say!(
            "  judge {}:{} (chosen by {})",
            j.provider,
            j.model,
            j.chosen_by
        );
        if let Some(e) = &j.expectations {
            for x in &e.expectations {
                say!(
                    "  {} {}: {}",
                    if x.passed { "✓" } else { "✗" },
                    x.text,
                    x.evidence
                );
            }
        }
        if let Some(r) = &j.rubric {
            for c in &r.criteria {
                say!(
                    "  {} {} ({:.2}): {}",
                    if c.passed { "✓" } else { "✗" },
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
        if let Some(c) = &j.criteria {
            say!(
                "  {} criteria: {}",
                if c.pass { "✓" } else { "✗" },
                c.reasoning
            );
        }
        if let Some(e) = &j.error {
            say!("  the judge failed: {e}");
        }
    }
    if g.grade.verdict != Verdict::Pass {
        for r in &g.grade.reasons {
            say!("  reason: {r}");
        }
    }
}

/// 3 when the judge failed or a comparison could not be made, 1 when something failed, else 0.
fn exit_for<'a>(
    graded: impl Iterator<Item = &'a Graded>,
    comparisons: impl Iterator<Item = &'a Result<Comparison, String>>,
) -> Outcome {
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
        Outcome::Infrastructure
    } else if failed {
        Outcome::Failed
    } else {
        Outcome::Success
    }
}

/// The specs as they are now, from where each suite of the run folder was read.
fn specs_now(ctx: &LoadCtx, dir: &Path, recorded: &[Recorded]) -> Result<super::Loaded, Outcome> {
    let mut sources: Vec<PathBuf> = recorded
        .iter()
        .map(|r| r.result.suite_source.clone())
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    sources.sort();
    sources.dedup();
    if sources.is_empty() {
        tell!(
            "error: {}: the run folder does not say where its suites came from",
            dir.display()
        );
        return Err(Outcome::BadInput);
    }
    let loaded = load(
        ctx,
        &Selection {
            paths: sources,
            skill: None,
            evals: None,
        },
    );
    print_problems(&loaded.problems);
    if loaded.problems.iter().any(|p| p.is_error()) {
        return Err(Outcome::BadInput);
    }
    Ok(loaded)
}

/// The blind A/B tally: `this run better in 3, the other in 1, ties 0, not compared 0`.
fn ab_line(comparisons: &[Result<Comparison, String>]) -> String {
    let count = |p: Preference| {
        comparisons
            .iter()
            .filter(|c| matches!(c, Ok(c) if c.preferred == p))
            .count()
    };
    format!(
        "blind A/B: this run better in {}, the other in {}, ties {}, not compared {}",
        count(Preference::A),
        count(Preference::B),
        count(Preference::Tie),
        comparisons.iter().filter(|c| c.is_err()).count()
    )
}

/// `assay grade <run-dir>`.
fn regrade_run(
    ctx: &LoadCtx,
    args: &GradeArgs,
    dir: &Path,
    plugins: &crate::plugin::Plugins,
) -> Outcome {
    let mut recorded = match regrade::read_run(dir) {
        Ok(r) => r,
        Err(e) => {
            tell!("error: {e}");
            return Outcome::BadInput;
        }
    };
    let others = match &args.against {
        Some(b) => match regrade::read_run(&ctx.cwd.join(b)) {
            Ok(r) => Some(r),
            Err(e) => {
                tell!("error: {e}");
                return Outcome::BadInput;
            }
        },
        None => None,
    };
    let loaded = match specs_now(ctx, dir, &recorded) {
        Ok(l) => l,
        Err(o) => return o,
    };
    let find = |r: &Recorded| {
        if r.result.kind == Kind::Trigger {
            return None;
        }
        let s = loaded.suites.iter().find(|s| s.id == r.result.suite)?;
        Some((s, s.cases.iter().find(|c| c.id == r.result.case)?))
    };
    let host = HostEnv::from_process();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let redactor = crate::run::redact::for_host(&host.vars, home.as_deref());
    let mut judges = Vec::new();
    let mut slots = Vec::new();
    for r in &recorded {
        slots.push(find(r).and_then(|(s, c)| {
            (grade::captured::needs_judge(c) || others.is_some())
                .then(|| crate::run::judge_for(&mut judges, args.judge.flags(), s, &host, None))
        }));
    }
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(o) => return o,
    };
    let checks = checks(args, plugins);
    let mut graded_all: Vec<Graded> = Vec::new();
    let mut unrecorded = false;
    let mut report = Vec::new();
    let mut comparisons = Vec::new();
    for (r, slot) in recorded.iter_mut().zip(&slots) {
        let label = format!("{}/{} run {}", r.result.suite, r.result.case, r.result.run);
        let found = find(r);
        if let Some((said, why)) = not_regraded(r, found.is_some()) {
            if !args.json {
                say!("skipped    {label}: {said}");
            }
            report.push(json!({"suite": r.result.suite, "case": r.result.case, "run": r.result.run, "skipped": why}));
            continue;
        }
        let Some((suite, case)) = found else {
            continue;
        };
        let input = r.input(case);
        let graded = rt.block_on(grade::grade(suite, case, input, &checks, slot.as_ref()));
        if let Err(e) = r.write(&graded).and_then(|()| {
            redactor
                .file(&r.dir.join(grade::JUDGE_REPLY))
                .or_else(absent)
        }) {
            tell!(
                "error: {label}: the new grading was not recorded in {}: {e}",
                r.dir.display()
            );
            unrecorded = true;
        }
        if !args.json {
            print_graded(&label, &graded, false);
        }
        let mut entry = json!({
            "suite": r.result.suite, "case": r.result.case, "run": r.result.run, "dir": r.dir,
            "grading": grade::grading_json(&graded.checks, graded.judge.as_ref(), Some(&graded.grade)),
        });
        if let Some(others) = &others {
            let c = rt.block_on(compare_with_other(others, r, slot.as_ref(), case, &graded));
            if !args.json {
                print_comparison(&label, &c);
            }
            entry["comparison"] = comparison_json(&c);
            comparisons.push(c);
        }
        report.push(entry);
        graded_all.push(graded);
    }
    if others.is_some() && !args.json {
        say!("{}", ab_line(&comparisons));
    }
    if args.json {
        super::print_json(&json!({"run": dir, "case_runs": report}));
    } else {
        say!(
            "re-graded {} case-run(s) in {}",
            graded_all.len(),
            ctx.shown(dir).display()
        );
    }
    let rewritten = graded_all.is_empty() || rewrite_reports(ctx, dir);
    if unrecorded || !rewritten {
        return Outcome::Infrastructure;
    }
    exit_for(graded_all.iter(), comparisons.iter())
}

/// Why a recorded case-run is not graded again (what is said, what the JSON says), if it is
/// not: a trigger eval, a case gone from its spec (`found` false), one that did not run.
fn not_regraded(r: &Recorded, found: bool) -> Option<(String, String)> {
    if r.result.kind == Kind::Trigger {
        let why = "a trigger eval";
        return Some((
            "a trigger eval has nothing to grade again".into(),
            why.into(),
        ));
    }
    if !found {
        let said = format!(
            "the case is no longer in {}",
            r.result.suite_source.display()
        );
        return Some((said, "the case is no longer in the spec".into()));
    }
    let status = crate::record::run::word(&r.result.status);
    if matches!(r.result.status, Status::Completed | Status::Failed) {
        return None;
    }
    let said = format!(
        "it did not run ({})",
        r.result.reason.as_deref().unwrap_or(&status)
    );
    Some((said, format!("status {status}")))
}

/// The regraded output compared with the same case-run's of the other run (`--against`).
async fn compare_with_other(
    others: &[Recorded],
    r: &Recorded,
    slot: Option<&crate::run::JudgeSlot>,
    case: &Case,
    graded: &Graded,
) -> Result<Comparison, String> {
    let pair = others.iter().find(|o| {
        o.result.suite == r.result.suite
            && o.result.case == r.result.case
            && o.result.run == r.result.run
    });
    let Some(o) = pair else {
        return Err("not compared: the other run has no such case-run".into());
    };
    let b = std::fs::read_to_string(o.dir.join("output.txt")).unwrap_or_default();
    grade::captured::compare_with(slot, case, &graded.view.output, &b).await
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

/// A file that is not there is nothing to redact.
fn absent(e: std::io::Error) -> std::io::Result<()> {
    match e.kind() {
        std::io::ErrorKind::NotFound => Ok(()),
        _ => Err(e),
    }
}
