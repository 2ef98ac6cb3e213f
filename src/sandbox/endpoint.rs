//! The model endpoints an agent may reach with `--network model`, and how it reaches them
//! from inside a sandbox that has no network of its own.
//!
//! - An `http://` endpoint is served on the sandbox's own loopback at the same port (a
//!   loopback endpoint keeps its URL; another host's URL is rewritten to 127.0.0.1), and each
//!   connection is relayed to the real endpoint.
//! - `https://` endpoints go through an HTTP `CONNECT` proxy on the sandbox's loopback
//!   (`HTTPS_PROXY`), which tunnels only to those hosts; TLS stays end to end.
//!
//! The list is decided on the host; the host side of each relay connects only to its one
//! endpoint, so nothing inside can reach anything else.

use url::Url;

use super::spec::NET_INSIDE;

/// One endpoint the host side connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    pub fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// How a case-run's sandbox reaches its endpoints.
#[derive(Debug, Clone, Default)]
pub struct EndpointPlan {
    targets: Vec<Endpoint>,
    /// `http` endpoints: (loopback port inside, target index).
    direct: Vec<(u16, usize)>,
    /// `https` endpoints, reached through the CONNECT proxy.
    proxied: Vec<usize>,
    proxy_port: Option<u16>,
}

/// The `*_BASE_URL` variables of an agent's environment: the endpoints its CLI is pointed at.
pub fn from_env(env: &[(String, String)]) -> Vec<String> {
    env.iter()
        .filter(|(k, v)| k.ends_with("_BASE_URL") && !v.is_empty())
        .map(|(_, v)| v.clone())
        .collect()
}

fn is_loopback(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "::1" | "[::1]")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl EndpointPlan {
    /// The plan for these endpoint URLs (unparseable ones and other schemes are left out).
    pub fn new(endpoints: &[String]) -> EndpointPlan {
        let mut plan = EndpointPlan::default();
        for e in endpoints {
            let Ok(url) = Url::parse(e) else { continue };
            let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
                continue;
            };
            let host = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let target = Endpoint { host, port };
            let idx = match plan.targets.iter().position(|t| *t == target) {
                Some(i) => i,
                None => {
                    plan.targets.push(target);
                    plan.targets.len() - 1
                }
            };
            match url.scheme() {
                "http" if !plan.direct.iter().any(|(p, _)| *p == port) => {
                    plan.direct.push((port, idx));
                }
                "https" if !plan.proxied.contains(&idx) => plan.proxied.push(idx),
                _ => {}
            }
        }
        if !plan.proxied.is_empty() {
            let mut port = 3128;
            while plan.direct.iter().any(|(p, _)| *p == port) {
                port += 1;
            }
            plan.proxy_port = Some(port);
        }
        plan
    }

    /// The endpoints the host side connects to; socket `N` inside leads to target `N`.
    pub fn targets(&self) -> Vec<Endpoint> {
        self.targets.clone()
    }

    /// `host:port` of each endpoint, for the record.
    pub fn describe(&self) -> Vec<String> {
        self.targets.iter().map(Endpoint::addr).collect()
    }

    /// The agent's environment inside bubblewrap's sandbox: `http` base URLs on another host
    /// point at the loopback relay (same port); `https` goes through the proxy.
    pub fn rewrite_env(&self, env: &mut Vec<(String, String)>) {
        self.rewrite(
            env,
            |host, port| {
                let relayed = self
                    .direct
                    .iter()
                    .any(|(p, i)| *p == port && self.targets[*i].host == host);
                (relayed && !is_loopback(host)).then_some(port)
            },
            self.proxy_port,
        );
    }

    /// The agent's environment under Landlock, which shares the host's network: every `http`
    /// base URL of a target points at its relay's loopback port (`ports`, by target), and
    /// `https` goes through the host's proxy at `proxy`.
    pub fn rewrite_env_tcp(
        &self,
        env: &mut Vec<(String, String)>,
        ports: &[u16],
        proxy: Option<u16>,
    ) {
        self.rewrite(
            env,
            |host, port| {
                self.direct
                    .iter()
                    .find(|(p, i)| *p == port && self.targets[*i].host == host)
                    .and_then(|(_, i)| ports.get(*i).copied())
            },
            proxy,
        );
    }

    /// Points each `http` URL for which `relay(host, port)` gives a port at 127.0.0.1 there;
    /// the proxy variables replaced by `proxy`'s.
    fn rewrite(
        &self,
        env: &mut Vec<(String, String)>,
        relay: impl Fn(&str, u16) -> Option<u16>,
        proxy: Option<u16>,
    ) {
        for (_, v) in env.iter_mut() {
            let Ok(mut url) = Url::parse(v) else { continue };
            if url.scheme() != "http" {
                continue;
            }
            let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
                continue;
            };
            let Some(to) = relay(host.trim_matches(['[', ']']), port) else {
                continue;
            };
            if url.set_host(Some("127.0.0.1")).is_ok() && url.set_port(Some(to)).is_ok() {
                let mut s = url.to_string();
                if !v.ends_with('/') && s.ends_with('/') {
                    s.pop();
                }
                *v = s;
            }
        }
        for k in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
            env.retain(|(e, _)| e != k);
        }
        for k in ["HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"] {
            env.retain(|(e, _)| e != k);
        }
        if let Some(port) = proxy {
            let proxy = format!("http://127.0.0.1:{port}");
            env.push(("HTTPS_PROXY".into(), proxy.clone()));
            env.push(("https_proxy".into(), proxy));
        }
        let direct = "localhost,127.0.0.1,::1".to_string();
        env.push(("NO_PROXY".into(), direct.clone()));
        env.push(("no_proxy".into(), direct));
    }

    /// The targets reached through the `CONNECT` proxy.
    pub fn proxied(&self) -> &[usize] {
        &self.proxied
    }

    /// The arguments of `assay __sandbox-exec` that set up the inside of the network.
    pub fn inside_args(&self) -> Vec<String> {
        let mut a = Vec::new();
        for (port, i) in &self.direct {
            a.push("--listen".into());
            a.push(format!("{port}={NET_INSIDE}/{i}.sock"));
        }
        if let Some(port) = self.proxy_port {
            a.push("--proxy".into());
            a.push(port.to_string());
            for i in &self.proxied {
                a.push("--route".into());
                a.push(format!("{}={NET_INSIDE}/{i}.sock", self.targets[*i].addr()));
            }
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_loopback_endpoint_keeps_its_url_and_port() {
        let plan = EndpointPlan::new(&["http://127.0.0.1:4567".into()]);
        let mut e = env(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:4567")]);
        plan.rewrite_env(&mut e);
        assert!(e.contains(&("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:4567".into())));
        assert_eq!(
            plan.inside_args(),
            ["--listen", "4567=/run/assay/net/0.sock"]
        );
        assert_eq!(plan.describe(), ["127.0.0.1:4567"]);
    }

    #[test]
    fn https_endpoints_go_through_the_proxy_and_only_to_them() {
        let plan = EndpointPlan::new(&[
            "https://api.anthropic.com".into(),
            "http://models.internal:8080/v1".into(),
        ]);
        let mut e = env(&[
            ("OPENAI_BASE_URL", "http://models.internal:8080/v1"),
            ("HTTPS_PROXY", "http://corp:3128"),
        ]);
        plan.rewrite_env(&mut e);
        let get = |k: &str| e.iter().find(|(x, _)| x == k).map(|(_, v)| v.as_str());
        assert_eq!(get("OPENAI_BASE_URL"), Some("http://127.0.0.1:8080/v1"));
        assert_eq!(get("HTTPS_PROXY"), Some("http://127.0.0.1:3128"));
        assert_eq!(
            plan.inside_args(),
            [
                "--listen",
                "8080=/run/assay/net/1.sock",
                "--proxy",
                "3128",
                "--route",
                "api.anthropic.com:443=/run/assay/net/0.sock"
            ]
        );
    }

    #[test]
    fn under_landlock_every_http_endpoint_points_at_its_relay_port() {
        let plan = EndpointPlan::new(&[
            "http://127.0.0.1:4567".into(),
            "https://api.anthropic.com".into(),
        ]);
        let mut e = env(&[
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:4567"),
            ("OTHER_BASE_URL", "http://127.0.0.1:9999"),
        ]);
        plan.rewrite_env_tcp(&mut e, &[40001, 40002], Some(40003));
        let get = |k: &str| e.iter().find(|(x, _)| x == k).map(|(_, v)| v.as_str());
        assert_eq!(get("ANTHROPIC_BASE_URL"), Some("http://127.0.0.1:40001"));
        assert_eq!(get("OTHER_BASE_URL"), Some("http://127.0.0.1:9999"));
        assert_eq!(get("HTTPS_PROXY"), Some("http://127.0.0.1:40003"));
        assert_eq!(plan.proxied(), [1]);
    }

    #[test]
    fn base_urls_come_from_the_environment() {
        let e = env(&[
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:1"),
            ("PATH", "/bin"),
            ("OPENAI_BASE_URL", ""),
        ]);
        assert_eq!(from_env(&e), ["http://127.0.0.1:1"]);
    }
}
