//! The page's Content-Security-Policy: nothing may be fetched, and the one inline script runs
//! only because its SHA-256 is named (so injected markup, should any ever get through, cannot
//! run a script or load anything).

use base64::Engine;
use sha2::Digest;

/// The policy for a page whose one script is `script`.
pub fn policy(script: &str) -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{}'; base-uri 'none'; form-action 'none'",
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(script.as_bytes()))
    )
}

/// The policy for a page with no script at all (the optimisation's page): nothing may be
/// fetched and nothing may run.
pub fn no_script() -> String {
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'; base-uri 'none'; form-action 'none'".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_names_the_scripts_hash() {
        // echo -n "alert(1)" | openssl dgst -sha256 -binary | base64
        assert!(
            policy("alert(1)")
                .contains("script-src 'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"),
            "{}",
            policy("alert(1)")
        );
        assert!(policy("x").starts_with("default-src 'none';"));
    }
}
