//! `assay completions <shell>` and `assay man`: generated from the one clap definition
//! ([`super::Cli`]), so they never drift from the flags.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, CommandFactory};

use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, powershell or elvish.
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `assay.1` and one page per subcommand (`assay-run.1`, …) into this folder,
    /// instead of printing `assay.1` to standard output.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Prints the completion script for a shell.
pub fn completions(args: &CompletionsArgs) -> Exit {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "assay", &mut out);
    write_stdout(&out)
}

/// Prints the man page, or writes every page into `--dir`.
pub fn man(args: &ManArgs) -> Exit {
    let cmd = super::Cli::command();
    let Some(dir) = &args.dir else {
        let mut out = Vec::new();
        if let Err(e) = clap_mangen::Man::new(cmd).render(&mut out) {
            tell!("error: cannot render the man page: {e}");
            return Exit::Infrastructure;
        }
        return write_stdout(&out);
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        tell!("error: cannot create {}: {e}", dir.display());
        return Exit::Infrastructure;
    }
    match clap_mangen::generate_to(cmd, dir) {
        Ok(()) => {
            tell!("wrote the man pages into {}", dir.display());
            Exit::Success
        }
        Err(e) => {
            tell!(
                "error: cannot write the man pages into {}: {e}",
                dir.display()
            );
            Exit::Infrastructure
        }
    }
}

fn write_stdout(bytes: &[u8]) -> Exit {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Exit::Success,
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::Success,
        Err(e) => {
            tell!("error: cannot write to standard output: {e}");
            Exit::Infrastructure
        }
    }
}
