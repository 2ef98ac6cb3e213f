//! Fixture files nothing uses: in a suite's fixture folder, yet neither staged by any case
//! nor named in any prompt, command, script or check.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::place::finding;
use crate::diag::Problem;
use crate::diag::Severity::Warning;
use crate::suite::{StdinSource, Suite};

/// The folders a format keeps fixtures in, for one suite (BMAD `files/` beside evals.json,
/// clauditor `fixtures/` beside the spec, UAAPS `evals/fixtures/` and `files/`, a UAAPS test
/// config's `fixtures/`).
fn fixture_dirs(suite: &Suite, cwd: &Path) -> Vec<PathBuf> {
    let Some(dir) = cwd.join(&suite.source).parent().map(Path::to_path_buf) else {
        return Vec::new();
    };
    suite
        .policies
        .fixture_dirs
        .iter()
        .map(|d| dir.join(d))
        .collect()
}

/// Where the suites keep what is not theirs to lint as skills: their fixture folders, eval
/// folders, overlays and staged fixtures (a SKILL.md there is material for a case, say a
/// skill for the agent to review).
pub(super) fn fixture_places(suites: &[Suite], cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for suite in suites {
        out.extend(fixture_dirs(suite, cwd));
        out.extend(suite.spec_paths(cwd).into_iter().filter(|p| p.is_dir()));
        out.extend(suite.base_overlay.iter().map(|o| cwd.join(o)));
        for case in &suite.cases {
            out.extend(case.overlay.iter().map(|o| cwd.join(o)));
            out.extend(case.fixtures.iter().map(|f| cwd.join(&f.source)));
        }
    }
    out
}

/// Every fixture file no suite uses, across all the suites (a folder several suites share
/// counts a file used by any of them).
pub fn lint(suites: &[Suite], cwd: &Path, out: &mut Vec<Problem>) {
    let (staged, mentioned) = used(suites, cwd);
    for dir in fixture_folders(suites, cwd) {
        let walk = ignore::WalkBuilder::new(&dir)
            .hidden(false)
            .standard_filters(false)
            .build();
        for entry in walk.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let path = entry.path();
            let real = canonical(path);
            if staged.iter().any(|s| real.starts_with(s)) {
                continue;
            }
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            if !name.is_empty() && mentioned.contains(&name) {
                continue;
            }
            let shown = path.strip_prefix(cwd).unwrap_or(path);
            out.push(finding(
                Warning,
                "unused-fixture",
                shown,
                None,
                format!(
                    "{} is in a fixture folder, but no case stages it or names it",
                    shown.display()
                ),
                "stage it in a case that needs it (BMAD `files`, clauditor `input_files`, UAAPS `files`), or delete it",
            ));
        }
    }
}

/// What the cases use: the fixtures they stage (resolved), and the text that may name a file
/// (prompts, scripts, commands, checks' settings), lowercased.
fn used(suites: &[Suite], cwd: &Path) -> (Vec<PathBuf>, String) {
    let mut staged: Vec<PathBuf> = Vec::new();
    let mut mentioned = String::new();
    for case in suites.iter().flat_map(|s| &s.cases) {
        staged.extend(
            case.fixtures
                .iter()
                .map(|f| canonical(&cwd.join(&f.source))),
        );
        let mut texts: Vec<String> = case
            .turns
            .iter()
            .chain(case.setup.iter())
            .chain(case.teardown.iter())
            .cloned()
            .collect();
        if let Some(cmd) = &case.command {
            texts.push(cmd.argv.join(" "));
            if let Some(StdinSource::File(f)) = &cmd.stdin {
                texts.push(f.to_string_lossy().into_owned());
            }
        }
        texts.extend(case.checks.iter().map(|c| c.config.to_string()));
        for text in texts {
            mentioned.push_str(&text);
            mentioned.push('\n');
        }
    }
    (staged, mentioned.to_lowercase())
}

/// The suites' fixture folders that exist, each once. A fixture folder that is a link out of
/// the project (to `/usr`, to a home folder) is not walked: every file there would be listed
/// by name.
fn fixture_folders(suites: &[Suite], cwd: &Path) -> BTreeSet<PathBuf> {
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    for suite in suites {
        let root = canonical(&cwd.join(&suite.project_root));
        dirs.extend(
            fixture_dirs(suite, cwd)
                .into_iter()
                .filter(|d| d.is_dir() && canonical(d).starts_with(&root)),
        );
    }
    dirs
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}
