//! Write ordering (Burnett ch.4): the mechanisms on hand-built graphs, the checker, and
//! the thesis's findings on the TPC-B-like workload.

use std::collections::HashSet;

use sim::des::config::{SystemConfig, WritePolicy};
use sim::des::disk::{Scheduler, ServiceTime};
use sim::des::ops::{FileSpec, Op, Script, Workload};
use sim::des::simulate;
use sim::des::tpcb::{Mechanism, TpcbWorkload};
use sim::experiments::burnett_ordering::{run, run_point, system};

const PAGE: u64 = 4096;

fn small_system() -> SystemConfig {
    let mut s = SystemConfig::default();
    s.cache.block_bytes = PAGE as u32;
    s.cache.buffers = 16;
    s.cache.write_policy = WritePolicy::Delayed;
    s.disks.service = ServiceTime::Constant { ms: 1.0 };
    s.final_sync = false;
    s
}

/// Files 0 (log) and 1 (data), both new.
fn workload(ops: Vec<Op>, deps: Vec<u32>) -> Workload {
    let file = FileSpec {
        initial_bytes: 0,
        max_bytes: 16 * PAGE,
    };
    Workload {
        files: vec![file, file],
        scripts: vec![Script {
            ops,
            delays: vec![],
        }],
        counters: 0,
        deps,
    }
}

fn gw(file: u32, page: u64, id: u32, deps_start: u32, deps_len: u32) -> Op {
    Op::GraphWrite {
        file,
        offset: page * PAGE,
        len: 100,
        id,
        deps_start,
        deps_len,
    }
}

#[test]
fn two_log_writes_to_one_buffer_combine_when_nothing_lies_between() {
    // Figure 4.7: log A (id 0) and log B (id 2) on one log page, each followed by a data
    // write. Nothing is ordered between the two log writes, so they share one node and
    // one disk write.
    let ops = vec![
        gw(0, 0, 0, 0, 0),
        gw(1, 0, 1, 0, 1),
        gw(0, 0, 2, 0, 0),
        gw(1, 1, 3, 1, 1),
        Op::Sync(None),
    ];
    let r = simulate(&small_system(), &workload(ops, vec![0, 2]), 1).unwrap();
    assert_eq!(
        (r.disk_writes, r.duplicates, r.violations),
        (3, 0, 0),
        "{:?}",
        r.first_violation
    );
}

#[test]
fn a_write_ordered_after_a_buffers_own_dependent_is_duplicated() {
    // Figure 4.9: log write 1, data B after it, then log write 2 on the same log page
    // after B. Combining the two log writes would put log 2 on disk with log 1, before B:
    // the log page is duplicated, and the old version goes first.
    let ops = vec![
        gw(0, 0, 0, 0, 0),
        gw(1, 0, 1, 0, 1),
        gw(0, 0, 2, 1, 1),
        Op::Sync(None),
    ];
    let r = simulate(&small_system(), &workload(ops, vec![0, 1]), 1).unwrap();
    assert_eq!(
        (r.disk_writes, r.duplicates, r.violations),
        (3, 1, 0),
        "{:?}",
        r.first_violation
    );
}

#[test]
fn a_buffer_written_again_after_a_barrier_is_duplicated() {
    let write = |file, page| Op::Write {
        file,
        offset: page * PAGE,
        len: 10,
    };
    // Page 0 written, barrier, page 0 written again: two versions, two disk writes, the
    // old one first. Without the barrier: one.
    let with = vec![
        write(1, 0),
        Op::Barrier,
        write(1, 0),
        write(1, 1),
        Op::Sync(None),
    ];
    let r = simulate(&small_system(), &workload(with, vec![]), 1).unwrap();
    assert_eq!(
        (r.disk_writes, r.duplicates, r.violations),
        (3, 1, 0),
        "{:?}",
        r.first_violation
    );
    let without = vec![write(1, 0), write(1, 0), write(1, 1), Op::Sync(None)];
    let r = simulate(&small_system(), &workload(without, vec![]), 1).unwrap();
    assert_eq!((r.disk_writes, r.duplicates), (2, 0));
}

#[test]
fn fsync_waits_for_the_log_and_the_checker_agrees() {
    let ops = vec![
        Op::Write {
            file: 0,
            offset: 0,
            len: 128,
        },
        Op::Sync(Some(0)),
        Op::Compute(5_000_000),
    ];
    let r = simulate(&small_system(), &workload(ops, vec![]), 1).unwrap();
    // One log write of 1 ms, then 5 ms of computation.
    assert_eq!((r.disk_writes, r.violations), (1, 0));
    assert_eq!(r.time_s, 0.006);
}

fn tpcb(mechanism: Mechanism, transactions: u32) -> TpcbWorkload {
    TpcbWorkload {
        mechanism,
        transactions,
        ..Default::default()
    }
}

#[test]
fn barriers_write_every_transaction_separately_at_the_defaults() {
    // One log write plus one write per distinct data page, per transaction: the thesis's
    // 40,000, "a few fewer only where two writes of one transaction land on the same page".
    let w = tpcb(Mechanism::Barrier, 10_000);
    let built = w.build();
    let mut expected = 0u64;
    let mut pages = HashSet::new();
    for op in &built.scripts[0].ops {
        match *op {
            Op::Write { file: 0, .. } => {
                expected += 1 + pages.len() as u64;
                pages.clear();
            }
            Op::Write {
                file: 1, offset, ..
            } => {
                pages.insert(offset / w.block_bytes);
            }
            _ => {}
        }
    }
    expected += pages.len() as u64;
    assert!((39_990..=40_000).contains(&expected), "{expected}");
    for scheduler in [Scheduler::Fifo, Scheduler::Clook] {
        let r = simulate(&system(20_000, scheduler, &w), &built, 1).unwrap();
        assert_eq!(r.disk_writes, expected, "{scheduler:?}");
        assert_eq!(r.violations, 0);
    }
}

#[test]
fn graphs_cost_what_no_ordering_costs_and_fsync_costs_more() {
    for scheduler in [Scheduler::Fifo, Scheduler::Clook] {
        let none = run_point(Mechanism::None, scheduler, "default", 0, 1);
        let graph = run_point(Mechanism::Graph, scheduler, "default", 0, 1);
        let fsync = run_point(Mechanism::Fsync, scheduler, "default", 0, 1);
        let writes = graph.disk_writes as f64 / none.disk_writes as f64;
        assert!(
            (0.95..=1.05).contains(&writes),
            "{scheduler:?}: writes ratio {writes:.3}"
        );
        let time = graph.time_s / none.time_s;
        assert!(
            (0.97..=1.03).contains(&time),
            "{scheduler:?}: time ratio {time:.3}"
        );
        assert!(fsync.time_s > 1.2 * graph.time_s, "{scheduler:?}");
        for r in [&none, &graph, &fsync] {
            assert_eq!(r.violations, 0);
        }
    }
}

#[test]
fn over_the_sweeps_fsync_is_slower_than_graphs_barriers_gain_least_from_clook_and_nothing_is_violated(
) {
    let points = run(1, true);
    let find = |m: &str, s: &str, param: &str, value: u64| {
        points
            .iter()
            .find(|p| p.mechanism == m && p.scheduler == s && p.param == param && p.value == value)
            .unwrap()
    };
    for p in &points {
        assert_eq!(p.violations, 0, "{p:?}");
        if p.mechanism == "fsync" {
            let g = find("graph", p.scheduler, p.param, p.value);
            assert!(p.time_s > g.time_s, "fsync {p:?} against graph {g:?}");
        }
    }
    // The relative gain from C-LOOK at the default cache size, per mechanism.
    let gain = |m: &str| {
        1.0 - find(m, "clook", "cache_pages", 20_000).time_s
            / find(m, "fifo", "cache_pages", 20_000).time_s
    };
    let barrier = gain("barrier");
    for m in ["none", "fsync", "graph"] {
        assert!(
            barrier < gain(m),
            "barrier gains {barrier:.3}, {m} {:.3}",
            gain(m)
        );
    }
}

#[test]
fn the_checker_catches_a_cache_that_ignores_ordering() {
    for mechanism in [Mechanism::Barrier, Mechanism::Graph] {
        let w = tpcb(mechanism, 2_000);
        let mut s = system(20_000, Scheduler::Clook, &w);
        s.cache.ignore_ordering = true;
        let r = simulate(&s, &w.build(), 1).unwrap();
        assert!(r.violations > 0, "{mechanism:?}");
        assert!(r.first_violation.is_some());
        s.cache.ignore_ordering = false;
        assert_eq!(simulate(&s, &w.build(), 1).unwrap().violations, 0);
    }
}
