//! The resident frames as a dense array, for policies that pick victims by position
//! (Random's uniform draw, Hyperbolic's samples): O(1) insert, O(1) removal by swapping
//! the last entry into the hole, O(1) access to the i-th resident.

use crate::list::NIL;
use crate::{ensure_slot, FrameId};

/// Resident frames in no particular order, each knowing its position.
#[derive(Clone, Debug)]
pub(crate) struct ResidentSet {
    dense: Vec<u32>,
    /// Each frame's index in `dense` (`NIL` when not resident).
    pos: Vec<u32>,
}

impl ResidentSet {
    /// Room for about `frames` residents.
    pub(crate) fn new(frames: usize) -> Self {
        ResidentSet {
            dense: Vec::with_capacity(frames),
            pos: vec![NIL; frames],
        }
    }

    /// How many frames are resident.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.dense.len()
    }

    /// The resident at position `i` (`i < len()`).
    #[inline]
    pub(crate) fn at(&self, i: usize) -> FrameId {
        FrameId(self.dense[i])
    }

    /// Adds a frame that is not resident.
    #[inline]
    pub(crate) fn insert(&mut self, frame: FrameId) {
        ensure_slot(&mut self.pos, frame, NIL);
        debug_assert_eq!(
            self.pos[frame.index()],
            NIL,
            "frame {} inserted twice",
            frame.0
        );
        self.pos[frame.index()] = self.dense.len() as u32;
        self.dense.push(frame.0);
    }

    /// Removes and returns the resident at position `i`.
    #[inline]
    pub(crate) fn take_at(&mut self, i: usize) -> FrameId {
        let f = self.dense.swap_remove(i);
        if i < self.dense.len() {
            self.pos[self.dense[i] as usize] = i as u32;
        }
        self.pos[f as usize] = NIL;
        FrameId(f)
    }

    /// Removes a resident frame.
    pub(crate) fn remove(&mut self, frame: FrameId) {
        let i = self.pos[frame.index()];
        debug_assert_ne!(i, NIL, "removing frame {} that is not resident", frame.0);
        self.take_at(i as usize);
    }
}
