//! Fault drills for the acme example (`plugins/acme`), for assay's own tests: the very same
//! adapter (its source, included), as the harness `acme`, whose parser writes to stderr on
//! every line of a turn whose prompt says `drill:chatter`, panics on the first line of one
//! saying `drill:panic`, and never returns from one saying `drill:loop`. Every other turn is
//! the example's. assay must record the panic and the loop as the plugin's error (exit 3),
//! take the chatter in its stride, and go on with the run.

#[path = "../../acme/src/adapter.rs"]
mod adapter;

use assay_plugin::{CommandLine, Exit, Harness, Invocation, Parser, Plugin, Value};

struct Drilled(adapter::Acme);

impl Harness for Drilled {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn summary(&self) -> &str {
        "the acme example with fault drills (assay's tests)"
    }
    fn program(&self) -> &str {
        self.0.program()
    }
    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        self.0.command(inv)
    }
    fn parser(&self, inv: &Invocation) -> Box<dyn Parser> {
        let drill = ["chatter", "panic", "loop"]
            .into_iter()
            .find(|d| inv.prompt.contains(&format!("drill:{d}")));
        Box::new(Drill {
            drill,
            inner: self.0.parser(inv),
        })
    }
    fn skill_folders(&self) -> Vec<String> {
        self.0.skill_folders()
    }
    fn version_args(&self) -> Option<Vec<String>> {
        self.0.version_args()
    }
    fn slash_commands(&self) -> bool {
        self.0.slash_commands()
    }
    fn error_kinds(&self) -> Vec<assay_plugin::ErrorKind> {
        self.0.error_kinds()
    }
}

struct Drill {
    drill: Option<&'static str>,
    inner: Box<dyn Parser>,
}

impl Parser for Drill {
    fn feed(&mut self, line: &str) -> Vec<Value> {
        match self.drill {
            Some("chatter") => eprintln!("acme adapter: read {} bytes", line.len()),
            Some("panic") => panic!("the acme adapter cannot read {line:?}"),
            Some("loop") => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            _ => {}
        }
        self.inner.feed(line)
    }
    fn finish(&mut self, exit: &Exit) -> Value {
        self.inner.finish(exit)
    }
}

fn plugin() -> Plugin {
    Plugin::new().harness(Drilled(adapter::Acme))
}

assay_plugin::export!(plugin);
