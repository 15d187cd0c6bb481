//! Output helpers: stdout that tolerates a closed pipe, progress bars and number
//! formatting; atomic file writes, CSV quoting and plain-text tables come from `report`.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
#[cfg(test)]
use report::csv_field;
pub use report::csv_line;

/// Write `text` to stdout. A closed pipe (`bufcache ... | head`) is not an error.
pub fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("writing to standard output"),
    }
}

/// Say what was written to `output`: on standard output, unless the data itself went
/// there (`-`), when the note goes to standard error so that the data stays clean.
pub fn emit_note(output: &Path, text: &str) -> Result<()> {
    if output.as_os_str() == "-" {
        eprint!("{text}");
        Ok(())
    } else {
        emit(text)
    }
}

/// Write `bytes` to `path` as every output is written ([`report::write_atomic`], by the
/// rules of [`trace::Output`]): atomically for a regular file or a new path, through for
/// a FIFO or a device, `-` for standard output.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(report::write_atomic(path, bytes)?)
}

/// The machine's memory in bytes (`MemTotal` of `/proc/meminfo`), or `None` where that
/// file does not exist or cannot be read.
pub fn memory_total_bytes() -> Option<u64> {
    sim::sweep::memory_total_bytes()
}

/// Refuse up front a run that would need `bytes` when the machine has less in all: an
/// allocation failure would abort the process with no explanation, long after the typo.
pub fn ensure_fits_in_memory(bytes: u64, what: &str) -> Result<()> {
    if let Some(total) = memory_total_bytes() {
        anyhow::ensure!(
            bytes <= total,
            "{what} would need about {} of memory, more than this machine has ({})",
            human_bytes(bytes),
            human_bytes(total)
        );
    }
    Ok(())
}

/// A progress bar over `total` steps on stderr, drawn only when stderr is a terminal.
pub fn progress(total: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{msg} [{bar:40}] {human_pos}/{human_len} requests ({per_sec}, eta {eta})",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(what.to_string());
    bar
}

/// A plain-text table: the first column left-aligned, the others right-aligned, columns
/// separated by two spaces (see [`report::Table::to_text`]).
pub fn table(header: &[impl AsRef<str>], rows: &[Vec<String>]) -> String {
    let mut t = report::Table::new(header.iter().map(|h| h.as_ref().to_string()));
    for row in rows {
        t.push_row(row.iter().cloned());
    }
    t.to_text()
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes with a binary unit (`1.5 MiB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_line(&["x", "y,z"]), "x,\"y,z\"\n");
        let t = table(&["a", "bb"], &[vec!["long".into(), "1".into()]]);
        assert_eq!(t, "a     bb\nlong   1\n");
    }
}
