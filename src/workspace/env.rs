//! The agent's environment: an allow-list of the host's variables, the harnesses' logins, a
//! private HOME, and nothing else.

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

/// The harnesses' login and endpoint variables, passed when set.
pub use crate::host::AUTH;

/// CLI login files copied into the private HOME when the user has them, so subscription users
/// can run without an API key.
pub const CREDENTIAL_FILES: &[&str] = &[
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
];

/// Builds the environment: allowed and auth variables from `host`, the names in `pass`, then
/// `extra` (suite `env`), then HOME.
pub fn scrubbed(
    host: &[(String, String)],
    pass: &[String],
    extra: &[(String, String)],
    home: &Path,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = host
        .iter()
        .filter(|(k, _)| {
            ALLOWED.contains(&k.as_str())
                || AUTH.contains(&k.as_str())
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

/// Copies the user's CLI login files into the private HOME.
pub fn copy_credentials(real_home: Option<&Path>, home: &Path) -> std::io::Result<()> {
    let Some(real) = real_home else { return Ok(()) };
    for f in CREDENTIAL_FILES {
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
    fn only_allowed_auth_and_passed_variables_reach_the_agent() {
        let host: Vec<(String, String)> = [
            ("PATH", "/bin"),
            ("HOME", "/root"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("ANTHROPIC_API_KEY", "sk"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let env = scrubbed(
            &host,
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
    }
}
