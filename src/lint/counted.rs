//! What `assay lint` ends with: the loader's problems beside the findings (a loader's
//! warning that a finding at its place says better is left out), counted, whether the lint
//! failed, and the JSON it prints ([`LintJson`]).

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;

use super::{Findings, SAME_AS_LOADER};
use crate::diag::{self, Problem};

/// The loader's problems and the findings, counted.
pub struct Counted {
    /// The loader's problems a finding does not stand for.
    pub load: Vec<Problem>,
    /// Those, then the findings.
    pub all: Vec<Problem>,
    pub errors: usize,
    pub warnings: usize,
    /// Errors, or warnings with `--strict`.
    pub failed: bool,
}

/// The findings of `report` beside the loader's `problems`, counted.
pub fn count(report: &Findings, problems: &[Problem], strict: bool) -> Counted {
    // A loader's warning about what a lint finding at its place is about (a repeated trigger
    // query) says the same thing with less: the finding, with its fix, stands for both. Any
    // other warning there is about something else, and stays.
    let said: HashSet<(&Path, (usize, usize), &str)> = report
        .findings
        .iter()
        .filter_map(|f| Some((f.file.as_path(), f.line_col()?, f.code)))
        .collect();
    let load: Vec<Problem> = problems
        .iter()
        .filter(|p| {
            let Some(at) = p.line_col().filter(|_| !p.is_error()) else {
                return true;
            };
            !SAME_AS_LOADER
                .iter()
                .filter(|(loader, _)| *loader == p.code)
                .any(|(_, finding)| said.contains(&(p.file.as_path(), at, *finding)))
        })
        .cloned()
        .collect();
    let mut all: Vec<Problem> = load.clone();
    all.extend(report.findings.iter().cloned());
    let errors = all.iter().filter(|p| p.is_error()).count();
    let warnings = all.len() - errors;
    Counted {
        load,
        errors,
        warnings,
        failed: errors > 0 || (strict && warnings > 0),
        all,
    }
}

/// `assay lint --format json`.
#[derive(Serialize)]
pub struct LintJson {
    pub ok: bool,
    pub summary: LintSummary,
    pub findings: serde_json::Value,
    /// The findings assay.toml allows, each with its `reason`.
    pub allowed: Vec<serde_json::Value>,
}

#[derive(Serialize)]
pub struct LintSummary {
    pub skills: usize,
    pub suites: usize,
    pub errors: usize,
    pub warnings: usize,
    pub allowed: usize,
}

impl Counted {
    pub fn json(&self, report: &Findings) -> LintJson {
        LintJson {
            ok: !self.failed,
            summary: LintSummary {
                skills: report.skills,
                suites: report.suites,
                errors: self.errors,
                warnings: self.warnings,
                allowed: report.allowed.len(),
            },
            findings: diag::render_json(&self.all),
            allowed: report
                .allowed
                .iter()
                .map(|(p, reason)| {
                    let mut v = diag::render_json(std::slice::from_ref(p))[0].clone();
                    v["reason"] = serde_json::json!(reason);
                    v
                })
                .collect(),
        }
    }
}
