//! WebAssembly plugins: check types, formats and harness adapters from components built
//! against `wit/0.1.0` (`assay:plugin@0.1.0`), run sandboxed in wasmtime; and, only when the
//! user opts in, trusted native libraries over the same interface.
//!
//! Plugins are declared in `assay.toml` (`[[plugin]]`) or with `--plugin`; their check types
//! become usable by `type` in suites, their formats in `has_format` and field `format`, and
//! their harnesses with `--harness`.

pub mod check;
pub mod engine;
pub mod grants;
pub mod harness;
pub mod host;
pub mod loaded;
pub mod native;
pub mod provides;
pub mod summary;
pub mod sync_call;
pub mod wit;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::assert::check::Checks;
use crate::assert::formats::ExtraFormats;
use crate::config::PluginConfig;
use crate::syntax::extra::ExtraTypes;
use grants::Grants;
use loaded::LoadedPlugin;
use native::NativePlugin;

/// A plugin declaration and where it came from.
#[derive(Debug, Clone)]
pub struct Declared {
    pub config: PluginConfig,
    /// Paths are relative to this folder (the project root, or the current folder for flags).
    pub root: PathBuf,
    /// `assay.toml` or `--plugin`.
    pub origin: String,
}

/// One loaded plugin, sandboxed or native.
#[derive(Debug, Clone)]
pub enum Provider {
    Wasm(Arc<LoadedPlugin>),
    Native(Arc<NativePlugin>),
}

impl Provider {
    pub fn name(&self) -> &str {
        match self {
            Provider::Wasm(p) => &p.name,
            Provider::Native(p) => &p.name,
        }
    }

    pub fn check_types(&self) -> &[loaded::CheckTypeInfo] {
        match self {
            Provider::Wasm(p) => &p.check_types,
            Provider::Native(p) => &p.check_types,
        }
    }

    pub fn formats(&self) -> &[loaded::FormatInfo] {
        match self {
            Provider::Wasm(p) => &p.formats,
            Provider::Native(p) => &p.formats,
        }
    }

    pub fn harnesses(&self) -> &[loaded::HarnessInfo] {
        match self {
            Provider::Wasm(p) => &p.harnesses,
            Provider::Native(_) => &[],
        }
    }

    /// What the run records about it.
    pub fn record(&self) -> Value {
        match self {
            Provider::Wasm(p) => serde_json::json!({
                "name": p.name, "path": p.path, "blake3": p.hash, "sandboxed": true,
                "wit": p.wit_version().as_str(), "grants": p.grants,
                "check_types": p.check_types.iter().map(|t| &t.name).collect::<Vec<_>>(),
                "formats": p.formats.iter().map(|f| &f.name).collect::<Vec<_>>(),
                "harnesses": p.harnesses.iter().map(|h| &h.name).collect::<Vec<_>>(),
            }),
            Provider::Native(p) => serde_json::json!({
                "name": p.name, "path": p.path, "sandboxed": false,
                "check_types": p.check_types.iter().map(|t| &t.name).collect::<Vec<_>>(),
                "formats": p.formats.iter().map(|f| &f.name).collect::<Vec<_>>(),
            }),
        }
    }
}

/// Every loaded plugin, and which provides what.
#[derive(Debug, Clone, Default)]
pub struct Plugins {
    pub providers: Vec<Provider>,
    /// Native libraries declared but not loaded, because this command never loads native
    /// code ([`NativePolicy::Never`]). While there are any, check types and formats that are
    /// not built in are taken as theirs, unchecked.
    pub unloaded_native: Vec<LoadError>,
}

/// Whether this invocation may load native libraries (they run unsandboxed, in assay's
/// process, so loading one runs its code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativePolicy {
    /// `validate`, `list`: read-only commands never load one; a declared one is noted in
    /// [`Plugins::unloaded_native`].
    Never,
    /// `--allow-native` is on this command line: the user consents for this invocation.
    Allowed,
    /// No consent on the command line (a `trusted = true` in a toml is not consent): a
    /// declared native library is a load error.
    Refused,
}

/// A problem loading plugins: where it was declared and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadError {
    pub origin: String,
    pub message: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.origin, self.message)
    }
}

/// The `.wasm` files a declaration names: the file, or a folder's `*.wasm` in name order.
fn files_of(path: &Path, trusted: bool) -> Result<Vec<PathBuf>, String> {
    if path.is_dir() {
        let mut found: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                ext == "wasm" || (trusted && matches!(ext, "so" | "dylib" | "dll"))
            })
            .collect();
        found.sort();
        if found.is_empty() {
            return Err(format!("{}: no .wasm files in this folder", path.display()));
        }
        Ok(found)
    } else if path.is_file() {
        Ok(vec![path.to_path_buf()])
    } else {
        let shown = crate::suite::paths::normalize_abs(path);
        Err(format!(
            "{}: no such plugin file or folder{}",
            shown.display(),
            build_hint(&shown)
        ))
    }
}

/// For a missing `…/target/wasm32-wasip2/<profile>/x.wasm`: that it is a build output, and
/// the command that builds it.
fn build_hint(path: &Path) -> String {
    let parts: Vec<_> = path.components().collect();
    let Some(i) = parts
        .windows(2)
        .position(|w| w[0].as_os_str() == "target" && w[1].as_os_str() == "wasm32-wasip2")
    else {
        return String::new();
    };
    let workspace: PathBuf = parts[..i].iter().collect();
    let release = parts.get(i + 2).is_some_and(|p| p.as_os_str() == "release");
    format!(
        " (a build output: build it first with `rustup target add wasm32-wasip2` and `cargo build{} --target wasm32-wasip2` in {})",
        if release { " --release" } else { "" },
        workspace.display()
    )
}

impl Plugins {
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty() && self.unloaded_native.is_empty()
    }

    /// Loads every declared plugin. Names must be unique across plugins and built-ins. A
    /// native library is loaded only as `native` allows.
    pub fn load(declared: &[Declared], native: NativePolicy) -> Result<Plugins, Vec<LoadError>> {
        let mut plugins = Plugins::default();
        let mut errors = Vec::new();
        for d in declared {
            let err = |message: String| LoadError {
                origin: d.origin.clone(),
                message,
            };
            let path = d.root.join(&d.config.path);
            // A folder's native libraries are its plugins when the declaration says it holds
            // native ones (`trusted = true`) or they may load anyway (--allow-native).
            let with_native = d.config.trusted || native == NativePolicy::Allowed;
            let grants = match Grants::from_config(&d.config, &d.root) {
                Ok(g) => g,
                Err(e) => {
                    errors.push(err(e));
                    continue;
                }
            };
            let files = match files_of(&path, with_native) {
                Ok(f) => f,
                Err(e) => {
                    errors.push(err(e));
                    continue;
                }
            };
            for file in files {
                let is_wasm = file.extension().is_some_and(|e| e == "wasm");
                let loaded = if is_wasm {
                    engine::shared().and_then(|engine| {
                        LoadedPlugin::load(engine, &file, grants.clone())
                            .map(|p| Provider::Wasm(Arc::new(p)))
                    })
                } else {
                    match native {
                        NativePolicy::Allowed => {
                            NativePlugin::load(&file).map(|p| Provider::Native(Arc::new(p)))
                        }
                        NativePolicy::Never if native::kind_of_file(&file).is_none() => {
                            Err(format!(
                                "{}: neither a .wasm component nor a native library",
                                file.display()
                            ))
                        }
                        NativePolicy::Never => {
                            plugins.unloaded_native.push(err(format!(
                                "the native plugin {} was not loaded: this command never loads native code",
                                file.display()
                            )));
                            continue;
                        }
                        NativePolicy::Refused if d.config.trusted => Err(format!(
                            "{} is a native library (`trusted = true`): it runs unsandboxed, in assay's process, and loads only with --allow-native on the command line",
                            file.display()
                        )),
                        NativePolicy::Refused => Err(format!(
                            "{}: not a .wasm component; a native library runs unsandboxed, in assay's process, and loads only with --allow-native on the command line",
                            file.display()
                        )),
                    }
                };
                match loaded {
                    Ok(p) => plugins.providers.push(p),
                    Err(e) => errors.push(err(e)),
                }
            }
        }
        errors.extend(plugins.clashes());
        errors.extend(plugins.bad_harnesses());
        if errors.is_empty() {
            Ok(plugins)
        } else {
            Err(errors)
        }
    }

    /// Harness descriptions assay refuses (a skill folder outside the workspace, an error kind
    /// badly named or counting as nothing).
    fn bad_harnesses(&self) -> Vec<LoadError> {
        self.providers
            .iter()
            .flat_map(|p| {
                p.harnesses()
                    .iter()
                    .flat_map(|h| h.problems())
                    .map(|message| LoadError {
                        origin: p.name().to_string(),
                        message,
                    })
            })
            .collect()
    }

    /// Names provided twice, or shadowing a built-in.
    fn clashes(&self) -> Vec<LoadError> {
        let mut errors = Vec::new();
        let mut seen: Vec<(String, &str)> = Vec::new();
        for p in &self.providers {
            let names = p
                .check_types()
                .iter()
                .map(|t| ("check type", t.name.clone()))
                .chain(p.formats().iter().map(|f| ("format", f.name.clone())))
                .chain(p.harnesses().iter().map(|h| ("harness", h.name.clone())));
            for (what, name) in names {
                let builtin = match what {
                    "check type" => crate::suite::check_types::lookup(&name).is_some(),
                    "format" => crate::suite::value_formats::lookup(&name).is_some(),
                    _ => crate::harness::is_builtin(&name),
                };
                let key = format!("{what} `{name}`");
                if builtin {
                    errors.push(LoadError {
                        origin: p.name().to_string(),
                        message: format!("{key} is built in; a plugin may not replace it"),
                    });
                } else if let Some((_, other)) = seen.iter().find(|(k, _)| *k == key) {
                    errors.push(LoadError {
                        origin: p.name().to_string(),
                        message: format!("{key} is also provided by the plugin `{other}`"),
                    });
                } else {
                    seen.push((key, p.name()));
                }
            }
        }
        errors
    }

    fn check_provider(&self, name: &str) -> Option<&Provider> {
        self.providers
            .iter()
            .find(|p| p.check_types().iter().any(|t| t.name == name))
    }

    fn format_provider(&self, name: &str) -> Option<&Provider> {
        self.providers
            .iter()
            .find(|p| p.formats().iter().any(|f| f.name == name))
    }

    /// Registers the plugins' check types and formats with a run's checks.
    pub fn install(&self, checks: &mut Checks) {
        for p in &self.providers {
            for t in p.check_types() {
                checks.register(
                    t.name.clone(),
                    Arc::new(check::PluginCheck::new(p.clone(), t.name.clone())),
                );
            }
        }
        if self.providers.iter().any(|p| !p.formats().is_empty()) {
            checks.set_formats(Arc::new(self.clone()));
        }
    }

    /// The harness a plugin provides under this name, configured from the run's settings.
    pub fn harness(
        &self,
        name: &str,
        settings: &crate::harness::HarnessSettings,
    ) -> Option<Box<dyn crate::harness::Harness>> {
        self.providers.iter().find_map(|p| match p {
            Provider::Wasm(w) => w.harnesses.iter().find(|h| h.name == name).map(|h| {
                Box::new(harness::PluginHarness::new(w.clone(), h.clone(), settings)) as _
            }),
            Provider::Native(_) => None,
        })
    }

    /// What the run records.
    pub fn record(&self) -> Vec<Value> {
        self.providers.iter().map(Provider::record).collect()
    }
}

impl ExtraTypes for Plugins {
    fn has_check_type(&self, name: &str) -> bool {
        self.check_provider(name).is_some()
            || (!self.unloaded_native.is_empty()
                && crate::suite::check_types::lookup(name).is_none())
    }

    fn validate_check(&self, name: &str, config: &Value) -> Result<(), String> {
        match self.check_provider(name) {
            Some(p) => check::validate(p, name, config),
            // Perhaps an unloaded native plugin's: it cannot be asked.
            None if !self.unloaded_native.is_empty() => Ok(()),
            None => Err(format!("no plugin provides `{name}`")),
        }
    }

    fn has_format(&self, name: &str) -> bool {
        self.format_provider(name).is_some()
            || (!self.unloaded_native.is_empty()
                && crate::suite::value_formats::lookup(name).is_none())
    }

    fn check_type_names(&self) -> Vec<String> {
        self.providers
            .iter()
            .flat_map(|p| p.check_types().iter().map(|t| t.name.clone()))
            .collect()
    }

    fn format_names(&self) -> Vec<String> {
        self.providers
            .iter()
            .flat_map(|p| p.formats().iter().map(|f| f.name.clone()))
            .collect()
    }
}

impl ExtraFormats for Plugins {
    fn has(&self, name: &str) -> bool {
        self.format_provider(name).is_some()
    }

    fn matches(&self, name: &str, value: &str) -> Result<bool, String> {
        match self.format_provider(name) {
            Some(p) => check::format_matches(p, name, value),
            None => Err(format!("no plugin provides the format `{name}`")),
        }
    }

    fn find_all(&self, name: &str, text: &str) -> Result<Vec<(usize, usize)>, String> {
        match self.format_provider(name) {
            Some(p) => check::format_find_all(p, name, text),
            None => Err(format!("no plugin provides the format `{name}`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_build_output_says_how_to_build_it() {
        let e = files_of(
            Path::new("/p/examples/x/../../plugins/target/wasm32-wasip2/release/m.wasm"),
            false,
        )
        .unwrap_err();
        assert_eq!(
            e,
            "/p/plugins/target/wasm32-wasip2/release/m.wasm: no such plugin file or folder (a build output: build it first with `rustup target add wasm32-wasip2` and `cargo build --release --target wasm32-wasip2` in /p/plugins)"
        );
        let e = files_of(Path::new("/p/gone.wasm"), false).unwrap_err();
        assert_eq!(e, "/p/gone.wasm: no such plugin file or folder");
    }
}
