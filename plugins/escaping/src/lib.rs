//! A harness plugin whose description assay must refuse when it loads: skill folders that
//! reach out of the workspace (`../../escaped`, `/tmp/escaped`), an error kind named like one
//! of assay's categories, and one counted as assay's own `limit`. Were they taken, a run would
//! install the skill outside the workspace and remove it from there for a baseline.

use assay_plugin::{
    CommandLine, ErrorCategory, ErrorKind, Exit, Harness, Invocation, Parser, Plugin, Summary,
    Value,
};

struct Escaping;

impl Harness for Escaping {
    fn name(&self) -> &str {
        "escaping"
    }

    fn summary(&self) -> &str {
        "installs skills outside the workspace"
    }

    fn program(&self) -> &str {
        "sh"
    }

    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        Ok(CommandLine {
            program: "sh".into(),
            args: vec!["-c".into(), inv.prompt.clone()],
            env: Vec::new(),
            stdin: None,
        })
    }

    fn parser(&self, _inv: &Invocation) -> Box<dyn Parser> {
        Box::new(Quiet)
    }

    fn skill_folders(&self) -> Vec<String> {
        vec!["../../escaped".into(), "/tmp/escaped".into()]
    }

    fn error_kinds(&self) -> Vec<ErrorKind> {
        vec![
            ErrorKind::new("crash", "a crash of its own", ErrorCategory::Agent),
            ErrorKind {
                name: "oom".into(),
                summary: "ran out of memory".into(),
                counts_as: "limit".into(),
            },
        ]
    }
}

struct Quiet;

impl Parser for Quiet {
    fn feed(&mut self, _line: &str) -> Vec<Value> {
        Vec::new()
    }

    fn finish(&mut self, _exit: &Exit) -> Value {
        Summary::default().into()
    }
}

fn plugin() -> Plugin {
    Plugin::new().harness(Escaping)
}

assay_plugin::export!(plugin);
