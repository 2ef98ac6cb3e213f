//! The skill a clauditor spec belongs to: the file it sits beside (a command's `<name>.md`, a
//! skill's SKILL.md, or the skill owning the `assets/` folder it is in), the name clauditor
//! gives a spec without `skill_name`, the specs `--skill` finds, and the system prompt
//! clauditor derives when a spec sets none.

use std::path::{Path, PathBuf};

use crate::suite::{Skill, SkillKind};
use crate::syntax::reader::Doc;

/// The skill name clauditor gives a spec that has no `skill_name`.
pub(super) fn default_name(file: &Path) -> String {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if (name == "SKILL.eval.json" || name == "eval.json")
        && let Some(dir) = file.parent().and_then(|p| p.file_name())
    {
        return dir.to_string_lossy().into_owned();
    }
    name.strip_suffix(".eval.json")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name)
        .to_string()
}

/// The skill a spec file sits beside: `<name>.md` (a command), the folder's SKILL.md, or, for
/// a spec in a skill's `assets/` folder (clauditor's own layout, run there with
/// `--eval <skill>/assets/<name>.eval.json`), that skill.
pub(super) fn beside(file: &Path) -> Option<Skill> {
    let dir = file.parent()?;
    let name = file.file_name()?.to_string_lossy();
    let stem = name.strip_suffix(".eval.json")?;
    if stem != "SKILL" {
        let command = dir.join(format!("{stem}.md"));
        if command.is_file() {
            return crate::suite::skill::read(&command);
        }
    }
    crate::suite::skill::read(dir).or_else(|| {
        let owner = dir
            .parent()
            .filter(|_| dir.file_name().is_some_and(|n| n == "assets"))?;
        crate::suite::skill::read(owner)
    })
}

/// The clauditor specs of the skill in `dir` (named `name`), as `--skill` finds them: the
/// `SKILL.eval.json` beside its SKILL.md, then `assets/<name>.eval.json`.
pub(super) fn specs_of(dir: &Path, name: &str) -> Vec<PathBuf> {
    [
        dir.join("SKILL.eval.json"),
        dir.join("assets").join(format!("{name}.eval.json")),
    ]
    .into_iter()
    .filter(|p| p.is_file())
    .collect()
}

/// [`derived_system_prompt`], or `None` with the reason as an error at `span`.
pub(super) fn system_prompt(
    doc: &mut Doc,
    span: crate::diag::source::Span,
    skill: &Skill,
    project_root: &Path,
) -> Option<String> {
    match derived_system_prompt(skill, project_root) {
        Ok(p) => Some(p),
        Err(e) => {
            doc.error("system-prompt", span, "system_prompt", e).help =
                Some("set system_prompt in the spec, or fix the AGENTS.md or skill file".into());
            None
        }
    }
}

/// The system prompt clauditor derives when a spec sets none: the first `AGENTS.md` of the
/// skill's folder (a SKILL.md skill only: a command's folder is shared by every command) and
/// the project root, each inside its folder after links are resolved; else the skill file's
/// body, front matter stripped ("" when it has none).
pub(super) fn derived_system_prompt(skill: &Skill, project_root: &Path) -> Result<String, String> {
    let mut candidates = Vec::new();
    if skill.kind == SkillKind::Dir {
        candidates.push(skill.path.clone());
    }
    candidates.push(project_root.to_path_buf());
    for anchor in candidates {
        let file = anchor.join("AGENTS.md");
        if !file.is_file() {
            continue;
        }
        let (Ok(real), Ok(anchor_real)) = (file.canonicalize(), anchor.canonicalize()) else {
            continue;
        };
        if !real.starts_with(&anchor_real) {
            return Err(format!(
                "{} resolves to {}, outside {}",
                file.display(),
                real.display(),
                anchor_real.display()
            ));
        }
        return std::fs::read_to_string(&real)
            .map_err(|e| format!("cannot read {}: {e}", file.display()));
    }
    let file = match skill.kind {
        SkillKind::Dir => skill.path.join("SKILL.md"),
        SkillKind::Command => skill.path.clone(),
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    crate::suite::skill::body(&text)
        .ok_or_else(|| format!("{}: front matter without a closing `---`", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_follow_clauditor() {
        assert_eq!(default_name(Path::new("a/foo.eval.json")), "foo");
        assert_eq!(default_name(Path::new("a/b.c.eval.json")), "b.c");
        assert_eq!(
            default_name(Path::new("skills/brief/SKILL.eval.json")),
            "brief"
        );
        assert_eq!(default_name(Path::new("skills/brief/eval.json")), "brief");
    }

    #[test]
    fn a_spec_in_a_skills_assets_folder_pairs_with_that_skill() {
        let d = tempfile::tempdir().unwrap();
        let skill = d.path().join("brief");
        std::fs::create_dir_all(skill.join("assets")).unwrap();
        std::fs::create_dir_all(d.path().join("loose/assets")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "---\nname: brief\n---\nBody.\n").unwrap();
        let paired = beside(&skill.join("assets/brief.eval.json")).unwrap();
        assert_eq!(
            (paired.name.as_str(), paired.path.as_path()),
            ("brief", skill.as_path())
        );
        // Only an `assets/` folder's owner: not any folder above a spec.
        std::fs::create_dir_all(skill.join("evals")).unwrap();
        assert!(beside(&skill.join("evals/brief.eval.json")).is_none());
        assert!(beside(&d.path().join("loose/assets/brief.eval.json")).is_none());
        assert_eq!(specs_of(&skill, "brief"), Vec::<PathBuf>::new());
        std::fs::write(skill.join("assets/brief.eval.json"), "{}").unwrap();
        std::fs::write(skill.join("assets/other.eval.json"), "{}").unwrap();
        std::fs::write(skill.join("SKILL.eval.json"), "{}").unwrap();
        assert_eq!(
            specs_of(&skill, "brief"),
            [
                skill.join("SKILL.eval.json"),
                skill.join("assets/brief.eval.json")
            ]
        );
    }

    #[test]
    fn front_matter_is_stripped_as_clauditor_does() {
        let body = |t: &str| crate::suite::skill::body(t);
        assert_eq!(
            body("---\nname: x\n---\nDo it.\n").as_deref(),
            Some("Do it.\n")
        );
        assert_eq!(
            body("\n---\nname: x\n---\n\nDo it.").as_deref(),
            Some("\nDo it.")
        );
        assert_eq!(body("---\nname: x\n---\n").as_deref(), Some(""));
        assert_eq!(
            body("No front matter.\n").as_deref(),
            Some("No front matter.\n")
        );
        assert_eq!(body("---\nname: x\nnever closed\n"), None);
    }

    #[test]
    fn the_system_prompt_comes_from_agents_md_then_the_skill_body() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("skills/brief")).unwrap();
        std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
        std::fs::write(
            root.join("skills/brief/SKILL.md"),
            "---\nname: brief\n---\nWrite briefs.\n",
        )
        .unwrap();
        std::fs::write(root.join(".claude/commands/c.md"), "Command body.\n").unwrap();
        let dir = crate::suite::skill::read(&root.join("skills/brief")).unwrap();
        let cmd = crate::suite::skill::read(&root.join(".claude/commands/c.md")).unwrap();
        assert_eq!(
            derived_system_prompt(&dir, root).unwrap(),
            "Write briefs.\n"
        );
        assert_eq!(
            derived_system_prompt(&cmd, root).unwrap(),
            "Command body.\n"
        );
        std::fs::write(root.join("AGENTS.md"), "Project rules.").unwrap();
        assert_eq!(derived_system_prompt(&dir, root).unwrap(), "Project rules.");
        assert_eq!(derived_system_prompt(&cmd, root).unwrap(), "Project rules.");
        // The skill's own AGENTS.md first; a command's folder is shared, so never its.
        std::fs::write(root.join("skills/brief/AGENTS.md"), "Skill rules.").unwrap();
        std::fs::write(root.join(".claude/commands/AGENTS.md"), "Shared.").unwrap();
        assert_eq!(derived_system_prompt(&dir, root).unwrap(), "Skill rules.");
        assert_eq!(derived_system_prompt(&cmd, root).unwrap(), "Project rules.");
        // A link out of its folder is an error, not a silent read.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "secret").unwrap();
        std::fs::remove_file(root.join("skills/brief/AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.md"),
            root.join("skills/brief/AGENTS.md"),
        )
        .unwrap();
        assert!(
            derived_system_prompt(&dir, root)
                .unwrap_err()
                .contains("outside")
        );
    }
}
