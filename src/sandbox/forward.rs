//! The host side of a sandbox's network, each relay connecting to its one endpoint and
//! nowhere else: nothing inside can choose where a connection goes.
//!
//! - bubblewrap: a Unix socket per allowed endpoint, in a folder bound read-only into the
//!   sandbox (which has no network of its own).
//! - Landlock: a TCP listener on the host's loopback per endpoint, and a `CONNECT` proxy for
//!   `https` endpoints; Landlock lets the sandbox connect to these ports and no other.

use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, copy_bidirectional};
use tokio::net::{TcpListener, TcpStream, UnixListener};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;

use super::Network;
use super::endpoint::{Endpoint, EndpointPlan};
use crate::record::case_run::SandboxRecord;

/// Connections one case-run's sandbox may have open to its endpoints at once.
pub const MAX_CONNECTIONS: usize = 64;

/// The running relays of one case-run; stopped when dropped.
#[derive(Debug)]
pub struct Forwarder {
    /// bubblewrap's: the folder of sockets.
    dir: Option<tempfile::TempDir>,
    /// Landlock's: the loopback port of each target, and of the proxy.
    ports: Vec<u16>,
    proxy: Option<u16>,
    tasks: Vec<JoinHandle<()>>,
    /// Set when the case-run ends: every connection still relayed is closed then (an
    /// endpoint that never closes its side must not keep assay's descriptors).
    closed: watch::Sender<bool>,
}

/// What every relay of one forwarder shares: the bound on connections, and the end.
#[derive(Clone)]
struct Shared {
    open: Arc<Semaphore>,
    closing: watch::Receiver<bool>,
}

impl Shared {
    /// Relays `inside` to `addr` until either side closes or the case-run ends; a connection
    /// over the bound is dropped.
    fn relay<S>(&self, inside: S, addr: String, first: Vec<u8>)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let Ok(permit) = self.open.clone().try_acquire_owned() else {
            return; // dropped: too many at once
        };
        let mut closing = self.closing.clone();
        tokio::spawn(async move {
            let relay = async {
                let mut inside = inside;
                if let Ok(mut up) = TcpStream::connect(&addr).await
                    && up.write_all(&first).await.is_ok()
                {
                    // A connection ends when both sides close; nothing to report.
                    let _ = copy_bidirectional(&mut inside, &mut up).await;
                }
            };
            tokio::select! {
                _ = relay => {}
                _ = closing.wait_for(|c| *c) => {}
            }
            drop(permit);
        });
    }
}

impl Forwarder {
    fn shared() -> (Shared, watch::Sender<bool>) {
        let (closed, closing) = watch::channel(false);
        let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        (Shared { open, closing }, closed)
    }

    /// bubblewrap's: listens on `<dir>/<i>.sock` for each target. Must be called within a
    /// tokio runtime.
    pub fn start(targets: &[Endpoint]) -> std::io::Result<Forwarder> {
        // A short path: Unix socket paths are limited to 108 bytes.
        let dir = tempfile::Builder::new().prefix("assay-net-").tempdir()?;
        let (shared, closed) = Self::shared();
        let mut tasks = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            let listener = UnixListener::bind(dir.path().join(format!("{i}.sock")))?;
            let (addr, shared) = (t.addr(), shared.clone());
            tasks.push(tokio::spawn(async move {
                while let Ok((inside, _)) = listener.accept().await {
                    shared.relay(inside, addr.clone(), Vec::new());
                }
            }));
        }
        Ok(Forwarder {
            dir: Some(dir),
            ports: Vec::new(),
            proxy: None,
            tasks,
            closed,
        })
    }

    /// Landlock's: a loopback port for each target, and with `proxied` (indexes into
    /// `targets`), a `CONNECT` proxy that tunnels to those alone. Must be called within a
    /// tokio runtime.
    pub fn start_tcp(targets: &[Endpoint], proxied: &[usize]) -> std::io::Result<Forwarder> {
        let (shared, closed) = Self::shared();
        let mut tasks = Vec::new();
        let mut ports = Vec::new();
        for t in targets {
            let listener = loopback()?;
            ports.push(listener.local_addr()?.port());
            let (addr, shared) = (t.addr(), shared.clone());
            tasks.push(tokio::spawn(async move {
                while let Ok((inside, _)) = listener.accept().await {
                    shared.relay(inside, addr.clone(), Vec::new());
                }
            }));
        }
        let mut proxy = None;
        if !proxied.is_empty() {
            let listener = loopback()?;
            proxy = Some(listener.local_addr()?.port());
            let allowed: Arc<Vec<String>> = Arc::new(
                proxied
                    .iter()
                    .filter_map(|i| targets.get(*i))
                    .map(|t| t.addr().to_ascii_lowercase())
                    .collect(),
            );
            tasks.push(tokio::spawn(async move {
                while let Ok((inside, _)) = listener.accept().await {
                    let (allowed, shared) = (allowed.clone(), shared.clone());
                    tokio::spawn(async move { tunnel(inside, &allowed, &shared).await });
                }
            }));
        }
        Ok(Forwarder {
            dir: None,
            ports,
            proxy,
            tasks,
            closed,
        })
    }

    /// The folder of sockets, bound into a bubblewrap sandbox.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_ref().map(|d| d.path())
    }

    /// The loopback port of each target (Landlock's).
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    /// The `CONNECT` proxy's loopback port (Landlock's, with `https` endpoints).
    pub fn proxy(&self) -> Option<u16> {
        self.proxy
    }
}

/// The model network of a backend that shares the host's (Landlock, Seatbelt): the endpoints'
/// plan and its loopback relays, for `--network model`.
#[derive(Debug)]
pub struct LoopbackNet {
    plan: EndpointPlan,
    forwarder: Forwarder,
}

impl LoopbackNet {
    /// The relays to `endpoints` with `--network model`; none otherwise. Must be called within
    /// a tokio runtime.
    pub fn start(network: Network, endpoints: &[String]) -> std::io::Result<Option<LoopbackNet>> {
        if network != Network::Model {
            return Ok(None);
        }
        let plan = EndpointPlan::new(endpoints);
        let forwarder = Forwarder::start_tcp(&plan.targets(), plan.proxied())?;
        Ok(Some(LoopbackNet { plan, forwarder }))
    }

    /// The environment inside: model endpoints at the relays' loopback ports.
    pub fn rewrite_env(&self, env: &mut Vec<(String, String)>) {
        let f = &self.forwarder;
        self.plan.rewrite_env_tcp(env, f.ports(), f.proxy());
    }

    /// The loopback ports the sandbox may connect to: the relays' and the proxy's.
    pub fn ports(&self) -> Vec<u16> {
        let f = &self.forwarder;
        f.ports()
            .iter()
            .chain(f.proxy().as_ref())
            .copied()
            .collect()
    }

    /// A case-run's sandbox record of this backend `kind` with `network`.
    pub fn record(net: Option<&LoopbackNet>, kind: &str, network: Network) -> SandboxRecord {
        SandboxRecord {
            kind: kind.into(),
            network: Some(network.as_str().into()),
            endpoints: net.map(|n| n.plan.describe()).unwrap_or_default(),
            limits: None,
        }
    }
}

/// A listener on 127.0.0.1 at a port the kernel picks.
fn loopback() -> std::io::Result<TcpListener> {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    l.set_nonblocking(true)?;
    TcpListener::from_std(l)
}

/// One proxy connection: `CONNECT host:port` to an allowed endpoint is tunnelled (TLS stays
/// end to end); anything else gets 403. The request head is bounded.
async fn tunnel(mut inside: TcpStream, allowed: &[String], shared: &Shared) {
    use super::inside::{ESTABLISHED, FORBIDDEN, Head, connect_target, head_end};
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let end = loop {
        match inside.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        match head_end(&head) {
            Head::Whole(end) => break end,
            Head::More => {}
            Head::TooLong => return,
        }
    };
    let Some(target) = connect_target(&head[..end]).filter(|t| allowed.contains(t)) else {
        let _ = inside.write_all(FORBIDDEN).await;
        return;
    };
    if inside.write_all(ESTABLISHED).await.is_err() {
        return;
    }
    shared.relay(inside, target, head[end..].to_vec());
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        self.closed.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// An endpoint that accepts and holds every connection, never closing its side; counts
    /// them.
    async fn holding_server() -> (u16, Arc<AtomicUsize>) {
        let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = server.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((s, _)) = server.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                held.push(s);
            }
        });
        (port, accepted)
    }

    fn forwarder_to(port: u16) -> Forwarder {
        Forwarder::start(&[Endpoint {
            host: "127.0.0.1".into(),
            port,
        }])
        .unwrap()
    }

    async fn connect(f: &Forwarder) -> tokio::net::UnixStream {
        tokio::net::UnixStream::connect(f.dir().unwrap().join("0.sock"))
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn relays_to_its_endpoint_only() {
        let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = server.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut s, _) = server.accept().await.unwrap();
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf).await.unwrap();
            s.write_all(b"pong").await.unwrap();
        });
        let f = forwarder_to(port);
        let mut c = connect(&f).await;
        c.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        c.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"pong");
        assert!(!f.dir().unwrap().join("1.sock").exists());
    }

    #[tokio::test]
    async fn connections_still_open_close_with_the_forwarder() {
        let (port, _) = holding_server().await;
        let f = forwarder_to(port);
        let mut c = connect(&f).await;
        c.write_all(b"hello").await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        drop(f);
        let mut buf = [0u8; 1];
        let n = tokio::time::timeout(std::time::Duration::from_secs(2), c.read(&mut buf))
            .await
            .expect("the relay closed its side")
            .unwrap();
        assert_eq!(n, 0);
    }

    #[tokio::test]
    async fn connections_at_once_are_bounded() {
        let (port, accepted) = holding_server().await;
        let f = forwarder_to(port);
        let mut clients = Vec::new();
        for _ in 0..MAX_CONNECTIONS + 20 {
            clients.push(connect(&f).await);
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let n = accepted.load(Ordering::SeqCst);
        assert_eq!(n, MAX_CONNECTIONS, "relayed {n}");
    }
}
