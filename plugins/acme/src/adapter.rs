//! The acme harness: how to run acme-agent, and how to read what it prints. Kept apart from
//! the plugin's export (`lib.rs`) so that assay's fault drills (`plugins/acme-drills`) can
//! wrap this very code.

use assay_plugin::{
    CommandLine, ErrorCategory, ErrorKind, Event, Exit, Harness, Invocation, Parser, Summary,
    Tokens, TurnError, Value,
};

pub struct Acme;

impl Harness for Acme {
    fn name(&self) -> &str {
        "acme"
    }

    fn summary(&self) -> &str {
        "runs acme-agent, the in-house agent, headless"
    }

    fn program(&self) -> &str {
        "acme-agent"
    }

    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        let mut args = vec![
            "run".to_string(),
            "--prompt".to_string(),
            inv.prompt.clone(),
        ];
        if let Some(session) = &inv.resume {
            args.extend(["--resume".to_string(), session.clone()]);
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

    /// It reads skills from `.acme/skills` only (no engine named: nothing goes to
    /// `.claude/skills` or `.agents/skills`).
    fn skill_folders(&self) -> Vec<String> {
        vec![".acme/skills".into()]
    }

    /// `acme-agent --version` would start a session: its version is a subcommand.
    fn version_args(&self) -> Option<Vec<String>> {
        Some(vec!["version".into()])
    }

    /// It expands no `/<command>` prompts: assay does.
    fn slash_commands(&self) -> bool {
        false
    }

    fn error_kinds(&self) -> Vec<ErrorKind> {
        vec![ErrorKind::new(
            "quota",
            "the team's daily quota is spent: try again tomorrow",
            ErrorCategory::RateLimit,
        )]
    }
}

/// Reads one turn of acme-agent's output.
#[derive(Default)]
pub struct Lines {
    summary: Summary,
    said: Vec<String>,
}

impl Parser for Lines {
    fn feed(&mut self, line: &str) -> Vec<Value> {
        // Not JSON (a warning the agent printed, say): nothing to read in it.
        let Ok(v) = assay_plugin::serde_json::from_str::<Value>(line) else {
            return Vec::new();
        };
        let text = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let event = match v.get("event").and_then(Value::as_str) {
            Some("start") => {
                self.summary.session_id = Some(text("session"));
                self.summary.model = Some(text("model"));
                Event::SessionStarted {
                    session_id: text("session"),
                    model: Some(text("model")),
                    tools: Vec::new(),
                    skills: Vec::new(),
                }
            }
            Some("skill") => Event::SkillInvoked { name: text("name") },
            Some("tool") => Event::ToolCall {
                id: String::new(),
                name: text("name"),
                input: assay_plugin::json!({"path": text("path")}),
            },
            Some("say") => {
                self.said.push(text("text"));
                Event::Message { text: text("text") }
            }
            Some("error") => {
                let error = TurnError::new(own_category(&text("code")), text("message"));
                self.summary.error = Some(error);
                return Vec::new();
            }
            Some("end") => {
                let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
                self.summary.usage = Tokens {
                    input_tokens: n("tokens_in"),
                    output_tokens: n("tokens_out"),
                    ..Tokens::default()
                };
                self.summary.cost_usd = v.get("cost").and_then(Value::as_f64);
                return Vec::new();
            }
            _ => return Vec::new(),
        };
        vec![event.into()]
    }

    fn finish(&mut self, exit: &Exit) -> Value {
        let mut summary = std::mem::take(&mut self.summary);
        summary.final_message = self.said.last().cloned();
        summary.duration_ms = Some(exit.duration_ms);
        // What the agent reported wins; else how its process ended (a crash, the timeout).
        if summary.error.is_none() {
            summary.error = TurnError::from_exit("acme-agent", exit);
        }
        summary.into()
    }
}

/// acme-agent's error codes in assay's terms: its own `quota` kind, else the agent's error.
fn own_category(code: &str) -> ErrorCategory {
    match code {
        "quota" => ErrorCategory::Own("quota".into()),
        "auth" => ErrorCategory::Auth,
        _ => ErrorCategory::Agent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(lines: &[&str], exit: Exit) -> Value {
        let mut p = Lines::default();
        for l in lines {
            p.feed(l);
        }
        p.finish(&exit)
    }

    #[test]
    fn a_turn_gives_its_session_skill_tool_message_and_cost() {
        let mut p = Lines::default();
        let events: Vec<Value> = [
            r#"{"event":"start","session":"acme-7","model":"acme-1"}"#,
            r#"{"event":"skill","name":"greeter"}"#,
            r#"{"event":"tool","name":"write_file","path":"cards/ada.txt"}"#,
            "a warning that is not JSON",
            r#"{"event":"say","text":"Done."}"#,
            r#"{"event":"end","tokens_in":120,"tokens_out":30,"cost":0.0004}"#,
        ]
        .iter()
        .flat_map(|l| p.feed(l))
        .collect();
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            ["session_started", "skill_invoked", "tool_call", "message"]
        );
        let s = p.finish(&Exit::new(Some(0), false, ""));
        assert_eq!(s["session_id"], "acme-7");
        assert_eq!(s["final_message"], "Done.");
        assert_eq!(s["usage"]["input_tokens"], 120);
        assert_eq!(s["cost_usd"], 0.0004);
        assert_eq!(s["error"], Value::Null);
    }

    #[test]
    fn its_own_quota_error_and_a_crash_are_said() {
        let s = turn(
            &[r#"{"event":"error","code":"quota","message":"spent"}"#],
            Exit::new(Some(4), false, ""),
        );
        assert_eq!(s["error"]["category"], "quota");
        let s = turn(&[], Exit::new(Some(139), false, "segmentation fault"));
        assert_eq!(s["error"]["category"], "crash");
        assert!(
            s["error"]["message"]
                .as_str()
                .unwrap()
                .contains("segmentation fault")
        );
        let s = turn(&[], Exit::new(None, true, ""));
        assert_eq!(s["error"]["category"], "timeout");
    }
}
