//! Formats for `has_format` and extraction field `format`: `semver`, `git-sha`,
//! `iso-duration`. Each is a pattern matched whole for `matches` and found at word
//! boundaries for `find_all`.

use assay_plugin::{Format, Plugin};
use regex_lite::Regex;

struct Pattern {
    name: &'static str,
    summary: &'static str,
    example: &'static str,
    pattern: &'static str,
}

const SEMVER: &str =
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?";
const GIT_SHA: &str = r"[0-9a-f]{7,40}";
const ISO_DURATION: &str =
    r"P(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?";

const ALL: &[Pattern] = &[
    Pattern {
        name: "semver",
        summary: "a semantic version, MAJOR.MINOR.PATCH[-pre][+build]",
        example: "2.1.0-rc.1",
        pattern: SEMVER,
    },
    Pattern {
        name: "git-sha",
        summary: "an abbreviated or full git commit hash (7–40 lowercase hex)",
        example: "3f2a9c1",
        pattern: GIT_SHA,
    },
    Pattern {
        name: "iso-duration",
        summary: "an ISO 8601 duration",
        example: "PT1H30M",
        pattern: ISO_DURATION,
    },
];

impl Pattern {
    fn whole(&self) -> Regex {
        Regex::new(&format!("^(?:{})$", self.pattern)).expect("the pattern compiles")
    }

    fn word(&self) -> Regex {
        Regex::new(&format!(r"\b(?:{})\b", self.pattern)).expect("the pattern compiles")
    }
}

impl Format for Pattern {
    fn name(&self) -> &str {
        self.name
    }
    fn summary(&self) -> &str {
        self.summary
    }
    fn example(&self) -> &str {
        self.example
    }
    fn matches(&self, value: &str) -> bool {
        // "P" and "PT" alone are not durations.
        self.whole().is_match(value)
            && !(self.name == "iso-duration" && value.trim_end_matches('T').len() <= 1)
    }
    fn find_all(&self, text: &str) -> Vec<(usize, usize)> {
        self.word()
            .find_iter(text)
            .filter(|m| self.matches(m.as_str()))
            .map(|m| (m.start(), m.end()))
            .collect()
    }
}

fn plugin() -> Plugin {
    let mut p = Plugin::new();
    for f in ALL {
        p = p.format(Pattern { ..*f });
    }
    p
}

assay_plugin::export!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    fn get(name: &str) -> &'static Pattern {
        ALL.iter().find(|p| p.name == name).unwrap()
    }

    #[test]
    fn formats_match_whole_and_are_found_in_text() {
        let s = get("semver");
        assert!(
            s.matches("1.4.2")
                && s.matches("2.0.0-rc.1+b7")
                && !s.matches("1.4")
                && !s.matches("01.2.3")
        );
        let text = "Bumped 1.4.2 to 2.0.0 at 3f2a9c1, took PT1H30M.";
        assert_eq!(s.find_all(text).len(), 2);
        assert_eq!(get("git-sha").find_all(text).len(), 1);
        let d = get("iso-duration");
        assert!(d.matches("PT1H30M") && d.matches("P3D") && !d.matches("P") && !d.matches("PT"));
        assert_eq!(d.find_all(text).len(), 1);
    }
}
