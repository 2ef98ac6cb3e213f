//! Staging speed: copying a 5,000-file, 100 MB project into a workspace, against `rsync -a`;
//! then staging copy-on-write (the project copied once as the shared base, each case-run only
//! its own stage layer: the skill and a fixture), per case-run, for that project and a
//! 201-file one, with the agent's changes read back from its layer.
//!
//! Run with `cargo bench --bench stage`. The goals: a copy at most half of rsync's time, and
//! copy-on-write staging at most 5 ms per case-run whatever the project's size; figures are
//! kept in docs/benchmarks.md.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const DIRS: usize = 50;
const FILES_PER_DIR: usize = 100;
const FILE_BYTES: usize = 20 * 1024;
const RUNS: usize = 7;

const CASE_RUNS: usize = 50;

fn generate(root: &Path) {
    generate_sized(root, DIRS, FILES_PER_DIR);
}

fn generate_sized(root: &Path, dirs: usize, files_per_dir: usize) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut buf = vec![0u8; FILE_BYTES];
    for d in 0..dirs {
        let dir = root.join(format!("pkg{d:02}/src"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..files_per_dir {
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
    for (name, project) in [
        ("5,000-file", src.clone()),
        ("201-file", {
            let small = tmp.path().join("small");
            generate_sized(&small, 3, 67);
            small
        }),
    ] {
        let (first, each, read) = copy_on_write(&project, tmp.path());
        println!(
            "copy-on-write, {name} project: the base once {first:?}; then per case-run: staging median {each:?}, reading the agent's changes median {read:?} (of {CASE_RUNS}; goal <= 5 ms: {})",
            if each <= Duration::from_millis(5) {
                "met"
            } else {
                "NOT met"
            }
        );
    }
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

/// Stages `CASE_RUNS` case-runs of `project` copy-on-write, each with the skill under test and
/// one fixture, then writes a file into each one's agent layer (as the agent would) and reads
/// the changes back. Returns the first staging (which makes the base), and the medians of the
/// others' staging and of reading the changes.
fn copy_on_write(project: &Path, tmp: &Path) -> (Duration, Duration, Duration) {
    use assay::suite::{Case, Fixture, Location, Skill, SkillKind};
    use assay::workspace::{StageOptions, SuiteStage, base::Bases, stage};
    let skill_dir = tmp.join(format!("skill-{}", project.file_name().unwrap().display()));
    std::fs::create_dir_all(&skill_dir).unwrap();
    std::fs::write(skill_dir.join("SKILL.md"), "---\nname: s\n---\nDo it.\n").unwrap();
    std::fs::write(skill_dir.join("fixture.txt"), "input").unwrap();
    let parent = tmp.join(format!("ws-{}", project.file_name().unwrap().display()));
    let suite = SuiteStage {
        project_root: project.to_path_buf(),
        base_overlay: None,
        skill: Some(Skill {
            name: "s".into(),
            path: skill_dir.clone(),
            kind: SkillKind::Dir,
            description: None,
        }),
        replaces: None,
        package: None,
        empty: false,
        env: Vec::new(),
    };
    let mut case = Case::new(
        "c",
        Location {
            file: project.join("evals.json"),
            line: 1,
            column: 1,
        },
        vec!["go".into()],
    );
    case.fixtures.push(Fixture {
        source: skill_dir.join("fixture.txt"),
        dest: "inputs/fixture.txt".into(),
    });
    let opts = StageOptions {
        parent: Some(parent.clone()),
        install_skill: true,
        bases: Some(std::sync::Arc::new(Bases::new(parent.clone()))),
        ..StageOptions::default()
    };
    let mut staging = Vec::new();
    let mut reading = Vec::new();
    for _ in 0..=CASE_RUNS {
        let t = Instant::now();
        let staged = stage(&suite, &case, &opts).unwrap();
        staging.push(t.elapsed());
        let upper = &staged.overlay.as_ref().unwrap().upper;
        std::fs::write(upper.join("answer.md"), "done").unwrap();
        let t = Instant::now();
        let changes = staged.before.changes(&staged.snapshot_now());
        reading.push(t.elapsed());
        assert_eq!(changes.len(), 1);
        staged.remove();
    }
    let first = staging.remove(0);
    reading.remove(0);
    (first, median(staging), median(reading))
}
