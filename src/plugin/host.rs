//! The host side of a plugin call, whatever WIT version the plugin speaks: the per-call store
//! state, the case-run resource and what a plugin may ask of it. Each version's generated
//! bindings are in [`super::wit`]; their host functions are [`case_run_host!`].

use std::sync::Arc;

use wasmtime::component::{Resource, ResourceTable};
use wasmtime::{StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::assert::view::CaseRunView;
use crate::harness::Event;

/// The case-run as a host resource.
pub struct CaseRunResource(pub Arc<CaseRunView>);

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

    /// The case-run behind a handle. The resource was pushed by the host for this call; a
    /// stale handle yields an empty run.
    pub fn run(&self, r: &Resource<CaseRunResource>) -> Arc<CaseRunView> {
        self.table.get(r).map(|c| c.0.clone()).unwrap_or_default()
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

/// Files in the workspace after the run, relative to its root, with `/`.
pub fn files(run: &CaseRunView) -> Vec<String> {
    run.files
        .iter()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .collect()
}

/// A workspace file's bytes: relative to the root, else to the agent's folder; never outside
/// the workspace, and never through a symlink.
pub fn file(run: &CaseRunView, path: &str) -> Option<Vec<u8>> {
    let rel = crate::suite::paths::workspace_relative(path).ok()?;
    [rel.clone(), run.cwd.join(&rel)]
        .into_iter()
        .find_map(|p| run.read_file_bytes(&p))
}

/// The transcript, one JSON event per entry.
pub fn events(run: &CaseRunView) -> Vec<String> {
    run.events
        .iter()
        .filter_map(|e| serde_json::to_string(e).ok())
        .collect()
}

/// Tool calls in order, as (name, input JSON).
pub fn tool_calls(run: &CaseRunView) -> Vec<(String, String)> {
    run.events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { name, input, .. } => Some((name.clone(), input.to_string())),
            _ => None,
        })
        .collect()
}

pub fn skills_invoked(run: &CaseRunView) -> Vec<String> {
    run.skills_invoked()
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The `case-run` interface's host functions, for one WIT version's generated bindings (the
/// interface is the same in every version so far; each version has its own traits and types).
macro_rules! case_run_host {
    ($case_run:path, $types:path) => {
        mod case_run_host {
            use ::wasmtime::component::Resource;
            use $case_run as case_run_bindings;
            use $crate::plugin::host::{self as host_fns, CaseRunResource, HostState};
            use $types as types_bindings;

            impl types_bindings::Host for HostState {}
            impl case_run_bindings::Host for HostState {}

            impl case_run_bindings::HostRun for HostState {
                fn output(&mut self, r: Resource<CaseRunResource>) -> String {
                    self.run(&r).output.to_string()
                }
                fn final_message(&mut self, r: Resource<CaseRunResource>) -> String {
                    self.run(&r).final_message.to_string()
                }
                fn stdout(&mut self, r: Resource<CaseRunResource>) -> String {
                    self.run(&r).stdout.to_string()
                }
                fn stderr(&mut self, r: Resource<CaseRunResource>) -> String {
                    self.run(&r).stderr.clone()
                }
                fn exit_code(&mut self, r: Resource<CaseRunResource>) -> Option<i32> {
                    self.run(&r).exit_code
                }
                fn files(&mut self, r: Resource<CaseRunResource>) -> Vec<String> {
                    host_fns::files(&self.run(&r))
                }
                fn file(&mut self, r: Resource<CaseRunResource>, path: String) -> Option<Vec<u8>> {
                    host_fns::file(&self.run(&r), &path)
                }
                fn events(&mut self, r: Resource<CaseRunResource>) -> Vec<String> {
                    host_fns::events(&self.run(&r))
                }
                fn tool_calls(
                    &mut self,
                    r: Resource<CaseRunResource>,
                ) -> Vec<types_bindings::ToolCall> {
                    host_fns::tool_calls(&self.run(&r))
                        .into_iter()
                        .map(|(name, input)| types_bindings::ToolCall { name, input })
                        .collect()
                }
                fn skills_invoked(&mut self, r: Resource<CaseRunResource>) -> Vec<String> {
                    host_fns::skills_invoked(&self.run(&r))
                }
                fn usage(&mut self, r: Resource<CaseRunResource>) -> types_bindings::Usage {
                    let run = self.run(&r);
                    types_bindings::Usage {
                        input_tokens: 0,
                        output_tokens: 0,
                        cost_usd: run.cost_usd,
                        turns: run.num_turns,
                        duration_ms: run.duration_ms,
                    }
                }
                fn drop(&mut self, r: Resource<CaseRunResource>) -> ::wasmtime::Result<()> {
                    self.table.delete(r)?;
                    Ok(())
                }
            }
        }
    };
}
pub(crate) use case_run_host;

/// The `assertion` and `format` exports' calls, for one WIT version's generated bindings
/// (unchanged since 0.1.0), inside its `impl Exports`.
macro_rules! assertion_and_format_exports {
    () => {
        fn has_assertion(&self) -> bool {
            self.assertion.is_some()
        }
        fn has_format(&self) -> bool {
            self.format.is_some()
        }
        fn has_harness(&self) -> bool {
            self.harness.is_some()
        }

        fn check_types(
            &self,
            s: &mut Store<HostState>,
            i: &Instance,
        ) -> wasmtime::Result<Vec<CheckTypeInfo>> {
            Ok(self
                .assertion(s, i)?
                .call_check_types(s)?
                .into_iter()
                .map(|t| CheckTypeInfo {
                    config_schema: serde_json::from_str(&t.config_schema)
                        .unwrap_or(serde_json::Value::Null),
                    name: t.name,
                    summary: t.summary,
                })
                .collect())
        }

        fn validate(
            &self,
            s: &mut Store<HostState>,
            i: &Instance,
            kind: &str,
            config: &str,
        ) -> wasmtime::Result<Result<(), String>> {
            self.assertion(s, i)?.call_validate(s, kind, config)
        }

        fn evaluate(
            &self,
            s: &mut Store<HostState>,
            i: &Instance,
            kind: &str,
            config: &str,
            run: Resource<CaseRunResource>,
        ) -> wasmtime::Result<Result<PluginVerdict, String>> {
            Ok(self
                .assertion(s, i)?
                .call_evaluate(s, kind, config, run)?
                .map(|v| PluginVerdict {
                    passed: v.passed,
                    message: v.message,
                    evidence: v.evidence,
                }))
        }

        fn formats(
            &self,
            s: &mut Store<HostState>,
            i: &Instance,
        ) -> wasmtime::Result<Vec<FormatInfo>> {
            Ok(self
                .format(s, i)?
                .call_formats(s)?
                .into_iter()
                .map(|f| FormatInfo {
                    name: f.name,
                    summary: f.summary,
                    example: f.example,
                })
                .collect())
        }

        fn matches(
            &self,
            s: &mut Store<HostState>,
            i: &Instance,
            name: &str,
            value: &str,
        ) -> wasmtime::Result<bool> {
            self.format(s, i)?.call_matches(s, name, value)
        }

        fn find_all(
            &self,
            s: &mut Store<HostState>,
            i: &Instance,
            name: &str,
            text: &str,
        ) -> wasmtime::Result<Vec<(u32, u32)>> {
            self.format(s, i)?.call_find_all(s, name, text)
        }
    };
}
pub(crate) use assertion_and_format_exports;

/// The `harness` export's calls (`command`, the parser resource), for one WIT version's
/// generated bindings, inside its `impl Exports`. The version's module provides
/// `invocation(&HarnessCall) -> harness::Invocation` and `finish(guest, store, parser, exit)`,
/// the two places versions differ.
macro_rules! harness_exports {
    () => {
        fn command(
            &self,
            s: &mut Store<HostState>,
            i: &Instance,
            name: &str,
            call: &HarnessCall<'_>,
        ) -> wasmtime::Result<Result<CommandLine, String>> {
            Ok(self
                .harness(s, i)?
                .call_command(s, name, &invocation(call))?
                .map(|c| CommandLine {
                    program: c.program,
                    args: c.args,
                    env: c.env,
                    stdin: c.stdin.map(String::into_bytes),
                    shows: Vec::new(),
                }))
        }

        fn parser(
            &self,
            s: &mut Store<HostState>,
            i: &Instance,
            name: &str,
            call: &HarnessCall<'_>,
        ) -> wasmtime::Result<Box<dyn GuestParser>> {
            let guest = self.harness(s, i)?;
            let resource = guest
                .parser()
                .call_constructor(&mut *s, name, &invocation(call))?;
            Ok(Box::new(Parser { guest, resource }))
        }
    };
}
pub(crate) use harness_exports;

/// A version's parser resource, bound to the guest that made it.
macro_rules! guest_parser {
    () => {
        struct Parser {
            guest: harness::Guest,
            resource: ResourceAny,
        }

        impl GuestParser for Parser {
            fn feed(&self, s: &mut Store<HostState>, line: &str) -> wasmtime::Result<Vec<String>> {
                self.guest.parser().call_feed(s, self.resource, line)
            }

            fn finish(&self, s: &mut Store<HostState>, exit: &Exited) -> wasmtime::Result<String> {
                finish(&self.guest, s, self.resource, exit)
            }

            fn resource(&self) -> ResourceAny {
                self.resource
            }
        }
    };
}
pub(crate) use guest_parser;

/// The export indices of one version's three interfaces, and loading each into an instance.
macro_rules! version_exports {
    ($name:ident) => {
        /// This version's exports found in a component.
        pub struct $name {
            assertion: Option<assertion::GuestIndices>,
            format: Option<format::GuestIndices>,
            harness: Option<harness::GuestIndices>,
        }

        /// This version's exports in a component, if it has any.
        pub fn exports(
            pre: &wasmtime::component::InstancePre<HostState>,
        ) -> Option<Box<dyn super::Exports>> {
            let e = $name {
                assertion: assertion::GuestIndices::new(pre).ok(),
                format: format::GuestIndices::new(pre).ok(),
                harness: harness::GuestIndices::new(pre).ok(),
            };
            (e.assertion.is_some() || e.format.is_some() || e.harness.is_some())
                .then(|| Box::new(e) as Box<dyn super::Exports>)
        }

        /// Links this version's imports.
        pub fn add_to_linker(
            linker: &mut wasmtime::component::Linker<HostState>,
        ) -> wasmtime::Result<()> {
            Plugin::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(
                linker,
                |s| s,
            )
        }

        impl $name {
            fn assertion(
                &self,
                s: &mut Store<HostState>,
                i: &Instance,
            ) -> wasmtime::Result<assertion::Guest> {
                match &self.assertion {
                    Some(x) => x.load(s, i),
                    None => Err(wasmtime::format_err!("the plugin exports no check types")),
                }
            }
            fn format(
                &self,
                s: &mut Store<HostState>,
                i: &Instance,
            ) -> wasmtime::Result<format::Guest> {
                match &self.format {
                    Some(x) => x.load(s, i),
                    None => Err(wasmtime::format_err!("the plugin exports no formats")),
                }
            }
            fn harness(
                &self,
                s: &mut Store<HostState>,
                i: &Instance,
            ) -> wasmtime::Result<harness::Guest> {
                match &self.harness {
                    Some(x) => x.load(s, i),
                    None => Err(wasmtime::format_err!("the plugin exports no harnesses")),
                }
            }
        }
    };
}
pub(crate) use version_exports;
