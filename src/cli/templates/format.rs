//! {{name}}: an assay format, usable in `has_format` and extraction field `format`.

use assay_plugin::{Format, Plugin};

struct Semver;

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

/// MAJOR.MINOR.PATCH with an optional -prerelease and +build.
fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| is_number(p))
}

impl Format for Semver {
    fn name(&self) -> &str {
        "{{name}}"
    }

    fn summary(&self) -> &str {
        "a semantic version, MAJOR.MINOR.PATCH"
    }

    fn example(&self) -> &str {
        "1.4.2"
    }

    fn matches(&self, value: &str) -> bool {
        is_semver(value)
    }

    fn find_all(&self, text: &str) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
            let part_of = c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+');
            match (start, part_of) {
                (None, true) => start = Some(i),
                (Some(s), false) => {
                    let word = text[s..i].trim_end_matches('.');
                    if is_semver(word) {
                        found.push((s, s + word.len()));
                    }
                    start = None;
                }
                _ => {}
            }
        }
        found
    }
}

fn plugin() -> Plugin {
    Plugin::new().format(Semver)
}

assay_plugin::export!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_versions() {
        assert!(Semver.matches("1.4.2") && Semver.matches("2.0.0-rc.1"));
        assert!(!Semver.matches("1.4") && !Semver.matches("01.2.3"));
        let text = "Upgrade from 1.4.2 to 2.0.0.";
        let spans = Semver.find_all(text);
        assert_eq!(spans.len(), 2);
        assert_eq!(&text[spans[1].0..spans[1].1], "2.0.0");
    }
}
