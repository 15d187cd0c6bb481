//! The graph's rules on hand-built cases (Figures 4.7 and 4.9, barriers, errors).

use super::*;

/// A whole graph write of one page: its node, where the page went, write done.
fn gw(s: &mut OrderState, frame: u32, deps: &[NodeId]) -> (NodeId, Placement) {
    let mut n = s.graph_node(deps);
    let placed = s.order_write(frame, &mut n);
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
    assert_eq!(
        s.find(l1),
        l2,
        "the first log node was combined into the second"
    );
    assert_eq!(gw(&mut s, 11, &[l2]).1, Placement::Join);
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
    s.order_write(3, &mut e1);
    s.order_write(4, &mut e1);
    let k2 = s.barrier();
    let mut e2 = s.plain_node().unwrap();
    assert_ne!(e1, e2);
    assert_eq!(s.order_write(3, &mut e2), Placement::Duplicate { node: e1 });
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
    assert_eq!(s.order_write(0, &mut n), Placement::Join);
    assert_eq!(s.find(l1), n);
    let first = n;
    assert_eq!(s.order_write(5, &mut n), Placement::Duplicate { node: d1 });
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
