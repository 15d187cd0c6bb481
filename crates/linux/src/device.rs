//! Reads that reached the disk: a result whose misses never touched the device proves
//! nothing.
//!
//! The counters are the block device's own (`/sys/dev/block/MAJ:MIN/stat`: reads
//! completed and 512-byte sectors read) for the device holding a given path. They count
//! every process's reads of that device, so on a shared machine they are an upper bound
//! on the server's; the experiment reports them beside the server's own miss count.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where a device's counters are.
#[derive(Clone, Debug)]
pub struct DeviceCounter {
    stat: PathBuf,
    /// `MAJ:MIN`.
    pub device: String,
}

/// Reads between two snapshots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DeviceReads {
    /// Read requests completed.
    pub reads: u64,
    /// Bytes read.
    pub bytes: u64,
}

impl DeviceCounter {
    /// The counters of the device that holds `path`, if the kernel exposes them (not for
    /// tmpfs or overlay file systems, whose device numbers are anonymous).
    pub fn for_path(path: &Path) -> Option<Self> {
        let st = rustix::fs::stat(path).ok()?;
        let dev = st.st_dev;
        let device = format!("{}:{}", rustix::fs::major(dev), rustix::fs::minor(dev));
        let stat = PathBuf::from(format!("/sys/dev/block/{device}/stat"));
        stat.exists().then_some(DeviceCounter { stat, device })
    }

    /// `MAJ:MIN` of the whole disk (the device itself, or the disk a partition is on):
    /// what I/O throttles name.
    pub fn disk(&self) -> String {
        let dir = self
            .stat
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        if dir.join("partition").exists() {
            if let Ok(d) = std::fs::read_to_string(dir.join("../dev")) {
                return d.trim().to_string();
            }
        }
        self.device.clone()
    }

    /// The counters now (reads completed, bytes read).
    pub fn snapshot(&self) -> Option<DeviceReads> {
        parse_stat(&std::fs::read_to_string(&self.stat).ok()?)
    }
}

/// Parse the fields of a block device's `stat` file we need: field 1 (reads completed)
/// and field 3 (sectors read, always 512 bytes whatever the device's sector size).
pub fn parse_stat(text: &str) -> Option<DeviceReads> {
    let fields: Vec<u64> = text
        .split_whitespace()
        .take(3)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    match fields[..] {
        [reads, _merged, sectors] => Some(DeviceReads {
            reads,
            bytes: sectors.saturating_mul(512),
        }),
        _ => None,
    }
}

impl DeviceReads {
    /// `self - before`, field by field (never negative).
    pub fn since(self, before: DeviceReads) -> DeviceReads {
        DeviceReads {
            reads: self.reads.saturating_sub(before.reads),
            bytes: self.bytes.saturating_sub(before.bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse() {
        let r = parse_stat(" 5157697    95463 76653970  2040178 13645456 0 0 0 0 0 0").unwrap();
        assert_eq!(
            r,
            DeviceReads {
                reads: 5_157_697,
                bytes: 76_653_970 * 512
            }
        );
        assert_eq!(
            r.since(DeviceReads {
                reads: 5_157_690,
                bytes: 1024
            }),
            DeviceReads {
                reads: 7,
                bytes: 76_653_970 * 512 - 1024
            }
        );
        assert!(parse_stat("1 2").is_none());
        assert!(parse_stat("a b c").is_none());
    }
}
