//! Nelson 1990, "Virtual Memory vs. The File System": the ECD and IFS benchmarks on the
//! memory simulator under every arbiter — the fixed-size file caches of Figures 1-2, the
//! variable-size cache of Figures 3-4 and Table 2, the penalties of Figures 5-6 and
//! Table 4, the IFS runs of Table 3 — and, beyond the paper, Linux's refault-cost split,
//! the ghost balance and regret.

use arbiter::ArbiterSpec;
use rayon::prelude::*;
use serde::Serialize;

use crate::des::memory::ecd::{user_pages, EcdWorkload};
use crate::des::memory::ifs::IfsWorkload;
use crate::des::memory::{simulate_memory, MemReport, MemoryConfig};

/// Client memory sizes of the ECD runs (Table 2's rows), in MB.
pub const MEMORY_MB: [f64; 5] = [10.0, 11.0, 12.0, 14.0, 16.0];
/// Fixed file-cache sizes (Figure 1's x axis), in MB.
pub const FIXED_MB: [f64; 4] = [0.5, 1.0, 2.0, 4.0];
/// Penalties of Section 6, in seconds (0 is plain Sprite).
pub const PENALTIES_S: [f64; 4] = [0.0, 60.0, 120.0, 300.0];
/// IFS sleep intervals (Tables 3-4), in seconds.
pub const SLEEPS_S: [f64; 4] = [1.0, 5.0, 10.0, 30.0];
/// The ECD file cache's minimum: 0.25 MB (Table 2).
pub const ECD_MIN_FILE_PAGES: u32 = 64;
/// The IFS file cache's minimum: 64 KB (Table 4).
pub const IFS_MIN_FILE_PAGES: u32 = 16;
/// User memory of the IFS machine: 6.7 MB.
pub const IFS_MEMORY_PAGES: u32 = 1715;

/// The variable-size arbiters: Sprite with each penalty, then Linux's and our two.
pub fn variable_arbiters() -> Vec<ArbiterSpec> {
    PENALTIES_S
        .iter()
        .map(|&penalty_s| ArbiterSpec::Age { penalty_s })
        .chain([
            ArbiterSpec::LINUX,
            ArbiterSpec::Balance,
            ArbiterSpec::Regret,
        ])
        .collect()
}

/// One ECD run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EcdPoint {
    /// Client memory, MB (the kernel's 1.3 MB included).
    pub memory_mb: f64,
    /// Arbiter label (`fixed-128`, `sprite`, `penalty-120`, `refault`, `balance`,
    /// `regret`).
    pub arbiter: String,
    /// The fixed cache size in MB, for fixed splits.
    pub fixed_cache_mb: Option<f64>,
    /// False when the run thrashed past the time limit.
    pub finished: bool,
    /// Elapsed time.
    pub elapsed_s: f64,
    /// Fraction of the run the server was busy.
    pub server_utilization: f64,
    /// File data moved, MB.
    pub fs_mb: f64,
    /// VM data moved (loads, page-ins, page-outs), MB.
    pub vm_mb: f64,
    /// Both, MB.
    pub total_mb: f64,
    /// Pages read from swap.
    pub page_ins: u64,
    /// Pages written to swap.
    pub page_outs: u64,
    /// Refaults of VM pages.
    pub vm_refaults: u64,
    /// Refaults of file blocks.
    pub fs_refaults: u64,
    /// Smallest and largest file cache, MB.
    pub cache_min_mb: f64,
    /// Largest file cache, MB.
    pub cache_max_mb: f64,
    /// Table 2's four negotiation counts.
    pub fs_asks_vm: u64,
    /// FS asked and got a page.
    pub fs_satisfied: u64,
    /// VM asked the FS.
    pub vm_asks_fs: u64,
    /// VM asked and got a page.
    pub vm_satisfied: u64,
}

impl EcdPoint {
    fn new(memory_mb: f64, fixed_cache_mb: Option<f64>, r: &MemReport) -> Self {
        EcdPoint {
            memory_mb,
            arbiter: r.arbiter.clone(),
            fixed_cache_mb,
            finished: r.finished,
            elapsed_s: r.elapsed_s,
            server_utilization: r.server_utilization(),
            fs_mb: r.mb(r.fs_pages()),
            vm_mb: r.mb(r.vm_pages()),
            total_mb: r.mb(r.fs_pages() + r.vm_pages()),
            page_ins: r.page_ins,
            page_outs: r.page_outs,
            vm_refaults: r.vm_refaults,
            fs_refaults: r.fs_refaults,
            cache_min_mb: r.mb(r.file_pages_min),
            cache_max_mb: r.mb(r.file_pages_max),
            fs_asks_vm: r.fs_asks_vm,
            fs_satisfied: r.fs_satisfied,
            vm_asks_fs: r.vm_asks_fs,
            vm_satisfied: r.vm_satisfied,
        }
    }
}

/// One IFS run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IfsPoint {
    /// The interactive program's sleep, s.
    pub sleep_s: f64,
    /// Arbiter label.
    pub arbiter: String,
    /// The sort's run time, s.
    pub sort_s: f64,
    /// Slowdown against the sort alone on the machine (0.25 = 25% longer).
    pub sort_degradation: f64,
    /// Interactive responses measured while the sort ran.
    pub responses: usize,
    /// Shortest response, s.
    pub response_min_s: f64,
    /// Longest, s.
    pub response_max_s: f64,
    /// Mean, s.
    pub response_mean_s: f64,
    /// Median, s.
    pub response_p50_s: f64,
    /// 90th percentile, s.
    pub response_p90_s: f64,
    /// Pages read from swap.
    pub page_ins: u64,
    /// Pages written to swap.
    pub page_outs: u64,
    /// VM refaults.
    pub vm_refaults: u64,
    /// File blocks read from the server.
    pub fs_reads: u64,
    /// File blocks written to the server.
    pub fs_writes: u64,
    /// File refaults.
    pub fs_refaults: u64,
    /// Smallest file cache, KB.
    pub cache_min_kb: u64,
    /// Largest file cache, KB.
    pub cache_max_kb: u64,
}

/// Everything the experiment measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NelsonResults {
    /// ECD runs: fixed sizes and every variable arbiter at every memory size.
    pub ecd: Vec<EcdPoint>,
    /// IFS runs: every variable arbiter at every sleep interval.
    pub ifs: Vec<IfsPoint>,
    /// The sort alone on the IFS machine, s.
    pub sort_standalone_s: f64,
}

/// The ECD machine with `memory_mb` of memory under `arbiter`.
pub fn ecd_config(memory_mb: f64, arbiter: ArbiterSpec) -> MemoryConfig {
    MemoryConfig {
        memory_pages: user_pages(memory_mb),
        min_file_pages: ECD_MIN_FILE_PAGES,
        arbiter,
        ..MemoryConfig::default()
    }
}

/// The IFS machine under `arbiter`.
pub fn ifs_config(arbiter: ArbiterSpec) -> MemoryConfig {
    MemoryConfig {
        memory_pages: IFS_MEMORY_PAGES,
        min_file_pages: IFS_MIN_FILE_PAGES,
        arbiter,
        ..MemoryConfig::default()
    }
}

/// Every ECD run: (memory, fixed size or none, arbiter), in a fixed order.
fn ecd_specs(quick: bool) -> Vec<(f64, Option<f64>, ArbiterSpec)> {
    let memories: &[f64] = if quick { &[16.0] } else { &MEMORY_MB };
    let mut specs = Vec::new();
    for &m in memories {
        for &f in &FIXED_MB {
            let file_pages = (f * 256.0) as u64;
            specs.push((m, Some(f), ArbiterSpec::Fixed { file_pages }));
        }
        for a in variable_arbiters() {
            specs.push((m, None, a));
        }
    }
    specs
}

/// Run one ECD point.
pub fn ecd_point(memory_mb: f64, fixed_cache_mb: Option<f64>, arbiter: ArbiterSpec) -> EcdPoint {
    let workload = EcdWorkload::default().build();
    let r = simulate_memory(&ecd_config(memory_mb, arbiter), &workload)
        .expect("the ECD configurations are valid");
    EcdPoint::new(memory_mb, fixed_cache_mb, &r)
}

/// Run one IFS point (the sort's standalone time given, for the degradation).
pub fn ifs_point(sleep_s: f64, arbiter: ArbiterSpec, sort_standalone_s: f64) -> IfsPoint {
    let w = IfsWorkload {
        sleep_s,
        ..IfsWorkload::default()
    };
    let r = simulate_memory(&ifs_config(arbiter), &w.build())
        .expect("the IFS configurations are valid");
    let sort_s = r.done_s("sort").expect("the sort finishes") - w.sort_start_s;
    let s = r.response_summary(w.sort_start_s, r.elapsed_s);
    IfsPoint {
        sleep_s,
        arbiter: r.arbiter.clone(),
        sort_s,
        sort_degradation: sort_s / sort_standalone_s - 1.0,
        responses: s.count,
        response_min_s: s.min_s,
        response_max_s: s.max_s,
        response_mean_s: s.mean_s,
        response_p50_s: s.p50_s,
        response_p90_s: s.p90_s,
        page_ins: r.page_ins,
        page_outs: r.page_outs,
        vm_refaults: r.vm_refaults,
        fs_reads: r.fs_reads,
        fs_writes: r.fs_writes,
        fs_refaults: r.fs_refaults,
        cache_min_kb: r.file_pages_min * u64::from(r.page_bytes) / 1024,
        cache_max_kb: r.file_pages_max * u64::from(r.page_bytes) / 1024,
    }
}

/// The sort alone on the IFS machine (Sprite's arbiter; nothing competes), s.
pub fn sort_standalone_s() -> f64 {
    let w = IfsWorkload {
        interactive: false,
        ..IfsWorkload::default()
    };
    let r = simulate_memory(&ifs_config(ArbiterSpec::SPRITE), &w.build())
        .expect("the IFS configuration is valid");
    r.done_s("sort").expect("the sort finishes") - w.sort_start_s
}

/// Every point, in parallel, returned in a fixed order.
pub fn run(quick: bool) -> NelsonResults {
    let sort_standalone_s = sort_standalone_s();
    let ecd = ecd_specs(quick)
        .into_par_iter()
        .map(|(m, f, a)| ecd_point(m, f, a))
        .collect();
    let sleeps: &[f64] = if quick { &[1.0, 30.0] } else { &SLEEPS_S };
    let ifs_specs: Vec<(f64, ArbiterSpec)> = sleeps
        .iter()
        .flat_map(|&s| variable_arbiters().into_iter().map(move |a| (s, a)))
        .collect();
    let ifs = ifs_specs
        .into_par_iter()
        .map(|(s, a)| ifs_point(s, a, sort_standalone_s))
        .collect();
    NelsonResults {
        ecd,
        ifs,
        sort_standalone_s,
    }
}
