//! The worker's page operations (pin, pin_mut, fsync, prefetch, resize) and file lifecycle (set_len, close and reopen).

use super::*;

impl<'a> Worker<'a> {
    /// The regions a page overlaps: `from..to`.
    pub(super) fn regions_of_page(&self, page: u64) -> (usize, usize) {
        let ps = self.ps() as usize;
        let start = page as usize * ps;
        let from = (start / REGION).min(REGIONS);
        let to = (start + ps).div_ceil(REGION).min(REGIONS);
        (from, to)
    }

    /// Check a page's bytes against the locked regions `from..` (bytes of the page past
    /// the model's regions must be zero).
    pub(super) fn check_page(
        &self,
        what: &str,
        file: usize,
        page: u64,
        bytes: &[u8],
        regs: &[MutexGuard<'_, Vec<u8>>],
        from: usize,
    ) {
        let ps = self.ps() as usize;
        let start = page as usize * ps;
        for (i, &got) in bytes.iter().enumerate() {
            let pos = start + i;
            let want = if pos < FILE_MAX && pos / REGION >= from && pos / REGION < from + regs.len()
            {
                regs[pos / REGION - from][pos % REGION]
            } else {
                0
            };
            if got != want {
                self.fail(format_args!(
                    "{what} {file} page {page}: byte {i} is {got}, model {want}"
                ));
            }
        }
    }

    /// What a pin of `page` of `file` is checked under: the handle lock, the locks of the
    /// regions the page overlaps, and the page's pin count, raised before the pin exists
    /// (so the count never misses a pin the pool sees; the caller lowers it again).
    pub(super) fn lock_page(&self, file: usize, page: u64) -> Option<PageLocks<'a>> {
        let fh = self.handle(file)?;
        let (from, to) = self.regions_of_page(page);
        let regs = self.regions(file, from, to)?;
        let m = &self.sh.files[file];
        let count = &m.pins[page as usize];
        count.held.fetch_add(1, Ordering::AcqRel);
        count.taken.fetch_add(1, Ordering::AcqRel);
        Some(PageLocks {
            fh,
            regs,
            from,
            count,
            len0: m.len.load(Ordering::Acquire),
        })
    }

    pub(super) fn pin(&mut self, file: usize) {
        let ps = self.ps();
        let page = self.rng.gen_range(0..pages_of(FILE_MAX as u64, ps) + 1);
        if self.held.len() >= MAX_HELD || self.held.iter().any(|h| h.file == file && h.page == page)
        {
            return;
        }
        let Some(PageLocks {
            fh,
            regs,
            from,
            count,
            len0,
        }) = self.lock_page(file, page)
        else {
            return;
        };
        let sh = self.sh;
        let pinned = if self.rng.gen_bool(0.5) {
            sh.pool.pin(*fh, page)
        } else {
            self.hint(file, *fh, page)
                .and_then(|h| sh.pool.pin_hinted(h))
        };
        match pinned {
            // A page past the model's end may be inside the pool's: a write to a later
            // region may be lengthening the file right now. Its bytes are zero either way.
            Ok(g) => {
                self.check_page("pin", file, page, &g, &regs, from);
                self.held.push(Held {
                    file,
                    page,
                    guard: g,
                });
                return;
            }
            Err(PoolError::PastEnd { page: p, .. }) if p == page && page >= pages_of(len0, ps) => {}
            Err(e) => self.check_error("pin", &e),
        }
        count.held.fetch_sub(1, Ordering::AcqRel);
    }

    pub(super) fn pin_mut(&mut self, file: usize) {
        let ps = self.ps();
        let page = self.rng.gen_range(0..pages_of(FILE_MAX as u64, ps) + 1);
        let Some(PageLocks {
            fh,
            mut regs,
            from,
            count,
            len0,
        }) = self.lock_page(file, page)
        else {
            return;
        };
        let m = &self.sh.files[file];
        let to = from + regs.len();
        match self.sh.pool.pin_mut(*fh, page) {
            Ok(mut g) => {
                let len = m.len.load(Ordering::Acquire);
                self.check_page("pin_mut", file, page, &g, &regs, from);
                // Change one byte inside the file and inside a locked region.
                let lo = page * ps;
                let hi = (lo + ps).min(len).min(FILE_MAX as u64);
                if lo < hi {
                    let pos = self.rng.gen_range(lo..hi) as usize;
                    if pos / REGION >= from && pos / REGION < to {
                        let old = regs[pos / REGION - from][pos % REGION];
                        if let Some(v) = self.fresh_value(&[old]) {
                            g[pos - lo as usize] = v;
                            regs[pos / REGION - from][pos % REGION] = v;
                        }
                    }
                }
                drop(g);
            }
            Err(PoolError::PastEnd { page: p, .. }) if p == page && page >= pages_of(len0, ps) => {}
            Err(e) => self.check_error("pin_mut", &e),
        }
        count.held.fetch_sub(1, Ordering::AcqRel);
    }

    pub(super) fn fsync(&mut self, file: usize) {
        let Some(fh) = self.handle(file) else { return };
        if let Err(e) = self.sh.pool.fsync(*fh) {
            self.check_error("fsync", &e);
        }
    }

    /// Resize the pool between the least capacity that leaves every thread its pins and a
    /// frame to load into, and three times the configured one: shrinking evicts (writing
    /// dirty pages) while the other threads run; growing adds frames.
    pub(super) fn resize(&mut self) {
        let least = THREADS * (MAX_HELD + 1) + self.sh.cfg.read_ahead + 2;
        let target = self.rng.gen_range(least..=3 * self.sh.cfg.frames);
        match self.sh.pool.resize(target) {
            Ok(()) => {}
            Err(
                e @ (PoolError::ResizeBelowPinned { .. } | PoolError::CapacityBelowPinLimit { .. }),
            ) => self.fail(format_args!("resize to {target}: {e}")),
            Err(e) => self.check_error("resize", &e),
        }
    }

    pub(super) fn prefetch(&mut self, file: usize) {
        let ps = self.ps();
        let top = pages_of(FILE_MAX as u64, ps) + 2;
        let pages: Vec<u64> = (0..self.rng.gen_range(1..6))
            .map(|_| self.rng.gen_range(0..top))
            .collect();
        let Some(fh) = self.handle(file) else { return };
        if let Err(e) = self.sh.pool.prefetch(*fh, &pages) {
            self.check_error("prefetch", &e);
        }
    }

    /// Snapshot of how many pins each page of `file` has had taken.
    pub(super) fn pins_taken(&self, file: usize) -> Vec<u64> {
        self.sh.files[file]
            .pins
            .iter()
            .map(|c| c.taken.load(Ordering::Acquire))
            .collect()
    }

    /// A `PagePinned { page }` refusal is right if `page` of `file` was pinned at some
    /// moment of the call: held before it, or pinned since `before` was taken.
    pub(super) fn check_pinned(
        &self,
        op: &str,
        file: usize,
        page: u64,
        before: &[u64],
        held_before: &[usize],
    ) {
        let p = page as usize;
        let plausible = p < PAGE_SLOTS
            && (held_before[p] > 0
                || self.sh.files[file].pins[p].taken.load(Ordering::Acquire) > before[p]);
        if !plausible {
            self.fail(format_args!(
                "{op} of file {file} refused: page {page} pinned, but it was not"
            ));
        }
    }

    pub(super) fn pins_held(&self, file: usize) -> Vec<usize> {
        self.sh.files[file]
            .pins
            .iter()
            .map(|c| c.held.load(Ordering::Acquire))
            .collect()
    }

    pub(super) fn set_len(&mut self, file: usize) {
        let ps = self.ps() as usize;
        let new = match self.rng.gen_range(0..4) {
            0 => self.rng.gen_range(0..=FILE_MAX / ps) * ps,
            1 => self.rng.gen_range(0..=REGIONS) * REGION,
            _ => self.rng.gen_range(0..=FILE_MAX),
        } as u64;
        let Some(fh) = self.handle(file) else { return };
        // At least the last region, even for a new end past every region: two `set_len`s
        // of one file must exclude each other, or the model's order could differ from the
        // pool's.
        let from = (new as usize / REGION).min(REGIONS - 1);
        let Some(mut regs) = self.regions(file, from, REGIONS) else {
            return;
        };
        let m = &self.sh.files[file];
        let (taken, held) = (self.pins_taken(file), self.pins_held(file));
        match self.sh.pool.set_len(*fh, new) {
            Ok(()) => {
                for (i, reg) in regs.iter_mut().enumerate() {
                    let base = (from + i) * REGION;
                    let cut = (new as usize).saturating_sub(base).min(REGION);
                    reg[cut..].fill(0);
                }
                m.len.store(new, Ordering::Release);
                m.note(format!(
                    "t{} set_len {new} (pool {:?})",
                    self.id,
                    self.sh.pool.len(*fh)
                ));
            }
            Err(PoolError::PagePinned { page }) => {
                let first = (new as usize / ps) as u64;
                if page < first {
                    self.fail(format_args!(
                        "set_len({new}) of {file} refused for kept page {page}"
                    ));
                }
                self.check_pinned("set_len", file, page, &taken, &held);
            }
            Err(e) => self.check_error("set_len", &e),
        }
    }

    pub(super) fn reopen(&mut self, file: usize) {
        let m = &self.sh.files[file];
        let h = if self.held.is_empty() {
            Some(m.handle.write())
        } else {
            m.handle.try_write()
        };
        let Some(mut fh) = h else { return };
        let (taken, held) = (self.pins_taken(file), self.pins_held(file));
        match self.sh.pool.close(*fh) {
            Ok(()) => {}
            Err(PoolError::PagePinned { page }) => {
                self.check_pinned("close", file, page, &taken, &held);
                return;
            }
            Err(e) => {
                self.check_error("close", &e);
                return;
            }
        }
        // Closed with no operation on the file running: storage must equal the model, to
        // the byte and in length (an O_DIRECT file trimmed back).
        let want = self.model_image(file);
        let disk = self.sh.st.contents(&m.path).unwrap_or_default();
        if disk != want {
            let first_bad = (0..disk.len().min(want.len())).find(|&i| disk[i] != want[i]);
            self.fail(format_args!(
                "after close, storage of file {file} has {} bytes (model {}), first difference \
                 at {first_bad:?}",
                disk.len(),
                want.len()
            ));
        }
        *fh = match self.sh.pool.open(&m.path) {
            Ok(f) => f,
            Err(e) => self.fail(format_args!("reopen {file}: {e}")),
        };
        let len = self.sh.pool.len(*fh).unwrap();
        m.note(format!("t{} reopen, len {len}", self.id));
        if len != want.len() as u64 {
            self.fail(format_args!(
                "reopened {file} has length {len}, model {}",
                want.len()
            ));
        }
    }

    /// The model's contents of `file` (only consistent while no operation on it runs).
    pub(super) fn model_image(&self, file: usize) -> Vec<u8> {
        image(&self.sh.files[file])
    }
}
