//! The lint stage: static checks of skills and their evals, with no agent and no judge.
//!
//! What loads may still measure badly: a skill no agent can pick, a check that passes on an
//! empty answer, an expectation a judge passes anything against. Each finding is a
//! [`Problem`] with a code, a place and a fix; a project accepts a finding on purpose in
//! `assay.toml` (`[[lint.allow]]`, with its reason), which moves it to [`Findings::allowed`].

pub mod counted;
mod evals;
mod fixtures;
mod place;
mod skill;
mod triggers;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

pub use skill::{SkillFile, estimate_tokens};

use crate::config::{self, LintConfig};
use crate::diag::{self, Problem};
use crate::suite::{SkillKind, Suite};

/// The SKILL.md body budget when neither `--max-tokens` nor `[lint] max_tokens` sets one: the
/// Agent Skills specification's recommendation.
pub const DEFAULT_MAX_TOKENS: u64 = 5000;

/// Every code a lint finding can carry (what `[[lint.allow]]` may name).
pub const CODES: &[&str] = &[
    "unreadable",
    "front-matter-missing",
    "front-matter-unclosed",
    "front-matter-syntax",
    "front-matter-not-a-map",
    "front-matter-unknown-key",
    "front-matter-type",
    "name-missing",
    "name-invalid",
    "name-not-folder",
    "description-missing",
    "description-too-long",
    "description-no-when",
    "compatibility-too-long",
    "skill-over-budget",
    "skill-too-many-lines",
    "missing-reference",
    "reference-outside-skill",
    "vague-expectation",
    "check-passes-on-empty",
    "case-cannot-fail",
    "check-not-in-prompt",
    "duplicate-prompt",
    "triggers-no-positive",
    "triggers-no-negative",
    "duplicate-query",
    "conflicting-query",
    "unused-fixture",
];

/// Loader warnings a lint finding at the same place restates, by (loader code, finding code):
/// `assay lint` shows only the finding.
pub const SAME_AS_LOADER: &[(&str, &str)] = &[
    ("duplicate-query", "duplicate-query"),
    ("duplicate-query", "conflicting-query"),
];

/// What to lint with.
#[derive(Debug, Clone, Default)]
pub struct LintOptions {
    /// Over every project's `[lint] max_tokens`.
    pub max_tokens: Option<u64>,
}

/// The findings, and those a project accepted.
#[derive(Debug, Default)]
pub struct Findings {
    pub findings: Vec<Problem>,
    /// Accepted by a `[[lint.allow]]` entry, with its reason.
    pub allowed: Vec<(Problem, String)>,
    pub skills: usize,
    pub suites: usize,
}

/// Lints the skills under `paths` and those the suites test, then the suites.
pub fn lint(cwd: &Path, paths: &[PathBuf], suites: &[Suite], opts: &LintOptions) -> Findings {
    let mut projects = Projects::default();
    let mut findings = Vec::new();
    let skills = skill_files(cwd, paths, suites);
    // Every project involved, so each `[[lint.allow]]` is checked whether or not it matches.
    for s in suites {
        projects.config(&s.project_root.join("assay.toml"));
    }
    for s in &skills {
        projects.config(&cwd.join(&s.file));
    }
    findings.extend(projects.unknown_codes(cwd));
    for s in &skills {
        let budget = opts.max_tokens.unwrap_or_else(|| {
            projects
                .config(&cwd.join(&s.file))
                .and_then(|(_, c)| c.max_tokens)
                .unwrap_or(DEFAULT_MAX_TOKENS)
        });
        skill::lint(s, cwd, budget, &mut findings);
    }
    let mut files = place::Files::new(cwd);
    let checks = evals::checks();
    for suite in suites {
        evals::lint(suite, cwd, &checks, &mut files, &mut findings);
        triggers::lint(suite, &mut files, &mut findings);
    }
    fixtures::lint(suites, cwd, &mut findings);
    diag::sort(&mut findings);
    let mut report = Findings {
        skills: skills.len(),
        suites: suites.len(),
        ..Findings::default()
    };
    for f in findings {
        match projects.allowed(cwd, &f) {
            Some(reason) => report.allowed.push((f, reason)),
            None => report.findings.push(f),
        }
    }
    report
}

/// The skill files to lint: every SKILL.md and `.claude/commands/*.md` under the paths, and
/// each suite's skill, by the path shown. One under an `evals/` folder of a path, or among a
/// suite's fixtures ([`fixtures::fixture_places`]), is a case's material, not a skill.
fn skill_files(cwd: &Path, paths: &[PathBuf], suites: &[Suite]) -> BTreeSet<SkillFile> {
    let fixtures = fixtures::fixture_places(suites, cwd);
    let shown = |p: &Path| {
        p.strip_prefix(cwd)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let mut out = BTreeSet::new();
    for s in suites.iter().filter_map(|s| s.skill.as_ref()) {
        let file = match s.kind {
            SkillKind::Dir => s.path.join("SKILL.md"),
            SkillKind::Command => s.path.clone(),
        };
        out.insert(SkillFile {
            file: shown(&cwd.join(file)),
            kind: s.kind,
        });
    }
    for p in paths {
        let root = cwd.join(p);
        for entry in crate::suite::paths::walk(&root).flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let path = entry.path();
            if is_fixture(path, &root, &fixtures) {
                continue;
            }
            let kind = if path.file_name().is_some_and(|n| n == "SKILL.md") {
                SkillKind::Dir
            } else if path.extension().is_some_and(|e| e == "md")
                && path
                    .parent()
                    .is_some_and(|d| d.ends_with(".claude/commands"))
            {
                SkillKind::Command
            } else {
                continue;
            };
            out.insert(SkillFile {
                file: shown(path),
                kind,
            });
        }
    }
    out
}

/// Whether `path`, found under `root`, is a suite's fixture: under an `evals/` folder below
/// `root`, or under one of `fixtures` that `root` is not itself inside (a path named on
/// the command line is linted). A skill an overlay installs where an engine reads skills
/// (`setup/.claude/skills/<name>/`) is a skill the agent is given: linted.
fn is_fixture(path: &Path, root: &Path, fixtures: &[PathBuf]) -> bool {
    let below = path.strip_prefix(root).unwrap_or(path);
    let installed = below
        .ancestors()
        .any(|d| d.ends_with(".claude/skills") || d.ends_with(".agents/skills"));
    if installed {
        return false;
    }
    let in_evals = below
        .parent()
        .is_some_and(|d| d.components().any(|c| c.as_os_str() == "evals"));
    in_evals
        || fixtures
            .iter()
            .any(|f| path.starts_with(f) && !root.starts_with(f))
}

/// Each project's `[lint]` settings, by its root, read once.
#[derive(Default)]
struct Projects {
    by_root: HashMap<PathBuf, Option<LintConfig>>,
    /// `[[lint.allow]]` paths, compiled once (a skill with 100k broken links has as many
    /// findings to match).
    globs: HashMap<String, Option<globset::GlobMatcher>>,
}

impl Projects {
    /// The `[lint]` of the project holding `file` (its nearest `assay.toml`), with its root.
    fn config(&mut self, file: &Path) -> Option<(PathBuf, &LintConfig)> {
        let root = config::find_root(file.parent()?)?;
        let entry = self
            .by_root
            .entry(root.clone())
            .or_insert_with(|| config::load(&root, &root).ok().map(|c| c.lint));
        entry.as_ref().map(|c| (root, c))
    }

    /// An error for each `[[lint.allow]]` naming a code lint never gives (a typo there would
    /// quietly accept nothing).
    fn unknown_codes(&self, cwd: &Path) -> Vec<Problem> {
        let mut out = Vec::new();
        for (root, config) in &self.by_root {
            let Some(config) = config else { continue };
            let file = root.join("assay.toml");
            let shown = file.strip_prefix(cwd).unwrap_or(&file);
            for a in config
                .allow
                .iter()
                .filter(|a| !CODES.contains(&a.code.as_str()))
            {
                let fix = match diag::did_you_mean(&a.code, CODES.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "the codes are listed in docs/lint.md".to_string(),
                };
                out.push(
                    Problem::error(
                        "bad-config",
                        shown,
                        format!(
                            "[[lint.allow]] names `{}`, which is not a lint code",
                            a.code
                        ),
                    )
                    .help(fix),
                );
            }
        }
        out.sort_by(|a, b| a.file.cmp(&b.file));
        out
    }

    /// The reason a finding is accepted, when its project accepts it.
    fn allowed(&mut self, cwd: &Path, f: &Problem) -> Option<String> {
        let file = cwd.join(&f.file);
        let (root, _) = self.config(&file)?;
        let rel = file.strip_prefix(&root).ok()?;
        let config = self.by_root.get(&root)?.as_ref()?;
        let globs = &mut self.globs;
        config
            .allow
            .iter()
            .find(|a| {
                a.code == f.code
                    && a.path.as_deref().is_none_or(|glob| {
                        globs
                            .entry(glob.to_string())
                            .or_insert_with(|| {
                                globset::Glob::new(glob).ok().map(|g| g.compile_matcher())
                            })
                            .as_ref()
                            .is_some_and(|m| m.is_match(rel))
                    })
            })
            .map(|a| a.reason.clone())
    }
}
