//! The WIT interface, one module per version (as Zed's extension host keeps them): each
//! frozen once released, so a plugin built against any released version keeps loading.
//!
//! The rest of the host speaks to a plugin through [`Exports`], whatever version it was
//! built against; each version's module implements it over its own generated bindings and
//! adapts what the version lacks (a 0.1.0 harness gets no sub-agent, and tells nothing of
//! its logins).

pub mod since_v0_1_0;
pub mod since_v0_2_0;
pub mod since_v0_3_0;

use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre, Resource, ResourceAny};

use super::host::{CaseRunResource, HostState};
use super::provides::{CheckTypeInfo, FormatInfo, HarnessInfo, PluginVerdict};
use crate::harness::{CommandLine, Invocation};
use crate::process::Exited;

/// The version new plugins target (the SDK's and `assay plugin new`'s).
pub use since_v0_3_0 as current;

/// The WIT versions this host loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WitVersion {
    V0_1_0,
    V0_2_0,
    V0_3_0,
}

/// The version [`current`] implements: what new plugins target.
pub const CURRENT: WitVersion = WitVersion::V0_3_0;

/// Every version, newest first: a component is taken as the first whose exports it has.
pub const ALL: [WitVersion; 3] = [WitVersion::V0_3_0, WitVersion::V0_2_0, WitVersion::V0_1_0];

impl WitVersion {
    /// The package version, as `wit/<version>/` and the plugin's imports name it.
    pub const fn as_str(self) -> &'static str {
        match self {
            WitVersion::V0_1_0 => "0.1.0",
            WitVersion::V0_2_0 => "0.2.0",
            WitVersion::V0_3_0 => "0.3.0",
        }
    }

    /// This version's exports in a pre-instantiated component, if it has any of them.
    fn exports(self, pre: &InstancePre<HostState>) -> Option<Box<dyn Exports>> {
        match self {
            WitVersion::V0_1_0 => since_v0_1_0::exports(pre),
            WitVersion::V0_2_0 => since_v0_2_0::exports(pre),
            WitVersion::V0_3_0 => since_v0_3_0::exports(pre),
        }
    }
}

/// The exports of a component, of the newest version it was built against.
pub fn exports(pre: &InstancePre<HostState>) -> Option<Box<dyn Exports>> {
    ALL.iter().find_map(|v| v.exports(pre))
}

/// Links every version's imports (the case-run resource), so components of any of them
/// instantiate.
pub fn add_to_linker(linker: &mut wasmtime::component::Linker<HostState>) -> wasmtime::Result<()> {
    since_v0_1_0::add_to_linker(linker)?;
    since_v0_2_0::add_to_linker(linker)?;
    since_v0_3_0::add_to_linker(linker)
}

type S<'a> = &'a mut Store<HostState>;

/// A plugin's exports, in the host's terms. Each call runs in the given store and instance;
/// a `wasmtime::Error` is the plugin failing (a trap, its deadline, its memory), the inner
/// `Err` its own answer.
pub trait Exports: Send + Sync {
    fn version(&self) -> WitVersion;
    fn has_assertion(&self) -> bool;
    fn has_format(&self) -> bool;
    fn has_harness(&self) -> bool;

    fn check_types(&self, s: S, i: &Instance) -> wasmtime::Result<Vec<CheckTypeInfo>>;
    fn validate(
        &self,
        s: S,
        i: &Instance,
        kind: &str,
        config: &str,
    ) -> wasmtime::Result<Result<(), String>>;
    fn evaluate(
        &self,
        s: S,
        i: &Instance,
        kind: &str,
        config: &str,
        run: Resource<CaseRunResource>,
    ) -> wasmtime::Result<Result<PluginVerdict, String>>;

    fn formats(&self, s: S, i: &Instance) -> wasmtime::Result<Vec<FormatInfo>>;
    fn matches(&self, s: S, i: &Instance, format: &str, value: &str) -> wasmtime::Result<bool>;
    fn find_all(
        &self,
        s: S,
        i: &Instance,
        format: &str,
        text: &str,
    ) -> wasmtime::Result<Vec<(u32, u32)>>;

    fn harnesses(&self, s: S, i: &Instance) -> wasmtime::Result<Vec<HarnessInfo>>;
    fn command(
        &self,
        s: S,
        i: &Instance,
        harness: &str,
        call: &HarnessCall<'_>,
    ) -> wasmtime::Result<Result<CommandLine, String>>;
    /// A parser resource for one turn, bound to this instance.
    fn parser(
        &self,
        s: S,
        i: &Instance,
        harness: &str,
        call: &HarnessCall<'_>,
    ) -> wasmtime::Result<Box<dyn GuestParser>>;
}

/// One turn of a harness, as the host hands it to a plugin.
pub struct HarnessCall<'a> {
    pub inv: &'a Invocation<'a>,
    /// The harness settings that are set, by name (`permission-mode`, …).
    pub settings: &'a [(String, String)],
    pub as_root: bool,
}

/// A harness plugin's parser resource, living in one store for a turn.
pub trait GuestParser: Send {
    fn feed(&self, s: S, line: &str) -> wasmtime::Result<Vec<String>>;
    fn finish(&self, s: S, exit: &Exited) -> wasmtime::Result<String>;
    /// The resource itself, to drop when the turn is over.
    fn resource(&self) -> ResourceAny;
}
