//! Watching the kernel flush its memory-cgroup statistics, without flushing them.
//!
//! Reclaim decides from statistics that are summed only when flushed: by a kernel worker
//! about every 2 s, and at once by anyone who reads a cgroup's `memory.stat`
//! ([`crate::memcg_reading`]). A model of reclaim with those stale statistics needs the
//! flushes' times; reading `memory.stat` to find them would cause the very flushes it
//! wants to see. The `memcg:memcg_flush_stats` tracepoint (Linux 6.14 and later) fires
//! inside every flush attempt with the cgroup's id and whether it flushed (`force` or
//! `needs_flush`); enabling it in a tracefs instance of our own records the flushes and
//! changes nothing the kernel decides (the tracepoint only copies four fields into a
//! ring buffer). Root only.
//!
//! The instance is `bufcache-flushes-PID`, so that a process killed before it could
//! remove its instance leaves a name that says whose it was ([`remove_instance`],
//! [`remove_orphans`]).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags};
use rustix::fs::{Mode, OFlags};

use crate::LinuxError;

const TRACEFS: &str = "/sys/kernel/tracing";
const PREFIX: &str = "bufcache-flushes-";
const EVENT: &str = "events/memcg/memcg_flush_stats";

/// One flush the kernel did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flush {
    /// `CLOCK_MONOTONIC` when it happened, in ns (the instance's `mono` trace clock,
    /// the clock of `std::time::Instant`).
    pub mono_ns: u64,
    /// The cgroup flushed with its descendants: its cgroup id (the inode number of its
    /// directory; 1 is the root, which the periodic worker flushes).
    pub memcg_id: u64,
}

/// A tracefs instance recording the kernel's memory-cgroup statistics flushes; disabled
/// and removed when dropped.
#[derive(Debug)]
pub struct FlushTrace {
    dir: PathBuf,
    pipe: Option<File>,
    /// Bytes of a line not yet complete.
    partial: Vec<u8>,
}

impl FlushTrace {
    /// Start recording.
    pub fn start() -> Result<Self, LinuxError> {
        available()?;
        remove_orphans();
        let dir = instance_dir(std::process::id());
        std::fs::create_dir(&dir).map_err(LinuxError::io("creating", &dir))?;
        // From here on, dropping `trace` removes the instance whatever fails next.
        let mut trace = FlushTrace {
            dir,
            pipe: None,
            partial: Vec::new(),
        };
        trace.write("trace_clock", "mono")?;
        // Only attempts that flushed: the others (a reader that found too few updates
        // pending) leave the statistics as they were.
        trace.write(&format!("{EVENT}/filter"), "force == 1 || needs_flush == 1")?;
        trace.write(&format!("{EVENT}/enable"), "1")?;
        let path = trace.dir.join("trace_pipe");
        let fd = rustix::fs::open(&path, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty())
            .map_err(|e| LinuxError::io("opening", &path)(e.into()))?;
        trace.pipe = Some(File::from(fd));
        Ok(trace)
    }

    fn write(&self, file: &str, value: &str) -> Result<(), LinuxError> {
        let path = self.dir.join(file);
        std::fs::write(&path, value).map_err(LinuxError::io("writing", path.clone()))
    }

    /// The flushes recorded since the last call, waiting up to `timeout` for the first.
    pub fn next(&mut self, timeout: Duration) -> Result<Vec<Flush>, LinuxError> {
        let Some(pipe) = &mut self.pipe else {
            return Ok(Vec::new());
        };
        let mut fds = [PollFd::new(pipe, PollFlags::IN)];
        let wait = rustix::time::Timespec::try_from(timeout).ok();
        let path = self.dir.join("trace_pipe");
        poll(&mut fds, wait.as_ref()).map_err(|e| LinuxError::io("waiting on", &path)(e.into()))?;
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.partial.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(LinuxError::io("reading", &path)(e)),
            }
        }
        let complete = self
            .partial
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let lines: Vec<u8> = self.partial.drain(..complete).collect();
        Ok(String::from_utf8_lossy(&lines)
            .lines()
            .filter_map(parse_line)
            .collect())
    }
}

impl Drop for FlushTrace {
    fn drop(&mut self) {
        let _ = self.write(&format!("{EVENT}/enable"), "0");
        // The instance cannot be removed while its pipe is open.
        self.pipe = None;
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            tracing::warn!("removing {}: {e}", self.dir.display());
        }
    }
}

/// Whether this process can watch the flushes: the tracepoint is there (Linux 6.14 and
/// later) and tracefs is ours to read (root). Checked before a [`FlushTrace::start`], so
/// that a caller can choose what to run instead before it starts anything.
pub fn available() -> Result<(), LinuxError> {
    if Path::new(TRACEFS).join(EVENT).is_dir() {
        Ok(())
    } else {
        Err(LinuxError::Unsupported {
            what: "the memcg:memcg_flush_stats tracepoint",
            why: "/sys/kernel/tracing/events/memcg/memcg_flush_stats is missing \
                  (tracefs not mounted there, not root, or a kernel before 6.14)",
        })
    }
}

fn instance_dir(pid: u32) -> PathBuf {
    Path::new(TRACEFS)
        .join("instances")
        .join(format!("{PREFIX}{pid}"))
}

/// Remove the instance of process `pid` (killed before it could), if there is one.
pub fn remove_instance(pid: u32) {
    let dir = instance_dir(pid);
    if dir.is_dir() {
        let _ = std::fs::write(dir.join(EVENT).join("enable"), "0");
        if let Err(e) = std::fs::remove_dir(&dir) {
            tracing::warn!("removing {}: {e}", dir.display());
        }
    }
}

/// Remove the instances of processes that no longer run.
pub fn remove_orphans() {
    let Ok(entries) = std::fs::read_dir(Path::new(TRACEFS).join("instances")) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            remove_instance(pid);
        }
    }
}

/// A `trace_pipe` line of the event, e.g.
/// `kworker/u8:3-32709 [001] ..... 32267.832129: memcg_flush_stats: memcg_id=1
/// stats_updates=192 force=1 needs_flush=1`; anything else is `None`.
pub fn parse_line(line: &str) -> Option<Flush> {
    let (head, fields) = line.split_once(": memcg_flush_stats: ")?;
    let stamp = head.rsplit(' ').next()?;
    let (secs, frac) = stamp.split_once('.')?;
    let frac_ns: u64 = format!("{frac:0<9}").get(..9)?.parse().ok()?;
    let mono_ns = secs.parse::<u64>().ok()?.checked_mul(1_000_000_000)? + frac_ns;
    let memcg_id = fields
        .split_whitespace()
        .find_map(|f| f.strip_prefix("memcg_id="))?
        .parse()
        .ok()?;
    Some(Flush { mono_ns, memcg_id })
}

/// The cgroup ids whose flushes reach this process's memory cgroup: its own and its
/// ancestors' (a flush covers the cgroup's subtree), root included. Empty where the
/// process's memory cgroup cannot be found.
pub fn own_memcg_ids() -> Vec<u64> {
    use std::os::unix::fs::MetadataExt;
    let Some((dir, _)) = crate::cgroup::own_cgroup() else {
        return Vec::new();
    };
    dir.ancestors()
        .take_while(|d| d.starts_with("/sys/fs/cgroup") && *d != Path::new("/sys/fs/cgroup"))
        .filter_map(|d| std::fs::metadata(d).ok().map(|m| m.ino()))
        .collect()
}

/// `CLOCK_MONOTONIC` now, in ns: the trace's clock.
pub fn mono_now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64).saturating_mul(1_000_000_000) + t.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_lines_parse() {
        let line = "    kworker/u8:3-32709   [001] ..... 32267.832129: memcg_flush_stats: \
                    memcg_id=1 stats_updates=192 force=1 needs_flush=1";
        assert_eq!(
            parse_line(line),
            Some(Flush {
                mono_ns: 32_267_832_129_000,
                memcg_id: 1
            })
        );
        let reader = "cat-5 [000] d..1. 7.5: memcg_flush_stats: memcg_id=812 stats_updates=0 \
                      force=0 needs_flush=1";
        assert_eq!(
            parse_line(reader),
            Some(Flush {
                mono_ns: 7_500_000_000,
                memcg_id: 812
            })
        );
        assert_eq!(parse_line("# tracer: nop"), None);
        assert_eq!(
            parse_line("x [000] ..... 1.0: sched_switch: prev_comm=a"),
            None
        );
    }

    #[test]
    fn the_clock_moves_forward() {
        let a = mono_now_ns();
        std::thread::sleep(Duration::from_millis(2));
        assert!(mono_now_ns() >= a + 2_000_000);
    }
}
