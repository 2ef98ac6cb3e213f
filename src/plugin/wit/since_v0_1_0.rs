//! WIT `assay:plugin@0.1.0` (`wit/0.1.0/plugin.wit`), frozen: its generated bindings and the
//! host functions its plugins call. A later version gets a module of its own beside this one,
//! and plugins built against 0.1.0 keep loading through this one.

use std::sync::Arc;

use wasmtime::component::Resource;

use crate::assert::view::CaseRunView;
use crate::harness::Event;
pub use crate::plugin::host::CaseRun;
use crate::plugin::host::HostState;

wasmtime::component::bindgen!({
    path: "wit/0.1.0",
    world: "plugin",
    with: {
        "assay:plugin/case-run.run": CaseRun,
    },
});

pub use self::assay::plugin::types;
pub use self::exports::assay::plugin::{assertion, format, harness};

impl HostState {
    fn run(&self, r: &Resource<CaseRun>) -> Arc<CaseRunView> {
        // The resource was pushed by the host for this call; a stale handle yields an empty run.
        self.table.get(r).map(|c| c.0.clone()).unwrap_or_default()
    }
}

impl types::Host for HostState {}
impl self::assay::plugin::case_run::Host for HostState {}

impl self::assay::plugin::case_run::HostRun for HostState {
    fn output(&mut self, r: Resource<CaseRun>) -> String {
        self.run(&r).output.clone()
    }

    fn final_message(&mut self, r: Resource<CaseRun>) -> String {
        self.run(&r).final_message.clone()
    }

    fn stdout(&mut self, r: Resource<CaseRun>) -> String {
        self.run(&r).stdout.clone()
    }

    fn stderr(&mut self, r: Resource<CaseRun>) -> String {
        self.run(&r).stderr.clone()
    }

    fn exit_code(&mut self, r: Resource<CaseRun>) -> Option<i32> {
        self.run(&r).exit_code
    }

    fn files(&mut self, r: Resource<CaseRun>) -> Vec<String> {
        self.run(&r)
            .files
            .iter()
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .collect()
    }

    fn file(&mut self, r: Resource<CaseRun>, path: String) -> Option<Vec<u8>> {
        let run = self.run(&r);
        let rel = crate::spec::paths::workspace_relative(&path).ok()?;
        // Relative to the root, else to the agent's folder; never outside the workspace, and
        // never through a symlink.
        [rel.clone(), run.cwd.join(&rel)]
            .into_iter()
            .find_map(|p| run.read_file_bytes(&p))
    }

    fn events(&mut self, r: Resource<CaseRun>) -> Vec<String> {
        self.run(&r)
            .events
            .iter()
            .filter_map(|e| serde_json::to_string(e).ok())
            .collect()
    }

    fn tool_calls(&mut self, r: Resource<CaseRun>) -> Vec<types::ToolCall> {
        self.run(&r)
            .events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCall { name, input, .. } => Some(types::ToolCall {
                    name: name.clone(),
                    input: input.to_string(),
                }),
                _ => None,
            })
            .collect()
    }

    fn skills_invoked(&mut self, r: Resource<CaseRun>) -> Vec<String> {
        self.run(&r)
            .skills_invoked()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    fn usage(&mut self, r: Resource<CaseRun>) -> types::Usage {
        let run = self.run(&r);
        types::Usage {
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: run.cost_usd,
            turns: run.num_turns,
            duration_ms: run.duration_ms,
        }
    }

    fn drop(&mut self, r: Resource<CaseRun>) -> wasmtime::Result<()> {
        self.table.delete(r)?;
        Ok(())
    }
}
