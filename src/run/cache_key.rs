//! The secret that authenticates the case-run cache: 32 random bytes kept outside the project
//! and outside every agent's sandbox, so whoever can write the project (or its cache) cannot
//! forge an entry.
//!
//! Where it lives: the file `$ASSAY_CACHE_KEY` names, else `$XDG_DATA_HOME/assay/cache.key`,
//! else `$HOME/.local/share/assay/cache.key`. It is made on first use (the file 0600, a folder
//! made for it 0700), written whole or not at all, and a key another process made first is
//! kept, never replaced.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The length of the secret in bytes.
pub const LEN: usize = 32;

/// The secret.
pub type CacheKey = [u8; LEN];

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("no place for the cache key: set ASSAY_CACHE_KEY, XDG_DATA_HOME or HOME")]
    NoPlace,
    #[error("cannot read the cache key {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create the cache key {}: {source}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the cache key {} is {len} bytes long, not {LEN}: remove it and a new one is made",
        path.display()
    )]
    WrongLength { path: PathBuf, len: usize },
    #[error("no random bytes for the cache key: {0}")]
    Random(String),
}

/// Where the key lives, by this process's environment (`None` when no variable says).
pub fn path() -> Option<PathBuf> {
    let var = |k: &str| crate::host::HostEnv::process_var(k).map(OsString::from);
    path_from(var("ASSAY_CACHE_KEY"), var("XDG_DATA_HOME"), var("HOME"))
}

/// Where the key lives, given `ASSAY_CACHE_KEY`, `XDG_DATA_HOME` and `HOME`. Empty values
/// count as unset; a relative `XDG_DATA_HOME` is ignored, as the XDG specification says.
pub fn path_from(
    assay_cache_key: Option<OsString>,
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = set(assay_cache_key) {
        return Some(p);
    }
    if let Some(d) = set(xdg_data_home).filter(|d| d.is_absolute()) {
        return Some(d.join("assay/cache.key"));
    }
    set(home).map(|h| h.join(".local/share/assay/cache.key"))
}

/// The key at [`path`], made there if there is none yet.
pub fn load() -> Result<CacheKey, KeyError> {
    load_or_create(&path().ok_or(KeyError::NoPlace)?)
}

/// The key in `path`, made there if the file does not exist.
pub fn load_or_create(path: &Path) -> Result<CacheKey, KeyError> {
    match read(path) {
        Err(KeyError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
        other => return other,
    }
    let mut fresh: CacheKey = [0; LEN];
    {
        use rand::TryRng;
        rand::rngs::SysRng
            .try_fill_bytes(&mut fresh)
            .map_err(|e| KeyError::Random(e.to_string()))?;
    }
    create(path, &fresh)
}

fn read(path: &Path) -> Result<CacheKey, KeyError> {
    let bytes = std::fs::read(path).map_err(|source| KeyError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    CacheKey::try_from(bytes.as_slice()).map_err(|_| KeyError::WrongLength {
        path: path.to_path_buf(),
        len: bytes.len(),
    })
}

/// Writes `fresh` to `path` through a private temporary file moved into place without
/// replacing anything; when another process made the key first, that key is the one.
fn create(path: &Path, fresh: &CacheKey) -> Result<CacheKey, KeyError> {
    let failed = |source: std::io::Error| KeyError::Create {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(failed)?;
    // The temporary file is made 0600.
    let mut tmp = tempfile::Builder::new()
        .prefix(".cache.key-")
        .tempfile_in(dir)
        .map_err(failed)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(failed)?;
    }
    tmp.write_all(fresh).map_err(failed)?;
    tmp.as_file().sync_all().map_err(failed)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(*fresh)
        }
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => read(path),
        Err(e) => Err(failed(e.error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_key_is_made_once_private_and_then_read_back() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("data/assay/cache.key");
        let key = load_or_create(&path).unwrap();
        assert_ne!(key, [0; LEN]);
        assert_eq!(std::fs::read(&path).unwrap(), key);
        #[cfg(unix)]
        {
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
            assert_eq!(mode(&d.path().join("data")), 0o700);
        }
        assert_eq!(load_or_create(&path).unwrap(), key);
        // Nothing else is left beside it.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["cache.key"]);
        // Two keys are not the same.
        let other = load_or_create(&d.path().join("other.key")).unwrap();
        assert_ne!(other, key);
    }

    #[test]
    fn a_key_of_the_wrong_length_is_an_error_and_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("cache.key");
        for bad in [&b""[..], b"short", &[7; LEN + 1]] {
            std::fs::write(&path, bad).unwrap();
            let e = load_or_create(&path).unwrap_err();
            assert!(
                matches!(&e, KeyError::WrongLength { len, .. } if *len == bad.len()),
                "{e:?}"
            );
            assert!(e.to_string().contains("not 32"), "{e}");
            assert_eq!(std::fs::read(&path).unwrap(), bad);
        }
    }

    #[test]
    fn a_key_another_process_made_first_wins() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("cache.key");
        std::fs::write(&path, [1; LEN]).unwrap();
        assert_eq!(create(&path, &[2; LEN]).unwrap(), [1; LEN]);
        assert_eq!(std::fs::read(&path).unwrap(), [1; LEN]);
        // Racing processes all end up with the one key.
        let path = d.path().join("raced/cache.key");
        let keys: Vec<CacheKey> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| load_or_create(&path).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(keys.iter().all(|k| *k == keys[0]));
        assert_eq!(std::fs::read(&path).unwrap(), keys[0]);
    }

    #[test]
    fn an_unreadable_key_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        // A folder where the key should be.
        let e = load_or_create(d.path()).unwrap_err();
        assert!(matches!(e, KeyError::Read { .. }), "{e:?}");
    }

    #[test]
    fn the_key_lives_where_the_environment_says() {
        let s = |v: &str| Some(OsString::from(v));
        assert_eq!(
            path_from(s("/k/key"), s("/xdg"), s("/home/u")),
            Some(PathBuf::from("/k/key"))
        );
        assert_eq!(
            path_from(None, s("/xdg"), s("/home/u")),
            Some(PathBuf::from("/xdg/assay/cache.key"))
        );
        assert_eq!(
            path_from(s(""), s(""), s("/home/u")),
            Some(PathBuf::from("/home/u/.local/share/assay/cache.key"))
        );
        assert_eq!(
            path_from(None, s("relative"), s("/home/u")),
            Some(PathBuf::from("/home/u/.local/share/assay/cache.key"))
        );
        assert_eq!(path_from(None, None, None), None);
    }
}
