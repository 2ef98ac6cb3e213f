//! The host side of a sandbox's network: one Unix socket per allowed endpoint, each relaying
//! every connection to its one endpoint and nowhere else. The sockets' folder is bound
//! read-only into the sandbox; nothing inside can choose where a connection goes.

use std::path::Path;

use tokio::io::copy_bidirectional;
use tokio::net::{TcpStream, UnixListener};
use tokio::task::JoinHandle;

use super::endpoint::Target;

/// Connections one case-run's sandbox may have open to its endpoints at once.
pub const MAX_CONNECTIONS: usize = 64;

/// The running relays of one case-run; stopped when dropped.
#[derive(Debug)]
pub struct Forwarder {
    dir: tempfile::TempDir,
    tasks: Vec<JoinHandle<()>>,
    /// Set when the case-run ends: every connection still relayed is closed then (an
    /// endpoint that never closes its side must not keep assay's descriptors).
    closed: tokio::sync::watch::Sender<bool>,
}

impl Forwarder {
    /// Listens on `<dir>/<i>.sock` for each target. Must be called within a tokio runtime.
    pub fn start(targets: &[Target]) -> std::io::Result<Forwarder> {
        // A short path: Unix socket paths are limited to 108 bytes.
        let dir = tempfile::Builder::new().prefix("assay-net-").tempdir()?;
        let mut tasks = Vec::new();
        // The agent cannot open connections without bound: each holds two of assay's file
        // descriptors, which the rest of the run needs.
        let open = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let (closed, closing) = tokio::sync::watch::channel(false);
        for (i, t) in targets.iter().enumerate() {
            let listener = UnixListener::bind(dir.path().join(format!("{i}.sock")))?;
            let addr = t.addr();
            let open = open.clone();
            let closing = closing.clone();
            tasks.push(tokio::spawn(async move {
                while let Ok((mut inside, _)) = listener.accept().await {
                    let Ok(permit) = open.clone().try_acquire_owned() else {
                        continue; // dropped: too many at once
                    };
                    let addr = addr.clone();
                    let mut closing = closing.clone();
                    tokio::spawn(async move {
                        let relay = async {
                            if let Ok(mut up) = TcpStream::connect(&addr).await {
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
            }));
        }
        Ok(Forwarder { dir, tasks, closed })
    }

    /// The folder of sockets, bound into the sandbox.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
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
        Forwarder::start(&[Target {
            host: "127.0.0.1".into(),
            port,
        }])
        .unwrap()
    }

    async fn connect(f: &Forwarder) -> tokio::net::UnixStream {
        tokio::net::UnixStream::connect(f.dir().join("0.sock"))
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
        assert!(!f.dir().join("1.sock").exists());
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
