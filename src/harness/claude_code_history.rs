//! A recorded Claude Code session (`context.history_file` of a plugin-eval case) put where
//! Claude Code keeps sessions, so the case's prompt continues it (`--resume <id>`): the
//! session file under `$HOME/.claude/projects/<the folder, as Claude Code names it>/`.

use std::path::Path;

/// The largest history a case may resume.
const MAX_HISTORY: u64 = 64 << 20;

/// Stages the history for the agent at `cwd` with HOME `home`; the session id to resume.
pub fn stage(history: &Path, home: &Path, cwd: &Path) -> Result<String, String> {
    let shown = history.display();
    let meta = std::fs::metadata(history)
        .map_err(|e| format!("context.history_file {shown} cannot be read: {e}"))?;
    if !meta.is_file() || meta.len() > MAX_HISTORY {
        return Err(format!(
            "context.history_file {shown} is not a file of at most {MAX_HISTORY} bytes"
        ));
    }
    let text = std::fs::read_to_string(history)
        .map_err(|e| format!("context.history_file {shown} cannot be read: {e}"))?;
    let id = session_id(&text).unwrap_or_else(new_id);
    let dir = home.join(".claude/projects").join(folder_name(cwd));
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join(format!("{id}.jsonl")), &text))
        .map_err(|e| format!("cannot stage context.history_file {shown}: {e}"))?;
    Ok(id)
}

/// The session's id, as its first line with one says (a UUID, as Claude Code's are).
fn session_id(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v.get("sessionId")?.as_str().map(str::to_string))
        .filter(|id| is_uuid(id))
}

fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.chars().all(|c| c.is_ascii_hexdigit()))
}

fn new_id() -> String {
    let h = format!("{:032x}", rand::random::<u128>());
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

/// The folder Claude Code keeps a project's sessions in: its path, every character but
/// letters and digits made `-`.
fn folder_name(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_lands_where_claude_code_looks_under_its_own_id() {
        let t = tempfile::tempdir().unwrap();
        let h = t.path().join("h.jsonl");
        let id = "0a1b2c3d-0000-4000-8000-0123456789ab";
        std::fs::write(
            &h,
            format!("{{\"type\":\"user\",\"sessionId\":\"{id}\"}}\n"),
        )
        .unwrap();
        let home = t.path().join("home");
        let got = stage(&h, &home, Path::new("/tmp/assay-ws-x/work")).unwrap();
        assert_eq!(got, id);
        assert!(
            home.join(".claude/projects/-tmp-assay-ws-x-work")
                .join(format!("{id}.jsonl"))
                .is_file()
        );
        std::fs::write(&h, "{\"sessionId\": \"../../x\"}\n").unwrap();
        assert!(is_uuid(&stage(&h, &home, Path::new("/w")).unwrap()));
    }
}
