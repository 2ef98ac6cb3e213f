//! The stage stage: a fresh, isolated workspace per case-run.
//!
//! Order: copy the project, apply the suite's base overlay, then the case's overlay (merge,
//! later wins), install the skill under test (a copy; it always wins over overlays), stage
//! fixtures by the format's rule, create workspace files, hash every fixture, and prepare a
//! private HOME and a scrubbed environment.
//!
//! Copy-on-write (in the sandbox, where overlayfs can be mounted): the project is copied once
//! per run ([`base`]) and each case-run writes only its own files, into a stage layer
//! ([`writer`]); inside the sandbox the workspace is the overlay of the agent's layer, the
//! stage and the base, and the host reads it through [`layers::Tree`].

pub mod base;
pub mod cleanup;
pub mod confined;
pub mod copy;
pub mod env;
pub mod layers;
pub mod package;
pub mod remove;
pub mod set_id;
pub mod snapshot;
pub mod sparse;
pub mod stand_ins;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::suite::{Case, Package, Skill, SkillKind, Suite};
use layers::Tree;
use snapshot::Snapshot;
use writer::Writer;

pub use package::Engine;

/// Where the pieces of one case-run's workspace are.
#[derive(Debug)]
pub struct Staged {
    /// Holds `work/`, `home/` and `tmp/` (the case-run's `TMPDIR`); removed with
    /// [`Staged::remove`].
    pub dir: PathBuf,
    /// The project copy the agent works in (with an overlay, its mount point: empty on the
    /// host, which reads the workspace through `tree`).
    pub root: PathBuf,
    /// The workspace as the host reads it.
    pub tree: Tree,
    /// The layers, when the workspace is an overlay.
    pub overlay: Option<Overlay>,
    /// The private HOME.
    pub home: PathBuf,
    /// The agent's working folder (the root, or e.g. `inputs/` for clauditor).
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub fixtures: Vec<StagedFixture>,
    /// The workspace as staged, to find what the run changed.
    pub before: Snapshot,
    /// Where the skill under test was installed, relative to the root.
    pub skill_dest: Option<PathBuf>,
    /// The project's symlinks left out because they point outside it (relative paths).
    pub skipped_links: Vec<PathBuf>,
}

/// The layers of a copy-on-write workspace, for the sandbox to mount.
#[derive(Debug, Clone)]
pub struct Overlay {
    /// Holds `stage/`, `upper/` and `work/` (overlayfs's own): writable in the sandbox until
    /// the overlay is mounted, then out of view.
    pub dir: PathBuf,
    /// The case-run's staged files.
    pub stage: PathBuf,
    /// The agent's changes.
    pub upper: PathBuf,
    /// overlayfs's work folder.
    pub work: PathBuf,
    /// The project's shared copy.
    pub base: Arc<base::Base>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StagedFixture {
    pub dest: PathBuf,
    pub hash: String,
    /// Its size as staged: a fixture of another size has changed, without reading it.
    #[serde(skip)]
    pub size: u64,
}

use crate::record::changes::FixtureChange;

#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {path}: {source}")]
pub struct StageError {
    pub what: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

fn io<T>(what: &'static str, path: &Path, r: std::io::Result<T>) -> Result<T, StageError> {
    r.map_err(|source| StageError {
        what,
        path: path.to_path_buf(),
        source,
    })
}

/// What staging takes from the host.
#[derive(Debug, Clone, Default)]
pub struct StageOptions {
    /// The host's environment, filtered by [`env::scrubbed`].
    pub host_env: Vec<(String, String)>,
    /// Extra host variable names to pass through.
    pub pass_env: Vec<String>,
    /// The harness's login ([`crate::harness::Harness::login`]): its variables and login files,
    /// and no other vendor's.
    pub login: crate::host::Login,
    /// The user's real HOME, for copying CLI login files.
    pub real_home: Option<PathBuf>,
    /// Where workspaces are made (default: the system temp folder).
    pub parent: Option<PathBuf>,
    /// Install the skill under test (false for a baseline run).
    pub install_skill: bool,
    /// Install a slash-command skill as a skill folder (`.claude/skills/<name>/SKILL.md`), for
    /// trigger evals: only skills are offered to the model to invoke on their own.
    pub command_as_skill: bool,
    /// Folders never copied into a workspace: the run folder and the workspaces' parent.
    pub exclude: Vec<PathBuf>,
    /// The conventions the agent follows (the harness's [`crate::harness::Harness::engines`]):
    /// the skill under test, and a package's parts, are installed where each reads them.
    /// Empty (and no `skill_folders`): Claude Code's.
    pub engines: Vec<Engine>,
    /// Folders the agent reads skills from beyond its engines' (the harness's
    /// [`crate::harness::Harness::skill_folders`]): the skill is installed there too, and
    /// removed from there for a baseline.
    pub skill_folders: Vec<String>,
    /// Copy-on-write: the run's shared project copies. `None`: each workspace is a copy.
    pub bases: Option<Arc<base::Bases>>,
    /// Other skills installed beside the skill under test (`--with-skills`), in every
    /// variant; one with the name of the skill under test is left out.
    pub siblings: Arc<[Skill]>,
    /// The agent loads a Claude Code plugin whole (the harness's
    /// [`crate::harness::Harness::loads_plugins`]): staged for `--plugin-dir` rather than
    /// installed part by part.
    pub loads_plugins: bool,
    /// A staged plugin's MCP servers as mocks give them (`None`: as the plugin declares).
    pub stand_ins: Option<stand_ins::StandIns>,
}

/// What staging needs of a suite (cheap to clone, unlike the suite with all its cases).
#[derive(Debug, Clone)]
pub struct SuiteStage {
    pub project_root: PathBuf,
    pub base_overlay: Option<PathBuf>,
    pub skill: Option<Skill>,
    /// The suite's own skill when another version is installed instead (`--baseline-skill`):
    /// removed first, so only the other version is there.
    pub replaces: Option<Skill>,
    pub package: Option<Package>,
    pub env: Vec<(String, String)>,
    /// The workspace starts empty: the project is not copied ([`crate::suite::Policies`]).
    pub empty: bool,
}

impl SuiteStage {
    pub fn of(suite: &Suite) -> SuiteStage {
        SuiteStage {
            project_root: suite.project_root.clone(),
            base_overlay: suite.base_overlay.clone(),
            skill: suite.skill.clone(),
            replaces: None,
            package: suite.package.clone(),
            env: suite
                .defaults
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            empty: suite.policies.empty_workspace,
        }
    }
}

pub fn stage(suite: &SuiteStage, case: &Case, opts: &StageOptions) -> Result<Staged, StageError> {
    let (parent, dir) = private_dir(opts)?;
    let root = dir.join("work");
    let home = dir.join("home");
    io("create", &root, std::fs::create_dir_all(&root))?;
    io("create", &home, std::fs::create_dir_all(&home))?;
    cleanup::made(&root);

    // Never copy assay's own run folder or the workspaces into a workspace.
    let mut exclude = opts.exclude.clone();
    exclude.push(parent.clone());
    let (writer, skipped_links, overlay) = lay_base(suite, opts, &dir, &root, &exclude)?;
    for overlay in [suite.base_overlay.as_ref(), case.overlay.as_ref()]
        .into_iter()
        .flatten()
    {
        io(
            "apply the overlay",
            overlay,
            copy::copy_tree(overlay, &writer.path(Path::new("")), false),
        )?;
    }
    if let Some(old) = &suite.replaces {
        remove_copies(old, &suite.project_root, &writer, &opts.skill_folders)?;
    }
    let engines = match opts.engines.is_empty() && opts.skill_folders.is_empty() {
        true => vec![Engine::ClaudeCode],
        false => opts.engines.clone(),
    };
    let roots = skill_roots(&engines, &opts.skill_folders);
    install_siblings(suite, &opts.siblings, &writer, &exclude, &roots)?;
    let skill_dest = if opts.install_skill && opts.command_as_skill {
        install_command_as_skill(suite, &writer, &exclude, &roots)?
    } else if opts.install_skill {
        let how = package::Install {
            engines: &engines,
            roots: &roots,
            exclude: &exclude,
            loads_plugins: opts.loads_plugins,
            stand_ins: opts.stand_ins.clone(),
        };
        // A case's own plugins, else its suite's package.
        let packages = match (&suite.skill, &suite.package) {
            _ if !case.plugins.is_empty() => case.plugins.iter().collect(),
            (None, Some(pkg)) => vec![pkg],
            _ => Vec::new(),
        };
        for pkg in packages {
            package::install(pkg, &writer, &home, &how)?;
        }
        install_skill(suite, &writer, &exclude, &roots)?
    } else {
        remove_skill(suite, &writer, &opts.skill_folders)?
    };

    let fixtures = stage_fixtures(case, &writer)?;
    let agent = agent_dir(case);
    let cwd = if agent.as_os_str().is_empty() {
        root.clone()
    } else {
        root.join(&agent)
    };
    if !writer.is_dir(&agent) {
        let at = writer.path(&agent);
        io("create", &at, std::fs::create_dir_all(&at))?;
    }

    let env = case_env(suite, case, opts, &dir, &home)?;
    let (tree, before) = match &overlay {
        Some(o) => (
            Tree::layered(vec![o.upper.clone(), o.stage.clone(), o.base.dir.clone()]),
            o.base.snapshot.with_layer(&o.stage),
        ),
        None => (Tree::dir(&root), Snapshot::take(&root)),
    };
    Ok(Staged {
        dir,
        root,
        tree,
        overlay,
        home,
        cwd,
        env,
        fixtures,
        before,
        skill_dest,
        skipped_links,
    })
}

/// A new workspace folder under the workspaces' parent (made private if missing: an existing
/// one, the system's temp folder say, is left as it is), private to the user running assay: an
/// emptied one of a finished case-run where there is one ([`cleanup::spare`]).
fn private_dir(opts: &StageOptions) -> Result<(PathBuf, PathBuf), StageError> {
    let parent = opts.parent.clone().unwrap_or_else(std::env::temp_dir);
    io(
        "create a workspace in",
        &parent,
        crate::record::write::create_missing_private(&parent),
    )?;
    if let Some(dir) = cleanup::spare(&parent) {
        return Ok((parent, dir));
    }
    let dir = io(
        "create a workspace in",
        &parent,
        tempfile::Builder::new()
            .prefix("assay-ws-")
            // Private: what a root agent leaves in it is out of other users' reach.
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(
                set_id::PRIVATE,
            ))
            .tempdir_in(&parent),
    )?
    .keep();
    Ok((parent, dir))
}

/// The project under the agent: an overlay's layers over a shared base copy (with `bases`),
/// else a plain copy in `root`. The writer that stages files into it, the links left out, the
/// overlay.
fn lay_base(
    suite: &SuiteStage,
    opts: &StageOptions,
    dir: &Path,
    root: &Path,
    exclude: &[PathBuf],
) -> Result<(Writer, Vec<PathBuf>, Option<Overlay>), StageError> {
    if suite.empty {
        return Ok((Writer::Plain(root.to_path_buf()), Vec::new(), None));
    }
    Ok(match &opts.bases {
        Some(bases) => {
            let base = io(
                "copy the project from",
                &suite.project_root,
                bases.get(&suite.project_root, exclude),
            )?;
            let layers = dir.join("layers");
            let overlay = Overlay {
                stage: layers.join("stage"),
                upper: layers.join("upper"),
                work: layers.join("work"),
                dir: layers,
                base: base.clone(),
            };
            for d in [&overlay.stage, &overlay.upper, &overlay.work] {
                io("create", d, std::fs::create_dir_all(d))?;
            }
            let writer = Writer::Layered {
                stage: overlay.stage.clone(),
                base: base.dir.clone(),
            };
            (writer, base.skipped_links.clone(), Some(overlay))
        }
        None => {
            let copied = io(
                "copy the project from",
                &suite.project_root,
                copy::copy_tree_reporting(&suite.project_root, root, true, exclude),
            )?;
            (
                Writer::Plain(root.to_path_buf()),
                copied.skipped_links,
                None,
            )
        }
    })
}

/// The case's fixtures copied in (each with its hash and size as staged), and its
/// `workspace_files` made empty where missing.
fn stage_fixtures(case: &Case, writer: &Writer) -> Result<Vec<StagedFixture>, StageError> {
    let mut fixtures = Vec::new();
    for f in &case.fixtures {
        let dest = writer.path(&f.dest);
        io(
            "stage the fixture",
            &f.source,
            copy::copy_file(&f.source, &dest),
        )?;
        fixtures.push(StagedFixture {
            dest: f.dest.clone(),
            hash: snapshot::hash_file(&dest).unwrap_or_default(),
            size: std::fs::metadata(&dest).map(|m| m.len()).unwrap_or(0),
        });
    }
    for w in &case.workspace_files {
        let p = writer.path(w);
        if let Some(parent) = p.parent() {
            io("create", parent, std::fs::create_dir_all(parent))?;
        }
        if !writer.exists(w) {
            io("create", &p, std::fs::write(&p, b""))?;
        }
    }
    Ok(fixtures)
}

/// The case-run's environment: scrubbed, with its private HOME (credentials copied in) and a
/// temp folder of its own.
fn case_env(
    suite: &SuiteStage,
    case: &Case,
    opts: &StageOptions,
    dir: &Path,
    home: &Path,
) -> Result<Vec<(String, String)>, StageError> {
    io(
        "set up the private HOME",
        home,
        env::copy_credentials(opts.real_home.as_deref(), &opts.login, home),
    )?;
    let mut extra: Vec<(String, String)> = suite.env.clone();
    if let Some(cmd) = &case.command {
        extra.extend(cmd.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let mut env = env::scrubbed(&opts.host_env, &opts.login, &opts.pass_env, &extra, home);
    // A temp folder of the case-run's own, beside HOME: case-runs never share temp files,
    // and Codex, which refuses to put its helpers in a HOME under the temp folder (and then
    // cannot start its own sandbox), finds its HOME outside it.
    let tmp = dir.join("tmp");
    io("create", &tmp, std::fs::create_dir_all(&tmp))?;
    env.retain(|(k, _)| k != "TMPDIR");
    env.push(("TMPDIR".into(), tmp.display().to_string()));
    Ok(env)
}

/// Where Claude Code reads a project's skills.
pub const CLAUDE_SKILLS: &str = ".claude/skills";
/// The Agent Skills standard's project folder, read by Codex and Gemini CLI.
pub const AGENT_SKILLS: &str = ".agents/skills";
/// Where Claude Code reads a project's slash commands (no other engine has them).
const CLAUDE_COMMANDS: &str = ".claude/commands";

/// Every folder the agent reads skills from: its engines', then its own, each once.
fn skill_roots(engines: &[Engine], own: &[String]) -> Vec<String> {
    let mut roots: Vec<String> = Vec::new();
    let all = engines.iter().map(|e| e.skill_root().to_string());
    for r in all.chain(own.iter().cloned()) {
        if !roots.contains(&r) {
            roots.push(r);
        }
    }
    roots
}

/// Where a skill lives in a workspace for an agent reading skills from `root`.
fn skill_path(root: &str, kind: SkillKind, name: &str) -> PathBuf {
    match kind {
        SkillKind::Dir => Path::new(root).join(name),
        SkillKind::Command => Path::new(CLAUDE_COMMANDS).join(format!("{name}.md")),
    }
}

/// Copies the skill under test into the workspace (a UAAPS package is installed by
/// [`package::install`]), replacing whatever an overlay put there; never what `exclude` names (the
/// suites' specs, which may sit inside the skill's folder).
fn install_skill(
    suite: &SuiteStage,
    writer: &Writer,
    exclude: &[PathBuf],
    roots: &[String],
) -> Result<Option<PathBuf>, StageError> {
    if let Some(skill) = &suite.skill {
        let mut first = None;
        for root in roots {
            let rel = skill_path(root, skill.kind, &skill.name);
            let dest = writer.path(&rel);
            match skill.kind {
                SkillKind::Dir => install_dir(&skill.path, &rel, writer, exclude)?,
                SkillKind::Command => {
                    io(
                        "install the command from",
                        &skill.path,
                        copy::copy_file(&skill.path, &dest),
                    )?;
                }
            }
            first.get_or_insert(rel);
        }
        return Ok(first);
    }
    Ok(None)
}

/// Installs `siblings` into every skill root, each replacing what the project had under its
/// name; never one named as the skill under test (or the one it replaces), which is the
/// suite's to install or leave out.
fn install_siblings(
    suite: &SuiteStage,
    siblings: &[Skill],
    writer: &Writer,
    exclude: &[PathBuf],
    roots: &[String],
) -> Result<(), StageError> {
    let own: Vec<&str> = [suite.skill.as_ref(), suite.replaces.as_ref()]
        .into_iter()
        .flatten()
        .map(|s| s.name.as_str())
        .collect();
    for skill in siblings.iter().filter(|s| !own.contains(&s.name.as_str())) {
        for root in roots {
            let rel = skill_path(root, SkillKind::Dir, &skill.name);
            install_dir(&skill.path, &rel, writer, exclude)?;
        }
    }
    Ok(())
}

/// Copies the skill folder `from` to `rel` in the workspace, replacing what was there.
fn install_dir(
    from: &Path,
    rel: &Path,
    writer: &Writer,
    exclude: &[PathBuf],
) -> Result<(), StageError> {
    let dest = writer.path(rel);
    io("replace", &dest, writer.fresh_dir(rel))?;
    io(
        "install the skill from",
        from,
        copy::copy_skill(from, &dest, exclude),
    )?;
    Ok(())
}

/// Merges a package's `hooks/hooks.json` (Claude Code's `{"hooks": {event: [...]}}` shape)
/// into the workspace's `.claude/settings.json`, so the agent runs with the package's hooks.
fn install_hooks(hooks_file: &Path, writer: &Writer) -> Result<(), StageError> {
    let Ok(text) = std::fs::read_to_string(hooks_file) else {
        return Ok(());
    };
    let bad = |e: String| StageError {
        what: "read the hooks of",
        path: hooks_file.to_path_buf(),
        source: std::io::Error::other(e),
    };
    let hooks: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let Some(events) = hooks.get("hooks").and_then(|h| h.as_object()) else {
        return Err(bad("expected {\"hooks\": {\"<event>\": [...]}}".into()));
    };
    let settings_rel = Path::new(".claude/settings.json");
    let settings_path = writer.path(settings_rel);
    let mut settings: serde_json::Value = writer
        .read_to_string(settings_rel)
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    let target = settings
        .as_object_mut()
        .ok_or_else(|| bad("the workspace's .claude/settings.json is not an object".into()))?
        .entry("hooks")
        .or_insert_with(|| serde_json::json!({}));
    for (event, list) in events {
        let slot = target
            .as_object_mut()
            .ok_or_else(|| bad("`hooks` in .claude/settings.json is not an object".into()))?
            .entry(event.clone())
            .or_insert_with(|| serde_json::json!([]));
        if let (Some(slot), Some(list)) = (slot.as_array_mut(), list.as_array()) {
            slot.extend(list.iter().cloned());
        }
    }
    let text = serde_json::to_string_pretty(&settings).map_err(|e| bad(e.to_string()))?;
    io(
        "write",
        &settings_path,
        std::fs::create_dir_all(writer.path(Path::new(".claude"))),
    )?;
    io(
        "write",
        &settings_path,
        std::fs::write(&settings_path, text),
    )
}

/// A slash command installed as a skill folder for trigger evals: the command file is removed
/// and its text becomes `SKILL.md`, with `name` and `description` front matter added when the
/// command has none (the model decides from them whether to invoke it).
fn install_command_as_skill(
    suite: &SuiteStage,
    writer: &Writer,
    exclude: &[PathBuf],
    roots: &[String],
) -> Result<Option<PathBuf>, StageError> {
    let Some(skill) = suite
        .skill
        .as_ref()
        .filter(|s| s.kind == SkillKind::Command)
    else {
        return install_skill(suite, writer, exclude, roots);
    };
    remove_skill(suite, writer, &[])?;
    let text = io(
        "read the command",
        &skill.path,
        std::fs::read_to_string(&skill.path),
    )?;
    let body = if text.starts_with("---") {
        text
    } else {
        let description = skill
            .description
            .clone()
            .or_else(|| {
                text.lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string)
            })
            .unwrap_or_else(|| skill.name.clone());
        format!(
            "---\nname: {}\ndescription: {}\n---\n\n{text}",
            skill.name,
            serde_json::Value::String(description)
        )
    };
    let mut first = None;
    for root in roots {
        let rel = skill_path(root, SkillKind::Dir, &skill.name);
        let folder = writer.path(&rel);
        io("create", &folder, writer.fresh_dir(&rel))?;
        let dest = folder.join("SKILL.md");
        io(
            "install the command as a skill at",
            &dest,
            std::fs::write(&dest, &body),
        )?;
        first.get_or_insert(rel);
    }
    Ok(first)
}

/// For a baseline: the skill under test must not be there.
fn remove_skill(
    suite: &SuiteStage,
    writer: &Writer,
    own: &[String],
) -> Result<Option<PathBuf>, StageError> {
    if let Some(skill) = &suite.skill {
        remove_copies(skill, &suite.project_root, writer, own)?;
    }
    Ok(None)
}

/// Removes a skill from a workspace: where assay installs it (any engine's folder and the
/// harness's `own`), and its own copy from the project (`skills/foo/`, `.agents/skills/foo/`,
/// …), never the workspace itself.
fn remove_copies(
    skill: &Skill,
    project_root: &Path,
    writer: &Writer,
    own: &[String],
) -> Result<(), StageError> {
    // Wherever any engine reads it, whichever harness runs.
    let roots = skill_roots(&[Engine::ClaudeCode, Engine::Codex], own);
    let mut paths: Vec<PathBuf> = roots
        .iter()
        .map(|root| skill_path(root, skill.kind, &skill.name))
        .collect();
    paths.dedup();
    if let Ok(rel) = skill.path.strip_prefix(project_root)
        && !rel.as_os_str().is_empty()
    {
        paths.push(rel.to_path_buf());
    }
    for rel in paths {
        io(
            "remove the skill for a baseline from",
            &writer.path(&rel),
            writer.remove(&rel),
        )?;
    }
    Ok(())
}

impl Staged {
    /// Fixtures whose content changed or that are gone.
    pub fn fixture_changes(&self) -> Vec<FixtureChange> {
        self.fixtures
            .iter()
            .filter_map(|f| match self.fixture_hash(f) {
                None => Some(FixtureChange {
                    path: f.dest.clone(),
                    change: "deleted".into(),
                }),
                Some(h) if h != f.hash => Some(FixtureChange {
                    path: f.dest.clone(),
                    change: "modified".into(),
                }),
                _ => None,
            })
            .collect()
    }

    /// A fixture's hash now, read without following a symlink anywhere on its path (a
    /// fixture replaced by a link, or under a folder replaced by one, reads as changed).
    /// A fixture of another size reads as changed without being read (an agent can make a
    /// sparse file of a terabyte in no time).
    fn fixture_hash(&self, f: &StagedFixture) -> Option<String> {
        match self.tree.open(&f.dest) {
            Ok(file) if file.metadata().is_ok_and(|m| m.len() != f.size) => Some("resized".into()),
            Ok(file) => {
                use std::io::Read;
                let mut h = blake3::Hasher::new();
                h.update_reader(file.take(f.size)).ok()?;
                Some(h.finalize().to_hex().to_string())
            }
            Err(e) if confined::is_symlink_error(&e) => Some("symlink".into()),
            Err(_) => None,
        }
    }

    /// The workspace's files now (with an overlay, read from the agent's layer only).
    pub fn snapshot_now(&self) -> Snapshot {
        match &self.overlay {
            Some(o) => self.before.with_layer(&o.upper),
            None => self.before.retake(&self.root),
        }
    }

    /// Keeps the case-run's folder for the user to look at: with an overlay, `work/` is made a
    /// plain copy of what the agent saw and the layers are removed. Returns the folder.
    pub fn keep(&self) -> PathBuf {
        self.keep_layers();
        // Kept for the user, maybe shared later: no file of it runs as its owner for others.
        set_id::clear(&self.dir);
        self.dir.clone()
    }

    /// With an overlay, `work/` becomes a plain copy of what the agent saw and the layers go.
    fn keep_layers(&self) {
        if let Some(o) = &self.overlay {
            match self.tree.materialize(&self.root) {
                Ok(()) => {
                    if let Err(e) = remove::tree(&o.dir) {
                        eprintln!("warning: cannot remove {}: {e}", o.dir.display());
                    }
                }
                Err(e) => eprintln!(
                    "warning: the kept workspace {} is incomplete: {e}; its layers are in {}",
                    self.root.display(),
                    o.dir.display()
                ),
            }
        }
    }

    /// Removes the workspace in the background ([`cleanup`]): the case-run does not wait.
    pub fn remove(&self) {
        cleanup::later(self.dir.clone());
    }
}

/// The agent's working folder relative to the workspace root (empty: the root itself).
pub fn agent_dir(case: &Case) -> PathBuf {
    case.cwd
        .clone()
        .or_else(|| case.command.as_ref().and_then(|c| c.cwd.clone()))
        .unwrap_or_default()
}
