//! The two workloads of the thesis's InfoReplace evaluation, as page sequences.
//!
//! * [`dust_pages`]: Dust's short-term fingerprint (thesis §3.4.2 ran "the Dust workload"
//!   over a file 1.5 times the cache): a test region of 90% of the cache in ten stripes
//!   whose initial order, recency and frequency disagree, then an eviction scan of 60%,
//!   then Dust's 20 probes. It is produced by Dust's own code (`dust::steps::run_step`)
//!   reading through a recorder, so the two can never drift apart.
//! * [`IndexTree`]: the on-disk B-tree-like index of §3.4.3, `depth` levels of `fanout`,
//!   one node per page, laid out breadth first (root at the head of the file, leaves at
//!   the end), and seeded random lookups from the root to a uniformly chosen leaf.

use dust::{DustError, Judge, Layout, Read, Step, Target};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A Dust target that only writes down which blocks were read.
struct Recorder {
    blocks: u64,
    reads: Vec<u64>,
}

impl Target for Recorder {
    fn describe(&self) -> String {
        "recorder".into()
    }
    fn blocks(&self) -> u64 {
        self.blocks
    }
    fn read(&mut self, block: u64) -> Result<Read, DustError> {
        self.reads.push(block);
        Ok(Read {
            latency_ns: None,
            resident: Some(false),
        })
    }
    fn reset(&mut self) -> Result<(), DustError> {
        self.reads.clear();
        Ok(())
    }
    fn has_timing(&self) -> bool {
        false
    }
    fn has_oracle(&self) -> bool {
        true
    }
}

/// The pages Dust's short-term step reads for a cache of `cache_pages` pages (at least
/// 20), in order; `seed` places the probes. Every page is below
/// `dust_file_pages(cache_pages)`.
pub fn dust_pages(cache_pages: u64, seed: u64) -> Result<Vec<u64>, DustError> {
    let layout = Layout::new(cache_pages)?;
    let mut recorder = Recorder {
        blocks: layout.blocks_needed(),
        reads: Vec::new(),
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut probes = Vec::new();
    dust::steps::run_step(
        &mut recorder,
        &Judge::Oracle,
        &layout,
        Step::ShortTerm,
        0,
        &mut rng,
        &mut probes,
    )?;
    Ok(recorder.reads)
}

/// Pages of the file the short-term step reads: the region and the eviction scan, 1.5
/// times the cache.
pub fn dust_file_pages(cache_pages: u64) -> Result<u64, DustError> {
    let layout = Layout::new(cache_pages)?;
    Ok(layout.region_pages + layout.evict_pages)
}

/// A complete tree of `depth` levels, each node `fanout` children, one node per page,
/// breadth first from page 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct IndexTree {
    /// Levels, the root's included (the thesis's D).
    pub depth: u32,
    /// Children per node (the thesis's F).
    pub fanout: u64,
}

impl IndexTree {
    /// The thesis's three trees: D7:F7, D7:F8, D8:F7.
    pub const THESIS: [IndexTree; 3] = [
        IndexTree {
            depth: 7,
            fanout: 7,
        },
        IndexTree {
            depth: 7,
            fanout: 8,
        },
        IndexTree {
            depth: 8,
            fanout: 7,
        },
    ];

    /// `D7:F7`.
    pub fn label(&self) -> String {
        format!("D{}:F{}", self.depth, self.fanout)
    }

    /// Nodes on `level` (0 = root).
    pub fn level_nodes(&self, level: u32) -> u64 {
        self.fanout.pow(level)
    }

    /// First page of `level`.
    pub fn level_start(&self, level: u32) -> u64 {
        (0..level).map(|l| self.level_nodes(l)).sum()
    }

    /// Pages of the whole tree.
    pub fn pages(&self) -> u64 {
        self.level_start(self.depth)
    }

    /// The level a page belongs to.
    pub fn level_of(&self, page: u64) -> u32 {
        (0..self.depth)
            .find(|&l| page < self.level_start(l + 1))
            .unwrap_or(self.depth - 1)
    }

    /// The pages one lookup of leaf `leaf` (0..leaves) reads, root first.
    pub fn path(&self, leaf: u64, out: &mut Vec<u64>) {
        out.clear();
        for level in 0..self.depth {
            let index = leaf / self.fanout.pow(self.depth - 1 - level);
            out.push(self.level_start(level) + index);
        }
    }

    /// `lookups` lookups of uniformly chosen leaves, seeded: the pages in read order.
    pub fn lookups(&self, lookups: u64, seed: u64) -> Vec<u64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let leaves = self.level_nodes(self.depth - 1);
        let mut path = Vec::with_capacity(self.depth as usize);
        let mut out = Vec::with_capacity((lookups * u64::from(self.depth)) as usize);
        for _ in 0..lookups {
            self.path(rng.gen_range(0..leaves), &mut path);
            out.extend_from_slice(&path);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_geometry_by_hand() {
        // D3:F2: levels of 1, 2, 4 pages at 0, 1..3, 3..7.
        let t = IndexTree {
            depth: 3,
            fanout: 2,
        };
        assert_eq!(t.pages(), 7);
        assert_eq!([t.level_start(1), t.level_start(2)], [1, 3]);
        assert_eq!(
            (0..7).map(|p| t.level_of(p)).collect::<Vec<_>>(),
            [0, 1, 1, 2, 2, 2, 2]
        );
        let mut path = Vec::new();
        t.path(2, &mut path); // leaf 2 = page 5, under node 1 of level 1 (page 2)
        assert_eq!(path, [0, 2, 5]);
        t.path(3, &mut path);
        assert_eq!(path, [0, 2, 6]);
        assert_eq!(IndexTree::THESIS[0].pages(), 137_257);
        assert_eq!(IndexTree::THESIS[2].pages(), 960_800);
    }

    #[test]
    fn dust_workload_covers_one_and_a_half_caches() {
        let pages = dust_pages(100, 1).unwrap();
        // region 90 pages (10 stripes of 9), eviction scan (100 - 90) + 50 = 60 pages
        assert_eq!(dust_file_pages(100).unwrap(), 150);
        assert_eq!(pages.iter().max(), Some(&149));
        // initial scan 90, stripes 9 * (1+2+3+4+5 + 10+9+8+7+6) = 495, scan 60 * 9, probes 20
        assert_eq!(pages.len(), 90 + 495 + 540 + 20);
        assert_eq!(pages, dust_pages(100, 1).unwrap());
    }
}
