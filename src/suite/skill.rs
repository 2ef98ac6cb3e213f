//! Finding the skill under test and reading its name and description.

use std::path::{Path, PathBuf};

use super::model::{Skill, SkillKind};
use crate::syntax::yaml;
use crate::{diag::source::Source, syntax::node::Value};

/// Reads a skill folder (with SKILL.md) or a command file. The name is the folder's or file's
/// name, as the BMAD and clauditor runners derive it; front matter supplies the description.
pub fn read(path: &Path) -> Option<Skill> {
    let (kind, file, name) = if path.is_dir() {
        let file = path.join("SKILL.md");
        let name = path.file_name()?.to_string_lossy().into_owned();
        (SkillKind::Dir, file, name)
    } else {
        let name = path.file_stem()?.to_string_lossy().into_owned();
        (SkillKind::Command, path.to_path_buf(), name)
    };
    if !file.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    Some(Skill {
        name,
        path: path.to_path_buf(),
        kind,
        description: front_matter_field(&text, "description"),
    })
}

/// A string field of a Markdown file's YAML front matter.
pub fn front_matter_field(text: &str, key: &str) -> Option<String> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---")?;
    let src = Source::new("front matter", rest[..end].to_string());
    let (node, _) = yaml::parse(&src);
    match node?.get(key)?.value.clone() {
        Value::Str(s) => Some(s.trim().to_string()),
        _ => None,
    }
}

/// A Markdown file's body after its `---` front matter (the whole text when it has none), as
/// clauditor's `parse_frontmatter` gives it; `None` when the front matter is never closed.
pub fn body(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(open) = lines.iter().position(|l| !l.trim().is_empty()) else {
        return Some(text.to_string());
    };
    if lines[open].trim() != "---" {
        return Some(text.to_string());
    }
    let close = open + 1 + lines[open + 1..].iter().position(|l| l.trim() == "---")?;
    let body = &lines[close + 1..];
    if body.is_empty() {
        return Some(String::new());
    }
    let mut out = body.join("\n");
    if text.ends_with(['\n', '\r']) {
        out.push('\n');
    }
    Some(out)
}

/// Where a project keeps a skill or command named `name`, in the order agents look.
pub fn find_in_project(root: &Path, name: &str) -> Option<Skill> {
    let candidates: [PathBuf; 5] = [
        root.join(".claude/skills").join(name),
        root.join("skills").join(name),
        root.join(".agents/skills").join(name),
        root.join(".codex/skills").join(name),
        root.join(".claude/commands").join(format!("{name}.md")),
    ];
    candidates.iter().find_map(|p| read(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_description_from_front_matter() {
        let md = "---\nname: brief\ndescription: Writes product briefs.\n---\n# Body\n";
        assert_eq!(
            front_matter_field(md, "description").as_deref(),
            Some("Writes product briefs.")
        );
        assert_eq!(front_matter_field("# no front matter", "description"), None);
    }
}
