//! What a root agent leaves on the host cannot give anyone root. Its files are root's on the
//! host (it is root inside, as CI runs it), so a setuid copy of a shell in its workspace would
//! run as root for whoever reaches it: each workspace folder is private to the user running
//! assay (0700, [`PRIVATE`]), and a workspace kept for the user has its set-id bits cleared
//! ([`clear`]).

use std::path::Path;

/// The mode of a case-run's workspace folder: its owner's alone.
pub const PRIVATE: u32 = 0o700;

/// Clears the setuid and setgid bits of every file under `root`, links not followed (a link
/// is neither changed nor entered). Returns how many files had one; what cannot be read or
/// changed is skipped.
pub fn clear(root: &Path) -> usize {
    use std::os::unix::fs::PermissionsExt;
    let mut cleared = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file() && meta.permissions().mode() & 0o6000 != 0 {
                let mode = meta.permissions().mode() & 0o1777;
                if std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(mode)).is_ok()
                {
                    cleared += 1;
                }
            }
        }
    }
    cleared
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn set_id_bits_are_cleared_and_links_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let deep = d.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        for (name, mode) in [("suid", 0o4755), ("sgid", 0o2711), ("plain", 0o644)] {
            let f = deep.join(name);
            std::fs::write(&f, "x").unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("host-suid");
        std::fs::write(&target, "x").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o4755)).unwrap();
        std::os::unix::fs::symlink(&target, d.path().join("link")).unwrap();
        assert_eq!(clear(d.path()), 2);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&deep.join("suid")), 0o755);
        assert_eq!(mode(&deep.join("sgid")), 0o711);
        assert_eq!(mode(&deep.join("plain")), 0o644);
        assert_eq!(
            mode(&target),
            0o4755,
            "a link's target is not the workspace's"
        );
    }
}
