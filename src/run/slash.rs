//! Slash-command prompts for agents that have no slash commands.
//!
//! clauditor (and BMAD's command skills) write a case's prompt as `/<skill> <args>`: Claude
//! Code looks the name up in `.claude/commands/` or `.claude/skills/` and expands it. Codex
//! has neither slash commands nor `.claude/`, so for such an engine assay does the expansion
//! the way Claude Code would, before the prompt is sent:
//!
//! - a command file (`.claude/commands/<name>.md`): its body, front matter removed, with
//!   `$ARGUMENTS` replaced by the arguments and `$1`…`$9` by each argument (split as a shell
//!   would); a body with no placeholder gets `ARGUMENTS: <args>` appended, as Claude Code does;
//! - a skill folder: `$<name> <args>`, the way a Codex prompt names a skill (the skill itself
//!   is installed where Codex reads skills, and its description is in Codex's catalogue).
//!
//! Prompts that do not start with `/<skill>` are sent as written.

use crate::suite::{Skill, SkillKind};

/// The prompt to send to an agent without slash commands for a turn written as `prompt`,
/// when `skill` is installed. `body` reads a command file's text (only called for commands).
pub fn expand(
    prompt: &str,
    skill: &Skill,
    body: impl FnOnce() -> std::io::Result<String>,
) -> std::io::Result<String> {
    let Some(args) = invocation_args(prompt, &skill.name) else {
        return Ok(prompt.to_string());
    };
    match skill.kind {
        SkillKind::Dir => Ok(if args.is_empty() {
            format!("${}", skill.name)
        } else {
            format!("${} {args}", skill.name)
        }),
        SkillKind::Command => {
            let text = body()?;
            // An unclosed front matter is text, as Claude Code reads it.
            Ok(fill(
                &crate::suite::skill::body(&text).unwrap_or(text),
                args,
            ))
        }
    }
}

/// `Some(args)` when `prompt` is `/<name>` alone or followed by whitespace and arguments.
fn invocation_args<'a>(prompt: &'a str, name: &str) -> Option<&'a str> {
    let rest = prompt.trim_start().strip_prefix('/')?.strip_prefix(name)?;
    if rest.is_empty() {
        return Some("");
    }
    rest.starts_with(char::is_whitespace).then(|| rest.trim())
}

/// A command body with its placeholders filled, as Claude Code fills them.
fn fill(body: &str, args: &str) -> String {
    let positional: Vec<String> = shell_words::split(args)
        .unwrap_or_else(|_| args.split_whitespace().map(str::to_string).collect());
    let mut used = false;
    let mut out = String::with_capacity(body.len() + args.len());
    let mut rest = body;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
        } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let n = d as usize - '1' as usize;
            out.push_str(positional.get(n).map_or("", String::as_str));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out = format!("{}\n\nARGUMENTS: {args}", out.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn skill(kind: SkillKind) -> Skill {
        Skill {
            name: "csv-cleaner".into(),
            path: PathBuf::from("x"),
            kind,
            description: None,
        }
    }

    fn ok(s: &str) -> impl FnOnce() -> std::io::Result<String> + '_ {
        move || Ok(s.to_string())
    }

    #[test]
    fn a_command_becomes_its_body_with_the_arguments_filled() {
        let body =
            "---\ndescription: Cleans CSVs\n---\n# Clean\nClean $1 in $ARGUMENTS mode. Cost: $5.\n";
        let got = expand(
            "/csv-cleaner data.csv --strict",
            &skill(SkillKind::Command),
            ok(body),
        )
        .unwrap();
        assert_eq!(
            got,
            "# Clean\nClean data.csv in data.csv --strict mode. Cost: .\n"
        );
    }

    #[test]
    fn a_body_without_placeholders_gets_the_arguments_appended() {
        let got = expand(
            "/csv-cleaner \"a b.csv\"",
            &skill(SkillKind::Command),
            ok("Clean the file.\n"),
        )
        .unwrap();
        assert_eq!(got, "Clean the file.\n\nARGUMENTS: \"a b.csv\"");
        let none = expand("/csv-cleaner", &skill(SkillKind::Command), ok("Clean.\n")).unwrap();
        assert_eq!(none, "Clean.\n");
    }

    #[test]
    fn a_skill_folder_is_named_the_codex_way() {
        let s = skill(SkillKind::Dir);
        let fail = || -> std::io::Result<String> { panic!("a skill folder's body is not read") };
        assert_eq!(
            expand("/csv-cleaner --strict", &s, fail).unwrap(),
            "$csv-cleaner --strict"
        );
        assert_eq!(expand("/csv-cleaner", &s, fail).unwrap(), "$csv-cleaner");
    }

    #[test]
    fn other_prompts_are_sent_as_written() {
        let s = skill(SkillKind::Command);
        let fail = || -> std::io::Result<String> { panic!("not a command invocation") };
        for p in [
            "clean my csv",
            "/csv-cleanerx args",
            "/other args",
            "see /csv-cleaner",
        ] {
            assert_eq!(expand(p, &s, fail).unwrap(), p);
        }
    }
}
