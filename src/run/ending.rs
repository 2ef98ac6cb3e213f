//! How a finished run ends: what its exit depends on ([`Ending`]) and the exit itself, with
//! what to say about it ([`exit`]): interrupted or stopped by the budget (and how to finish),
//! not fully recorded or delivered (3), failed (1), or passed (0).

use std::collections::BTreeMap;

use super::RunReport;
use crate::exit::Exit;

/// How a finished run went, as read back from its folder: what its exit depends on.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ending {
    /// Some case-run ended in an error, the judge failed, an output was cut, or a report or
    /// the history was not delivered.
    pub incomplete: bool,
    /// Case-runs planned that have no record in the run folder (`missing`): a result that
    /// could not be recorded is never a pass, nor a failure of the skill.
    pub unrecorded: usize,
    /// Some case failed.
    pub failed: bool,
}

impl Ending {
    /// From the run's tally of outcomes by word (`missing` counted as not recorded, `error` as
    /// incomplete, as are a judge that failed and an output cut), whether something was not
    /// delivered, and whether some case failed.
    pub fn of(
        report: &RunReport,
        tally: &BTreeMap<&str, usize>,
        not_delivered: bool,
        failed: bool,
    ) -> Self {
        let incomplete = tally.contains_key("error") || report.judge_failed || report.output_cut;
        Ending {
            incomplete: incomplete || not_delivered,
            unrecorded: tally.get("missing").copied().unwrap_or(0),
            failed,
        }
    }
}

/// The exit of a finished run, and the lines to say (on stderr) about it; `dir` is the run
/// folder as the user reaches it.
pub fn exit(report: &RunReport, ending: Ending, dir: &str) -> (Vec<String>, Exit) {
    let mut said = Vec::new();
    let stopped = report.interrupted || report.budget_stop.is_some();
    if !stopped && ending.unrecorded > 0 {
        said.push(format!(
            "error: {} case-run(s) could not be recorded: {dir} has no result.json for them (see the errors above)",
            ending.unrecorded,
        ));
    }
    let not_recorded = |e: &String| format!("error: the run was not fully recorded: {e}");
    let outcome = if report.interrupted {
        said.push(format!(
            "interrupted: finish this run with `assay run --resume {dir}` (and the same selection)"
        ));
        match report.signal {
            libc::SIGTERM => Exit::Terminated,
            libc::SIGHUP => Exit::HungUp,
            _ => Exit::Interrupted,
        }
    } else if let Some(b) = &report.budget_stop {
        said.push(format!(
            "stopped by budget: ${:.4} spent of the ${:.4} limit (--max-cost or `[run] max_cost`); {} case-run(s) not started. Finish with `assay run --resume {dir}` (and the same selection, with a higher limit)",
            b.spent_usd, b.max_cost_usd, b.not_started,
        ));
        said.extend(report.record_error.as_ref().map(not_recorded));
        Exit::Infrastructure
    } else if let Some(e) = &report.record_error {
        said.push(not_recorded(e));
        Exit::Infrastructure
    } else {
        exit_of(ending)
    };
    (said, outcome)
}

/// The exit of a run that was neither stopped nor left `run.json` unwritten: anything not
/// recorded or not delivered is 3 (an infrastructure failure, never a pass or a failure of the
/// skill), else a failed case 1, else 0.
pub fn exit_of(ending: Ending) -> Exit {
    if ending.incomplete || ending.unrecorded > 0 {
        Exit::Infrastructure
    } else if ending.failed {
        Exit::Failed
    } else {
        Exit::Success
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_run_that_could_not_be_recorded_makes_the_run_exit_3() {
        let unrecorded = Ending {
            unrecorded: 1,
            ..Ending::default()
        };
        // Whatever the others did: not a pass (0), not a failure of the skill (1).
        assert_eq!(exit_of(unrecorded), Exit::Infrastructure);
        let failed = Ending {
            failed: true,
            ..unrecorded
        };
        assert_eq!(exit_of(failed), Exit::Infrastructure);
        assert_eq!(
            exit_of(Ending {
                unrecorded: 0,
                ..failed
            }),
            Exit::Failed
        );
        assert_eq!(exit_of(Ending::default()), Exit::Success);
        let incomplete = Ending {
            incomplete: true,
            ..Ending::default()
        };
        assert_eq!(exit_of(incomplete), Exit::Infrastructure);
    }
}
