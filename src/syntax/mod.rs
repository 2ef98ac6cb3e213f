//! The syntax readers: JSON and YAML text into one tree of spanned values (`node.rs`),
//! read strictly into typed values (`reader.rs`), and Python's regular expressions.

pub mod extra;
pub mod json;
pub mod node;
pub mod pyregex;
pub mod reader;
pub mod yaml;

use std::path::Path;
use std::sync::Arc;

use crate::diag::Problem;
use crate::diag::source::Source;
use node::Node;
use reader::Doc;

/// Reads a file as UTF-8 text, shown in messages under `shown` (a path relative to where
/// assay runs, when possible).
pub fn read_source(path: &Path, shown: &Path) -> Result<Arc<Source>, Box<Problem>> {
    let bytes = std::fs::read(path).map_err(|e| {
        Box::new(Problem::error(
            "unreadable",
            shown,
            format!("cannot read the file: {e}"),
        ))
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Box::new(Problem::error(
            "not-utf8",
            shown,
            format!(
                "the file is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        ))
    })?;
    // A byte-order mark is legal at the start of JSON and YAML files people save on Windows.
    let text = text
        .strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text);
    Ok(Source::new(shown, text))
}

/// Reads and parses a JSON or YAML file (by extension) into a document and its tree.
pub fn parse_file(path: &Path, shown: &Path) -> Result<(Doc, Node), Vec<Problem>> {
    let source = read_source(path, shown).map_err(|p| vec![*p])?;
    let is_yaml = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    );
    let (node, problems) = if is_yaml {
        yaml::parse(&source)
    } else {
        json::parse(&source)
    };
    match node {
        Some(node) => {
            let mut doc = Doc::new(source);
            doc.problems = problems;
            Ok((doc, node))
        }
        None => Err(problems),
    }
}
