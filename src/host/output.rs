//! Writing to the terminal without ever panicking: a reader that went away (`assay run 2>&1 |
//! head`) ends that stream quietly.

/// Where [`emit`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Set once a stream's reader is gone (or writing to it failed): nothing more is tried there.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static STDERR_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `text` to stdout or stderr through its lock, and flushes it. A reader that closed
/// early (`| head -c 10`) is a quiet end of that stream, never a panic, and the command's exit
/// code stays what it would have been; any other failure to write stdout (a full disk) is said
/// once on stderr.
pub fn emit(stream: Stream, text: &str) {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    let closed = match stream {
        Stream::Stdout => &STDOUT_CLOSED,
        Stream::Stderr => &STDERR_CLOSED,
    };
    if closed.load(Ordering::Relaxed) {
        return;
    }
    let written = match stream {
        Stream::Stdout => {
            let mut out = std::io::stdout().lock();
            write!(out, "{text}").and_then(|()| out.flush())
        }
        Stream::Stderr => {
            let mut err = std::io::stderr().lock();
            write!(err, "{text}").and_then(|()| err.flush())
        }
    };
    if let Err(e) = written {
        closed.store(true, Ordering::Relaxed);
        if stream == Stream::Stdout && e.kind() != std::io::ErrorKind::BrokenPipe {
            emit(
                Stream::Stderr,
                &format!("error: cannot write to standard output: {e}\n"),
            );
        }
    }
}
