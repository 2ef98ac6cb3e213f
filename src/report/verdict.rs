//! A case's verdict over its runs (and a comparison arm's, by the same rule): what every
//! report's headline counts.

use serde::Serialize;

/// A case's verdict: its graded runs against the suite's threshold or stability rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseVerdict {
    Pass,
    Fail,
    /// Every run ended in error.
    Error,
    /// No run was graded (all skipped or not graded).
    None,
}

impl CaseVerdict {
    /// As recorded in JSON: `pass`, `fail`, `error`, `none`.
    pub fn word(self) -> &'static str {
        match self {
            CaseVerdict::Pass => "pass",
            CaseVerdict::Fail => "fail",
            CaseVerdict::Error => "error",
            CaseVerdict::None => "none",
        }
    }

    /// As a headline says it: `passed`, `failed`, `with errors`, `not graded`.
    pub fn said(self) -> &'static str {
        match self {
            CaseVerdict::Pass => "passed",
            CaseVerdict::Fail => "failed",
            CaseVerdict::Error => "with errors",
            CaseVerdict::None => "not graded",
        }
    }

    pub const ALL: [CaseVerdict; 4] = [
        CaseVerdict::Pass,
        CaseVerdict::Fail,
        CaseVerdict::Error,
        CaseVerdict::None,
    ];
}

impl std::fmt::Display for CaseVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}
