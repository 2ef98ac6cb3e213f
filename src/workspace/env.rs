//! The agent's environment: an allow-list of the host's variables, its own harness's login
//! (no other vendor's), a private HOME, and nothing else.

use std::path::Path;

/// Host variables every agent may see.
pub const ALLOWED: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TERM",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
];

/// Every vendor's login and endpoint variables (each harness is given its own only).
use crate::host::{AUTH, LOGIN_FILES, Login};

/// Whether `name` is a vendor's endpoint variable (`ANTHROPIC_BASE_URL`, …): no secret, and
/// passed to every agent, so a program the `command` harness runs finds its model (and
/// `--network model` opens the sandbox to it) as before.
pub fn is_endpoint(name: &str) -> bool {
    AUTH.contains(&name) && name.ends_with("_BASE_URL")
}

/// Builds the environment: allowed variables, endpoint variables and the harness's `login`
/// from `host`, the names in `pass`, then `extra` (suite `env`), then HOME.
pub fn scrubbed(
    host: &[(String, String)],
    login: &Login,
    pass: &[String],
    extra: &[(String, String)],
    home: &Path,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = host
        .iter()
        .filter(|(k, _)| {
            ALLOWED.contains(&k.as_str())
                || is_endpoint(k)
                || login.passes(k)
                || crate::host::SETTINGS.contains(&k.as_str())
                || pass.contains(k)
        })
        .cloned()
        .collect();
    for (k, v) in extra {
        env.retain(|(e, _)| e != k);
        env.push((k.clone(), v.clone()));
    }
    env.retain(|(k, _)| k != "HOME");
    env.push(("HOME".into(), home.display().to_string()));
    env
}

/// Copies the harness's login files into the private HOME, when the user has them (so
/// subscription users can run without an API key): only files of [`LOGIN_FILES`].
pub fn copy_credentials(
    real_home: Option<&Path>,
    login: &Login,
    home: &Path,
) -> std::io::Result<()> {
    let Some(real) = real_home else { return Ok(()) };
    let own = LOGIN_FILES
        .iter()
        .filter(|f| login.files.iter().any(|l| l == *f));
    for f in own {
        let src = real.join(f);
        if src.is_file() {
            super::copy::copy_file(&src, &home.join(f))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_its_own_login_and_passed_variables_reach_the_agent() {
        let host: Vec<(String, String)> = [
            ("PATH", "/bin"),
            ("HOME", "/root"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("ANTHROPIC_API_KEY", "sk"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("OPENAI_BASE_URL", "http://openai"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let claude = Login::of(&["ANTHROPIC_API_KEY"], &["ANTHROPIC_BASE_URL"], &[]);
        let env = scrubbed(
            &host,
            &claude,
            &["CLAUDE_CODE_MAX_RETRIES".into()],
            &[("EVAL_MODE".into(), "true".into())],
            Path::new("/ws/home"),
        );
        let get = |k: &str| env.iter().find(|(e, _)| e == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PATH"), Some("/bin"));
        assert_eq!(get("HOME"), Some("/ws/home"));
        assert_eq!(get("ANTHROPIC_API_KEY"), Some("sk"));
        assert_eq!(get("CLAUDE_CODE_MAX_RETRIES"), Some("0"));
        assert_eq!(get("EVAL_MODE"), Some("true"));
        assert_eq!(get("AWS_SECRET_ACCESS_KEY"), None);
        assert_eq!(get("OPENAI_API_KEY"), None, "another vendor's key");
        assert_eq!(get("OPENAI_BASE_URL"), Some("http://openai"), "no secret");
        let none = scrubbed(&host, &Login::default(), &[], &[], Path::new("/h"));
        assert!(
            none.iter()
                .all(|(k, _)| !AUTH.contains(&k.as_str()) || is_endpoint(k))
        );
    }

    #[test]
    fn only_the_harness_s_known_login_files_are_copied() {
        let real = tempfile::tempdir().unwrap();
        for f in LOGIN_FILES.iter().chain(&[".ssh/id_rsa"]) {
            let p = real.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let home = tempfile::tempdir().unwrap();
        let login = Login::of(&[], &[], &[".codex/auth.json", ".ssh/id_rsa"]);
        copy_credentials(Some(real.path()), &login, home.path()).unwrap();
        assert!(home.path().join(".codex/auth.json").is_file());
        assert!(!home.path().join(".claude/.credentials.json").exists());
        assert!(
            !home.path().join(".ssh/id_rsa").exists(),
            "not a login file assay knows"
        );
    }
}
