//! The virtual-memory consumer: the processes' images and a clock over their resident
//! pages (Sprite's approximate LRU, Nelson 1990 Section 2).
//!
//! Every page of every image is in one of four states: never touched, resident in a
//! frame, in the swap file (it was written there when evicted dirty, and still is valid
//! there), or discarded (evicted clean with no swap copy: it is read again from the
//! executable). A touch sets the frame's reference bit and its time of last reference.
//! The clock hand sweeps the frames: a referenced frame loses its bit and is passed over,
//! the first unreferenced one is the victim. The age the VM reports to the arbiter is the
//! idle time of that victim — the page it would really give up, not the truly oldest page.
//!
//! Frames are slots in one vector (dense `u32` ids, a free list of slots); page tables are
//! vectors indexed by page number. Images are numbered by `exec` (never reused), so a page
//! key `image << 32 | page` is unique over a run.

use super::super::time::VTime;

/// Where a page of an image is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Page {
    Untouched,
    Resident(u32),
    Swapped,
    Discarded,
}

/// Where a faulting page's data comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// The executable (first touch, or evicted clean with no swap copy).
    Executable,
    /// The swap file (a page-in).
    Swap,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    image: u32,
    page: u32,
    referenced: bool,
    dirty: bool,
    last_ref: VTime,
    live: bool,
}

/// A page the clock gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Evicted {
    /// `image << 32 | page`.
    pub key: u64,
    /// It was dirty: a page-out to the swap file.
    pub dirty: bool,
}

/// The images and the clock.
#[derive(Debug, Default)]
pub(super) struct Vm {
    /// Per image: its page table and whether each page has a valid swap copy.
    tables: Vec<Vec<Page>>,
    swap_copy: Vec<Vec<bool>>,
    frames: Vec<Frame>,
    free_slots: Vec<u32>,
    hand: usize,
    resident: u64,
}

/// A page's key for the arbiter's shadow entries.
pub(super) fn page_key(image: u32, page: u32) -> u64 {
    (u64::from(image) << 32) | u64::from(page)
}

impl Vm {
    /// Pages resident.
    pub fn resident(&self) -> u64 {
        self.resident
    }

    /// A new image of `pages` pages, all untouched; its number.
    pub fn new_image(&mut self, pages: u32) -> u32 {
        self.tables.push(vec![Page::Untouched; pages as usize]);
        self.swap_copy.push(vec![false; pages as usize]);
        u32::try_from(self.tables.len() - 1).expect("fewer than 2^32 images")
    }

    /// Free every resident page of `image` (its process exited or exec'd); the number
    /// freed.
    pub fn drop_image(&mut self, image: u32) -> u64 {
        let mut freed = 0;
        for p in self.tables[image as usize].iter_mut() {
            if let Page::Resident(slot) = *p {
                self.frames[slot as usize].live = false;
                self.free_slots.push(slot);
                freed += 1;
            }
            *p = Page::Discarded;
        }
        self.resident -= freed;
        freed
    }

    /// Touch `page` of `image` if it is resident (setting its reference bit, and its
    /// dirty bit with `write`); otherwise where its data must come from.
    pub fn touch(&mut self, image: u32, page: u32, write: bool, now: VTime) -> Result<(), Source> {
        match self.tables[image as usize][page as usize] {
            Page::Resident(slot) => {
                let f = &mut self.frames[slot as usize];
                f.referenced = true;
                f.dirty |= write;
                f.last_ref = now;
                Ok(())
            }
            Page::Swapped => Err(Source::Swap),
            Page::Untouched | Page::Discarded => Err(Source::Executable),
        }
    }

    /// Whether `page` of `image` was resident once and is not now (a refault).
    pub fn was_resident(&self, image: u32, page: u32) -> bool {
        matches!(
            self.tables[image as usize][page as usize],
            Page::Swapped | Page::Discarded
        )
    }

    /// Make `page` of `image` resident (its data arrived), touched now.
    pub fn install(&mut self, image: u32, page: u32, write: bool, now: VTime) {
        debug_assert!(!matches!(
            self.tables[image as usize][page as usize],
            Page::Resident(_)
        ));
        let frame = Frame {
            image,
            page,
            referenced: true,
            dirty: write,
            last_ref: now,
            live: true,
        };
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.frames[s as usize] = frame;
                s
            }
            None => {
                self.frames.push(frame);
                u32::try_from(self.frames.len() - 1).expect("fewer than 2^32 frames")
            }
        };
        self.tables[image as usize][page as usize] = Page::Resident(slot);
        self.resident += 1;
    }

    /// Move the hand to the page the clock would give up next (clearing the reference
    /// bits it passes) and return how long that page has been idle.
    pub fn oldest_idle(&mut self, now: VTime) -> Option<u64> {
        let slot = self.advance()?;
        Some(now.since(self.frames[slot].last_ref))
    }

    /// Give up the page under the hand (after [`Vm::oldest_idle`] or on its own).
    pub fn evict(&mut self) -> Option<Evicted> {
        let slot = self.advance()?;
        let f = self.frames[slot];
        self.frames[slot].live = false;
        self.free_slots
            .push(u32::try_from(slot).expect("slot fits u32"));
        self.resident -= 1;
        let (image, page) = (f.image as usize, f.page as usize);
        if f.dirty {
            self.swap_copy[image][page] = true;
        }
        self.tables[image][page] = if self.swap_copy[image][page] {
            Page::Swapped
        } else {
            Page::Discarded
        };
        self.hand = (slot + 1) % self.frames.len();
        Some(Evicted {
            key: page_key(f.image, f.page),
            dirty: f.dirty,
        })
    }

    /// The clock sweep: the first live unreferenced frame from the hand, clearing bits.
    /// Two full turns are enough: the first clears every bit.
    fn advance(&mut self) -> Option<usize> {
        if self.resident == 0 {
            return None;
        }
        let n = self.frames.len();
        for _ in 0..2 * n + 1 {
            let f = &mut self.frames[self.hand];
            if f.live {
                if !f.referenced {
                    return Some(self.hand);
                }
                f.referenced = false;
            }
            self.hand = (self.hand + 1) % n;
        }
        unreachable!("a resident frame stays unreferenced after one sweep")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_gives_second_chances_and_pages_out_dirty_pages() {
        let t = VTime::from_ns;
        let mut vm = Vm::default();
        let img = vm.new_image(4);
        for p in 0..3 {
            assert_eq!(vm.touch(img, p, false, t(0)), Err(Source::Executable));
            vm.install(img, p, p == 1, t(u64::from(p)));
        }
        // All referenced: the sweep clears 0, 1, 2 and comes back to 0.
        assert_eq!(vm.oldest_idle(t(10)), Some(10));
        // Page 0 referenced again: it is passed over once more; 1 goes (dirty).
        vm.touch(img, 0, false, t(11)).unwrap();
        assert_eq!(
            vm.evict(),
            Some(Evicted {
                key: page_key(img, 1),
                dirty: true
            })
        );
        assert_eq!(vm.touch(img, 1, false, t(12)), Err(Source::Swap));
        assert!(vm.was_resident(img, 1));
        // Next: page 2 (clean, no swap copy: discarded, read from the executable again).
        assert_eq!(
            vm.evict(),
            Some(Evicted {
                key: page_key(img, 2),
                dirty: false
            })
        );
        assert_eq!(vm.touch(img, 2, false, t(12)), Err(Source::Executable));
        assert_eq!(vm.resident(), 1);
        assert_eq!(vm.drop_image(img), 1);
        assert_eq!(vm.oldest_idle(t(13)), None);
    }
}
