//! The JSON and YAML parsers on arbitrary text: no panic, spans inside the text, and
//! problems that render.
#![no_main]

use assay::diag::source::Source;
use assay_fuzz::{check_problems, check_tree};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let source = Source::new("fuzz", text.to_string());
    for parse in [assay::syntax::json::parse, assay::syntax::yaml::parse] {
        let (node, problems) = parse(&source);
        if let Some(node) = &node {
            check_tree(&source, node);
        }
        check_problems(&problems);
        let _ = assay::diag::render_text(&problems, Default::default());
    }
});
