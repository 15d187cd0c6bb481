//! The algorithmic mirror against a simulated "kernel": a cache of a registry policy that
//! reads the way Linux does (a repeated read of the same page is not an access; an
//! uncached read of an uncached page leaves nothing; `DONTNEED` drops). Exact small
//! cases worked by hand, and agreement on seeded random runs.

use inforeplace::{
    InfoReplace, Levers, PageCacheFile, PageCacheSource, ReadHow, Source, SourceError,
};
use policy::{Access, AnyPolicy, BuildContext, Cache, PolicySpec};
use testutil::Rng;

/// A simulated page cache of one file.
struct SimKernel {
    cache: Cache<AnyPolicy>,
    pages: u64,
    last: Option<u64>,
    time: u64,
}

impl SimKernel {
    fn new(policy: &str, capacity: u64, pages: u64) -> Self {
        let built = PolicySpec::parse(policy)
            .unwrap()
            .build(&BuildContext::new(capacity, 0))
            .unwrap();
        SimKernel {
            cache: Cache::new(built, capacity),
            pages,
            last: None,
            time: 0,
        }
    }
}

impl PageCacheFile for SimKernel {
    fn describe(&self) -> String {
        "simulated kernel".into()
    }
    fn pages(&self) -> u64 {
        self.pages
    }
    fn read(&mut self, page: u64, how: ReadHow) -> Result<(), SourceError> {
        let repeat = self.last == Some(page) && self.cache.contains(page);
        self.last = Some(page);
        if repeat || (how == ReadHow::Uncached && !self.cache.contains(page)) {
            return Ok(());
        }
        self.time += 1;
        self.cache.access(&Access::unit(page, self.time));
        Ok(())
    }
    fn drop_page(&mut self, page: u64) -> Result<(), SourceError> {
        self.cache.remove(page);
        Ok(())
    }
    fn resident(&self, page: u64) -> Result<bool, SourceError> {
        Ok(self.cache.contains(page))
    }
    fn dontcache(&self) -> bool {
        true
    }
}

fn source(
    kernel: SimKernel,
    mirror: &str,
    pages: u64,
    levers: Levers,
) -> PageCacheSource<SimKernel> {
    PageCacheSource::new(kernel, mirror, pages, levers).unwrap()
}

fn resident(s: &PageCacheSource<SimKernel>) -> Vec<u64> {
    let mut r: Vec<u64> = (0..s.kernel().pages())
        .filter(|&p| s.kernel().resident(p).unwrap())
        .collect();
    r.sort_unstable();
    r
}

/// Linux lists of 4 pages. Reads 1 1 1 2 3 4 5: the kernel counts the first read of 1
/// only, so 1 stays inactive and 5 evicts it (counted three times, 1 would have been
/// activated and 2 evicted). The mirror follows: it holds 2 3 4 5, agrees on every page,
/// and counted two repeats.
#[test]
fn a_burst_of_reads_of_one_page_is_one_access() {
    let mut s = source(SimKernel::new("linux", 4, 8), "linux", 4, Levers::default());
    for p in [1, 1, 1, 2, 3, 4, 5] {
        s.read(p, ReadHow::Cached).unwrap();
    }
    assert_eq!(resident(&s), [2, 3, 4, 5]);
    assert!(!s.mirror().contains(1) && s.mirror().contains(2));
    assert_eq!(s.calls().repeats, 2);
    assert_eq!(s.evictions(), 1);
    let a = s.agreement().unwrap();
    assert_eq!((a.agree, a.mirror_only, a.kernel_only), (8, 0, 0));
    // Its victim list is the kernel's next evictions: inactive from the tail.
    let mut v = Vec::new();
    s.victims(2, &mut v).unwrap();
    assert_eq!(v.iter().map(|p| p.page).collect::<Vec<_>>(), [2, 3]);
}

/// A mirror that overestimates the size: kernel LRU of 3, mirror LRU of 4, reads 0..5.
/// The kernel holds 2 3 4, the mirror 1 2 3 4: they disagree on page 1 only, 7 of 8.
#[test]
fn agreement_counts_each_kind_of_disagreement() {
    let mut s = source(SimKernel::new("lru", 3, 8), "lru", 4, Levers::default());
    for p in 0..5 {
        assert!(
            !s.read(p, ReadHow::Cached).unwrap(),
            "page {p} predicted a hit"
        );
    }
    let a = s.agreement().unwrap();
    assert_eq!(
        (a.pages, a.agree, a.mirror_only, a.kernel_only),
        (8, 7, 1, 0)
    );
    assert_eq!(a.rate(), 7.0 / 8.0);
    assert!(s.predicts_resident(inforeplace::PageKey { file: 0, page: 1 }));
    assert!(!s
        .is_resident(inforeplace::PageKey { file: 0, page: 1 })
        .unwrap());
    assert!(s
        .is_resident(inforeplace::PageKey { file: 1, page: 1 })
        .is_err());
}

/// MRU emulated over a 3-page LRU kernel through its mirror, on a loop over 4 pages
/// read three times: the kernel then hits as MRU would (6 of 12; LRU alone hits none),
/// and at the end holds exactly what MRU holds.
#[test]
fn mru_over_an_lru_kernel_through_the_mirror() {
    let s = source(SimKernel::new("lru", 3, 8), "lru", 3, Levers::default());
    let mut info = InfoReplace::new(s, "mru").unwrap();
    let mut hits = 0;
    for _ in 0..3 {
        for p in 0..4 {
            hits += u32::from(info.source().kernel().resident(p).unwrap());
            info.read_page(p).unwrap();
        }
    }
    assert_eq!(hits, 6);
    assert_eq!(info.inaccuracy().unwrap(), 0.0);
    assert_eq!(info.source().agreement().unwrap().rate(), 1.0);
}

/// The `DONTNEED` lever: the kernel has room for 4 pages, the target (LRU at the
/// mirror's size, 3) keeps 3. Reading 0 1 2 3, the target evicts 0 and the library drops
/// it, so the kernel holds what the target holds; without the lever it keeps 0 too, and
/// the (too small) mirror disagrees on page 0.
#[test]
fn dropping_the_targets_evictions() {
    for (levers, want, agree) in [
        (Levers::default(), vec![0, 1, 2, 3], 7.0 / 8.0),
        (
            Levers {
                drop_target_evictions: true,
                dontcache: false,
                verify_refreshes: false,
            },
            vec![1, 2, 3],
            1.0,
        ),
    ] {
        let s = source(SimKernel::new("lru", 4, 8), "lru", 3, levers);
        let mut info = InfoReplace::new(s, "lru").unwrap();
        for p in 0..4 {
            info.read_page(p).unwrap();
        }
        assert_eq!(resident(info.source()), want, "{}", levers.label());
        assert_eq!(
            info.source().calls().dropped,
            u64::from(levers.drop_target_evictions)
        );
        assert_eq!(info.source().agreement().unwrap().rate(), agree);
    }
}

/// The `RWF_DONTCACHE` lever: a target behind `secondhit` admission refuses a page's
/// first read, so that read goes uncached and the kernel never holds the page: reading
/// 0 1 0 2 3 leaves only 0 (read twice) in the kernel. Then 4 4: the second read, right
/// after the first, is admitted, and brings 4 in although it repeats the previous read
/// (only marking a cached page accessed is skipped on a repeat).
#[test]
fn reading_unadmitted_pages_uncached() {
    let levers = Levers {
        drop_target_evictions: false,
        dontcache: true,
        verify_refreshes: false,
    };
    let s = source(SimKernel::new("lru", 3, 8), "lru", 3, levers);
    let mut info = InfoReplace::new(s, "lru")
        .unwrap()
        .admit_with("secondhit")
        .unwrap();
    assert_eq!(info.target_label(), "lru+secondhit");
    for p in [0, 1, 0, 2, 3] {
        info.read_page(p).unwrap();
    }
    assert_eq!(resident(info.source()), [0]);
    assert_eq!(info.source().calls().uncached_reads, 4);
    for p in [4, 4] {
        info.read_page(p).unwrap();
    }
    assert_eq!(resident(info.source()), [0, 4]);
    assert_eq!(info.source().calls().uncached_reads, 5);
    assert_eq!(info.source().calls().repeats, 0);
    assert_eq!(info.source().agreement().unwrap().rate(), 1.0);
}

/// Seeded random runs (repeats, uncached reads, drops) against a kernel of the same
/// policy and size: the mirror agrees on every page after every read.
#[test]
fn a_mirror_of_the_right_policy_and_size_agrees_exactly() {
    testutil::explore(|seed| {
        let mut rng = seed.rng();
        for policy in ["linux", "lru", "clock", "twoq"] {
            let capacity = rng.gen_range(2..20u64);
            let pages = capacity * 3;
            let mut s = source(
                SimKernel::new(policy, capacity, pages),
                policy,
                capacity,
                Levers::default(),
            );
            for step in 0..500 {
                let page = if rng.gen_bool(0.2) {
                    s.mirror().victims(1).first().copied().unwrap_or(0)
                } else {
                    rng.gen_range(0..pages)
                };
                let how = if rng.gen_bool(0.1) {
                    ReadHow::Uncached
                } else {
                    ReadHow::Cached
                };
                for _ in 0..rng.gen_range(1..3) {
                    s.read(page, how).unwrap();
                }
                let a = s.agreement().unwrap();
                assert_eq!(a.agree, pages, "{policy}, step {step}");
            }
        }
    });
}

/// Experiment 4's driver over a simulated kernel of the mirror's own policy and size
/// (tree D5:F4, 341 pages; cache 64; PinRange preferring the first 45 pages: levels 1-3
/// and 24 of level 4's 64). Plain, the kernel hits exactly as a `linux` cache does and
/// the mirror predicts every read. With `DONTNEED` the kernel never has to choose, so it
/// hits exactly as PinRange itself, level by level, and ends holding PinRange's pages.
#[test]
fn index_lookups_over_a_simulated_page_cache() {
    use inforeplace::experiment::index_linux::{drive, end_state};
    use inforeplace::experiment::workload::IndexTree;
    let tree = IndexTree {
        depth: 5,
        fanout: 4,
    };
    let pages = tree.lookups(400, 11);
    let pinrange = "pinrange:range=45:rest=0.1";
    // What a cache of `policy` alone hits, per level, and holds at the end per level.
    let reference = |policy: &str| {
        let built = PolicySpec::parse(policy)
            .unwrap()
            .build(&BuildContext::new(64, 0))
            .unwrap();
        let mut cache: Cache<AnyPolicy> = Cache::new(built, 64);
        let mut hits = vec![0u64; 5];
        for (t, &p) in pages.iter().enumerate() {
            hits[tree.level_of(p) as usize] += u64::from(cache.contains(p));
            cache.access(&Access::unit(p, t as u64 + 1));
        }
        let held: Vec<u64> = (0..5)
            .map(|l| {
                let start = tree.level_start(l);
                (start..start + tree.level_nodes(l))
                    .filter(|&p| cache.contains(p))
                    .count() as u64
            })
            .collect();
        (hits, held)
    };
    let kernel = || SimKernel::new("linux", 64, tree.pages());
    let hits_of = |t: &inforeplace::experiment::index::Tally| -> Vec<u64> {
        (0..5).map(|l| t.level_hits(l)).collect()
    };

    let (plain, s) = drive(
        source(kernel(), "linux", 64, Levers::default()),
        &tree,
        &pages,
        None,
    )
    .unwrap();
    let (linux_hits, linux_held) = reference("linux");
    assert_eq!(hits_of(&plain.truth), linux_hits);
    assert_eq!(plain.truth, plain.predicted);
    assert_eq!(plain.predicted_right, 400 * 5);
    assert_eq!(plain.overhead.calls, 0);
    let (a, per_level) = end_state(&s, &tree).unwrap();
    assert_eq!((a.pages, a.agree), (341, 341));
    assert_eq!(
        per_level.iter().map(|l| l.0).collect::<Vec<_>>(),
        linux_held
    );

    let dontneed = Levers {
        drop_target_evictions: true,
        dontcache: false,
        verify_refreshes: false,
    };
    let config = inforeplace::Config::default();
    let (steered, s) = drive(
        source(kernel(), "linux", 64, dontneed),
        &tree,
        &pages,
        Some((pinrange, config)),
    )
    .unwrap();
    let (pin_hits, pin_held) = reference(pinrange);
    assert_eq!(hits_of(&steered.truth), pin_hits);
    assert_eq!(steered.truth, steered.predicted);
    assert_eq!(steered.overhead.calls, 400 * 5);
    assert_eq!(steered.overhead.refreshes, 0);
    let (a, per_level) = end_state(&s, &tree).unwrap();
    assert_eq!(a.agree, 341);
    assert_eq!(per_level.iter().map(|l| l.0).collect::<Vec<_>>(), pin_held);
    // PinRange keeps more of level 4 than the kernel's lists do, as in Figure 3.2.
    assert!(pin_hits[3] > linux_hits[3], "{pin_hits:?} {linux_hits:?}");

    // Re-reads alone over an exact mirror: every read predicted, mirror and kernel agree.
    let (reread, s) = drive(
        source(kernel(), "linux", 64, Levers::default()),
        &tree,
        &pages,
        Some((pinrange, config)),
    )
    .unwrap();
    assert_eq!(reread.truth, reread.predicted);
    assert!(reread.overhead.refreshes > 0);
    assert_eq!(end_state(&s, &tree).unwrap().0.agree, 341);
}

/// The `verify` lever, by hand: a FIFO kernel of 3 pages under an LRU mirror. Reads
/// 1 2 3 1 4: the kernel evicts 1 (first in), the mirror 2 (least recent). Refreshing 1
/// without the lever reads it back (a device read) and the kernel evicts 2 for it; with
/// the lever the kernel is asked first, 1 is not read, and the mirror drops it instead.
#[test]
fn verifying_refreshes_corrects_the_mirror_instead_of_reading() {
    for verify in [false, true] {
        let levers = Levers {
            verify_refreshes: verify,
            ..Levers::default()
        };
        let mut s = source(SimKernel::new("fifo", 3, 8), "lru", 3, levers);
        for p in [1, 2, 3, 1, 4] {
            s.read(p, ReadHow::Cached).unwrap();
        }
        assert_eq!(resident(&s), [2, 3, 4]);
        assert!(s.mirror().contains(1) && !s.mirror().contains(2));
        s.refresh(inforeplace::PageKey { file: 0, page: 1 })
            .unwrap();
        if verify {
            assert_eq!(resident(&s), [2, 3, 4]);
            assert!(!s.mirror().contains(1));
            assert_eq!((s.calls().reads, s.calls().corrected), (5, 1));
        } else {
            assert_eq!(resident(&s), [1, 3, 4]);
            assert!(s.mirror().contains(1));
            assert_eq!((s.calls().reads, s.calls().corrected), (6, 0));
        }
    }
}
