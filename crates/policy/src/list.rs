//! Intrusive doubly linked lists over per-frame link arrays.
//!
//! Many policies keep frames on one or more queues (LRU's recency list, 2Q's A1in and Am,
//! ARC's T1 and T2). Instead of heap nodes, each frame owns one `[prev, next]` slot in a
//! shared [`Links`] array and a [`List`] is just a head, a tail and a length. A frame is on
//! at most one list of a given `Links` at a time. Every operation is O(1) and allocation
//! free; memory is 8 bytes per frame.
//!
//! Orientation: the *head* is the newest (most recently inserted or used) end, the *tail*
//! the oldest; policies evict from the tail.

use crate::{ensure_slot, FrameId};

/// The null link.
pub const NIL: u32 = u32::MAX;

/// One list: its ends and its length. The links live in a [`Links`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct List {
    head: u32,
    tail: u32,
    len: usize,
}

impl Default for List {
    fn default() -> Self {
        Self::new()
    }
}

impl List {
    /// An empty list.
    pub const fn new() -> Self {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }

    /// Number of frames on the list.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The newest frame.
    #[inline]
    pub fn head(&self) -> Option<FrameId> {
        (self.head != NIL).then_some(FrameId(self.head))
    }

    /// The oldest frame.
    #[inline]
    pub fn tail(&self) -> Option<FrameId> {
        (self.tail != NIL).then_some(FrameId(self.tail))
    }
}

/// Per-frame `[prev, next]` links shared by any number of [`List`]s.
#[derive(Clone, Debug, Default)]
pub struct Links {
    // link[f] = [prev (towards head), next (towards tail)]
    link: Vec<[u32; 2]>,
}

impl Links {
    /// Links for `frames` frames; grows on demand beyond that.
    pub fn with_capacity(frames: usize) -> Self {
        Links {
            link: vec![[NIL, NIL]; frames],
        }
    }

    /// The frame nearer the head than `f`, if any.
    #[inline]
    pub fn prev(&self, f: FrameId) -> Option<FrameId> {
        let p = self.link[f.index()][0];
        (p != NIL).then_some(FrameId(p))
    }

    /// The frame nearer the tail than `f`, if any.
    #[inline]
    pub fn next(&self, f: FrameId) -> Option<FrameId> {
        let n = self.link[f.index()][1];
        (n != NIL).then_some(FrameId(n))
    }

    /// Insert `f` (on no list) at the head of `list`.
    #[inline]
    pub fn push_front(&mut self, list: &mut List, f: FrameId) {
        ensure_slot(&mut self.link, f, [NIL, NIL]);
        let old = list.head;
        self.link[f.index()] = [NIL, old];
        if old != NIL {
            self.link[old as usize][0] = f.0;
        } else {
            list.tail = f.0;
        }
        list.head = f.0;
        list.len += 1;
    }

    /// Insert `f` (on no list) at the tail of `list`.
    #[inline]
    pub fn push_back(&mut self, list: &mut List, f: FrameId) {
        ensure_slot(&mut self.link, f, [NIL, NIL]);
        let old = list.tail;
        self.link[f.index()] = [old, NIL];
        if old != NIL {
            self.link[old as usize][1] = f.0;
        } else {
            list.head = f.0;
        }
        list.tail = f.0;
        list.len += 1;
    }

    /// Insert `f` (on no list) just before `at` (towards the head), where `at` is on `list`.
    #[inline]
    pub fn insert_before(&mut self, list: &mut List, at: FrameId, f: FrameId) {
        ensure_slot(&mut self.link, f, [NIL, NIL]);
        let p = self.link[at.index()][0];
        self.link[f.index()] = [p, at.0];
        self.link[at.index()][0] = f.0;
        if p != NIL {
            self.link[p as usize][1] = f.0;
        } else {
            list.head = f.0;
        }
        list.len += 1;
    }

    /// Remove `f`, which must be on `list`.
    #[inline]
    pub fn unlink(&mut self, list: &mut List, f: FrameId) {
        let [p, n] = self.link[f.index()];
        if p != NIL {
            self.link[p as usize][1] = n;
        } else {
            debug_assert_eq!(list.head, f.0, "frame not on this list");
            list.head = n;
        }
        if n != NIL {
            self.link[n as usize][0] = p;
        } else {
            debug_assert_eq!(list.tail, f.0, "frame not on this list");
            list.tail = p;
        }
        self.link[f.index()] = [NIL, NIL];
        list.len -= 1;
    }

    /// Remove and return the tail (oldest) frame.
    #[inline]
    pub fn pop_back(&mut self, list: &mut List) -> Option<FrameId> {
        let t = list.tail()?;
        self.unlink(list, t);
        Some(t)
    }

    /// Move `f`, which is on `list`, to its head.
    #[inline]
    pub fn move_to_front(&mut self, list: &mut List, f: FrameId) {
        if list.head != f.0 {
            self.unlink(list, f);
            self.push_front(list, f);
        }
    }

    /// Frames from the head (newest) to the tail (oldest).
    pub fn iter_from_head<'a>(&'a self, list: &List) -> impl Iterator<Item = FrameId> + 'a {
        let mut cur = list.head;
        std::iter::from_fn(move || {
            (cur != NIL).then(|| {
                let f = FrameId(cur);
                cur = self.link[cur as usize][1];
                f
            })
        })
    }

    /// Frames from the tail (oldest) to the head (newest): eviction order for LRU/FIFO.
    pub fn iter_from_tail<'a>(&'a self, list: &List) -> impl Iterator<Item = FrameId> + 'a {
        let mut cur = list.tail;
        std::iter::from_fn(move || {
            (cur != NIL).then(|| {
                let f = FrameId(cur);
                cur = self.link[cur as usize][0];
                f
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_to_front_reorders_from_the_tail() {
        let mut links = Links::with_capacity(4);
        let mut lru = List::new();
        for f in 0..3 {
            links.push_front(&mut lru, FrameId(f));
        }
        links.move_to_front(&mut lru, FrameId(0));
        let order: Vec<u32> = links.iter_from_tail(&lru).map(|f| f.0).collect();
        assert_eq!(order, [1, 2, 0]);
    }

    fn order(links: &Links, l: &List) -> Vec<u32> {
        links.iter_from_head(l).map(|f| f.0).collect()
    }

    #[test]
    fn push_unlink_move() {
        let mut links = Links::with_capacity(2);
        let mut l = List::new();
        links.push_front(&mut l, FrameId(0));
        links.push_back(&mut l, FrameId(1));
        links.push_front(&mut l, FrameId(5)); // grows
        assert_eq!(order(&links, &l), [5, 0, 1]);
        links.unlink(&mut l, FrameId(0));
        assert_eq!(order(&links, &l), [5, 1]);
        links.insert_before(&mut l, FrameId(5), FrameId(0));
        assert_eq!(order(&links, &l), [0, 5, 1]);
        links.move_to_front(&mut l, FrameId(1));
        assert_eq!(order(&links, &l), [1, 0, 5]);
        assert_eq!(links.pop_back(&mut l), Some(FrameId(5)));
        assert_eq!(l.len(), 2);
        let rev: Vec<u32> = links.iter_from_tail(&l).map(|f| f.0).collect();
        assert_eq!(rev, [0, 1]);
        links.pop_back(&mut l);
        links.pop_back(&mut l);
        assert!(l.is_empty());
        assert_eq!(l.head(), None);
        assert_eq!(l.tail(), None);
    }
}
