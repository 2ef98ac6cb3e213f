//! Copying a file as it is stored: a sparse file (a 1 TiB `truncate`, a database's holes)
//! stays sparse. `std::fs::copy` writes the holes out as zeros where the file system cannot
//! clone (tmpfs, ext4), so keeping a workspace with one filled the host's `/tmp`.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Whether the file has holes: fewer bytes allocated than its length.
pub fn is_sparse(meta: &std::fs::Metadata) -> bool {
    meta.is_file() && meta.blocks().saturating_mul(512) < meta.len()
}

/// Copies `src` to `dest` (replacing it) with its permissions: holes stay holes. Returns the
/// file's length.
pub fn copy(src: &Path, dest: &Path) -> io::Result<u64> {
    let meta = std::fs::metadata(src)?;
    if !is_sparse(&meta) {
        return std::fs::copy(src, dest);
    }
    let mut from = std::fs::File::open(src)?;
    let mut to = std::fs::File::create(dest)?;
    let len = meta.len();
    let mut at = 0u64;
    const CHUNK: usize = 1 << 16;
    let mut buf = vec![0u8; CHUNK];
    while at < len {
        // The next data, and the hole after it; no data left ends the copy.
        let Some(data) = seek(&from, at, libc::SEEK_DATA)? else {
            break;
        };
        let hole = seek(&from, data, libc::SEEK_HOLE)?.unwrap_or(len);
        from.seek(SeekFrom::Start(data))?;
        to.seek(SeekFrom::Start(data))?;
        let mut left = hole - data;
        while left > 0 {
            let n = from.read(&mut buf[..left.min(CHUNK as u64) as usize])?;
            if n == 0 {
                break;
            }
            to.write_all(&buf[..n])?;
            left -= n as u64;
        }
        at = hole;
    }
    to.set_len(len)?;
    to.set_permissions(meta.permissions())?;
    Ok(len)
}

/// `lseek` with `SEEK_DATA` or `SEEK_HOLE` from `at`: `None` when there is no more data.
fn seek(f: &std::fs::File, at: u64, whence: libc::c_int) -> io::Result<Option<u64>> {
    let off = libc::off_t::try_from(at).map_err(|_| io::Error::other("offset too large"))?;
    // SAFETY: lseek on a descriptor this function borrows; it only moves its offset.
    let r = unsafe { libc::lseek(f.as_raw_fd(), off, whence) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENXIO) => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(r as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_file_stays_sparse_and_reads_the_same() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("sparse.bin");
        let mut f = std::fs::File::create(&src).unwrap();
        f.set_len(1 << 30).unwrap();
        f.seek(SeekFrom::Start(5 << 20)).unwrap();
        f.write_all(b"middle").unwrap();
        f.seek(SeekFrom::Start((1 << 30) - 3)).unwrap();
        f.write_all(b"end").unwrap();
        drop(f);
        assert!(
            is_sparse(&std::fs::metadata(&src).unwrap()),
            "holes are kept here"
        );
        let dest = d.path().join("copy.bin");
        assert_eq!(copy(&src, &dest).unwrap(), 1 << 30);
        let meta = std::fs::metadata(&dest).unwrap();
        assert_eq!(meta.len(), 1 << 30);
        assert!(
            meta.blocks() * 512 < 1 << 20,
            "{} bytes allocated",
            meta.blocks() * 512
        );
        let mut back = std::fs::File::open(&dest).unwrap();
        let mut word = [0u8; 6];
        back.seek(SeekFrom::Start(5 << 20)).unwrap();
        back.read_exact(&mut word).unwrap();
        assert_eq!(&word, b"middle");
        back.seek(SeekFrom::Start((1 << 30) - 3)).unwrap();
        let mut end = [0u8; 3];
        back.read_exact(&mut end).unwrap();
        assert_eq!(&end, b"end");
    }
}
