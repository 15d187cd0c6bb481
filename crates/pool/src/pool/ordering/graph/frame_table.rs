//! A map keyed by frame id, stored as a vector indexed by the id.
//!
//! Frame ids are dense (0 to the pool's frame count), and the ordering state looks a
//! frame up several times per ordered write, under the ordering lock while the writer
//! holds the page's latch: the tag, what the bytes need, whether the frame carries a
//! released version. As hash maps these cost a hash and a probe each, and they grew by
//! rehashing into fresh memory while a run warmed up (page faults in the write path,
//! `docs/experiments/burnett-ordering.md`, "Where graphs' extra CPU goes"). Indexed by
//! id, a lookup is one load and the table never moves once it covers every frame. A
//! walk visits every slot, which is the pool's frame count: the level and release walks
//! that use it looked at every tagged frame already, up to all of them.

/// Values by frame id (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct FrameTable<V> {
    slots: Vec<Option<V>>,
    len: usize,
}

impl<V> Default for FrameTable<V> {
    fn default() -> Self {
        FrameTable {
            slots: Vec::new(),
            len: 0,
        }
    }
}

impl<V> FrameTable<V> {
    /// The value of `frame`, if any.
    #[inline]
    pub fn get(&self, frame: u32) -> Option<&V> {
        self.slots.get(frame as usize)?.as_ref()
    }

    /// The value of `frame`, if any, to change in place.
    #[inline]
    pub fn get_mut(&mut self, frame: u32) -> Option<&mut V> {
        self.slots.get_mut(frame as usize)?.as_mut()
    }

    /// Whether `frame` has a value.
    #[inline]
    pub fn contains_key(&self, frame: u32) -> bool {
        self.get(frame).is_some()
    }

    /// Set `frame`'s value; returns the one it replaces.
    pub fn insert(&mut self, frame: u32, value: V) -> Option<V> {
        let i = frame as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        let old = self.slots[i].replace(value);
        self.len += usize::from(old.is_none());
        old
    }

    /// Take `frame`'s value out.
    pub fn remove(&mut self, frame: u32) -> Option<V> {
        let old = self.slots.get_mut(frame as usize)?.take();
        self.len -= usize::from(old.is_some());
        old
    }

    /// Frames with a value.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Every frame with its value, in frame order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &V)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((i as u32, v.as_ref()?)))
    }
}

#[cfg(test)]
mod tests {
    use super::FrameTable;

    /// Inserts, replacements and removals keep the count, and a walk sees the frames in
    /// order, whatever order they were set in.
    #[test]
    fn counts_and_walks_in_frame_order() {
        let mut t: FrameTable<&str> = FrameTable::default();
        assert_eq!(t.get(7), None);
        assert_eq!(t.remove(7), None);
        assert_eq!(t.insert(9, "a"), None);
        assert_eq!(t.insert(2, "b"), None);
        assert_eq!(t.insert(9, "c"), Some("a"));
        assert_eq!(t.len(), 2);
        assert!(t.contains_key(2) && !t.contains_key(3));
        *t.get_mut(2).unwrap() = "d";
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![(2, &"d"), (9, &"c")]);
        assert_eq!(t.remove(2), Some("d"));
        assert_eq!(t.remove(2), None);
        assert_eq!(t.len(), 1);
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![(9, &"c")]);
    }
}
