//! Removing a tree an agent made, however deep. `std::fs::remove_dir_all` recurses once per
//! folder level: a chain of folders 20,000 deep overflowed the stack of the thread removing
//! it and aborted assay. This walk keeps its place in a list on the heap, holds one folder
//! open at a time, and never follows a symbolic link: going back up is `..` from the folder
//! just emptied, checked to be the folder it came down from (device and inode), so a folder
//! moved meanwhile stops the removal rather than sending it elsewhere.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// Removes `path` and everything under it (a file or a symlink at `path` is removed itself,
/// never followed); nothing there is fine. Iterative: the depth of the tree takes no stack.
pub fn tree(path: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        other => other?,
    };
    if !meta.is_dir() {
        return absent_is_fine(std::fs::remove_file(path));
    }
    let root = rustix::fs::openat(rustix::fs::CWD, path, dir_flags(), Mode::empty())?;
    empty(root)?;
    absent_is_fine(std::fs::remove_dir(path))
}

/// Empties every folder directly in the folder `path` and removes its other entries, leaving
/// `path` and its folders in place, empty (never following a symbolic link). A workspace's
/// folders kept this way cost no new inodes when removed later, in one go.
pub fn children(path: &Path) -> io::Result<()> {
    let root = rustix::fs::openat(rustix::fs::CWD, path, dir_flags(), Mode::empty())?;
    for name in clear_files(&root)? {
        match rustix::fs::openat(&root, name.as_os_str(), dir_flags(), Mode::empty()) {
            Ok(fd) => empty(fd)?,
            Err(rustix::io::Errno::NOENT) => {}
            Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
                unlink(&root, &name, AtFlags::empty())?
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn absent_is_fine(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// A folder on the way down: who it is, its name in its parent, and its folders still to
/// empty.
struct Level {
    id: (u64, u64),
    name: OsString,
    dirs: Vec<OsString>,
}

/// A folder's device and inode (their types differ between systems).
#[allow(clippy::unnecessary_cast)]
fn id_of(fd: &OwnedFd) -> io::Result<(u64, u64)> {
    let st = rustix::fs::fstat(fd)?;
    Ok((st.st_dev as u64, st.st_ino as u64))
}

/// Empties the folder open as `root`, leaving it in place.
fn empty(root: OwnedFd) -> io::Result<()> {
    let mut here = root;
    let mut levels = vec![Level {
        id: id_of(&here)?,
        name: OsString::new(),
        dirs: clear_files(&here)?,
    }];
    loop {
        let next = match levels.last_mut() {
            Some(top) => top.dirs.pop(),
            None => return Ok(()),
        };
        if let Some(child) = next {
            match rustix::fs::openat(&here, child.as_os_str(), dir_flags(), Mode::empty()) {
                Ok(fd) => {
                    let dirs = clear_files(&fd)?;
                    let id = id_of(&fd)?;
                    here = fd;
                    levels.push(Level {
                        id,
                        name: child,
                        dirs,
                    });
                }
                Err(rustix::io::Errno::NOENT) => {}
                // No longer a folder (a symlink or file put in its place): removed as itself.
                Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
                    unlink(&here, &child, AtFlags::empty())?
                }
                Err(e) => return Err(e.into()),
            }
            continue;
        }
        // `here` is empty: up to its parent, and remove it there.
        let (Some(done), Some(parent)) = (levels.pop(), levels.last()) else {
            return Ok(());
        };
        let up = rustix::fs::openat(&here, "..", dir_flags(), Mode::empty())?;
        if id_of(&up)? != parent.id {
            return Err(io::Error::other(format!(
                "a folder moved while it was removed ({})",
                Path::new(&done.name).display()
            )));
        }
        here = up;
        unlink(&here, &done.name, AtFlags::REMOVEDIR)?;
    }
}

/// Removes every entry of the folder open as `dir` that is not a folder; returns the names
/// of its folders.
fn clear_files(dir: &OwnedFd) -> io::Result<Vec<OsString>> {
    let mut dirs = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            FileType::Directory => true,
            FileType::Unknown => match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => FileType::from_raw_mode(st.st_mode) == FileType::Directory,
                Err(rustix::io::Errno::NOENT) => continue,
                Err(e) => return Err(e.into()),
            },
            _ => false,
        };
        if is_dir {
            dirs.push(name.to_os_string());
        } else {
            match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
                // A folder after all (put there meanwhile): emptied as one.
                Err(rustix::io::Errno::ISDIR | rustix::io::Errno::PERM) if is_folder(dir, name) => {
                    dirs.push(name.to_os_string())
                }
                other => absent_is_fine(other.map_err(io::Error::from))?,
            }
        }
    }
    Ok(dirs)
}

fn is_folder(dir: &OwnedFd, name: &OsStr) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
}

fn unlink(dir: &OwnedFd, name: &OsStr, flags: AtFlags) -> io::Result<()> {
    absent_is_fine(rustix::fs::unlinkat(dir, name, flags).map_err(io::Error::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of `depth` folders under `root` (made by `openat`, past the longest path),
    /// each with a file, and a symlink out of the tree at the bottom.
    fn chain(root: &Path, depth: usize, outside: &Path) {
        let mut here =
            rustix::fs::openat(rustix::fs::CWD, root, dir_flags(), Mode::empty()).unwrap();
        for i in 0..depth {
            rustix::fs::mkdirat(&here, "d", Mode::from_raw_mode(0o755)).unwrap();
            if i % 1000 == 0 {
                let f = rustix::fs::openat(
                    &here,
                    "f",
                    OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o644),
                )
                .unwrap();
                drop(f);
            }
            here = rustix::fs::openat(&here, "d", dir_flags(), Mode::empty()).unwrap();
        }
        rustix::fs::symlinkat(outside, &here, "out").unwrap();
    }

    /// A temporary folder in memory where there is one (a deep chain on a disk takes minutes
    /// to make and remove on a busy machine), else in the temp folder.
    fn scratch() -> tempfile::TempDir {
        let shm = Path::new("/dev/shm");
        match shm.is_dir() {
            true => tempfile::tempdir_in(shm).unwrap_or_else(|_| tempfile::tempdir().unwrap()),
            false => tempfile::tempdir().unwrap(),
        }
    }

    #[test]
    fn a_chain_100000_deep_is_removed_in_a_small_stack_and_no_link_is_followed() {
        let d = scratch();
        let (root, outside) = (d.path().join("ws"), d.path().join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        chain(&root, 100_000, &outside);
        let removing = root.clone();
        // 64 KiB of stack: recursion of any kind would overflow it.
        let removed = std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(move || tree(&removing))
            .unwrap()
            .join()
            .unwrap();
        removed.unwrap();
        assert!(!root.exists());
        assert!(outside.join("keep").is_file(), "followed the symlink");
    }

    #[test]
    fn children_empties_the_folders_in_a_folder_and_leaves_them() {
        let d = tempfile::tempdir().unwrap();
        let (ws, target) = (d.path().join("ws"), d.path().join("target"));
        std::fs::create_dir_all(ws.join("work/a/b")).unwrap();
        std::fs::create_dir_all(ws.join("home")).unwrap();
        std::fs::create_dir_all(target.join("sub")).unwrap();
        std::fs::write(ws.join("work/a/f"), "x").unwrap();
        std::fs::write(ws.join("home/.rc"), "x").unwrap();
        std::fs::write(ws.join("loose"), "x").unwrap();
        std::os::unix::fs::symlink(&target, ws.join("link")).unwrap();
        std::os::unix::fs::symlink(&target, ws.join("work/link")).unwrap();
        children(&ws).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&ws)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["home", "work"]);
        for sub in ["home", "work"] {
            assert_eq!(std::fs::read_dir(ws.join(sub)).unwrap().count(), 0, "{sub}");
        }
        assert!(target.join("sub").is_dir(), "followed a symlink");
    }

    #[test]
    fn files_links_and_nothing_at_all_are_removed_too() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, "x").unwrap();
        tree(&f).unwrap();
        assert!(!f.exists());
        tree(&d.path().join("none")).unwrap();
        let target = d.path().join("target");
        std::fs::create_dir_all(target.join("sub")).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        tree(&link).unwrap();
        assert!(target.join("sub").is_dir() && std::fs::symlink_metadata(&link).is_err());
        let wide = d.path().join("wide");
        for i in 0..50 {
            std::fs::create_dir_all(wide.join(format!("{i}/a/b"))).unwrap();
            std::fs::write(wide.join(format!("{i}/a/f")), "x").unwrap();
        }
        std::os::unix::fs::symlink(&target, wide.join("0/a/l")).unwrap();
        tree(&wide).unwrap();
        assert!(!wide.exists() && target.join("sub").is_dir());
    }
}
