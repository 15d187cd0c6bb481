//! The simulated system: buffer cache, write policy, cleaning, disks. Plain data with one
//! `validate()`; the scenario file deserializes straight into these types.

use serde::{Deserialize, Serialize};

use super::disk::{Scheduler, ServiceTime};
use super::time::{check_time, Nanos, NS_PER_S};

/// When dirty buffers are written to disk (Kotz & Ellis §3.3.2, plus the Unix flusher).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WritePolicy {
    /// Every write request starts a disk write of the buffers it touched.
    WriteThru,
    /// A dirty buffer is written only when it is needed for another block.
    WriteBack,
    /// A dirty buffer is written as soon as it becomes replaceable: no process has it as
    /// its most recently used block any more.
    WriteFree,
    /// A buffer is written as soon as every byte of it has been written; otherwise as
    /// WriteBack.
    WriteFull,
    /// WriteBack plus a flusher that wakes every `flush_interval_s` and writes buffers
    /// dirty for longer than `flush_age_s` (the Unix `update` daemon: 5 s and 30 s).
    Delayed,
}

impl WritePolicy {
    /// Every write policy.
    pub const ALL: [WritePolicy; 5] = [
        WritePolicy::WriteThru,
        WritePolicy::WriteBack,
        WritePolicy::WriteFree,
        WritePolicy::WriteFull,
        WritePolicy::Delayed,
    ];

    /// The short name used in scenarios and reports.
    pub fn name(self) -> &'static str {
        match self {
            WritePolicy::WriteThru => "writethru",
            WritePolicy::WriteBack => "writeback",
            WritePolicy::WriteFree => "writefree",
            WritePolicy::WriteFull => "writefull",
            WritePolicy::Delayed => "delayed",
        }
    }
}

/// How a process that needs a buffer gets a clean one when the replacement policy's
/// victims are dirty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Cleaner {
    /// BSD/HP-UX `getnewbuf`: walk the victims in replacement order, start a write on
    /// every dirty one met, and take the first clean one (XMF appendix I). Written buffers
    /// keep their place in the replacement order.
    #[default]
    Scan,
    /// Take the first victim; if it is dirty, write it and wait for that write.
    Sync,
    /// XMF's clock daemon: a pool of clean free buffers refilled, when it runs low, by
    /// evicting just enough buffers (writing the dirty ones first). Buffers in the pool keep
    /// their contents until reused, and a hit takes one back.
    Daemon,
}

impl Cleaner {
    /// The short name used in scenarios and reports.
    pub fn name(self) -> &'static str {
        match self {
            Cleaner::Scan => "scan",
            Cleaner::Sync => "sync",
            Cleaner::Daemon => "daemon",
        }
    }
}

/// How file blocks map to disks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Files lie back to back in one logical block space, interleaved block by block
    /// round-robin over the disks (Kotz & Ellis; one disk: plain back-to-back layout).
    #[default]
    Interleaved,
    /// Each file lies whole on disk `file % count`, back to back with the other files
    /// there.
    PerFile,
}

/// The buffer cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// Bytes per block and per buffer.
    pub block_bytes: u32,
    /// Buffers in the cache; 0 turns the cache off (every request goes to disk).
    pub buffers: u32,
    /// Replacement policy, as `bufcache policies` names it, with parameters
    /// (`toss`, `lru`, `s3fifo:small=0.1`).
    pub policy: String,
    /// When dirty buffers are written.
    pub write_policy: WritePolicy,
    /// How clean buffers are found.
    pub cleaner: Cleaner,
    /// Daemon cleaner: refill the free pool when it falls below this many buffers
    /// (0: 1/32 of the cache, at least 1).
    pub pool_low: u32,
    /// Daemon cleaner: refill up to this many buffers (0: twice `pool_low`).
    pub pool_high: u32,
    /// Flusher period in seconds (write policy `delayed`).
    pub flush_interval_s: f64,
    /// Flusher writes buffers dirty for at least this long, in seconds.
    pub flush_age_s: f64,
    /// Blocks read ahead when a process reads sequentially (0: off).
    pub read_ahead: u32,
    /// Admission filter asked on every miss, as `bufcache replay --admission` names it
    /// (`secondhit`, `prob:p=0.1`); none when absent. A refused block is served by
    /// uncached I/O and takes no buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission: Option<String>,
    /// Prefetcher asked after every block access, as `bufcache replay --prefetch` names it
    /// (`obl`, `readahead:depth=4`); none when absent. Its prefetches are asynchronous
    /// disk reads into buffers, like `read_ahead`'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<String>,
    /// CPU time charged to a process for each file-system call, in microseconds.
    pub syscall_us: f64,
    /// CPU time for each cached block a call touches (lookup, copy, bookkeeping), in
    /// microseconds.
    pub block_us: f64,
    /// Break write ordering on purpose: the flusher, cleaners and syncs write dirty
    /// buffers whatever they must follow. Only for showing that the ordering checker
    /// notices (`violations` > 0).
    pub ignore_ordering: bool,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            block_bytes: 4096,
            buffers: 1024,
            policy: "lru".into(),
            write_policy: WritePolicy::Delayed,
            cleaner: Cleaner::Scan,
            pool_low: 0,
            pool_high: 0,
            flush_interval_s: 5.0,
            flush_age_s: 30.0,
            read_ahead: 0,
            admission: None,
            prefetch: None,
            syscall_us: 0.0,
            block_us: 0.0,
            ignore_ordering: false,
        }
    }
}

/// The disks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiskConfig {
    /// Number of independent disks.
    pub count: u16,
    /// How blocks are placed on them.
    pub layout: Layout,
    /// Queue discipline of every disk.
    pub scheduler: Scheduler,
    /// Service time of one request.
    pub service: ServiceTime,
}

impl Default for DiskConfig {
    fn default() -> Self {
        DiskConfig {
            count: 1,
            layout: Layout::Interleaved,
            scheduler: Scheduler::Fifo,
            service: ServiceTime::Constant { ms: 10.0 },
        }
    }
}

/// The whole simulated system.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SystemConfig {
    /// The buffer cache.
    pub cache: CacheConfig,
    /// The disks.
    pub disks: DiskConfig,
    /// After the last process ends, write every dirty buffer and count the time until the
    /// disks are idle (so that a policy cannot look fast by leaving data unwritten).
    pub final_sync: bool,
}

impl Default for SystemConfig {
    fn default() -> Self {
        SystemConfig {
            cache: CacheConfig::default(),
            disks: DiskConfig::default(),
            final_sync: true,
        }
    }
}

/// A configuration value that cannot work: the key and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ConfigProblem {
    /// Dotted key path (`cache.block_bytes`).
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

fn problem(key: &str, message: impl Into<String>) -> ConfigProblem {
    ConfigProblem {
        key: key.into(),
        message: message.into(),
    }
}

impl SystemConfig {
    /// Check every value; the error names the key and what is allowed.
    pub fn validate(&self) -> Result<(), ConfigProblem> {
        let c = &self.cache;
        if !(512..=1 << 20).contains(&c.block_bytes) {
            return Err(problem(
                "cache.block_bytes",
                format!("must be between 512 and 1048576, got {}", c.block_bytes),
            ));
        }
        if c.buffers > 0 {
            let spec = policy::PolicySpec::parse(&c.policy)
                .map_err(|e| problem("cache.policy", e.to_string()))?;
            let built = spec
                .build(&policy::BuildContext::new(u64::from(c.buffers), 0))
                .map_err(|e| problem("cache.policy", e.to_string()))?;
            if policy::Policy::needs_future(&built) {
                return Err(problem(
                    "cache.policy",
                    format!("`{}` needs future knowledge, which a simulation that runs forward does not have", c.policy),
                ));
            }
        }
        if let Some(text) = &c.admission {
            policy::AdmissionSpec::parse(text)
                .and_then(|spec| spec.check())
                .map_err(|e| problem("cache.admission", e.to_string()))?;
        }
        if let Some(text) = &c.prefetch {
            policy::PrefetchSpec::parse(text)
                .and_then(|spec| spec.check())
                .map_err(|e| problem("cache.prefetch", e.to_string()))?;
        }
        if c.write_policy == WritePolicy::Delayed {
            let interval = check_time(c.flush_interval_s, NS_PER_S, "seconds")
                .map_err(|m| problem("cache.flush_interval_s", m))?;
            // The flusher wakes again `interval` after each wake-up: at 0 ns it would wake
            // at the same instant for ever.
            if interval == 0 {
                return Err(problem(
                    "cache.flush_interval_s",
                    format!(
                        "must be at least 1 ns (1e-9 seconds), got {}",
                        c.flush_interval_s
                    ),
                ));
            }
            check_time(c.flush_age_s, NS_PER_S, "seconds")
                .map_err(|m| problem("cache.flush_age_s", m))?;
        }
        for (key, v) in [
            ("cache.syscall_us", c.syscall_us),
            ("cache.block_us", c.block_us),
        ] {
            check_time(v, 1e3, "microseconds").map_err(|m| problem(key, m))?;
        }
        if c.buffers > 0 && c.pool_high > 0 && c.pool_high >= c.buffers {
            return Err(problem(
                "cache.pool_high",
                format!(
                    "must be below the number of buffers ({}), got {}",
                    c.buffers, c.pool_high
                ),
            ));
        }
        if c.pool_low > 0 && c.pool_high > 0 && c.pool_low > c.pool_high {
            return Err(problem("cache.pool_low", "must not exceed cache.pool_high"));
        }
        if self.disks.count == 0 {
            return Err(problem("disks.count", "must be at least 1"));
        }
        self.disks
            .service
            .validate()
            .map_err(|m| problem("disks.service", m))?;
        Ok(())
    }

    /// The daemon's (low, high) free-pool watermarks in buffers.
    pub fn pool_watermarks(&self) -> (u32, u32) {
        let c = &self.cache;
        let low = if c.pool_low > 0 {
            c.pool_low
        } else {
            (c.buffers / 32).max(1)
        };
        let high = if c.pool_high > 0 {
            c.pool_high
        } else {
            (2 * low).min(c.buffers.saturating_sub(1)).max(low)
        };
        (low, high)
    }
}

/// Microseconds (as written in configurations) to nanoseconds.
pub fn us_to_ns(us: f64) -> Nanos {
    (us * 1e3).round() as Nanos
}

/// Seconds to nanoseconds.
pub fn s_to_ns(s: f64) -> Nanos {
    (s * 1e9).round() as Nanos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        SystemConfig::default().validate().unwrap();
    }

    #[test]
    fn bad_values_name_their_key() {
        let mut c = SystemConfig::default();
        c.cache.block_bytes = 100;
        assert_eq!(c.validate().unwrap_err().key, "cache.block_bytes");
        let mut c = SystemConfig::default();
        c.cache.policy = "nosuch".into();
        assert_eq!(c.validate().unwrap_err().key, "cache.policy");
        let mut c = SystemConfig::default();
        c.cache.policy = "belady".into();
        assert!(c.validate().unwrap_err().message.contains("future"));
        let mut c = SystemConfig::default();
        c.disks.count = 0;
        assert_eq!(c.validate().unwrap_err().key, "disks.count");
        let mut c = SystemConfig::default();
        c.cache.admission = Some("bloom".into());
        let e = c.validate().unwrap_err();
        assert_eq!(e.key, "cache.admission");
        assert!(e.message.contains("known: always, prob, secondhit"), "{e}");
        let mut c = SystemConfig::default();
        c.cache.prefetch = Some("readahead:depth=0".into());
        assert_eq!(c.validate().unwrap_err().key, "cache.prefetch");
    }

    #[test]
    fn times_the_clock_cannot_hold_are_refused() {
        let refused = |set: fn(&mut SystemConfig)| {
            let mut c = SystemConfig::default();
            set(&mut c);
            c.validate().unwrap_err()
        };
        // A flusher period that rounds to 0 ns would wake the flusher at the same instant
        // for ever.
        let e = refused(|c| c.cache.flush_interval_s = 1e-10);
        assert_eq!(e.key, "cache.flush_interval_s");
        assert!(e.message.contains("at least 1 ns"), "{e}");
        for (key, e) in [
            (
                "cache.flush_interval_s",
                refused(|c| c.cache.flush_interval_s = 1e300),
            ),
            (
                "cache.flush_age_s",
                refused(|c| c.cache.flush_age_s = 1e300),
            ),
            ("cache.syscall_us", refused(|c| c.cache.syscall_us = 1e300)),
            (
                "cache.block_us",
                refused(|c| c.cache.block_us = f64::INFINITY),
            ),
            (
                "disks.service",
                refused(|c| c.disks.service = ServiceTime::Constant { ms: 1e300 }),
            ),
            (
                "disks.service",
                refused(|c| {
                    c.disks.service = ServiceTime::Linear {
                        min_ms: 1.0,
                        max_ms: 1e300,
                        span_blocks: 10,
                    }
                }),
            ),
        ] {
            assert_eq!(e.key, key);
            assert!(e.message.contains("2^64 ns"), "{e}");
        }
    }

    #[test]
    fn pool_watermarks_default_to_a_small_fraction() {
        let mut c = SystemConfig::default();
        c.cache.buffers = 1024;
        assert_eq!(c.pool_watermarks(), (32, 64));
        c.cache.buffers = 8;
        assert_eq!(c.pool_watermarks(), (1, 2));
    }
}
