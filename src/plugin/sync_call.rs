//! Calls into a plugin made from inside the run's async executor. WASI's synchronous streams
//! (a guest writing to its stderr, a Rust panic message among them) block on the tokio
//! runtime, which a task of that runtime may not do: a call is made with the worker thread
//! handed back to the runtime (`block_in_place`). A panic on the host's side of a call is
//! caught and becomes the call's error, so a plugin never ends the run.

/// Runs `f`, a call into a plugin, where it may block; a panic in it is an `Err` with the
/// panic's message.
pub fn outside_async<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    let run = || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
            let text = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            format!("the host failed while the plugin ran: {text}")
        })
    };
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(run)
        }
        // Outside any runtime (or on a blocking thread of a single-threaded one), WASI makes
        // its own.
        _ => run(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_an_error_with_its_message() {
        let e = outside_async(|| -> u8 { panic!("boom") }).unwrap_err();
        assert!(e.contains("boom"), "{e}");
        assert_eq!(outside_async(|| 7), Ok(7));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn inside_a_task_a_nested_block_on_is_allowed() {
        let h = tokio::runtime::Handle::current();
        let v = outside_async(|| h.block_on(async { 5 })).unwrap();
        assert_eq!(v, 5);
    }
}
