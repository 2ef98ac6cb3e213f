//! Trusted native plugins: the same check types and formats over a small C ABI, loaded with
//! `libloading` only when the user opts in with `--allow-native` on the command line of that
//! invocation (`trusted = true` in `assay.toml` declares a native library; it is not consent,
//! since a pull request can carry it). `validate`, `list` and `plugin inspect` never load one.
//! They run unsandboxed, in assay's process, and are recorded as such.
//!
//! The ABI (version 1), all strings NUL-terminated UTF-8 JSON, each returned one freed with
//! `assay_plugin_free`:
//!
//! ```c
//! uint32_t assay_plugin_abi(void);                  // 1
//! char *assay_plugin_describe(void);                // {"check_types": [...], "formats": [...]}
//! char *assay_plugin_call(const char *request);     // {"ok": ...} or {"error": "..."}
//! void assay_plugin_free(char *);
//! ```
//!
//! Requests: `{"method": "validate", "check_type", "config"}` → `null`;
//! `{"method": "evaluate", "check_type", "config", "run": {...}}` → `{passed, message, evidence}`;
//! `{"method": "matches", "format", "value"}` → bool;
//! `{"method": "find_all", "format", "text"}` → `[[start, end], …]`.

use std::ffi::{CStr, CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::loaded::{CheckTypeInfo, FormatInfo, LoadedPlugin};
use crate::assert::builtin::Finding;
use crate::assert::view::CaseRunView;
use crate::harness::Event;

pub const ABI_VERSION: u32 = 1;

/// What kind of native library a file's first bytes say it is (ELF, Mach-O, PE), if any. Read
/// without loading it, so commands that never run native code can still tell one apart.
pub fn kind_of(head: &[u8]) -> Option<&'static str> {
    match head {
        [0x7f, b'E', b'L', b'F', ..] => Some("ELF"),
        [0xfe, 0xed, 0xfa, 0xce | 0xcf, ..]
        | [0xce | 0xcf, 0xfa, 0xed, 0xfe, ..]
        | [0xca, 0xfe, 0xba, 0xbe, ..] => Some("Mach-O"),
        [b'M', b'Z', ..] => Some("PE"),
        _ => None,
    }
}

/// The kind of native library at `path` (by its first bytes), if it is one.
pub fn kind_of_file(path: &Path) -> Option<&'static str> {
    use std::io::Read;
    let mut head = [0u8; 4];
    let mut f = std::fs::File::open(path).ok()?;
    f.read_exact(&mut head).ok()?;
    kind_of(&head)
}

type AbiFn = unsafe extern "C" fn() -> u32;
type DescribeFn = unsafe extern "C" fn() -> *mut c_char;
type CallFn = unsafe extern "C" fn(*const c_char) -> *mut c_char;
type FreeFn = unsafe extern "C" fn(*mut c_char);

pub struct NativePlugin {
    pub name: String,
    pub path: PathBuf,
    pub check_types: Vec<CheckTypeInfo>,
    pub formats: Vec<FormatInfo>,
    // Kept loaded for the process's life: the functions below point into it.
    _lib: libloading::Library,
    call: CallFn,
    free: FreeFn,
}

impl std::fmt::Debug for NativePlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativePlugin")
            .field("name", &self.name)
            .field("path", &self.path)
            .finish()
    }
}

impl NativePlugin {
    pub fn load(path: &Path) -> Result<Self, String> {
        let shown = path.display();
        // SAFETY: loading a native library runs its initialisers; the user opted in to
        // trusting this file with --allow-native on the command line (see `NativePolicy`).
        let lib = unsafe { libloading::Library::new(path) }
            .map_err(|e| format!("{shown}: cannot load the native plugin: {e}"))?;
        // SAFETY: the symbols are looked up with the ABI's signatures; a library exporting
        // them with other signatures breaks the ABI contract the user trusted.
        let (abi, describe, call, free) = unsafe {
            let sym = |name: &[u8]| {
                format!(
                    "{shown}: not an assay native plugin (no `{}`)",
                    String::from_utf8_lossy(&name[..name.len() - 1])
                )
            };
            (
                *lib.get::<AbiFn>(b"assay_plugin_abi\0")
                    .map_err(|_| sym(b"assay_plugin_abi\0"))?,
                *lib.get::<DescribeFn>(b"assay_plugin_describe\0")
                    .map_err(|_| sym(b"assay_plugin_describe\0"))?,
                *lib.get::<CallFn>(b"assay_plugin_call\0")
                    .map_err(|_| sym(b"assay_plugin_call\0"))?,
                *lib.get::<FreeFn>(b"assay_plugin_free\0")
                    .map_err(|_| sym(b"assay_plugin_free\0"))?,
            )
        };
        // SAFETY: as above.
        let version = unsafe { abi() };
        if version != ABI_VERSION {
            return Err(format!(
                "{shown}: speaks native ABI {version}; this assay speaks {ABI_VERSION}"
            ));
        }
        let mut plugin = NativePlugin {
            name: path
                .file_stem()
                .map(|s| s.to_string_lossy().trim_start_matches("lib").to_string())
                .unwrap_or_default(),
            path: path.to_path_buf(),
            check_types: Vec::new(),
            formats: Vec::new(),
            _lib: lib,
            call,
            free,
        };
        // SAFETY: as above; the returned string is freed by `take`.
        let raw = unsafe { describe() };
        let described: Value = serde_json::from_str(&plugin.take(raw)?)
            .map_err(|e| format!("{shown}: its description is not JSON: {e}"))?;
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        for t in described["check_types"].as_array().into_iter().flatten() {
            plugin.check_types.push(CheckTypeInfo {
                name: text(t, "name"),
                summary: text(t, "summary"),
                config_schema: t.get("config_schema").cloned().unwrap_or(Value::Null),
            });
        }
        for f in described["formats"].as_array().into_iter().flatten() {
            plugin.formats.push(FormatInfo {
                name: text(f, "name"),
                summary: text(f, "summary"),
                example: text(f, "example"),
            });
        }
        Ok(plugin)
    }

    /// Copies a string the library returned, then frees it with the library's own free.
    fn take(&self, raw: *mut c_char) -> Result<String, String> {
        if raw.is_null() {
            return Err(format!("{}: returned no answer", self.path.display()));
        }
        // SAFETY: the ABI promises a NUL-terminated string it allocated and we now own.
        let s = unsafe { CStr::from_ptr(raw) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: freed exactly once, by the allocator that made it.
        unsafe { (self.free)(raw) };
        Ok(LoadedPlugin::cut(s))
    }

    fn request(&self, req: Value) -> Result<Value, String> {
        let c = CString::new(req.to_string()).map_err(|e| e.to_string())?;
        // SAFETY: a valid C string in, an owned string (or null) out, per the ABI.
        let raw = unsafe { (self.call)(c.as_ptr()) };
        let answer: Value = serde_json::from_str(&self.take(raw)?)
            .map_err(|e| format!("the native plugin's answer is not JSON: {e}"))?;
        match (answer.get("ok"), answer.get("error")) {
            (_, Some(e)) => Err(e
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string())),
            (Some(ok), None) => Ok(ok.clone()),
            (None, None) => Err("the native plugin's answer has neither `ok` nor `error`".into()),
        }
    }

    pub fn validate(&self, kind: &str, config: &Value) -> Result<(), String> {
        self.request(json!({"method": "validate", "check_type": kind, "config": config}))
            .map(|_| ())
    }

    pub fn evaluate(
        &self,
        kind: &str,
        config: &Value,
        view: &Arc<CaseRunView>,
    ) -> Result<Finding, String> {
        let tool_calls: Vec<Value> = view
            .events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCall { name, input, .. } => Some(json!({"name": name, "input": input})),
                _ => None,
            })
            .collect();
        let run = json!({
            "output": view.output, "final_message": view.final_message, "stdout": view.stdout,
            "stderr": view.stderr, "exit_code": view.exit_code, "files": view.files,
            "file_root": view.file_root.as_ref().and_then(|t| t.folder()), "cwd": view.cwd, "events": view.events,
            "tool_calls": tool_calls, "skills_invoked": view.skills_invoked(),
            "usage": {"cost_usd": view.cost_usd, "turns": view.num_turns, "duration_ms": view.duration_ms},
        });
        let v = self.request(
            json!({"method": "evaluate", "check_type": kind, "config": config, "run": run}),
        )?;
        Ok(Finding {
            passed: v
                .get("passed")
                .and_then(Value::as_bool)
                .ok_or("the answer has no boolean `passed`")?,
            message: v
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            evidence: v
                .get("evidence")
                .and_then(Value::as_str)
                .map(str::to_string),
            log: None,
        })
    }

    pub fn format_matches(&self, name: &str, value: &str) -> Result<bool, String> {
        self.request(json!({"method": "matches", "format": name, "value": value}))?
            .as_bool()
            .ok_or_else(|| "`matches` answered something other than a boolean".to_string())
    }

    pub fn format_find_all(&self, name: &str, text: &str) -> Result<Vec<(u32, u32)>, String> {
        let v = self.request(json!({"method": "find_all", "format": name, "text": text}))?;
        serde_json::from_value(v).map_err(|e| format!("`find_all` answered badly: {e}"))
    }
}
