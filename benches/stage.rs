//! Staging speed: copying a 5,000-file, 100 MB project into a workspace, against `rsync -a`.
//!
//! Run with `cargo bench --bench stage`. The goal is at most half of rsync's time; figures are
//! kept in docs/benchmarks.md.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const DIRS: usize = 50;
const FILES_PER_DIR: usize = 100;
const FILE_BYTES: usize = 20 * 1024;
const RUNS: usize = 7;

fn generate(root: &Path) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut buf = vec![0u8; FILE_BYTES];
    for d in 0..DIRS {
        let dir = root.join(format!("pkg{d:02}/src"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            for b in buf.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = (x >> 24) as u8;
            }
            std::fs::write(dir.join(format!("file{f:03}.txt")), &buf).unwrap();
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("project");
    generate(&src);
    let count = DIRS * FILES_PER_DIR;
    println!(
        "project: {count} files, {} MB",
        count * FILE_BYTES / 1_000_000
    );

    let time = |f: &dyn Fn(&Path)| {
        (0..RUNS)
            .map(|i| {
                let dst = tmp.path().join(format!("dst{i}"));
                let t = Instant::now();
                f(&dst);
                let e = t.elapsed();
                std::fs::remove_dir_all(&dst).unwrap();
                e
            })
            .collect::<Vec<_>>()
    };
    let assay = median(time(&|dst| {
        assay::workspace::copy::copy_tree(&src, dst, true).unwrap();
    }));
    println!("assay copy (parallel, reflink when possible): median {assay:?} of {RUNS}");
    let have_rsync = Command::new("rsync").arg("--version").output().is_ok();
    if !have_rsync {
        println!("rsync not installed: apt-get install rsync to compare");
        return;
    }
    let rsync = median(time(&|dst| {
        let ok = Command::new("rsync")
            .arg("-a")
            .arg(format!("{}/", src.display()))
            .arg(dst)
            .status()
            .unwrap();
        assert!(ok.success());
    }));
    println!("rsync -a:                                     median {rsync:?} of {RUNS}");
    let ratio = assay.as_secs_f64() / rsync.as_secs_f64();
    println!(
        "ratio assay/rsync: {ratio:.2} (goal <= 0.50: {})",
        if ratio <= 0.5 { "met" } else { "NOT met" }
    );
}
