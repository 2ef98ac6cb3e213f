//! Which judge grades a suite's judge items, and how it is reached: each rule a function.
//!
//! The judge: `--judge` > `ASSAY_JUDGE` > the format runner's variable (clauditor's
//! `CLAUDITOR_GRADING_PROVIDER`, clauditor suites only) > the spec (`grading_model` /
//! `grading_provider` / `transport`, UAAPS `judge`) > auto (an API key present, else a CLI on
//! PATH) ([`choice`], [`auto_provider`]). Model names map to providers as clauditor does:
//! `claude-*` → anthropic, `gpt-*` and `o<digit>*` → openai ([`provider_of_model`]). The
//! transport: `--transport` > `CLAUDITOR_TRANSPORT` > the spec ([`transport`], applied by
//! [`by_transport`]). Endpoints and keys: `ASSAY_JUDGE_BASE_URL` / `ASSAY_JUDGE_API_KEY` > the
//! vendor's variable > the vendor's default ([`provider_kind`]). The model: the one named >
//! the provider's default ([`default_model`]). Concurrency: `--judge-jobs` >
//! `ASSAY_JUDGE_CONCURRENCY` > 4 ([`judge_for`]).

use std::sync::Arc;

use crate::formats::clauditor::provider_for_model;
use crate::grade::JudgeSlot;
use crate::host::HostEnv;
use crate::judge::{
    CallLimits, DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL, Flags, Judge, JudgeInfo, PROVIDERS,
    ProviderKind, TRANSPORTS, resolve_model,
};
use crate::suite::{JudgeConfig, RunnerVars, Suite};

/// The judge for a suite's judge items, shared between suites that choose the same one (so its
/// concurrency limit holds across the run). Judge calls at once: `concurrency` (`--judge-jobs`)
/// over `ASSAY_JUDGE_CONCURRENCY` ([`CallLimits::from_env`]).
pub fn judge_for(
    judges: &mut Vec<(String, JudgeSlot)>,
    flags: Flags<'_>,
    suite: &Suite,
    host: &HostEnv,
    concurrency: Option<usize>,
) -> JudgeSlot {
    let mut limits = CallLimits::from_env(host);
    if let Some(c) = concurrency {
        limits.concurrency = c.max(1);
    }
    let slot = match select(
        flags,
        &suite.defaults.judge,
        host,
        limits,
        &suite.policies.vars,
    ) {
        Ok((judge, info)) => JudgeSlot::Ready(Arc::new(judge), info),
        Err(why) => JudgeSlot::Unavailable(why),
    };
    let key = match &slot {
        JudgeSlot::Ready(j, i) => format!("{}:{}:{:?}", i.provider, i.model, j.kind),
        JudgeSlot::Unavailable(why) => why.clone(),
    };
    if let Some((_, existing)) = judges.iter().find(|(k, _)| *k == key) {
        return existing.clone();
    }
    judges.push((key, slot.clone()));
    slot
}

/// Picks the judge for a suite, or says why there is none.
///
/// `vars` are the suite's format runner's own variables (clauditor's
/// `CLAUDITOR_GRADING_PROVIDER`, `CLAUDITOR_TRANSPORT`), read after `ASSAY_JUDGE`.
pub fn select(
    flags: Flags<'_>,
    spec: &JudgeConfig,
    host: &HostEnv,
    limits: CallLimits,
    vars: &RunnerVars,
) -> Result<(Judge, JudgeInfo), String> {
    let flag = flags.judge.map(str::trim).filter(|f| !f.is_empty());
    let env_choice = host.var("ASSAY_JUDGE");
    if matches!(flag.or(env_choice), Some("none" | "off")) {
        return Err("judging is turned off (--judge none)".into());
    }
    let format_provider = format_provider(host, vars)?;
    let transport = transport(flags, spec, host, vars)?;
    let chosen = choice(flag, env_choice, format_provider, spec);
    // `--judge` and `ASSAY_JUDGE` name the transport already (`anthropic` is the API,
    // `claude-cli` the CLI), so only `--transport` overrides them.
    let named = chosen.by == "flag" || (chosen.by == "env" && env_choice.is_some());
    let model = chosen.model.as_deref().map(resolve_model);
    let mut provider = provider_of_model(chosen.provider, model.as_deref(), chosen.by)?;
    if flags.transport.is_some() || !named {
        provider = by_transport(provider, transport, host);
    }
    let provider = match provider {
        Some(p) => p,
        None => auto_provider(spec, host)?.to_string(),
    };
    let kind = provider_kind(&provider, host)?;
    let model = model.unwrap_or_else(|| default_model(&provider).to_string());
    let info = JudgeInfo {
        provider,
        model: model.clone(),
        chosen_by: chosen.by.to_string(),
    };
    Ok((Judge::new(kind, model, limits), info))
}

/// The judge as named, and where the name came from (`flag`, `env`, `spec` or `auto`).
struct Choice {
    provider: Option<String>,
    model: Option<String>,
    by: &'static str,
}

/// Which judge is named: `--judge` > `ASSAY_JUDGE` > the format runner's provider variable
/// (with the spec's model) > the spec (a model, a provider, or a transport of `cli` or `api`)
/// > none (auto).
fn choice(
    flag: Option<&str>,
    env: Option<&str>,
    format_provider: Option<&str>,
    spec: &JudgeConfig,
) -> Choice {
    let named = |s: &str, by| {
        let (provider, model) = parse_choice(s);
        Choice {
            provider,
            model,
            by,
        }
    };
    if let Some(f) = flag {
        named(f, "flag")
    } else if let Some(e) = env {
        named(e, "env")
    } else if let Some(p) = format_provider {
        Choice {
            provider: (p != "auto").then(|| p.to_string()),
            model: spec.model.clone(),
            by: "env",
        }
    } else if spec.model.is_some()
        || spec.provider.is_some()
        || matches!(spec.transport.as_deref(), Some("cli" | "api"))
    {
        Choice {
            provider: spec.provider.clone(),
            model: spec.model.clone(),
            by: "spec",
        }
    } else {
        Choice {
            provider: None,
            model: None,
            by: "auto",
        }
    }
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
    // clauditor's `--grading-provider auto`: no provider named.
    if s == "auto" {
        return (None, None);
    }
    (None, Some(s.to_string()))
}

/// A non-empty variable of the host's environment, trimmed.
fn env_word<'a>(host: &'a HostEnv, key: &str) -> Option<&'a str> {
    host.var(key).map(str::trim).filter(|v| !v.is_empty())
}

/// The format runner's provider variable (clauditor's `CLAUDITOR_GRADING_PROVIDER`), checked.
fn format_provider<'a>(host: &'a HostEnv, vars: &RunnerVars) -> Result<Option<&'a str>, String> {
    let provider = vars.judge_provider.and_then(|v| env_word(host, v));
    if let (Some(p), Some(var)) = (provider, vars.judge_provider)
        && !crate::formats::clauditor::GRADING_PROVIDERS.contains(&p)
    {
        return Err(format!(
            "{var} must be one of anthropic, openai, auto, not `{p}`"
        ));
    }
    Ok(provider)
}

/// The transport to an Anthropic judge: `--transport` > the format runner's variable
/// (`CLAUDITOR_TRANSPORT`, clauditor suites) > the spec's `transport`; each checked.
fn transport<'a>(
    flags: Flags<'a>,
    spec: &'a JudgeConfig,
    host: &'a HostEnv,
    vars: &RunnerVars,
) -> Result<Option<&'a str>, String> {
    let env_transport = vars.judge_transport.and_then(|v| env_word(host, v));
    for (what, t) in [
        ("--transport", flags.transport),
        (vars.judge_transport.unwrap_or_default(), env_transport),
    ] {
        if let Some(t) = t
            && !TRANSPORTS.contains(&t)
        {
            return Err(format!("{what} must be one of api, cli, auto, not `{t}`"));
        }
    }
    Ok(flags
        .transport
        .or(env_transport)
        .or(spec.transport.as_deref()))
}

/// The provider named, else the one the model's name says (`claude-*` → anthropic, `gpt-*` and
/// `o<digit>*` → openai); a model no provider is known for is an error, unless the spec wrote
/// it (UAAPS's short names: the provider is then left to auto).
fn provider_of_model(
    provider: Option<String>,
    model: Option<&str>,
    by: &str,
) -> Result<Option<String>, String> {
    let (None, Some(m)) = (&provider, model) else {
        return Ok(provider);
    };
    match provider_for_model(m) {
        Some(p) => Ok(Some(p.to_string())),
        None if by == "spec" => Ok(None),
        None => Err(format!(
            "cannot tell the provider of judge model `{m}`: write provider:model, e.g. openai:{m}"
        )),
    }
}

/// The transport chooses between the Anthropic API and the `claude` CLI, for an Anthropic (or
/// not yet known) provider: `cli`, `api`, or clauditor's `auto` (the CLI when `claude` is on
/// PATH, subscription first, else the API). OpenAI's providers are left as they are.
fn by_transport(
    provider: Option<String>,
    transport: Option<&str>,
    host: &HostEnv,
) -> Option<String> {
    let anthropic_family = matches!(
        provider.as_deref(),
        None | Some("anthropic") | Some("claude-cli")
    );
    if !anthropic_family {
        return provider;
    }
    match transport {
        Some("cli") => Some("claude-cli".into()),
        Some("api") => Some("anthropic".into()),
        Some("auto") => {
            let claude = host.var("ASSAY_CLAUDE_BIN").unwrap_or("claude");
            if host.which(claude).is_some() {
                Some("claude-cli".into())
            } else if provider.is_some() {
                Some("anthropic".into())
            } else {
                provider
            }
        }
        _ => provider,
    }
}

/// No provider named: the first available, the suite's model family first (UAAPS: the
/// engine's), then the other; with no family, keys before CLIs (`ANTHROPIC_API_KEY`,
/// `OPENAI_API_KEY`, `claude`, `codex`).
fn auto_provider(spec: &JudgeConfig, host: &HostEnv) -> Result<&'static str, String> {
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
        vec![anthropic[0], openai[0], anthropic[1], openai[1]]
    };
    match order.into_iter().find(|(_, available)| *available) {
        Some((p, _)) => Ok(p),
        None => Err("no judge available: set ANTHROPIC_API_KEY or OPENAI_API_KEY, install `claude` or `codex`, or pass --judge".into()),
    }
}

/// How the provider is reached: the base URL (`ASSAY_JUDGE_BASE_URL` > the vendor's
/// `*_BASE_URL` > its public endpoint), the key (`ASSAY_JUDGE_API_KEY` > the vendor's
/// `*_API_KEY`), the CLI (`ASSAY_CLAUDE_BIN`, `ASSAY_CODEX_BIN` > `claude`, `codex`).
fn provider_kind(provider: &str, host: &HostEnv) -> Result<ProviderKind, String> {
    let base = |var: &str, default: &str| {
        host.var("ASSAY_JUDGE_BASE_URL")
            .or_else(|| host.var(var))
            .unwrap_or(default)
            .to_string()
    };
    let key = |var: &str| host.var("ASSAY_JUDGE_API_KEY").or_else(|| host.var(var));
    Ok(match provider {
        "anthropic" => ProviderKind::Anthropic {
            base_url: base("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
            api_key: key("ANTHROPIC_API_KEY")
                .ok_or("the anthropic judge needs ANTHROPIC_API_KEY")?
                .to_string(),
        },
        "openai" => ProviderKind::Openai {
            base_url: base("OPENAI_BASE_URL", "https://api.openai.com/v1"),
            api_key: key("OPENAI_API_KEY").unwrap_or("").to_string(),
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
    })
}

/// The model when none is named: the provider's default.
fn default_model(provider: &str) -> &'static str {
    match provider {
        "openai" | "codex-cli" => DEFAULT_OPENAI_MODEL,
        _ => DEFAULT_ANTHROPIC_MODEL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(judge: &str) -> Flags<'_> {
        Flags {
            judge: Some(judge),
            transport: None,
        }
    }

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
        let (_, i) = select(
            flag("claude-haiku-4-5"),
            &spec,
            &h,
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str(), i.chosen_by.as_str()),
            ("anthropic", "claude-haiku-4-5", "flag")
        );
        let (_, i) = select(
            Flags::default(),
            &spec,
            &h,
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str(), i.chosen_by.as_str()),
            ("openai", "gpt-5.4-mini", "env")
        );
        let h = host(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")]);
        let (_, i) = select(
            Flags::default(),
            &spec,
            &h,
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str()),
            ("anthropic", "claude-opus-4-1")
        );
        let (_, i) = select(
            Flags::default(),
            &JudgeConfig::default(),
            &h,
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str(), i.chosen_by.as_str()),
            ("anthropic", DEFAULT_ANTHROPIC_MODEL, "auto")
        );
        let (_, i) = select(
            Flags::default(),
            &JudgeConfig::default(),
            &host(&[("OPENAI_API_KEY", "o")]),
            CallLimits::default(),
            &RunnerVars::default(),
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
            Flags::default(),
            &uaaps(Some("claude-sonnet"), None),
            &h,
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str()),
            ("anthropic", DEFAULT_ANTHROPIC_MODEL)
        );
        let (_, i) = select(
            Flags {
                judge: Some("claude-opus"),
                ..Flags::default()
            },
            &JudgeConfig::default(),
            &h,
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap();
        assert_eq!(i.model, "claude-opus-4-1");
        // UAAPS engine codex, no judge: OpenAI's family, though an Anthropic key is there.
        let (_, i) = select(
            Flags::default(),
            &uaaps(None, Some("openai")),
            &h,
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap();
        assert_eq!(
            (i.provider.as_str(), i.model.as_str()),
            ("openai", DEFAULT_OPENAI_MODEL)
        );
        let (_, i) = select(
            Flags::default(),
            &uaaps(None, Some("anthropic")),
            &h,
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap();
        assert_eq!(i.provider, "anthropic");
        // The family is a preference: the other one when it is all there is.
        let (_, i) = select(
            Flags::default(),
            &uaaps(None, Some("openai")),
            &host(&[("ANTHROPIC_API_KEY", "a")]),
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap();
        assert_eq!(i.provider, "anthropic");
    }

    #[test]
    fn models_map_to_providers_and_unknown_ones_are_explained() {
        let h = host(&[("OPENAI_API_KEY", "o"), ("ANTHROPIC_API_KEY", "a")]);
        assert_eq!(
            select(
                flag("o3-pro"),
                &JudgeConfig::default(),
                &h,
                CallLimits::default(),
                &RunnerVars::default()
            )
            .unwrap()
            .1
            .provider,
            "openai"
        );
        let err = select(
            flag("gtp-5"),
            &JudgeConfig::default(),
            &h,
            CallLimits::default(),
            &RunnerVars::default(),
        )
        .unwrap_err();
        assert!(err.contains("openai:gtp-5"), "{err}");
        let spec = JudgeConfig {
            transport: Some("cli".into()),
            ..JudgeConfig::default()
        };
        assert_eq!(
            select(
                Flags::default(),
                &spec,
                &h,
                CallLimits::default(),
                &RunnerVars::default()
            )
            .unwrap()
            .1
            .provider,
            "claude-cli"
        );
        assert!(
            select(
                Flags::default(),
                &JudgeConfig::default(),
                &host(&[]),
                CallLimits::default(),
                &RunnerVars::default()
            )
            .unwrap_err()
            .contains("no judge available")
        );
    }

    /// A PATH holding an executable `claude`.
    fn with_claude(vars: &[(&str, &str)]) -> (tempfile::TempDir, HostEnv) {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("claude");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut h = host(vars);
        h.path = d.path().display().to_string();
        (d, h)
    }

    fn pick(flags: Flags<'_>, spec: &JudgeConfig, h: &HostEnv, clauditor: bool) -> String {
        let vars = if clauditor {
            crate::formats::clauditor::POLICIES.vars
        } else {
            RunnerVars::default()
        };
        match select(flags, spec, h, CallLimits::default(), &vars) {
            Ok((_, i)) => format!("{} {}", i.provider, i.chosen_by),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn clauditors_auto_transport_prefers_the_cli_then_the_api() {
        let auto = JudgeConfig {
            transport: Some("auto".into()),
            ..JudgeConfig::default()
        };
        let keys = [("ANTHROPIC_API_KEY", "a")];
        // `claude` on PATH: the CLI, even with an API key (clauditor's "subscription first").
        let (_d, h) = with_claude(&keys);
        assert_eq!(pick(Flags::default(), &auto, &h, true), "claude-cli auto");
        // A provider the spec names still goes through the CLI when it is Anthropic's.
        let anthropic = JudgeConfig {
            provider: Some("anthropic".into()),
            ..auto.clone()
        };
        assert_eq!(
            pick(Flags::default(), &anthropic, &h, true),
            "claude-cli spec"
        );
        // No `claude`: the API.
        assert_eq!(
            pick(Flags::default(), &auto, &host(&keys), true),
            "anthropic auto"
        );
        // `--judge anthropic` names the API; only --transport overrides a named judge.
        let named = flag("anthropic");
        assert_eq!(pick(named, &auto, &h, true), "anthropic flag");
        let cli = Flags {
            judge: Some("anthropic"),
            transport: Some("cli"),
        };
        assert_eq!(pick(cli, &auto, &host(&keys), true), "claude-cli flag");
        // --transport api over the spec's cli.
        let spec_cli = JudgeConfig {
            transport: Some("cli".into()),
            ..JudgeConfig::default()
        };
        let api = Flags {
            judge: None,
            transport: Some("api"),
        };
        assert_eq!(pick(api, &spec_cli, &h, true), "anthropic spec");
        // OpenAI is not affected by the transport.
        let openai = JudgeConfig {
            model: Some("gpt-5.4".into()),
            ..auto.clone()
        };
        assert_eq!(
            pick(
                Flags::default(),
                &openai,
                &with_claude(&[("OPENAI_API_KEY", "o")]).1,
                true
            ),
            "openai spec"
        );
        // Suites of other formats keep assay's auto (an API key first).
        assert_eq!(
            pick(Flags::default(), &JudgeConfig::default(), &h, false),
            "anthropic auto"
        );
    }

    #[test]
    fn clauditors_variables_apply_to_clauditor_suites_after_assays() {
        let auto = JudgeConfig {
            transport: Some("auto".into()),
            ..JudgeConfig::default()
        };
        let (_d, h) = with_claude(&[
            ("ANTHROPIC_API_KEY", "a"),
            ("OPENAI_API_KEY", "o"),
            ("CLAUDITOR_TRANSPORT", "api"),
        ]);
        assert_eq!(pick(Flags::default(), &auto, &h, true), "anthropic auto");
        let (_d, h) = with_claude(&[
            ("OPENAI_API_KEY", "o"),
            ("CLAUDITOR_GRADING_PROVIDER", "openai"),
        ]);
        assert_eq!(pick(Flags::default(), &auto, &h, true), "openai env");
        // Not for other formats' suites.
        assert_eq!(
            pick(Flags::default(), &JudgeConfig::default(), &h, false),
            "openai auto"
        );
        // ASSAY_JUDGE first.
        let (_d, h) = with_claude(&[
            ("ANTHROPIC_API_KEY", "a"),
            ("OPENAI_API_KEY", "o"),
            ("ASSAY_JUDGE", "anthropic"),
            ("CLAUDITOR_GRADING_PROVIDER", "openai"),
        ]);
        assert_eq!(pick(Flags::default(), &auto, &h, true), "anthropic env");
        // A bad value is an error naming the variable.
        let h = host(&[("CLAUDITOR_TRANSPORT", "http")]);
        assert!(pick(Flags::default(), &auto, &h, true).contains("CLAUDITOR_TRANSPORT"));
        // `--grading-provider auto` names no provider.
        let h = host(&[("OPENAI_API_KEY", "o")]);
        assert_eq!(
            pick(flag("auto"), &JudgeConfig::default(), &h, false),
            "openai flag"
        );
    }
}
