//! The worker's loop and its byte operations: write and read, checked against the model.

use super::*;

impl<'a> Worker<'a> {
    pub(super) fn ps(&self) -> u64 {
        self.sh.cfg.page_size as u64
    }

    pub(super) fn fail(&self, what: std::fmt::Arguments<'_>) -> ! {
        let msg = format!(
            "seed {} thread {}: {what}\nconfig: {:?}",
            self.sh.cfg.seed, self.id, self.sh.cfg
        );
        // Only the first failure is the finding; others may follow from the state it left.
        let mut first = self.sh.first_failure.lock();
        let msg = format!(
            "{msg}\nlast length changes, per file:\n{}",
            self.sh
                .files
                .iter()
                .enumerate()
                .map(|(i, f)| format!(
                    "  file {i}: {}",
                    f.history
                        .lock()
                        .iter()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("\n    ")
                ))
                .collect::<Vec<_>>()
                .join("\n")
        );
        if first.is_none() {
            *first = Some(msg.clone());
        }
        self.sh.stop.store(true, Ordering::Relaxed);
        drop(first);
        panic!("{msg}")
    }

    pub(super) fn check_error(&self, op: &str, e: &PoolError) {
        if !(self.sh.cfg.faults && fault_explains(e)) {
            self.fail(format_args!("{op}: unexpected error {e:?}"));
        }
    }

    /// The handle lock, tried only while pins are held (see the module docs).
    pub(super) fn handle(&self, file: usize) -> Option<RwLockReadGuard<'a, FileHandle>> {
        let h = &self.sh.files[file].handle;
        if self.held.is_empty() {
            Some(h.read())
        } else {
            h.try_read()
        }
    }

    /// This worker's hint for `page` of `file` open as `fh`: kept from earlier operations
    /// while the handle is the same, a new one after a reopen.
    pub(super) fn hint(
        &mut self,
        file: usize,
        fh: FileHandle,
        page: u64,
    ) -> Result<&mut PageHint, PoolError> {
        let fresh = self.sh.pool.hint(fh, page)?;
        let h = self.hints.entry((file, page)).or_insert(fresh);
        if h.file() != fh {
            *h = fresh;
        }
        Ok(h)
    }

    /// Regions `from..to` of `file`, in order; tried only while pins are held.
    pub(super) fn regions(
        &self,
        file: usize,
        from: usize,
        to: usize,
    ) -> Option<Vec<MutexGuard<'a, Vec<u8>>>> {
        let regions = &self.sh.files[file].regions;
        let mut out = Vec::with_capacity(to - from);
        for r in &regions[from..to] {
            if self.held.is_empty() {
                out.push(r.lock());
            } else {
                out.push(r.try_lock()?);
            }
        }
        Some(out)
    }

    /// A byte value for a write that differs from every byte it overwrites (so that a
    /// failed write's effect can be told from the old contents), or `None`.
    pub(super) fn fresh_value(&mut self, old: &[u8]) -> Option<u8> {
        let mut seen = [false; 256];
        for &b in old {
            seen[b as usize] = true;
        }
        for _ in 0..255 {
            self.next_value = self.next_value.wrapping_add(1).max(1);
            if !seen[self.next_value as usize] {
                return Some(self.next_value);
            }
        }
        None
    }

    pub(super) fn run(&mut self, deadline: Instant) {
        while Instant::now() < deadline && !self.sh.stop.load(Ordering::Relaxed) {
            if !self.held.is_empty() && (self.held.len() >= MAX_HELD || self.rng.gen_bool(0.3)) {
                let i = self.rng.gen_range(0..self.held.len());
                let h = self.held.swap_remove(i);
                let (file, page) = (h.file, h.page);
                drop(h.guard);
                self.sh.files[file].pins[page as usize]
                    .held
                    .fetch_sub(1, Ordering::AcqRel);
            }
            let file = self.rng.gen_range(0..FILES);
            match self.rng.gen_range(0..100) {
                0..=29 if self.held.is_empty() => self.write(file),
                0..=59 => self.read(file),
                60..=69 => self.pin(file),
                70..=74 if self.held.is_empty() => self.pin_mut(file),
                70..=74 => self.read(file),
                75..=79 => self.fsync(file),
                80..=86 => self.set_len(file),
                87..=88 => self.reopen(file),
                89..=96 => self.prefetch(file),
                97 => self.resize(),
                _ => {
                    if let Err(e) = self.sh.pool.sync_all() {
                        self.check_error("sync_all", &e);
                    }
                }
            }
            self.sh.progress.fetch_add(1, Ordering::Relaxed);
        }
        for h in self.held.drain(..) {
            drop(h.guard);
            self.sh.files[h.file].pins[h.page as usize]
                .held
                .fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// A random byte range inside one region: (region, start, end) within the region.
    pub(super) fn range(&mut self) -> (usize, usize, usize) {
        let r = self.rng.gen_range(0..REGIONS);
        let a = self.rng.gen_range(0..REGION);
        let b = self.rng.gen_range(a + 1..=REGION);
        (r, a, b)
    }

    pub(super) fn write(&mut self, file: usize) {
        let (r, a, b) = self.range();
        let Some(fh) = self.handle(file) else { return };
        let Some(mut regs) = self.regions(file, r, r + 1) else {
            return;
        };
        let reg = &mut regs[0];
        let Some(v) = self.fresh_value(&reg[a..b]) else {
            return;
        };
        let m = &self.sh.files[file];
        let base = (r * REGION) as u64;
        match self.sh.pool.write(*fh, base + a as u64, &vec![v; b - a]) {
            Ok(()) => {
                reg[a..b].fill(v);
                let was = m.len.fetch_max(base + b as u64, Ordering::AcqRel);
                if was < base + b as u64 {
                    m.note(format!(
                        "t{} write {}..{} -> len {} (pool {:?})",
                        self.id,
                        base + a as u64,
                        base + b as u64,
                        base + b as u64,
                        self.sh.pool.len(*fh)
                    ));
                }
            }
            Err(e) => {
                self.check_error("write", &e);
                // The pool applies a write page by page: some prefix of whole page pieces
                // may have been applied. Read back to learn which, and check it is one.
                let ps = self.ps();
                let mut cuts = vec![a];
                let mut pos = base + a as u64;
                while pos < base + b as u64 {
                    pos = ((pos / ps + 1) * ps).min(base + b as u64);
                    cuts.push((pos - base) as usize);
                }
                // The length before the read back: a `set_len` of a later region may
                // lengthen the file past this region meanwhile, never shorten it into it.
                let len0 = m.len.load(Ordering::Acquire);
                let pool_len = self.sh.pool.len(*fh);
                let back = self.read_back(*fh, file, r);
                let applied = cuts.iter().position(|&cut| {
                    let mut cand = reg.clone();
                    cand[a..cut].fill(v);
                    let cand_len = if cut > a {
                        len0.max(base + cut as u64)
                    } else {
                        len0
                    };
                    self.matches_region(&back, &cand, base, cand_len)
                });
                let Some(k) = applied else {
                    let diff = (0..back.len()).find(|&i| back[i] != reg[i]);
                    self.fail(format_args!(
                        "failed write of {v} to {file}:{}..{} ({e}) left a state that is no \
                         prefix of it: read back {} bytes, length {len0}, first difference \
                         from the old contents at {diff:?} (got {:?}, old {:?}); pool length \
                         {pool_len:?} before the read back, {:?} after",
                        base + a as u64,
                        base + b as u64,
                        back.len(),
                        diff.map(|i| back[i]),
                        diff.map(|i| reg[i]),
                        self.sh.pool.len(*fh),
                    ))
                };
                let cut = cuts[k];
                reg[a..cut].fill(v);
                if cut > a {
                    m.len.fetch_max(base + cut as u64, Ordering::AcqRel);
                }
                m.note(format!(
                    "t{} failed write {}..{} applied to {} (pool {:?})",
                    self.id,
                    base + a as u64,
                    base + b as u64,
                    base + cut as u64,
                    self.sh.pool.len(*fh)
                ));
            }
        }
    }

    /// Read a whole region with retries (faults may fail reads): what the pool holds.
    /// Retried for up to 10 s: while one file's writes all fail and every frame holds a
    /// dirty page of it, misses fail (`WriteBackStalled`) until the injector lifts the fault.
    pub(super) fn read_back(&self, fh: FileHandle, file: usize, r: usize) -> Vec<u8> {
        let mut buf = vec![0u8; REGION];
        let give_up = Instant::now() + Duration::from_secs(10);
        while Instant::now() < give_up {
            match self.sh.pool.read(fh, (r * REGION) as u64, &mut buf) {
                Ok(n) => {
                    buf.truncate(n);
                    return buf;
                }
                Err(e) => self.check_error("read back", &e),
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        self.fail(format_args!("file {file} region {r} unreadable for 10 s"))
    }

    /// Whether `got` (a read of the whole region at `base`) is what a region holding
    /// `model` in a file of length at least `len` reads as.
    pub(super) fn matches_region(&self, got: &[u8], model: &[u8], base: u64, len: u64) -> bool {
        let want_min = len.saturating_sub(base).min(REGION as u64) as usize;
        got.len() >= want_min && got == &model[..got.len()]
    }

    pub(super) fn read(&mut self, file: usize) {
        let (r, a, b) = self.range();
        let Some(fh) = self.handle(file) else { return };
        let Some(regs) = self.regions(file, r, r + 1) else {
            return;
        };
        let reg = &regs[0];
        let m = &self.sh.files[file];
        let base = (r * REGION) as u64;
        let len0 = m.len.load(Ordering::Acquire);
        let mut buf = vec![0xEEu8; b - a];
        // Readers take every path: pinned, optimistic and hinted.
        let (sh, at) = (self.sh, base + a as u64);
        let ps = self.ps();
        let got = match a % 3 {
            0 => sh.pool.read(*fh, at, &mut buf),
            1 => sh.pool.read_optimistic(*fh, at, &mut buf),
            _ => self
                .hint(file, *fh, at / ps)
                .and_then(|h| sh.pool.read_hinted(h, (at % ps) as usize, &mut buf)),
        };
        match got {
            Ok(n) => {
                // Writes to later regions may lengthen the file meanwhile, never shorten it
                // below this region's end; bytes past the length are zero in the model.
                let want_min = len0.saturating_sub(base + a as u64).min((b - a) as u64) as usize;
                if n < want_min || n > b - a || buf[..n] != reg[a..a + n] {
                    let first_bad = (0..n).find(|&i| buf[i] != reg[a + i]);
                    self.fail(format_args!(
                        "read {file}:{}+{}: got {n} bytes (at least {want_min} expected), \
                         first difference at {first_bad:?} (got {:?}, model {:?}); length {len0}",
                        base + a as u64,
                        b - a,
                        first_bad.map(|i| buf[i]),
                        first_bad.map(|i| reg[a + i]),
                    ));
                }
            }
            Err(e) => self.check_error("read", &e),
        }
    }
}
