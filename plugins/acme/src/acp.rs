//! The acme-acp harness: acme's agent as it speaks the Agent Client Protocol
//! (`acme-acp-agent`). An agent that speaks ACP needs no parser: assay's own ACP client runs
//! the command line given here and reads the session ([`Harness::speaks_acp`]); what is left
//! to say is how to start it, where it reads skills and how it logs in.

use assay_plugin::{CommandLine, Harness, Invocation};

pub struct AcmeAcp;

impl Harness for AcmeAcp {
    fn name(&self) -> &str {
        "acme-acp"
    }

    fn summary(&self) -> &str {
        "runs acme-acp-agent, the in-house agent, over the Agent Client Protocol"
    }

    fn program(&self) -> &str {
        "acme-acp-agent"
    }

    /// The agent's command line; the prompt goes over ACP, not here.
    fn command(&self, inv: &Invocation) -> Result<CommandLine, String> {
        let mut args = Vec::new();
        if let Some(model) = &inv.model {
            args.extend(["--model".to_string(), model.clone()]);
        }
        Ok(CommandLine {
            program: self.program().to_string(),
            args,
            env: Vec::new(),
            stdin: None,
        })
    }

    fn speaks_acp(&self) -> bool {
        true
    }

    fn skill_folders(&self) -> Vec<String> {
        vec![".acme/skills".into()]
    }

    /// It has no version flag: it is only looked up inside the sandbox.
    fn version_args(&self) -> Option<Vec<String>> {
        None
    }

    fn slash_commands(&self) -> bool {
        false
    }
}
