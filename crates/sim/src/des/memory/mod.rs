//! The memory simulator: Nelson's two memory consumers — the file cache and virtual
//! memory — sharing one physical memory, with an arbiter from the `arbiter` crate
//! deciding who gives up a page (Nelson 1990, "Virtual Memory vs. The File System").
//!
//! A diskless client: processes with virtual-memory images (touched page by page, some
//! pages dirtied) and file I/O through `read`/`write`, one CPU shared round robin, and a
//! remote server that serves file blocks and swap pages through one FIFO queue. The file
//! cache keeps exact LRU; the VM keeps a clock. Runs are deterministic: no randomness in
//! the machine, ties broken by the event queue's scheduling order.
//!
//! * [`config`] — the machine ([`MemoryConfig`]);
//! * [`workload`] — what processes do ([`MemOp`]);
//! * [`ecd`], [`ifs`] — Nelson's two benchmarks;
//! * `vm`, `filecache` — the two consumers; `machine` — the event loop;
//! * [`report`] — what a run measured ([`MemReport`]).
//!
//! ```
//! use sim::des::memory::{simulate_memory, ifs::IfsWorkload, MemoryConfig};
//!
//! let workload = IfsWorkload { sleep_s: 1.0, ..Default::default() }.build();
//! let report = simulate_memory(&MemoryConfig::default(), &workload).unwrap();
//! assert!(report.finished && report.responses_s.len() > 10);
//! ```

pub mod config;
pub mod ecd;
pub(crate) mod filecache;
pub mod ifs;
mod machine;
pub mod report;
mod vm;
pub mod workload;

pub use config::{MemoryConfig, MemoryConfigError};
pub use report::{MemReport, MemRunError, ResponseSummary};
pub use workload::{MemOp, MemProcess, MemWorkload};

/// Run `workload` on the machine `config` describes.
pub fn simulate_memory(
    config: &MemoryConfig,
    workload: &MemWorkload,
) -> Result<MemReport, MemRunError> {
    machine::Machine::new(config, workload)?.run_to_end()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter::ArbiterSpec;

    /// Four pages; a process faults in two pages of its image, then reads three blocks:
    /// the third read finds memory full and negotiates.
    fn tiny(arbiter: ArbiterSpec) -> MemReport {
        let config = MemoryConfig {
            memory_pages: 4,
            min_file_pages: 0,
            arbiter,
            ..MemoryConfig::default()
        };
        let workload = MemWorkload {
            processes: vec![MemProcess {
                name: "p".into(),
                background: false,
                repeat_from: 0,
                ops: vec![
                    MemOp::Exec { pages: 2 },
                    MemOp::Touch {
                        first: 0,
                        count: 2,
                        dirty_every: 0,
                        cpu_ns_per_page: 0,
                        timed: false,
                    },
                    MemOp::Read {
                        file: 0,
                        first: 0,
                        count: 3,
                    },
                ],
            }],
        };
        simulate_memory(&config, &workload).unwrap()
    }

    #[test]
    fn a_hand_worked_run() {
        // Faults: 1 ms CPU then 6 ms at the server, twice: 14 ms. Reads: 0.25 ms copy +
        // 1 ms CPU + 6 ms server each, three times: 21.75 ms. At the third read (29.75 ms)
        // memory is full: the oldest file block was read at 21.25 ms (idle 8.5 ms), the
        // clock's victim, page 0, arrived at 7 ms (idle 22.75 ms): the VM gives it up.
        let r = tiny(ArbiterSpec::SPRITE);
        assert_eq!(r.elapsed_s, 0.035_75);
        assert_eq!((r.vm_loads, r.fs_reads, r.page_outs), (2, 3, 0));
        assert_eq!((r.fs_asks_vm, r.fs_satisfied, r.vm_asks_fs), (1, 1, 0));
        assert!((r.server_busy_s - 0.030).abs() < 1e-12);
        assert_eq!(r.file_pages_max, 3);
        // With a one-second penalty the VM page looks younger: the file cache recycles
        // its own block 0, and the times are the same.
        let r = tiny(ArbiterSpec::Age { penalty_s: 1.0 });
        assert_eq!((r.fs_asks_vm, r.fs_satisfied), (1, 0));
        assert_eq!(r.file_pages_max, 2);
        assert_eq!(r.elapsed_s, 0.035_75);
    }

    #[test]
    fn bad_configurations_are_typed_errors() {
        let config = MemoryConfig {
            memory_pages: 10,
            arbiter: ArbiterSpec::Fixed { file_pages: 10 },
            ..MemoryConfig::default()
        };
        assert!(matches!(
            simulate_memory(&config, &MemWorkload::default()),
            Err(MemRunError::Config(_))
        ));
        let config = MemoryConfig::default();
        assert!(matches!(
            simulate_memory(&config, &MemWorkload::default()),
            Err(MemRunError::Workload(_))
        ));
    }
}
