//! A loaded plugin component: what it provides, and bounded calls into it. Each call has its
//! own epoch deadline, runs under the plugin's memory limit and has its stderr captured; a
//! plugin that traps, loops or exhausts its memory fails only the call it was in, and the
//! instance it was in is thrown away.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime::component::{Instance, InstancePre};
use wasmtime::{Store, Trap};

use super::engine::{PluginEngine, TICK};
use super::grants::Grants;
use super::host::{HostState, STDERR_CAP};
use super::wit::{Exports, WitVersion};

/// The WIT version new plugins target (older ones keep loading).
pub const WIT_VERSION: &str = super::wit::CURRENT.as_str();
/// Idle instances kept per plugin.
const MAX_WARM: usize = 4;
/// Longest text taken from a plugin's answer (messages, evidence); longer is cut.
pub const MAX_TEXT: usize = 64 << 10;

pub use super::provides::{CheckTypeInfo, FormatInfo, HarnessInfo};

/// What went wrong in a call, for the check (or harness) that made it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error("the plugin ran past its {0} ms limit and was stopped")]
    Timeout(u128),
    #[error("the plugin exceeded its {0} MiB memory limit and was stopped")]
    Memory(usize),
    #[error("the plugin trapped: {0}")]
    Trap(String),
    #[error("the plugin failed: {0}")]
    Failed(String),
}

pub struct LoadedPlugin {
    /// The file stem: how people name it.
    pub name: String,
    pub path: PathBuf,
    /// BLAKE3 of the component.
    pub hash: String,
    pub grants: Grants,
    pub from_cache: bool,
    pub check_types: Vec<CheckTypeInfo>,
    pub formats: Vec<FormatInfo>,
    pub harnesses: Vec<HarnessInfo>,
    engine: Arc<PluginEngine>,
    pre: InstancePre<HostState>,
    /// Idle instances, ready for the next call.
    warm: std::sync::Mutex<Vec<(Store<HostState>, Instance)>>,
    /// Its exports, of the WIT version it was built against.
    exports: Box<dyn Exports>,
}

impl std::fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlugin")
            .field("name", &self.name)
            .field("path", &self.path)
            .finish()
    }
}

fn cut(s: String) -> String {
    crate::text::cut_bytes(s, MAX_TEXT)
}

impl LoadedPlugin {
    /// Loads, compiles (or takes from the cache) and pre-instantiates a component, then asks
    /// it what it provides.
    pub fn load(engine: Arc<PluginEngine>, path: &Path, grants: Grants) -> Result<Self, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let (component, from_cache) = engine.component(path, &bytes)?;
        let pre = engine.linker.instantiate_pre(&component).map_err(|e| {
            format!(
                "{}: it needs something assay does not provide (it must target assay:plugin at one of {} and WASI 0.2): {e:#}",
                path.display(),
                super::wit::ALL.map(WitVersion::as_str).join(", ")
            )
        })?;
        let exports = super::wit::exports(&pre).ok_or_else(|| {
            format!(
                "{}: exports none of assay:plugin's assertion, format or harness interfaces (of any version this assay loads: {})",
                path.display(),
                super::wit::ALL.map(WitVersion::as_str).join(", ")
            )
        })?;
        let mut plugin = LoadedPlugin {
            name: path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path: path.to_path_buf(),
            hash: blake3::hash(&bytes).to_hex().to_string(),
            grants,
            from_cache,
            check_types: Vec::new(),
            formats: Vec::new(),
            harnesses: Vec::new(),
            engine,
            pre,
            warm: std::sync::Mutex::new(Vec::new()),
            exports,
        };
        let describe = |e: CallError| format!("{}: describing itself: {e}", path.display());
        if plugin.exports.has_assertion() {
            plugin.check_types = plugin
                .call(|store, inst, p| p.exports.check_types(store, inst))
                .map_err(describe)?;
        }
        if plugin.exports.has_format() {
            plugin.formats = plugin
                .call(|store, inst, p| p.exports.formats(store, inst))
                .map_err(describe)?;
        }
        if plugin.exports.has_harness() {
            plugin.harnesses = plugin
                .call(|store, inst, p| p.exports.harnesses(store, inst))
                .map_err(describe)?;
        }
        Ok(plugin)
    }

    /// Its exports, whatever WIT version it speaks.
    pub fn exports(&self) -> &dyn Exports {
        self.exports.as_ref()
    }

    /// The WIT version it was built against.
    pub fn wit_version(&self) -> WitVersion {
        self.exports.version()
    }

    /// A fresh store with this plugin's grants, memory limit and deadline.
    pub fn store(&self) -> Store<HostState> {
        let (wasi, stderr) = self.grants.wasi();
        let mut store = Store::new(
            &self.engine.engine,
            HostState::new(wasi, stderr, self.grants.memory_bytes),
        );
        store.limiter(|s| &mut s.limits);
        let ticks = (self.grants.timeout.as_nanos() / TICK.as_nanos()).max(1) as u64 + 1;
        store.set_epoch_deadline(ticks);
        store.epoch_deadline_trap();
        store
    }

    /// Runs `f` against a fresh instance; returns its result and whatever the plugin wrote to
    /// stderr.
    pub fn call<R>(
        &self,
        f: impl FnOnce(&mut Store<HostState>, &Instance, &Self) -> wasmtime::Result<R>,
    ) -> Result<R, CallError> {
        self.call_logged(f).0
    }

    /// The WASI (and other) interfaces the component imports.
    pub fn wasi_imports(&self) -> Vec<String> {
        let engine = &self.engine.engine;
        self.pre
            .component()
            .component_type()
            .imports(engine)
            .map(|(name, _)| name.to_string())
            .collect()
    }

    /// A fresh instance in `store`.
    pub fn instantiate(&self, store: &mut Store<HostState>) -> wasmtime::Result<Instance> {
        self.pre.instantiate(store)
    }

    /// A warm instance, or a fresh one.
    fn instance(&self) -> wasmtime::Result<(Store<HostState>, Instance)> {
        if let Some(warm) = self.warm.lock().ok().and_then(|mut w| w.pop()) {
            return Ok(warm);
        }
        let mut store = self.store();
        let inst = self.pre.instantiate(&mut store)?;
        Ok((store, inst))
    }

    /// Runs `f` against an instance of the plugin, with a fresh deadline; returns its result
    /// and what the plugin wrote to stderr during the call.
    ///
    /// Instances are reused between calls (instantiating and initialising a component costs
    /// more than most checks), but never shared by two calls at once, and one whose call
    /// failed in any way is dropped: a trap, a timeout or exhausted memory leaves nothing
    /// behind. Memory and stderr limits hold over an instance's whole life.
    pub fn call_logged<R>(
        &self,
        f: impl FnOnce(&mut Store<HostState>, &Instance, &Self) -> wasmtime::Result<R>,
    ) -> (Result<R, CallError>, String) {
        let (mut store, inst) = match self.instance() {
            Ok(x) => x,
            Err(e) => return (Err(self.classify(&e)), String::new()),
        };
        self.arm(&mut store);
        let before = store.data().stderr.contents().len();
        let result = match super::sync_call::outside_async(|| f(&mut store, &inst, self)) {
            Ok(r) => r.map_err(|e| self.classify(&e)),
            Err(why) => Err(CallError::Failed(why)),
        };
        let all = store.data().stderr.contents();
        let log = String::from_utf8_lossy(&all[before.min(all.len())..]).into_owned();
        let reusable = result.is_ok() && all.len() < STDERR_CAP / 2;
        if reusable
            && let Ok(mut warm) = self.warm.lock()
            && warm.len() < MAX_WARM
        {
            warm.push((store, inst));
        }
        (result, log)
    }

    /// A fresh deadline for the next call.
    pub fn arm(&self, store: &mut Store<HostState>) {
        let ticks = (self.grants.timeout.as_nanos() / TICK.as_nanos()).max(1) as u64 + 1;
        store.set_epoch_deadline(ticks);
    }

    /// Names what stopped a call: the deadline, the memory limit, a trap, or else.
    pub fn classify(&self, e: &wasmtime::Error) -> CallError {
        let text = format!("{e:#}");
        match e.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => CallError::Timeout(self.grants.timeout.as_millis()),
            _ if text.contains("forcing trap when growing memory")
                || text.contains("memory minimum size")
                || text.contains("exceeds memory limits") =>
            {
                CallError::Memory(self.grants.memory_bytes >> 20)
            }
            // The trap's name, not the wasm backtrace; the plugin's own panic message, if any,
            // is in its stderr.
            Some(t) => CallError::Trap(t.to_string()),
            None => CallError::Failed(cut(text)),
        }
    }

    pub fn cut(s: String) -> String {
        cut(s)
    }
}
