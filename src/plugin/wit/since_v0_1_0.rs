//! WIT `assay:plugin@0.1.0` (`wit/0.1.0/plugin.wit`), frozen: its generated bindings, the
//! host functions its plugins call, and its exports adapted to the host's [`Exports`]. A
//! 0.1.0 harness is told nothing of sub-agents, settings or the sandbox, and tells nothing
//! of its logins or endpoints: assay assumes for it what it assumed before 0.2.0.

use wasmtime::Store;
use wasmtime::component::{Instance, Resource, ResourceAny};

use super::{Exports, GuestParser, HarnessCall, WitVersion};
use crate::harness::CommandLine;
pub use crate::plugin::host::CaseRunResource;
use crate::plugin::host::{
    HostState, assertion_and_format_exports, guest_parser, harness_exports, version_exports,
};
use crate::plugin::provides::{CheckTypeInfo, FormatInfo, HarnessInfo, PluginVerdict};
use crate::process::Exited;

wasmtime::component::bindgen!({
    path: "wit/0.1.0",
    world: "plugin",
    with: {
        "assay:plugin/case-run.run": CaseRunResource,
    },
});

pub use self::assay::plugin::types;
pub use self::exports::assay::plugin::{assertion, format, harness};

crate::plugin::host::case_run_host!(super::assay::plugin::case_run, super::assay::plugin::types);

version_exports!(V0_1_0);

fn invocation(call: &HarnessCall<'_>) -> harness::Invocation {
    let inv = call.inv;
    harness::Invocation {
        prompt: inv.prompt.to_string(),
        turn: inv.turn as u32,
        resume: inv.resume.map(str::to_string),
        model: inv.model.map(str::to_string),
        system_prompt: inv.system_prompt.map(str::to_string),
        cwd: inv.cwd.display().to_string(),
        home: inv.home.display().to_string(),
    }
}

impl Exports for V0_1_0 {
    fn version(&self) -> WitVersion {
        WitVersion::V0_1_0
    }

    assertion_and_format_exports!();

    fn harnesses(
        &self,
        s: &mut Store<HostState>,
        i: &Instance,
    ) -> wasmtime::Result<Vec<HarnessInfo>> {
        Ok(self
            .harness(s, i)?
            .call_harnesses(s)?
            .into_iter()
            .map(|h| HarnessInfo::assumed(h.name, h.summary, h.program))
            .collect())
    }

    harness_exports!();
}

/// 0.1.0's `finish` takes the exit's parts, without its wall time.
fn finish(
    guest: &harness::Guest,
    s: &mut Store<HostState>,
    parser: ResourceAny,
    exit: &Exited,
) -> wasmtime::Result<String> {
    guest
        .parser()
        .call_finish(s, parser, exit.code, exit.timed_out, &exit.stderr_tail)
}

guest_parser!();
