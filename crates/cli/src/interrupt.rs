//! SIGINT and SIGTERM remove the temporary files of unfinished atomic writes.
//!
//! `trace::Output` writes a regular file into a hidden temporary file and renames it into
//! place at the end; a user pressing Ctrl-C in between would otherwise find
//! `.NAME.tmp-PID-N` files left behind. A thread waits for either signal (through tokio's
//! signal handling, so no `unsafe` handler code of ours), removes every listed temporary
//! file and exits with the shell's status for the signal (130 or 143).

use anyhow::{Context, Result};
use tokio::signal::unix::{signal, SignalKind};

/// Install the handler. Not for `serve`, which stops gracefully on Ctrl-C itself.
pub fn remove_temp_files_on_interrupt() -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .context("signal thread runtime")?;
    // Registered here, before any work starts, so an early signal is not missed.
    let (mut interrupt, mut terminate) = {
        let _inside = rt.enter();
        (
            signal(SignalKind::interrupt()).context("SIGINT handler")?,
            signal(SignalKind::terminate()).context("SIGTERM handler")?,
        )
    };
    std::thread::Builder::new()
        .name("interrupt".into())
        .spawn(move || {
            let (name, status) = rt.block_on(async {
                tokio::select! {
                    _ = interrupt.recv() => ("SIGINT", 130),
                    _ = terminate.recv() => ("SIGTERM", 143),
                }
            });
            let _frozen = trace::remove_unfinished_outputs();
            eprintln!("interrupted by {name}: unfinished output files removed");
            std::process::exit(status);
        })
        .context("signal thread")?;
    Ok(())
}
