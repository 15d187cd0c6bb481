//! What the server is told, checked once by [`ServeConfig::validate`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cgroup_poll::CgroupPoll;
use crate::ServeError;

/// How the next queued request is chosen: the pluggable part of the one scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedulerChoice {
    /// First come, first served: NeST's cache-oblivious default.
    Fifo,
    /// Algorithmic mirroring: a simulated cache of `policy` holding `size_bytes`, fed
    /// with the requests as they are scheduled; predicted hits go first.
    Mirror {
        /// A policy spec as in `bufcache policies` (`clock`, `lru`, `arc:p=...`).
        policy: String,
        /// The estimate of the OS cache's size, in bytes.
        size_bytes: u64,
        /// One mirror, or a bank of them that learns from read times
        /// ([`crate::adaptive`]).
        bank: MirrorBanking,
    },
    /// Probe a few pages of each queued request with `preadv2(RWF_NOWAIT)`: a read that
    /// would block is a miss.
    NoWait,
    /// Ask `cachestat(2)` how many of the request's pages are cached: the kernel's own
    /// answer (Linux 6.5 and later).
    Cachestat,
    /// Serve through `bufcache-pool` (`O_DIRECT`, so the page cache plays no part), whose
    /// residency map is exact.
    Pool {
        /// The pool's policy spec.
        policy: String,
        /// The pool's capacity in bytes.
        capacity_bytes: u64,
    },
}

/// Whether the mirror is one model or a bank of variants of it judged by read times
/// ([`crate::adaptive::MirrorBank`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MirrorBanking {
    /// One mirror of the given policy and size.
    Single,
    /// The size corrected from the reads' own times: mirrors at 1/8 to 8 times it.
    Sizes,
    /// The phase of the policy's timer (`linux:stats_ms=2000`) learned online: `count`
    /// mirrors with their flushes spread over the period, a read judged a hit when
    /// its span (slot granted to read end) took at most `judge_us`, as the offline
    /// bank judges a request log ([`crate::replay_bank`]).
    Phases {
        /// Mirrors in the bank (1 to 32).
        count: u64,
        /// The hit/miss threshold on a request's span, µs.
        judge_us: u64,
    },
}

impl SchedulerChoice {
    /// The short name used on the command line and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            SchedulerChoice::Fifo => "fifo",
            SchedulerChoice::Mirror { .. } => "mirror",
            SchedulerChoice::NoWait => "nowait",
            SchedulerChoice::Cachestat => "cachestat",
            SchedulerChoice::Pool { .. } => "pool",
        }
    }

    /// The names accepted by `--scheduler`.
    pub const NAMES: &'static [&'static str] = &["fifo", "mirror", "nowait", "cachestat", "pool"];
}

/// Everything `bufcache serve` needs.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The directory served; nothing outside it is ever opened.
    pub root: PathBuf,
    /// Where to listen. Loopback unless [`ServeConfig::allow_remote`].
    pub listen: SocketAddr,
    /// Permit a non-loopback address (off by default: a test server must not be reachable
    /// from elsewhere by accident).
    pub allow_remote: bool,
    /// Requests in service at once (NeST's configurable limit).
    pub in_service: usize,
    /// Requests that may wait; one more is answered 503 with `Retry-After`.
    pub queue_capacity: usize,
    /// Open connections at most; more are closed at once.
    pub max_connections: usize,
    /// The scheduler's choice of next request.
    pub scheduler: SchedulerChoice,
    /// A client must send a request's whole header within this time.
    pub header_timeout: Duration,
    /// A connection on which nothing moves (no byte read or written) for this long is
    /// closed: idle keep-alive connections and clients that stop reading their response.
    pub idle_timeout: Duration,
    /// Request line plus headers at most, in bytes (at least 8 KiB, hyper's floor).
    pub max_header_bytes: usize,
    /// The largest response body the server will read into memory; larger ranges are
    /// refused (ask for a smaller `Range`).
    pub max_body_bytes: u64,
    /// Files kept open between requests ([`crate::open_files`]); 0: none, every request
    /// resolves and opens its file.
    pub open_files: usize,
    /// How long a cached path is trusted before it is walked again.
    pub open_file_ttl: Duration,
    /// Ask the page cache whether each request's data was cached (one `cachestat(2)` per
    /// request) and say so in `x-bufcache-actual`. The experiment and the load
    /// generator's hit/miss split need it; a server that only serves does not. The pool
    /// always answers (its map costs no system call).
    pub report_actual: bool,
    /// Write one line per GET served to this file ([`crate::trace_log`]): the schedule
    /// order, the prediction, the cached pages at service start, the service's times.
    /// Implies `report_actual`.
    pub trace: Option<PathBuf>,
    /// Read the server's own memory cgroup's page-cache total periodically
    /// ([`crate::cgroup_poll`]).
    pub cgroup_poll: Option<CgroupPoll>,
    /// The mirror takes its size from [`ServeConfig::cgroup_poll`]'s readings (needs
    /// both, and the plain mirror: the adaptive one sizes itself from read times).
    pub mirror_track: bool,
    /// The mirror's model is told each time the kernel flushes the server's memory
    /// cgroup's statistics, watched through a tracepoint ([`crate::flush_watch`]; root,
    /// Linux 6.14 and later). Models that ignore flushes (all but
    /// `linux:stats_events=true`) predict as without it: a control for the watching. A
    /// bank of phases keeps its timers; the flushes then only go to the request log, to
    /// replay the bank's own schedule against the kernel's real flushes. Not with the
    /// bank of sizes.
    pub mirror_flush_events: bool,
}

impl ServeConfig {
    /// Defaults for serving `root`: 127.0.0.1:8080, 8 in service, 1024 queued, FIFO,
    /// 4096 files kept open for 2 s, no `cachestat` per request.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ServeConfig {
            root: root.into(),
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            allow_remote: false,
            in_service: 8,
            queue_capacity: 1024,
            max_connections: 4096,
            scheduler: SchedulerChoice::Fifo,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_header_bytes: 16 * 1024,
            max_body_bytes: 64 << 20,
            open_files: 4096,
            open_file_ttl: Duration::from_secs(2),
            report_actual: false,
            trace: None,
            cgroup_poll: None,
            mirror_track: false,
            mirror_flush_events: false,
        }
    }

    /// Refuse what cannot work or would be unsafe.
    pub fn validate(&self) -> Result<(), ServeError> {
        if !self.allow_remote && !self.listen.ip().is_loopback() {
            return Err(ServeError::config(
                "listen",
                format!(
                    "{} is not a loopback address; pass --allow-remote to listen on it",
                    self.listen
                ),
            ));
        }
        if self.in_service == 0 {
            return Err(ServeError::config("in_service", "must be at least 1"));
        }
        if self.max_connections == 0 {
            return Err(ServeError::config("max_connections", "must be at least 1"));
        }
        if self.max_header_bytes < 8192 {
            return Err(ServeError::config(
                "max_header_bytes",
                format!("{} is below hyper's floor of 8192", self.max_header_bytes),
            ));
        }
        if self.header_timeout.is_zero() || self.idle_timeout.is_zero() {
            return Err(ServeError::config("timeouts", "must be above zero"));
        }
        if self.max_body_bytes == 0 {
            return Err(ServeError::config("max_body_bytes", "must be above zero"));
        }
        if self.cgroup_poll.is_some_and(|p| p.every.is_zero()) {
            return Err(ServeError::config(
                "cgroup poll",
                "the interval must be above zero",
            ));
        }
        let plain_mirror = matches!(
            self.scheduler,
            SchedulerChoice::Mirror {
                bank: MirrorBanking::Single,
                ..
            }
        );
        let phase_bank = matches!(
            self.scheduler,
            SchedulerChoice::Mirror {
                bank: MirrorBanking::Phases { .. },
                ..
            }
        );
        if self.mirror_flush_events && !plain_mirror && !phase_bank {
            return Err(ServeError::config(
                "mirror flush events",
                "need the mirror scheduler (a plain mirror or a bank of phases)",
            ));
        }
        if self.mirror_track && (!plain_mirror || self.cgroup_poll.is_none()) {
            return Err(ServeError::config(
                "mirror track",
                "needs the plain mirror scheduler (not a bank) and a cgroup poll to follow",
            ));
        }
        match &self.scheduler {
            SchedulerChoice::Mirror { size_bytes: 0, .. } => {
                Err(ServeError::config("mirror size", "must be above zero"))
            }
            SchedulerChoice::Pool {
                capacity_bytes: 0, ..
            } => Err(ServeError::config("pool size", "must be above zero")),
            _ => Ok(()),
        }
    }
}

/// Parse a size such as `4096`, `80M`, `80MiB`, `1.5G` (binary units).
pub fn parse_size(text: &str) -> Result<u64, ServeError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let scale: u64 = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => {
            return Err(ServeError::config(
                "size",
                format!("{text:?}: unknown unit {unit:?} (use K, M, G or T)"),
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| ServeError::config("size", format!("{text:?} is not a number")))?;
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(ServeError::config(
            "size",
            format!("{text:?} is out of range"),
        ));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("80M").unwrap(), 80 << 20);
        assert_eq!(parse_size("80MiB").unwrap(), 80 << 20);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("2k").unwrap(), 2048);
        assert!(parse_size("80X").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("M").is_err());
    }

    #[test]
    fn non_loopback_needs_permission() {
        let mut c = ServeConfig::new("/tmp");
        c.validate().unwrap();
        c.listen = "0.0.0.0:80".parse().unwrap();
        assert!(c.validate().is_err());
        c.allow_remote = true;
        c.validate().unwrap();
        c.in_service = 0;
        assert!(c.validate().is_err());
    }

    #[test]
    fn tracking_needs_a_plain_mirror_and_a_poll() {
        use linux::memcg_reading::CacheReading;
        let mut c = ServeConfig::new("/tmp");
        c.mirror_track = true;
        assert!(c.validate().is_err(), "fifo cannot track");
        c.scheduler = SchedulerChoice::Mirror {
            policy: "linux".into(),
            size_bytes: 80 << 20,
            bank: MirrorBanking::Single,
        };
        assert!(c.validate().is_err(), "nothing to follow");
        let poll = CgroupPoll {
            reading: CacheReading::Usage,
            every: Duration::from_millis(50),
        };
        c.cgroup_poll = Some(poll);
        c.validate().unwrap();
        c.cgroup_poll = Some(CgroupPoll {
            every: Duration::ZERO,
            ..poll
        });
        assert!(c.validate().is_err(), "a zero interval");
        c.cgroup_poll = Some(poll);
        c.scheduler = SchedulerChoice::Mirror {
            policy: "linux".into(),
            size_bytes: 80 << 20,
            bank: MirrorBanking::Sizes,
        };
        assert!(c.validate().is_err(), "the adaptive bank sizes itself");
    }
}
