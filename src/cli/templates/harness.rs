//! {{name}}: an assay harness adapter for an agent CLI that prints one JSON object per line
//! (`{"type": "message", "text": …}`, `{"type": "tool", "name": …, "input": …}`,
//! `{"type": "done", "session": …}`). Adapt `command` and `Lines::feed` to your agent.

use assay_plugin::{CommandLine, Event, Exit, Harness, Invocation, Parser, Plugin, Value, json};

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
}

#[derive(Default)]
struct Lines {
    last: Option<String>,
    session: Option<String>,
}

impl Parser for Lines {
    fn feed(&mut self, line: &str) -> Vec<Value> {
        let Ok(v) = serde_json_from(line) else {
            return Vec::new();
        };
        match v.get("type").and_then(Value::as_str) {
            Some("message") => {
                let text = v["text"].as_str().unwrap_or_default().to_string();
                self.last = Some(text.clone());
                vec![Event::Message { text }.into()]
            }
            Some("tool") => vec![
                Event::ToolCall {
                    id: String::new(),
                    name: v["name"].as_str().unwrap_or_default().to_string(),
                    input: v["input"].clone(),
                }
                .into(),
            ],
            Some("done") => {
                self.session = v["session"].as_str().map(str::to_string);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, exit: &Exit) -> Value {
        let (exit_code, timed_out, stderr_tail) = (exit.code, exit.timed_out, exit.stderr_tail.as_str());
        let error = (exit_code != Some(0) && !timed_out)
            .then(|| json!({"category": "crash", "message": stderr_tail.trim()}));
        json!({"session_id": self.session, "final_message": self.last, "error": error})
    }
}

fn serde_json_from(line: &str) -> Result<Value, ()> {
    assay_plugin::serde_json::from_str(line).map_err(|_| ())
}

fn plugin() -> Plugin {
    Plugin::new().harness(MyAgent)
}

assay_plugin::export!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_messages_and_the_session() {
        let mut p = Lines::default();
        assert_eq!(p.feed(r#"{"type": "message", "text": "hi"}"#)[0]["text"], "hi");
        p.feed(r#"{"type": "done", "session": "s1"}"#);
        let s = p.finish(&Exit::new(Some(0), false, ""));
        assert_eq!(s["session_id"], "s1");
        assert_eq!(s["final_message"], "hi");
    }
}
