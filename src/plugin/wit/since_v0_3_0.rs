//! WIT `assay:plugin@0.3.0` (`wit/0.3.0/plugin.wit`), the current version: its generated
//! bindings, the host functions its plugins call, and its exports in the host's [`Exports`].
//! It adds to 0.2.0's harness description what an organisation's own agent needs said: the
//! folders it reads skills from, how to ask its version (or that it has none), and its own
//! error kinds.

use wasmtime::Store;
use wasmtime::component::{Instance, Resource, ResourceAny};

use super::{Exports, GuestParser, HarnessCall, WitVersion};
use crate::harness::CommandLine;
pub use crate::plugin::host::CaseRunResource;
use crate::plugin::host::{
    HostState, assertion_and_format_exports, guest_parser, harness_exports, version_exports,
};
use crate::plugin::provides::{
    CheckTypeInfo, DeclaredLogin, ErrorKind, FormatInfo, HarnessInfo, PluginVerdict,
};
use crate::process::Exited;

wasmtime::component::bindgen!({
    path: "wit/0.3.0",
    world: "plugin",
    with: {
        "assay:plugin/case-run.run": CaseRunResource,
    },
});

pub use self::assay::plugin::types;
pub use self::exports::assay::plugin::{assertion, format, harness};

crate::plugin::host::case_run_host!(super::assay::plugin::case_run, super::assay::plugin::types);

version_exports!(V0_3_0);

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
        agent: inv.agent.map(str::to_string),
        sync_tasks: inv.sync_tasks,
        hang_heuristic: inv.allow_hang_heuristic,
        sandboxed: inv.sandboxed,
        as_root: call.as_root,
        settings: call.settings.to_vec(),
    }
}

fn info(h: harness::HarnessInfo) -> HarnessInfo {
    HarnessInfo {
        name: h.name,
        summary: h.summary,
        program: h.program,
        engines: h.engines,
        slash_commands: h.slash_commands,
        login: h.login.map(|l| DeclaredLogin {
            vars: l.vars,
            files: l.files,
            fix: l.fix,
        }),
        endpoints: h.endpoints,
        skill_folders: h.skill_folders,
        version_args: h.version_args,
        speaks_acp: h.speaks_acp,
        error_kinds: h
            .error_kinds
            .into_iter()
            .map(|k| ErrorKind {
                name: k.name,
                summary: k.summary,
                counts_as: k.counts_as,
            })
            .collect(),
    }
}

impl Exports for V0_3_0 {
    fn version(&self) -> WitVersion {
        WitVersion::V0_3_0
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
            .map(info)
            .collect())
    }

    harness_exports!();
}

fn finish(
    guest: &harness::Guest,
    s: &mut Store<HostState>,
    parser: ResourceAny,
    exit: &Exited,
) -> wasmtime::Result<String> {
    let exit = harness::Exit {
        code: exit.code,
        timed_out: exit.timed_out,
        stderr_tail: exit.stderr_tail.clone(),
        duration_ms: exit.duration.as_millis() as u64,
    };
    guest.parser().call_finish(s, parser, &exit)
}

guest_parser!();
