//! One wasmtime engine for the process: epoch interruption driven by a ticker thread, one
//! linker (WASI p2 plus the case-run resource), and compiled components cached on disk by the
//! component's hash and the engine's compatibility hash.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine};

use super::host::HostState;

/// How often the epoch advances: the granularity of call deadlines.
pub const TICK: Duration = Duration::from_millis(5);

pub struct PluginEngine {
    pub engine: Engine,
    pub linker: Linker<HostState>,
    cache_dir: Option<PathBuf>,
}

impl std::fmt::Debug for PluginEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginEngine")
            .field("cache_dir", &self.cache_dir)
            .finish()
    }
}

static ENGINE: OnceLock<Result<Arc<PluginEngine>, String>> = OnceLock::new();

/// The process's plugin engine, made on first use.
pub fn shared() -> Result<Arc<PluginEngine>, String> {
    ENGINE
        .get_or_init(|| PluginEngine::new().map(Arc::new))
        .clone()
}

/// The largest linear memory a plugin may be granted (`memory_mib`).
pub const MAX_MEMORY_MIB: u64 = 256;

fn config(pooling: bool) -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    if pooling {
        let mut pool = wasmtime::PoolingAllocationConfig::default();
        pool.total_component_instances(512)
            .total_core_instances(4096)
            .total_memories(512)
            .total_tables(1024)
            .table_elements(100_000)
            .max_memory_size((MAX_MEMORY_MIB as usize) << 20)
            // Memory a call dirtied is reset, not unmapped, before the slot is reused.
            .linear_memory_keep_resident(1 << 20);
        config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

/// Where compiled components are kept: `ASSAY_CACHE_DIR`, else `$XDG_CACHE_HOME/assay`, else
/// `~/.cache/assay`; `/wasm` below it.
pub fn cache_dir() -> Option<PathBuf> {
    let var = crate::host::HostEnv::process_var;
    let base = var("ASSAY_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("assay")))
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache/assay")))?;
    Some(base.join("wasm"))
}

impl PluginEngine {
    fn new() -> Result<Self, String> {
        // Every call instantiates afresh, so instantiation must be cheap: a pool of slots
        // reused between calls (no mmap per instance). Where the pool's address space cannot
        // be reserved, instances are allocated on demand instead.
        let engine = Engine::new(&config(true))
            .or_else(|_| Engine::new(&config(false)))
            .map_err(|e| format!("cannot start wasmtime: {e}"))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| format!("cannot link WASI: {e}"))?;
        super::wit::add_to_linker(&mut linker)
            .map_err(|e| format!("cannot link the plugin interface: {e}"))?;
        let ticker = engine.weak();
        std::thread::Builder::new()
            .name("assay-epoch".into())
            .spawn(move || {
                while let Some(engine) = ticker.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(TICK);
                }
            })
            .map_err(|e| format!("cannot start the epoch ticker: {e}"))?;
        Ok(PluginEngine {
            engine,
            linker,
            cache_dir: cache_dir(),
        })
    }

    /// The cache file for a component's bytes on this engine.
    fn cache_path(&self, bytes: &[u8]) -> Option<PathBuf> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.engine.precompile_compatibility_hash().hash(&mut h);
        let key = format!("{}-{:016x}.cwasm", blake3::hash(bytes).to_hex(), h.finish());
        Some(self.cache_dir.as_ref()?.join(key))
    }

    /// Compiles a component, or loads it from the cache. Returns whether the cache served it.
    pub fn component(&self, path: &Path, bytes: &[u8]) -> Result<(Component, bool), String> {
        let cached = self.cache_path(bytes);
        if let Some(c) = &cached
            && c.is_file()
        {
            // SAFETY: the cache holds only what this process's `serialize` wrote, keyed by the
            // source's hash and the engine's compatibility hash; a file that fails to load
            // is recompiled and replaced.
            if let Ok(component) = unsafe { Component::deserialize_file(&self.engine, c) } {
                return Ok((component, true));
            }
        }
        let component = Component::new(&self.engine, bytes)
            .map_err(|e| format!("{}: not a valid component: {e:#}", path.display()))?;
        if let (Some(c), Ok(compiled)) = (&cached, component.serialize()) {
            let _ = write_atomic(c, &compiled);
        }
        Ok((component, false))
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
