//! The host side of a plugin call, whatever WIT version the plugin speaks: the per-call store
//! state and the case-run resource. Each version's generated bindings and its host functions
//! are in [`super::wit`].

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::assert::view::CaseRunView;

/// The case-run as a host resource.
pub struct CaseRun(pub Arc<CaseRunView>);

/// A plugin call's store: WASI (deny-by-default), the resource table, memory limits and the
/// captured stderr.
pub struct HostState {
    pub wasi: WasiCtx,
    pub table: ResourceTable,
    pub limits: StoreLimits,
    pub stderr: MemoryOutputPipe,
}

/// Bytes of a plugin's stderr kept for the check's log.
pub const STDERR_CAP: usize = 64 << 10;

impl HostState {
    pub fn new(wasi: WasiCtx, stderr: MemoryOutputPipe, memory_bytes: usize) -> Self {
        HostState {
            wasi,
            table: ResourceTable::new(),
            limits: StoreLimitsBuilder::new()
                .memory_size(memory_bytes)
                .table_elements(1 << 20)
                .instances(64)
                .trap_on_grow_failure(true)
                .build(),
            stderr,
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

pub use super::wit::current::{Plugin, assertion, format, harness, types};
