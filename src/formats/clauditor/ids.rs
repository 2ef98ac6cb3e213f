//! The ids of a clauditor spec: assertions, section fields and grading criteria share one
//! pool, so an id names one of them only; assay's `x-assay-checks` are checked against it.

use std::collections::HashSet;

use crate::diag::source::Span;
use crate::formats::check_unique;
use crate::syntax::reader::{Doc, Map};

/// Every id read so far, with where it was written (its span and field path).
#[derive(Default)]
pub(super) struct Ids(Vec<(String, Span, String)>);

impl Ids {
    /// Reads the map's required, non-empty string `id` into the pool.
    pub(super) fn read(&mut self, doc: &mut Doc, m: &Map<'_>) -> Option<String> {
        let n = m.req(doc, "id")?;
        let id = doc.text(n, &m.path("id"))?;
        self.0.push((id.clone(), n.span, m.path("id")));
        Some(id)
    }

    /// Reports every id written twice.
    pub(super) fn check_unique(&self, doc: &mut Doc) {
        check_unique(
            doc,
            "id",
            self.0
                .iter()
                .map(|(id, span, f)| (id.as_str(), *span, f.clone())),
        );
    }

    /// The ids taken, for the checks read after them.
    pub(super) fn taken(&self) -> HashSet<String> {
        self.0.iter().map(|(id, _, _)| id.clone()).collect()
    }
}
