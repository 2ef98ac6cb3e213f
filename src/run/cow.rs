//! Copy-on-write workspaces: whether they work here, tried once per run.
//!
//! They need the sandbox (the overlay is mounted inside it), a kernel and filesystem where
//! overlayfs mounts in a user namespace with `userxattr`, and bubblewrap running the first
//! process inside in the user namespace that owns its mount namespace (run as another user than
//! root, bubblewrap nests a second one, where mounting is refused). Rather than guess, the probe
//! mounts one: a sandbox like a case-run's, over a tiny base, whose command writes a file that
//! must land in the upper layer. Anything else and workspaces are copies, as without a sandbox.

use std::path::Path;
use std::time::Duration;

use crate::process::{self, Spawn};
use crate::sandbox::spec::overlay_safe;
use crate::sandbox::{Bwrap, JailSpec, Layers, Network};

/// `Ok` when copy-on-write workspaces work in `parent`; otherwise why not.
pub async fn probe(bwrap: &Bwrap, parent: &Path) -> Result<(), String> {
    if !overlay_safe(parent) {
        return Err(format!(
            "{} holds a character overlayfs cannot take (`:`, `,` or `\\`)",
            parent.display()
        ));
    }
    crate::record::write::create_missing_private(parent).map_err(|e| e.to_string())?;
    let scratch = tempfile::Builder::new()
        .prefix("assay-cow-probe-")
        .tempdir_in(parent)
        .map_err(|e| e.to_string())?;
    let d = scratch.path();
    let (base, case) = (d.join("base"), d.join("case"));
    let layers = Layers {
        lower: vec![case.join("layers/stage"), base.clone()],
        upper: case.join("layers/upper"),
        work: case.join("layers/work"),
        dir: case.join("layers"),
    };
    let root = case.join("work");
    for dir in [&base, &root, &layers.lower[0], &layers.upper, &layers.work] {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    std::fs::write(base.join("seen"), "").map_err(|e| e.to_string())?;
    let jail = crate::sandbox::bwrap::BwrapJail::new(
        bwrap.clone(),
        JailSpec {
            case_dir: case.clone(),
            root: root.clone(),
            writable: Vec::new(),
            hidden: vec![d.to_path_buf()],
            real_home: None,
            read_only: Vec::new(),
            masked: Vec::new(),
            network: Network::None,
            overlay: Some(layers.clone()),
            tmpfs_size: None,
        },
        &[],
    )
    .map_err(|e| e.to_string())?;
    let mut spawn = Spawn::new("/bin/sh", &root);
    spawn.args = vec!["-c".into(), "test -e seen && : > written".into()];
    spawn.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spawn.timeout = Duration::from_secs(10);
    jail.wrap(&mut spawn);
    let exited = process::run(&spawn, |_| {})
        .await
        .map_err(|e| e.to_string())?;
    let landed = layers.upper.join("written").is_file() && !root.join("written").exists();
    if exited.code == Some(0) && landed {
        return Ok(());
    }
    let said = exited.stderr_tail.trim();
    Err(if said.is_empty() {
        format!("the probe's overlay did not work (exit {:?})", exited.code)
    } else {
        said.lines().last().unwrap_or(said).to_string()
    })
}
