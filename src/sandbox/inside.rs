//! `assay __sandbox-exec`: the first process inside a sandbox. It opens the sandbox's side of
//! the network (loopback listeners that lead to the host's Unix sockets, and a `CONNECT`
//! proxy for `https` endpoints), runs the command, and exits as it does. It outlives SIGTERM
//! so the command gets its grace period; when it exits, bubblewrap's init ends and the kernel
//! kills everything left in the sandbox's PID namespace.
//!
//! Arguments: `[--listen PORT=SOCKET]… [--proxy PORT [--route HOST:PORT=SOCKET]…] -- PROGRAM ARGS…`

use std::collections::HashMap;
use std::process::ExitCode;

use tokio::io::{AsyncReadExt, AsyncWriteExt, copy_bidirectional};
use tokio::net::{TcpListener, UnixStream};

pub const SUBCOMMAND: &str = "__sandbox-exec";

/// The parsed arguments.
#[derive(Debug, Default, PartialEq, Eq)]
struct Args {
    listen: Vec<(u16, String)>,
    proxy: Option<u16>,
    routes: HashMap<String, String>,
    argv: Vec<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut out = Args::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--listen" => {
                let v = value("--listen")?;
                let (port, sock) = v.split_once('=').ok_or("--listen PORT=SOCKET")?;
                let port = port.parse().map_err(|_| format!("bad port in {v}"))?;
                out.listen.push((port, sock.to_string()));
            }
            "--proxy" => {
                let v = value("--proxy")?;
                out.proxy = Some(v.parse().map_err(|_| format!("bad port {v}"))?);
            }
            "--route" => {
                let v = value("--route")?;
                let (target, sock) = v.split_once('=').ok_or("--route HOST:PORT=SOCKET")?;
                out.routes
                    .insert(target.to_ascii_lowercase(), sock.to_string());
            }
            "--" => {
                out.argv = it.cloned().collect();
                break;
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if out.argv.is_empty() {
        return Err("no command".into());
    }
    Ok(out)
}

/// Runs inside the sandbox; `args` are those after the subcommand.
pub fn main(args: &[String]) -> ExitCode {
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("assay sandbox: {e}");
            return ExitCode::from(125);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("assay sandbox: cannot start: {e}");
            return ExitCode::from(125);
        }
    };
    let code = rt.block_on(run(args));
    ExitCode::from(code)
}

async fn run(args: Args) -> u8 {
    // SIGTERM and SIGINT are for the command (it is in the same process group); this process
    // waits for it to end.
    use tokio::signal::unix::{SignalKind, signal};
    let _term = signal(SignalKind::terminate());
    let _int = signal(SignalKind::interrupt());
    for (port, sock) in &args.listen {
        for host in ["127.0.0.1", "[::1]"] {
            if let Ok(l) = TcpListener::bind(format!("{host}:{port}")).await {
                let sock = sock.clone();
                tokio::spawn(async move {
                    while let Ok((mut tcp, _)) = l.accept().await {
                        let sock = sock.clone();
                        tokio::spawn(async move {
                            if let Ok(mut up) = UnixStream::connect(&sock).await {
                                let _ = copy_bidirectional(&mut tcp, &mut up).await;
                            }
                        });
                    }
                });
            } else if host == "127.0.0.1" {
                eprintln!("assay sandbox: cannot listen on 127.0.0.1:{port}");
            }
        }
    }
    if let Some(port) = args.proxy {
        match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(l) => {
                let routes = std::sync::Arc::new(args.routes.clone());
                tokio::spawn(async move {
                    while let Ok((tcp, _)) = l.accept().await {
                        tokio::spawn(connect_proxy(tcp, routes.clone()));
                    }
                });
            }
            Err(e) => eprintln!("assay sandbox: cannot listen on 127.0.0.1:{port}: {e}"),
        }
    }
    let mut child = match tokio::process::Command::new(&args.argv[0])
        .args(&args.argv[1..])
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "assay sandbox: `{}` is not installed or not visible inside the sandbox",
                args.argv[0]
            );
            return 127;
        }
        Err(e) => {
            eprintln!("assay sandbox: cannot start `{}`: {e}", args.argv[0]);
            return 126;
        }
    };
    use std::os::unix::process::ExitStatusExt;
    match child.wait().await {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(c), _) => c as u8,
            (None, Some(sig)) => 128u8.saturating_add(sig as u8),
            _ => 1,
        },
        Err(_) => 1,
    }
}

/// One proxy connection: `CONNECT host:port` to an allowed endpoint is tunnelled; anything
/// else gets 403.
async fn connect_proxy(
    mut tcp: tokio::net::TcpStream,
    routes: std::sync::Arc<HashMap<String, String>>,
) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let end = loop {
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if let Some(i) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if head.len() > 16 << 10 {
            return;
        }
    };
    let text = String::from_utf8_lossy(&head[..end]).to_string();
    let mut words = text.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let sock = (method == "CONNECT")
        .then(|| routes.get(&target.to_ascii_lowercase()))
        .flatten();
    let Some(sock) = sock else {
        let _ = tcp
            .write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    };
    let Ok(mut up) = UnixStream::connect(sock).await else {
        let _ = tcp
            .write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    };
    if tcp
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    if end < head.len() && up.write_all(&head[end..]).await.is_err() {
        return;
    }
    let _ = copy_bidirectional(&mut tcp, &mut up).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_listeners_routes_and_the_command() {
        let a = parse(&s(&[
            "--listen",
            "4567=/run/assay/net/0.sock",
            "--proxy",
            "3128",
            "--route",
            "API.example.com:443=/run/assay/net/1.sock",
            "--",
            "claude",
            "-p",
            "hi",
        ]))
        .unwrap();
        assert_eq!(a.listen, [(4567, "/run/assay/net/0.sock".to_string())]);
        assert_eq!(a.proxy, Some(3128));
        assert_eq!(
            a.routes.get("api.example.com:443").map(String::as_str),
            Some("/run/assay/net/1.sock")
        );
        assert_eq!(a.argv, ["claude", "-p", "hi"]);
        assert!(parse(&s(&["--listen", "x"])).is_err());
        assert!(parse(&s(&["--"])).is_err());
    }

    #[tokio::test]
    async fn the_proxy_refuses_hosts_it_was_not_given() {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            let (tcp, _) = l.accept().await.unwrap();
            connect_proxy(tcp, Default::default()).await;
        });
        let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
        c.write_all(b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n")
            .await
            .unwrap();
        let mut reply = String::new();
        c.read_to_string(&mut reply).await.unwrap();
        assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
    }
}
