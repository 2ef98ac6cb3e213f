//! Reading what an agent left in its workspace without following any symlink.
//!
//! The agent under evaluation is hostile: any file it made may be a symlink to `/etc/passwd`,
//! to the user's SSH keys or to a folder outside the workspace, and any folder on the way may
//! be one too. Every path here is relative to a workspace root and is opened component by
//! component with `O_NOFOLLOW` (`openat2` with `RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH` where
//! the kernel has it), so a symlink anywhere in it is refused, never followed; `..` and
//! absolute paths are refused before anything is opened. Only regular files are read, opened
//! non-blocking so a FIFO cannot hang assay.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags};

/// Why a path was refused (the inner error of an `InvalidInput` [`io::Error`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("{0}: is or passes through a symlink, which assay does not follow")]
    Symlink(std::path::PathBuf),
    #[error("{0}: `..` is not allowed")]
    ParentDir(std::path::PathBuf),
    #[error("{0}: an absolute path is not allowed")]
    Absolute(std::path::PathBuf),
    #[error("{0}: names no file")]
    Empty(std::path::PathBuf),
    #[error("{0}: is not a regular file")]
    NotAFile(std::path::PathBuf),
}

fn refused(why: fn(std::path::PathBuf) -> Refused, rel: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why(rel.to_path_buf()))
}

/// Whether an error from this module means a symlink was in the way.
pub fn is_symlink_error(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|e| e.downcast_ref::<Refused>())
        .is_some_and(|r| matches!(r, Refused::Symlink(_)))
}

/// The names in `rel`, or an error if it is empty, absolute or has `..`.
pub(crate) fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => return Err(refused(Refused::ParentDir, rel)),
            Component::RootDir | Component::Prefix(_) => {
                return Err(refused(Refused::Absolute, rel));
            }
        }
    }
    if out.is_empty() {
        return Err(refused(Refused::Empty, rel));
    }
    Ok(out)
}

/// The root itself is assay's own path (the workspace it made), so it is opened as named.
fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        rustix::fs::CWD,
        root,
        // The root itself is no symlink either (an agent could have swapped its workspace).
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    )?)
}

/// What to make of a failed `openat(…, O_NOFOLLOW)` of `name` in `dir`: a symlink there is
/// refused by name, anything else is the error itself.
fn explain(dir: &OwnedFd, name: &OsStr, rel: &Path, e: rustix::io::Errno) -> io::Error {
    if matches!(e, rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR)
        && rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_symlink())
    {
        return refused(Refused::Symlink, rel);
    }
    e.into()
}

/// Opens `rel` under `root` (read-only) without following a symlink in any component. The
/// last component is opened with `last` added to the flags.
fn open_beneath(root: &Path, rel: &Path, last: OFlags) -> io::Result<OwnedFd> {
    let names = names(rel)?;
    let dir = open_root(root)?;
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NOCTTY | last;
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::ResolveFlags;
        let clean: std::path::PathBuf = names.iter().collect();
        match rustix::fs::openat2(
            &dir,
            &clean,
            flags,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        ) {
            Ok(fd) => return Ok(fd),
            // Not there (before Linux 5.6, or filtered by seccomp): walk instead.
            Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {}
            // Some component is a symlink (or a mount crossing was refused): walk, to tell
            // which it is.
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::XDEV) => {}
            Err(e) => return Err(e.into()),
        }
    }
    walk(dir, &names, rel, flags)
}

/// The portable way: one `openat(…, O_NOFOLLOW)` per component.
fn walk(mut dir: OwnedFd, names: &[&OsStr], rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let (file, folders) = names.split_last().expect("names are never empty");
    for name in folders {
        let next = rustix::fs::openat(
            &dir,
            *name,
            OFlags::RDONLY
                | OFlags::DIRECTORY
                | OFlags::NOFOLLOW
                | OFlags::CLOEXEC
                | OFlags::NOCTTY,
            Mode::empty(),
        )
        .map_err(|e| explain(&dir, name, rel, e))?;
        dir = next;
    }
    rustix::fs::openat(&dir, *file, flags, Mode::empty()).map_err(|e| explain(&dir, file, rel, e))
}

/// Opens the regular file at `rel` under `root`, following no symlink on the way; a symlink,
/// `..`, an absolute path, a folder, a FIFO or a device is refused.
pub fn open(root: &Path, rel: &Path) -> io::Result<File> {
    let file = File::from(open_beneath(root, rel, OFlags::NONBLOCK)?);
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refused(Refused::NotAFile, rel));
    }
    Ok(file)
}

/// The bytes of the file at `rel` under `root` (see [`open`]); more than `max_bytes` is an
/// error of kind `FileTooLarge`.
pub fn read(root: &Path, rel: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    let file = open(root, rel)?;
    let len = file.metadata()?.len();
    if len > max_bytes {
        return Err(too_large(rel, max_bytes));
    }
    let mut buf = Vec::with_capacity(len as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > max_bytes {
        return Err(too_large(rel, max_bytes));
    }
    Ok(buf)
}

fn too_large(rel: &Path, max_bytes: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("{}: larger than {max_bytes} bytes", rel.display()),
    )
}

/// [`read`] as UTF-8 text (an error of kind `InvalidData` when it is not).
pub fn read_to_string(root: &Path, rel: &Path, max_bytes: u64) -> io::Result<String> {
    String::from_utf8(read(root, rel, max_bytes)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: not UTF-8 text", rel.display()),
        )
    })
}

/// Copies the file at `rel` under `root` (see [`open`]) to `dest`, a path of assay's own (the
/// run folder): folders are created, whatever is at `dest` is replaced, the permission bits
/// are kept without set-id bits. Returns the bytes copied.
pub fn copy_out(root: &Path, rel: &Path, dest: &Path) -> io::Result<u64> {
    copy_out_max(root, rel, dest, u64::MAX)
}

/// [`copy_out`], refusing (and leaving nothing at `dest` for) a file over `max_bytes`.
pub fn copy_out_max(root: &Path, rel: &Path, dest: &Path, max_bytes: u64) -> io::Result<u64> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = open(root, rel)?;
    let meta = file.metadata()?;
    if meta.len() > max_bytes {
        return Err(too_large(rel, max_bytes));
    }
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::symlink_metadata(dest) {
        Ok(m) if m.is_dir() => super::remove::tree(dest)?,
        Ok(_) => std::fs::remove_file(dest)?,
        Err(_) => {}
    }
    let mode = meta.permissions().mode() & 0o777;
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode | 0o600)
        .open(dest)?;
    let copied = io::copy(&mut file.take(max_bytes.saturating_add(1)), &mut out);
    let done = match copied {
        Ok(n) if n > max_bytes => Err(too_large(rel, max_bytes)),
        other => other,
    };
    if done.is_err() {
        drop(out);
        let _ = std::fs::remove_file(dest);
    } else {
        out.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    done
}

/// What is at `rel` under `root`, without following a symlink in any component: `None` when
/// nothing is (or `rel` is refused). A symlink anywhere on the way answers `Symlink`.
pub fn kind(root: &Path, rel: &Path) -> Option<EntryKind> {
    let names = names(rel).ok()?;
    let (last, folders) = names.split_last()?;
    let mut dir = open_root(root).ok()?;
    for name in folders {
        let st = rustix::fs::statat(&dir, *name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode).is_symlink() {
            return Some(EntryKind::Symlink);
        }
        dir = rustix::fs::openat(
            &dir,
            *name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
    }
    let st = rustix::fs::statat(&dir, *last, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
    let t = rustix::fs::FileType::from_raw_mode(st.st_mode);
    Some(if t.is_symlink() {
        EntryKind::Symlink
    } else if t.is_dir() {
        EntryKind::Dir
    } else if t.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    })
}

/// What [`kind`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A workspace `ws/` with `a/b/file.txt`, beside `secret.txt` and a folder `outside/`.
    fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::write(ws.join("a/b/file.txt"), "inside").unwrap();
        std::fs::write(d.path().join("secret.txt"), "SECRET").unwrap();
        std::fs::create_dir_all(d.path().join("outside")).unwrap();
        std::fs::write(d.path().join("outside/file.txt"), "SECRET").unwrap();
        (d, ws)
    }

    #[test]
    fn reads_plain_files_beneath_the_root() {
        let (_d, ws) = setup();
        assert_eq!(
            read_to_string(&ws, Path::new("a/b/file.txt"), 100).unwrap(),
            "inside"
        );
        assert_eq!(
            read(&ws, Path::new("./a/b/file.txt"), 100).unwrap(),
            b"inside"
        );
        assert_eq!(kind(&ws, Path::new("a/b/file.txt")), Some(EntryKind::File));
        assert_eq!(kind(&ws, Path::new("a")), Some(EntryKind::Dir));
        assert_eq!(kind(&ws, Path::new("nope")), None);
        let e = read(&ws, Path::new("a/b/file.txt"), 3).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        let e = read(&ws, Path::new("missing.txt"), 3).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_symlink_as_the_last_component_is_refused() {
        let (d, ws) = setup();
        symlink(d.path().join("secret.txt"), ws.join("out.txt")).unwrap();
        symlink("/etc/passwd", ws.join("passwd")).unwrap();
        // Even one pointing inside the workspace: links are not followed, period.
        symlink("a/b/file.txt", ws.join("inner.txt")).unwrap();
        for p in ["out.txt", "passwd", "inner.txt"] {
            let e = read(&ws, Path::new(p), 1 << 20).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{p}: {e}");
            assert!(is_symlink_error(&e), "{p}: {e}");
            assert_eq!(kind(&ws, Path::new(p)), Some(EntryKind::Symlink));
        }
    }

    #[test]
    fn a_symlink_in_the_middle_of_the_path_is_refused() {
        let (d, ws) = setup();
        symlink(d.path().join("outside"), ws.join("a/out")).unwrap();
        symlink("../..", ws.join("a/b/up")).unwrap();
        for p in ["a/out/file.txt", "a/b/up/a/b/file.txt"] {
            let e = read_to_string(&ws, Path::new(p), 1 << 20).unwrap_err();
            assert!(is_symlink_error(&e), "{p}: {e}");
            assert_eq!(kind(&ws, Path::new(p)), Some(EntryKind::Symlink));
        }
        // The portable walk refuses it too (openat2 may have answered above).
        let dir = open_root(&ws).unwrap();
        let names = names(Path::new("a/out/file.txt")).unwrap();
        let e = walk(dir, &names, Path::new("a/out/file.txt"), OFlags::RDONLY).unwrap_err();
        assert!(is_symlink_error(&e), "{e}");
        let dir = open_root(&ws).unwrap();
        let e = walk(
            dir,
            &[OsStr::new("a"), OsStr::new("out")],
            Path::new("a/out"),
            OFlags::RDONLY | OFlags::NOFOLLOW,
        )
        .unwrap_err();
        assert!(is_symlink_error(&e), "{e}");
    }

    #[test]
    fn dotdot_and_absolute_paths_are_refused() {
        let (d, ws) = setup();
        for p in ["../secret.txt", "a/../../secret.txt", "a/b/../file.txt", ""] {
            let e = read(&ws, Path::new(p), 1 << 20).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{p}: {e}");
        }
        let abs = d.path().join("secret.txt");
        let e = read(&ws, &abs, 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
    }

    #[test]
    fn folders_and_fifos_are_not_read() {
        let (_d, ws) = setup();
        assert!(read(&ws, Path::new("a"), 1 << 20).is_err());
        let fifo = ws.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        // Returns at once (no writer would ever come), refused as not a file.
        let e = read(&ws, Path::new("pipe"), 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
    }

    #[test]
    fn copy_out_copies_files_and_never_a_link_target() {
        let (d, ws) = setup();
        symlink(d.path().join("secret.txt"), ws.join("out.txt")).unwrap();
        let run = d.path().join("run");
        assert_eq!(
            copy_out(&ws, Path::new("a/b/file.txt"), &run.join("a/b/file.txt")).unwrap(),
            6
        );
        assert_eq!(
            std::fs::read_to_string(run.join("a/b/file.txt")).unwrap(),
            "inside"
        );
        assert!(copy_out(&ws, Path::new("out.txt"), &run.join("out.txt")).is_err());
        assert!(std::fs::symlink_metadata(run.join("out.txt")).is_err());
        // Over the budget: refused, nothing left behind.
        assert!(copy_out_max(&ws, Path::new("a/b/file.txt"), &run.join("big"), 3).is_err());
        assert!(std::fs::symlink_metadata(run.join("big")).is_err());
    }
}
