//! Finding clauditor specs: every `*.eval.json`, and for `--skill` the skill's
//! `SKILL.eval.json` and `assets/<name>.eval.json`.

use std::path::{Path, PathBuf};

use crate::formats::LoadCtx;
use crate::formats::find::{EvalFormat, File, Found, Job, Scan};
use crate::suite::Skill;
use crate::suite::root::project_root;

/// The specs the walk found.
const FILES: &str = "clauditor:files";

/// clauditor's specs, as discovery finds them.
pub struct Clauditor;

impl EvalFormat for Clauditor {
    fn dialects(&self) -> &'static [&'static dyn crate::formats::write::Dialect] {
        &[&super::write::ClauditorDialect]
    }

    fn reads(&self) -> &'static str {
        "*.eval.json (clauditor)"
    }

    fn claim(&self, file: &File, found: &mut Found) -> bool {
        let taken = file.name.ends_with(".eval.json");
        if taken {
            found.add(FILES, file.path.to_path_buf());
        }
        taken
    }

    fn plan(&self, _ctx: &LoadCtx, scan: &mut Scan) -> Vec<Job> {
        scan.found
            .get(FILES)
            .iter()
            .map(|file| {
                let root = project_root(file.parent().unwrap_or(scan.root), scan.root);
                job(file.clone(), root)
            })
            .collect()
    }

    fn of_skill(&self, skill: &Skill, root: &Path) -> Vec<Job> {
        super::skill::specs_of(&skill.path, &skill.name)
            .into_iter()
            .map(|file| job(file, root.to_path_buf()))
            .collect()
    }
}

fn job(file: PathBuf, root: PathBuf) -> Job {
    Box::new(move |ctx: &LoadCtx| super::load(ctx, &file, &root))
}
