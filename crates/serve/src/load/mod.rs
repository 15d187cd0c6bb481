//! The load generator behind `bufcache load`.
//!
//! * **Closed loop**: N connections, each sending its next request when the last one
//!   completes (Burnett's clients: 4 machines × 36 threads). Latency is send to last byte.
//! * **Open loop**: requests at a fixed rate, request i due at `start + i / rate`, dealt
//!   round-robin to N connections. Latency is measured from the *due* time, so a server
//!   that stalls is charged for the requests that could not be sent while it stalled
//!   (the coordinated-omission correction of wrk2 and oha).
//!
//! Both stop by themselves: after a number of requests or a time limit, whichever comes
//! first. Each connection draws files with its own seeded generator (derived from the
//! run's seed and its index), so a connection's sequence is reproducible; which
//! connection sends which request of the whole run depends on timing.

pub mod fileset;
mod http;
mod pacer;
pub mod report;
pub mod stats;

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::ServeError;
use fileset::{Manifest, Sampler};
use linux::DeviceCounter;
pub use report::LoadReport;
use stats::Recorder;

/// Closed or open loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoopMode {
    /// Each connection sends when its last response is complete.
    Closed,
    /// Requests due at a fixed rate per second.
    Open {
        /// Requests per second.
        rate_per_s: f64,
    },
}

/// A load run.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    /// The server.
    pub target: SocketAddr,
    /// What to ask for.
    pub manifest: Manifest,
    /// Closed or open loop.
    pub mode: LoopMode,
    /// Client connections.
    pub connections: usize,
    /// Requests measured.
    pub requests: u64,
    /// Requests sent first and not measured (to fill the cache).
    pub warmup_requests: u64,
    /// The whole run (warm-up included) stops after this long at most.
    pub max_duration: Duration,
    /// Seed of the file draws.
    pub seed: u64,
    /// A path on the device whose reads are counted (the file set's directory).
    pub device_path: Option<PathBuf>,
    /// Print a progress line on standard error when it is a terminal.
    pub progress: bool,
}

impl LoadConfig {
    /// Refuse what cannot run or would not stop.
    pub fn validate(&self) -> Result<(), ServeError> {
        if self.connections == 0 {
            return Err(ServeError::config("connections", "must be at least 1"));
        }
        if self.requests == 0 {
            return Err(ServeError::config("requests", "must be at least 1"));
        }
        if self.max_duration.is_zero() {
            return Err(ServeError::config("duration", "must be above zero"));
        }
        if let LoopMode::Open { rate_per_s } = self.mode {
            if !(rate_per_s.is_finite() && rate_per_s > 0.0) {
                return Err(ServeError::config("rate", "must be a positive number"));
            }
        }
        Ok(())
    }
}

/// Run the load and report (call within a multi-threaded tokio runtime).
pub async fn run(config: &LoadConfig) -> Result<LoadReport, ServeError> {
    config.validate()?;
    let sampler = Arc::new(Sampler::new(&config.manifest)?);
    let deadline = Instant::now() + config.max_duration;
    if config.warmup_requests > 0 {
        drive(
            config,
            &sampler,
            config.warmup_requests,
            deadline,
            u64::MAX / 2,
        )
        .await?;
    }
    let device = config
        .device_path
        .as_deref()
        .and_then(DeviceCounter::for_path);
    let before = device.as_ref().and_then(|d| d.snapshot());
    let started = Instant::now();
    let record = drive(config, &sampler, config.requests, deadline, 0).await?;
    let seconds = started.elapsed().as_secs_f64();
    let reads = match (&device, before) {
        (Some(d), Some(b)) => d.snapshot().map(|after| after.since(b)),
        _ => None,
    };
    Ok(LoadReport::new(config, &record, seconds, reads))
}

/// Send `requests` requests (or stop at `deadline`) and merge what the connections saw.
/// `seed_offset` separates the warm-up's draws from the measured run's.
async fn drive(
    config: &LoadConfig,
    sampler: &Arc<Sampler>,
    requests: u64,
    deadline: Instant,
    seed_offset: u64,
) -> Result<Recorder, ServeError> {
    let issued = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let paths: Arc<Vec<String>> = Arc::new(
        config
            .manifest
            .files
            .iter()
            .map(|f| format!("/{}", f.name))
            .collect(),
    );
    // The open loop's due times come from the pacing thread (kept alive until every
    // connection is done).
    let (tickets, _pacer) = match config.mode {
        LoopMode::Closed => (Vec::new(), None),
        LoopMode::Open { rate_per_s } => {
            let (tickets, pacer) = pacer::start(
                requests,
                Duration::from_secs_f64(1.0 / rate_per_s),
                config.connections,
                deadline,
            );
            (tickets, Some(pacer))
        }
    };
    let mut tickets = tickets.into_iter();
    let mut tasks = Vec::with_capacity(config.connections);
    for c in 0..config.connections {
        let seed = config
            .seed
            .wrapping_add(seed_offset)
            .wrapping_add((c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let job = http::Connection {
            target: config.target,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            sampler: Arc::clone(sampler),
            paths: Arc::clone(&paths),
            issued: Arc::clone(&issued),
            done: Arc::clone(&done),
            requests,
            deadline: tokio::time::Instant::from_std(deadline),
            schedule: match config.mode {
                LoopMode::Closed => http::Schedule::Closed,
                LoopMode::Open { .. } => http::Schedule::Open {
                    tickets: tickets.next().expect("the pacer made one per connection"),
                },
            },
        };
        tasks.push(tokio::spawn(job.run()));
    }
    let progress = config.progress && std::io::stderr().is_terminal();
    let ticker = progress.then(|| {
        let done = Arc::clone(&done);
        tokio::spawn(async move {
            let t0 = Instant::now();
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let n = done.load(Ordering::Relaxed);
                let rate = n as f64 / t0.elapsed().as_secs_f64();
                eprint!("\r{n}/{requests} requests, {rate:.0} req/s   ");
            }
        })
    });
    let mut merged = Recorder::default();
    for t in tasks {
        match t.await {
            Ok(r) => merged.merge(&r),
            Err(e) => {
                return Err(ServeError::Net {
                    what: "a client connection task failed".into(),
                    source: std::io::Error::other(e.to_string()),
                })
            }
        }
    }
    if let Some(t) = ticker {
        t.abort();
        eprintln!();
    }
    Ok(merged)
}
