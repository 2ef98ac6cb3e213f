//! `assay report <run-dir> --format …`: any report, regenerated from a run folder.

use super::ReportArgs;
use crate::exit::Outcome;
use crate::report;
use crate::spec::formats::LoadCtx;

pub fn run(ctx: &LoadCtx, args: &ReportArgs) -> Outcome {
    let dir = ctx.cwd.join(&args.run_dir);
    let r = match report::read(&dir) {
        Ok(mut r) => {
            r.dir = ctx.shown(&dir);
            r
        }
        Err(e) => {
            eprintln!("error: {e}");
            return Outcome::BadInput;
        }
    };
    let text = report::render(&r, args.format);
    match &args.output {
        Some(path) => {
            let path = ctx.cwd.join(path);
            if let Err(e) = crate::run::record::write_atomic(&path, text.as_bytes()) {
                eprintln!("error: {}: {e}", path.display());
                return Outcome::Infrastructure;
            }
        }
        None => print!("{text}"),
    }
    Outcome::Success
}
