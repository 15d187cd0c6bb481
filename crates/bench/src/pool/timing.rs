//! How the pool benchmark times: worker threads run a loop until a stop flag is raised
//! after a fixed duration, each counting its operations, and a run's rate is the sum over
//! threads of each thread's operations over its own elapsed time. Random offsets come from
//! a seeded SplitMix64 stream per thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use super::options::Plan;
use super::row::Measured;
use crate::error::{BenchError, ErrorKind};

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded stream, fast enough that drawing
/// an offset costs a few cycles next to the operation measured.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix(u64);

impl SplitMix {
    /// Stream `stream` of `seed`: each thread of each run draws from its own.
    pub fn new(seed: u64, stream: u64) -> SplitMix {
        SplitMix(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` by multiply-shift (Lemire): no division on the hot path. The
    /// bias, at most n / 2^64, is far below anything a benchmark could see.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// Operations a worker does between two looks at the stop flag: few enough that a run
/// overshoots its duration by microseconds, many enough that the look costs nothing.
pub(crate) const OPS_PER_CHECK: u64 = 64;

/// Timed runs so far in this process: each run's workers draw from their own random
/// streams (run × 1024 + thread), so a run never replays the offsets of the run before
/// it, which would find exactly the pages that run left cached.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// Run `worker(stream, stop)` on `threads` threads for `duration`; each returns how many
/// operations it did. Rate = Σ ops_i / elapsed_i.
pub(crate) fn timed<W>(threads: usize, duration: Duration, worker: W) -> Result<f64, BenchError>
where
    W: Fn(u64, &AtomicBool) -> Result<u64, BenchError> + Sync,
{
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (stop, barrier, worker) = (&stop, &barrier, &worker);
                s.spawn(move || -> Result<(u64, Duration), BenchError> {
                    barrier.wait();
                    let t0 = Instant::now();
                    let r = worker(run * 1024 + i as u64, stop);
                    // An early error must still let the others stop.
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    Ok((r?, t0.elapsed()))
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        while t0.elapsed() < duration && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1).min(duration));
        }
        stop.store(true, Ordering::Relaxed);
        let mut rate = 0.0;
        for h in handles {
            let (ops, elapsed) = h
                .join()
                .map_err(|_| BenchError::from(ErrorKind::WorkerPanicked))??;
            rate += ops as f64 / elapsed.as_secs_f64().max(1e-9);
        }
        Ok(rate)
    })
}

/// Loop `op` until `stop`, checking the flag every [`OPS_PER_CHECK`] operations.
#[inline]
pub(crate) fn until_stopped(
    stop: &AtomicBool,
    mut op: impl FnMut() -> Result<(), BenchError>,
) -> Result<u64, BenchError> {
    let mut ops = 0;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..OPS_PER_CHECK {
            op()?;
        }
        ops += OPS_PER_CHECK;
    }
    Ok(ops)
}

/// Best of `plan.repeat` runs of `run`.
pub(crate) fn best_of(
    plan: &Plan,
    mut run: impl FnMut() -> Result<Measured, BenchError>,
) -> Result<Measured, BenchError> {
    let mut best = run()?;
    for _ in 1..plan.repeat {
        best = best.best(run()?);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn splitmix_matches_reference_values() {
        // First outputs of SplitMix64 seeded with 0 (from the published reference code).
        let mut r = SplitMix(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = SplitMix::new(7, 3);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let x = r.below(10);
            assert!(x < 10);
            seen[x as usize] += 1;
        }
        // Each bucket expects 1000; 800 is over 6 standard deviations away.
        assert!(seen.iter().all(|&c| c > 800), "{seen:?}");
    }

    #[test]
    fn timed_counts_every_operation_of_every_thread() {
        let counter = AtomicU64::new(0);
        let rate = timed(2, Duration::from_millis(20), |_, stop| {
            until_stopped(stop, || {
                counter.fetch_add(1, Ordering::Relaxed);
                Ok(())
            })
        })
        .unwrap();
        let total = counter.load(Ordering::Relaxed);
        assert!(total > 0 && total.is_multiple_of(OPS_PER_CHECK));
        assert!(rate > 0.0);
    }

    #[test]
    fn a_worker_error_stops_the_run_and_is_returned() {
        let err = timed(2, Duration::from_secs(3600), |i, stop| {
            if i % 1024 == 1 {
                return Err(BenchError::io("boom", io::Error::other("worker 1")));
            }
            until_stopped(stop, || Ok(()))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "boom");
    }

    #[test]
    fn a_panicking_worker_is_an_error_not_a_panic() {
        // A panic does not raise the stop flag: the run lasts its duration, then the
        // join reports the panic.
        let err = timed(
            1,
            Duration::from_millis(20),
            |_, _| -> Result<u64, BenchError> { panic!("worker bug") },
        )
        .unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::WorkerPanicked));
    }
}
