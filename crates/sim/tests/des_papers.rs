//! The qualitative results of Kotz & Ellis 1992 and of the XMF appendix, reproduced by the
//! simulator at the papers' parameters.

use sim::des::config::WritePolicy;
use sim::des::kotz::Pattern;
use sim::experiments::kotz_ellis::{run_point, RECORD_SIZES};
use sim::experiments::xmf_cleaning;

const SEED: u64 = 1;

fn integral(r: f64) -> bool {
    r.fract() == 0.0
}

#[test]
fn writefull_stays_near_ideal_for_gw_at_every_record_size_and_writethru_does_not() {
    for &record in &RECORD_SIZES {
        let (full, ideal) = run_point(
            Pattern::Gw,
            false,
            Some(WritePolicy::WriteFull),
            80,
            record,
            SEED,
        );
        assert!(
            full.time_s <= ideal * 1.10,
            "writefull at {record} blocks: {:.2} s against ideal {ideal:.2} s",
            full.time_s
        );
        if !integral(record) {
            let (thru, _) = run_point(
                Pattern::Gw,
                false,
                Some(WritePolicy::WriteThru),
                80,
                record,
                SEED,
            );
            assert!(
                thru.time_s >= 1.25 * full.time_s,
                "writethru at {record} blocks: {:.2} s, writefull {:.2} s",
                thru.time_s,
                full.time_s
            );
            assert!(thru.rewrite_mistakes > 0);
        }
    }
}

#[test]
fn writefull_makes_no_rewrite_mistakes() {
    for pattern in [Pattern::Gw, Pattern::Lw1, Pattern::Seg] {
        for &record in &[0.25, 0.75, 1.0, 1.5, 2.5, 6.5] {
            let (r, _) = run_point(
                pattern,
                false,
                Some(WritePolicy::WriteFull),
                80,
                record,
                SEED,
            );
            assert_eq!(r.rewrite_mistakes, 0, "{pattern:?} at {record} blocks");
            assert_eq!(r.disk_writes, 4000, "{pattern:?} at {record} blocks");
        }
    }
}

#[test]
fn caching_turns_lw1_from_over_100_s_into_a_small_fraction() {
    for record in [1.0, 0.25] {
        let (none, _) = run_point(Pattern::Lw1, false, None, 0, record, SEED);
        let (cached, _) = run_point(
            Pattern::Lw1,
            false,
            Some(WritePolicy::WriteBack),
            80,
            record,
            SEED,
        );
        assert!(none.time_s > 100.0, "no cache: {:.1} s", none.time_s);
        assert!(
            cached.time_s < 0.2 * none.time_s,
            "cache {:.1} s against {:.1} s",
            cached.time_s,
            none.time_s
        );
    }
}

#[test]
fn a_larger_cache_lets_seg_use_more_disks() {
    let time = |buffers| {
        run_point(
            Pattern::Seg,
            false,
            Some(WritePolicy::WriteFull),
            buffers,
            1.0,
            SEED,
        )
        .0
        .time_s
    };
    let (small, large) = (time(20), time(200));
    assert!(
        large < 0.5 * small,
        "20 buffers {small:.1} s, 200 buffers {large:.1} s"
    );
}

#[test]
fn getnewbuf_writes_far_more_than_the_clock_daemon_near_the_knee_and_the_same_when_large() {
    let points = xmf_cleaning::run(SEED, false);
    let get = |cleaner: &str, n: u32| {
        points
            .iter()
            .find(|p| p.cleaner == cleaner && p.cache_buffers == n)
            .unwrap()
            .clone()
    };
    for n in [640, 768] {
        let (g, c) = (get("getnewbuf", n), get("clock", n));
        assert!(
            g.disk_writes as f64 >= 1.5 * c.disk_writes as f64,
            "{n} buffers: getnewbuf {} writes, clock {}",
            g.disk_writes,
            c.disk_writes
        );
        // ... for about the same reads: the extra writes are not extra misses.
        let reads = g.disk_reads as f64 / c.disk_reads as f64;
        assert!(
            (0.9..1.1).contains(&reads),
            "{n} buffers: reads ratio {reads:.2}"
        );
    }
    for n in [2048, 6144] {
        let (g, c) = (get("getnewbuf", n), get("clock", n));
        let ratio = g.disk_writes as f64 / c.disk_writes as f64;
        assert!(
            (0.9..1.1).contains(&ratio),
            "{n} buffers: writes ratio {ratio:.2}"
        );
    }
}
