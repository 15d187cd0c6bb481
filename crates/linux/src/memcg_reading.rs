//! Reading how much page cache a process's own memory cgroup holds, two ways that
//! differ in what the reading does to the kernel.
//!
//! A memory cgroup's statistics (`memory.stat`, and the per-cgroup LRU sizes and
//! workingset counters that reclaim consults) are kept per CPU and summed into the
//! cgroup's totals only when flushed (`mem_cgroup_flush_stats`, mm/memcontrol.c).
//! Reading `memory.stat` flushes them. Reclaim itself does not: it calls
//! `mem_cgroup_flush_stats_ratelimited`, which flushes only when the periodic flush
//! (every 2 s) is a whole period late, so between periodic flushes reclaim decides
//! from totals up to 2 s old: whether to shrink the active list at all
//! (`prepare_scan_control` compares the flushed `WORKINGSET_ACTIVATE_FILE` with its last
//! snapshot and calls `inactive_is_low` on the flushed list sizes), and whether a
//! refaulting page is activated (`workingset_test_recent` compares the refault distance
//! with the flushed `NR_ACTIVE_FILE`). A process that reads `memory.stat` often
//! therefore changes how its cgroup's page cache is reclaimed. The cgroup's charge
//! (`memory.usage_in_bytes`, `memory.current`) is a page counter updated at once and
//! read without a flush.
//!
//! So [`CacheReading::Stat`] is exact and flushes; [`CacheReading::Usage`] estimates the
//! page cache as the charge less the process's own anonymous memory, and leaves the
//! statistics alone (it also counts kernel memory charged to the cgroup, a few MiB of
//! sockets and inodes, as cache).

use std::path::Path;

use crate::cgroup::{own_cgroup, Version};

/// Where a reading of the page cache comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheReading {
    /// `memory.stat`'s `cache` (v1) or `file` (v2): exact, and flushes the statistics.
    Stat,
    /// The charge (`memory.usage_in_bytes`, v1; `memory.current`, v2) less this
    /// process's `RssAnon`: an estimate that flushes nothing.
    Usage,
}

impl CacheReading {
    /// `stat` or `usage`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "stat" => Some(CacheReading::Stat),
            "usage" => Some(CacheReading::Usage),
            _ => None,
        }
    }

    /// The name [`CacheReading::parse`] takes.
    pub fn name(self) -> &'static str {
        match self {
            CacheReading::Stat => "stat",
            CacheReading::Usage => "usage",
        }
    }
}

/// `memory.stat`'s key for page cache in `version`.
pub(crate) fn cache_key(version: Version) -> &'static str {
    match version {
        Version::V2 => "file",
        Version::V1 => "cache",
    }
}

/// `key`'s value in a `memory.stat` text.
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

/// `key` of the `memory.stat` in cgroup directory `dir` (reading it flushes).
pub(crate) fn stat_field(dir: &Path, key: &str) -> Option<u64> {
    field(&std::fs::read_to_string(dir.join("memory.stat")).ok()?, key)
}

/// Kibibytes of a `/proc/PID/status` line such as `RssAnon:    3012 kB`, in bytes.
fn status_bytes(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        Some(kib << 10)
    })
}

/// The page cache charged to this process's memory cgroup now, in bytes, read as
/// `reading` says. `None` outside a memory cgroup of its own (the root cgroup's
/// figures are the whole machine's) or where the files cannot be read.
pub fn own_cache_bytes(reading: CacheReading) -> Option<u64> {
    let (dir, version) = own_cgroup()?;
    let root = Path::new("/sys/fs/cgroup");
    if dir == root || dir == root.join("memory") {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    cache_bytes_in(&dir, version, reading, status_bytes(&status, "RssAnon")?)
}

/// The page cache of the cgroup at `dir`, read as `reading` says; `anon_bytes` is what
/// the charge holds besides page cache (the process's own anonymous memory).
fn cache_bytes_in(
    dir: &Path,
    version: Version,
    reading: CacheReading,
    anon_bytes: u64,
) -> Option<u64> {
    match reading {
        CacheReading::Stat => stat_field(dir, cache_key(version)),
        CacheReading::Usage => {
            let charge_file = match version {
                Version::V2 => "memory.current",
                Version::V1 => "memory.usage_in_bytes",
            };
            let charge: u64 = std::fs::read_to_string(dir.join(charge_file))
                .ok()?
                .trim()
                .parse()
                .ok()?;
            Some(charge.saturating_sub(anon_bytes))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_and_status_lines_parse() {
        let stat = "cache 10321920\nrss 8232960\nworkingset_refault_file 4710\n";
        assert_eq!(field(stat, "cache"), Some(10_321_920));
        assert_eq!(field(stat, "workingset_refault_file"), Some(4710));
        assert_eq!(field(stat, "rss_huge"), None);
        let status = "Name:\tbufcache\nRssAnon:\t    3012 kB\nRssFile:\t  100 kB\n";
        assert_eq!(status_bytes(status, "RssAnon"), Some(3012 << 10));
        assert_eq!(status_bytes(status, "RssShmem"), None);
        assert_eq!(CacheReading::parse("stat"), Some(CacheReading::Stat));
        assert_eq!(
            CacheReading::parse("usage").map(CacheReading::name),
            Some("usage")
        );
        assert_eq!(CacheReading::parse("cache"), None);
    }

    /// As root (how bufcache's machines run), both readings find their files in a
    /// cgroup made for the test (empty, so both are small). Without root no cgroup can
    /// be made, which must be an error.
    #[test]
    fn both_readings_read_a_real_cgroup() {
        let name = format!("bufcache-reading-{}", std::process::id());
        let made = crate::MemoryCgroup::create(&name, 64 << 20);
        if !rustix::process::geteuid().is_root() {
            assert!(made.is_err(), "a memory cgroup was made without root");
            return;
        }
        let cg = made.unwrap_or_else(|e| panic!("root cannot make a memory cgroup here: {e}"));
        let stat = cache_bytes_in(cg.path(), cg.version(), CacheReading::Stat, 0);
        let usage = cache_bytes_in(cg.path(), cg.version(), CacheReading::Usage, 0);
        assert!(stat.is_some_and(|b| b < 1 << 20), "{stat:?}");
        assert!(usage.is_some_and(|b| b < 4 << 20), "{usage:?}");
        assert_eq!(
            cache_bytes_in(cg.path(), cg.version(), CacheReading::Usage, u64::MAX),
            Some(0)
        );
    }
}
