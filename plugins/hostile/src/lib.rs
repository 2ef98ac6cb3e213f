//! Check types that misbehave on purpose, for assay's hostile-plugin tests, and two that
//! behave (`echo`, `stderr`) for the host's own tests; and harnesses that misbehave: one
//! (`refusing`) never makes a command, one (`garbled`) sends events no host can read, and one
//! (`faulty`) writes to stderr, panics or loops when the agent prints the word for it.

use assay_plugin::{
    Assertion, CommandLine, Exit, Harness, Invocation, Parser, Plugin, Run, Value, Verdict, json,
};

/// A harness whose command always fails: the case-run must be an error saying why.
struct Refusing;

/// A harness whose parser sends an event no host can read, for every line.
struct Garbled;

/// A harness running `sh -c <prompt>` whose parser, on a line the agent printed, writes to
/// stderr (`chatter`), panics (`panic`) or never returns (`loop`); other lines are the agent's
/// message. Its `command` writes to stderr every time.
struct Faulty;

impl Harness for Faulty {
    fn name(&self) -> &str {
        "faulty"
    }

    fn summary(&self) -> &str {
        "chatters on stderr, panics or loops on a word"
    }

    fn program(&self) -> &str {
        "sh"
    }

    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        eprintln!("making the command for turn {}", inv.turn);
        Ok(CommandLine {
            program: "sh".into(),
            args: vec!["-c".into(), inv.prompt.clone()],
            env: Vec::new(),
            stdin: None,
        })
    }

    fn parser(&self, _inv: &Invocation) -> Box<dyn Parser> {
        Box::new(Fragile(String::new()))
    }
}

/// An in-house agent's harness: `acme-agent <prompt>`, found on PATH, its stdout the message.
struct Acme;

impl Harness for Acme {
    fn name(&self) -> &str {
        "acme"
    }

    fn summary(&self) -> &str {
        "runs acme-agent from PATH"
    }

    fn program(&self) -> &str {
        "acme-agent"
    }

    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        Ok(CommandLine {
            program: "acme-agent".into(),
            args: vec![inv.prompt.clone()],
            env: Vec::new(),
            stdin: None,
        })
    }

    fn parser(&self, _inv: &Invocation) -> Box<dyn Parser> {
        Box::new(Fragile(String::new()))
    }
}

/// The same agent, declared as having no version flag (WIT 0.3.0): never run for a version,
/// only looked up inside the sandbox.
struct AcmeUnversioned;

impl Harness for AcmeUnversioned {
    fn name(&self) -> &str {
        "acme-unversioned"
    }

    fn summary(&self) -> &str {
        "runs acme-agent from PATH; it has no version flag"
    }

    fn program(&self) -> &str {
        Acme.program()
    }

    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        Acme.command(inv)
    }

    fn parser(&self, inv: &Invocation) -> Box<dyn Parser> {
        Acme.parser(inv)
    }

    fn version_args(&self) -> Option<Vec<String>> {
        None
    }
}

struct Fragile(String);

impl Parser for Fragile {
    fn feed(&mut self, line: &str) -> Vec<Value> {
        match line.trim() {
            "chatter" => eprintln!("the parser read: {line}"),
            "panic" => panic!("the parser cannot read {line:?}"),
            "loop" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            _ => {}
        }
        self.0.push_str(line);
        self.0.push('\n');
        Vec::new()
    }

    fn finish(&mut self, _exit: &Exit) -> Value {
        json!({"final_message": self.0})
    }
}

impl Harness for Garbled {
    fn name(&self) -> &str {
        "garbled"
    }

    fn summary(&self) -> &str {
        "sends events assay cannot read"
    }

    fn program(&self) -> &str {
        "sh"
    }

    fn command(&self, _inv: &Invocation) -> Result<CommandLine, String> {
        Ok(CommandLine {
            program: "sh".into(),
            args: vec!["-c".into(), "echo one; echo two".into()],
            env: Vec::new(),
            stdin: None,
        })
    }

    fn parser(&self, _inv: &Invocation) -> Box<dyn Parser> {
        Box::new(Nonsense)
    }
}

struct Nonsense;

impl Parser for Nonsense {
    fn feed(&mut self, line: &str) -> Vec<Value> {
        vec![json!({"type": "teleported", "line": line})]
    }

    fn finish(&mut self, _exit: &Exit) -> Value {
        json!({"final_message": "done"})
    }
}

impl Harness for Refusing {
    fn name(&self) -> &str {
        "refusing"
    }

    fn summary(&self) -> &str {
        "never makes a command"
    }

    fn program(&self) -> &str {
        "sh"
    }

    fn command(&self, _inv: &Invocation) -> Result<CommandLine, String> {
        Err("no command today".into())
    }

    fn parser(&self, _inv: &Invocation) -> Box<dyn Parser> {
        Box::new(Nothing)
    }
}

struct Nothing;

impl Parser for Nothing {
    fn feed(&mut self, _line: &str) -> Vec<Value> {
        Vec::new()
    }

    fn finish(&mut self, _exit: &Exit) -> Value {
        json!({})
    }
}

struct Kind(&'static str);

fn text<'a>(config: &'a Value, key: &str) -> &'a str {
    config.get(key).and_then(Value::as_str).unwrap_or("")
}

impl Assertion for Kind {
    fn name(&self) -> &str {
        self.0
    }

    fn summary(&self) -> &str {
        "misbehaves on purpose"
    }

    fn validate(&self, config: &Value) -> Result<(), String> {
        if self.0 == "echo" && text(config, "needle").is_empty() {
            return Err("`needle` is required: the text the output must contain".into());
        }
        Ok(())
    }

    fn evaluate(&self, config: &Value, run: &Run) -> Result<Verdict, String> {
        match self.0 {
            "echo" => {
                let needle = text(config, "needle");
                let out = run.output();
                // memchr's searcher uses WebAssembly SIMD (plugins/.cargo/config.toml).
                let found = memchr::memmem::find(out.as_bytes(), needle.as_bytes()).is_some();
                Ok(Verdict::new(
                    found,
                    format!("{needle:?} searched in {} bytes", out.len()),
                ))
            }
            "stderr" => {
                eprintln!("a line for the check's log");
                Ok(Verdict::new(true, "wrote to stderr"))
            }
            "loop" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "grow" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "trap" => panic!("this plugin traps"),
            "huge" => Ok(Verdict::new(true, "x".repeat(64 << 20))),
            "read-file" => {
                let path = text(config, "path");
                Ok(match std::fs::read(path) {
                    Ok(b) => Verdict::new(true, format!("read {} bytes of {path}", b.len())),
                    Err(e) => Verdict::new(false, format!("could not read {path}: {e}")),
                })
            }
            "env" => {
                let vars: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
                Ok(Verdict::new(
                    vars.is_empty(),
                    format!("sees {} variables: {}", vars.len(), vars.join(",")),
                ))
            }
            "socket" => {
                let addr = text(config, "addr");
                Ok(match std::net::TcpStream::connect(addr) {
                    Ok(_) => Verdict::new(true, format!("connected to {addr}")),
                    Err(e) => Verdict::new(false, format!("could not connect to {addr}: {e}")),
                })
            }
            other => Err(format!("no type {other}")),
        }
    }
}

fn plugin() -> Plugin {
    let mut p = Plugin::new();
    for k in [
        "echo",
        "stderr",
        "loop",
        "grow",
        "trap",
        "huge",
        "read-file",
        "env",
        "socket",
    ] {
        p = p.assertion(Kind(k));
    }
    p.harness(Refusing)
        .harness(Garbled)
        .harness(Faulty)
        .harness(Acme)
        .harness(AcmeUnversioned)
}

assay_plugin::export!(plugin);
