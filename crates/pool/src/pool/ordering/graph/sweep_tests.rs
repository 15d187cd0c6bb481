//! The incremental sweep against the whole-graph sweep it replaced, on random sequences
//! of graph writes, barriers, levels (written, durable or failed), dropped frames and
//! sweeps: after every sweep both leave the same live nodes and the same combinations,
//! and every id issued has the same status.

use super::*;
use testutil::{Rng, Seed, TestRng};

/// The whole-graph sweep (the reference): every live node, again and again, until no
/// more can die.
fn sweep_everything(s: &mut OrderState) {
    loop {
        let dead: Vec<NodeId> = s
            .live
            .iter()
            .filter(|(_, n)| n.pending == 0 && n.open == 0 && n.deps.iter().all(|&d| !s.is_live(d)))
            .map(|(&id, _)| id)
            .collect();
        if dead.is_empty() {
            return;
        }
        for id in dead {
            let node = s.live.remove(&id).expect("listed as live");
            for alias in node.aliases {
                s.merged.remove(alias);
            }
        }
    }
}

/// Sweep `s` incrementally and check it against the reference on a copy.
fn sweep_and_compare(s: &mut OrderState, seed: Seed, step: usize) {
    let mut reference = s.clone();
    sweep_everything(&mut reference);
    s.sweep();
    let sorted = |s: &OrderState| {
        let mut ids: Vec<NodeId> = s.live.keys().copied().collect();
        ids.sort_unstable();
        ids
    };
    let (live, expected) = (sorted(s), sorted(&reference));
    assert_eq!(live, expected, "{seed}, step {step}: live nodes differ");
    assert_eq!(
        s.merged, reference.merged,
        "{seed}, step {step}: combinations"
    );
    for id in 1..=s.last {
        assert_eq!(
            s.status(id),
            reference.status(id),
            "{seed}, step {step}: status of {id}"
        );
    }
}

/// A graph write over 1–3 random frames after up to 2 random earlier ids.
fn graph_write(s: &mut OrderState, rng: &mut TestRng) {
    let deps: Vec<NodeId> = (0..rng.gen_range(0..3))
        .filter(|_| s.last > 0)
        .map(|_| rng.gen_range(1..=s.last))
        .collect();
    let mut node = s.graph_node(&deps);
    for _ in 0..rng.gen_range(1..4) {
        let frame = rng.gen_range(0..8u32);
        if let Placement::Duplicate { node: old } = s.order_write(frame, &mut node, Some(&deps)) {
            s.add_dup(old, 0, u64::from(frame));
        }
    }
    s.write_done(node);
}

/// One level: each ready version written or not; each written one durable or failed.
fn level(s: &mut OrderState, rng: &mut TestRng) {
    let (frames, dups) = s.level(None);
    for (frame, tag) in frames {
        if rng.gen_bool(0.2) || !s.frame_written(frame, tag) {
            continue;
        }
        if rng.gen_bool(0.1) {
            let Tag::Pending { node, .. } = tag else {
                unreachable!("a level lists pending versions")
            };
            s.failed(node, Some((frame, tag)), None, "EIO");
        } else {
            s.frame_durable(frame, tag);
        }
    }
    for slot in dups {
        if rng.gen_bool(0.8) {
            s.dup_written(slot);
            s.dup_durable(slot);
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "draws a fresh seed from the clock, which Miri's isolation forbids; no unsafe code of its own"
)]
fn incremental_sweep_equals_the_whole_graph_sweep() {
    testutil::explore(|root| {
        for run in 0..40u64 {
            let seed = root.derive(run);
            let mut rng = seed.rng();
            let mut s = OrderState::default();
            for step in 0..120 {
                match rng.gen_range(0..100) {
                    0..=49 => graph_write(&mut s, &mut rng),
                    50..=54 => {
                        s.barrier();
                    }
                    55..=79 => level(&mut s, &mut rng),
                    80..=84 => s.frame_dropped(rng.gen_range(0..8)),
                    _ => sweep_and_compare(&mut s, seed, step),
                }
            }
            // Drain: levels until everything is durable.
            for step in 120..2000 {
                level(&mut s, &mut rng);
                sweep_and_compare(&mut s, seed, step);
                if !s.has_pending() {
                    break;
                }
            }
            assert!(!s.has_pending(), "{seed}: the graph never drained");
        }
    });
}
