//! The Seatbelt profile of one command: deny by default, then what it may reach ([`Reach`]),
//! in the profile language's terms (every path a quoted string).

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What one command may reach, in the profile's terms.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reach {
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    /// Files never read, even within what is readable.
    pub masked: Vec<PathBuf>,
    /// Loopback ports it may connect to; with `host_network`, anything.
    pub connect: Vec<u16>,
    pub host_network: bool,
}

/// A string literal of the profile language.
fn quoted(p: &Path) -> String {
    let mut s = String::from("\"");
    for c in p.to_string_lossy().chars() {
        match c {
            '"' | '\\' => {
                s.push('\\');
                s.push(c);
            }
            c if c.is_control() => {
                let _ = write!(s, "\\x{:02x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// The profile: deny by default, then what `reach` allows (later rules win).
pub fn profile(reach: &Reach) -> String {
    let mut p = String::from(
        "(version 1)\n(deny default)\n(allow process-exec process-fork)\n(allow signal (target same-sandbox))\n(allow sysctl-read)\n(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\") (global-name \"com.apple.trustd.agent\") (global-name \"com.apple.SecurityServer\"))\n(allow ipc-posix-shm-read-data ipc-posix-shm-write-data)\n(allow file-read-metadata)\n(allow file-read* (literal \"/\"))\n",
    );
    let list = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|d| format!(" (subpath {})", quoted(d)))
            .collect::<String>()
    };
    if !reach.read.is_empty() {
        let _ = writeln!(p, "(allow file-read*{})", list(&reach.read));
    }
    if !reach.write.is_empty() {
        let _ = writeln!(p, "(allow file-read* file-write*{})", list(&reach.write));
    }
    p.push_str("(allow file-write-data (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\"))\n");
    for m in &reach.masked {
        let _ = writeln!(p, "(deny file-read* (literal {}))", quoted(m));
    }
    if reach.host_network {
        p.push_str("(allow network*)\n");
    } else {
        for port in &reach.connect {
            let _ = writeln!(
                p,
                "(allow network-outbound (remote tcp \"localhost:{port}\"))"
            );
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach() -> Reach {
        Reach {
            read: vec!["/usr".into(), "/Users/ada/.nvm".into()],
            write: vec!["/private/tmp/ws/001/work".into()],
            masked: vec!["/Users/ada/.nvm/credentials".into()],
            connect: vec![40123],
            host_network: false,
        }
    }

    #[test]
    fn the_profile_denies_by_default_and_allows_only_what_it_lists() {
        let p = profile(&reach());
        assert!(p.starts_with("(version 1)\n(deny default)\n"), "{p}");
        assert!(
            p.contains("(allow file-read* file-write* (subpath \"/private/tmp/ws/001/work\"))"),
            "{p}"
        );
        assert!(
            p.contains("(allow file-read* (subpath \"/usr\") (subpath \"/Users/ada/.nvm\"))"),
            "{p}"
        );
        assert!(
            p.contains("(deny file-read* (literal \"/Users/ada/.nvm/credentials\"))"),
            "{p}"
        );
        assert!(
            p.contains("(allow network-outbound (remote tcp \"localhost:40123\"))"),
            "{p}"
        );
        assert!(!p.contains("(allow network*)"), "{p}");
        // Nothing else is written: the only file-write rules are the workspace's and devices'.
        assert_eq!(p.matches("file-write*").count(), 1, "{p}");
        let masked_after_allow =
            p.find("(deny file-read*").unwrap() > p.find("/Users/ada/.nvm\"))").unwrap();
        assert!(
            masked_after_allow,
            "a mask must come after the allow it narrows: {p}"
        );
    }

    #[test]
    fn a_path_cannot_break_out_of_its_string() {
        let p = profile(&Reach {
            write: vec![PathBuf::from("/tmp/x\") (allow default) (\"")],
            ..Reach::default()
        });
        assert!(!p.contains("\n(allow default)"), "{p}");
        assert!(p.contains("\"/tmp/x\\\") (allow default) (\\\"\""), "{p}");
    }

    #[test]
    fn host_network_allows_the_network_and_model_only_the_ports() {
        let p = profile(&Reach {
            host_network: true,
            ..reach()
        });
        assert!(p.contains("(allow network*)"), "{p}");
        let p = profile(&Reach {
            connect: Vec::new(),
            ..reach()
        });
        assert!(!p.contains("network"), "{p}");
    }
}
