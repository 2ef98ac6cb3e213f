//! `--shard auto`: the slice an orchestrator gave this machine, read from its environment.
//!
//! - Kubernetes Indexed Job: `JOB_COMPLETION_INDEX` (from 0); the Job's completion count is
//!   not in a pod's environment, so it comes from `--shards N` (or `ASSAY_SHARDS`).
//! - GitLab CI `parallel:` sets `CI_NODE_INDEX` (from 1) and `CI_NODE_TOTAL`; a GitHub Actions
//!   matrix sets them in the job's `env:` from `matrix` and `strategy.job-total`.
//! - CircleCI (`CIRCLE_NODE_INDEX`, `CIRCLE_NODE_TOTAL`, from 0) and Buildkite
//!   (`BUILDKITE_PARALLEL_JOB`, `BUILDKITE_PARALLEL_JOB_COUNT`, from 0).

use super::Shard;

/// One engine's variables: the index, whether it counts from 0, and the total (if it has one).
struct Engine {
    name: &'static str,
    index: &'static str,
    from_zero: bool,
    total: Option<&'static str>,
}

const ENGINES: &[Engine] = &[
    Engine {
        name: "Kubernetes Indexed Job",
        index: "JOB_COMPLETION_INDEX",
        from_zero: true,
        total: None,
    },
    Engine {
        name: "CI parallel matrix",
        index: "CI_NODE_INDEX",
        from_zero: false,
        total: Some("CI_NODE_TOTAL"),
    },
    Engine {
        name: "CircleCI parallelism",
        index: "CIRCLE_NODE_INDEX",
        from_zero: true,
        total: Some("CIRCLE_NODE_TOTAL"),
    },
    Engine {
        name: "Buildkite parallelism",
        index: "BUILDKITE_PARALLEL_JOB",
        from_zero: true,
        total: Some("BUILDKITE_PARALLEL_JOB_COUNT"),
    },
];

/// The slice the environment gives, and a sentence saying what was read; `shards` is
/// `--shards N`. The first engine whose index variable is set decides.
pub fn detect(
    shards: Option<u32>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(Shard, String), String> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let Some((engine, raw)) = ENGINES.iter().find_map(|e| set(e.index).map(|v| (e, v))) else {
        let looked: Vec<String> = ENGINES
            .iter()
            .map(|e| match e.total {
                Some(t) => format!("{}/{t}", e.index),
                None => e.index.to_string(),
            })
            .collect();
        return Err(format!(
            "no shard in the environment (looked for {}); pass --shard K/N",
            looked.join(", ")
        ));
    };
    let number = |name: &str, text: &str| {
        text.trim()
            .parse::<u32>()
            .map_err(|_| format!("{name}=`{text}` is not a number"))
    };
    let index = number(engine.index, &raw)?;
    let (count, count_from) = match (engine.total, shards) {
        (_, Some(n)) => (n, "--shards (or ASSAY_SHARDS)".to_string()),
        (Some(t), None) => match set(t) {
            Some(v) => (number(t, &v)?, t.to_string()),
            None => return Err(format!("{} is set and {t} is not", engine.index)),
        },
        (None, None) => {
            return Err(format!(
                "{} is set ({}), but not how many shards there are: pass --shards N (the Job's completions), or set ASSAY_SHARDS",
                engine.index, engine.name
            ));
        }
    };
    if let (Some(t), Some(n)) = (engine.total.and_then(set), shards)
        && t.trim() != n.to_string()
    {
        return Err(format!(
            "--shards {n} and {}={} disagree",
            engine.total.unwrap_or_default(),
            t.trim()
        ));
    }
    let k = if engine.from_zero {
        index.checked_add(1)
    } else {
        Some(index)
    };
    let shard = k.and_then(|k| Shard::new(k, count)).ok_or_else(|| {
        let first = if engine.from_zero { 0 } else { 1 };
        format!(
            "{}={} is not a shard of {count} (it counts from {first})",
            engine.index,
            raw.trim()
        )
    })?;
    // CI_NODE_* is GitLab's; a GitHub Actions matrix sets it in the job's `env:`.
    let name = match engine.index {
        "CI_NODE_INDEX" if set("GITLAB_CI").is_some() => "GitLab CI parallel",
        "CI_NODE_INDEX" if set("GITHUB_ACTIONS").is_some() => "GitHub Actions matrix",
        _ => engine.name,
    };
    let said = format!(
        "{name}: {}={}, {count} shards from {count_from}",
        engine.index,
        raw.trim()
    );
    Ok((shard, said))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_kubernetes_index_counts_from_zero_and_takes_the_count_from_shards() {
        let e = env(&[("JOB_COMPLETION_INDEX", "2")]);
        let (s, said) = detect(Some(4), &e).unwrap();
        assert_eq!(s, Shard { index: 3, count: 4 });
        assert_eq!(
            said,
            "Kubernetes Indexed Job: JOB_COMPLETION_INDEX=2, 4 shards from --shards (or ASSAY_SHARDS)"
        );
        let err = detect(None, &e).unwrap_err();
        assert!(err.contains("pass --shards N"), "{err}");
        let err = detect(Some(2), &e).unwrap_err();
        assert!(
            err.contains("is not a shard of 2 (it counts from 0)"),
            "{err}"
        );
    }

    #[test]
    fn ci_matrices_count_from_one_and_carry_their_total() {
        let e = env(&[("CI_NODE_INDEX", "3"), ("CI_NODE_TOTAL", "3")]);
        let (s, said) = detect(None, &e).unwrap();
        assert_eq!(s, Shard { index: 3, count: 3 });
        assert_eq!(
            said,
            "CI parallel matrix: CI_NODE_INDEX=3, 3 shards from CI_NODE_TOTAL"
        );
        let gitlab = env(&[
            ("CI_NODE_INDEX", "1"),
            ("CI_NODE_TOTAL", "2"),
            ("GITLAB_CI", "true"),
        ]);
        assert!(
            detect(None, &gitlab)
                .unwrap()
                .1
                .starts_with("GitLab CI parallel: ")
        );
        let github = env(&[
            ("CI_NODE_INDEX", "1"),
            ("CI_NODE_TOTAL", "2"),
            ("GITHUB_ACTIONS", "true"),
        ]);
        assert!(
            detect(None, &github)
                .unwrap()
                .1
                .starts_with("GitHub Actions matrix: ")
        );
        assert!(detect(Some(4), &e).unwrap_err().contains("disagree"));
        let zero = env(&[("CI_NODE_INDEX", "0"), ("CI_NODE_TOTAL", "3")]);
        assert!(detect(None, &zero).is_err());
        let no_total = env(&[("CI_NODE_INDEX", "1")]);
        assert!(
            detect(None, &no_total)
                .unwrap_err()
                .contains("CI_NODE_TOTAL is not")
        );
        let circle = env(&[("CIRCLE_NODE_INDEX", "0"), ("CIRCLE_NODE_TOTAL", "2")]);
        assert_eq!(
            detect(None, &circle).unwrap().0,
            Shard { index: 1, count: 2 }
        );
    }

    #[test]
    fn nothing_set_or_nonsense_is_an_error_naming_what_was_read() {
        let err = detect(None, &env(&[])).unwrap_err();
        assert!(
            err.contains("JOB_COMPLETION_INDEX, CI_NODE_INDEX/CI_NODE_TOTAL"),
            "{err}"
        );
        for bad in ["x", "-1", "99999999999"] {
            let pairs = [("JOB_COMPLETION_INDEX", bad)];
            let e = env(&pairs);
            assert!(
                detect(Some(2), &e).unwrap_err().contains("is not a number"),
                "{bad}"
            );
        }
        // An index at u32::MAX counting from 0 cannot overflow.
        let e = env(&[("JOB_COMPLETION_INDEX", "4294967295")]);
        assert!(detect(Some(2), &e).is_err());
        assert!(detect(Some(0), &env(&[("JOB_COMPLETION_INDEX", "0")])).is_err());
    }
}
