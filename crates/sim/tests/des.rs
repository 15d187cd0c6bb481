//! The discrete-event simulator: exact results of small scripts worked out by hand, the
//! flusher's ageing rule, determinism, and inputs that used to hang it or wrap its clock.

use sim::des::config::{Cleaner, SystemConfig, WritePolicy};
use sim::des::disk::ServiceTime;
use sim::des::kotz::{KotzWorkload, Pattern};
use sim::des::ops::{FileSpec, Op, Script, Workload};
use sim::des::syscalls;
use sim::des::{simulate, Report, RunError, Scenario};
use std::path::Path;

const BLOCK: u64 = 1024;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn system(buffers: u32, write_policy: WritePolicy) -> SystemConfig {
    let mut s = SystemConfig::default();
    s.cache.block_bytes = BLOCK as u32;
    s.cache.buffers = buffers;
    s.cache.policy = "lru".into();
    s.cache.write_policy = write_policy;
    s.disks.count = 1;
    s.disks.service = ServiceTime::Constant { ms: 10.0 };
    s
}

/// One process, one file of `blocks` blocks (`on_disk` of them present at the start).
fn one(ops: Vec<Op>, blocks: u64, on_disk: u64) -> Workload {
    Workload {
        files: vec![FileSpec {
            initial_bytes: on_disk * BLOCK,
            max_bytes: blocks * BLOCK,
        }],
        scripts: vec![Script {
            ops,
            delays: vec![],
        }],
        counters: 0,
        deps: Vec::new(),
    }
}

fn write(block: u64, offset: u64, len: u64) -> Op {
    Op::Write {
        file: 0,
        offset: block * BLOCK + offset,
        len,
    }
}

fn read(block: u64) -> Op {
    Op::Read {
        file: 0,
        offset: block * BLOCK,
        len: BLOCK,
    }
}

fn run(s: &SystemConfig, w: &Workload) -> Report {
    simulate(s, w, 1).unwrap()
}

#[test]
fn writethru_rewrites_a_block_once_per_partial_write_and_waits_for_each() {
    // Three thirds of one new block: three disk writes, two of them rewrites. The second
    // and third writes find the buffer being written and wait 10 ms each.
    let ops = vec![write(0, 0, 341), write(0, 341, 341), write(0, 682, 342)];
    let r = run(&system(4, WritePolicy::WriteThru), &one(ops.clone(), 1, 0));
    assert_eq!((r.disk_writes, r.rewrite_mistakes, r.disk_reads), (3, 2, 0));
    assert_eq!(r.time_s, 0.030);
    // WriteFull writes it once, when the last byte arrives.
    let r = run(&system(4, WritePolicy::WriteFull), &one(ops, 1, 0));
    assert_eq!((r.disk_writes, r.rewrite_mistakes), (1, 0));
    assert_eq!(r.time_s, 0.010);
}

#[test]
fn partial_write_of_an_uncached_block_on_disk_reads_it_first() {
    let ops = vec![write(0, 10, 100), write(1, 0, BLOCK)];
    let r = run(&system(4, WritePolicy::WriteBack), &one(ops, 2, 2));
    // Block 0 is read (partial write), block 1 is not (whole block); the final sync
    // writes both.
    assert_eq!(
        (r.disk_reads, r.disk_writes, r.misses, r.hits),
        (1, 2, 2, 0)
    );
    assert_eq!(r.time_s, 0.030);
}

#[test]
fn reads_miss_once_then_hit() {
    let ops = vec![read(0), read(1), read(0), read(1), read(2)];
    let r = run(&system(2, WritePolicy::WriteBack), &one(ops, 3, 3));
    // LRU with two buffers: 0 1 miss, 0 1 hit, 2 misses and evicts 0.
    assert_eq!(
        (r.hits, r.misses, r.disk_reads, r.disk_writes),
        (2, 3, 3, 0)
    );
    assert_eq!(r.time_s, 0.030);
}

#[test]
fn deleting_a_file_drops_its_dirty_blocks_without_writing_them() {
    let ops = vec![write(0, 0, BLOCK), write(1, 0, BLOCK), Op::Delete(0)];
    let r = run(&system(4, WritePolicy::Delayed), &one(ops, 2, 0));
    assert_eq!((r.disk_writes, r.dirty_discarded), (0, 2));
}

#[test]
fn writeback_writes_a_dirty_victim_before_reusing_its_buffer() {
    // One buffer: the second block's write evicts the first, which must be written first.
    let ops = vec![write(0, 0, BLOCK), write(1, 0, BLOCK)];
    let mut s = system(1, WritePolicy::WriteBack);
    s.final_sync = false;
    let r = run(&s, &one(ops, 2, 0));
    assert_eq!((r.disk_writes, r.cleaner_writes), (1, 1));
    assert_eq!(r.time_s, 0.010);
}

#[test]
fn sequential_reads_trigger_read_ahead() {
    // A process that computes 5 ms per block: read-ahead overlaps its reads with that.
    let ops = || -> Vec<Op> {
        (0..10)
            .flat_map(|b| [read(b), Op::Compute(5 * MS)])
            .collect()
    };
    let mut s = system(32, WritePolicy::WriteBack);
    s.cache.read_ahead = 4;
    let r = run(&s, &one(ops(), 10, 10));
    // Blocks 0 and 1 are demand misses; reading 1 right after 0 is sequential and fetches
    // 2..=5; each later block extends the window. Every block is read from disk once.
    assert_eq!(r.disk_reads, 10);
    assert_eq!(r.readahead_reads, 8);
    assert_eq!((r.misses, r.hits), (2, 8));
    let mut off = s.clone();
    off.cache.read_ahead = 0;
    let r0 = run(&off, &one(ops(), 10, 10));
    assert_eq!((r0.misses, r0.readahead_reads), (10, 0));
    assert_eq!(r0.time_s, 0.150);
    assert!(r.time_s < 0.125, "{}", r.time_s);
}

#[test]
fn the_flusher_writes_exactly_the_buffers_that_have_aged() {
    // Block 0 dirtied at 0 s, block 1 at 10 s; the flusher runs every 5 s and writes
    // buffers dirty for 30 s. A run ending at 37 s sees block 0 written at 30 s only; one
    // ending at 41 s also sees block 1 written at 40 s.
    let mut s = system(8, WritePolicy::Delayed);
    s.final_sync = false;
    for (end_s, expected) in [(37, 1), (41, 2)] {
        let ops = vec![
            write(0, 0, BLOCK),
            Op::Compute(10 * S),
            write(1, 0, BLOCK),
            Op::Compute((end_s - 10) * S),
        ];
        let r = run(&s, &one(ops, 2, 0));
        assert_eq!(r.flusher_writes, expected, "run ending at {end_s} s");
        assert_eq!(r.disk_writes, expected);
    }
}

#[test]
fn the_daemon_keeps_a_free_pool_and_a_hit_takes_a_buffer_back() {
    let mut s = system(8, WritePolicy::WriteBack);
    s.cache.cleaner = Cleaner::Daemon;
    s.cache.policy = "clock".into();
    s.cache.pool_low = 2;
    s.cache.pool_high = 3;
    // Fill 8 buffers, then a ninth block makes the daemon evict 3 (blocks 0, 1, 2, in
    // clock order) into the pool; block 8 reuses the oldest (0's buffer). Block 1, still in
    // the pool, is then found there: a hit, no disk read.
    let mut ops: Vec<Op> = (0..9).map(read).collect();
    ops.push(read(1));
    let r = run(&s, &one(ops, 9, 9));
    assert_eq!(r.disk_reads, 9);
    assert_eq!((r.hits, r.misses), (1, 9));
}

#[test]
fn uncached_io_costs_a_disk_access_per_block() {
    let ops = vec![write(0, 0, 512), write(0, 512, 512), read(0)];
    let r = run(&system(0, WritePolicy::WriteBack), &one(ops, 1, 0));
    // The first half-block write needs no read (the block was never on disk), the second
    // does (read-modify-write), and the read reads: 2 reads, 2 writes, 40 ms.
    assert_eq!((r.disk_reads, r.disk_writes, r.rewrite_mistakes), (2, 2, 1));
    assert_eq!(r.time_s, 0.040);
}

#[test]
fn held_dirty_buffers_are_cleaned_when_nothing_else_can_free_one() {
    // Two processes share a one-buffer cache, each leaving a half-written block in it.
    let s = system(1, WritePolicy::WriteBack);
    let w = Workload {
        files: vec![FileSpec {
            initial_bytes: 0,
            max_bytes: 4 * BLOCK,
        }],
        scripts: vec![
            Script {
                ops: vec![write(0, 0, 10), Op::Compute(MS), write(1, 0, 10)],
                delays: vec![],
            },
            Script {
                ops: vec![write(2, 0, 10), Op::Compute(MS), write(3, 0, 10)],
                delays: vec![],
            },
        ],
        counters: 0,
        deps: Vec::new(),
    };
    // With no I/O in flight to wait for, the held buffer is written and then reused.
    let r = simulate(&s, &w, 1).unwrap();
    assert_eq!(r.disk_writes, 4);
}

#[test]
fn a_scenario_gives_the_same_bytes_every_time() {
    let text = r#"
        seed = 3
        [system.cache]
        block_bytes = 1024
        buffers = 40
        policy = "random"
        write_policy = "writefree"
        [system.disks]
        count = 4
        scheduler = "clook"
        service = { kind = "linear", min_ms = 1, max_ms = 10, span_blocks = 1000 }
        [workload]
        kind = "kotz"
        pattern = "gw"
        processes = 8
        total_blocks = 400
        record_blocks = 1.5
        compute = true
        seed = 9
    "#;
    let path = std::path::Path::new("det.toml");
    let run = || {
        let s = Scenario::parse(text, path).unwrap();
        serde_json::to_string(&s.run(path).unwrap()).unwrap()
    };
    let first = run();
    assert_eq!(first, run());
    let other = Scenario::parse(&text.replace("seed = 9", "seed = 10"), path).unwrap();
    assert_ne!(
        first,
        serde_json::to_string(&other.run(path).unwrap()).unwrap()
    );
}

#[test]
fn a_trace_drives_processes_closed_loop_or_by_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.oracleGeneral.bin");
    // Keys 7 9 7 9 at times 0, 1, 2, 3 seconds.
    let reqs = [7u64, 9, 7, 9].iter().enumerate().map(|(i, &key)| {
        Ok(trace::Request {
            time: i as u64,
            key,
            size: 4096,
            next_access: trace::NEVER,
            ..Default::default()
        })
    });
    trace::write_trace(&path, trace::Format::OracleGeneral, reqs).unwrap();
    let scenario = |timing: &str| {
        format!(
            r#"
            [system.cache]
            buffers = 8
            [system.disks]
            service = {{ kind = "constant", ms = 10 }}
            [workload]
            kind = "trace"
            path = "{}"
            timing = "{timing}"
            "#,
            path.display()
        )
    };
    let run = |timing: &str| {
        let p = std::path::Path::new("trace.toml");
        let s = Scenario::parse(&scenario(timing), p).unwrap();
        s.run(p).unwrap().remove(0).report
    };
    let closed = run("closed");
    // The two keys are blocks of a file on disk: two misses read them, then two hits.
    assert_eq!((closed.misses, closed.hits, closed.disk_reads), (2, 2, 2));
    assert_eq!(closed.time_s, 0.020);
    let timed = run("timestamps");
    assert_eq!((timed.misses, timed.hits), (2, 2));
    // Each request waits out its timestamp gap after the previous one was served: 3 s of
    // gaps plus the two 10 ms misses.
    assert_eq!(timed.time_s, 3.020);
}

// ----- inputs that used to hang the simulator or wrap its clock --------------------------

/// Run `f` on its own thread and fail if it has not returned within a few seconds: the
/// cases below used to hang, and a hung test would otherwise stall the whole suite.
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    const LIMIT: std::time::Duration = std::time::Duration::from_secs(10);
    let start = std::time::Instant::now();
    let worker = std::thread::spawn(f);
    while !worker.is_finished() {
        assert!(
            start.elapsed() < LIMIT,
            "still running after {LIMIT:?}: hung"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    worker
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

#[test]
fn a_flush_interval_that_rounds_to_zero_nanoseconds_is_refused() {
    // The flusher would wake at now + 0 for ever, while the process computes.
    let mut s = system(8, WritePolicy::Delayed);
    s.cache.flush_interval_s = 1e-10;
    let w = one(vec![write(0, 0, BLOCK), Op::Compute(MS)], 1, 0);
    let e = within_seconds(move || simulate(&s, &w, 1).unwrap_err());
    match e {
        RunError::Config(p) => assert_eq!(p.key, "cache.flush_interval_s", "{p}"),
        other => panic!("expected a configuration error, got {other}"),
    }
}

#[test]
fn time_that_would_pass_2_pow_64_ns_stops_the_run_instead_of_wrapping() {
    // A process's compute time.
    let w = one(vec![Op::Compute(u64::MAX - 5), Op::Compute(10)], 1, 0);
    let e = simulate(&system(8, WritePolicy::WriteBack), &w, 1).unwrap_err();
    assert!(matches!(e, RunError::TimeOverflow { .. }), "{e}");
    // A disk's completion: two uncached writes of 10^19 ns each.
    let mut s = system(0, WritePolicy::WriteBack);
    s.disks.service = ServiceTime::Constant { ms: 1e13 };
    let w = one(vec![write(0, 0, BLOCK), write(1, 0, BLOCK)], 2, 0);
    let e = simulate(&s, &w, 1).unwrap_err();
    assert!(matches!(e, RunError::TimeOverflow { .. }), "{e}");
    // CPU costs of a call.
    let mut s = system(8, WritePolicy::WriteBack);
    s.cache.syscall_us = 1e16;
    let w = one((0..3).map(|_| Op::Open(0)).collect(), 1, 0);
    let e = simulate(&s, &w, 1).unwrap_err();
    assert!(matches!(e, RunError::TimeOverflow { .. }), "{e}");
}

#[test]
fn a_flusher_wake_up_past_the_end_of_time_never_comes() {
    // The flusher wakes at 10^19 ns and would next wake past 2^64 ns; the process ends at
    // 1.5 × 10^19 ns. The run ends normally: start, flusher, process end.
    let mut s = system(8, WritePolicy::Delayed);
    s.cache.flush_interval_s = 1e10;
    let w = one(vec![Op::Compute(15 * S * S)], 1, 0);
    let r = simulate(&s, &w, 1).unwrap();
    assert_eq!(r.time_s, 1.5e10);
    assert_eq!(r.events, 3);
}

#[test]
fn a_kotz_truncation_far_below_the_mean_still_draws_its_delays() {
    // A draw is kept with probability 1 - e^(-max/mean) = 3e-11: rejection alone would
    // practically never finish.
    let k = KotzWorkload {
        pattern: Pattern::Seg,
        processes: 2,
        total_blocks: 40,
        compute: true,
        compute_mean_ms: 30.0,
        compute_max_ms: 1e-9,
        ..Default::default()
    };
    let w = within_seconds(move || k.build());
    let delays: Vec<u64> = w.scripts.iter().flat_map(|s| s.delays.clone()).collect();
    assert_eq!(delays.len(), 40);
    assert!(delays.iter().all(|&d| d == 0), "{delays:?}");
}

#[test]
fn a_syscall_write_of_2_pow_64_minus_1_bytes_is_refused() {
    // 2^52 blocks of 4 KiB: more than a file may have (the block number must fit the
    // cache's 32-bit block part of a key), and more than a run could get through.
    let text = "file big 18446744073709551615\n0 write big 0 18446744073709551615\n";
    let w = syscalls::parse(text, Path::new("big.sys")).unwrap();
    let mut s = system(8, WritePolicy::WriteBack);
    s.cache.block_bytes = 4096;
    let e = within_seconds(move || simulate(&s, &w, 1).unwrap_err());
    match e {
        RunError::Workload(m) => assert!(m.contains("file 0") && m.contains("blocks"), "{m}"),
        other => panic!("expected a workload error, got {other}"),
    }
}

#[test]
fn writes_past_the_blocks_a_file_may_have_are_refused() {
    // A declared file of 4 blocks, and transfers whose end overflows or lies past 2^32
    // blocks: each would have run block by block for ever.
    let ops = [
        write(0, 1, u64::MAX),
        write(0, 0, (1 << 32) * BLOCK + 1),
        Op::SharedRecords {
            counter: 0,
            file: 0,
            record_bytes: BLOCK,
            total_bytes: 1 << 50,
            write: false,
            compute: false,
        },
    ];
    for op in ops {
        let mut w = one(vec![op], 4, 0);
        w.counters = 1;
        let s = system(8, WritePolicy::WriteBack);
        let e = within_seconds(move || simulate(&s, &w, 1).unwrap_err());
        match e {
            RunError::Workload(m) => {
                assert!(m.contains("process 0, op 0") && m.contains("blocks"), "{m}")
            }
            other => panic!("{op:?}: expected a workload error, got {other}"),
        }
    }
    // A read past the end of the file stops there.
    let r = run(
        &system(8, WritePolicy::WriteBack),
        &one(
            vec![Op::Read {
                file: 0,
                offset: 1,
                len: u64::MAX,
            }],
            4,
            4,
        ),
    );
    assert_eq!(r.disk_reads, 4);
}
