//! The graph's rules on hand-built cases (Figures 4.7 and 4.9, barriers, errors).

use super::*;

/// A whole graph write of one page, as the pool makes it: its node, where the page
/// went, write done.
fn gw(s: &mut OrderState, frame: u32, deps: &[NodeId]) -> (NodeId, Placement) {
    let mut n = s.graph_node_at(frame, deps);
    let placed = s.order_write(frame, &mut n, Some(deps));
    s.write_done(n);
    (n, placed)
}

/// Two transactions whose log records share a page and whose data pages differ: the
/// two log versions combine into one node that both data nodes follow (Figure 4.7).
#[test]
fn log_writes_to_one_page_combine() {
    let mut s = OrderState::default();
    let (l1, p) = gw(&mut s, 0, &[]);
    assert_eq!(p, Placement::Join);
    assert_eq!(gw(&mut s, 10, &[l1]).1, Placement::Join);
    let (l2, p) = gw(&mut s, 0, &[]);
    assert_eq!(p, Placement::Join);
    assert_ne!(l2, l1, "each write has its own id");
    assert_eq!(s.find(l2), l1, "the second record joined the page's node");
    assert_eq!(gw(&mut s, 11, &[l2]).1, Placement::Join);
    // one log node and one node of data writes after it: no node was issued for the
    // second record, nor for the second data write
    assert_eq!(s.live.len(), 2);
    // the level: only the log page; then both data pages
    let (frames, dups) = s.level(None);
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [0]);
    assert!(dups.is_empty());
    assert!(s.frame_written(0, frames[0].1));
    assert!(s.frame_durable(0, frames[0].1));
    s.sweep();
    assert_eq!(s.status(l1), Ok(Status::Durable));
    assert_eq!(s.status(l2), Ok(Status::Durable));
    let (frames, _) = s.level(None);
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [10, 11]);
}

/// A write joins the node of its page's pending version only if that node follows
/// everything the write must: here the page's node follows nothing, and the write
/// follows `x` (on another page), so the page's version may still be written before
/// `x` is durable, but the write's may not.
#[test]
fn a_write_joins_the_pages_node_only_if_it_follows_the_same_writes() {
    let mut s = OrderState::default();
    let (a, _) = gw(&mut s, 5, &[]);
    let (x, _) = gw(&mut s, 6, &[]);
    let (w, p) = gw(&mut s, 5, &[x]);
    assert_eq!(p, Placement::Join, "combined: no path between the two");
    assert_eq!(s.find(w), s.find(a));
    // the combined node follows x: only x's page is in the first level
    let (frames, _) = s.level(None);
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [6]);
    assert!(s.frame_written(6, frames[0].1) && s.frame_durable(6, frames[0].1));
    s.sweep();
    assert_eq!(s.status(x), Ok(Status::Durable));
    let (frames, _) = s.level(None);
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [5]);
    // a write after x (durable now) and nothing else joins the page's node directly
    let live = s.live.len();
    let (v, _) = gw(&mut s, 5, &[x]);
    assert_eq!((s.find(v), s.live.len()), (s.find(a), live));
}

/// Figure 4.9: log write 2 follows data B, which follows log write 1, all on the same
/// log page: the second log write cannot combine with the first; the old version is
/// duplicated and written first.
#[test]
fn a_write_ordered_after_the_pages_version_duplicates_it() {
    let mut s = OrderState::default();
    let (l1, _) = gw(&mut s, 0, &[]);
    let (b, _) = gw(&mut s, 20, &[l1]);
    let (l2, p) = gw(&mut s, 0, &[b]);
    assert_eq!(p, Placement::Duplicate { node: l1 });
    let slot = s.add_dup(l1, 7, 0);
    assert_eq!(s.dup_count(), 1);
    // level 1: the duplicate (l1's version); level 2: data b; level 3: the frame (l2)
    let (frames, dups) = s.level(None);
    assert!(frames.is_empty());
    assert_eq!(dups, [slot]);
    s.dup_written(slot);
    s.dup_durable(slot);
    s.sweep();
    let (frames, _) = s.level(None);
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [20]);
    assert!(s.frame_written(20, frames[0].1) && s.frame_durable(20, frames[0].1));
    s.sweep();
    let (frames, _) = s.level(None);
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [0]);
    assert_eq!(s.status(l2), Ok(Status::Pending));
}

/// A page written again after a barrier is duplicated; the marker is durable exactly
/// when everything before the barrier is.
#[test]
fn barriers_keep_epochs_apart() {
    let mut s = OrderState::default();
    assert_eq!(s.plain_node(), None);
    let k1 = s.barrier();
    s.sweep();
    let mut e1 = s.plain_node().unwrap();
    s.order_write(3, &mut e1, None);
    s.order_write(4, &mut e1, None);
    let k2 = s.barrier();
    let mut e2 = s.plain_node().unwrap();
    assert_ne!(e1, e2);
    assert_eq!(
        s.order_write(3, &mut e2, None),
        Placement::Duplicate { node: e1 }
    );
    s.add_dup(e1, 1, 3);
    s.sweep();
    assert_eq!(
        s.status(k1),
        Ok(Status::Durable),
        "nothing before the first"
    );
    assert_eq!(s.status(k2), Ok(Status::Pending));
    let (frames, dups) = s.level(None);
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [4]);
    assert_eq!(dups, [0]);
}

/// A graph write that has tagged nothing yet is not durable (a level's sweep must not
/// take its node), and is once it is done.
#[test]
fn a_write_under_way_keeps_its_node() {
    let mut s = OrderState::default();
    let n = s.graph_node(&[]);
    assert_eq!(s.sweep(), 0);
    assert_eq!(s.status(n), Ok(Status::Pending));
    s.write_done(n);
    assert_eq!(s.sweep(), 1);
    assert_eq!(s.status(n), Ok(Status::Durable));
}

/// A write whose page carries a node that already follows this write (through a
/// combination made earlier in the same call) gets a fresh node after both, and the
/// old version is duplicated.
#[test]
fn a_page_of_a_later_node_splits_the_write() {
    let mut s = OrderState::default();
    let (l1, _) = gw(&mut s, 0, &[]); // log page
    let (d1, _) = gw(&mut s, 5, &[l1]); // data page after it
                                        // one write over the log page and the data page: the log page combines l1 into
                                        // the new node, which the data page's node then follows
    let mut n = s.graph_node(&[]);
    assert_eq!(s.order_write(0, &mut n, Some(&[])), Placement::Join);
    assert_eq!(s.find(l1), n);
    let first = n;
    assert_eq!(
        s.order_write(5, &mut n, Some(&[])),
        Placement::Duplicate { node: d1 }
    );
    assert_ne!(n, first, "a fresh node");
    s.write_done(n);
    // order: the combined log node, then d1's duplicate, then the fresh node
    let (frames, dups) = s.level(None);
    assert_eq!((frames.len(), dups.len()), (1, 0));
    assert_eq!(frames[0].0, 0);
}

#[test]
fn unknown_ids_and_errors_are_reported() {
    let mut s = OrderState::default();
    assert_eq!(s.status(0), Err(Unknown(0)));
    assert_eq!(s.status(1), Err(Unknown(1)));
    let (a, _) = gw(&mut s, 1, &[]);
    let (b, _) = gw(&mut s, 2, &[a]);
    let (frames, _) = s.level(None);
    s.frame_written(1, frames[0].1);
    s.failed(a, Some(frames[0]), None, "EIO");
    assert_eq!(s.status(b), Ok(Status::Failed("EIO".into())));
    // back to pending: the next level writes it again
    assert_eq!(s.level(None).0, frames);
}

/// Frame `f` holding page `page` of file 1, loaded for the `incarnation`-th time.
fn held(f: u32, page: u64, incarnation: u32) -> ReleasedPage {
    ReleasedPage {
        frame: f,
        owner: 1,
        page,
        incarnation,
    }
}

/// Where frame `f` holds page `f` of file 1, first load (the release needs each frame's
/// page).
fn page_of(f: u32) -> ReleasedPage {
    held(f, u64::from(f), 1)
}

/// Make the level's frames durable (written and synced), then sweep.
fn write_level(s: &mut OrderState) {
    let (frames, _) = s.level(None);
    for (f, t) in frames {
        assert!(s.frame_written(f, t) && s.frame_durable(f, t));
    }
    s.sweep();
}

/// A data write after a log record is released only once the log is durable, unless
/// something follows it or someone waits for it; released, it is not durable before
/// it is confirmed.
#[test]
fn a_leaf_is_released_once_its_dependencies_are_durable() {
    let mut s = OrderState::default();
    let (l, _) = gw(&mut s, 0, &[]);
    let (l2, _) = gw(&mut s, 1, &[]);
    let (d, _) = gw(&mut s, 10, &[l]);
    // After two writes: not combined with d (`writes_after_one_node_alone_combine`).
    let (e, _) = gw(&mut s, 11, &[l, l2]);
    assert!(s.release_leaves(&[], page_of).is_empty(), "the log is live");
    write_level(&mut s);
    assert_eq!(s.release_leaves(&[e], page_of), [10], "e is waited for");
    assert_eq!(s.tag_of(10), None);
    assert_eq!(s.status(d), Ok(Status::Pending));
    assert_eq!(s.released_unconfirmed(), 1);
    // the flusher's share sees it (unforced); nothing needs it
    let all = s.confirmations(None, Confirm::AlsoWritten);
    assert_eq!(all.len(), 1);
    assert!(!all[0].force);
    assert!(s.confirmations(None, Confirm::Needed).is_empty());
    s.confirm(d, &all[0].pages);
    s.sweep();
    assert_eq!(s.status(d), Ok(Status::Durable));
}

/// Graph writes that follow one node and nothing else combine (one node, durable
/// together, each with its own id); a write after another node, or after two, joins
/// neither; once that node is durable, a write after it starts a node of its own.
#[test]
fn writes_after_one_node_alone_combine() {
    let mut s = OrderState::default();
    let (l, _) = gw(&mut s, 0, &[]);
    let (m, _) = gw(&mut s, 1, &[]);
    let (d, _) = gw(&mut s, 10, &[l]);
    let (e, _) = gw(&mut s, 11, &[l]);
    let (f, _) = gw(&mut s, 12, &[m]);
    let (g, _) = gw(&mut s, 13, &[l, m]);
    assert!(l < m && m < d && d < e && e < f && f < g, "ids increase");
    assert_eq!(s.find(d), s.find(e), "same dependency: one node");
    assert_ne!(s.find(f), s.find(d));
    assert_ne!(s.find(g), s.find(d));
    assert_ne!(s.find(g), s.find(f));
    write_level(&mut s);
    assert_eq!(s.release_leaves(&[], page_of), [10, 11, 12, 13]);
    let all = s.confirmations(None, Confirm::AlsoWritten);
    let de = all
        .iter()
        .find(|c| c.node == s.find(d))
        .expect("d and e's node");
    assert_eq!(de.pages.len(), 2);
    let pages = de.pages.clone();
    s.confirm(d, &pages);
    s.sweep();
    assert_eq!(s.status(d), Ok(Status::Durable));
    assert_eq!(s.status(e), Ok(Status::Durable), "durable together");
    assert_eq!(s.status(f), Ok(Status::Pending));
    assert_eq!(s.status(g), Ok(Status::Pending));
    // l is durable now: a write after it has no live dependency, and a node of its own
    let (h, _) = gw(&mut s, 14, &[l]);
    let (i, _) = gw(&mut s, 15, &[l]);
    assert_ne!(s.find(h), s.find(i));
}

/// A write that names a released leaf after its release is not ready before the leaf is
/// confirmed, and makes the leaf needed (forced).
#[test]
fn a_dependent_gained_after_the_release_waits_for_the_confirmation() {
    let mut s = OrderState::default();
    let (l, _) = gw(&mut s, 0, &[]);
    let (d, _) = gw(&mut s, 10, &[l]);
    write_level(&mut s);
    assert_eq!(s.release_leaves(&[], page_of), [10]);
    let (_, _) = gw(&mut s, 11, &[d]);
    assert!(s.level(None).0.is_empty(), "the dependent is not ready");
    assert!(s.release_leaves(&[], page_of).is_empty());
    let needed = s.confirmations(None, Confirm::Needed);
    assert_eq!(needed.len(), 1);
    assert!(needed[0].force && needed[0].node == d);
    s.confirm(d, &needed[0].pages);
    s.sweep();
    let (frames, _) = s.level(None);
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [11]);
}

/// A new ordered write to a released page takes the released version back: pending
/// again, it combines with the new write (no path between them).
#[test]
fn a_write_to_a_released_page_takes_its_version_back() {
    let mut s = OrderState::default();
    let (l, _) = gw(&mut s, 0, &[]);
    let (d, _) = gw(&mut s, 10, &[l]);
    write_level(&mut s);
    assert_eq!(s.release_leaves(&[], page_of), [10]);
    let mut n = s.graph_node(&[]);
    s.unrelease(held(10, 10, 1));
    assert_eq!(s.released_unconfirmed(), 0);
    assert_eq!(s.order_write(10, &mut n, Some(&[])), Placement::Join);
    s.write_done(n);
    assert_eq!(s.find(d), n, "combined");
    // a stale record (the frame holds another page now) is not taken back
    let (l2, _) = gw(&mut s, 1, &[]);
    let (d2, _) = gw(&mut s, 12, &[l2]);
    write_level(&mut s);
    let _ = s.release_leaves(&[], page_of);
    s.unrelease(held(12, 99, 1));
    assert_eq!(s.status(d2), Ok(Status::Pending));
    assert_eq!(s.tag_of(12), None);
}

/// The frame of a released version was evicted (written) and loaded with the same page
/// again: that load is not the released version, so a write to it does not take the
/// version back, and the version stays to be confirmed (by the frame's new load, its
/// written state). Before the load count was part of the record, the new load passed for
/// the released version not yet written, and a write that follows the leaf, landing on
/// it, held the leaf back forever (found by the crash enumeration's fresh seeds).
#[test]
fn another_load_of_the_released_page_is_not_the_released_version() {
    let mut s = OrderState::default();
    let (l, _) = gw(&mut s, 0, &[]);
    let (d, _) = gw(&mut s, 12, &[l]);
    write_level(&mut s);
    assert_eq!(s.release_leaves(&[], page_of), [12]);
    let mut n = s.graph_node(&[d]);
    s.unrelease(held(12, 12, 2));
    assert_eq!(
        s.released_unconfirmed(),
        1,
        "the record stays, to be confirmed"
    );
    assert_eq!(s.tag_of(12), None, "not pending again");
    assert!(matches!(
        s.order_write(12, &mut n, Some(&[d])),
        Placement::Join
    ));
    s.write_done(n);
    assert_ne!(
        s.find(d),
        s.find(n),
        "not combined: the new write follows the leaf"
    );
    let needed = s.confirmations(None, Confirm::Needed);
    assert_eq!(needed.len(), 1);
    assert_eq!(needed[0].pages, [held(12, 12, 1)]);
    s.confirm(d, &needed[0].pages);
    s.sweep();
    assert_eq!(s.status(d), Ok(Status::Durable));
    assert_eq!(
        s.level(None).0.iter().map(|f| f.0).collect::<Vec<_>>(),
        [12]
    );
}

/// A data page written again, while the first transaction's log record is being synced,
/// by a transaction after a newer record: the two data nodes combine (no path between
/// them), so the node follows both records. Once the first record is durable, the page
/// only the first transaction wrote is released; the page both wrote waits for the
/// second record (its bytes hold the second transaction's write), and the node is not
/// durable before both pages are released and confirmed.
#[test]
fn a_combined_nodes_pages_are_released_as_their_own_writes_allow() {
    let mut s = OrderState::default();
    let (l1, _) = gw(&mut s, 0, &[]);
    let (d1, _) = gw(&mut s, 10, &[l1]);
    gw(&mut s, 11, &[l1]);
    // the level of l1: its log page written, in flight until the sync
    let (frames, _) = s.level(None);
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [0]);
    assert!(s.frame_written(0, frames[0].1));
    // meanwhile: the next record (a new version of the log page), and its data write
    // over page 11
    let (l2, _) = gw(&mut s, 0, &[]);
    let (d2, p) = gw(&mut s, 11, &[l2]);
    assert_eq!(p, Placement::Join);
    assert_eq!(s.find(d1), s.find(d2), "combined");
    // the sync: l1 is durable, l2 is not (the frame stays tagged, for l2's version)
    assert!(!s.frame_durable(0, frames[0].1));
    s.sweep();
    assert_eq!(s.status(l1), Ok(Status::Durable));
    assert_eq!(s.release_leaves(&[], page_of), [10]);
    assert_eq!(s.tag_of(11).map(|_| ()), Some(()), "page 11 waits for l2");
    // the level of l2, then page 11 goes too
    write_level(&mut s);
    assert_eq!(s.status(l2), Ok(Status::Durable));
    assert_eq!(s.release_leaves(&[], page_of), [11]);
    assert_eq!(s.status(d1), Ok(Status::Pending), "released, not confirmed");
    let c = s.confirmations(None, Confirm::AlsoWritten);
    assert_eq!(c.len(), 1);
    s.confirm(c[0].node, &c[0].pages);
    s.sweep();
    assert_eq!(s.status(d1), Ok(Status::Durable));
    assert_eq!(s.status(d2), Ok(Status::Durable));
}

/// A page written after two records on different log pages needs both: when the second
/// is durable first, the page stays with its node (the first transaction's bytes in it
/// wait for the first record).
#[test]
fn a_page_waits_for_every_record_its_bytes_follow() {
    let mut s = OrderState::default();
    let (l1, _) = gw(&mut s, 0, &[]);
    let (l2, _) = gw(&mut s, 1, &[]);
    let (d1, _) = gw(&mut s, 11, &[l1]);
    let (d2, _) = gw(&mut s, 11, &[l2]);
    assert_eq!(s.find(d1), s.find(d2), "combined");
    // l2 alone becomes durable (a waiter's level)
    let (frames, _) = s.level(Some(&[l2]));
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [1]);
    assert!(s.frame_written(1, frames[0].1) && s.frame_durable(1, frames[0].1));
    s.sweep();
    assert_eq!(s.status(l2), Ok(Status::Durable));
    assert_eq!(s.release_leaves(&[], page_of), Vec::<u32>::new());
    write_level(&mut s);
    assert_eq!(s.release_leaves(&[], page_of), [11]);
}

/// A write that joins a combined node adds its own dependencies to its page's needs, not
/// the node's: page 10 carries only writes after l1, so it goes once l1 is durable, while
/// the node (after l1 and l2) keeps page 11.
#[test]
fn a_write_joining_a_combined_node_adds_only_what_it_follows() {
    let mut s = OrderState::default();
    let (l1, _) = gw(&mut s, 0, &[]);
    let (l2, _) = gw(&mut s, 1, &[]);
    let (d1, _) = gw(&mut s, 11, &[l1]);
    gw(&mut s, 10, &[l1]);
    gw(&mut s, 11, &[l2]);
    let (w, _) = gw(&mut s, 10, &[l1]);
    assert_eq!(s.find(w), s.find(d1), "joined the combined node");
    let (frames, _) = s.level(Some(&[l1]));
    assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), [0]);
    assert!(s.frame_written(0, frames[0].1) && s.frame_durable(0, frames[0].1));
    s.sweep();
    assert_eq!(s.status(l2), Ok(Status::Pending));
    assert_eq!(s.release_leaves(&[], page_of), [10]);
}
