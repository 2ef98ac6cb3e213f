//! The command line: argument parsing and dispatch. Each command is a file.
//!
//! Every line for people goes through [`say!`] (stdout) or [`tell!`] (stderr): ids, paths and
//! text from suites, agents, scripts and plugins may hold control characters, and those are
//! shown escaped, never sent, so nothing can erase a line, move the cursor or retitle the
//! window. JSON for tools is printed with [`crate::text::printable_json`].
//!
//! Nothing here writes with std's `print!` family, which panics when the reader has gone
//! (`assay validate --format json | head -c 10`): `print!`, `println!`, `eprint!` and
//! `eprintln!` are redefined below for every command file, and write through [`emit`], which
//! ends a stream quietly on a broken pipe (the exit code stays what it would have been).
//!
//! A flag's `ASSAY_*` variable (`#[arg(env = ...)]`, here and in `run_flags.rs`) is read by
//! clap with the flag, the flag first; every other variable is read through
//! [`crate::host::HostEnv`].

/// `print!` through [`emit`]: a reader that went away ends stdout quietly, never a panic.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::host::output::emit($crate::host::output::Stream::Stdout, &format!($($arg)*))
    };
}

/// `println!` through [`emit`].
macro_rules! println {
    () => {
        $crate::host::output::emit($crate::host::output::Stream::Stdout, "\n")
    };
    ($($arg:tt)*) => {
        $crate::host::output::emit($crate::host::output::Stream::Stdout, &format!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` through [`emit`].
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::host::output::emit($crate::host::output::Stream::Stderr, &format!($($arg)*))
    };
}

/// `eprintln!` through [`emit`].
macro_rules! eprintln {
    () => {
        $crate::host::output::emit($crate::host::output::Stream::Stderr, "\n")
    };
    ($($arg:tt)*) => {
        $crate::host::output::emit($crate::host::output::Stream::Stderr, &format!("{}\n", format_args!($($arg)*)))
    };
}

/// `println!`, control characters shown escaped and no line a workflow command (see
/// [`crate::text::for_terminal`]).
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", $crate::text::for_terminal(&format!($($arg)*)))
    };
}

/// `eprintln!`, control characters shown escaped and no line a workflow command (see
/// [`crate::text::for_terminal`]).
macro_rules! tell {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::text::for_terminal(&format!($($arg)*)))
    };
}

mod doctor;
pub mod grade;
mod init;
mod lint;
mod list;
mod optimize;
mod plugin;
mod report;
mod run;
mod run_flags;
mod shell;
mod validate;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::diag::{self, Problem, RenderOptions};
use crate::discover::{self, Options};
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::suite::Loaded;

/// `assay --version`: the version and the commit it was built from (`build.rs`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("ASSAY_COMMIT"),
    ")"
);

/// Run AI-agent skill evals: BMAD, clauditor, Skillet and UAAPS suites, one runner.
#[derive(Debug, Parser)]
#[command(
    name = "assay",
    version = VERSION,
    about,
    after_help = "Exit codes: 0 all passed (or loaded), 1 some case failed, 2 bad input (nothing ran), 3 infrastructure (a harness or judge missing or failing), 130 interrupted (Ctrl-C; 143 for SIGTERM, 129 for SIGHUP: 128 + the signal)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// A plugin to load besides those in assay.toml: a .wasm component or a folder of them
    /// (repeatable).
    #[arg(long = "plugin", global = true, value_name = "PATH")]
    pub plugins: Vec<PathBuf>,
    /// Load native plugin libraries (declared in assay.toml with `trusted = true`, or named
    /// with --plugin) for this invocation only. They run unsandboxed, in assay's process, so
    /// loading one runs its code; a toml key alone is not consent. `validate`, `list` and
    /// `plugin inspect` never load them, with or without this flag.
    #[arg(long, global = true)]
    pub allow_native: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load every suite under the paths and report every problem found (exit 2 if any).
    Validate(ValidateArgs),
    /// List the suites, their cases and trigger cases.
    List(ListArgs),
    /// Run the suites' cases through a harness in isolated workspaces and record everything.
    Run(Box<RunArgs>),
    /// Grade a captured output against a spec (`--output`), or re-grade a past run folder,
    /// without running any agent.
    Grade(GradeArgs),
    /// Write a plugin template, or inspect a plugin.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Render a report from a run folder.
    Report(ReportArgs),
    /// Run the suites, then again on every save, re-running only what changed (the cache),
    /// with what got fixed or broken since the last pass.
    Watch(Box<watch::WatchArgs>),
    /// Write a starter suite for a skill or slash command, in a format, where its runner looks
    /// (validated; never overwrites without --force).
    Init(init::InitArgs),
    /// Check skills and evals without running anything: front matter by the Agent Skills
    /// specification, the token budget, missing files, vague expectations, checks that
    /// cannot fail, trigger sets, unused fixtures. Errors exit 2 (warnings too with --strict).
    Lint(lint::LintArgs),
    /// Improve a skill against its evals: `optimize description` rewrites the description and
    /// keeps a rewrite only when its holdout trigger accuracy is significantly higher.
    #[command(subcommand)]
    Optimize(optimize::OptimizeCommand),
    /// Check what `assay run` here would use (harness CLIs and logins, the sandbox, the judge,
    /// plugins, the run and cache folders), with the fix for each problem; exit 3 if the run
    /// would stop.
    Doctor(Box<doctor::DoctorArgs>),
    /// Print the shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(shell::CompletionsArgs),
    /// Print the man page (or write every page with --dir).
    Man(shell::ManArgs),
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ReportArgs {
    #[command(subcommand)]
    pub command: Option<ReportCommand>,
    /// The run folder (as `assay run` wrote it).
    pub run_dir: Option<PathBuf>,
    /// The report to render.
    #[arg(long, value_enum, default_value_t = crate::report::Reporter::Markdown)]
    pub format: crate::report::Reporter,
    /// Write it to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With `--format html`: show each case-run beside its own in this older run folder,
    /// changed outcomes marked.
    #[arg(long, value_name = "OLDER_RUN_DIR")]
    pub against: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Compare two runs case-run by case-run; exit 1 when something regressed.
    Diff(ReportDiffArgs),
    /// Join run folders (shards) into one new run folder.
    Merge(ReportMergeArgs),
    /// Per case, pass rate and cost over the last runs (from .assay/history.jsonl), the
    /// direction, and what to look at (regressed, flaky, skill changed).
    Trend(ReportTrendArgs),
    /// Each check and judge expectation over the last runs: the flaky ones (10–90%), and
    /// those that pass as well without the skill (they do not measure it).
    Audit(ReportTrendArgs),
}

#[derive(Debug, Args)]
pub struct ReportTrendArgs {
    /// How many of the latest runs to look at.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub last: u64,
    /// The history file `assay run` appends to.
    #[arg(long, value_name = "FILE", default_value = ".assay/history.jsonl")]
    pub history: PathBuf,
    /// Compare runs even when their harness, model or agent CLI version differ.
    #[arg(long)]
    pub cross: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReportMergeArgs {
    /// The run folders to join.
    #[arg(required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// The new run folder.
    #[arg(long, value_name = "DIR")]
    pub output_dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct ReportDiffArgs {
    /// The earlier run folder.
    pub before: PathBuf,
    /// The later run folder.
    pub after: PathBuf,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    /// Compare even when the runs' harness, model or agent CLI version differ.
    #[arg(long)]
    pub cross: bool,
}

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Write a plugin crate that builds with `cargo build --target wasm32-wasip2`.
    New(PluginNewArgs),
    /// What a plugin provides, the WIT version it targets and the grants it would get.
    Inspect(PluginInspectArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PluginKind {
    Assertion,
    Format,
    Harness,
}

#[derive(Debug, Args)]
pub struct PluginNewArgs {
    /// The plugin's name (a folder of this name is created).
    pub name: String,
    /// What it provides.
    #[arg(long, value_enum, default_value_t = PluginKind::Assertion)]
    pub kind: PluginKind,
    /// Where to create it (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PluginInspectArgs {
    /// A .wasm component, or a native library (described, never loaded).
    pub path: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GradeArgs {
    /// A spec file or folder (with --output), or a run folder to re-grade.
    pub path: PathBuf,
    /// A pre-captured output to grade against the spec; the agent is not run.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The case to grade, as `case` or `suite/case`, when the spec has several.
    #[arg(long)]
    pub case: Option<String>,
    /// Compare blind (A/B, both orders) against another output file (with --output) or
    /// another run folder (with a run folder), case-run by case-run.
    #[arg(long, value_name = "PATH")]
    pub against: Option<PathBuf>,
    #[command(flatten)]
    pub judge: JudgeChoice,
    /// Print the grading as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub checks: CheckArgs,
}

/// What checks may do (shared by `run` and `grade`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CheckArgs {
    /// Let `urls_reachable` send HEAD requests to loopback, private and link-local addresses
    /// (refused by default, against server-side request forgery).
    #[arg(long, env = "ASSAY_ALLOW_PRIVATE_URLS", value_parser = clap::builder::BoolishValueParser::new(), num_args = 0, default_missing_value = "true", default_value = "false")]
    pub allow_private_urls: bool,
}

/// Which judge grades, and how an Anthropic judge is reached (shared by `run` and `grade`).
#[derive(Debug, Clone, Args)]
pub struct JudgeChoice {
    /// The judge: a provider (anthropic, openai, claude-cli, codex-cli), provider:model, a
    /// model name (claude-* → anthropic, gpt-*/o<digit>* → openai), `auto`, or `none`.
    /// (`ASSAY_JUDGE` is read after the flag, then, for clauditor suites,
    /// `CLAUDITOR_GRADING_PROVIDER`.) `--grading-provider` is clauditor's spelling.
    #[arg(long, alias = "grading-provider", value_name = "JUDGE")]
    pub judge: Option<String>,
    /// How an Anthropic judge is reached: `api` (the Messages API), `cli` (the local `claude`),
    /// or `auto` (`claude` when it is on PATH, else the API), as clauditor's `transport`.
    /// Over `CLAUDITOR_TRANSPORT` and the spec's `transport`; a judge named by --judge or
    /// ASSAY_JUDGE keeps its own unless this flag is given.
    #[arg(long, value_parser = ["api", "cli", "auto"])]
    pub transport: Option<String>,
}

impl JudgeChoice {
    pub fn flags(&self) -> crate::judge::Flags<'_> {
        crate::judge::Flags {
            judge: self.judge.as_deref(),
            transport: self.transport.as_deref(),
        }
    }
}

/// Where to look for suites.
#[derive(Debug, Clone, Args)]
pub struct Selection {
    /// Files or folders to search for eval suites (default: the current folder).
    pub paths: Vec<PathBuf>,
    /// The skill under test (a folder with SKILL.md): find its BMAD evals by the runner's order.
    #[arg(long, value_name = "PATH")]
    pub skill: Option<PathBuf>,
    /// A BMAD eval folder, or an evals.json / triggers.json file, taken before any discovery.
    #[arg(long, value_name = "PATH")]
    pub evals: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub selection: Selection,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub selection: Selection,
    /// Print the suites as JSON (the normalized model).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub selection: Selection,
    /// What the run does, as `run::RunSettings` takes it.
    #[command(flatten)]
    pub settings: run_flags::RunFlags,
    /// Agent processes at once. Default: one per CPU, but no more than one per 400 MB of
    /// available memory (a Claude Code process takes about 300 MB), between 1 and 8.
    #[arg(short, long, env = "ASSAY_JOBS")]
    pub jobs: Option<usize>,
    /// Judge calls at once, across the run (default 4, or `ASSAY_JUDGE_CONCURRENCY`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub judge_jobs: Option<u64>,
    /// Also run every case without the skill, and report what the skill changes (pass rate,
    /// duration, tokens, cost) with Fisher's exact test on the pass counts.
    #[arg(long)]
    pub baseline: bool,
    /// Like --baseline, but the baseline has this version of the skill (a folder with
    /// SKILL.md, or a command file) instead of none.
    #[arg(long, value_name = "PATH", conflicts_with = "baseline")]
    pub baseline_skill: Option<PathBuf>,
    /// Also run every case with another version of the skill (a folder with SKILL.md, or a
    /// command file: a stripped copy, the previous release), reported as the variant beside
    /// the skill with Fisher's exact test on the pass counts (BMAD's `variant` mode).
    #[arg(long, value_name = "SKILL_DIR", conflicts_with_all = ["baseline", "baseline_skill"])]
    pub variant_path: Option<PathBuf>,
    /// Run every suite through this BMAD runner adapter (`adapter.json`: an `invocation` argv
    /// template with `{prompt}` and `{cwd}`, `auth_env`, `transcript`, `skill_dir`,
    /// `env_passthrough`), in the sandbox. Without it, an `adapter.json` beside a suite's eval
    /// files is that suite's harness.
    #[arg(long, value_name = "FILE", env = "BMAD_EVAL_ADAPTER")]
    pub adapter: Option<PathBuf>,
    /// Run every case-run, even those whose inputs are unchanged since a cached run.
    #[arg(long, env = "ASSAY_NO_CACHE", value_parser = clap::builder::BoolishValueParser::new(), num_args = 0, default_missing_value = "true", default_value = "false")]
    pub no_cache: bool,
    #[command(flatten)]
    pub judge: JudgeChoice,
    /// Run Claude Code's background tasks synchronously (`CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1`)
    /// for every suite, over clauditor's `sync_tasks`.
    #[arg(long)]
    pub sync_tasks: bool,
    #[command(flatten)]
    pub checks: CheckArgs,
    /// Reports to write into the run folder at the end (repeatable or comma-separated):
    /// json (report.json), junit (junit.xml), markdown (summary.md), uaaps (one UAAPS
    /// report per package), html (report.html), github (annotations at each failing case's
    /// line, printed, and the summary appended to $GITHUB_STEP_SUMMARY).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub reporter: Vec<crate::report::Reporter>,
    /// Print the JSON report to standard output (progress goes to standard error).
    #[arg(long)]
    pub json: bool,
    /// Skip the trigger canary (before trigger evals through an agent, a query naming the
    /// skill must make it fire, or the run stops: exit 3).
    #[arg(long)]
    pub no_canary: bool,
    /// Append each case's result to this history file (for `assay report trend` and
    /// `audit`). Default: `.assay/history.jsonl` beside `.assay/runs/` when the run folder is
    /// there (the default), none when `--output-dir` puts it elsewhere.
    #[arg(
        long,
        value_name = "FILE",
        env = "ASSAY_HISTORY",
        conflicts_with = "no_history"
    )]
    pub history: Option<PathBuf>,
    /// Append nothing to the history (`assay watch` passes never do).
    #[arg(long)]
    pub no_history: bool,
    /// The command (or acp) harness's program and arguments, split as a shell splits words (quotes
    /// keep spaces; nothing is expanded); `{prompt}` is replaced
    /// by the prompt, otherwise the prompt goes to stdin.
    #[arg(long)]
    pub command: Option<String>,
}

pub fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = inner_process(&argv) {
        return code;
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::BadInput
            } else {
                Exit::Success
            };
            let _ = e.print();
            return code.into();
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            tell!("error: cannot read the current folder: {e}");
            return Exit::Infrastructure.into();
        }
    };
    let mut ctx = LoadCtx::new(cwd);
    // Commands that load no plugin.
    match &cli.command {
        // (`plugin inspect` never loads a native library: --allow-native changes nothing.)
        Command::Plugin(cmd) => return plugin::run(&ctx, cmd).into(),
        Command::Report(args) => return report::run(&ctx, args).into(),
        Command::Init(args) => return init::run(&ctx, args).into(),
        Command::Completions(args) => return shell::completions(args).into(),
        Command::Man(args) => return shell::man(args).into(),
        _ => {}
    }
    let plugins = match load_plugins(&ctx, &scope(&cli, &ctx), &cli.plugins, native(&cli)) {
        Ok(p) => p,
        Err(o) => return o.into(),
    };
    if !plugins.is_empty() {
        ctx.extra = Some(std::sync::Arc::new(plugins.clone()));
    }
    dispatch(&ctx, cli.command, &plugins).into()
}

/// The processes assay is inside a case-run's sandbox, when it is one of them: the first
/// process inside a sandbox (see `sandbox::inside`), or the ACP client run as an ACP agent's
/// parent.
fn inner_process(argv: &[std::ffi::OsString]) -> Option<ExitCode> {
    let first = argv.get(1)?;
    let rest = || -> Vec<String> {
        argv[2..]
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    };
    if first == crate::sandbox::inside::SUBCOMMAND {
        return Some(crate::sandbox::inside::main(&rest()));
    }
    if first == crate::harness::acp::bridge::SUBCOMMAND {
        return Some(crate::harness::acp::bridge::main(&rest()));
    }
    None
}

/// What a command looks at, for finding plugins.
fn scope(cli: &Cli, ctx: &LoadCtx) -> Vec<PathBuf> {
    match &cli.command {
        Command::Validate(a) => a.selection.scope(),
        Command::Lint(a) => a.selection.scope(),
        Command::Optimize(optimize::OptimizeCommand::Description(a)) => {
            let mut v = a.paths.clone();
            v.push(a.skill.clone());
            v
        }
        Command::List(a) => a.selection.scope(),
        Command::Run(a) => a.selection.scope(),
        Command::Doctor(a) => a.selection.scope(),
        Command::Watch(a) => a.run.selection.scope(),
        Command::Grade(a) => grade::scope(ctx, a),
        Command::Plugin(_)
        | Command::Report(_)
        | Command::Init(_)
        | Command::Completions(_)
        | Command::Man(_) => Vec::new(),
    }
}

/// Read-only commands never run native code; the others only with the flag's consent.
fn native(cli: &Cli) -> crate::plugin::NativePolicy {
    match &cli.command {
        Command::Validate(_) | Command::Lint(_) | Command::List(_) | Command::Doctor(_) => {
            crate::plugin::NativePolicy::Never
        }
        _ if cli.allow_native => crate::plugin::NativePolicy::Allowed,
        _ => crate::plugin::NativePolicy::Refused,
    }
}

/// The commands that may use plugins.
fn dispatch(ctx: &LoadCtx, command: Command, plugins: &crate::plugin::Plugins) -> Exit {
    match command {
        Command::Validate(args) => validate::run(ctx, &args),
        Command::Lint(args) => lint::run(ctx, &args),
        Command::Optimize(cmd) => optimize::run(ctx, &cmd, plugins),
        Command::List(args) => list::run(ctx, &args),
        Command::Run(args) => run::run(ctx, &args, plugins),
        Command::Doctor(args) => doctor::run(ctx, &args, plugins),
        Command::Watch(args) => watch::run(ctx, &args, plugins),
        Command::Grade(args) => grade::run(ctx, &args, plugins),
        Command::Plugin(_)
        | Command::Report(_)
        | Command::Init(_)
        | Command::Completions(_)
        | Command::Man(_) => unreachable!("handled in main"),
    }
}

impl Selection {
    /// The files and folders this selection looks at (the current folder when none).
    pub fn scope(&self) -> Vec<PathBuf> {
        let mut v = self.paths.clone();
        v.extend(self.skill.clone());
        v.extend(self.evals.clone());
        if v.is_empty() {
            v.push(PathBuf::from("."));
        }
        v
    }
}

/// The project roots (folders with an `assay.toml`) governing `scope`: the nearest one at or
/// above each path, and every one below a folder in it.
fn project_roots(ctx: &LoadCtx, scope: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    for p in scope {
        let p = ctx.cwd.join(p);
        let start = if p.is_dir() {
            p.as_path()
        } else {
            p.parent().unwrap_or(&p)
        };
        roots.extend(crate::config::find_root(start));
        if p.is_dir() {
            roots.extend(
                crate::suite::paths::walk(&p)
                    .flatten()
                    .filter(|e| e.file_name() == "assay.toml")
                    .filter_map(|e| e.path().parent().map(std::path::Path::to_path_buf)),
            );
        }
    }
    roots.sort();
    roots.dedup();
    roots
}

/// The plugins the projects' assay.toml files declare (each once, however many declare it),
/// then those named with `--plugin`.
fn declared_plugins(
    ctx: &LoadCtx,
    scope: &[PathBuf],
    flags: &[PathBuf],
) -> Result<Vec<crate::plugin::Declared>, Exit> {
    use crate::{config::PluginConfig, plugin::Declared};
    let mut declared: Vec<Declared> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for root in project_roots(ctx, scope) {
        let c = crate::config::load(&root, &ctx.shown(&root)).map_err(|p| {
            print_problems(&[*p]);
            Exit::BadInput
        })?;
        for config in c.plugins {
            let at = root.join(&config.path);
            let key = at.canonicalize().unwrap_or(at);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            declared.push(Declared {
                config,
                root: root.clone(),
                origin: ctx.shown(&root.join("assay.toml")).display().to_string(),
            });
        }
    }
    declared.extend(flags.iter().map(|f| Declared {
        config: PluginConfig {
            path: f.display().to_string(),
            ..PluginConfig::default()
        },
        root: ctx.cwd.clone(),
        origin: "--plugin".into(),
    }));
    Ok(declared)
}

/// The plugins of every project involved (`[[plugin]]` in their assay.toml) and those named
/// with `--plugin`. Any problem is bad input: nothing runs.
fn load_plugins(
    ctx: &LoadCtx,
    scope: &[PathBuf],
    flags: &[PathBuf],
    native: crate::plugin::NativePolicy,
) -> Result<crate::plugin::Plugins, Exit> {
    use crate::plugin::Plugins;
    let declared = declared_plugins(ctx, scope, flags)?;
    if declared.is_empty() {
        return Ok(Plugins::default());
    }
    let plugins = Plugins::load(&declared, native).map_err(|errors| {
        for e in &errors {
            tell!("error: plugin ({}): {}", e.origin, e.message);
        }
        tell!("nothing was run");
        Exit::BadInput
    })?;
    for e in &plugins.unloaded_native {
        tell!(
            "note: plugin ({}): {}; check types and formats that are not built in are taken as its, unchecked",
            e.origin,
            e.message
        );
    }
    Ok(plugins)
}

/// Discovers and loads the selected suites.
pub fn load(ctx: &LoadCtx, sel: &Selection) -> Loaded {
    discover::discover(
        ctx,
        &Options {
            paths: sel.paths.clone(),
            skill: sel.skill.clone(),
            evals: sel.evals.clone(),
        },
    )
}

/// Whether to colour output written to stderr: a terminal, and no `NO_COLOR`.
pub fn stderr_color() -> bool {
    use std::io::IsTerminal;
    crate::host::HostEnv::from_process()
        .var("NO_COLOR")
        .is_none()
        && std::io::stderr().is_terminal()
}

/// Prints JSON for tools to stdout, fit for a terminal (see `report::tables::printable_json`).
pub fn print_json(v: &impl serde::Serialize) {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    println!("{}", crate::text::printable_json(&text));
}

/// Prints problems to stderr, and a closing line when any is an error.
pub fn print_problems(problems: &[Problem]) {
    if problems.is_empty() {
        return;
    }
    let color = stderr_color();
    let text = diag::render_text(
        problems,
        RenderOptions {
            color,
            ..RenderOptions::default()
        },
    );
    // Without colours no escape sequence belongs in it at all (its parts are escaped already).
    if color {
        eprint!("{text}");
    } else {
        eprint!("{}", crate::text::printable(&text));
    }
    if let Some(line) = problems_summary(problems) {
        tell!("{line}");
    }
}

/// "3 errors and 1 warning in 2 files; nothing was run", or `None` with no errors.
pub fn problems_summary(problems: &[Problem]) -> Option<String> {
    let errors = problems.iter().filter(|p| p.is_error()).count();
    if errors == 0 {
        return None;
    }
    let warnings = problems.len() - errors;
    let files: std::collections::BTreeSet<_> = problems
        .iter()
        .filter(|p| p.is_error())
        .map(|p| &p.file)
        .collect();
    let plural = |n: usize, w: &str| {
        if n == 1 {
            format!("{n} {w}")
        } else {
            format!("{n} {w}s")
        }
    };
    let mut line = format!("error: {}", plural(errors, "error"));
    if warnings > 0 {
        line.push_str(&format!(" and {}", plural(warnings, "warning")));
    }
    line.push_str(&format!(
        " in {}; nothing was run",
        plural(files.len(), "file")
    ));
    Some(line)
}
