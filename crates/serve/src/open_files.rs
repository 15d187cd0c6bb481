//! The server's open-file cache: from a request path to an open file, resolved once and
//! reused, so that a request for a file served a moment ago costs one `fstat` instead of
//! a path walk, a canonicalisation, two `stat`s, an `open` and an `fstat`.
//!
//! Safety does not depend on the cache. A file enters it only through
//! [`crate::safe_path::resolve`] (every traversal spelling refused, the canonical path
//! under the root, a regular file), and is then opened without following a final link
//! and checked to be the very inode that was resolved: the descriptor held is a file that
//! was under the root when it was opened, whatever happens to the tree later.
//!
//! What may go stale, and for how long: each hit re-reads the length and modification
//! time from the open descriptor (`fstat`), so a file rewritten in place is served with
//! its current length and `Last-Modified`. A file that was unlinked or renamed over
//! (link count 0) is resolved again at once. What the cache cannot see without a path
//! walk is a path that now names *another* file while the old one still exists under
//! another name (a hard link, a directory renamed); that is re-checked when the entry is
//! older than the time to live (default 2 s; nginx's `open_file_cache_valid` is 60 s).
//!
//! Bounded: at most `capacity` entries (each holds a descriptor). When full, expired
//! entries are dropped, and if none had expired the whole cache is emptied: a set larger
//! than the cache costs what an uncached server costs, never more.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;

use crate::safe_path::{resolve_file, Refusal};

/// A file of the served tree, open.
#[derive(Debug)]
pub struct OpenFile {
    /// Canonical path (for logs, and for the pool, which opens files by path).
    pub path: Arc<Path>,
    /// The descriptor, shared by every request for the file.
    pub file: Arc<File>,
    /// The file's inode number: with the page number, the mirror's key.
    pub inode: u64,
}

impl OpenFile {
    /// Open `path` as it is, with no check against a root: for tests and tools that
    /// build jobs by hand. The server's files come from [`OpenFiles::get`].
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = File::open(path)?;
        let inode = file.metadata()?.ino();
        Ok(OpenFile {
            path: path.into(),
            file: Arc::new(file),
            inode,
        })
    }
}

/// An open file and its metadata as of this request.
#[derive(Clone, Debug)]
pub struct Opened {
    /// The file.
    pub file: Arc<OpenFile>,
    /// Its length now.
    pub len: u64,
    /// Its modification time now, where the file system keeps one.
    pub modified: Option<SystemTime>,
}

struct Entry {
    file: Arc<OpenFile>,
    resolved: Instant,
}

/// The cache. Shared by every connection (one short lock per lookup).
pub struct OpenFiles {
    root: PathBuf,
    ttl: Duration,
    capacity: usize,
    entries: Mutex<HashMap<Box<str>, Entry>>,
}

impl std::fmt::Debug for OpenFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenFiles")
            .field("root", &self.root)
            .field("ttl", &self.ttl)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl OpenFiles {
    /// A cache over `root` (already canonical) of at most `capacity` files, each path
    /// walked again after `ttl`. Capacity 0 or a zero `ttl` turn caching off: every
    /// request resolves and opens its file, as a server without the cache does.
    pub fn new(root: PathBuf, ttl: Duration, capacity: usize) -> Self {
        OpenFiles {
            root,
            ttl,
            capacity,
            entries: Mutex::new(HashMap::with_capacity(capacity.min(1 << 16))),
        }
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The file `request_path` (still percent-encoded) names, open, or why not.
    pub fn get(&self, request_path: &str) -> Result<Opened, Refusal> {
        let now = Instant::now();
        let cached = {
            let entries = self.entries.lock();
            entries
                .get(request_path)
                .filter(|e| now.duration_since(e.resolved) < self.ttl)
                .map(|e| Arc::clone(&e.file))
        };
        if let Some(file) = cached {
            if let Ok(meta) = file.file.metadata() {
                if meta.nlink() > 0 {
                    return Ok(Opened {
                        len: meta.len(),
                        modified: meta.modified().ok(),
                        file,
                    });
                }
            }
            // Unlinked (or unreadable): whatever the path names now is resolved afresh.
        }
        let (file, meta) = open_resolved(&self.root, request_path)?;
        let file = Arc::new(file);
        if self.capacity > 0 && !self.ttl.is_zero() {
            let mut entries = self.entries.lock();
            if entries.len() >= self.capacity && !entries.contains_key(request_path) {
                entries.retain(|_, e| now.duration_since(e.resolved) < self.ttl);
                if entries.len() >= self.capacity {
                    entries.clear();
                }
            }
            entries.insert(
                request_path.into(),
                Entry {
                    file: Arc::clone(&file),
                    resolved: now,
                },
            );
        }
        Ok(Opened {
            len: meta.len(),
            modified: meta.modified().ok(),
            file,
        })
    }
}

/// Resolve and open `request_path`: the descriptor must be the regular file the
/// resolution found (same device and inode), opened without following a final link, so a
/// tree changed between the check and the open is refused rather than trusted.
fn open_resolved(
    root: &Path,
    request_path: &str,
) -> Result<(OpenFile, std::fs::Metadata), Refusal> {
    let (path, checked) = resolve_file(root, request_path)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|_| Refusal::NotFound)?;
    let meta = file.metadata().map_err(|_| Refusal::NotFound)?;
    if (meta.dev(), meta.ino()) != (checked.dev(), checked.ino()) {
        return Err(Refusal::Traversal);
    }
    if !meta.is_file() {
        return Err(Refusal::NotFound);
    }
    Ok((
        OpenFile {
            path: path.into(),
            file: Arc::new(file),
            inode: meta.ino(),
        },
        meta,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a"), b"aaaa").unwrap();
        std::fs::write(dir.path().join("secret"), b"s").unwrap();
        let root = root.canonicalize().unwrap();
        (dir, root)
    }

    const LONG: Duration = Duration::from_secs(3600);

    #[test]
    fn a_second_request_reuses_the_descriptor_and_sees_the_current_length() {
        let (_d, root) = tree();
        let cache = OpenFiles::new(root.clone(), LONG, 8);
        let first = cache.get("/a").unwrap();
        assert_eq!((first.len, cache.len()), (4, 1));
        // Rewritten in place: the same descriptor, the new length.
        std::fs::write(root.join("a"), b"aaaaaaaa").unwrap();
        let second = cache.get("/a").unwrap();
        assert!(Arc::ptr_eq(&first.file, &second.file));
        assert_eq!(second.len, 8);
        // Another spelling of the path is another entry, resolved on its own.
        let third = cache.get("//a").unwrap();
        assert!(!Arc::ptr_eq(&first.file, &third.file));
        assert_eq!(cache.len(), 2);
    }

    /// A served file replaced by a link leading out of the root: the old inode is
    /// unlinked, so the very next request resolves again and is refused.
    #[test]
    fn a_file_swapped_for_an_escaping_link_is_refused_at_once() {
        let (d, root) = tree();
        let cache = OpenFiles::new(root.clone(), LONG, 8);
        cache.get("/a").unwrap();
        let link = root.join("a.tmp");
        std::os::unix::fs::symlink(d.path().join("secret"), &link).unwrap();
        std::fs::rename(&link, root.join("a")).unwrap();
        assert_eq!(cache.get("/a").unwrap_err(), Refusal::Traversal);
        // Deleted outright: not found, not served from the descriptor.
        std::fs::remove_file(root.join("a")).unwrap();
        assert_eq!(cache.get("/a").unwrap_err(), Refusal::NotFound);
    }

    /// The one thing only the time to live catches: the path names another file while
    /// the old one lives on under another name.
    #[test]
    fn a_path_renamed_away_is_walked_again_after_the_time_to_live() {
        let (_d, root) = tree();
        let ttl = Duration::from_millis(50);
        let cache = OpenFiles::new(root.clone(), ttl, 8);
        let old = cache.get("/a").unwrap();
        std::fs::rename(root.join("a"), root.join("kept")).unwrap();
        std::fs::write(root.join("a"), b"new file").unwrap();
        let within = cache.get("/a").unwrap();
        assert_eq!(within.file.inode, old.file.inode, "still the cached inode");
        std::thread::sleep(ttl + Duration::from_millis(20));
        let after = cache.get("/a").unwrap();
        assert_ne!(after.file.inode, old.file.inode);
        assert_eq!(after.len, 8);
        // With a zero time to live nothing is kept.
        let off = OpenFiles::new(root, Duration::ZERO, 8);
        off.get("/a").unwrap();
        assert!(off.is_empty());
    }

    #[test]
    fn refusals_are_never_cached_and_the_size_is_bounded() {
        let (_d, root) = tree();
        for i in 0..5 {
            std::fs::write(root.join(format!("f{i}")), b"x").unwrap();
        }
        let cache = OpenFiles::new(root.clone(), LONG, 3);
        assert_eq!(cache.get("/../secret").unwrap_err(), Refusal::Traversal);
        assert_eq!(cache.get("/nope").unwrap_err(), Refusal::NotFound);
        assert!(cache.is_empty());
        std::fs::write(root.join("nope"), b"now here").unwrap();
        assert_eq!(cache.get("/nope").unwrap().len, 8);
        for i in 0..5 {
            cache.get(&format!("/f{i}")).unwrap();
            assert!(cache.len() <= 3, "{} entries", cache.len());
        }
    }
}
