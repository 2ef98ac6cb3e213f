//! WIT `assay:plugin@0.2.0` (`wit/0.2.0/plugin.wit`), frozen: its generated bindings, the
//! host functions its plugins call, and its exports in the host's [`Exports`].
//! It adds to 0.1.0's harness interface what the built-in adapters use: sub-agent, settings,
//! sandbox and root in the invocation; engines, slash commands, login and endpoints in the
//! harness's description; the whole exit (with its wall time) in `finish`. A 0.2.0 harness's
//! skills go where its engines read them, its version is asked with `--version`, and it has
//! no error kinds of its own (as before 0.3.0).

use wasmtime::Store;
use wasmtime::component::{Instance, Resource, ResourceAny};

use super::{Exports, GuestParser, HarnessCall, WitVersion};
use crate::harness::CommandLine;
pub use crate::plugin::host::CaseRunResource;
use crate::plugin::host::{
    HostState, assertion_and_format_exports, guest_parser, harness_exports, version_exports,
};
use crate::plugin::provides::{
    CheckTypeInfo, DeclaredLogin, FormatInfo, HarnessInfo, PluginVerdict,
};
use crate::process::Exited;

wasmtime::component::bindgen!({
    path: "wit/0.2.0",
    world: "plugin",
    with: {
        "assay:plugin/case-run.run": CaseRunResource,
    },
});

pub use self::assay::plugin::types;
pub use self::exports::assay::plugin::{assertion, format, harness};

crate::plugin::host::case_run_host!(super::assay::plugin::case_run, super::assay::plugin::types);

version_exports!(V0_2_0);

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
        ..HarnessInfo::assumed(String::new(), String::new(), String::new())
    }
}

impl Exports for V0_2_0 {
    fn version(&self) -> WitVersion {
        WitVersion::V0_2_0
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
