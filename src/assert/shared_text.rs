//! A case-run's text as checks see it, shared rather than copied: a plain program's stdout is
//! its final message and its output too, and it may be tens of MiB.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Text read by many and written by none; cloning shares it.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedText(Arc<String>);

impl SharedText {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for SharedText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Takes the string as it is: no copy.
impl From<String> for SharedText {
    fn from(s: String) -> SharedText {
        SharedText(Arc::new(s))
    }
}

impl From<&str> for SharedText {
    fn from(s: &str) -> SharedText {
        SharedText(Arc::new(s.to_string()))
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl serde::Serialize for SharedText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_the_text_and_a_string_is_taken_without_a_copy() {
        let s = String::from("a long output");
        let at = s.as_ptr();
        let t = SharedText::from(s);
        assert_eq!(t.as_ptr(), at);
        assert_eq!(t.clone().as_ptr(), at);
        assert_eq!(t, "a long output");
        assert_eq!(serde_json::to_string(&t).unwrap(), r#""a long output""#);
    }
}
