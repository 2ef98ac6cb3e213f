//! {{name}}: an assay harness adapter for an agent CLI that prints one JSON object per line
//! (`{"type": "message", "text": …}`, `{"type": "tool", "name": …, "input": …}`,
//! `{"type": "done", "session": …}`, `{"type": "error", "code": …, "message": …}`). Adapt
//! `command`, `Lines::feed` and what the agent needs said (where it reads skills, how to ask
//! its version, its own error kinds) to your agent; docs/plugins.md walks through one.

use assay_plugin::{
    CommandLine, ErrorCategory, ErrorKind, Event, Exit, Harness, Invocation, Parser, Plugin,
    Summary, TurnError, Value,
};

struct MyAgent;

impl Harness for MyAgent {
    fn name(&self) -> &str {
        "{{name}}"
    }

    fn summary(&self) -> &str {
        "runs my-agent headless"
    }

    fn program(&self) -> &str {
        "my-agent"
    }

    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        let mut args = vec!["--json".to_string(), "--prompt".to_string(), inv.prompt.clone()];
        if let Some(s) = &inv.resume {
            args.extend(["--resume".to_string(), s.clone()]);
        }
        Ok(CommandLine {
            program: self.program().to_string(),
            args,
            env: Vec::new(),
            stdin: None,
        })
    }

    fn parser(&self, _inv: &Invocation) -> Box<dyn Parser> {
        Box::new(Lines::default())
    }

    /// Where my-agent reads a project's skills (the skill under test is installed there).
    fn skill_folders(&self) -> Vec<String> {
        vec![".my-agent/skills".into()]
    }

    /// What makes my-agent print its version (none: it has no such flag).
    fn version_args(&self) -> Option<Vec<String>> {
        Some(vec!["--version".into()])
    }

    /// Errors of my-agent's own, each counted as one of assay's categories.
    fn error_kinds(&self) -> Vec<ErrorKind> {
        vec![ErrorKind::new(
            "quota",
            "the account's quota is spent",
            ErrorCategory::RateLimit,
        )]
    }
}

#[derive(Default)]
struct Lines {
    summary: Summary,
}

impl Parser for Lines {
    fn feed(&mut self, line: &str) -> Vec<Value> {
        let Ok(v) = assay_plugin::serde_json::from_str::<Value>(line) else {
            return Vec::new();
        };
        let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
        match v.get("type").and_then(Value::as_str) {
            Some("message") => {
                self.summary.final_message = Some(text("text"));
                vec![Event::Message { text: text("text") }.into()]
            }
            Some("tool") => vec![
                Event::ToolCall {
                    id: String::new(),
                    name: text("name"),
                    input: v["input"].clone(),
                }
                .into(),
            ],
            Some("done") => {
                self.summary.session_id = Some(text("session"));
                Vec::new()
            }
            Some("error") => {
                let category = match text("code").as_str() {
                    "quota" => ErrorCategory::Own("quota".into()),
                    _ => ErrorCategory::Agent,
                };
                self.summary.error = Some(TurnError::new(category, text("message")));
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, exit: &Exit) -> Value {
        let mut summary = std::mem::take(&mut self.summary);
        if summary.error.is_none() {
            // A crash or the timeout, when the agent said nothing of it.
            summary.error = TurnError::from_exit("my-agent", exit);
        }
        summary.into()
    }
}

fn plugin() -> Plugin {
    Plugin::new().harness(MyAgent)
}

assay_plugin::export!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_messages_the_session_and_errors() {
        let mut p = Lines::default();
        assert_eq!(p.feed(r#"{"type": "message", "text": "hi"}"#)[0]["text"], "hi");
        p.feed(r#"{"type": "done", "session": "s1"}"#);
        let s = p.finish(&Exit::new(Some(0), false, ""));
        assert_eq!(s["session_id"], "s1");
        assert_eq!(s["final_message"], "hi");
        assert_eq!(s["error"], Value::Null);
        let mut p = Lines::default();
        p.feed(r#"{"type": "error", "code": "quota", "message": "spent"}"#);
        assert_eq!(p.finish(&Exit::new(Some(2), false, ""))["error"]["category"], "quota");
        let s = Lines::default().finish(&Exit::new(Some(1), false, "boom"));
        assert_eq!(s["error"]["category"], "crash");
    }
}
