//! The `gemini-cli` harness: Gemini CLI (`@google/gemini-cli`) headless, with
//! `--output-format stream-json`, read into assay's normalized events.
//!
//! Its stream is one JSON object per line:
//! `init` (session_id, model), `message` (role, content, `delta` for assistant chunks),
//! `tool_use` (tool_name, tool_id, parameters), `tool_result` (tool_id, status, output or
//! error), `error` (severity, message) and `result` (status, error, stats).
//!
//! The command writes `~/.gemini/settings.json` in the private HOME first (API-key auth, no
//! auto-update, no usage statistics) unless one is there, trusts the workspace and approves
//! tools (`--yolo`: the workspace is isolated). Later turns resume the session with
//! `--resume latest` (the private HOME holds only this case-run's sessions).

use assay_plugin::{
    CommandLine, Event, Exit, Harness, Invocation, Login, Parser, Plugin, Value, json,
};

pub struct GeminiCli;

const SETTINGS: &str = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"privacy":{"usageStatisticsEnabled":false}}"#;

/// Writes the settings when absent, then runs gemini with the remaining arguments.
const WRAPPER: &str = r#"mkdir -p "$HOME/.gemini" && { [ -f "$HOME/.gemini/settings.json" ] || printf '%s' "$1" > "$HOME/.gemini/settings.json"; } && shift && exec gemini "$@""#;

impl Harness for GeminiCli {
    fn name(&self) -> &str {
        "gemini-cli"
    }

    fn summary(&self) -> &str {
        "Gemini CLI, headless, stream-json (GEMINI_API_KEY; GOOGLE_GEMINI_BASE_URL for another endpoint)"
    }

    fn program(&self) -> &str {
        "gemini"
    }

    /// Its API key: assay gives an agent only the login its harness declares.
    fn login(&self) -> Option<Login> {
        Some(Login {
            vars: vec!["GEMINI_API_KEY".into(), "GOOGLE_API_KEY".into()],
            files: Vec::new(),
            fix: "set GEMINI_API_KEY".into(),
        })
    }

    fn endpoints(&self) -> Vec<(String, String)> {
        vec![(
            "GOOGLE_GEMINI_BASE_URL".into(),
            "https://generativelanguage.googleapis.com".into(),
        )]
    }

    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        let mut args = vec![
            "-c".to_string(),
            WRAPPER.to_string(),
            "assay-gemini".to_string(),
            SETTINGS.to_string(),
            "--prompt".to_string(),
            inv.prompt.clone(),
            "--output-format".to_string(),
            "stream-json".to_string(),
            "--yolo".to_string(),
            "--skip-trust".to_string(),
        ];
        if let Some(m) = &inv.model {
            args.extend(["--model".to_string(), m.clone()]);
        }
        if inv.resume.is_some() {
            args.extend(["--resume".to_string(), "latest".to_string()]);
        }
        Ok(CommandLine {
            program: "sh".to_string(),
            args,
            env: vec![("NO_COLOR".to_string(), "1".to_string())],
            stdin: None,
        })
    }

    fn parser(&self, _inv: &Invocation) -> Box<dyn Parser> {
        Box::new(Stream::default())
    }
}

/// What one turn's stream has said so far.
#[derive(Default)]
pub struct Stream {
    session: Option<String>,
    model: Option<String>,
    /// The assistant's text since the last tool call: the final message at the end.
    text: String,
    result: Option<Value>,
    errors: Vec<String>,
}

/// An error's category from Gemini's wording.
pub fn category(message: &str) -> &'static str {
    let m = message.to_lowercase();
    if m.contains("429")
        || m.contains("quota")
        || m.contains("resource_exhausted")
        || m.contains("rate limit")
    {
        "rate-limit"
    } else if m.contains("401")
        || m.contains("403")
        || m.contains("api key")
        || m.contains("unauthenticated")
        || m.contains("permission_denied")
    {
        "auth"
    } else if m.contains("500")
        || m.contains("502")
        || m.contains("503")
        || m.contains("unavailable")
        || m.contains("internal")
        || m.contains("overloaded")
        || m.contains("fetch failed")
    {
        "server"
    } else {
        "agent"
    }
}

impl Stream {
    fn flush_text(&mut self) -> Vec<Value> {
        if self.text.trim().is_empty() {
            return Vec::new();
        }
        vec![
            Event::Message {
                text: self.text.clone(),
            }
            .into(),
        ]
    }
}

impl Parser for Stream {
    fn feed(&mut self, line: &str) -> Vec<Value> {
        let Ok(v) = assay_plugin::serde_json::from_str::<Value>(line.trim()) else {
            return Vec::new();
        };
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        match v.get("type").and_then(Value::as_str) {
            Some("init") => {
                self.session = Some(s("session_id"));
                self.model = Some(s("model"));
                vec![
                    Event::SessionStarted {
                        session_id: s("session_id"),
                        model: Some(s("model")),
                        tools: Vec::new(),
                        skills: Vec::new(),
                    }
                    .into(),
                ]
            }
            Some("message") if s("role") == "assistant" => {
                if v.get("delta").and_then(Value::as_bool) != Some(true) {
                    self.text.clear();
                }
                self.text.push_str(&s("content"));
                Vec::new()
            }
            Some("tool_use") => {
                let mut out = self.flush_text();
                self.text.clear();
                let name = s("tool_name");
                let params = v.get("parameters").cloned().unwrap_or(Value::Null);
                out.push(
                    Event::ToolCall {
                        id: s("tool_id"),
                        name: name.clone(),
                        input: params.clone(),
                    }
                    .into(),
                );
                if name == "activate_skill"
                    && let Some(skill) = params.get("name").and_then(Value::as_str)
                {
                    out.push(
                        Event::SkillInvoked {
                            name: skill.to_string(),
                        }
                        .into(),
                    );
                }
                if name == "read_file"
                    && let Some(path) = params.get("file_path").and_then(Value::as_str)
                    && path.ends_with("/SKILL.md")
                    && let Some(skill) = path.trim_end_matches("/SKILL.md").rsplit('/').next()
                {
                    out.push(
                        Event::SkillInvoked {
                            name: skill.to_string(),
                        }
                        .into(),
                    );
                }
                out
            }
            Some("tool_result") => {
                let ok = s("status") == "success";
                let output = match v.get("output") {
                    Some(Value::String(o)) => o.clone(),
                    Some(other) => other.to_string(),
                    None => v
                        .get("error")
                        .and_then(|e| e.get("message"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                };
                vec![
                    Event::ToolResult {
                        id: s("tool_id"),
                        output,
                        is_error: !ok,
                    }
                    .into(),
                ]
            }
            Some("error") => {
                let message = s("message");
                self.errors.push(message.clone());
                vec![
                    Event::Error {
                        message,
                        category: None,
                    }
                    .into(),
                ]
            }
            Some("result") => {
                self.result = Some(v.clone());
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, exit: &Exit) -> Value {
        let (exit_code, timed_out, stderr_tail) =
            (exit.code, exit.timed_out, exit.stderr_tail.as_str());
        let message = (!self.text.trim().is_empty()).then(|| self.text.clone());
        let stats = self
            .result
            .as_ref()
            .and_then(|r| r.get("stats"))
            .cloned()
            .unwrap_or(Value::Null);
        let num = |k: &str| stats.get(k).and_then(Value::as_u64);
        let status = self
            .result
            .as_ref()
            .and_then(|r| r.get("status"))
            .and_then(Value::as_str);
        let error = if timed_out {
            None
        } else if status == Some("error") || (self.result.is_none() && exit_code != Some(0)) {
            let msg = self
                .result
                .as_ref()
                .and_then(|r| r.get("error"))
                .and_then(|e| {
                    e.get("message")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .or_else(|| Some(e.to_string()))
                })
                .or_else(|| self.errors.last().cloned())
                .unwrap_or_else(|| {
                    let tail = stderr_tail.trim();
                    if tail.is_empty() {
                        format!("gemini exited with {exit_code:?}")
                    } else {
                        tail.lines().rev().take(3).collect::<Vec<_>>().join(" / ")
                    }
                });
            let cat =
                if self.result.is_none() && !stderr_tail.contains("Error") && exit_code.is_none() {
                    "crash"
                } else {
                    category(&format!("{msg} {stderr_tail}"))
                };
            Some(json!({"category": cat, "message": msg}))
        } else {
            None
        };
        json!({
            "session_id": self.session,
            "model": self.model,
            "final_message": message,
            "error": error,
            "num_turns": num("tool_calls").map(|t| t + 1),
            "usage": {"input_tokens": num("input_tokens").unwrap_or(0), "output_tokens": num("output_tokens").unwrap_or(0)},
            "duration_ms": num("duration_ms"),
        })
    }
}

fn plugin() -> Plugin {
    Plugin::new().harness(GeminiCli)
}

assay_plugin::export!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as Gemini CLI 0.61 prints them.
    const STREAM: &[&str] = &[
        r#"{"type":"init","timestamp":"2026-11-22T07:33:13.016Z","session_id":"e176","model":"auto"}"#,
        r#"{"type":"message","timestamp":"t","role":"user","content":"Write a greeting card for Ada."}"#,
        r#"{"type":"tool_use","timestamp":"t","tool_name":"write_file","tool_id":"write_file_1","parameters":{"file_path":"greeting.txt","content":"Hello, Ada!\n"}}"#,
        r#"{"type":"tool_result","timestamp":"t","tool_id":"write_file_1","status":"success"}"#,
        r#"{"type":"message","timestamp":"t","role":"assistant","content":"Wrote ","delta":true}"#,
        r#"{"type":"message","timestamp":"t","role":"assistant","content":"greeting.txt.","delta":true}"#,
        r#"{"type":"result","timestamp":"t","status":"success","stats":{"total_tokens":242,"input_tokens":201,"output_tokens":41,"duration_ms":131,"tool_calls":1}}"#,
    ];

    #[test]
    fn reads_a_turn() {
        let mut p = Stream::default();
        let events: Vec<Value> = STREAM.iter().flat_map(|l| p.feed(l)).collect();
        assert_eq!(events[0]["type"], "session_started");
        assert_eq!(events[1]["name"], "write_file");
        assert_eq!(events[2]["is_error"], false);
        let s = p.finish(&Exit::new(Some(0), false, ""));
        assert_eq!(s["final_message"], "Wrote greeting.txt.");
        assert_eq!(s["session_id"], "e176");
        assert_eq!(s["usage"]["input_tokens"], 201);
        assert!(s["error"].is_null());
    }

    #[test]
    fn api_errors_are_categorised() {
        let mut p = Stream::default();
        p.feed(r#"{"type":"result","status":"error","error":{"type":"Error","message":"[API Error: 429 Too Many Requests]"}}"#);
        let s = p.finish(&Exit::new(Some(1), false, ""));
        assert_eq!(s["error"]["category"], "rate-limit");
        let mut p = Stream::default();
        let s = p.finish(&Exit::new(
            Some(1),
            false,
            "Error: API key not valid. Please pass a valid API key.",
        ));
        assert_eq!(s["error"]["category"], "auth");
    }

    #[test]
    fn later_turns_resume() {
        let inv = |resume: Option<&str>| Invocation {
            prompt: "hi".into(),
            turn: 1,
            resume: resume.map(str::to_string),
            model: Some("gemini-2.5-pro".into()),
            system_prompt: None,
            cwd: "/w".into(),
            home: "/h".into(),
            agent: None,
            sync_tasks: false,
            hang_heuristic: true,
            sandboxed: false,
            as_root: false,
            settings: Vec::new(),
        };
        let c = GeminiCli.command(&inv(Some("e176"))).unwrap();
        assert_eq!(c.program, "sh");
        assert!(c.args.windows(2).any(|w| w == ["--resume", "latest"]));
        assert!(
            c.args
                .windows(2)
                .any(|w| w == ["--model", "gemini-2.5-pro"])
        );
        assert!(
            !GeminiCli
                .command(&inv(None))
                .unwrap()
                .args
                .contains(&"--resume".to_string())
        );
    }
}
