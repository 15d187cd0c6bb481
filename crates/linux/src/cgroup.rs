//! A memory cgroup that bounds an experiment's page cache, made for one experiment and
//! removed after it (as `scripts/dust-linux.sh` does).
//!
//! The page cache a process brings in is charged to its memory cgroup, and the kernel
//! reclaims within the cgroup's limit: a process placed in a cgroup limited to 80 MiB of
//! memory keeps at most that much of its files cached, while the rest of the machine is
//! left alone. The cgroup is created below this process's own memory cgroup (so any limit
//! the caller is under still applies): cgroup v2 where the unified hierarchy is mounted
//! with the memory controller, else the v1 memory hierarchy. Creating it needs root (or
//! a delegated subtree); where that fails, [`MemoryCgroup::create`] is an error and each
//! experiment says what it does without one.
//!
//! Optionally the cgroup also limits its processes' read bandwidth on one device (v1: a
//! sibling cgroup in the `blkio` hierarchy, `blkio.throttle.read_bps_device` or
//! `read_iops_device`; v2: `io.max` `rbps=` or `riops=` in the same cgroup), so that a
//! fast virtual disk can play the thesis' slow one.

use std::path::{Path, PathBuf};

use crate::LinuxError;

/// Which hierarchy the cgroup is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// The unified hierarchy (`memory.max`).
    V2,
    /// The v1 memory hierarchy (`memory.limit_in_bytes`).
    V1,
}

/// A memory cgroup; removed on drop (once its processes have exited).
#[derive(Debug)]
pub struct MemoryCgroup {
    dir: PathBuf,
    version: Version,
    /// v1: the blkio cgroup that throttles reads, if one was asked for.
    blkio: Option<PathBuf>,
}

const ROOT: &str = "/sys/fs/cgroup";

/// What a read throttle limits.
#[derive(Clone, Copy)]
enum ReadLimit {
    /// Bytes a second.
    Bytes,
    /// Requests a second.
    Requests,
}

/// Where this process's memory cgroup is, from `/proc/self/cgroup`.
pub(crate) fn own_cgroup() -> Option<(PathBuf, Version)> {
    own_in("memory")
}

/// Where this process's cgroup of `controller` is (v2: the unified one, if that
/// controller is enabled there).
fn own_in(controller: &str) -> Option<(PathBuf, Version)> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let v2 = Path::new(ROOT).join("cgroup.controllers");
    let v2_name = if controller == "blkio" {
        "io"
    } else {
        controller
    };
    if std::fs::read_to_string(&v2).is_ok_and(|c| c.split_whitespace().any(|x| x == v2_name)) {
        let own = text.lines().find_map(|l| l.strip_prefix("0::"))?;
        return Some((
            Path::new(ROOT).join(own.trim_start_matches('/')),
            Version::V2,
        ));
    }
    let own = text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == controller)
            .then_some(path)
    })?;
    Some((
        Path::new(ROOT)
            .join(controller)
            .join(own.trim_start_matches('/')),
        Version::V1,
    ))
}

impl MemoryCgroup {
    /// Create `name` below this process's memory cgroup, limited to `limit_bytes`.
    pub fn create(name: &str, limit_bytes: u64) -> Result<Self, LinuxError> {
        let (parent, version) = own_cgroup().ok_or(LinuxError::Unsupported {
            what: "memory cgroup",
            why: "no memory cgroup hierarchy is mounted here",
        })?;
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(LinuxError::io("creating the memory cgroup", &dir))?;
        let cg = MemoryCgroup {
            dir,
            version,
            blkio: None,
        };
        let limit_file = match version {
            Version::V2 => "memory.max",
            Version::V1 => "memory.limit_in_bytes",
        };
        cg.write(limit_file, &limit_bytes.to_string())?;
        Ok(cg)
    }

    /// Limit reads from device `maj_min` (`"254:0"`, a whole disk) to `bytes_per_s`.
    pub fn throttle_reads(&mut self, maj_min: &str, bytes_per_s: u64) -> Result<(), LinuxError> {
        self.throttle(ReadLimit::Bytes, maj_min, bytes_per_s)
    }

    /// Limit reads from device `maj_min` to `per_s` requests a second (v1:
    /// `blkio.throttle.read_iops_device`, v2: `io.max riops=`): a fast virtual disk then
    /// answers small random reads as slowly as a spinning one. One throttle per cgroup.
    pub fn throttle_read_iops(&mut self, maj_min: &str, per_s: u64) -> Result<(), LinuxError> {
        self.throttle(ReadLimit::Requests, maj_min, per_s)
    }

    fn throttle(&mut self, limit: ReadLimit, maj_min: &str, value: u64) -> Result<(), LinuxError> {
        let (v2_key, v1_file) = match limit {
            ReadLimit::Bytes => ("rbps", "blkio.throttle.read_bps_device"),
            ReadLimit::Requests => ("riops", "blkio.throttle.read_iops_device"),
        };
        match self.version {
            Version::V2 => self.write("io.max", &format!("{maj_min} {v2_key}={value}")),
            Version::V1 => {
                let (parent, _) = own_in("blkio").ok_or(LinuxError::Unsupported {
                    what: "read throttle",
                    why: "no blkio hierarchy to throttle reads with",
                })?;
                let name = self.dir.file_name().unwrap_or_default();
                let dir = parent.join(name);
                std::fs::create_dir(&dir)
                    .map_err(LinuxError::io("creating the blkio cgroup", &dir))?;
                self.blkio = Some(dir.clone());
                let path = dir.join(v1_file);
                std::fs::write(&path, format!("{maj_min} {value}"))
                    .map_err(LinuxError::io("writing", &path))
            }
        }
    }

    fn write(&self, file: &str, value: &str) -> Result<(), LinuxError> {
        let path = self.dir.join(file);
        std::fs::write(&path, value).map_err(LinuxError::io("writing", &path))
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The hierarchy.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Move process `pid` into the cgroup: from then on the page cache it brings in is
    /// charged here.
    pub fn add(&self, pid: u32) -> Result<(), LinuxError> {
        self.write("cgroup.procs", &pid.to_string())?;
        if let Some(dir) = &self.blkio {
            let path = dir.join("cgroup.procs");
            std::fs::write(&path, pid.to_string()).map_err(LinuxError::io("writing", &path))?;
        }
        Ok(())
    }

    /// Move process `pid` back to the parent cgroups (memory, and blkio when throttled),
    /// so that this cgroup can be removed while the process lives on.
    pub fn leave(&self, pid: u32) -> Result<(), LinuxError> {
        for dir in std::iter::once(&self.dir).chain(self.blkio.as_ref()) {
            if let Some(parent) = dir.parent() {
                let path = parent.join("cgroup.procs");
                std::fs::write(&path, pid.to_string()).map_err(LinuxError::io("writing", &path))?;
            }
        }
        Ok(())
    }

    /// Page-cache bytes charged to the cgroup now (`file` in v2's `memory.stat`, `cache`
    /// in v1's), if readable.
    pub fn cache_bytes(&self) -> Option<u64> {
        self.stat(crate::memcg_reading::cache_key(self.version))
    }

    /// One field of the cgroup's `memory.stat` (`workingset_refault_file`,
    /// `active_file`, ...), if readable. Reading the file flushes the cgroup's
    /// statistics ([`crate::memcg_reading`]), so call it after a measurement, not during.
    pub fn stat(&self, key: &str) -> Option<u64> {
        crate::memcg_reading::stat_field(&self.dir, key)
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // Empty once the server has exited; its page cache is handed to the parent.
        for dir in std::iter::once(&self.dir).chain(self.blkio.as_ref()) {
            if let Err(e) = std::fs::remove_dir(dir) {
                tracing::warn!("removing cgroup {}: {e}", dir.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As root (how bufcache's machines and CI run), a cgroup is made with its limit and
    /// removed on drop: a failure there fails the test, with the kernel's reason. Without
    /// root, creation must be an error, not a panic.
    #[test]
    fn a_cgroup_is_made_and_removed() {
        let made = MemoryCgroup::create(&format!("bufcache-test-{}", std::process::id()), 64 << 20);
        if !rustix::process::geteuid().is_root() {
            assert!(made.is_err(), "a memory cgroup was made without root");
            return;
        }
        let cg = made.unwrap_or_else(|e| panic!("root cannot make a memory cgroup here: {e}"));
        let dir = cg.path().to_path_buf();
        assert!(dir.is_dir());
        assert!(cg.cache_bytes().is_some());
        drop(cg);
        assert!(!dir.exists());
    }
}
