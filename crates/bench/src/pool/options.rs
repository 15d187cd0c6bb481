//! What `bufcache bench pool` runs: the benchmarks, schemes, I/O modes, thread counts and
//! sizes asked for ([`PoolBenchOptions`]), turned into a checked [`Plan`] with the
//! defaults of the chosen [`Scale`] applied. With the `clap` feature, [`PoolBench`],
//! [`Scheme`] and [`IoKind`] are `clap::ValueEnum`s whose doc comments are the help of
//! each value.

use std::time::Duration;

use super::{MIB, PAGE_BYTES};

/// The four benchmarks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum PoolBench {
    /// Cost per read of cached data, by transfer size and scheme.
    XmfRead,
    /// Pin and unpin a random resident page.
    PinHit,
    /// Random 4 KiB reads over twice the pool: O_DIRECT and buffered.
    RandomEvict,
    /// Sequential scan bandwidth with and without read-ahead.
    Scan,
}

impl PoolBench {
    /// Every benchmark, in the order a default run measures them.
    pub const ALL: [PoolBench; 4] = [
        PoolBench::XmfRead,
        PoolBench::PinHit,
        PoolBench::RandomEvict,
        PoolBench::Scan,
    ];

    /// The name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PoolBench::XmfRead => "xmf-read",
            PoolBench::PinHit => "pin-hit",
            PoolBench::RandomEvict => "random-evict",
            PoolBench::Scan => "scan",
        }
    }
}

/// Ways of reading the data that can be measured.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Scheme {
    /// The pool with the per-file translation table.
    Mapped,
    /// The pool with the hash table.
    Hashed,
    /// `pread` without a pool.
    Pread,
    /// Copy from an `mmap` of the file (xmf-read only).
    Mmap,
}

impl Scheme {
    /// Every scheme.
    pub const ALL: [Scheme; 4] = [Scheme::Mapped, Scheme::Hashed, Scheme::Pread, Scheme::Mmap];
}

/// How a benchmark reads its file from the OS.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum IoKind {
    /// `O_DIRECT`, from a file not in the OS page cache.
    Direct,
    /// Through the OS page cache.
    Buffered,
}

impl IoKind {
    /// The name in reports (`io` of a row).
    pub fn name(self) -> &'static str {
        match self {
            IoKind::Direct => "direct",
            IoKind::Buffered => "buffered",
        }
    }
}

/// How big and how long by default.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Files of 64-256 MiB, three runs of a second each.
    Full,
    /// Files of 8-32 MiB, one run of 150 ms: well under a minute in all.
    Quick,
    /// Files of 256 KiB-1 MiB, one run of 10 ms: for tests of the command itself
    /// (numbers meaningless).
    Tiny,
}

/// The defaults a [`Scale`] gives, sizes in bytes.
struct ScaleDefaults {
    repeat: u32,
    duration_ms: u64,
    cached: u64,
    direct_pool: u64,
    buffered_pool: u64,
    scan: u64,
}

impl Scale {
    fn defaults(self) -> ScaleDefaults {
        let (repeat, duration_ms, cached, direct_pool, buffered_pool, scan) = match self {
            Scale::Tiny => (1, 10, MIB, MIB / 4, MIB / 4, MIB),
            Scale::Quick => (1, 150, 32 * MIB, 8 * MIB, 32 * MIB, 32 * MIB),
            Scale::Full => (3, 1000, 256 * MIB, 64 * MIB, 256 * MIB, 256 * MIB),
        };
        ScaleDefaults {
            repeat,
            duration_ms,
            cached,
            direct_pool,
            buffered_pool,
            scan,
        }
    }
}

/// What the caller asked for; every `None` and empty list takes its default.
#[derive(Clone, Debug)]
pub struct PoolBenchOptions {
    /// Benchmarks to run (empty: all).
    pub benches: Vec<PoolBench>,
    /// Schemes to measure (empty: all). random-evict always measures raw `pread` too.
    pub schemes: Vec<Scheme>,
    /// I/O modes of random-evict and of the scan's `pread` baselines (empty: both).
    pub ios: Vec<IoKind>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Reads in flight per thread in random-evict.
    pub in_flight: Vec<usize>,
    /// Transfer sizes of xmf-read, bytes.
    pub transfers: Vec<usize>,
    /// Default sizes and durations.
    pub scale: Scale,
    /// Seed of the random offsets.
    pub seed: u64,
    /// Runs per measurement, the best reported (default from `scale`).
    pub repeat: Option<u32>,
    /// Length of one timed run, ms (default from `scale`).
    pub duration_ms: Option<u64>,
    /// Size of the cached file of xmf-read and pin-hit, MiB.
    pub cached_mib: Option<u64>,
    /// Pool of random-evict with O_DIRECT, MiB; the file is twice that.
    pub direct_pool_mib: Option<u64>,
    /// Pool of random-evict buffered, MiB; the file is twice that.
    pub buffered_pool_mib: Option<u64>,
    /// File of scan, MiB; the pool is a quarter of it.
    pub scan_mib: Option<u64>,
    /// Read-ahead depth in pages of the scan with read-ahead.
    pub read_ahead: u32,
}

/// Options that cannot be run, named as the command line spells them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// No run at all.
    #[error("--repeat must be at least 1")]
    Repeat,
    /// No thread count, or one of 0 or above 256.
    #[error("--threads must list thread counts from 1 to 256")]
    Threads,
    /// No depth, or one of 0 or above 64.
    #[error("--in-flight must list depths from 1 to 64")]
    InFlight,
    /// A transfer of nothing, or larger than the file it reads.
    #[error("transfer size {transfer} must be between 1 byte and the cached file ({cached_bytes} bytes)")]
    Transfer {
        /// The transfer size given.
        transfer: usize,
        /// The cached file's size.
        cached_bytes: u64,
    },
    /// A file or pool under four pages.
    #[error("{option} must be at least 16 KiB")]
    TooSmall {
        /// The option, as in `--scan-mib`.
        option: &'static str,
    },
    /// A file or pool over a terabyte: a typo, not a benchmark.
    #[error("{option} is too large")]
    TooLarge {
        /// The option, as in `--scan-mib`.
        option: &'static str,
    },
}

/// Everything a run needs, defaults applied and checked.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Benchmarks, in order.
    pub benches: Vec<PoolBench>,
    /// Schemes measured.
    pub schemes: Vec<Scheme>,
    /// I/O modes.
    pub ios: Vec<IoKind>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Reads in flight per thread (random-evict).
    pub in_flight: Vec<usize>,
    /// Transfer sizes of xmf-read, bytes.
    pub transfers: Vec<usize>,
    /// Seed of the random offsets.
    pub seed: u64,
    /// Runs per measurement.
    pub repeat: u32,
    /// Length of one timed run.
    pub duration: Duration,
    /// Cached file of xmf-read and pin-hit.
    pub cached_bytes: u64,
    /// Pool of random-evict with O_DIRECT.
    pub direct_pool_bytes: u64,
    /// Pool of random-evict buffered.
    pub buffered_pool_bytes: u64,
    /// File of scan.
    pub scan_bytes: u64,
    /// Read-ahead of the scan with read-ahead, pages.
    pub read_ahead_pages: u32,
}

/// `given`, or `all` when nothing is given.
fn or_all<T: Clone>(given: &[T], all: &[T]) -> Vec<T> {
    if given.is_empty() {
        all.to_vec()
    } else {
        given.to_vec()
    }
}

impl Plan {
    /// The plan of `options`, or why it cannot be run.
    pub fn new(options: &PoolBenchOptions) -> Result<Plan, OptionsError> {
        let d = options.scale.defaults();
        let plan = Plan {
            benches: or_all(&options.benches, &PoolBench::ALL),
            schemes: or_all(&options.schemes, &Scheme::ALL),
            ios: or_all(&options.ios, &[IoKind::Direct, IoKind::Buffered]),
            threads: options.threads.clone(),
            in_flight: options.in_flight.clone(),
            transfers: options.transfers.clone(),
            seed: options.seed,
            repeat: options.repeat.unwrap_or(d.repeat),
            duration: Duration::from_millis(options.duration_ms.unwrap_or(d.duration_ms)),
            cached_bytes: options.cached_mib.map_or(d.cached, |m| m * MIB),
            direct_pool_bytes: options.direct_pool_mib.map_or(d.direct_pool, |m| m * MIB),
            buffered_pool_bytes: options
                .buffered_pool_mib
                .map_or(d.buffered_pool, |m| m * MIB),
            scan_bytes: options.scan_mib.map_or(d.scan, |m| m * MIB),
            read_ahead_pages: options.read_ahead,
        };
        plan.validate()?;
        Ok(plan)
    }

    /// Whether `scheme` is measured.
    pub fn measures(&self, scheme: Scheme) -> bool {
        self.schemes.contains(&scheme)
    }

    /// Check every option; the first that cannot be run is the error.
    pub fn validate(&self) -> Result<(), OptionsError> {
        if self.repeat < 1 {
            return Err(OptionsError::Repeat);
        }
        if self.threads.is_empty() || !self.threads.iter().all(|&t| (1..=256).contains(&t)) {
            return Err(OptionsError::Threads);
        }
        if self.in_flight.is_empty() || !self.in_flight.iter().all(|&d| (1..=64).contains(&d)) {
            return Err(OptionsError::InFlight);
        }
        for &transfer in &self.transfers {
            if transfer < 1 || transfer as u64 > self.cached_bytes {
                return Err(OptionsError::Transfer {
                    transfer,
                    cached_bytes: self.cached_bytes,
                });
            }
        }
        for (option, bytes) in [
            ("--cached-mib", self.cached_bytes),
            ("--direct-pool-mib", self.direct_pool_bytes),
            ("--buffered-pool-mib", self.buffered_pool_bytes),
            ("--scan-mib", self.scan_bytes),
        ] {
            if bytes < 4 * PAGE_BYTES as u64 {
                return Err(OptionsError::TooSmall { option });
            }
            if bytes > 1 << 40 {
                return Err(OptionsError::TooLarge { option });
            }
        }
        Ok(())
    }
}

/// Options for the unit tests: one or two threads, depths 1 and 8, transfers of 4 bytes
/// and a page, seed 42, everything else the scale's default.
#[cfg(test)]
pub(crate) fn options(scale: Scale) -> PoolBenchOptions {
    PoolBenchOptions {
        benches: vec![],
        schemes: vec![],
        ios: vec![],
        threads: vec![1, 2],
        in_flight: vec![1, 8],
        transfers: vec![4, 4096],
        scale,
        seed: 42,
        repeat: None,
        duration_ms: None,
        cached_mib: None,
        direct_pool_mib: None,
        buffered_pool_mib: None,
        scan_mib: None,
        read_ahead: 32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_lists_mean_everything_and_the_scale_sets_the_sizes() {
        let p = Plan::new(&options(Scale::Quick)).unwrap();
        assert_eq!(p.benches, PoolBench::ALL);
        assert_eq!(p.schemes, Scheme::ALL);
        assert_eq!(p.ios, [IoKind::Direct, IoKind::Buffered]);
        assert_eq!((p.repeat, p.duration.as_millis()), (1, 150));
        assert_eq!(p.cached_bytes, 32 * MIB);
        assert_eq!(p.direct_pool_bytes, 8 * MIB);
        let full = Plan::new(&options(Scale::Full)).unwrap();
        assert_eq!((full.repeat, full.duration.as_millis()), (3, 1000));
        assert_eq!(full.scan_bytes, 256 * MIB);
        let tiny = Plan::new(&options(Scale::Tiny)).unwrap();
        assert_eq!(tiny.buffered_pool_bytes, MIB / 4);
    }

    #[test]
    fn given_values_override_the_scale() {
        let mut o = options(Scale::Full);
        o.benches = vec![PoolBench::Scan];
        o.schemes = vec![Scheme::Mapped];
        o.repeat = Some(5);
        o.duration_ms = Some(20);
        o.scan_mib = Some(3);
        let p = Plan::new(&o).unwrap();
        assert_eq!(p.benches, [PoolBench::Scan]);
        assert!(p.measures(Scheme::Mapped) && !p.measures(Scheme::Pread));
        assert_eq!((p.repeat, p.duration.as_millis()), (5, 20));
        assert_eq!(p.scan_bytes, 3 * MIB);
    }

    #[test]
    fn bad_options_are_refused_by_name() {
        let base = Plan::new(&options(Scale::Tiny)).unwrap();
        let refused = |change: &dyn Fn(&mut Plan)| {
            let mut p = base.clone();
            change(&mut p);
            p.validate().unwrap_err()
        };
        assert_eq!(refused(&|p| p.repeat = 0), OptionsError::Repeat);
        assert_eq!(refused(&|p| p.threads = vec![0]), OptionsError::Threads);
        assert_eq!(refused(&|p| p.threads = vec![]), OptionsError::Threads);
        assert_eq!(refused(&|p| p.threads = vec![257]), OptionsError::Threads);
        assert_eq!(refused(&|p| p.in_flight = vec![65]), OptionsError::InFlight);
        assert_eq!(
            refused(&|p| p.transfers = vec![2 * MIB as usize]),
            OptionsError::Transfer {
                transfer: 2 * MIB as usize,
                cached_bytes: MIB
            }
        );
        assert_eq!(
            refused(&|p| p.scan_bytes = 4096),
            OptionsError::TooSmall {
                option: "--scan-mib"
            }
        );
        assert_eq!(
            refused(&|p| p.cached_bytes = 2 << 40),
            OptionsError::TooLarge {
                option: "--cached-mib"
            }
        );
        // The boundaries themselves are accepted.
        let mut p = base.clone();
        p.threads = vec![1, 256];
        p.in_flight = vec![1, 64];
        p.scan_bytes = 4 * PAGE_BYTES as u64;
        assert!(p.validate().is_ok());
    }

    #[test]
    fn messages_name_the_command_line_options() {
        assert_eq!(
            OptionsError::Transfer {
                transfer: 4_000_000,
                cached_bytes: MIB
            }
            .to_string(),
            "transfer size 4000000 must be between 1 byte and the cached file (1048576 bytes)"
        );
        assert_eq!(
            OptionsError::TooSmall {
                option: "--scan-mib"
            }
            .to_string(),
            "--scan-mib must be at least 16 KiB"
        );
    }
}
