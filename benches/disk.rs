//! The disk limit's cost: one measurement of a case-run whose folder holds 10,000 files (100
//! folders of 100 files of 1 KiB), the folder's walk alone and the whole measurement (the
//! walk, and this process's descriptors, mappings and mount namespace as a case-run's
//! process's). The medians of 30 decide how often the limit's watch may measure: it never
//! measures sooner than ten times a measurement's cost (twice near the limit).
//!
//! Run with `cargo bench --bench disk`; figures are kept in docs/benchmarks.md.

use std::time::{Duration, Instant};

use assay::sandbox::disk;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let d = tempfile::tempdir().unwrap();
    for i in 0..100 {
        let sub = d.path().join(format!("d{i}"));
        std::fs::create_dir(&sub).unwrap();
        for j in 0..100 {
            std::fs::write(sub.join(format!("f{j}")), [b'x'; 1024]).unwrap();
        }
    }
    let host = disk::host_devices();
    let me = Some(std::process::id());
    let walk = median(
        (0..30)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(disk::folder(d.path()));
                t.elapsed()
            })
            .collect(),
    );
    let whole = median(
        (0..30)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(disk::measure(d.path(), 0, me, None, &host));
                t.elapsed()
            })
            .collect(),
    );
    let counted = disk::folder(d.path());
    println!(
        "10,000 files ({} MiB counted): the walk {walk:.2?}, the whole measurement {whole:.2?} \
         (medians of 30); the watch measures it no sooner than every {:.0?} far from the \
         limit, {:.0?} near it",
        counted >> 20,
        (whole * 10).max(disk::Pace::EVERY),
        (whole * 2).max(disk::Pace::SOONEST)
    );
}
