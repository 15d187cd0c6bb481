//! Translating (file, page) to a frame: a sharded hash table or a per-file page table.
//!
//! Both schemes implement the same four operations ([`Table`]); the pool picks one at
//! build time and dispatches with a `match` (no virtual call on the hit path).
//!
//! * [`Hashed`]: 64 shards, each a `hashbrown` map behind a `parking_lot::RwLock`. A hit
//!   hashes the key, takes one shard's read lock and probes. This is the classic buffer
//!   cache ("hashed software lookup" in XMF's words).
//! * [`Mapped`]: each open file slot owns a three-level page table of `AtomicU32` frame ids
//!   (1024 top entries x 1024 x 256 pages = 2^28 pages per file). A hit indexes the levels
//!   by bit fields of the page number: no hash, no probe chain, no lock, just three
//!   dependent loads. This is XMF's address arithmetic and vmcache's page table done in
//!   user space. Levels are created on first insert (`OnceBox`: one pointer, read with one
//!   load and a null test) and never freed while the pool lives, so readers need no lock
//!   against a concurrent grow; a closed file's
//!   entries are reset to empty and the slot's table is reused by the next file opened in
//!   it.
//!
//! Keys carry the file's *generation* (how many times its slot has been reused), so a
//! thread that raced with `close` can never find, or leave behind, a page of a previous
//! file in the same slot: the pool checks the frame's owner after pinning it anyway.

use std::sync::atomic::{AtomicU32, Ordering};

use once_cell::race::OnceBox;
use parking_lot::RwLock;

/// An empty page-table entry.
const EMPTY: u32 = u32::MAX;

/// Key of one page: which file slot, which generation of it, which page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PageKey {
    pub slot: u32,
    pub gen: u32,
    pub page: u64,
}

/// The lookup scheme in use.
pub(crate) enum Table {
    Hashed(Hashed),
    Mapped(Mapped),
}

impl Table {
    /// The frame holding `key`, if mapped.
    #[inline]
    pub(crate) fn get(&self, key: PageKey) -> Option<u32> {
        match self {
            Table::Hashed(h) => h.get(key),
            Table::Mapped(m) => m.get(key),
        }
    }

    /// Map `key` to `frame` unless it is already mapped; `Err(existing)` otherwise.
    #[inline]
    pub(crate) fn insert(&self, key: PageKey, frame: u32) -> Result<(), u32> {
        match self {
            Table::Hashed(h) => h.insert(key, frame),
            Table::Mapped(m) => m.insert(key, frame),
        }
    }

    /// Unmap `key` if it maps to `frame`.
    #[inline]
    pub(crate) fn remove(&self, key: PageKey, frame: u32) {
        match self {
            Table::Hashed(h) => h.remove(key, frame),
            Table::Mapped(m) => m.remove(key, frame),
        }
    }

    /// Whether `page` is a page number the scheme can map.
    #[inline]
    pub(crate) fn page_in_range(&self, page: u64) -> bool {
        match self {
            Table::Hashed(_) => true,
            Table::Mapped(_) => page < MAPPED_PAGES,
        }
    }
}

/// A mapped key's entry: reading it again is two loads of lines the lookup just read.
pub(crate) struct MappedEntry<'a> {
    gen: &'a AtomicU32,
    key_gen: u32,
    entry: &'a AtomicU32,
}

impl MappedEntry<'_> {
    /// The frame the entry names, if any, *without* checking that the slot's table still
    /// belongs to the key's generation: a candidate for a hit, which must confirm it with
    /// [`MappedEntry::maps_to`] after reading the frame's state word (doing the generation
    /// check here as well cost a hit three instructions and decided nothing).
    #[inline(always)]
    pub(crate) fn candidate(&self) -> Option<u32> {
        let f = self.entry.load(Ordering::Acquire);
        (f != EMPTY).then_some(f)
    }

    /// The key maps to `frame` now: the slot's table is the key's generation's and its
    /// entry names `frame` (a real frame id, never `EMPTY`, so no test for that).
    #[inline(always)]
    pub(crate) fn maps_to(&self, frame: u32) -> bool {
        self.gen.load(Ordering::Acquire) == self.key_gen
            && self.entry.load(Ordering::Acquire) == frame
    }

    /// The frame the key maps to now, if any (and if its file is still the key's).
    #[inline]
    pub(crate) fn frame(&self) -> Option<u32> {
        if self.gen.load(Ordering::Acquire) != self.key_gen {
            return None;
        }
        let f = self.entry.load(Ordering::Acquire);
        (f != EMPTY).then_some(f)
    }
}

const SHARDS: usize = 64;

/// Sharded concurrent hash table from page key to frame.
pub(crate) struct Hashed {
    shards: Box<[Shard]>,
}

/// One shard on its own cache lines (two, for the adjacent-line prefetcher): a lookup
/// writes the lock word even to read, and without padding neighbouring shards' locks
/// share a line, which then bounces between cores on every hit (pin hits on two threads
/// scaled 1.5x instead of 2x).
#[repr(align(128))]
struct Shard(RwLock<hashbrown::HashMap<PageKey, u32>>);

impl Hashed {
    pub(crate) fn new(frames: usize) -> Self {
        let per_shard = frames / SHARDS + 1;
        Hashed {
            shards: (0..SHARDS)
                .map(|_| Shard(RwLock::new(hashbrown::HashMap::with_capacity(per_shard))))
                .collect(),
        }
    }

    #[inline]
    fn shard(&self, key: PageKey) -> &RwLock<hashbrown::HashMap<PageKey, u32>> {
        // A cheap multiplicative mix picks the shard; the map then hashes the key fully.
        let x = (key.page ^ (u64::from(key.slot) << 40) ^ (u64::from(key.gen) << 20))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        &self.shards[(x >> 58) as usize % SHARDS].0
    }

    #[inline]
    fn get(&self, key: PageKey) -> Option<u32> {
        self.shard(key).read().get(&key).copied()
    }

    fn insert(&self, key: PageKey, frame: u32) -> Result<(), u32> {
        let mut map = self.shard(key).write();
        match map.entry(key) {
            hashbrown::hash_map::Entry::Occupied(e) => Err(*e.get()),
            hashbrown::hash_map::Entry::Vacant(v) => {
                v.insert(frame);
                Ok(())
            }
        }
    }

    fn remove(&self, key: PageKey, frame: u32) {
        let mut map = self.shard(key).write();
        if map.get(&key) == Some(&frame) {
            map.remove(&key);
        }
    }
}

const LEAF_BITS: u32 = 8;
const MID_BITS: u32 = 10;
const TOP_BITS: u32 = 10;
const LEAF_LEN: usize = 1 << LEAF_BITS;
const MID_LEN: usize = 1 << MID_BITS;
const TOP_LEN: usize = 1 << TOP_BITS;
/// Pages per file the mapped scheme can address: 2^28 (1 TiB of 4 KiB pages).
pub(crate) const MAPPED_PAGES: u64 = 1 << (LEAF_BITS + MID_BITS + TOP_BITS);

// Fixed-size levels behind thin pointers: the indices are masked bit fields of the page
// number, so the compiler proves them in bounds and a lookup carries no bounds check and
// no slice length (a tenth of a pin's instructions went to those and to the fat `Box<[_]>`
// pointers of the first version).
// A level is a `OnceBox` (an atomic pointer, null until set) rather than a `OnceLock`
// (a state word, then the value): one load and a null test per level instead of two
// loads and a compare, on each of the two levels a hit walks.
type Leaf = [AtomicU32; LEAF_LEN];
type Mid = [OnceBox<Leaf>; MID_LEN];

/// One file slot's page table.
struct PageTable {
    /// Generation of the file the entries belong to.
    gen: AtomicU32,
    top: Box<[OnceBox<Mid>; TOP_LEN]>,
}

/// Per-file-slot page tables indexed directly by page number.
pub(crate) struct Mapped {
    files: Box<[PageTable]>,
}

impl Mapped {
    pub(crate) fn new(slots: usize) -> Self {
        Mapped {
            files: (0..slots)
                .map(|_| PageTable {
                    gen: AtomicU32::new(0),
                    top: Box::new(std::array::from_fn(|_| OnceBox::new())),
                })
                .collect(),
        }
    }

    /// The three indices of `page`, or `None` past [`MAPPED_PAGES`]. Each is masked to
    /// its level's length, which is what lets the compiler drop the bounds checks.
    #[inline(always)]
    fn split(page: u64) -> Option<(usize, usize, usize)> {
        if page >= MAPPED_PAGES {
            return None;
        }
        let leaf = (page as usize) & (LEAF_LEN - 1);
        let mid = ((page >> LEAF_BITS) as usize) & (MID_LEN - 1);
        let top = ((page >> (LEAF_BITS + MID_BITS)) as usize) & (TOP_LEN - 1);
        Some((top, mid, leaf))
    }

    /// The entry for `key` in `table`, if its levels exist.
    #[inline(always)]
    fn entry_in(table: &PageTable, page: u64) -> Option<&AtomicU32> {
        let (t, m, l) = Self::split(page)?;
        let mid = table.top[t].get()?;
        let leaf = mid[m].get()?;
        Some(&leaf[l])
    }

    /// The entry for `key`, if its levels exist.
    #[inline(always)]
    fn entry(&self, key: PageKey) -> Option<&AtomicU32> {
        Self::entry_in(self.files.get(key.slot as usize)?, key.page)
    }

    #[inline]
    fn get(&self, key: PageKey) -> Option<u32> {
        self.find(key)?.frame()
    }

    /// Where `key`'s entry is, if its levels exist.
    #[inline(always)]
    pub(crate) fn find(&self, key: PageKey) -> Option<MappedEntry<'_>> {
        let table = self.files.get(key.slot as usize)?;
        Some(MappedEntry {
            gen: &table.gen,
            key_gen: key.gen,
            entry: Self::entry_in(table, key.page)?,
        })
    }

    fn insert(&self, key: PageKey, frame: u32) -> Result<(), u32> {
        let Some(table) = self.files.get(key.slot as usize) else {
            return Err(EMPTY);
        };
        if table.gen.load(Ordering::Acquire) != key.gen {
            // The slot belongs to another generation: refuse (the caller sees the file
            // closed when it re-checks the handle).
            return Err(EMPTY);
        }
        let Some((t, m, l)) = Self::split(key.page) else {
            return Err(EMPTY);
        };
        let mid = table.top[t].get_or_init(|| Box::new(std::array::from_fn(|_| OnceBox::new())));
        let leaf = mid[m].get_or_init(|| Box::new(std::array::from_fn(|_| AtomicU32::new(EMPTY))));
        leaf[l]
            .compare_exchange(EMPTY, frame, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
    }

    /// Unmap `key` if it maps to `frame` *in the key's generation*. The slot's entries
    /// carry no generation of their own, so a remove for a closed generation must not
    /// touch them: a reader holding a handle from before a close and reopen finds its
    /// frame reused for the new file's page and removes its own, stale mapping, which
    /// without this check was the new file's live entry for the same page number (the
    /// page, possibly dirty, then stayed cached but unmapped, and a read loaded the old
    /// bytes from storage beside it). No entry of an old generation can still be there
    /// to remove: closing a file unmaps all its pages before the slot is reopened.
    fn remove(&self, key: PageKey, frame: u32) {
        let Some(table) = self.files.get(key.slot as usize) else {
            return;
        };
        if table.gen.load(Ordering::Acquire) != key.gen {
            return;
        }
        if let Some(e) = self.entry(key) {
            let _ = e.compare_exchange(frame, EMPTY, Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    /// Give the slot's table to generation `gen` (called when a file is opened in it; the
    /// previous file's entries were all removed when it was closed).
    pub(crate) fn open(&self, slot: u32, gen: u32) {
        if let Some(t) = self.files.get(slot as usize) {
            t.gen.store(gen, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(slot: u32, gen: u32, page: u64) -> PageKey {
        PageKey { slot, gen, page }
    }

    fn exercise(t: &Table) {
        assert_eq!(t.get(key(0, 1, 5)), None);
        t.insert(key(0, 1, 5), 7).unwrap();
        assert_eq!(t.insert(key(0, 1, 5), 8), Err(7));
        assert_eq!(t.get(key(0, 1, 5)), Some(7));
        assert_eq!(t.get(key(0, 1, 6)), None);
        assert_eq!(t.get(key(1, 1, 5)), None);
        t.insert(key(0, 1, (1 << 27) + 3), 9).unwrap();
        assert_eq!(t.get(key(0, 1, (1 << 27) + 3)), Some(9));
        // removal only of the frame named
        t.remove(key(0, 1, 5), 8);
        assert_eq!(t.get(key(0, 1, 5)), Some(7));
        t.remove(key(0, 1, 5), 7);
        assert_eq!(t.get(key(0, 1, 5)), None);
        t.insert(key(0, 1, 5), 1).unwrap();
        assert_eq!(t.get(key(0, 1, 5)), Some(1));
    }

    #[test]
    fn hashed_maps_and_unmaps() {
        let t = Table::Hashed(Hashed::new(16));
        exercise(&t);
        // another generation of slot 0 is a different key
        assert_eq!(t.get(key(0, 2, 5)), None);
    }

    #[test]
    fn mapped_maps_and_unmaps_and_checks_generation() {
        let m = Mapped::new(2);
        m.open(0, 1);
        m.open(1, 1);
        let t = Table::Mapped(m);
        exercise(&t);
        assert_eq!(t.get(key(0, 2, 5)), None);
        assert_eq!(t.insert(key(0, 2, 5), 3), Err(EMPTY));
        assert!(t.page_in_range(MAPPED_PAGES - 1));
        assert!(!t.page_in_range(MAPPED_PAGES));
        assert_eq!(t.insert(key(5, 1, 0), 3), Err(EMPTY));
    }

    /// The levels are indexed by masked bit fields: the last page of the range and the
    /// first of each level's span get their own entries, and a page past the range is
    /// refused rather than masked onto page 0 (or any other).
    #[test]
    fn masked_indices_never_alias_pages() {
        let m = Mapped::new(1);
        m.open(0, 1);
        let t = Table::Mapped(m);
        let last = MAPPED_PAGES - 1;
        let pages = [0, 255, 256, (1 << 18) - 1, 1 << 18, last];
        for (frame, &p) in pages.iter().enumerate() {
            t.insert(key(0, 1, p), frame as u32).unwrap();
        }
        for (frame, &p) in pages.iter().enumerate() {
            assert_eq!(t.get(key(0, 1, p)), Some(frame as u32), "page {p}");
        }
        for past in [
            MAPPED_PAGES,
            MAPPED_PAGES + 255,
            2 * MAPPED_PAGES - 1,
            u64::MAX,
        ] {
            assert_eq!(t.get(key(0, 1, past)), None, "page {past}");
            assert_eq!(t.insert(key(0, 1, past), 9), Err(EMPTY), "page {past}");
        }
        assert_eq!(t.get(key(0, 1, 0)), Some(0));
    }

    /// A hit's candidate is the entry as it stands, whatever the slot's generation; only
    /// `maps_to` (the check after the state word) tests the generation, and the frame.
    #[test]
    fn a_candidate_is_confirmed_only_for_its_generation_and_frame() {
        let m = Mapped::new(1);
        m.open(0, 1);
        m.insert(key(0, 1, 5), 7).unwrap();
        let e = m.find(key(0, 1, 5)).unwrap();
        assert_eq!(e.candidate(), Some(7));
        assert!(e.maps_to(7));
        assert!(!e.maps_to(8));
        // The slot reopened as generation 2 (its entries were removed on close; this one
        // stands for a reader that raced with that): the candidate is still read, and
        // refused by the check.
        m.open(0, 2);
        assert_eq!(e.candidate(), Some(7));
        assert!(!e.maps_to(7));
        let stale = m.find(key(0, 2, 6)).unwrap();
        assert_eq!(stale.candidate(), None, "no entry for page 6");
        assert!(
            m.find(key(0, 2, 1 << 20)).is_none(),
            "no level for that page"
        );
    }

    #[test]
    fn a_remove_for_a_closed_generation_leaves_the_new_files_entry() {
        // Slot 0 held generation 1, whose page 5 was in frame 7; the file was closed and
        // the slot reopened as generation 2, whose page 5 is now in frame 7 again (the
        // frame was reused). A reader still holding a generation-1 handle finds the frame
        // no longer its page and removes its mapping: generation 2's must stay (the hashed
        // table always kept it; the mapped one ignored the generation on removal).
        let m = Mapped::new(1);
        m.open(0, 2);
        let t = Table::Mapped(m);
        t.insert(key(0, 2, 5), 7).unwrap();
        t.remove(key(0, 1, 5), 7);
        assert_eq!(t.get(key(0, 2, 5)), Some(7));
        t.remove(key(0, 2, 5), 7);
        assert_eq!(t.get(key(0, 2, 5)), None);
    }
}
