//! Check types and formats beyond the built-in ones (from plugins), as loaders see them:
//! names to accept, and a validation call for a check's configuration at load time.

use serde_json::Value;

pub trait ExtraTypes: Send + Sync + std::fmt::Debug {
    /// Whether a check type of this name is provided.
    fn has_check_type(&self, name: &str) -> bool;
    /// Validates a check's configuration (the keys beside `type`, `id`, `negate`, `weight`).
    fn validate_check(&self, name: &str, config: &Value) -> Result<(), String>;
    fn has_format(&self, name: &str) -> bool;
    fn check_type_names(&self) -> Vec<String>;
    fn format_names(&self) -> Vec<String>;
}
