//! Judge providers: who answers a grading prompt, and how.
//!
//! Two HTTP APIs (Anthropic Messages; OpenAI-compatible chat completions, which also serves
//! Ollama, vLLM and llama.cpp servers) and two CLIs for people with a subscription and no API
//! key (`claude -p`, `codex exec`). Every call is bounded: a timeout per attempt, retries with
//! exponential backoff and jitter on 429, 5xx and timeouts (honouring `retry-after`), and a
//! limit on calls in flight per provider.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::process::{self, Spawn};

/// Which service answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "provider")]
pub enum ProviderKind {
    Anthropic { base_url: String, api_key: String },
    Openai { base_url: String, api_key: String },
    ClaudeCli { program: String },
    CodexCli { program: String },
}

impl ProviderKind {
    pub fn name(&self) -> &'static str {
        match self {
            ProviderKind::Anthropic { .. } => "anthropic",
            ProviderKind::Openai { .. } => "openai",
            ProviderKind::ClaudeCli { .. } => "claude-cli",
            ProviderKind::CodexCli { .. } => "codex-cli",
        }
    }
}

/// How hard to try.
#[derive(Debug, Clone, Copy)]
pub struct CallLimits {
    pub attempts: u32,
    pub timeout: Duration,
    pub base_backoff: Duration,
    pub max_backoff: Duration,
    pub concurrency: usize,
}

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits {
            attempts: 4,
            timeout: Duration::from_secs(120),
            base_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            concurrency: 4,
        }
    }
}

impl CallLimits {
    /// The defaults, with `ASSAY_JUDGE_TIMEOUT` (seconds per attempt), `ASSAY_JUDGE_ATTEMPTS`
    /// and `ASSAY_JUDGE_CONCURRENCY` applied.
    pub fn from_env(host: &crate::host::HostEnv) -> CallLimits {
        let mut l = CallLimits::default();
        if let Some(t) = host
            .var("ASSAY_JUDGE_TIMEOUT")
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|t| *t > 0.0)
        {
            l.timeout = Duration::from_secs_f64(t);
        }
        if let Some(a) = host
            .var("ASSAY_JUDGE_ATTEMPTS")
            .and_then(|v| v.parse().ok())
            .filter(|a| *a > 0)
        {
            l.attempts = a;
        }
        if let Some(c) = host
            .var("ASSAY_JUDGE_CONCURRENCY")
            .and_then(|v| v.parse().ok())
            .filter(|c| *c > 0)
        {
            l.concurrency = c;
        }
        l
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JudgeError {
    #[error("the judge API answered {status}: {body}")]
    Http { status: u16, body: String },
    #[error("the judge did not answer within {0:?}")]
    Timeout(Duration),
    #[error("cannot reach the judge: {0}")]
    Transport(String),
    #[error("the judge's answer has no text: {0}")]
    Empty(String),
    #[error("the judge CLI failed: {0}")]
    Cli(String),
}

impl JudgeError {
    fn retryable(&self) -> bool {
        match self {
            JudgeError::Http { status, .. } => *status == 429 || *status == 408 || *status >= 500,
            JudgeError::Timeout(_) | JudgeError::Transport(_) => true,
            JudgeError::Empty(_) | JudgeError::Cli(_) => false,
        }
    }
}

/// A judge: a provider, a model, and its limits.
#[derive(Clone)]
pub struct Judge {
    pub kind: ProviderKind,
    pub model: String,
    pub limits: CallLimits,
    client: reqwest::Client,
    slots: Arc<Semaphore>,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Judge({} {})", self.kind.name(), self.model)
    }
}

/// One exchange: the system prompt and the user message.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub system: String,
    pub user: String,
    pub max_tokens: u32,
}

/// The text the judge answered, with what the retries cost.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub attempts: u32,
}

impl Judge {
    pub fn new(kind: ProviderKind, model: impl Into<String>, limits: CallLimits) -> Judge {
        let client = reqwest::Client::builder()
            .timeout(limits.timeout)
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        Judge {
            kind,
            model: model.into(),
            slots: Arc::new(Semaphore::new(limits.concurrency.max(1))),
            limits,
            client,
        }
    }

    /// Asks, retrying what can be retried.
    pub async fn ask(&self, prompt: &Prompt) -> Result<Answer, JudgeError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|e| JudgeError::Transport(e.to_string()))?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (result, retry_after) = self.once(prompt).await;
            match result {
                Ok(text) => {
                    return Ok(Answer {
                        text,
                        attempts: attempt,
                    });
                }
                Err(e) if e.retryable() && attempt < self.limits.attempts => {
                    tokio::time::sleep(self.backoff(attempt, retry_after)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Exponential backoff with jitter, or the server's `retry-after` when it gives one.
    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(d) = retry_after {
            return d.min(self.limits.max_backoff);
        }
        let exp = self
            .limits
            .base_backoff
            .saturating_mul(1 << (attempt - 1).min(10));
        let jitter = rand::random_range(0..=exp.as_millis().max(1) as u64 / 2);
        (exp + Duration::from_millis(jitter)).min(self.limits.max_backoff)
    }

    async fn once(&self, prompt: &Prompt) -> (Result<String, JudgeError>, Option<Duration>) {
        match &self.kind {
            ProviderKind::Anthropic { base_url, api_key } => {
                let body = json!({
                    "model": self.model,
                    "max_tokens": prompt.max_tokens,
                    "system": prompt.system,
                    "messages": [{"role": "user", "content": prompt.user}],
                });
                let req = self
                    .client
                    .post(format!("{}/v1/messages", base_url.trim_end_matches('/')))
                    .header("x-api-key", api_key)
                    .header("anthropic-version", "2023-06-01")
                    .json(&body);
                self.http(req, |v| {
                    v["content"].as_array().map(|blocks| {
                        blocks
                            .iter()
                            .filter(|b| b["type"] == "text")
                            .filter_map(|b| b["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("")
                    })
                })
                .await
            }
            ProviderKind::Openai { base_url, api_key } => {
                let body = json!({
                    "model": self.model,
                    "max_tokens": prompt.max_tokens,
                    "messages": [
                        {"role": "system", "content": prompt.system},
                        {"role": "user", "content": prompt.user},
                    ],
                });
                let mut req = self
                    .client
                    .post(format!(
                        "{}/chat/completions",
                        base_url.trim_end_matches('/')
                    ))
                    .json(&body);
                if !api_key.is_empty() {
                    req = req.bearer_auth(api_key);
                }
                self.http(req, |v| {
                    v["choices"][0]["message"]["content"]
                        .as_str()
                        .map(String::from)
                })
                .await
            }
            ProviderKind::ClaudeCli { program } => (self.claude_cli(program, prompt).await, None),
            ProviderKind::CodexCli { program } => (self.codex_cli(program, prompt).await, None),
        }
    }

    /// `claude -p`: the prompt on stdin and the system prompt in a file of the judge's own
    /// folder, never in argv, which every process on the machine can read
    /// (`/proc/<pid>/cmdline`), a later case's agent among them.
    async fn claude_cli(&self, program: &str, prompt: &Prompt) -> Result<String, JudgeError> {
        let folder = private_folder()?;
        let system = folder.path().join("system-prompt.md");
        std::fs::write(&system, &prompt.system)
            .map_err(|e| JudgeError::Cli(format!("cannot write the system prompt: {e}")))?;
        let args = vec![
            "-p".to_string(),
            "--output-format".into(),
            "json".into(),
            "--model".into(),
            self.model.clone(),
            "--system-prompt-file".into(),
            system.display().to_string(),
            "--tools".into(),
            String::new(),
        ];
        let input = prompt.user.clone().into_bytes();
        self.cli(program, folder.path(), args, input, |out| {
            let v: Value =
                serde_json::from_str(out.trim()).map_err(|e| JudgeError::Cli(e.to_string()))?;
            if v["is_error"] == true {
                return Err(JudgeError::Cli(
                    v["result"].as_str().unwrap_or("error").to_string(),
                ));
            }
            v["result"]
                .as_str()
                .map(String::from)
                .ok_or_else(|| JudgeError::Empty(out.to_string()))
        })
        .await
    }

    /// `codex exec -`: the whole prompt on stdin, never in argv.
    async fn codex_cli(&self, program: &str, prompt: &Prompt) -> Result<String, JudgeError> {
        let folder = private_folder()?;
        let args = vec![
            "exec".to_string(),
            "--json".into(),
            "--skip-git-repo-check".into(),
            "-s".into(),
            "read-only".into(),
            "-m".into(),
            self.model.clone(),
            "-".into(),
        ];
        let input = format!("{}\n\n{}", prompt.system, prompt.user).into_bytes();
        self.cli(program, folder.path(), args, input, |out| {
            out.lines()
                .rev()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|v| v["type"] == "item.completed" && v["item"]["type"] == "agent_message")
                .find_map(|v| v["item"]["text"].as_str().map(String::from))
                .ok_or_else(|| JudgeError::Empty(out.chars().take(500).collect()))
        })
        .await
    }

    async fn http(
        &self,
        req: reqwest::RequestBuilder,
        text_of: impl Fn(&Value) -> Option<String>,
    ) -> (Result<String, JudgeError>, Option<Duration>) {
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return (Err(JudgeError::Timeout(self.limits.timeout)), None);
            }
            Err(e) => return (Err(JudgeError::Transport(e.to_string())), None),
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64);
        let body = match resp.text().await {
            Ok(b) => b,
            Err(e) if e.is_timeout() => {
                return (Err(JudgeError::Timeout(self.limits.timeout)), retry_after);
            }
            Err(e) => return (Err(JudgeError::Transport(e.to_string())), retry_after),
        };
        if !(200..300).contains(&status) {
            let body: String = body.chars().take(500).collect();
            return (Err(JudgeError::Http { status, body }), retry_after);
        }
        let parsed: Result<Value, _> = serde_json::from_str(&body);
        let result = match parsed.ok().as_ref().and_then(&text_of) {
            Some(t) if !t.trim().is_empty() => Ok(t),
            _ => Err(JudgeError::Empty(body.chars().take(500).collect())),
        };
        (result, retry_after)
    }

    /// Runs a judge CLI in `folder` with the prompt on its stdin.
    async fn cli(
        &self,
        program: &str,
        folder: &std::path::Path,
        args: Vec<String>,
        stdin: Vec<u8>,
        text_of: impl Fn(&str) -> Result<String, JudgeError>,
    ) -> Result<String, JudgeError> {
        let mut spawn = Spawn::new(program, folder.to_path_buf());
        spawn.args = args;
        spawn.env = crate::host::HostEnv::from_process().vars;
        spawn.stdin = Some(stdin);
        spawn.timeout = self.limits.timeout;
        let mut out = String::new();
        let exited = process::run(&spawn, |l| {
            out.push_str(l);
            out.push('\n');
        })
        .await
        .map_err(|e| JudgeError::Cli(e.to_string()))?;
        if exited.timed_out {
            return Err(JudgeError::Timeout(self.limits.timeout));
        }
        if exited.code != Some(0) {
            return Err(JudgeError::Cli(format!(
                "exit {:?}: {}",
                exited.code,
                exited.stderr_tail.trim()
            )));
        }
        text_of(&out)
    }
}

/// A folder of the judge's own for one call (made `0700`), removed when dropped.
fn private_folder() -> Result<tempfile::TempDir, JudgeError> {
    tempfile::Builder::new()
        .prefix("assay-judge-")
        .tempdir()
        .map_err(|e| JudgeError::Cli(format!("cannot make the judge's folder: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_honours_retry_after() {
        let j = Judge::new(
            ProviderKind::Openai {
                base_url: "http://127.0.0.1:1".into(),
                api_key: String::new(),
            },
            "m",
            CallLimits::default(),
        );
        let first = j.backoff(1, None);
        assert!(
            first >= Duration::from_millis(500) && first <= Duration::from_millis(750),
            "{first:?}"
        );
        let third = j.backoff(3, None);
        assert!(
            third >= Duration::from_millis(2000) && third <= Duration::from_millis(3000),
            "{third:?}"
        );
        assert_eq!(
            j.backoff(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            j.backoff(1, Some(Duration::from_secs(999))),
            Duration::from_secs(30)
        );
        assert!(j.backoff(30, None) <= Duration::from_secs(30));
    }

    #[test]
    fn what_is_retried() {
        assert!(
            JudgeError::Http {
                status: 429,
                body: String::new()
            }
            .retryable()
        );
        assert!(
            JudgeError::Http {
                status: 529,
                body: String::new()
            }
            .retryable()
        );
        assert!(
            !JudgeError::Http {
                status: 400,
                body: String::new()
            }
            .retryable()
        );
        assert!(
            !JudgeError::Http {
                status: 401,
                body: String::new()
            }
            .retryable()
        );
        assert!(JudgeError::Timeout(Duration::from_secs(1)).retryable());
    }
}
