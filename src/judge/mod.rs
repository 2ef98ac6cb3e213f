//! The LLM judge: which model grades, and how its verdicts are asked for and checked.
//!
//! Selection precedence: `--judge` > `ASSAY_JUDGE` > the spec (`grading_model` /
//! `grading_provider` / `transport`, UAAPS `judge`) > auto (an API key present, else a CLI on
//! PATH). Model names map to providers as clauditor does: `claude-*` → anthropic, `gpt-*` and
//! `o<digit>*` → openai.

pub mod compare;
pub mod extract;
pub mod fence;
pub mod matching;
pub mod modes;
pub mod provider;
pub mod trigger;

use serde::Serialize;

pub use provider::{Judge, JudgeError, Limits, ProviderKind};

use crate::harness::HostEnv;
use crate::spec::JudgeConfig;
use crate::spec::formats::clauditor::provider_for_model;

pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-6";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-5.4";
pub const PROVIDERS: &[&str] = &["anthropic", "openai", "claude-cli", "codex-cli"];

/// Short model names (UAAPS writes `judge: claude-sonnet`) and the model id each means now.
pub const ALIASES: &[(&str, &str)] = &[
    ("claude-sonnet", DEFAULT_ANTHROPIC_MODEL),
    ("sonnet", DEFAULT_ANTHROPIC_MODEL),
    ("claude-opus", "claude-opus-4-1"),
    ("opus", "claude-opus-4-1"),
    ("claude-haiku", "claude-haiku-4-5"),
    ("haiku", "claude-haiku-4-5"),
    ("gpt", DEFAULT_OPENAI_MODEL),
];

/// The model id a name means: a short name's current id, else the name as written.
pub fn resolve_model(name: &str) -> String {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or_else(|| name.to_string(), |(_, id)| id.to_string())
}

/// How the judge was chosen, for the record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeInfo {
    pub provider: String,
    pub model: String,
    /// Where the choice came from: flag, env, spec or auto.
    pub chosen_by: String,
}

/// `provider`, `provider:model` or a bare model name (provider inferred).
fn parse_choice(s: &str) -> (Option<String>, Option<String>) {
    let s = s.trim();
    if let Some((p, m)) = s.split_once(':')
        && PROVIDERS.contains(&p)
    {
        return (Some(p.to_string()), (!m.is_empty()).then(|| m.to_string()));
    }
    if PROVIDERS.contains(&s) {
        return (Some(s.to_string()), None);
    }
    (None, Some(s.to_string()))
}

/// Picks the judge for a suite, or says why there is none.
pub fn select(
    flag: Option<&str>,
    spec: &JudgeConfig,
    host: &HostEnv,
    limits: Limits,
) -> Result<(Judge, JudgeInfo), String> {
    let env_choice = host.var("ASSAY_JUDGE").map(str::to_string);
    if matches!(flag.or(env_choice.as_deref()), Some("none" | "off")) {
        return Err("judging is turned off (--judge none)".into());
    }
    let (mut provider, model, chosen_by) = if let Some(f) = flag {
        let (p, m) = parse_choice(f);
        (p, m, "flag")
    } else if let Some(e) = env_choice.as_deref() {
        let (p, m) = parse_choice(e);
        (p, m, "env")
    } else if spec.model.is_some() || spec.provider.is_some() || spec.transport.is_some() {
        let provider = match (spec.provider.as_deref(), spec.transport.as_deref()) {
            // clauditor's `transport: cli` means the local claude binary.
            (_, Some("cli")) => Some("claude-cli".to_string()),
            (Some(p), _) => Some(p.to_string()),
            _ => None,
        };
        (provider, spec.model.clone(), "spec")
    } else {
        (None, None, "auto")
    };
    let mut model = model.map(|m| resolve_model(&m));
    if provider.is_none()
        && let Some(m) = &model
    {
        match provider_for_model(m) {
            Some(p) => provider = Some(p.to_string()),
            // UAAPS writes short names like `claude-sonnet`; anything else is unknown.
            None if chosen_by == "spec" => provider = None,
            None => {
                return Err(format!(
                    "cannot tell the provider of judge model `{m}`: write provider:model, e.g. openai:{m}"
                ));
            }
        }
    }
    let provider = match provider {
        Some(p) => p,
        None => {
            // The suite's model family first (UAAPS: the engine's), then the other.
            let anthropic = [
                ("anthropic", host.var("ANTHROPIC_API_KEY").is_some()),
                ("claude-cli", host.which("claude").is_some()),
            ];
            let openai = [
                ("openai", host.var("OPENAI_API_KEY").is_some()),
                ("codex-cli", host.which("codex").is_some()),
            ];
            let order: Vec<(&str, bool)> = if spec.family.as_deref() == Some("openai") {
                openai.into_iter().chain(anthropic).collect()
            } else if spec.family.is_some() {
                anthropic.into_iter().chain(openai).collect()
            } else {
                // Keys before CLIs.
                vec![anthropic[0], openai[0], anthropic[1], openai[1]]
            };
            match order.into_iter().find(|(_, available)| *available) {
                Some((p, _)) => p.to_string(),
                None => return Err("no judge available: set ANTHROPIC_API_KEY or OPENAI_API_KEY, install `claude` or `codex`, or pass --judge".into()),
            }
        }
    };
    // A model written for another provider (UAAPS `judge: claude-sonnet`) is still its model.
    let base = |var: &str, default: &str| {
        host.var("ASSAY_JUDGE_BASE_URL")
            .or_else(|| host.var(var))
            .unwrap_or(default)
            .to_string()
    };
    let kind = match provider.as_str() {
        "anthropic" => ProviderKind::Anthropic {
            base_url: base("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
            api_key: host
                .var("ASSAY_JUDGE_API_KEY")
                .or_else(|| host.var("ANTHROPIC_API_KEY"))
                .ok_or("the anthropic judge needs ANTHROPIC_API_KEY")?
                .to_string(),
        },
        "openai" => ProviderKind::Openai {
            base_url: base("OPENAI_BASE_URL", "https://api.openai.com/v1"),
            api_key: host
                .var("ASSAY_JUDGE_API_KEY")
                .or_else(|| host.var("OPENAI_API_KEY"))
                .unwrap_or("")
                .to_string(),
        },
        "claude-cli" => ProviderKind::ClaudeCli {
            program: host.var("ASSAY_CLAUDE_BIN").unwrap_or("claude").to_string(),
        },
        "codex-cli" => ProviderKind::CodexCli {
            program: host.var("ASSAY_CODEX_BIN").unwrap_or("codex").to_string(),
        },
        other => {
            return Err(format!(
                "unknown judge provider `{other}`: use one of {}",
                PROVIDERS.join(", ")
            ));
        }
    };
    let default_model = match provider.as_str() {
        "openai" | "codex-cli" => DEFAULT_OPENAI_MODEL,
        _ => DEFAULT_ANTHROPIC_MODEL,
    };
    let model = model.take().unwrap_or_else(|| default_model.to_string());
    let info = JudgeInfo {
        provider: provider.clone(),
        model: model.clone(),
        chosen_by: chosen_by.to_string(),
    };
    Ok((Judge::new(kind, model, limits), info))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(vars: &[(&str, &str)]) -> HostEnv {
        HostEnv {
            path: String::new(),
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn precedence_is_flag_env_spec_auto() {
        let h = host(&[
            ("ANTHROPIC_API_KEY", "a"),
            ("OPENAI_API_KEY", "o"),
            ("ASSAY_JUDGE", "openai:gpt-5.4-mini"),
        ]);
        let spec = JudgeConfig {
            model: Some("claude-opus-4-1".into()),
            ..JudgeConfig::default()
        };
        let (_, i) = select(Some("claude-haiku-4-5"), &spec, &h, Limits::default()).unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str(), i.chosen_by.as_str()),
            ("anthropic", "claude-haiku-4-5", "flag")
        );
        let (_, i) = select(None, &spec, &h, Limits::default()).unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str(), i.chosen_by.as_str()),
            ("openai", "gpt-5.4-mini", "env")
        );
        let h = host(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")]);
        let (_, i) = select(None, &spec, &h, Limits::default()).unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str()),
            ("anthropic", "claude-opus-4-1")
        );
        let (_, i) = select(None, &JudgeConfig::default(), &h, Limits::default()).unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str(), i.chosen_by.as_str()),
            ("anthropic", DEFAULT_ANTHROPIC_MODEL, "auto")
        );
        let (_, i) = select(
            None,
            &JudgeConfig::default(),
            &host(&[("OPENAI_API_KEY", "o")]),
            Limits::default(),
        )
        .unwrap();
        assert_eq!(i.provider, "openai");
    }

    #[test]
    fn short_names_resolve_and_an_absent_judge_follows_the_engine() {
        let h = host(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")]);
        let uaaps = |model: Option<&str>, family: Option<&str>| JudgeConfig {
            model: model.map(str::to_string),
            family: family.map(str::to_string),
            ..JudgeConfig::default()
        };
        let (_, i) = select(
            None,
            &uaaps(Some("claude-sonnet"), None),
            &h,
            Limits::default(),
        )
        .unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str()),
            ("anthropic", DEFAULT_ANTHROPIC_MODEL)
        );
        let (_, i) = select(
            Some("claude-opus"),
            &JudgeConfig::default(),
            &h,
            Limits::default(),
        )
        .unwrap();
        assert_eq!(i.model, "claude-opus-4-1");
        // UAAPS engine codex, no judge: OpenAI's family, though an Anthropic key is there.
        let (_, i) = select(None, &uaaps(None, Some("openai")), &h, Limits::default()).unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str()),
            ("openai", DEFAULT_OPENAI_MODEL)
        );
        let (_, i) = select(None, &uaaps(None, Some("anthropic")), &h, Limits::default()).unwrap();
        assert_eq!(i.provider, "anthropic");
        // The family is a preference: the other one when it is all there is.
        let (_, i) = select(
            None,
            &uaaps(None, Some("openai")),
            &host(&[("ANTHROPIC_API_KEY", "a")]),
            Limits::default(),
        )
        .unwrap();
        assert_eq!(i.provider, "anthropic");
    }

    #[test]
    fn models_map_to_providers_and_unknown_ones_are_explained() {
        let h = host(&[("OPENAI_API_KEY", "o"), ("ANTHROPIC_API_KEY", "a")]);
        assert_eq!(
            select(
                Some("o3-pro"),
                &JudgeConfig::default(),
                &h,
                Limits::default()
            )
            .unwrap()
            .1
            .provider,
            "openai"
        );
        let err = select(
            Some("gtp-5"),
            &JudgeConfig::default(),
            &h,
            Limits::default(),
        )
        .unwrap_err();
        assert!(err.contains("openai:gtp-5"), "{err}");
        let spec = JudgeConfig {
            transport: Some("cli".into()),
            ..JudgeConfig::default()
        };
        assert_eq!(
            select(None, &spec, &h, Limits::default())
                .unwrap()
                .1
                .provider,
            "claude-cli"
        );
        assert!(
            select(None, &JudgeConfig::default(), &host(&[]), Limits::default())
                .unwrap_err()
                .contains("no judge available")
        );
    }
}
