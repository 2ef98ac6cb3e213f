//! Blind A/B over two runs (`assay grade <run-dir> --against <other>`): a case-run graded
//! again is paired with the other run's case-run of the same suite, case and run number and
//! compared blind; [`Tally`] counts who won; [`ComparisonJson`] is how a comparison is shown
//! as JSON.

use serde::Serialize;

use super::regrade::Recorded;
use super::{Graded, JudgeSlot};
use crate::judge::compare::{self, Comparison, Preference};
use crate::record::layout;
use crate::suite::Case;

/// What the judge is told the outputs answer: the blind-compare prompt, else the case's turns.
fn request(case: &Case) -> String {
    case.judge
        .blind_compare_prompt
        .clone()
        .unwrap_or_else(|| case.turns.join("\n\n"))
}

/// `a` against `b`, blind, by the judge in `slot`.
pub async fn compare_with(
    slot: Option<&JudgeSlot>,
    case: &Case,
    a: &str,
    b: &str,
) -> Result<Comparison, String> {
    match slot {
        Some(JudgeSlot::Ready(judge, _)) => compare::compare(judge, &request(case), a, b)
            .await
            .map_err(|e| e.to_string()),
        Some(JudgeSlot::Unavailable(why)) => Err(format!("not compared: {why}")),
        None => Err("not compared: no judge was chosen".into()),
    }
}

/// The regraded output compared with the same case-run's of the other run.
pub async fn compare_with_other(
    others: &[Recorded],
    r: &Recorded,
    slot: Option<&JudgeSlot>,
    case: &Case,
    graded: &Graded,
) -> Result<Comparison, String> {
    let pair = others.iter().find(|o| {
        o.result.suite == r.result.suite
            && o.result.case == r.result.case
            && o.result.run == r.result.run
    });
    let Some(o) = pair else {
        return Err("not compared: the other run has no such case-run".into());
    };
    let b = std::fs::read_to_string(o.dir.join(layout::OUTPUT_TXT)).unwrap_or_default();
    compare_with(slot, case, &graded.view.output, &b).await
}

/// How many comparisons each side won, tied, or could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// This run's output was better.
    pub a: usize,
    /// The other run's was.
    pub b: usize,
    pub ties: usize,
    pub not_compared: usize,
}

impl Tally {
    pub fn of<'a>(comparisons: impl Iterator<Item = &'a Result<Comparison, String>>) -> Tally {
        let mut t = Tally {
            a: 0,
            b: 0,
            ties: 0,
            not_compared: 0,
        };
        for c in comparisons {
            match c {
                Ok(c) => match c.preferred {
                    Preference::A => t.a += 1,
                    Preference::B => t.b += 1,
                    Preference::Tie => t.ties += 1,
                },
                Err(_) => t.not_compared += 1,
            }
        }
        t
    }
}

/// A comparison as JSON: the comparison, or `{"error": …}` when it could not be made.
#[derive(Serialize)]
#[serde(untagged)]
pub enum ComparisonJson<'a> {
    Made(&'a Comparison),
    Failed { error: &'a str },
}

impl<'a> ComparisonJson<'a> {
    pub fn of(c: &'a Result<Comparison, String>) -> ComparisonJson<'a> {
        match c {
            Ok(c) => ComparisonJson::Made(c),
            Err(error) => ComparisonJson::Failed { error },
        }
    }
}
