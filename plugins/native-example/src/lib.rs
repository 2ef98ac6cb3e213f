//! An example trusted native plugin: assay's plugin interface over its C ABI (version 1).
//! It runs unsandboxed in assay's process, so assay loads it only with `trusted = true` in
//! `assay.toml` or `--allow-native`.
//!
//! Check type `line-count`: the output has `min`..=`max` lines.
//! Build with `cargo build --release -p native-example` (for the host, not wasm).

use std::ffi::{CStr, CString, c_char};

use serde_json::{Value, json};

fn answer(v: Value) -> *mut c_char {
    CString::new(v.to_string()).map_or(std::ptr::null_mut(), CString::into_raw)
}

#[unsafe(no_mangle)]
pub extern "C" fn assay_plugin_abi() -> u32 {
    1
}

#[unsafe(no_mangle)]
pub extern "C" fn assay_plugin_describe() -> *mut c_char {
    answer(json!({
        "check_types": [{
            "name": "line-count",
            "summary": "the output has between `min` and `max` lines",
            "config_schema": {"type": "object", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}}}
        }],
        "formats": []
    }))
}

fn bound(config: &Value, key: &str) -> Result<Option<u64>, String> {
    match config.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or(format!("`{key}` must be a whole number")),
    }
}

fn call(req: &Value) -> Result<Value, String> {
    let config = &req["config"];
    match req["method"].as_str() {
        Some("validate") => {
            let (min, max) = (bound(config, "min")?, bound(config, "max")?);
            if min.is_none() && max.is_none() {
                return Err("give `min`, `max` or both".into());
            }
            Ok(Value::Null)
        }
        Some("evaluate") => {
            let out = req["run"]["output"].as_str().unwrap_or("");
            let n = out.lines().count() as u64;
            let (min, max) = (
                bound(config, "min")?.unwrap_or(0),
                bound(config, "max")?.unwrap_or(u64::MAX),
            );
            Ok(
                json!({"passed": n >= min && n <= max, "message": format!("the output has {n} lines")}),
            )
        }
        other => Err(format!("unsupported method {other:?}")),
    }
}

/// # Safety
/// `request` is a NUL-terminated string from assay.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn assay_plugin_call(request: *const c_char) -> *mut c_char {
    if request.is_null() {
        return answer(json!({"error": "no request"}));
    }
    // SAFETY: assay passes a valid NUL-terminated string that outlives this call.
    let text = unsafe { CStr::from_ptr(request) }.to_string_lossy();
    let reply = match serde_json::from_str::<Value>(&text)
        .map_err(|e| e.to_string())
        .and_then(|r| call(&r))
    {
        Ok(v) => json!({"ok": v}),
        Err(e) => json!({"error": e}),
    };
    answer(reply)
}

/// # Safety
/// `s` came from this library and is freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn assay_plugin_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: made by CString::into_raw above.
        drop(unsafe { CString::from_raw(s) });
    }
}
