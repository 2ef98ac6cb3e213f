//! The run's `run.json`: written before any case-run starts (nothing runs that could not be
//! recorded), and again when the run ends.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::plan::Planned;
use super::schedule::Ran;
use super::{Context, NotStarted, OtherArm, Reused, RunOptions, RunReport};
use crate::config::Config;
use crate::harness::Harness;
use crate::host::Unavailable;
use crate::process;
use crate::record;
use crate::record::layout;

impl RunOptions {
    /// The options as run.json records them (`jobs`: the number the run settled on).
    pub(super) fn record(&self, jobs: usize, max_cost: Option<f64>) -> record::run::OptionsRecord {
        record::run::OptionsRecord {
            harness: self.settings.harness.clone(),
            model: self.settings.model.clone(),
            timeout: self.settings.timeout,
            jobs,
            judge_jobs: self.judge_jobs,
            filter: self.settings.filter.clone(),
            keep_workspaces: self.settings.keep_workspaces,
            trust: self.settings.trust,
            pass_env: self.settings.pass_env.clone(),
            allow_private_urls: self.allow_private_urls,
            runs: self.settings.runs.and_then(super::options::Runs::fixed),
            mode: self.settings.mode,
            trigger_mode: self.settings.trigger_mode,
            trigger_runs: self.settings.trigger_runs,
            trigger_threshold: self.settings.trigger_threshold,
            trigger_model: self.settings.trigger_model.clone(),
            baseline: self.baseline.as_ref().map(|b| match b {
                OtherArm::WithoutSkill => "without-skill".to_string(),
                OtherArm::Skill(p) => p.display().to_string(),
                OtherArm::Variant(p) => format!("variant:{}", p.display()),
            }),
            cache: self.cache,
            // The slice as resolved (`auto` too) is set from the plan.
            shard: None,
            min_pass_rate: self.settings.min_pass_rate,
            pass_k: self.settings.pass_k,
            max_cost,
            with_skills: Vec::new(),
            ablation: self.settings.ablation.map(|a| match a {
                super::options::Ablation::None => "none".to_string(),
                super::options::Ablation::WithWithout => "with-without".to_string(),
            }),
            mocks: self.settings.mocks.map(|m| match m {
                super::options::Mocks::Record => "record".to_string(),
                super::options::Mocks::Off => "off".to_string(),
            }),
            allow_real_servers: self.settings.allow_real_servers,
            threshold: self.settings.threshold,
            tags: self.settings.tags.clone(),
            allow_tools: self.settings.tools.allow.clone(),
            disallow_tools: self.settings.tools.deny.clone(),
        }
    }
}

/// run.json as the run starts now, written to the run folder (made first); a resumed run keeps
/// its first start. Nothing runs that could not be recorded: a write that fails stops the run.
pub(super) fn start(
    run: &Context<'_>,
    sandbox: record::run::SandboxSettings,
) -> Result<RunJson, NotStarted> {
    let started = jiff::Timestamp::now();
    let Context {
        opts,
        setup,
        plan,
        versions,
        dir,
        jobs,
        max_cost,
        ..
    } = *run;
    let mut run_record = record::RunRecord {
        schema: record::run::SCHEMA.into(),
        assay_version: env!("CARGO_PKG_VERSION").into(),
        started: Some(started.to_string()),
        case_runs: plan.case_runs.len(),
        harnesses: versions.clone(),
        judges: plan.judges.iter().map(|(_, slot)| slot.entry()).collect(),
        options: record::run::OptionsRecord {
            with_skills: setup.siblings.iter().map(|s| s.name.clone()).collect(),
            shard: plan.shard.as_ref().map(|s| s.chosen.shard.to_string()),
            ..opts.record(jobs, max_cost)
        },
        shard: plan.shard.as_ref().map(super::plan::ShardPlan::record),
        sandbox: Some(sandbox),
        plugins: opts.plugins.record(),
        planned: plan.case_runs.iter().map(Planned::record).collect(),
        projects: setup
            .configs
            .iter()
            .map(|(root, c)| (root.display().to_string(), config_record(c)))
            .collect(),
        ..record::RunRecord::default()
    };
    if opts.settings.resume.is_some()
        && let Ok(old) = record::read_run(dir)
    {
        // The run keeps its first start; each resumption is noted.
        run_record.resumed = old.resumed;
        run_record.resumed.push(started.to_string());
        run_record.started = old.started;
    }
    // Private (0700): what an agent printed or copied is no other local user's to read.
    if let Err(e) = record::write::create_run_folder(dir)
        .and_then(|()| record::write_json(&dir.join(layout::RUN_JSON), &run_record))
    {
        // Nothing runs that could not be recorded.
        return Err(NotStarted::Unavailable(vec![(
            "run folder".into(),
            Unavailable {
                message: format!("cannot write {}: {e}", dir.join(layout::RUN_JSON).display()),
                fix: "free some disk space, or pass --output-dir to a folder you can write".into(),
            },
        )]));
    }
    Ok(RunJson {
        record: run_record,
        started,
    })
}

/// run.json as written when the run started, to be written again when it ends.
pub(super) struct RunJson {
    record: record::RunRecord,
    /// This invocation's start (a resumed run's record keeps its first).
    started: jiff::Timestamp,
}

impl RunJson {
    /// Whether the cache is on, as it turned out: without its key it is off.
    pub(super) fn cache_on(&mut self, on: bool) {
        self.record.options.cache = on;
    }

    /// Writes run.json again as the run ends (when it finished, whether a signal stopped it)
    /// and reports the run; a write that fails is reported, not fatal.
    pub(super) fn finish(
        self,
        dir: PathBuf,
        ran: Ran,
        reused: Vec<Reused>,
        unsandboxed: bool,
    ) -> RunReport {
        let RunJson {
            record: mut run_record,
            started,
        } = self;
        // The run's end, for its wall time in reports.
        let finished = jiff::Timestamp::now();
        run_record.finished = Some(finished.to_string());
        run_record.duration_ms = Some(finished.duration_since(started).as_millis() as u64);
        let interrupted = ran.signal != 0;
        if interrupted {
            run_record.interrupted = true;
        }
        run_record.budget_stop = ran.budget_stop.clone();
        // A harness with no version of its own (the generic `acp`): as its agent reported it.
        for (h, agent) in &ran.agents {
            let v = run_record.harnesses.entry(h.clone()).or_default();
            if v.is_empty() {
                *v = agent.clone();
            }
        }
        let record_error = record::write_json(&dir.join(layout::RUN_JSON), &run_record)
            .err()
            .map(|e| format!("cannot write {}: {e}", dir.join(layout::RUN_JSON).display()));
        RunReport {
            record_error,
            dir,
            ran: ran.ran,
            judge_failed: ran.judge_failed,
            output_cut: ran.output_cut,
            reused,
            interrupted,
            signal: ran.signal,
            budget_stop: ran.budget_stop,
            unsandboxed,
        }
    }
}

/// A project's configuration as `run.json` records it: its `env` by names only.
fn config_record(c: &Config) -> serde_json::Value {
    let mut v = serde_json::to_value(c).unwrap_or_default();
    if let Some(env) = v.pointer_mut("/run/env")
        && let Some(names) = env
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>())
    {
        *env = names.into();
    }
    v
}

/// Where harness programs are run for their version (see
/// [`super::sandboxing::Sandboxing::version_probe`]).
pub(super) struct VersionProbe {
    /// The sandbox; `None` when the run has none (`--sandbox none`).
    pub setting: Option<crate::sandbox::Setting>,
    /// Where the scratch folder is made.
    pub parent: std::path::PathBuf,
}

/// Each harness CLI's version, and the harnesses whose program cannot be started where
/// their agents will run.
#[derive(Default)]
pub(super) struct Versions {
    pub text: BTreeMap<String, String>,
    pub missing: Vec<(String, crate::host::Unavailable)>,
}

/// Each harness CLI's `--version` (10 s at most each), run as its agents will be: in the
/// sandbox (no network, in a scratch folder with a HOME of its own), never on the host
/// beside the user's files. A program the sandbox cannot start is said in `missing`.
pub(super) async fn harness_versions(
    harnesses: impl IntoIterator<Item = &dyn Harness>,
    probe: &VersionProbe,
) -> Versions {
    let mut out = Versions::default();
    for h in harnesses {
        let Some(crate::harness::VersionCommand { program, args }) = h.version_command() else {
            continue;
        };
        if out.text.contains_key(h.name()) {
            continue;
        }
        match version_of(&program, args, probe).await {
            Ok(text) => {
                out.text.insert(h.name().to_string(), text);
            }
            Err(why) => out.missing.push((
                h.name().to_string(),
                crate::host::Unavailable {
                    message: format!(
                        "`{program}` (the {} harness's program) cannot be started inside the sandbox: {why}",
                        h.name()
                    ),
                    fix: "install it where the sandbox shows it (a system folder such as /usr/local/bin, or a folder outside the project, the current folder and HOME, which the sandbox hides), or name it by such a path".into(),
                },
            )),
        }
        if !out.text.contains_key(h.name()) {
            out.text.insert(h.name().to_string(), String::new());
        }
    }
    out
}

/// The first line `program args` prints, run where the probe says; `Err` when the sandbox
/// could not start it. Without a sandbox only `--version` is run (on the host): other
/// arguments are a plugin's own choice, never run outside the sandbox. With no arguments (a
/// program without a version flag) it is only looked up, and nothing is recorded.
async fn version_of(
    program: &str,
    args: Option<Vec<String>>,
    probe: &VersionProbe,
) -> Result<String, String> {
    let sandboxed = probe.setting.is_some();
    match args {
        Some(args) if sandboxed || args == ["--version"] => {
            let (exited, text) = probed(program, args, probe.setting.clone(), probe).await?;
            if exited.code == Some(127) && sandboxed {
                let said = exited.stderr_tail.trim().lines().last().unwrap_or("");
                return Err(crate::text::printable(said));
            }
            Ok(text)
        }
        None if sandboxed => looked_up(program, probe).await,
        _ => Ok(String::new()),
    }
}

/// Whether the sandbox, showing what it shows a case-run of `program`, finds it on its PATH
/// as an executable file (the shell's `command -v`, the name passed as an argument).
async fn looked_up(program: &str, probe: &VersionProbe) -> Result<String, String> {
    let mut setting = probe.setting.clone();
    let path_var = crate::host::HostEnv::process_var("PATH").unwrap_or_default();
    if let (Some(s), Some(root)) = (
        setting.as_mut(),
        crate::sandbox::shown::program_root(program, &path_var),
    ) {
        s.read_only.push(root);
    }
    let check = r#"p=$(command -v -- "$1") && [ -f "$p" ] && [ -x "$p" ]"#;
    let args = ["-c", check, "sh", program].map(String::from).to_vec();
    let (exited, _) = probed("/bin/sh", args, setting, probe).await?;
    match exited.code {
        Some(0) => Ok(String::new()),
        _ => Err("not found on the sandbox's PATH".into()),
    }
}

/// Runs `program args` in a scratch folder with a HOME of its own, in `setting`'s sandbox
/// (none: on the host), for 10 s at most: how it ended, and its first line (bounded).
async fn probed(
    program: &str,
    args: Vec<String>,
    setting: Option<crate::sandbox::Setting>,
    probe: &VersionProbe,
) -> Result<(process::Exited, String), String> {
    let scratch = record::write::create_missing_private(&probe.parent)
        .and_then(|_| {
            tempfile::Builder::new()
                .prefix("assay-version-")
                .tempdir_in(&probe.parent)
        })
        .map_err(|e| format!("no scratch folder in {}: {e}", probe.parent.display()))?;
    let (work, home) = (scratch.path().join("work"), scratch.path().join("home"));
    for d in [&work, &home] {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    let mut spawn = process::Spawn::new(program.to_string(), &work);
    spawn.args = args;
    spawn.env = crate::host::HostEnv::process_var("PATH")
        .map(|p| ("PATH".to_string(), p))
        .into_iter()
        .collect();
    spawn.env.push(("HOME".into(), home.display().to_string()));
    spawn.timeout = Duration::from_secs(10);
    let jail = match &setting {
        Some(s) => s
            .jail(scratch.path(), &work, None, &[])
            .map_err(|e| format!("the sandbox could not be made: {e}"))?,
        None => None,
    };
    if let Some(j) = &jail {
        j.wrap(&mut spawn);
    }
    let mut text = String::new();
    let exited = process::run(&spawn, |l| {
        if text.is_empty() {
            // The program's own words: bounded before run.json and doctor show them.
            text = crate::text::shorten(l.trim(), 200);
        }
    })
    .await
    .map_err(|e| e.to_string())?;
    if let Some(why) = crate::sandbox::failed_to_start(&exited) {
        return Err(why);
    }
    Ok((exited, text))
}
