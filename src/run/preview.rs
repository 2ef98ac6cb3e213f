//! The plan as people and tools see it, printed before any agent starts and all `--dry-run`
//! shows: a row per case-run (harness, model, timeout, target), the agent runs it takes, the
//! shard, and what would stop a real run.

use crate::record::case_run::{Arm, Kind};

/// The plan of a run, as printed before any agent starts (and all `--dry-run` does): every
/// case-run with its harness, model, timeout and target, and what it will cost in agent runs.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Preview {
    pub case_runs: Vec<PlannedRow>,
    /// Harnesses or a sandbox that cannot run here: a real run would stop on them (exit 3).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<String>,
    /// `--shard`: the slice, and each shard's expected time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Box<ShardPreview>>,
    /// Graders that cannot pass with the tools the run grants (Claude Code plugin evals).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub advisories: Vec<String>,
}

/// The shard a run takes, as the plan prints it.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ShardPreview {
    pub index: u32,
    pub count: u32,
    /// Where K/N came from.
    pub source: String,
    /// Where the expected times came from; `None`: dealt by count.
    pub timings: Option<String>,
    /// Each shard's expected time in ms, shard 1 first; empty when dealt by count.
    pub expected_ms: Vec<u64>,
    /// Case-runs of the whole plan with a time of their own, of all.
    pub timed: usize,
    pub total: usize,
    /// Cut as the run being resumed was first cut.
    pub resumed: bool,
}

impl ShardPreview {
    /// `shard 2/4 (…): cut by expected time from …, this shard ~3m 10s; the 4 shards 3m 10s, …`.
    pub fn line(&self) -> String {
        let mut line = format!(
            "shard {}/{} ({})",
            self.index,
            self.count,
            crate::text::printable(&self.source)
        );
        if self.resumed {
            line.push_str(": cut as the run being resumed was");
            return line;
        }
        if self.expected_ms.is_empty() {
            line.push_str(": cut by count, round-robin (no earlier timings");
            if let Some(t) = &self.timings {
                line.push_str(&format!(" in {}", crate::text::printable(t)));
            }
            line.push(')');
            return line;
        }
        let mine = self
            .expected_ms
            .get(self.index as usize - 1)
            .copied()
            .unwrap_or(0);
        let shown: Vec<String> = self
            .expected_ms
            .iter()
            .take(12)
            .map(|ms| span(*ms))
            .collect();
        let more = if self.expected_ms.len() > 12 {
            ", …"
        } else {
            ""
        };
        line.push_str(&format!(
            ": cut by expected time from {} ({} of {} case-runs timed), this shard ~{}; the {} shards {}{more}",
            crate::text::printable(self.timings.as_deref().unwrap_or("")),
            self.timed,
            self.total,
            span(mine),
            self.count,
            shown.join(", "),
        ));
        line
    }
}

/// `850ms`, `4.2s`, `42s`, `3m 10s`, `1h 5m`.
fn span(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0 => format!("{ms}ms"),
        1..10 => format!("{:.1}s", ms as f64 / 1000.0),
        10..60 => format!("{s}s"),
        60..3600 => format!("{}m {}s", s / 60, s % 60),
        _ => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}

/// One planned case-run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PlannedRow {
    pub suite: String,
    pub case: String,
    pub kind: Kind,
    pub variant: Arm,
    pub run: u32,
    pub harness: String,
    /// `None`: the harness's own default model.
    pub model: Option<String>,
    pub timeout_secs: u64,
    pub target: Option<String>,
    /// Starts an agent (or a test command); a judged trigger eval only asks the judge.
    pub starts_agent: bool,
    pub judged: bool,
    /// Why the run will skip it without starting anything (scripts without `--trust`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl Preview {
    /// One line: case-runs by kind, and how many agent runs and judge calls they take.
    /// `reused` case-runs (cache, `--resume`) start nothing: the `reused_agents` of them that
    /// would have started an agent are not counted as agent runs.
    pub fn line(&self, reused: usize, reused_agents: usize) -> String {
        let count =
            |f: &dyn Fn(&PlannedRow) -> bool| self.case_runs.iter().filter(|r| f(r)).count();
        let cases = count(&|r| r.kind == Kind::Case && r.variant == Arm::Skill);
        let baselines = count(&|r| r.variant == Arm::Baseline);
        let variants = count(&|r| r.variant == Arm::Variant);
        let triggers = count(&|r| r.kind == Kind::Trigger && r.starts_agent);
        let judged_triggers =
            count(&|r| r.kind == Kind::Trigger && !r.starts_agent && r.skipped.is_none());
        let agent_runs = count(&|r| r.starts_agent).saturating_sub(reused_agents);
        let skipped = count(&|r| r.skipped.is_some());
        let mut parts = vec![format!("{cases} case run{}", plural(cases))];
        if baselines > 0 {
            parts.push(format!("{baselines} baseline run{}", plural(baselines)));
        }
        if variants > 0 {
            parts.push(format!("{variants} variant run{}", plural(variants)));
        }
        if triggers > 0 {
            parts.push(format!("{triggers} trigger run{}", plural(triggers)));
        }
        if judged_triggers > 0 {
            parts.push(format!(
                "{judged_triggers} judged trigger quer{}",
                if judged_triggers == 1 { "y" } else { "ies" }
            ));
        }
        let mut line = format!(
            "plan: {} case-run{} ({}): {agent_runs} agent run{}",
            self.case_runs.len(),
            plural(self.case_runs.len()),
            parts.join(", "),
            plural(agent_runs)
        );
        if skipped > 0 {
            line.push_str(&format!(
                ", {skipped} skipped (setup/teardown scripts need --trust)"
            ));
        }
        if reused > 0 {
            line.push_str(&format!(", {reused} already done (cache or --resume)"));
        }
        line
    }
}

impl Preview {
    /// What `--dry-run` prints: a line per case-run, the plan's line, the shard's, what would
    /// stop a real run, and that nothing was started (each line escaped for a terminal).
    pub fn dry_run_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .case_runs
            .iter()
            .map(|r| crate::text::printable(&r.dry_run_line()))
            .collect();
        lines.push(self.line(0, 0));
        if let Some(shard) = &self.shard {
            lines.push(shard.line());
        }
        for a in &self.advisories {
            lines.push(crate::text::printable(a));
        }
        for u in &self.unavailable {
            lines.push(crate::text::printable(&format!("would stop: {u}")));
        }
        lines.push("dry run: nothing was started".into());
        lines
    }
}

impl PlannedRow {
    /// `suite/case  run 1  claude-code  model (harness default)  timeout 600 s`, the target and
    /// why it is skipped when it is.
    fn dry_run_line(&self) -> String {
        let mut line = format!(
            "{}/{}  {}{} {}  {}  model {}  timeout {} s",
            self.suite,
            self.case,
            match self.kind {
                Kind::Trigger => "trigger ",
                Kind::Case => "",
            },
            match self.variant {
                Arm::Skill => "run",
                other => other.word(),
            },
            self.run,
            match (&self.skipped, self.starts_agent) {
                (Some(_), _) => "skipped",
                (None, true) => self.harness.as_str(),
                (None, false) => "judge only",
            },
            self.model.as_deref().unwrap_or("(harness default)"),
            self.timeout_secs,
        );
        if let Some(t) = &self.target {
            line.push_str(&format!("  target {t}"));
        }
        if let Some(why) = &self.skipped {
            line.push_str(&format!("  ({why})"));
        }
        line
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod summary_tests {
    use super::*;

    fn row(kind: Kind, variant: Arm, starts_agent: bool) -> PlannedRow {
        PlannedRow {
            suite: "s".into(),
            case: "c".into(),
            kind,
            variant,
            run: 1,
            harness: "claude-code".into(),
            model: None,
            timeout_secs: 300,
            target: None,
            starts_agent,
            judged: false,
            skipped: None,
        }
    }

    #[test]
    fn the_line_counts_agent_runs_by_kind() {
        let mut s = Preview::default();
        for _ in 0..5 {
            s.case_runs.push(row(Kind::Case, Arm::Skill, true));
        }
        s.case_runs.push(row(Kind::Case, Arm::Baseline, true));
        for _ in 0..6 {
            s.case_runs.push(row(Kind::Trigger, Arm::Skill, true));
        }
        assert_eq!(
            s.line(2, 2),
            "plan: 12 case-runs (5 case runs, 1 baseline run, 6 trigger runs): 10 agent runs, 2 already done (cache or --resume)"
        );
        let judged = Preview {
            case_runs: vec![row(Kind::Trigger, Arm::Skill, false)],
            ..Preview::default()
        };
        assert_eq!(
            judged.line(0, 0),
            "plan: 1 case-run (0 case runs, 1 judged trigger query): 0 agent runs"
        );
    }

    #[test]
    fn the_line_counts_case_runs_skipped_for_want_of_trust() {
        let mut untrusted = row(Kind::Case, Arm::Skill, false);
        untrusted.skipped = Some("scripts".into());
        let s = Preview {
            case_runs: vec![row(Kind::Case, Arm::Skill, true), untrusted],
            ..Preview::default()
        };
        assert_eq!(
            s.line(0, 0),
            "plan: 2 case-runs (2 case runs): 1 agent run, 1 skipped (setup/teardown scripts need --trust)"
        );
    }
}
