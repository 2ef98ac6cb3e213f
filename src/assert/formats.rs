//! Value formats at run time: the one extension point behind `has_format` and extraction field
//! `format`. A built-in format (a pattern from [`crate::suite::value_formats`], the load-time
//! schema) and a plugin's implement [`ValueFormat`] side by side; [`Formats`] finds either by
//! name, built-ins first.

use std::sync::Arc;

use super::builtin::matching;
use crate::suite::value_formats::{self, NamedFormat};

/// One named format.
pub trait ValueFormat: Send + Sync {
    /// Whether the whole value is of the format.
    fn matches(&self, value: &str) -> Result<bool, String>;
    /// Non-overlapping occurrences in a text, as byte ranges on character boundaries.
    fn find_all(&self, text: &str) -> Result<Vec<(usize, usize)>, String>;
}

/// Where formats beyond the built-in registry come from (the loaded plugins).
pub trait ExtraFormats: Send + Sync {
    fn has(&self, name: &str) -> bool;
    /// Whether the whole value is of the format.
    fn matches(&self, name: &str, value: &str) -> Result<bool, String>;
    /// Non-overlapping occurrences, as byte ranges.
    fn find_all(&self, name: &str, text: &str) -> Result<Vec<(usize, usize)>, String>;
}

/// A built-in format: its pattern, with Python's regex semantics.
struct Builtin(&'static NamedFormat);

impl ValueFormat for Builtin {
    fn matches(&self, value: &str) -> Result<bool, String> {
        full_match(self.0.pattern)?
            .is_match(value)
            .map_err(|e| e.to_string())
    }

    fn find_all(&self, text: &str) -> Result<Vec<(usize, usize)>, String> {
        Ok(matching::find_all(&matching::regex(self.0.pattern)?, text))
    }
}

/// A plugin's format, by name.
struct Plugin<'a> {
    extra: &'a dyn ExtraFormats,
    name: &'a str,
}

impl ValueFormat for Plugin<'_> {
    fn matches(&self, value: &str) -> Result<bool, String> {
        self.extra.matches(self.name, value)
    }

    fn find_all(&self, text: &str) -> Result<Vec<(usize, usize)>, String> {
        self.extra.find_all(self.name, text)
    }
}

/// The formats a run knows: the built-in registry, then the plugins'.
#[derive(Clone, Default)]
pub struct Formats {
    extra: Option<Arc<dyn ExtraFormats>>,
}

impl Formats {
    pub fn with_plugins(extra: Arc<dyn ExtraFormats>) -> Self {
        Formats { extra: Some(extra) }
    }

    /// The format of this name, if any.
    pub fn get<'a>(&'a self, name: &'a str) -> Option<Box<dyn ValueFormat + 'a>> {
        if let Some(f) = value_formats::lookup(name) {
            return Some(Box::new(Builtin(f)));
        }
        let extra = self.extra.as_deref().filter(|e| e.has(name))?;
        Some(Box::new(Plugin { extra, name }))
    }
}

/// A pattern that must match the whole value.
pub fn full_match(pattern: &str) -> Result<fancy_regex::Regex, String> {
    crate::syntax::pyregex::compile(&format!(r"\A(?:{pattern})\z"))
        .map_err(|e| format!("invalid format regex: {e}"))
}
