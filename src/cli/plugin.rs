//! `assay plugin new` and `assay plugin inspect`.

use serde_json::json;

use super::{PluginCommand, PluginInspectArgs, PluginKind, PluginNewArgs};
use crate::exit::Exit;
use crate::formats::LoadCtx;
use crate::plugin::grants::Grants;
use crate::plugin::loaded::{LoadedPlugin, WIT_VERSION};
use crate::plugin::{Provider, engine};

pub fn run(ctx: &LoadCtx, cmd: &PluginCommand) -> Exit {
    match cmd {
        PluginCommand::New(args) => new(ctx, args),
        PluginCommand::Inspect(args) => inspect(ctx, args),
    }
}

/// The SDK, copied into each new plugin so it builds offline and stands alone.
// The guest SDK, through links to plugins/sdk (a folder with its own Cargo.toml is left out of
// the published package, so the crate reaches it by these names).
const SDK_LIB: &str = include_str!("templates/sdk-lib.rs.in");
const SDK_MANIFEST: &str = include_str!("templates/sdk-manifest.toml.in");
const WIT: &str = include_str!("../../wit/0.3.0/plugin.wit");
const TEMPLATE_ASSERTION: &str = include_str!("templates/assertion.rs");
const TEMPLATE_FORMAT: &str = include_str!("templates/format.rs");
const TEMPLATE_HARNESS: &str = include_str!("templates/harness.rs");

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_lowercase())
}

fn new(ctx: &LoadCtx, args: &PluginNewArgs) -> Exit {
    if !valid_name(&args.name) {
        tell!(
            "error: `{}` is not a plugin name: use lowercase letters, digits, `-` and `_`, starting with a letter",
            args.name
        );
        return Exit::BadInput;
    }
    let parent = args
        .dir
        .as_ref()
        .map(|d| ctx.cwd.join(d))
        .unwrap_or_else(|| ctx.cwd.clone());
    let root = parent.join(&args.name);
    if root.exists() {
        tell!("error: {} already exists", ctx.shown(&root).display());
        return Exit::BadInput;
    }
    let (files, kind) = files(args);
    for (rel, text) in &files {
        let path = root.join(rel);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&path, text));
        if let Err(e) = written {
            tell!("error: {}: {e}", ctx.shown(&path).display());
            return Exit::Infrastructure;
        }
    }
    say!(
        "created {} ({kind} plugin); build it with:\n  cd {} && cargo build --release --target wasm32-wasip2",
        ctx.shown(&root).display(),
        ctx.shown(&root).display()
    );
    Exit::Success
}

/// A new plugin's files, each with its text: its manifest and README, the template of its
/// kind, and a copy of the SDK and the WIT; and the kind, as said.
fn files(args: &PluginNewArgs) -> (Vec<(&'static str, String)>, &'static str) {
    let crate_name = args.name.replace('-', "_");
    let (template, kind) = match args.kind {
        PluginKind::Assertion => (TEMPLATE_ASSERTION, "assertion"),
        PluginKind::Format => (TEMPLATE_FORMAT, "format"),
        PluginKind::Harness => (TEMPLATE_HARNESS, "harness"),
    };
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
[lib]\ncrate-type = [\"cdylib\", \"rlib\"]\n\n[dependencies]\nassay-plugin = {{ path = \"assay-plugin\" }}\n\n\
# A workspace of its own, so it builds where it stands.\n[workspace]\n\n\
[profile.release]\nopt-level = \"s\"\nstrip = true\n",
        name = args.name
    );
    let readme = format!(
        "# {name}\n\nAn assay {kind} plugin.\n\n```\ncargo test                                          # its own tests, natively\n\
cargo build --release --target wasm32-wasip2        # the component\nassay plugin inspect target/wasm32-wasip2/release/{crate_name}.wasm\n```\n\n\
Use it from a project's `assay.toml`:\n\n```toml\n[[plugin]]\npath = \"path/to/{crate_name}.wasm\"\n```\n\n\
`assay-plugin/` is assay's plugin SDK (a copy, so this builds offline); its `wit/` is the\n\
interface, `assay:plugin@{WIT_VERSION}`.\n",
        name = args.name
    );
    let files: Vec<(&str, String)> = vec![
        ("Cargo.toml", manifest),
        ("README.md", readme),
        ("src/lib.rs", template.replace("{{name}}", &args.name)),
        ("assay-plugin/Cargo.toml", SDK_MANIFEST.to_string()),
        ("assay-plugin/src/lib.rs", SDK_LIB.to_string()),
        ("assay-plugin/wit/plugin.wit", WIT.to_string()),
        (".gitignore", "/target\n".to_string()),
    ];
    (files, kind)
}

/// The WASI interfaces a component imports, and the grant each would need to do anything.
fn wasi_needs(imports: &[String]) -> Vec<(String, &'static str)> {
    imports
        .iter()
        .filter_map(|i| {
            let need = if i.starts_with("wasi:filesystem/preopens") {
                "read_dirs (no folder is visible without one)"
            } else if i.starts_with("wasi:sockets/tcp")
                || i.starts_with("wasi:sockets/ip-name-lookup")
            {
                "network (no connection is allowed without one)"
            } else if i.starts_with("wasi:cli/environment") {
                "env only if it reads variables (Rust's standard library imports this in every program; it sees none without a grant)"
            } else {
                return None;
            };
            Some((i.clone(), need))
        })
        .collect()
}

/// A native library, described without loading it: loading one runs its code, and inspecting
/// is how a user decides whether to trust it.
fn inspect_native(ctx: &LoadCtx, args: &PluginInspectArgs, path: &std::path::Path) -> Exit {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            tell!("error: {}: {e}", ctx.shown(path).display());
            return Exit::BadInput;
        }
    };
    let Some(kind) = crate::plugin::native::kind_of(&bytes) else {
        tell!(
            "error: {}: neither a .wasm component nor a native library",
            args.path.display()
        );
        return Exit::BadInput;
    };
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().trim_start_matches("lib").to_string())
        .unwrap_or_default();
    let hash = blake3::hash(&bytes).to_hex().to_string();
    let why = "not loaded: inspecting never runs native code; what it provides is known only when `assay run --allow-native` loads it";
    if args.json {
        super::print_json(&json!({
            "name": name, "path": path, "blake3": hash, "sandboxed": false, "native": kind,
            "loaded": false, "note": why,
        }));
        return Exit::Success;
    }
    say!("{name}  {}", ctx.shown(path).display());
    say!(
        "  NATIVE library ({kind}): runs unsandboxed, in assay's process, blake3 {}",
        &hash[..16]
    );
    say!("  {why}");
    Exit::Success
}

fn inspect(ctx: &LoadCtx, args: &PluginInspectArgs) -> Exit {
    let path = ctx.cwd.join(&args.path);
    let is_wasm = path.extension().is_some_and(|e| e == "wasm");
    if !is_wasm {
        return inspect_native(ctx, args, &path);
    }
    let declared = declared_grants(ctx, &path);
    let grants = declared.clone().unwrap_or_default();
    let plugin = match engine::shared().and_then(|e| LoadedPlugin::load(e, &path, grants.clone())) {
        Ok(p) => std::sync::Arc::new(p),
        Err(e) => {
            tell!("error: {e}");
            return Exit::BadInput;
        }
    };
    let provider = Provider::Wasm(plugin.clone());
    let imports = plugin.wasi_imports();
    // What a run would refuse it for (it loads here, to be looked at).
    let problems: Vec<String> = provider
        .harnesses()
        .iter()
        .flat_map(|h| h.problems())
        .collect();
    let outcome = match problems.is_empty() {
        true => Exit::Success,
        false => Exit::BadInput,
    };
    if args.json {
        let mut v = provider.record();
        v["check_types"] = json!(provider.check_types());
        v["formats"] = json!(provider.formats());
        v["harnesses"] = json!(provider.harnesses());
        v["imports"] = json!(imports);
        v["grants"] = json!(grants);
        v["grants_declared"] = json!(declared.is_some());
        v["problems"] = json!(problems);
        super::print_json(&v);
        return outcome;
    }
    say!("{}  {}", provider.name(), ctx.shown(&path).display());
    say!(
        "  sandboxed WebAssembly component, assay:plugin@{}, blake3 {}",
        plugin.wit_version().as_str(),
        &plugin.hash[..16]
    );
    print_provides(&provider, &problems);
    print_grants(ctx, &grants, declared.is_some());
    let needs = wasi_needs(&imports);
    if !needs.is_empty() {
        say!("  asks for (by its imports):");
        for (i, need) in needs {
            say!("    {i}: grant {need}");
        }
    }
    outcome
}

/// The grants the component would get here: from assay.toml's declaration of the same file,
/// if any.
fn declared_grants(ctx: &LoadCtx, path: &std::path::Path) -> Option<Grants> {
    crate::config::find_root(&ctx.cwd).and_then(|root| {
        let c = crate::config::load(&root, &ctx.shown(&root)).ok()?;
        c.plugins.into_iter().find_map(|p| {
            let same = root.join(&p.path).canonicalize().ok()? == path.canonicalize().ok()?;
            same.then(|| Grants::from_config(&p, &root).ok()).flatten()
        })
    })
}

/// Its check types, formats and harnesses, and what `assay run` would refuse it for.
fn print_provides(provider: &Provider, problems: &[String]) {
    section(
        "check types",
        provider
            .check_types()
            .iter()
            .map(|t| (t.name.as_str(), t.summary.as_str())),
    );
    section(
        "formats",
        provider
            .formats()
            .iter()
            .map(|f| (f.name.as_str(), f.summary.as_str())),
    );
    let harnesses = provider.harnesses();
    if !harnesses.is_empty() {
        say!("  harnesses:");
    }
    for h in harnesses {
        say!("    {:<20} {}", h.name, h.summary);
        say!("    {:<20} {}", "", harness_details(h));
    }
    if !problems.is_empty() {
        say!("  refused by `assay run` (exit 2):");
        for p in problems {
            say!("    {p}");
        }
    }
}

/// The grants it gets: time, memory, folders, variables, network.
fn print_grants(ctx: &LoadCtx, grants: &Grants, declared: bool) {
    say!(
        "  grants{}:",
        if declared {
            " (from assay.toml)"
        } else {
            " (none declared: deny-by-default)"
        }
    );
    say!(
        "    time {} ms per call, memory {} MiB",
        grants.timeout.as_millis(),
        grants.memory_bytes >> 20
    );
    let list = |l: Vec<String>| {
        if l.is_empty() {
            "none".to_string()
        } else {
            l.join(", ")
        }
    };
    say!(
        "    read_dirs: {}",
        list(
            grants
                .read_dirs
                .iter()
                .map(|p| ctx.shown(p).display().to_string())
                .collect()
        )
    );
    say!("    env: {}", list(grants.env.clone()));
    say!("    network: {}", list(grants.network.clone()));
}

/// A harness's program and how its version is asked, where its agent reads skills, its
/// login, its endpoints and its own error kinds, on a line.
fn harness_details(h: &crate::plugin::provides::HarnessInfo) -> String {
    let folders = h.skill_folders.join(", ");
    let engines = match (h.engines.is_empty(), h.skill_folders.is_empty()) {
        (true, true) => "none named: skills go to .claude/skills and .agents/skills".to_string(),
        (true, false) => format!("skills go to {folders}"),
        (false, true) => format!("engines {}", h.engines.join(", ")),
        (false, false) => format!(
            "engines {}; skills also go to {folders}",
            h.engines.join(", ")
        ),
    };
    let version = match &h.version_args {
        Some(args) => format!("version from `{} {}`", h.program, args.join(" ")),
        None => "no version flag".to_string(),
    };
    let kinds = match h.error_kinds.is_empty() {
        true => String::new(),
        false => format!(
            "; own errors: {}",
            h.error_kinds
                .iter()
                .map(|k| format!("{} (as {})", k.name, k.counts_as))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let login = h
        .login
        .as_ref()
        .map(|l| {
            format!(
                "; login: {}",
                l.vars
                    .iter()
                    .chain(&l.files)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        })
        .unwrap_or_default();
    let endpoints: Vec<&str> = h.endpoints.iter().map(|(v, _)| v.as_str()).collect();
    let endpoints = match endpoints.is_empty() {
        true => String::new(),
        false => format!("; model endpoint from {}", endpoints.join(", ")),
    };
    let acp = if h.speaks_acp {
        ", speaks ACP: run by assay's ACP client"
    } else {
        ""
    };
    format!(
        "program `{}` ({version}{acp}); {engines}{login}{endpoints}{kinds}",
        h.program
    )
}

fn section<'a>(title: &str, items: impl Iterator<Item = (&'a str, &'a str)>) {
    let items: Vec<_> = items.collect();
    if items.is_empty() {
        return;
    }
    say!("  {title}:");
    for (name, summary) in items {
        say!("    {name:<20} {summary}");
    }
}
