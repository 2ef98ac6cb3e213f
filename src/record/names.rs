//! The names of a run folder's folders, made from suite and case ids.

/// A file name made from an id: safe on any filesystem, still readable. Not one-to-one: see
/// [`folder_names`] for the names of a run's folders.
pub fn slug(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('.').to_string();
    if s.is_empty() { "_".into() } else { s }
}

/// The longest folder name made from an id, in bytes, before its hash (filesystems allow 255).
const MAX_NAME: usize = 100;

/// Folder names for `ids`, in order: each id's [`slug`], except that ids whose slugs would be
/// the same folder (`a b`, `a_b` and `a:b`; also `A` and `a`, one folder on a case-insensitive
/// filesystem) each get a short hash of the id added, as do ids too long for a name. Distinct
/// ids never share a folder; the same set of ids always gives the same names.
pub fn folder_names(ids: &[&str]) -> Vec<String> {
    use std::collections::HashMap;
    let slugs: Vec<String> = ids.iter().map(|id| slug(id)).collect();
    let mut owners: HashMap<String, std::collections::BTreeSet<&str>> = HashMap::new();
    for (id, s) in ids.iter().zip(&slugs) {
        owners.entry(s.to_lowercase()).or_default().insert(id);
    }
    ids.iter()
        .zip(slugs)
        .map(|(id, s)| {
            let shared = owners[&s.to_lowercase()].len() > 1;
            if !shared && s.len() <= MAX_NAME {
                return s;
            }
            let mut cut = s.len().min(MAX_NAME);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            let hash = blake3::hash(id.as_bytes()).to_hex();
            format!("{}-{}", &s[..cut], &hash[..12])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe_folder_names() {
        assert_eq!(
            slug("uaaps:@example/text-tools"),
            "uaaps__example_text-tools"
        );
        assert_eq!(slug("security/003"), "security_003");
        assert_eq!(slug(".."), "_");
    }

    #[test]
    fn ids_that_slug_alike_get_folders_of_their_own() {
        let ids = [
            "a b",
            "a_b",
            "a:b",
            "A_B",
            "ok",
            "security/003",
            "security_003",
            "é",
            "ü",
        ];
        let names = folder_names(&ids);
        let unique: std::collections::BTreeSet<String> =
            names.iter().map(|n| n.to_lowercase()).collect();
        assert_eq!(unique.len(), ids.len(), "{names:?}");
        assert_eq!(names[4], "ok", "an id that is its own slug keeps it");
        assert!(names[0].starts_with("a_b-"), "{names:?}");
        // Stable: the same ids give the same names.
        assert_eq!(folder_names(&ids), names);
    }

    #[test]
    fn long_ids_are_cut_below_the_filesystem_limit_and_stay_apart() {
        let a = "x".repeat(300);
        let b = format!("{}y", "x".repeat(299));
        let names = folder_names(&[&a, &b, &"é".repeat(200)]);
        assert!(names.iter().all(|n| n.len() <= MAX_NAME + 13), "{names:?}");
        assert_ne!(names[0], names[1]);
        let d = tempfile::tempdir().unwrap();
        for n in &names {
            std::fs::create_dir(d.path().join(n)).unwrap();
        }
    }
}
