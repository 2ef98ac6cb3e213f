//! The report's plots, as inline SVG drawn here (no script needed): horizontal bars, one row
//! per case or query, each with a `<title>` a screen reader or a hover shows, the chart with
//! its own `<title>` and `<desc>`.

use std::collections::BTreeMap;

use super::e;
use crate::record::case_run::Arm;
use crate::report::aggregate::{Aggregates, CaseVerdict};
use crate::report::model::CaseRun;

/// One bar.
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// An interval drawn as an error bar.
    pub interval: Option<(f64, f64)>,
    /// A mark across the bar (a threshold).
    pub marker: Option<f64>,
    /// `good` or `bad` (its colour), or empty.
    pub class: &'static str,
    /// The value as said in the row's title and beside the bar.
    pub said: String,
}

/// A chart and its title (shown as the figure's caption, and in the SVG's `<title>`).
pub struct Plot {
    pub title: &'static str,
    pub svg: String,
}

const WIDTH: f64 = 960.0;
const LABEL: f64 = 250.0;
const PLOT: f64 = 360.0;
const ROW: f64 = 22.0;
const TOP: f64 = 8.0;

/// At most `n` characters of a label, cut in the middle: its start (the suite) and its end
/// (the case, and which arm: `(baseline)`) both stay, so two rows never read alike.
fn short(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    let tail = n / 2;
    let head = n - tail - 1;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(count - tail).collect();
    format!("{start}…{end}")
}

/// A horizontal bar chart over `[min, max]` (bars start at 0, or at `min` when 0 is outside),
/// with the axis's ends and 0 labelled by `tick`.
pub fn bars(
    title: &str,
    desc: &str,
    rows: &[Bar],
    (min, max): (f64, f64),
    tick: impl Fn(f64) -> String,
) -> String {
    let span = if max > min { max - min } else { 1.0 };
    let x = |v: f64| LABEL + (v.clamp(min, max) - min) / span * PLOT;
    let zero = x(0f64.clamp(min, max));
    let height = TOP + rows.len() as f64 * ROW + 24.0;
    let mut s = format!(
        "<svg class=\"plot\" role=\"img\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\"><title>{}</title><desc>{}</desc>",
        e(title),
        e(desc)
    );
    for (i, b) in rows.iter().enumerate() {
        let y = TOP + i as f64 * ROW;
        let (a, z) = if x(b.value) < zero {
            (x(b.value), zero)
        } else {
            (zero, x(b.value))
        };
        s.push_str(&format!(
            "<g class=\"bar {}\"><title>{}: {}</title><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{a:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
            b.class,
            e(&b.label),
            e(&b.said),
            LABEL - 6.0,
            y + 15.0,
            e(&short(&b.label, 36)),
            y + 4.0,
            (z - a).max(1.0),
            ROW - 8.0
        ));
        if let Some((lo, hi)) = b.interval {
            let (l, h, m) = (x(lo), x(hi), y + ROW / 2.0);
            s.push_str(&format!(
                "<path class=\"interval\" d=\"M{l:.1} {m:.1}H{h:.1}M{l:.1} {:.1}V{:.1}M{h:.1} {:.1}V{:.1}\"/>",
                m - 5.0,
                m + 5.0,
                m - 5.0,
                m + 5.0
            ));
        }
        if let Some(t) = b.marker {
            let t = x(t);
            s.push_str(&format!(
                "<line class=\"marker\" x1=\"{t:.1}\" x2=\"{t:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
                y + 1.0,
                y + ROW - 1.0
            ));
        }
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            LABEL + PLOT + 8.0,
            y + 15.0,
            e(&short(&b.said, 48))
        ));
    }
    let axis = TOP + rows.len() as f64 * ROW + 2.0;
    s.push_str(&format!(
        "<g class=\"axis\"><line x1=\"{LABEL:.1}\" x2=\"{:.1}\" y1=\"{axis:.1}\" y2=\"{axis:.1}\"/><line x1=\"{zero:.1}\" x2=\"{zero:.1}\" y1=\"{TOP:.1}\" y2=\"{axis:.1}\"/>",
        LABEL + PLOT
    ));
    let mut ticks = vec![min, max];
    if min < 0.0 && max > 0.0 {
        ticks.push(0.0);
    }
    for t in ticks {
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x(t),
            axis + 16.0,
            e(&tick(t))
        ));
    }
    s.push_str("</g></svg>");
    s
}

fn plot(
    title: &'static str,
    desc: &str,
    rows: &[Bar],
    range: (f64, f64),
    tick: impl Fn(f64) -> String,
) -> Plot {
    Plot {
        title,
        svg: bars(title, desc, rows, range, tick),
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn good(ok: bool) -> &'static str {
    if ok { "good" } else { "bad" }
}

/// Each case's pass rate, with its Wilson interval as an error bar.
pub fn pass_rates(a: &Aggregates) -> Option<Plot> {
    let rows: Vec<Bar> = a
        .cases
        .iter()
        .filter(|c| c.pass_rate.n > 0)
        .map(|c| Bar {
            label: format!("{}/{}", c.suite, c.case),
            value: c.pass_rate.rate,
            interval: Some((c.pass_rate.low, c.pass_rate.high)),
            marker: None,
            class: good(c.verdict != CaseVerdict::Fail),
            said: format!(
                "{} of {} ({}; 95% CI {}–{})",
                c.pass_rate.passed,
                c.pass_rate.n,
                pct(c.pass_rate.rate),
                pct(c.pass_rate.low),
                pct(c.pass_rate.high)
            ),
        })
        .collect();
    (!rows.is_empty()).then(|| {
        plot(
            "Pass rate per case",
            "Each case's pass rate over its runs, with its 95% Wilson interval as an error bar.",
            &rows,
            (0.0, 1.0),
            pct,
        )
    })
}

/// Each trigger query's fire rate, with its threshold marked.
pub fn trigger_rates(a: &Aggregates) -> Option<Plot> {
    let rows: Vec<Bar> = a
        .triggers
        .iter()
        .map(|t| Bar {
            label: format!("{}: {}", t.id, crate::text::gist(&t.query, 80)),
            value: t.trigger_rate,
            interval: None,
            marker: Some(t.threshold),
            class: good(t.passed),
            said: format!(
                "fired {} of {} ({}), {} fire, threshold {}",
                t.fired,
                t.runs,
                pct(t.trigger_rate),
                if t.should_trigger {
                    "should"
                } else {
                    "should not"
                },
                pct(t.threshold)
            ),
        })
        .collect();
    (!rows.is_empty()).then(|| {
        plot(
            "Trigger rate per query",
            "How often the skill fired on each query; the mark across a bar is its threshold.",
            &rows,
            (0.0, 1.0),
            pct,
        )
    })
}

/// The mean duration and the mean cost of each case (and variant).
pub fn costs(case_runs: &[CaseRun]) -> Vec<Plot> {
    let mut by: BTreeMap<(String, Arm), (u64, u64, f64, u64)> = BTreeMap::new();
    for c in case_runs
        .iter()
        .filter(|c| c.duration_ms > 0 || c.cost_usd.is_some())
    {
        let label = format!("{}/{}", c.suite, c.case);
        let v = by.entry((label, c.variant)).or_default();
        v.0 += 1;
        v.1 += c.duration_ms;
        if let Some(x) = c.cost_usd {
            v.2 += x;
            v.3 += 1;
        }
    }
    let label = |(l, variant): &(String, Arm)| {
        if variant.is_comparison() {
            format!("{l} ({})", variant.word())
        } else {
            l.clone()
        }
    };
    let mut out = Vec::new();
    let time: Vec<Bar> = by
        .iter()
        .map(|(k, v)| {
            let s = v.1 as f64 / v.0 as f64 / 1000.0;
            Bar {
                label: label(k),
                value: s,
                interval: None,
                marker: None,
                class: "",
                said: format!("{s:.1} s"),
            }
        })
        .collect();
    let top = time.iter().map(|b| b.value).fold(0.0, f64::max);
    if !time.is_empty() && top > 0.0 {
        out.push(plot(
            "Duration per case",
            "The mean time of each case's runs, in seconds.",
            &time,
            (0.0, top),
            |t| format!("{t:.1} s"),
        ));
    }
    let cost: Vec<Bar> = by
        .iter()
        .filter(|(_, v)| v.3 > 0)
        .map(|(k, v)| {
            let c = v.2 / v.3 as f64;
            Bar {
                label: label(k),
                value: c,
                interval: None,
                marker: None,
                class: "",
                said: format!("${c:.4}"),
            }
        })
        .collect();
    let top = cost.iter().map(|b| b.value).fold(0.0, f64::max);
    if !cost.is_empty() && top > 0.0 {
        out.push(plot(
            "Cost per case",
            "The mean cost of each case's runs, in US dollars, where the agent reported it.",
            &cost,
            (0.0, top),
            |t| format!("${t:.4}"),
        ));
    }
    out
}

/// With the skill minus without it: each case's pass-rate delta.
pub fn deltas(a: &Aggregates) -> Option<Plot> {
    let rows: Vec<Bar> = a
        .baselines
        .iter()
        .chain(a.baseline_total.as_ref())
        .map(|b| Bar {
            label: if b.case == "*" {
                "all cases".into()
            } else {
                format!("{}/{}", b.suite, b.case)
            },
            value: b.delta_pass_rate,
            interval: None,
            marker: None,
            class: good(b.delta_pass_rate >= 0.0),
            said: format!(
                "{:+.0} points ({} vs {} without; p = {:.3})",
                b.delta_pass_rate * 100.0,
                pct(b.skill.pass_rate.rate),
                pct(b.baseline.pass_rate.rate),
                b.p_value
            ),
        })
        .collect();
    (!rows.is_empty()).then(|| {
        plot(
            "Pass rate with the skill minus the baseline",
            "For each case run with and without the skill, the difference in pass rate, in percentage points.",
            &rows,
            (-1.0, 1.0),
            |t| format!("{:+.0}", t * 100.0),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_label_keeps_its_start_and_its_arm() {
        let skill = short("clauditor:release-notes/release-notes", 30);
        let base = short("clauditor:release-notes/release-notes (baseline)", 30);
        assert_eq!(base.chars().count(), 30);
        assert!(
            base.starts_with("clauditor:rel") && base.ends_with("(baseline)"),
            "{base}"
        );
        assert_ne!(skill, base);
        assert_eq!(short("short", 30), "short");
    }

    fn parses(svg: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"))
    }

    #[test]
    fn a_chart_is_well_formed_svg_with_titles_and_escaped_labels() {
        let rows = vec![
            Bar {
                label: "s/</svg><script>alert(1)</script> & \"q\"".into(),
                value: 0.5,
                interval: Some((0.2, 0.8)),
                marker: Some(0.5),
                class: "good",
                said: "1 of 2".into(),
            },
            Bar {
                label: "s/b".into(),
                value: -0.25,
                interval: None,
                marker: None,
                class: "bad",
                said: "-25".into(),
            },
        ];
        let svg = bars("T <1>", "D & d", &rows, (-1.0, 1.0), pct);
        let doc = parses(&svg);
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert_eq!(root.attribute("role"), Some("img"));
        let title = root.children().find(|n| n.has_tag_name("title")).unwrap();
        assert_eq!(title.text(), Some("T <1>"));
        assert_eq!(
            root.descendants()
                .filter(|n| n.has_tag_name("g")
                    && n.attribute("class").is_some_and(|c| c.starts_with("bar")))
                .count(),
            2
        );
        assert!(
            root.descendants().all(|n| !n.has_tag_name("script")),
            "a label is text, never markup"
        );
        let row_title = root
            .descendants()
            .filter(|n| n.has_tag_name("title"))
            .nth(1)
            .unwrap();
        assert!(
            row_title
                .text()
                .unwrap()
                .contains("<script>alert(1)</script> & \"q\"")
        );
        assert_eq!(
            root.descendants()
                .filter(|n| n.has_tag_name("path"))
                .count(),
            1
        );
        assert_eq!(
            root.descendants()
                .filter(|n| n.has_tag_name("line") && n.attribute("class") == Some("marker"))
                .count(),
            1
        );
        // A negative bar is drawn left of zero, inside the plot.
        let rects: Vec<f64> = root
            .descendants()
            .filter(|n| n.has_tag_name("rect"))
            .map(|n| n.attribute("x").unwrap().parse().unwrap())
            .collect();
        assert!(rects[1] < rects[0] && rects[1] >= LABEL, "{rects:?}");
        assert!(!svg.contains("http"), "no namespace URL or any other");
    }

    #[test]
    fn the_report_plots_parse_as_xml() {
        use crate::record::case_run::{Kind, TriggerRecord};
        use crate::record::grading::{Grade, Verdict};
        use crate::record::{CaseRunRecord, Status};
        use crate::report::aggregate::{VerdictSettings, aggregate};
        use crate::report::rows::Row;
        let record = |case: &str, run, passed: bool, variant| CaseRunRecord {
            suite: "s".into(),
            case: case.into(),
            run,
            variant,
            status: Status::Completed,
            duration_ms: 1500,
            cost_usd: Some(0.01),
            grade: Some(Grade {
                verdict: if passed { Verdict::Pass } else { Verdict::Fail },
                checks_passed: 0,
                checks_total: 0,
                score: 1.0,
                reasons: vec![],
            }),
            ..CaseRunRecord::default()
        };
        let mut records = vec![
            record("a", 1, true, Arm::Skill),
            record("a", 2, false, Arm::Skill),
            record("a", 1, false, Arm::Baseline),
            record("b", 1, true, Arm::Skill),
        ];
        let mut t = record("q1", 1, true, Arm::Skill);
        t.kind = Kind::Trigger;
        t.trigger = Some(TriggerRecord {
            query: "use <it> & go".into(),
            should_trigger: true,
            fired: Some(true),
            mode: Default::default(),
            threshold: 0.5,
            skill: "x".into(),
            note: None,
            reason: None,
            routing: Default::default(),
        });
        records.push(t);
        let rows: Vec<Row> = records.iter().map(Row::of).collect();
        let a = aggregate(
            &rows,
            VerdictSettings {
                min_pass_rate: 1.0,
                pass_k: 1,
            },
        );
        let p = pass_rates(&a).unwrap();
        assert!(parses(&p.svg).descendants().any(|n| n.has_tag_name("path")));
        let t = trigger_rates(&a).unwrap();
        assert!(
            parses(&t.svg)
                .descendants()
                .any(|n| n.attribute("class") == Some("marker"))
        );
        parses(&deltas(&a).unwrap().svg);
        let read: Vec<CaseRun> = records
            .iter()
            .map(|r| CaseRun::of(r.clone(), Default::default()))
            .collect();
        let c = costs(&read);
        assert_eq!(
            c.iter().map(|p| p.title).collect::<Vec<_>>(),
            ["Duration per case", "Cost per case"]
        );
        for p in c {
            parses(&p.svg);
        }
    }
}
