//! Exit codes, one meaning each, shared by every command.

use std::process::ExitCode;

/// What a command's outcome means to a script or CI job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything passed (or loaded).
    Success = 0,
    /// Some case failed.
    Failed = 1,
    /// Bad input: a spec, a flag or a path is wrong. Nothing ran.
    BadInput = 2,
    /// Infrastructure: a harness or judge is missing or failing.
    Infrastructure = 3,
    /// Interrupted (Ctrl-C), as shells report SIGINT.
    Interrupted = 130,
    /// Stopped by SIGHUP (a closed terminal), as shells report it.
    HungUp = 129,
    /// Stopped by SIGTERM (a CI job cancelled), as shells report it.
    Terminated = 143,
}

impl From<Exit> for ExitCode {
    fn from(o: Exit) -> Self {
        ExitCode::from(o as u8)
    }
}
