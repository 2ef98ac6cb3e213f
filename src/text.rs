//! Text that crosses a trust boundary on its way out: whatever an agent, a suite file or a
//! plugin wrote is escaped here before it reaches a terminal or a report's parser. A leaf.

/// A bidirectional formatting character: the embeddings and overrides (U+202A–U+202E), the
/// isolates (U+2066–U+2069) and the marks (U+200E, U+200F, U+061C). Shown raw, they reorder
/// what is read around them (`evil\u{202e}txt.exe` reads as `evilexe.txt`).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}'
    )
}

/// A character never shown raw to a person: a control character (C0 and C1, escape
/// sequences' start among them) or a bidirectional formatting character.
pub fn is_hidden(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// Text for a terminal: control characters and bidirectional formatting characters are shown
/// escaped (`\u{1b}`, `\u{202e}`), never sent, so nothing an agent or a suite file wrote can
/// move the cursor, erase a line, retitle the window, write the clipboard or reorder what is
/// read. Newlines and tabs stay.
pub fn printable(text: &str) -> String {
    let escaped = |c: char| is_hidden(c) && c != '\n' && c != '\t';
    if !text.chars().any(escaped) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if escaped(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A field that must stay on its line (a name in a table row): every control character,
/// newlines and tabs too, and every bidirectional formatting character, shown escaped.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else if is_bidi_control(c) {
                c.escape_unicode().to_string()
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

/// JSON text for a terminal: `serde_json` escapes the C0 controls but writes DEL, the C1
/// controls (U+007F–U+009F) and the bidirectional formatting characters as they are; they can
/// only stand inside strings, where a `\uXXXX` escape means the same.
pub fn printable_json(json: &str) -> std::borrow::Cow<'_, str> {
    let raw = |c: char| ('\u{7f}'..='\u{9f}').contains(&c) || is_bidi_control(c);
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
    fn bidirectional_formatting_is_shown_escaped() {
        let all = "a\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}\u{2066}\u{2067}\u{2068}\u{2069}\u{200e}\u{200f}\u{61c}z";
        for shown in [printable(all), one_line(all), for_terminal(all)] {
            assert!(!shown.chars().any(is_bidi_control), "{shown:?}");
            assert!(shown.contains("\\u{202e}"), "{shown}");
        }
        assert_eq!(printable("evil\u{202e}txt.exe"), "evil\\u{202e}txt.exe");
        let json = printable_json("\"x\u{202e}y\"");
        assert_eq!(json, "\"x\\u202ey\"");
        assert_eq!(serde_json::from_str::<String>(&json).unwrap(), "x\u{202e}y");
        // Other text of right-to-left scripts stays as it is.
        assert_eq!(printable("שלום مرحبا"), "שלום مرحبا");
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
