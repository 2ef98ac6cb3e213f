//! clauditor's `urls_reachable`: at least `count` of the URLs in the output answer a HEAD
//! request with a 2xx status.
//!
//! Bounded: at most [`MAX_URLS`] distinct URLs, [`MAX_REDIRECTS`] redirects each, and a
//! timeout per URL, all checked concurrently. Guarded against server-side request forgery:
//! unless the user allows it, no request goes to a loopback, private, link-local, shared,
//! multicast or unspecified address — neither directly, nor through a name that resolves to
//! one, nor through a redirect. Proxies from the environment are not used, so the guard
//! sees the real target.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde_json::Value;

use super::{Finding, URL_PATTERN};
use crate::assert::view::CaseRunView;

pub const MAX_URLS: usize = 20;
pub const MAX_REDIRECTS: usize = 5;
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where `urls_reachable` may send requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlPolicy {
    /// Allow loopback, private and link-local targets (`--allow-private-urls`).
    pub allow_private: bool,
    /// Per URL, redirects included.
    pub timeout: Duration,
}

impl Default for UrlPolicy {
    fn default() -> Self {
        UrlPolicy {
            allow_private: false,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// Whether an address is one the guard refuses.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal_v4(v4);
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (first & 0xffc0) == 0xfec0 // deprecated site-local fec0::/10
        }
    }
}

fn is_internal_v4(v4: Ipv4Addr) -> bool {
    let [a, b, ..] = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || a == 0 // "this network"
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && v4.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240 // reserved
}

/// Refuses a URL whose host is an internal IP literal, or whose scheme is not http(s).
pub fn check_target(url: &Url, allow_private: bool) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("scheme {} is not http or https", url.scheme()));
    }
    if allow_private {
        return Ok(());
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Some(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
        Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => {
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        }
        _ => None,
    };
    match ip {
        Some(ip) if is_internal(ip) => Err(format!(
            "refused: {ip} is a loopback, private or link-local address (--allow-private-urls allows it)"
        )),
        _ => Ok(()),
    }
}

/// Resolves names and drops internal addresses; a name with only internal ones fails.
struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = all
                .iter()
                .copied()
                .filter(|a| !is_internal(a.ip()))
                .collect();
            if allowed.is_empty() {
                let shown = all.first().map(|a| a.ip().to_string()).unwrap_or_default();
                return Err(format!(
                    "refused: {host} resolves to {shown}, a loopback, private or link-local address (--allow-private-urls allows it)"
                )
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

pub struct UrlsReachable {
    policy: UrlPolicy,
}

impl UrlsReachable {
    pub fn new(policy: UrlPolicy) -> Self {
        UrlsReachable { policy }
    }

    fn client(&self) -> Result<reqwest::Client, String> {
        let allow = self.policy.allow_private;
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
            }
            match check_target(attempt.url(), allow) {
                Ok(()) => attempt.follow(),
                Err(why) => attempt.error(why),
            }
        });
        let mut b = reqwest::Client::builder()
            .no_proxy()
            .redirect(redirects)
            .timeout(self.policy.timeout)
            .user_agent(concat!(
                "assay/",
                env!("CARGO_PKG_VERSION"),
                " (urls_reachable)"
            ));
        if !allow {
            b = b.dns_resolver(Arc::new(GuardedResolver));
        }
        b.build().map_err(|e| e.to_string())
    }
}

/// The distinct URLs of a text in order, without trailing sentence punctuation.
pub fn urls_in(text: &str) -> Vec<String> {
    let re = fancy_regex::Regex::new(URL_PATTERN).expect("the URL pattern compiles");
    let mut seen: Vec<String> = Vec::new();
    for m in re.find_iter(text).filter_map(Result::ok) {
        let u = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
        if !seen.iter().any(|s| s == u) {
            seen.push(u.to_string());
        }
    }
    seen
}

/// One URL's fate.
async fn probe(client: &reqwest::Client, url: &str, allow_private: bool) -> Result<u16, String> {
    let parsed = Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    check_target(&parsed, allow_private)?;
    match client.head(parsed).send().await {
        Ok(r) => Ok(r.status().as_u16()),
        Err(e) => Err(describe(&e)),
    }
}

/// The innermost cause, which says what went wrong (refused, timed out, …).
fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "timed out".into();
    }
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg = s.to_string();
        src = s.source();
    }
    msg
}

/// Runs a future to its end from synchronous code: on the run's own runtime when a check is
/// graded inside one (the usual case: one runtime per run), else on a private one (on its own
/// thread when the current runtime cannot block in place).
fn block_on<F>(f: F) -> Result<F::Output, String>
where
    F: Future + Send,
    F::Output: Send,
{
    if let Ok(handle) = tokio::runtime::Handle::try_current()
        && handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
    {
        return Ok(tokio::task::block_in_place(|| handle.block_on(f)));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| {
            s.spawn(move || rt.block_on(f))
                .join()
                .map_err(|_| "the URL checker failed".to_string())
        })
    } else {
        Ok(rt.block_on(f))
    }
}

impl UrlsReachable {
    /// The check over `view`'s output (`assert::check::Evaluator` calls this).
    pub fn evaluate(&self, config: &Value, view: &CaseRunView) -> Result<Finding, String> {
        let wanted = config.get("count").and_then(Value::as_i64).unwrap_or(1);
        let urls = urls_in(&view.output);
        let total = urls.len();
        let urls: Vec<String> = urls.into_iter().take(MAX_URLS).collect();
        let client = self.client()?;
        let allow = self.policy.allow_private;
        let results = block_on(async {
            futures::future::join_all(urls.iter().map(|u| probe(&client, u, allow))).await
        })?;
        let reachable = results
            .iter()
            .filter(|r| matches!(r, Ok(s) if (200..300).contains(s)))
            .count();
        let evidence = urls
            .iter()
            .zip(&results)
            .map(|(u, r)| match r {
                Ok(s) => format!("{u} → {s}"),
                Err(why) => format!("{u} → {why}"),
            })
            .collect::<Vec<_>>()
            .join("; ");
        let capped = if total > MAX_URLS {
            format!(" (the first {MAX_URLS} of {total} checked)")
        } else {
            String::new()
        };
        Ok(Finding {
            passed: reachable as i64 >= wanted,
            message: format!(
                "{reachable} of {} URL(s) answered HEAD with 2xx{capped}, at least {wanted} wanted",
                urls.len()
            ),
            evidence: (!evidence.is_empty()).then_some(evidence),
            log: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn internal_addresses_are_refused() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700::1111"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn literal_targets_are_checked_before_any_request() {
        for u in [
            "http://127.0.0.1:9/",
            "http://[::1]/",
            "http://169.254.169.254/latest/meta-data",
            "http://localhost:8080/",
            "http://10.0.0.1/",
        ] {
            let url = Url::parse(u).unwrap();
            assert!(check_target(&url, false).is_err(), "{u}");
            assert!(check_target(&url, true).is_ok(), "{u}");
        }
        assert!(check_target(&Url::parse("file:///etc/passwd").unwrap(), true).is_err());
    }

    #[test]
    fn urls_are_distinct_and_lose_trailing_punctuation() {
        let text = "See https://a.example/x. Also https://a.example/x and (https://b.example/y), http://c.example!";
        assert_eq!(
            urls_in(text),
            vec![
                "https://a.example/x",
                "https://b.example/y",
                "http://c.example"
            ]
        );
    }

    fn view(output: String) -> Arc<CaseRunView> {
        Arc::new(CaseRunView {
            output: output.into(),
            ..CaseRunView::default()
        })
    }

    async fn server() -> SocketAddr {
        use axum::Router;
        use axum::http::{StatusCode, header};
        use axum::response::IntoResponse;
        use axum::routing::any;
        let app = Router::new()
            .route("/ok", any(|| async { StatusCode::OK }))
            .route("/missing", any(|| async { StatusCode::NOT_FOUND }))
            .route(
                "/hop/{n}",
                any(
                    |axum::extract::Path(n): axum::extract::Path<u32>| async move {
                        let to = if n <= 1 {
                            "/ok".to_string()
                        } else {
                            format!("/hop/{}", n - 1)
                        };
                        (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
                    },
                ),
            )
            .route(
                "/slow",
                any(|| async {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    StatusCode::OK
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        addr
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reachability_follows_bounded_redirects_and_times_out() {
        let a = server().await;
        let out = format!(
            "1. http://{a}/ok\n2. http://{a}/missing\n3. http://{a}/hop/5\n4. http://{a}/hop/6\n5. http://{a}/slow\n"
        );
        let check = UrlsReachable::new(UrlPolicy {
            allow_private: true,
            timeout: Duration::from_millis(800),
        });
        let started = std::time::Instant::now();
        let v = check
            .evaluate(&json!({"count": 2}), &view(out.clone()))
            .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "URLs are checked concurrently"
        );
        assert!(v.passed, "{v:?}");
        assert!(v.message.starts_with("2 of 5"), "{}", v.message);
        let ev = v.evidence.unwrap();
        assert!(ev.contains("/missing → 404"), "{ev}");
        assert!(
            ev.contains("/hop/5 → 200"),
            "five redirects are followed: {ev}"
        );
        assert!(
            ev.contains("/hop/6 → ") && !ev.contains("/hop/6 → 200"),
            "six are not: {ev}"
        );
        assert!(ev.contains("/slow → timed out"), "{ev}");
        let v = check.evaluate(&json!({"count": 3}), &view(out)).unwrap();
        assert!(!v.passed);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn loopback_is_refused_unless_allowed() {
        let a = server().await;
        let out = format!("http://{a}/ok and http://localhost:{}/ok", a.port());
        let v = UrlsReachable::new(UrlPolicy::default())
            .evaluate(&json!({"count": 1}), &view(out))
            .unwrap();
        assert!(!v.passed);
        let ev = v.evidence.unwrap();
        assert_eq!(ev.matches("refused").count(), 2, "{ev}");
    }

    #[test]
    fn at_most_twenty_urls_are_checked() {
        let out: String = (0..30).map(|i| format!("http://10.0.0.{i}/ ")).collect();
        let v = UrlsReachable::new(UrlPolicy::default())
            .evaluate(&json!({"count": 1}), &view(out))
            .unwrap();
        assert!(v.message.contains("of 20 URL(s)") && v.message.contains("first 20 of 30"));
        assert!(!v.passed);
    }
}
