//! Shared harness for the assay fuzz targets.
//!
//! Each `load_*` target owns a private copy of one example project (made once per process)
//! and, per input, replaces one of the project's eval files with the fuzz bytes, runs
//! discovery and rendering, and checks the loaders' contract. Set `ASSAY_FUZZ_VERBOSE=1` to
//! print each input's suites and rendered problems (handy when replaying a reproducer).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use assay::diag::Problem;
use assay::discover::{self, Options};
use assay::formats::LoadCtx;
use assay::{syntax::{node::{Node, Value}}, diag::{source::{Source, Span}}};

/// A private copy of an example project whose `files` the fuzzer may overwrite.
pub struct Project {
    root: PathBuf,
    /// Paths relative to `root`, with their original contents.
    files: Vec<(&'static str, Vec<u8>)>,
}

impl Project {
    /// Copies `examples/<example>` into a fresh temp dir. `files` are the eval files (relative
    /// to the example's root) that inputs are written to; the list is the one
    /// `tests/loaders_never_panic.rs` uses.
    pub fn new(example: &str, files: &[&'static str]) -> Project {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("examples")
            .join(example);
        let root = tempfile::Builder::new()
            .prefix(&format!("assay-fuzz-{example}-"))
            .tempdir()
            .expect("temp dir")
            .keep();
        remove_at_exit(root.clone());
        copy_dir(&src, &root);
        let files = files
            .iter()
            .map(|f| {
                let original = std::fs::read(root.join(f))
                    .unwrap_or_else(|e| panic!("example file {example}/{f}: {e}"));
                (*f, original)
            })
            .collect();
        Project { root, files }
    }

    /// Runs one input. With several target files the first byte picks the file (modulo their
    /// count) and the rest is its content; with one file the whole input is its content. Every
    /// other target file is restored first, so each run depends only on its own input.
    pub fn run(&self, data: &[u8]) {
        let (index, bytes) = match (self.files.len(), data.split_first()) {
            (1, _) => (0, data),
            (n, Some((&sel, rest))) => (sel as usize % n, rest),
            (_, None) => return,
        };
        for (i, (file, original)) in self.files.iter().enumerate() {
            let content: &[u8] = if i == index { bytes } else { original };
            std::fs::write(self.root.join(file), content).expect("write target file");
        }
        check_project(&self.root, self.files[index].0);
    }
}

/// Discovers the project at `root` (with `file` just rewritten) and asserts the contract.
pub fn check_project(root: &Path, file: &str) {
    let ctx = LoadCtx::new(root);
    let loaded = discover::discover(&ctx, &Options::default());
    let file = Path::new(file);
    if std::env::var_os("ASSAY_FUZZ_VERBOSE").is_some() {
        let sources: Vec<_> = loaded.suites.iter().map(|s| s.source.display()).collect();
        eprintln!(
            "input written to {}; suites from {sources:?}",
            file.display()
        );
        eprintln!(
            "{}",
            assay::diag::render_text(&loaded.problems, Default::default())
        );
    }
    let broken = loaded
        .problems
        .iter()
        .any(|p| p.is_error() && p.file == file);
    if broken {
        let errors: Vec<String> = loaded
            .problems
            .iter()
            .filter(|p| p.is_error() && p.file == file)
            .map(|p| format!("{}: {}", p.code, p.message))
            .collect();
        assert!(
            !loaded.suites.iter().any(|s| s.source == file),
            "a suite was loaded from {} although it has errors: {errors:?}",
            file.display()
        );
    }
    check_problems(&loaded.problems);
    // Rendering must cope with any span the loaders produce.
    let _ = assay::diag::render_text(&loaded.problems, Default::default());
}

/// Every problem has a message, and a span (if any) inside its source text.
pub fn check_problems(problems: &[Problem]) {
    for p in problems {
        assert!(!p.message.is_empty(), "problem {} has no message", p.code);
        if let (Some(source), Some(span)) = (&p.source, p.span) {
            check_span(source, span, p.code);
            let (line, col) = p.line_col().expect("line_col with source and span");
            assert!(
                line >= 1 && col >= 1,
                "line/col {line}:{col} for {}",
                p.code
            );
        }
    }
}

/// A span lies inside the text and on character boundaries.
pub fn check_span(source: &Source, span: Span, what: &str) {
    let text = &source.text;
    assert!(
        span.start <= span.end && span.end <= text.len(),
        "{what}: span {}..{} outside the text (len {})",
        span.start,
        span.end,
        text.len()
    );
    assert!(
        text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
        "{what}: span {}..{} splits a character",
        span.start,
        span.end
    );
}

/// Every node and key span of a parsed tree lies inside the text.
pub fn check_tree(source: &Source, node: &Node) {
    check_span(source, node.span, "node");
    match &node.value {
        Value::Seq(items) => items.iter().for_each(|n| check_tree(source, n)),
        Value::Map(entries) => entries.iter().for_each(|(k, v)| {
            check_span(source, k.span, "key");
            check_tree(source, v);
        }),
        _ => {}
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read example dir") {
        let entry = entry.expect("dir entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&dest).expect("create dir");
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).expect("copy file");
        }
    }
}

static TEMP_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// libFuzzer ends a run with `exit()`, which never drops statics; remove the project copies
/// from an `atexit` hook instead (a crash that aborts still leaves them behind).
fn remove_at_exit(dir: PathBuf) {
    unsafe extern "C" {
        fn atexit(cb: extern "C" fn()) -> i32;
    }
    extern "C" fn cleanup() {
        if let Ok(dirs) = TEMP_DIRS.lock() {
            for d in dirs.iter() {
                let _ = std::fs::remove_dir_all(d);
            }
        }
    }
    let mut dirs = TEMP_DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if dirs.is_empty() {
        // SAFETY: `cleanup` is a plain `extern "C" fn` with no arguments, as atexit expects.
        unsafe {
            atexit(cleanup);
        }
    }
    dirs.push(dir);
}
