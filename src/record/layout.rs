//! The run folder's layout: the one home of every file name assay writes in a run folder
//! (and in each case-run's folder), so a reader and the writer cannot disagree.
//!
//! ```text
//! <run>/run.json                  what was planned and how (record::run::RunRecord)
//! <run>/history.jsonl             one line per run, beside the run folders (--history)
//! <run>/report.html, summary.md, report.json, uaaps-report.json, junit.xml   the reporters'
//! <run>/benchmark.json            skill-creator's aggregate (report::skill_creator)
//! <run>/optimize.json             `assay optimize`'s record
//! <run>/<suite>/<case>/<variant>/<n>/
//!     result.json                 the case-run's record (record::case_run::CaseRunRecord)
//!     prompt.txt, output.txt, stderr.txt, transcript.jsonl, raw.jsonl
//!     workspace.json              the workspace's changes
//!     grading.json, judge-reply.txt, feedback.json
//!     timing.json                 tokens and time (record::timing::Timing)
//! ```

/// The run's record, `record::run::RunRecord`.
pub const RUN_JSON: &str = "run.json";
/// A case-run's record, `record::case_run::CaseRunRecord`, written last and atomically.
pub const RESULT_JSON: &str = "result.json";
/// The prompt the agent was given.
pub const PROMPT_TXT: &str = "prompt.txt";
/// The agent's final output.
pub const OUTPUT_TXT: &str = "output.txt";
/// The agent's stderr (bounded).
pub const STDERR_TXT: &str = "stderr.txt";
/// The normalized events of the case-run.
pub const TRANSCRIPT_JSONL: &str = "transcript.jsonl";
/// The agent CLI's own stream, as it printed it (redacted).
pub const RAW_JSONL: &str = "raw.jsonl";
/// What the case-run changed in its workspace.
pub const WORKSPACE_JSON: &str = "workspace.json";
/// The grade in skill-creator's shape.
pub const GRADING_JSON: &str = "grading.json";
/// A case-run's tokens and time, in agentskills.io's shape (`record::timing::Timing`).
pub const TIMING_JSON: &str = "timing.json";
/// The judge's reply, as it answered (redacted).
pub const JUDGE_REPLY_TXT: &str = "judge-reply.txt";
/// A reviewer's feedback on the case-run (the review viewer).
pub const FEEDBACK_JSON: &str = "feedback.json";
/// skill-creator's aggregate of a run.
pub const BENCHMARK_JSON: &str = "benchmark.json";
/// Claude Code's `claude plugin eval` result.
pub const AGGREGATE_RESULT_JSON: &str = "aggregate-result.json";
/// The history lines of runs.
pub const HISTORY_JSONL: &str = "history.jsonl";
/// `assay optimize`'s record.
pub const OPTIMIZE_JSON: &str = "optimize.json";
/// The review viewer.
pub const REPORT_HTML: &str = "report.html";
/// The Markdown summary.
pub const SUMMARY_MD: &str = "summary.md";
/// The JSON report.
pub const REPORT_JSON: &str = "report.json";
/// The report in UAAPS's shape.
pub const UAAPS_REPORT_JSON: &str = "uaaps-report.json";
/// The JUnit report.
pub const JUNIT_XML: &str = "junit.xml";
