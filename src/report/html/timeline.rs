//! A case-run's trajectory as a timeline: its normalized events in order, each tool call with
//! its result beside it (paired by id), errors and skill invocations marked. The events carry
//! no times, so none are shown per step; the turns' own durations are, when the agent
//! measured them.

use std::collections::HashSet;

use serde_json::Value;

use super::e;
use crate::report::model::CaseRun;

fn s(ev: &Value, k: &str) -> String {
    match &ev[k] {
        Value::String(x) => x.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

fn result(r: &Value) -> String {
    let err = r["is_error"] == true;
    format!(
        "<div class=\"result{}\"><b>{}</b><pre>{}</pre></div>",
        if err { " error" } else { "" },
        if err { "→ error" } else { "→ result" },
        e(&s(r, "output"))
    )
}

pub fn timeline(c: &CaseRun) -> String {
    let mut h = String::new();
    let turns: Vec<String> = c
        .result
        .turns
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            t.duration_ms.filter(|&d| d > 0).map(|d| match d {
                ..1000 => format!("turn {}: {d} ms", i + 1),
                _ => format!("turn {}: {:.1} s", i + 1, d as f64 / 1000.0),
            })
        })
        .collect();
    if !turns.is_empty() {
        h.push_str(&format!("<p class=\"turns\">{}</p>", e(&turns.join(" · "))));
    }
    // Each result goes with its call; a result with no call is shown where it came.
    let called: HashSet<String> = c
        .transcript
        .iter()
        .filter(|ev| ev["type"] == "tool_call")
        .map(|ev| s(ev, "id"))
        .filter(|id| !id.is_empty())
        .collect();
    let items: Vec<String> = c
        .transcript
        .iter()
        .filter_map(|ev| item(c, ev, &called))
        .map(|(class, body)| format!("<li class=\"ev {class}\">{body}</li>"))
        .collect();
    if items.is_empty() {
        h.push_str("<p>(no transcript)</p>");
    } else {
        h.push_str("<ol class=\"timeline\">");
        h.push_str(&items.concat());
        h.push_str("</ol>");
    }
    h
}

/// One event of the transcript as the timeline's item: its class and its body (None: not
/// shown, or a tool result shown with its call).
fn item(c: &CaseRun, ev: &Value, called: &HashSet<String>) -> Option<(&'static str, String)> {
    let shown = match ev["type"].as_str() {
        Some("session_started") => (
            "session",
            format!("<b>session started</b> {}", e(&s(ev, "model"))),
        ),
        Some("message") => ("message", format!("<b>agent</b> {}", e(&s(ev, "text")))),
        Some("reasoning") => (
            "reasoning",
            format!(
                "<details><summary>reasoning</summary><pre>{}</pre></details>",
                e(&s(ev, "text"))
            ),
        ),
        Some("tool_call") => tool_call(c, ev),
        Some("tool_result") if !called.contains(&s(ev, "id")) => (
            if ev["is_error"] == true {
                "tool error"
            } else {
                "tool"
            },
            result(ev),
        ),
        Some("tool_result") => return None,
        Some("skill_invoked") => (
            "skill",
            format!("<b>skill invoked</b> {}", e(&s(ev, "name"))),
        ),
        Some("skill_failed") => (
            "tool error",
            format!(
                "<b>skill load failed</b> {}: {}",
                e(&s(ev, "name")),
                e(&s(ev, "error"))
            ),
        ),
        Some("agent_started") => ("agent", format!("<b>sub-agent</b> {}", e(&s(ev, "name")))),
        Some("hook_ran") => (
            "hook",
            format!(
                "<b>hook</b> {} ({}, exit {})",
                e(&s(ev, "event")),
                e(&s(ev, "outcome")),
                e(&s(ev, "exit_code"))
            ),
        ),
        Some("file_change") => (
            "file",
            format!(
                "<b>file {}</b> <code>{}</code>",
                e(&s(ev, "kind")),
                e(&s(ev, "path"))
            ),
        ),
        Some("output") => ("output", format!("<pre>{}</pre>", e(&s(ev, "text")))),
        Some("error") => ("error", format!("<b>error</b> {}", e(&s(ev, "message")))),
        Some("retrying") => (
            "error",
            format!(
                "<b>retrying</b> the model API failed{}; attempt {} of {}",
                match s(ev, "status") {
                    x if x.is_empty() => x,
                    x => format!(" ({})", e(&x)),
                },
                e(&s(ev, "attempt")),
                e(&s(ev, "max_retries"))
            ),
        ),
        _ => return None,
    };
    Some(shown)
}

/// A tool call as the timeline's item, with its results (open when one failed).
fn tool_call(c: &CaseRun, ev: &Value) -> (&'static str, String) {
    let id = s(ev, "id");
    let res: String = c
        .transcript
        .iter()
        .filter(|r| r["type"] == "tool_result" && !id.is_empty() && s(r, "id") == id)
        .map(result)
        .collect();
    let failed = res.contains("class=\"result error\"");
    (
        if failed { "tool error" } else { "tool" },
        format!(
            "<details{}><summary>tool call <code>{}</code>{}</summary><pre>{}</pre>{}</details>",
            if failed { " open" } else { "" },
            e(&s(ev, "name")),
            if failed {
                " (error)"
            } else if res.is_empty() {
                " (no result)"
            } else {
                ""
            },
            e(&serde_json::to_string_pretty(&ev["input"]).unwrap_or_default()),
            res
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn case_run(transcript: Vec<Value>) -> CaseRun {
        CaseRun {
            transcript,
            ..CaseRun::of(Default::default(), Default::default())
        }
    }

    #[test]
    fn calls_carry_their_results_in_order_with_errors_and_skills_marked() {
        let h = timeline(&case_run(vec![
            json!({"type": "skill_invoked", "name": "brief"}),
            json!({"type": "tool_call", "id": "t1", "name": "Bash", "input": {"command": "ls <x>"}}),
            json!({"type": "tool_call", "id": "t2", "name": "Read", "input": {}}),
            json!({"type": "tool_result", "id": "t1", "output": "denied", "is_error": true}),
            json!({"type": "tool_result", "id": "t2", "output": "ok", "is_error": false}),
            json!({"type": "tool_result", "id": "t9", "output": "stray", "is_error": false}),
            json!({"type": "error", "message": "rate <limited>"}),
            json!({"type": "retrying", "attempt": 1, "max_retries": 3, "status": 529}),
        ]));
        let items: Vec<&str> = h.split("<li class=\"ev ").skip(1).collect();
        let classes: Vec<&str> = items.iter().map(|i| &i[..i.find('"').unwrap()]).collect();
        assert_eq!(
            classes,
            ["skill", "tool error", "tool", "tool", "error", "error"],
            "{h}"
        );
        assert!(
            items[5].contains("<b>retrying</b> the model API failed (529); attempt 1 of 3"),
            "{h}"
        );
        assert!(items[1].starts_with(
            "tool error\"><details open><summary>tool call <code>Bash</code> (error)"
        ));
        assert!(
            items[1].contains("ls &lt;x&gt;") && items[1].contains("→ error</b><pre>denied</pre>")
        );
        assert!(items[2].contains("→ result</b><pre>ok</pre>") && !items[2].contains("denied"));
        assert!(
            items[3].contains("stray"),
            "a result with no call is shown alone"
        );
        assert!(items[4].contains("rate &lt;limited&gt;"));
        assert_eq!(timeline(&case_run(vec![])), "<p>(no transcript)</p>");
    }
}
