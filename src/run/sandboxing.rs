//! How the run's processes are contained, decided before anything runs: the sandbox's mode
//! (and a warning when a project's own file turned it off), bubblewrap probed once, each
//! suite's sandbox settings, and whether workspaces can be copy-on-write overlays.

use std::path::PathBuf;

use super::options::RunOptions;
use super::plan::Plan;
use super::resolve::sandbox::{limits, probe_limits, workspace_parent};
use super::setup::Setup;
use super::{Context, cache_key, cow};
use crate::formats::LoadCtx;
use crate::host::HostEnv;
use crate::record;
use crate::record::case_run::TriggerMode;
use crate::sandbox::limits::Enforcement;
use crate::sandbox::{Backend, Network, SandboxMode, Setting};
use crate::workspace::StageOptions;

/// The run's sandbox, as decided.
pub(super) struct Sandboxing {
    mode: SandboxMode,
    /// Some case-run starts a process (all but judged trigger evals do).
    starts_processes: bool,
    /// The backend, probed; `None` without a sandbox.
    backend: Option<Backend>,
    /// Where this machine lets assay enforce the case-runs' limits.
    enforcement: Enforcement,
}

impl Sandboxing {
    /// The sandbox, checked before anything runs: every case-run that starts a process runs in
    /// it unless `--sandbox none` said otherwise. A probe that fails is added to what the plan
    /// lists as unavailable.
    pub(super) fn decide(
        ctx: &LoadCtx,
        setup: &Setup,
        plan: &mut Plan<'_>,
        opts: &RunOptions,
        host: &HostEnv,
    ) -> Sandboxing {
        let configs = &setup.configs;
        let mode = setup.settings.sandbox;
        let starts_processes = plan
            .case_runs
            .iter()
            .any(|p| !(p.trigger.is_some() && opts.settings.trigger_mode == TriggerMode::Judge));
        if opts.settings.sandbox.is_none() && mode == SandboxMode::None && starts_processes {
            // A project's own file turned it off (a pull request can carry that): say which.
            for (root, _) in configs
                .iter()
                .filter(|(_, c)| c.run.sandbox == Some(SandboxMode::None))
            {
                // A folder name may hold anything: no control characters reach the terminal.
                eprintln!(
                    "warning: {} turns the sandbox off (`[run] sandbox = \"none\"`): the agents run unsandboxed; pass --sandbox auto to contain them",
                    crate::text::printable(
                        &ctx.shown(&root.join("assay.toml")).display().to_string()
                    )
                );
            }
        }
        let backend = match mode {
            SandboxMode::None => None,
            _ if !starts_processes => None,
            _ => match crate::sandbox::backend::choose(mode, host) {
                Ok(b) => Some(b),
                Err(u) => {
                    plan.unavailable.push(("sandbox".into(), u));
                    None
                }
            },
        };
        if let (SandboxMode::Auto, Some(b @ Backend::Landlock(_))) = (mode, &backend)
            && let Err(u) = crate::sandbox::backend::probe(SandboxMode::Bwrap, host)
        {
            eprintln!(
                "note: agents are contained by {} rather than bubblewrap ({}); `assay doctor` lists what it does not contain",
                b.version(),
                crate::text::printable(&u.message)
            );
        }
        let enforcement = match backend {
            Some(_) => Enforcement::probe(),
            None => Enforcement::default(),
        };
        Sandboxing {
            mode,
            starts_processes,
            backend,
            enforcement,
        }
    }

    /// The backend that contains the run, when it is sandboxed.
    pub(super) fn backend(&self) -> Option<&Backend> {
        self.backend.as_ref()
    }

    /// Agents run without a sandbox (`--sandbox none`).
    pub(super) fn unsandboxed(&self) -> bool {
        self.backend.is_none() && self.starts_processes
    }

    /// Where a harness's program is run for its version: in the run's sandbox (no network,
    /// the projects, the current folder and HOME hidden, the default limits), in a scratch
    /// folder under the workspaces' parent; `None` for the sandbox when the run has none.
    pub(super) fn version_probe(
        &self,
        ctx: &LoadCtx,
        setup: &Setup,
        opts: &RunOptions,
    ) -> super::run_record::VersionProbe {
        let parent = workspace_parent(&ctx.cwd, opts);
        let setting = self.backend.clone().map(|backend| {
            let mut hidden: Vec<PathBuf> = setup.configs.keys().cloned().collect();
            hidden.push(ctx.cwd.clone());
            hidden.push(parent.clone());
            Setting {
                backend: Some(backend),
                network: Network::None,
                hidden,
                real_home: real_home(&setup.host),
                masked: cache_key::path().into_iter().collect(),
                limits: probe_limits(opts),
                enforcement: self.enforcement.clone(),
                ..Setting::default()
            }
        });
        super::run_record::VersionProbe { setting, parent }
    }

    /// Copy-on-write workspaces, where the sandbox can mount them (probed once, on `runtime`).
    pub(super) fn workspaces(
        &self,
        ctx: &LoadCtx,
        opts: &RunOptions,
        runtime: &tokio::runtime::Runtime,
    ) -> Workspaces {
        let parent = workspace_parent(&ctx.cwd, opts);
        let cow = match self.backend.as_ref().map(|b| (b, b.bwrap())) {
            Some((_, Some(b))) => runtime.block_on(cow::probe(b, &parent)),
            Some((b, None)) => Err(format!("the {} sandbox cannot mount them", b.kind())),
            None => Err("unsandboxed".to_string()),
        };
        if let (Some(Backend::Bwrap(_)), Err(why)) = (&self.backend, &cow) {
            eprintln!(
                "note: workspaces are copies, not copy-on-write overlays: {}",
                crate::text::printable(why)
            );
        }
        Workspaces { parent, cow }
    }

    /// Each limit of a case-run (given `[run.limits]`) and how it holds here; none when
    /// unsandboxed.
    pub(super) fn limits(
        &self,
        opts: &RunOptions,
        config: &crate::sandbox::limits::LimitsConfig,
    ) -> Vec<(&'static str, record::run::LimitHeld)> {
        match &self.backend {
            Some(_) => self.enforcement.describe(limits(opts, config)),
            None => Vec::new(),
        }
    }

    /// The sandbox as run.json records it.
    pub(super) fn record(
        &self,
        opts: &RunOptions,
        workspaces: &Workspaces,
        limits: &crate::sandbox::limits::LimitsConfig,
    ) -> record::run::SandboxSettings {
        record::run::SandboxSettings {
            mode: record::run::word(&self.mode),
            // `unused` when no case-run starts a process (judged trigger evals only).
            kind: match (&self.backend, self.starts_processes) {
                (Some(b), _) => b.kind(),
                (None, true) => "none",
                (None, false) => "unused",
            }
            .into(),
            bwrap: self
                .backend
                .as_ref()
                .and_then(|b| b.bwrap())
                .map(|b| b.version.clone()),
            backend: self.backend.as_ref().map(Backend::version),
            gaps: self.backend.as_ref().map(Backend::gaps).unwrap_or_default(),
            network: opts.settings.network.as_ref().map(record::run::word),
            workspaces: if workspaces.cow.is_ok() {
                "overlay"
            } else {
                "copy"
            }
            .into(),
            limits: self
                .limits(opts, limits)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }
    }

    /// Each suite's sandbox: its network and limits as resolved ([`super::resolve::sandbox`]),
    /// its writable paths, what is shown and what is hidden.
    pub(super) fn settings(&self, ctx: &LoadCtx, run: &Context<'_>) -> Vec<Setting> {
        let Context {
            suites,
            opts,
            setup,
            dir: run_dir,
            ..
        } = *run;
        let configs = &setup.configs;
        let mut hidden: Vec<PathBuf> = configs.keys().cloned().collect();
        hidden.push(ctx.cwd.clone());
        hidden.push(run_dir.to_path_buf());
        hidden.extend(
            opts.settings
                .workspace_dir
                .as_ref()
                .map(|d| ctx.cwd.join(d)),
        );
        hidden.extend(suites.iter().map(|s| ctx.cwd.join(&s.source)));
        let real_home = real_home(&setup.host);
        // The cache's key, wherever a shown toolchain folder (`~/.local`) holds it.
        let masked: Vec<PathBuf> = cache_key::path().into_iter().collect();
        suites
            .iter()
            .zip(&setup.settings.suites)
            .map(|(s, resolved)| {
                let config = &configs[&s.project_root];
                Setting {
                    backend: self.backend.clone(),
                    network: resolved.network,
                    hidden: hidden.clone(),
                    real_home: real_home.clone(),
                    masked: masked.clone(),
                    read_only: config
                        .run
                        .sandbox_read
                        .iter()
                        .map(|p| s.project_root.join(p))
                        .collect(),
                    writable: s
                        .defaults
                        .sandbox
                        .as_ref()
                        .map(|b| b.writable_paths.iter().map(PathBuf::from).collect())
                        .unwrap_or_default(),
                    limits: resolved.limits,
                    enforcement: self.enforcement.clone(),
                }
            })
            .collect()
    }
}

/// The user's HOME (covered inside the sandbox, and where login files are copied from).
fn real_home(host: &HostEnv) -> Option<PathBuf> {
    host.raw("HOME").map(PathBuf::from)
}

/// Where the case-runs' workspaces are made, and how.
pub(super) struct Workspaces {
    parent: PathBuf,
    /// `Ok` when they are copy-on-write overlays; otherwise why they are copies.
    pub(super) cow: Result<(), String>,
}

impl Workspaces {
    /// How every case-run's workspace is staged (each case-run adjusts its copy).
    pub(super) fn stage(&self, ctx: &LoadCtx, run: &Context<'_>) -> StageOptions {
        StageOptions {
            host_env: run.setup.host.vars.clone(),
            pass_env: run.opts.settings.pass_env.clone(),
            // Each case-run's harness's own ([`crate::harness::Harness::login`]).
            login: Default::default(),
            real_home: real_home(&run.setup.host),
            parent: Some(self.parent.clone()),
            install_skill: true,
            command_as_skill: false,
            engines: Vec::new(),
            skill_folders: Vec::new(),
            // The run folder, every suite's specs and its project's assay.toml: the agent
            // never sees its own grading (`.assay/` the copy skips).
            exclude: std::iter::once(run.dir.to_path_buf())
                .chain(run.suites.iter().flat_map(|s| s.spec_paths(&ctx.cwd)))
                .chain(run.suites.iter().map(|s| s.project_root.join("assay.toml")))
                .collect(),
            siblings: run.setup.siblings.clone().into(),
            loads_plugins: false,
            stand_ins: None,
            bases: self.cow.is_ok().then(|| {
                std::sync::Arc::new(crate::workspace::base::Bases::new(self.parent.clone()))
            }),
        }
    }
}
