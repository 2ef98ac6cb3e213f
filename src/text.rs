//! Text that crosses a trust boundary on its way out: whatever an agent, a suite file or a
//! plugin wrote is escaped here before it reaches a terminal or a report's parser. A leaf.

/// Text for a terminal: control characters (C0 and C1, escape sequences' start among them)
/// are shown escaped, never sent, so nothing an agent or a suite file wrote can move the
/// cursor, erase a line or retitle the window. Newlines and tabs stay.
pub fn printable(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A field that must stay on its line (a name in a table row): every control character,
/// newlines and tabs too, shown escaped.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Line ends as XML and HTML parsers read them: `\r\n` and a lone `\r` become `\n`. (Written
/// so, a report reads the same and prints the same on a terminal, where a `\r` would move
/// the cursor back over the line.)
pub fn unify_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n").into()
    } else {
        text.into()
    }
}

/// What assay prints for people ([`printable`]), and no line of it a GitHub Actions
/// workflow command: a line that starts with `::` (an id, a query, a reason or a file name
/// from a suite or an agent) is indented, so only `--reporter github`'s own annotations, which
/// are printed apart, are commands.
pub fn for_terminal(text: &str) -> String {
    let text = printable(text).replace("\n::", "\n ::");
    match text.strip_prefix("::") {
        Some(rest) => format!(" ::{rest}"),
        None => text,
    }
}

/// JSON text for a terminal: `serde_json` escapes the C0 controls but writes DEL and the C1
/// controls (U+007F–U+009F) as they are; they can only stand inside strings, where a
/// `\u00XX` escape means the same.
pub fn printable_json(json: &str) -> std::borrow::Cow<'_, str> {
    let raw = |c: char| ('\u{7f}'..='\u{9f}').contains(&c);
    if !json.chars().any(raw) {
        return json.into();
    }
    json.chars()
        .map(|c| {
            if raw(c) {
                format!("\\u{:04x}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// A text on one line (its whitespace runs, newlines too, one space) and at most `n`
/// characters: a trigger query where an id would stand.
pub fn gist(text: &str, n: usize) -> String {
    shorten(&text.split_whitespace().collect::<Vec<_>>().join(" "), n)
}

/// At most `n` characters of `text`, with `…` when some were left out.
pub fn shorten(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// At most `max` bytes of `text` (on a character boundary), saying how long it was when cut.
pub fn cut_bytes(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let total = text.len();
        text.truncate(end);
        text.push_str(&format!("… [cut: {total} bytes in all]"));
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_line_for_a_terminal_is_a_workflow_command() {
        let t = super::for_terminal("::add-mask::x\nok\n::error file=a::b\x1b[2J");
        assert!(t.lines().all(|l| !l.starts_with("::")), "{t}");
        assert!(!t.contains('\x1b'));
    }

    use super::*;

    #[test]
    fn control_characters_never_reach_a_terminal() {
        let t = printable("\u{1b}]0;PWNED\u{7}\r\u{1b}[2KPASS\u{9b}2K\nnext\tcol");
        assert!(
            !t.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{t:?}"
        );
        assert!(t.contains("\\u{1b}]0;PWNED"), "{t}");
        assert!(t.ends_with("\nnext\tcol"), "{t}");
        assert_eq!(printable("plain"), "plain");
    }

    #[test]
    fn shortening_counts_characters_and_marks_the_cut() {
        assert_eq!(shorten("héllo", 5), "héllo");
        assert_eq!(shorten("héllo wörld", 5), "héllo…");
        assert_eq!(shorten("", 0), "");
        assert_eq!(cut_bytes("ééé".to_string(), 3), "é… [cut: 6 bytes in all]");
        assert_eq!(cut_bytes("abc".to_string(), 3), "abc");
    }
}
