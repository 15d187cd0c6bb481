//! The yardstick for experiment 4: what PinRange emulated over the page cache
//! saves, in device reads and run time, against half of what PinRange saves as the
//! pool's own policy in experiment 2 (or the simulator's, where the pool did not run).
//!
//! A throttled page-cache pass is held to the pool run under the same throttle
//! (`pool-throttled`) when there is one: run times compare only where a device read costs
//! the same. Unthrottled, a read here takes about 35 µs and the pool's time is mostly its
//! own CPU (its `linux` policy's bookkeeping costs more per access than PinRange's),
//! which the page cache, where the kernel caches, cannot save.

use super::index::IndexRun;
use serde::Serialize;

/// One steered way against the gain PinRange makes in the reference engine (the pool
/// when it ran, else the simulator), in device reads and run time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GainRow {
    /// `D7:F7`.
    pub tree: String,
    /// The engine of the way (`pagecache`, `pagecache-throttled`).
    pub engine: &'static str,
    /// The way.
    pub way: &'static str,
    /// Where the gain to match comes from: `pool-throttled`, `pool` or `sim`.
    pub reference: &'static str,
    /// Device pages read by the engine's `linux` way less this way's.
    pub reads_saved: i64,
    /// The same, as a share of the `linux` way's.
    pub reads_saved_share: f64,
    /// The reference's PinRange (as its own policy) against its `linux`, as a share.
    pub reference_reads_saved_share: f64,
    /// Run time saved, as a share of the `linux` way's.
    pub time_saved_share: f64,
    /// The reference's PinRange run time saved, as a share.
    pub reference_time_saved_share: f64,
    /// The goal in device reads: at least half the reference's share.
    pub reads_goal_met: bool,
    /// The same goal in run time.
    pub time_goal_met: bool,
}

/// The comparison: each steered way of each page-cache engine against half of
/// what PinRange gains as the pool's own policy (or the simulator's, without a pool run).
pub fn gains(runs: &[IndexRun]) -> Vec<GainRow> {
    let find = |engine: &str, tree: &str, way: &str| {
        runs.iter()
            .find(|r| r.engine == engine && r.tree == tree && r.way == way)
    };
    let saved = |base: &IndexRun, r: &IndexRun, f: fn(&IndexRun) -> f64| {
        let b = f(base);
        if b > 0.0 {
            1.0 - f(r) / b
        } else {
            0.0
        }
    };
    let reads = |r: &IndexRun| r.device_pages_read as f64;
    let time = |r: &IndexRun| r.run_time_s;
    let mut rows = Vec::new();
    for r in runs.iter().filter(|r| r.engine.starts_with("pagecache")) {
        if r.way == "linux" {
            continue;
        }
        let Some(base) = find(r.engine, &r.tree, "linux") else {
            continue;
        };
        let references: &[&'static str] = if r.engine == "pagecache-throttled" {
            &["pool-throttled", "pool", "sim"]
        } else {
            &["pool", "sim"]
        };
        let reference = references.iter().find_map(|&e| {
            let b = find(e, &r.tree, "linux")?;
            let p = find(e, &r.tree, "pinrange")?;
            Some((e, b, p))
        });
        let Some((reference, ref_base, ref_pin)) = reference else {
            continue;
        };
        let reads_saved_share = saved(base, r, reads);
        let reference_reads_saved_share = saved(ref_base, ref_pin, reads);
        let time_saved_share = saved(base, r, time);
        let reference_time_saved_share = saved(ref_base, ref_pin, time);
        rows.push(GainRow {
            tree: r.tree.clone(),
            engine: r.engine,
            way: r.way,
            reference,
            reads_saved: base.device_pages_read as i64 - r.device_pages_read as i64,
            reads_saved_share,
            reference_reads_saved_share,
            time_saved_share,
            reference_time_saved_share,
            reads_goal_met: reads_saved_share >= reference_reads_saved_share / 2.0,
            time_goal_met: time_saved_share >= reference_time_saved_share / 2.0,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::index::PAGE_BYTES;

    fn run(engine: &'static str, way: &'static str, reads: u64, secs: f64) -> IndexRun {
        IndexRun {
            engine,
            tree: "D7:F7".into(),
            way,
            lookups: 10,
            accesses: 70,
            hits: 0,
            hit_rate: 0.0,
            run_time_s: secs,
            device_pages_read: reads,
            kernel_read_bytes: reads * PAGE_BYTES,
            refreshes: 0,
            overhead_us: 0.0,
        }
    }

    /// Worked by hand: the pool's PinRange saves 10% of its reads and 20% of its time;
    /// the page cache's emulation saves 6% of reads (goal: 5%, met) and 8% of its time
    /// (goal: 10%, missed); a way that reads more saves a negative share.
    #[test]
    fn gains_are_held_to_half_the_pools() {
        let runs = [
            run("pool", "linux", 1000, 10.0),
            run("pool", "pinrange-info", 990, 12.0),
            run("pool", "pinrange", 900, 8.0),
            run("sim", "linux", 5, 1.0),
            run("sim", "pinrange", 1, 1.0),
            run("pagecache", "linux", 2000, 5.0),
            run("pagecache", "pinrange-info", 1880, 4.6),
            run("pagecache", "pinrange-info+dontneed", 2100, 5.0),
        ];
        let g = gains(&runs);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].reference, "pool");
        assert_eq!(g[0].way, "pinrange-info");
        assert_eq!(g[0].reads_saved, 120);
        assert!((g[0].reads_saved_share - 0.06).abs() < 1e-12);
        assert!((g[0].reference_reads_saved_share - 0.10).abs() < 1e-12);
        assert!((g[0].time_saved_share - 0.08).abs() < 1e-12);
        assert!((g[0].reference_time_saved_share - 0.20).abs() < 1e-12);
        assert!(g[0].reads_goal_met && !g[0].time_goal_met);
        assert_eq!(g[1].reads_saved, -100);
        assert!(!g[1].reads_goal_met && !g[1].time_goal_met);
        // Without a pool run the simulator is the reference.
        let g = gains(&runs[3..]);
        assert_eq!(g[0].reference, "sim");
        assert!((g[0].reference_reads_saved_share - 0.8).abs() < 1e-12);
    }

    /// A throttled pass is held to the pool under the same throttle: PinRange saves 10%
    /// of the throttled pool's time there, so 5.5% saved meets the goal that the
    /// unthrottled pool (20%) would have missed; an unthrottled pass keeps the pool.
    #[test]
    fn a_throttled_pass_is_held_to_the_throttled_pool() {
        let runs = [
            run("pool", "linux", 1000, 10.0),
            run("pool", "pinrange", 900, 8.0),
            run("pool-throttled", "linux", 1000, 100.0),
            run("pool-throttled", "pinrange", 900, 90.0),
            run("pagecache", "linux", 2000, 5.0),
            run("pagecache", "pinrange-info+dontneed", 1900, 4.8),
            run("pagecache-throttled", "linux", 2000, 200.0),
            run("pagecache-throttled", "pinrange-info+dontneed", 1890, 189.0),
        ];
        let g = gains(&runs);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].engine, g[0].reference), ("pagecache", "pool"));
        assert!((g[0].reference_time_saved_share - 0.20).abs() < 1e-12);
        assert!(!g[0].time_goal_met);
        assert_eq!(
            (g[1].engine, g[1].reference),
            ("pagecache-throttled", "pool-throttled")
        );
        assert!((g[1].time_saved_share - 0.055).abs() < 1e-12);
        assert!((g[1].reference_time_saved_share - 0.10).abs() < 1e-12);
        assert!(g[1].reads_goal_met && g[1].time_goal_met);
        // Without a throttled pool run, the pool stands in.
        let g = gains(&[&runs[..2], &runs[6..]].concat());
        assert_eq!(g[0].reference, "pool");
        assert!(!g[0].time_goal_met);
    }
}
