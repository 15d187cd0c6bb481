//! Burnett's TPC-B-like transactions (thesis §4.4.2.1, Figures 4.10 and 4.11).
//!
//! One process runs `transactions` transactions. Each appends `log_bytes` to a
//! write-ahead log, then (depending on the [`Mechanism`]) calls `fsync(log)`, `barrier()`
//! or nothing, reads one byte at each of `pages_read` random offsets of the data file and
//! writes one byte at each of `pages_written` random offsets. With asynchronous graphs the
//! log write is a `graphwrite` with no dependencies and each data write a `graphwrite`
//! after it. The run ends with `sync()`. The data file (615 MB) is on disk at the start;
//! the log starts empty. Files lie back to back, log first. Offsets come from the seed, so
//! every mechanism sees the same transactions.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::ops::{FileSpec, Op, Script, Workload};

/// How the transactions order their writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    /// No ordering control.
    None,
    /// `fsync(log)` after each log write.
    Fsync,
    /// `barrier()` after each log write.
    Barrier,
    /// `graphwrite`: data writes after their transaction's log write.
    Graph,
}

impl Mechanism {
    /// All four, in the thesis's order.
    pub const ALL: [Mechanism; 4] = [
        Mechanism::None,
        Mechanism::Fsync,
        Mechanism::Barrier,
        Mechanism::Graph,
    ];

    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::None => "none",
            Mechanism::Fsync => "fsync",
            Mechanism::Barrier => "barrier",
            Mechanism::Graph => "graph",
        }
    }
}

/// Parameters of the workload; the defaults are Table 4.1's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TpcbWorkload {
    /// The ordering mechanism.
    pub mechanism: Mechanism,
    /// Transactions.
    pub transactions: u32,
    /// One-byte reads at random offsets per transaction.
    pub pages_read: u32,
    /// One-byte writes at random offsets per transaction.
    pub pages_written: u32,
    /// Bytes appended to the log per transaction.
    pub log_bytes: u64,
    /// Size of the data file.
    pub data_bytes: u64,
    /// Bytes per block (must match the cache's).
    pub block_bytes: u64,
    /// Seed of the offsets.
    pub seed: u64,
}

impl Default for TpcbWorkload {
    fn default() -> Self {
        TpcbWorkload {
            mechanism: Mechanism::None,
            transactions: 10_000,
            pages_read: 3,
            pages_written: 3,
            log_bytes: 128,
            data_bytes: 615 << 20,
            block_bytes: 16 << 10,
            seed: 1,
        }
    }
}

impl TpcbWorkload {
    /// Check the parameters; the error names the key and what is allowed.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.transactions == 0 {
            return Err(("transactions".into(), "must be at least 1".into()));
        }
        if self.log_bytes == 0 {
            return Err(("log_bytes".into(), "must be at least 1".into()));
        }
        if self.data_bytes == 0 {
            return Err(("data_bytes".into(), "must be at least 1".into()));
        }
        Ok(())
    }

    /// Blocks of both files together (the disk's span for the linear seek model).
    pub fn disk_blocks(&self) -> u64 {
        let log = u64::from(self.transactions) * self.log_bytes;
        log.div_ceil(self.block_bytes) + self.data_bytes.div_ceil(self.block_bytes)
    }

    /// The script. File 0 is the log, file 1 the data.
    pub fn build(&self) -> Workload {
        const LOG: u32 = 0;
        const DATA: u32 = 1;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed ^ 0x7470_6362);
        let per_txn = 3 + self.pages_read as usize + self.pages_written as usize;
        let mut ops = Vec::with_capacity(self.transactions as usize * per_txn + 1);
        let mut deps = Vec::new();
        let mut next_id = 0u32;
        for t in 0..u64::from(self.transactions) {
            let offset = t * self.log_bytes;
            let log_id = next_id;
            match self.mechanism {
                Mechanism::Graph => {
                    ops.push(Op::GraphWrite {
                        file: LOG,
                        offset,
                        len: self.log_bytes,
                        id: log_id,
                        deps_start: 0,
                        deps_len: 0,
                    });
                    next_id += 1;
                }
                _ => ops.push(Op::Write {
                    file: LOG,
                    offset,
                    len: self.log_bytes,
                }),
            }
            match self.mechanism {
                Mechanism::Fsync => ops.push(Op::Sync(Some(LOG))),
                Mechanism::Barrier => ops.push(Op::Barrier),
                _ => {}
            }
            for _ in 0..self.pages_read {
                let offset = rng.gen_range(0..self.data_bytes);
                ops.push(Op::Read {
                    file: DATA,
                    offset,
                    len: 1,
                });
            }
            for _ in 0..self.pages_written {
                let offset = rng.gen_range(0..self.data_bytes);
                if self.mechanism == Mechanism::Graph {
                    let deps_start = deps.len() as u32;
                    deps.push(log_id);
                    ops.push(Op::GraphWrite {
                        file: DATA,
                        offset,
                        len: 1,
                        id: next_id,
                        deps_start,
                        deps_len: 1,
                    });
                    next_id += 1;
                } else {
                    ops.push(Op::Write {
                        file: DATA,
                        offset,
                        len: 1,
                    });
                }
            }
        }
        ops.push(Op::Sync(None));
        let log_max = u64::from(self.transactions) * self.log_bytes;
        Workload {
            files: vec![
                FileSpec {
                    initial_bytes: 0,
                    max_bytes: log_max,
                },
                FileSpec {
                    initial_bytes: self.data_bytes,
                    max_bytes: self.data_bytes,
                },
            ],
            scripts: vec![Script {
                ops,
                delays: vec![],
            }],
            counters: 0,
            deps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mechanism_sees_the_same_offsets() {
        let offsets = |m: Mechanism| -> Vec<(u32, u64)> {
            TpcbWorkload {
                mechanism: m,
                transactions: 50,
                ..Default::default()
            }
            .build()
            .scripts[0]
                .ops
                .iter()
                .filter_map(|op| match *op {
                    Op::Read { file, offset, .. } | Op::Write { file, offset, .. } => {
                        Some((file, offset))
                    }
                    Op::GraphWrite { file, offset, .. } => Some((file, offset)),
                    _ => None,
                })
                .collect()
        };
        let none = offsets(Mechanism::None);
        assert_eq!(none.len(), 50 * 7);
        for m in [Mechanism::Fsync, Mechanism::Barrier, Mechanism::Graph] {
            assert_eq!(offsets(m), none);
        }
    }

    #[test]
    fn graph_data_writes_follow_their_log_write() {
        let w = TpcbWorkload {
            mechanism: Mechanism::Graph,
            transactions: 2,
            pages_read: 0,
            ..Default::default()
        }
        .build();
        let mut log_ids = Vec::new();
        for op in &w.scripts[0].ops {
            if let Op::GraphWrite {
                file,
                id,
                deps_start,
                deps_len,
                ..
            } = *op
            {
                if file == 0 {
                    assert_eq!(deps_len, 0);
                    log_ids.push(id);
                } else {
                    assert_eq!(
                        &w.deps[deps_start as usize..][..deps_len as usize],
                        &[*log_ids.last().unwrap()]
                    );
                }
            }
        }
        assert_eq!(log_ids, [0, 4]);
    }
}
