//! What a check can see of a finished case-run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::shared_text::SharedText;
use crate::harness::Event;

/// The most of one file a check reads.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// A case-run as checks see it. Built from a live run (with its workspace) or from a run
/// folder (with its artifacts and file listing) when re-grading.
#[derive(Debug, Clone, Default)]
pub struct CaseRunView {
    /// What counts as the case's output (final message, stdout, or the output file).
    pub output: SharedText,
    pub final_message: SharedText,
    pub stdout: SharedText,
    pub stderr: String,
    pub exit_code: Option<i32>,
    pub events: Vec<Event>,
    /// Files in the workspace after the run, relative to its root.
    pub files: crate::record::files::FileList,
    /// Files the run created (absent before it), relative to the workspace root.
    pub created: BTreeSet<PathBuf>,
    /// Where file contents can be read: the live workspace, or the run's artifacts.
    pub file_root: Option<crate::workspace::layers::Tree>,
    /// The agent's working folder relative to the workspace root (`inputs` for clauditor).
    pub cwd: PathBuf,
    /// Fixtures the agent changed or deleted.
    pub changed_fixtures: Vec<PathBuf>,
    pub num_turns: Option<u64>,
    pub cost_usd: Option<f64>,
    pub duration_ms: u64,
    /// Tool calls the agent's permission system refused.
    pub permission_denials: usize,
    /// The harness that ran the agent (`claude-code`, `codex`, …): tools named in one engine's
    /// words are matched on another by their kind ([`crate::harness::tool_kinds`]).
    pub harness: String,
    /// The calls to mocked MCP tools, one JSON object a line (Claude Code's `mock_calls`);
    /// `None` when no stand-in ran.
    pub mock_calls: Option<String>,
}

impl CaseRunView {
    /// The names of tools called, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.events.iter().filter_map(|e| match e {
            Event::ToolCall { name, input, .. } => Some((name.as_str(), input)),
            _ => None,
        })
    }

    pub fn skills_invoked(&self) -> Vec<&str> {
        let mut seen = Vec::new();
        for e in &self.events {
            if let Event::SkillInvoked { name, .. } = e
                && !seen.contains(&name.as_str())
            {
                seen.push(name.as_str());
            }
        }
        seen
    }

    /// A workspace path as a check names it (relative to the workspace root).
    pub fn has_file(&self, path: &Path) -> bool {
        self.files.contains(path)
    }

    /// A file's text, when its content is available. Read without following any symlink: a
    /// link the agent made (to `/etc/passwd`, say) has no content here, nor does a path
    /// climbing out with `..`.
    pub fn read_file(&self, path: &Path) -> Option<String> {
        String::from_utf8(self.read_file_bytes(path)?).ok()
    }

    /// A file's bytes, on the terms of [`CaseRunView::read_file`].
    pub fn read_file_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let rel = crate::suite::paths::normalize(path)?;
        self.file_root.as_ref()?.read(&rel, MAX_FILE_BYTES).ok()
    }

    /// Whether `path` is, or lies through, a symlink (which checks never follow).
    pub fn is_symlink(&self, path: &Path) -> bool {
        let (Some(root), Some(rel)) = (
            self.file_root.as_ref(),
            crate::suite::paths::normalize(path),
        ) else {
            return false;
        };
        root.kind(&rel) == Some(crate::workspace::confined::EntryKind::Symlink)
    }
}
