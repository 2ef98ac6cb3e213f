//! What a case-run says while it runs: its agent asking its model API again after a failed
//! request (an outage, a rate limit), so a run held up by one says so before it ends.

use crate::record::case_run::Arm;

/// One retry of one case-run's agent, as its harness reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    pub suite: String,
    pub case: String,
    pub run: u32,
    pub variant: Arm,
    /// Which retry this is, of how many the agent makes at most.
    pub attempt: u64,
    pub max_retries: u64,
    /// The failed request's HTTP status, when it had one.
    pub status: Option<u64>,
}

/// Where the running case-runs send their retries (the run's live display).
pub type Retries = tokio::sync::mpsc::UnboundedSender<Retry>;

impl Retry {
    /// The live line, `which` naming the run where the case has more than one:
    /// `retrying suite/case [run 2/3]: the model API failed (500); the agent asks again (1/3)`.
    pub fn line(&self, which: &str) -> String {
        let status = self.status.map(|s| format!(" ({s})")).unwrap_or_default();
        let of = match self.max_retries {
            0 => String::new(),
            n => format!("/{n}"),
        };
        format!(
            "retrying   {}/{}{which}: the model API failed{status}; the agent asks again ({}{of})",
            self.suite, self.case, self.attempt
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_says_which_case_run_why_and_how_many() {
        let mut r = Retry {
            suite: "bmad:greeter".into(),
            case: "card".into(),
            run: 1,
            variant: Arm::Skill,
            attempt: 2,
            max_retries: 3,
            status: Some(500),
        };
        assert_eq!(
            r.line(" [run 1/2]"),
            "retrying   bmad:greeter/card [run 1/2]: the model API failed (500); the agent asks again (2/3)"
        );
        (r.status, r.max_retries) = (None, 0);
        assert_eq!(
            r.line(""),
            "retrying   bmad:greeter/card: the model API failed; the agent asks again (2)"
        );
    }
}
