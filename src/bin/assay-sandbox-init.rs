//! The first process inside each of assay's sandboxes (see `sandbox::inside`): a small binary
//! of its own, so that starting it costs what starting a small program costs, not what
//! loading all of assay does. `assay __sandbox-exec` does the same where this is missing.
//!
//! It compiles the library's `sandbox/inside/` folder (std, libc and the `landlock` crate
//! only) rather than linking the library: linked, the library brings aws-lc's static
//! constructor (run at every start, in every sandbox) and wasmtime's runtime along, five times
//! the code.

#[path = "../sandbox/inside/mod.rs"]
mod inside;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    inside::main(&args)
}
