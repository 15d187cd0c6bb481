//! A workload with serial writes and short-lived temporary files, for the XMF appendix
//! experiment (Braunstein, Riley & Wilkes 1989, Appendix I, Figure 21).
//!
//! The paper's summary benchmark (compilations, editing, text processing) is not
//! published in a form we can replay; what the appendix says matters is its shape: files
//! written serially, and temporary files that are deleted soon after they are written, so
//! that "if the cache is big enough, short-lived temporary files may never be written to
//! disk". Each process here runs a series of compile-like jobs:
//!
//! 1. write a temporary file of `temp_blocks` serially,
//! 2. read `sources_per_job` source files (long-lived, already on disk; popular ones
//!    are picked more often) — this pushes the temporary file toward the cold end of the
//!    cache,
//! 3. compute for `compute_ms`,
//! 4. read the temporary file back, then delete it,
//! 5. write an output file of `output_blocks` serially (it stays).
//!
//! Everything random (which sources) comes from the seed.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::disk::ms_to_ns;
use super::event::check_time;
use super::ops::{FileSpec, Op, Script, Workload};

/// Parameters of the temporary-file workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XmfWorkload {
    /// Concurrent processes.
    pub processes: u32,
    /// Jobs each process runs.
    pub jobs: u32,
    /// Bytes per block (must match the cache's block size).
    pub block_bytes: u64,
    /// Source files shared by all jobs.
    pub source_files: u32,
    /// Blocks per source file.
    pub source_blocks: u64,
    /// Source files each job reads.
    pub sources_per_job: u32,
    /// Skew of source popularity: file `i` is picked with weight `1 / (i+1)^skew`.
    pub source_skew: f64,
    /// Blocks of each temporary file.
    pub temp_blocks: u64,
    /// Blocks of each output file.
    pub output_blocks: u64,
    /// Computation between writing the temporary file and reading it back.
    pub compute_ms: f64,
    /// Seed for the choice of sources.
    pub seed: u64,
}

impl Default for XmfWorkload {
    fn default() -> Self {
        XmfWorkload {
            processes: 8,
            jobs: 60,
            block_bytes: 8192,
            source_files: 300,
            source_blocks: 6,
            sources_per_job: 6,
            source_skew: 0.8,
            temp_blocks: 64,
            output_blocks: 12,
            compute_ms: 2000.0,
            seed: 1,
        }
    }
}

impl XmfWorkload {
    /// Check the parameters; the error names the key and what is allowed.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let positive = [
            ("processes", self.processes as u64),
            ("jobs", self.jobs as u64),
            ("source_files", self.source_files as u64),
            ("source_blocks", self.source_blocks),
            ("temp_blocks", self.temp_blocks),
        ];
        for (k, v) in positive {
            if v == 0 {
                return Err((k.into(), "must be at least 1".into()));
            }
        }
        if !(self.source_skew.is_finite() && self.source_skew >= 0.0) {
            return Err(("source_skew".into(), "must be zero or more".into()));
        }
        check_time(self.compute_ms, 1e6, "milliseconds")
            .map_err(|m| ("compute_ms".to_string(), m))?;
        Ok(())
    }

    /// The scripts. Files: sources first, then per process per job a temporary and an
    /// output file.
    pub fn build(&self) -> Workload {
        let bb = self.block_bytes;
        let mut files: Vec<FileSpec> = (0..self.source_files)
            .map(|_| FileSpec {
                initial_bytes: self.source_blocks * bb,
                max_bytes: self.source_blocks * bb,
            })
            .collect();
        let weights: Vec<f64> = (0..self.source_files)
            .map(|i| 1.0 / f64::from(i + 1).powf(self.source_skew))
            .collect();
        let total_weight: f64 = weights.iter().sum();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed ^ 0x0078_6d66);
        let pick = |rng: &mut Xoshiro256PlusPlus| {
            let mut x = rng.gen::<f64>() * total_weight;
            for (i, w) in weights.iter().enumerate() {
                if x < *w {
                    return i as u32;
                }
                x -= w;
            }
            weights.len() as u32 - 1
        };
        let mut scripts = Vec::with_capacity(self.processes as usize);
        for _ in 0..self.processes {
            let mut ops = Vec::new();
            for _ in 0..self.jobs {
                let temp = files.len() as u32;
                files.push(FileSpec {
                    initial_bytes: 0,
                    max_bytes: self.temp_blocks * bb,
                });
                let output = files.len() as u32;
                files.push(FileSpec {
                    initial_bytes: 0,
                    max_bytes: self.output_blocks.max(1) * bb,
                });
                ops.push(Op::Open(temp));
                for b in 0..self.temp_blocks {
                    ops.push(Op::Write {
                        file: temp,
                        offset: b * bb,
                        len: bb,
                    });
                }
                for _ in 0..self.sources_per_job {
                    let s = pick(&mut rng);
                    ops.push(Op::Open(s));
                    for b in 0..self.source_blocks {
                        ops.push(Op::Read {
                            file: s,
                            offset: b * bb,
                            len: bb,
                        });
                    }
                    ops.push(Op::Close(s));
                }
                ops.push(Op::Compute(ms_to_ns(self.compute_ms)));
                for b in 0..self.temp_blocks {
                    ops.push(Op::Read {
                        file: temp,
                        offset: b * bb,
                        len: bb,
                    });
                }
                ops.push(Op::Close(temp));
                ops.push(Op::Delete(temp));
                ops.push(Op::Open(output));
                for b in 0..self.output_blocks {
                    ops.push(Op::Write {
                        file: output,
                        offset: b * bb,
                        len: bb,
                    });
                }
                ops.push(Op::Close(output));
            }
            scripts.push(Script {
                ops,
                delays: Vec::new(),
            });
        }
        Workload {
            files,
            scripts,
            counters: 0,
            deps: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_temporary_file_is_written_read_and_deleted() {
        let w = XmfWorkload {
            processes: 2,
            jobs: 3,
            ..Default::default()
        }
        .build();
        assert_eq!(w.files.len(), 300 + 2 * 3 * 2);
        assert_eq!(w.scripts.len(), 2);
        let deletes = w
            .scripts
            .iter()
            .flat_map(|s| s.ops.iter())
            .filter(|op| matches!(op, Op::Delete(_)))
            .count();
        assert_eq!(deletes, 6);
        assert_eq!(
            w,
            XmfWorkload {
                processes: 2,
                jobs: 3,
                ..Default::default()
            }
            .build()
        );
    }
}
