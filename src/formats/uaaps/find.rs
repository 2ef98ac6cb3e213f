//! Finding UAAPS packages: a `package.agent.json`, an `evals/eval-config.json` inside a package
//! (another tool's, outside one, is left alone), a `tests/test-config.json`, and a case YAML
//! the user names (its whole package or tests folder is loaded). A package's `cases/*.yaml`
//! are its own: no later format takes them.

use std::path::{Path, PathBuf};

use crate::diag::Problem;
use crate::formats::LoadCtx;
use crate::formats::find::{EvalFormat, File, Found, Job, Scan};

/// Package roots.
const PACKAGES: &str = "uaaps:packages";
/// `evals/eval-config.json` files the user named that are in no package.
const NOT_PACKAGES: &str = "uaaps:not-packages";
/// Folders of deterministic tests (`tests/` with `test-config.json`).
const TESTS: &str = "uaaps:tests";
/// Every package root planned: the packages', and the tests folders' roots.
const ROOTS: &str = "uaaps:roots";

/// UAAPS packages and their deterministic tests, as discovery finds them.
pub struct Uaaps;

impl EvalFormat for Uaaps {
    fn dialects(&self) -> &'static [&'static dyn crate::formats::write::Dialect] {
        &[&super::write::UaapsDialect]
    }

    fn reads(&self) -> &'static str {
        "UAAPS eval-config.json/test-config.json"
    }

    fn claim(&self, file: &File, found: &mut Found) -> bool {
        match file.name.as_str() {
            "package.agent.json" => found.add(PACKAGES, file.dir.to_path_buf()),
            "eval-config.json" if file.dir_name == "evals" => {
                let root = file.dir.parent().unwrap_or(Path::new(""));
                // The manifest is the one file a UAAPS package must have; other tools keep an
                // `evals/eval-config.json` of their own, which a walk leaves alone.
                if in_package(root) {
                    found.add(PACKAGES, root.to_path_buf());
                } else if file.named {
                    found.add(NOT_PACKAGES, file.path.to_path_buf());
                } else {
                    return false;
                }
            }
            "test-config.json" if file.dir_name == "tests" => {
                found.add(TESTS, file.dir.to_path_buf())
            }
            n if file.named && (n.ends_with(".yaml") || n.ends_with(".yml")) => {
                return claim_named_case(file, found);
            }
            _ => return false,
        }
        true
    }

    fn plan(&self, ctx: &LoadCtx, scan: &mut Scan) -> Vec<Job> {
        for file in scan.found.get(NOT_PACKAGES) {
            scan.problems.push(
                Problem::error(
                    "not-a-package",
                    &ctx.shown(file),
                    "this eval-config.json is in no UAAPS package: there is no package.agent.json beside its evals/ folder or above it",
                )
                .help("a UAAPS package needs its manifest, package.agent.json, at its root (the folder holding evals/)"),
            );
        }
        let mut jobs: Vec<Job> = Vec::new();
        let packages: Vec<PathBuf> = scan.found.get(PACKAGES).iter().cloned().collect();
        for root in packages {
            scan.found.add(ROOTS, root.clone());
            jobs.push(Box::new(move |ctx: &LoadCtx| super::load(ctx, &root)));
        }
        let tests: Vec<PathBuf> = scan.found.get(TESTS).iter().cloned().collect();
        for dir in tests {
            let root = tests_root(&dir);
            scan.found.add(ROOTS, root.clone());
            jobs.push(Box::new(move |ctx: &LoadCtx| {
                super::deterministic::load(ctx, &dir, &root)
            }));
        }
        jobs
    }

    /// A case YAML (`<dir>/cases/*.yaml`) of a package's evals, of a tests folder, or under a
    /// package root this scan planned.
    fn owns(&self, file: &Path, scan: &Scan) -> bool {
        file.parent()
            .is_some_and(|d| d.file_name().is_some_and(|n| n == "cases"))
            && file.parent().and_then(Path::parent).is_some_and(|d| {
                (d.join("eval-config.json").exists() && in_package(d))
                    || d.join("test-config.json").exists()
                    || scan.found.get(ROOTS).iter().any(|r| d.starts_with(r))
            })
    }
}

/// A case YAML the user named: its whole package or tests folder is loaded.
fn claim_named_case(file: &File, found: &mut Found) -> bool {
    let Some(owner) = (file.dir_name == "cases")
        .then(|| file.dir.parent())
        .flatten()
    else {
        return false;
    };
    if owner.join("eval-config.json").is_file() && in_package(owner) {
        found.add(PACKAGES, owner.parent().unwrap_or(owner).to_path_buf());
    } else if owner.join("test-config.json").is_file() {
        found.add(TESTS, owner.to_path_buf());
    } else {
        return false;
    }
    true
}

/// The package a tests folder belongs to: the nearest folder above with `package.agent.json`;
/// without one, for `skills/<name>/tests` (or `agents/…`) the folder holding `skills/`, else
/// the folder above the tests' artifact (`hooks/tests` → the folder holding `hooks/`).
fn tests_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|a| a.join("package.agent.json").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| {
            let up = dir.parent().unwrap_or(dir);
            let is_skill = up
                .parent()
                .and_then(|p| p.file_name())
                .is_some_and(|n| n == "skills" || n == "agents");
            if is_skill {
                up.parent().and_then(Path::parent).unwrap_or(up)
            } else {
                up.parent().unwrap_or(up)
            }
            .to_path_buf()
        })
}

/// Whether `dir` is in a UAAPS package: it or a folder above it holds `package.agent.json`.
fn in_package(dir: &Path) -> bool {
    dir.ancestors()
        .any(|a| a.join("package.agent.json").is_file())
}
