//! The `assay` binary: a thin shell over the library.

fn main() -> std::process::ExitCode {
    assay::cli::main()
}
