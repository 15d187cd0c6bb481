//! Streaming replay: a trace larger than memory, in memory proportional to its distinct
//! objects.
//!
//! Two passes over the trace. The first numbers the keys densely ([`KeyNumbering`]: a hash
//! map entry and a size per distinct object, about 20 bytes each) and counts the working
//! set, which fractional cache sizes and the dense index need before the first request is
//! served. The second reads the trace again in chunks of [`CHUNK_OPS`] operations, turns
//! each into a [`CompactTrace`] chunk with the first pass's ids, and feeds it to every
//! (policy, size) run in parallel ([`crate::replay::feed`]). Nothing grows with the number
//! of requests. The in-memory replay keeps the trace (16 bytes a request) and reads it once,
//! which is faster when it fits.
//!
//! A prefetcher needs each object's successor (original key + 1): the first pass keeps the
//! original keys of the dense ids, so streaming prefetches exactly as the in-memory replay
//! does.
//!
//! Offline policies (Belady) need every request's next access, which would take 8 bytes a
//! request: streaming refuses them ([`ReplayError::NeedsFuture`]) and the in-memory replay
//! runs them.

use trace::{Op, Request, TraceError, TraceReader};

use crate::compact::{CompactTrace, Item, KeyNumbering, Summary};
use crate::replay::{feed, plan, results, Grid, ReplayError, RunResult};

/// Operations per chunk of the second pass: large enough that handing a chunk to every
/// run costs nothing next to serving it, small enough to stay in cache (1 MiB of items).
pub const CHUNK_OPS: usize = 1 << 16;

/// Why a streaming replay failed.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// Reading the trace failed.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A policy or size is bad.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The second pass read something the first did not.
    #[error("the trace changed between the two passes of a streaming replay (key {key} at position {position} is new)")]
    Changed {
        /// The unexpected key.
        key: u64,
        /// Its position.
        position: u64,
    },
}

/// Reads every request of `reader` into `numbering`.
pub fn number_keys(reader: &mut dyn TraceReader) -> Result<KeyNumbering, TraceError> {
    number_keys_watching(reader, &mut |_, _| {})
}

/// [`number_keys`], handing each operation's position and timestamp to `watch` on the way
/// (spans of trace time are found in this same pass: [`crate::trace_time::TimeMarks`]).
pub fn number_keys_watching(
    reader: &mut dyn TraceReader,
    watch: &mut dyn FnMut(u64, u64),
) -> Result<KeyNumbering, TraceError> {
    let mut numbering = KeyNumbering::default();
    let mut batch = vec![Request::default(); 4096];
    let mut position = 0u64;
    loop {
        let n = reader.read_batch(&mut batch)?;
        if n == 0 {
            return Ok(numbering);
        }
        numbering.push_batch(&batch[..n], |r, _| {
            watch(position, r.time);
            position += 1;
        });
    }
}

/// Replays the trace that `open` opens (twice) through every policy at every size. Returns
/// the trace's summary and the results in job order, as [`crate::replay()`] does.
pub fn replay_stream(
    open: &dyn Fn() -> Result<Box<dyn TraceReader>, TraceError>,
    grid: &Grid<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Summary, Vec<RunResult>), StreamError> {
    let numbering = number_keys(&mut open()?)?;
    let results = replay_numbered(&numbering, &mut open()?, grid, progress)?;
    Ok((numbering.summary(), results))
}

/// The second pass: replays `reader` (the same trace again) with the first pass's
/// `numbering`, chunk by chunk.
pub fn replay_numbered(
    numbering: &KeyNumbering,
    reader: &mut dyn TraceReader,
    grid: &Grid<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<RunResult>, StreamError> {
    let summary = numbering.summary();
    let working_set = crate::size::WorkingSet {
        objects: summary.distinct_keys,
        bytes: summary.footprint_bytes,
    };
    let key_space = numbering.key_space();
    // The successor table a prefetcher follows comes from the first pass's original keys:
    // 8 bytes per distinct object and depth, like the numbering itself.
    let mut jobs = plan(grid, working_set, key_space, None, numbering.originals())?;
    let mut batch = vec![Request::default(); CHUNK_OPS];
    let mut base = 0u64;
    loop {
        let n = reader.read_batch(&mut batch)?;
        if n == 0 {
            break;
        }
        let mut items = Vec::with_capacity(n);
        let mut deletes = Vec::new();
        for (i, r) in batch[..n].iter().enumerate() {
            let id = numbering.id(r.key).ok_or(StreamError::Changed {
                key: r.key,
                position: base + i as u64,
            })?;
            if r.op == Op::Delete {
                deletes.push(i);
            }
            items.push(Item {
                key: u64::from(id),
                size: r.size,
                stream: r.stream,
            });
        }
        let chunk = CompactTrace::chunk(items, deletes, summary, key_space, base);
        feed(&mut jobs, &chunk, progress);
        base += n as u64;
    }
    Ok(results(jobs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{replay_scheduled, ReplayOptions, Schedule};
    use crate::size::CacheSize;
    use policy::PolicySpec;

    fn reader_over(reqs: Vec<Request>) -> Box<dyn TraceReader> {
        struct Vecs(std::vec::IntoIter<Request>);
        impl TraceReader for Vecs {
            fn read_into(&mut self, req: &mut Request) -> Result<bool, TraceError> {
                Ok(self.0.next().map(|r| *req = r).is_some())
            }
        }
        Box::new(Vecs(reqs.into_iter()))
    }

    #[test]
    fn streaming_gives_the_in_memory_counts_across_chunks() {
        // More than two chunks, deletes included, warm-up and intervals crossing chunks.
        let reqs: Vec<Request> = (0..(2 * CHUNK_OPS as u64 + 1234))
            .map(|i| Request {
                key: (i * 7919) % 5003 + (i % 3),
                size: 100 + (i % 5) as u32,
                op: if i % 97 == 0 { Op::Delete } else { Op::Read },
                ..Request::default()
            })
            .collect();
        let policies: Vec<PolicySpec> = ["lru", "s3fifo", "arc"]
            .iter()
            .map(|p| PolicySpec::parse(p).unwrap())
            .collect();
        let sizes = [
            CacheSize::parse("0.1").unwrap(),
            CacheSize::parse("0.5").unwrap(),
        ];
        let options = ReplayOptions {
            ignore_size: false,
            seed: 3,
        };
        let schedule = Schedule {
            warmup: 10_000,
            interval: crate::replay::Intervals::Every(50_000),
        };
        let always = policy::AdmissionSpec::parse("always").unwrap();
        let grid = Grid {
            policies: &policies,
            sizes: &sizes,
            admission: &always,
            prefetch: None,
            options,
            schedule,
        };
        let got = stream_equals_memory(&reqs, &grid);
        assert_eq!(got[0].intervals.len(), 3);
    }

    /// Replays `reqs` in memory and streamed through `grid`; asserts every count agrees
    /// and returns the streamed results.
    fn stream_equals_memory(reqs: &[Request], grid: &Grid<'_>) -> Vec<RunResult> {
        let mem = CompactTrace::from_requests(reqs);
        let want = replay_scheduled(&mem, grid, &|_| {}).unwrap();
        let (summary, got) =
            replay_stream(&|| Ok(reader_over(reqs.to_vec())), grid, &|_| {}).unwrap();
        assert_eq!(summary, *mem.summary());
        assert_eq!(want.len(), got.len());
        for (w, g) in want.iter().zip(&got) {
            assert_eq!(
                (&w.policy, &w.size, w.capacity),
                (&g.policy, &g.size, g.capacity)
            );
            assert_eq!(w.counts, g.counts, "{} {}", w.policy, w.size);
            assert_eq!(w.intervals, g.intervals);
            assert_eq!(w.prefetch, g.prefetch, "{} {}", w.policy, w.size);
        }
        got
    }

    #[test]
    fn streaming_prefetches_and_filters_as_the_in_memory_replay_does() {
        // Runs of consecutive block numbers (far apart, so dense ids are not in key order)
        // across a chunk boundary, behind a filter and a read-ahead prefetcher.
        let reqs: Vec<Request> = (0..(CHUNK_OPS as u64 + 4321))
            .map(|i| Request {
                key: 1_000_000 * ((i / 16 * 7919) % 301) + i % 16,
                size: 1,
                ..Request::default()
            })
            .collect();
        let secondhit = policy::AdmissionSpec::parse("secondhit").unwrap();
        let readahead = policy::PrefetchSpec::parse("readahead:depth=4").unwrap();
        let grid = Grid {
            policies: &[PolicySpec::parse("lru").unwrap()],
            sizes: &[CacheSize::units(500)],
            admission: &secondhit,
            prefetch: Some(&readahead),
            options: ReplayOptions {
                ignore_size: true,
                seed: 1,
            },
            schedule: Schedule::default(),
        };
        let got = stream_equals_memory(&reqs, &grid);
        let p = got[0].prefetch;
        assert!(p.issued > 1000 && p.used > 1000, "{p:?}");
    }

    #[test]
    fn offline_policies_are_refused_before_the_second_pass() {
        let reqs = vec![Request::default(); 3];
        let always = policy::AdmissionSpec::parse("always").unwrap();
        let grid = Grid {
            policies: &[PolicySpec::parse("belady").unwrap()],
            sizes: &[CacheSize::units(1)],
            admission: &always,
            prefetch: None,
            options: ReplayOptions::default(),
            schedule: Schedule::default(),
        };
        let e = replay_stream(&|| Ok(reader_over(reqs.clone())), &grid, &|_| {}).unwrap_err();
        assert!(e.to_string().contains("without --stream"), "{e}");
    }
}
