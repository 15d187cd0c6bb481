//! Where an output file goes, decided the way a Unix tool decides it.
//!
//! Every file bufcache writes (traces, tables, figures) goes through [`Output`], so that
//! one rule holds everywhere:
//!
//! * `-` is standard output.
//! * A regular file, or a path that does not exist yet, is written *atomically*: into a
//!   temporary file in the same directory (so the rename stays on one file system), synced,
//!   then renamed over the path. A reader never sees half a file, and a failed write leaves
//!   the old file untouched.
//! * A symbolic link is followed: its final target is replaced atomically as above, and the
//!   link itself stays a link (replacing the link would silently cut it from its target).
//! * Anything else — a FIFO, a character or block device (`/dev/null`, `/dev/full`,
//!   `/dev/stdout`), a socket — is written *through*, opened for writing in place: renaming
//!   over it would turn `/dev/full` into a regular file when run as root, and a reader
//!   waiting on a FIFO would never get the bytes. Such writes cannot be atomic.
//!
//!
//! Every temporary file in progress is listed in one process-wide registry, so that a
//! program interrupted by SIGINT or SIGTERM can remove them before it exits
//! ([`remove_unfinished_outputs`]; the `bufcache` binary does so from its signal thread).
//! A library cannot choose how its host reacts to signals, so this crate installs no
//! handler itself.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Temporary files of atomic writes not yet renamed or removed.
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn unfinished() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the list was held leaves it valid (pushes and retains are whole).
    UNFINISHED.lock().unwrap_or_else(PoisonError::into_inner)
}

fn forget(tmp: &Path) {
    unfinished().retain(|p| p != tmp);
}

/// Held while a process exits after an interrupt: no atomic write can start a new
/// temporary file while it lives.
#[must_use = "exit while holding it, or new temporary files may appear"]
pub struct Frozen(#[allow(dead_code)] MutexGuard<'static, Vec<PathBuf>>);

/// Removes the temporary file of every atomic write in progress and returns a guard that
/// keeps new ones from being started: call it from a signal-handling thread, then exit
/// while holding the guard. The interrupted writes' targets keep their old contents.
pub fn remove_unfinished_outputs() -> Frozen {
    let mut list = unfinished();
    for tmp in list.drain(..) {
        let _ = std::fs::remove_file(tmp);
    }
    Frozen(list)
}

/// An output being written; [`Output::commit`] finishes it, dropping it uncommitted
/// removes any temporary file.
#[derive(Debug)]
pub struct Output {
    sink: Sink,
    /// For the atomic case: (temporary path, final path), cleared once committed.
    rename: Option<(PathBuf, PathBuf)>,
}

#[derive(Debug)]
enum Sink {
    Stdout(io::Stdout),
    File(File),
}

impl Output {
    /// Open `path` for writing by the rules in the module documentation.
    pub fn create(path: &Path) -> io::Result<Output> {
        if path.as_os_str() == "-" {
            return Ok(Output {
                sink: Sink::Stdout(io::stdout()),
                rename: None,
            });
        }
        match std::fs::metadata(path) {
            // metadata follows symlinks: this is the kind of the final target
            Ok(meta) if !meta.is_file() => {
                if meta.is_dir() {
                    return Err(io::Error::new(
                        io::ErrorKind::IsADirectory,
                        format!("{}: is a directory", path.display()),
                    ));
                }
                let file = File::options().write(true).open(path)?;
                Ok(Output {
                    sink: Sink::File(file),
                    rename: None,
                })
            }
            Ok(_) => Self::atomic(&std::fs::canonicalize(path)?),
            // a new file, or one below something that is not a directory (said as such)
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Self::atomic(path)
            }
            Err(e) => Err(e),
        }
    }

    fn atomic(target: &Path) -> io::Result<Output> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{}: not a directory", dir.display()),
            ));
        }
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "output".into());
        let tmp = dir.join(format!(
            ".{name}.tmp-{}-{}",
            std::process::id(),
            TMP_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        // Listed before it exists, so that an interrupt never misses it.
        unfinished().push(tmp.clone());
        let file = match File::options().write(true).create_new(true).open(&tmp) {
            Ok(f) => f,
            Err(e) => {
                forget(&tmp);
                return Err(e);
            }
        };
        Ok(Output {
            sink: Sink::File(file),
            rename: Some((tmp, target.to_path_buf())),
        })
    }

    /// Whether the bytes go to a temporary file renamed into place at the end.
    pub fn is_atomic(&self) -> bool {
        self.rename.is_some()
    }

    /// Finish: flush, and for an atomic write sync and rename into place.
    pub fn commit(mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Stdout(s) => match s.flush() {
                // `bufcache ... -o - | head` closing the pipe early is not an error
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                r => r,
            },
            Sink::File(f) => {
                f.flush()?;
                if let Some((tmp, target)) = self.rename.take() {
                    let synced = f.sync_all().and_then(|()| std::fs::rename(&tmp, &target));
                    if synced.is_err() {
                        let _ = std::fs::remove_file(&tmp);
                    }
                    forget(&tmp);
                    synced
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.sink {
            Sink::Stdout(s) => s.write(buf),
            Sink::File(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Stdout(s) => s.flush(),
            Sink::File(f) => f.flush(),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.rename.take() {
            let _ = std::fs::remove_file(&tmp);
            forget(&tmp);
        }
    }
}

/// Write `bytes` to `path` by the rules of [`Output`].
pub fn write_output(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut out = Output::create(path)?;
    out.write_all(bytes)?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect()
    }

    #[test]
    fn regular_and_new_files_are_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_output(&p, b"one").unwrap();
        write_output(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert!(leftovers(dir.path()).is_empty());
        // dropped without commit: the old content stays and no temporary file is left
        let mut out = Output::create(&p).unwrap();
        out.write_all(b"half").unwrap();
        drop(out);
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn unfinished_outputs_are_listed_until_committed_or_dropped() {
        // Only this test's own paths are looked at: other tests write in parallel. Removal
        // itself is tested on a real interrupt (crates/cli/tests/interrupt.rs), since it
        // takes every temporary file of the process.
        let dir = tempfile::tempdir().unwrap();
        let mine = |dir: &Path| unfinished().iter().filter(|t| t.starts_with(dir)).count();
        let p = dir.path().join("b.csv");
        let out = Output::create(&p).unwrap();
        assert_eq!(mine(dir.path()), 1);
        out.commit().unwrap();
        assert_eq!(mine(dir.path()), 0);
        let out = Output::create(&p).unwrap();
        assert_eq!(mine(dir.path()), 1);
        drop(out);
        assert_eq!(mine(dir.path()), 0);
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_symlink_stays_a_link_and_its_target_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&target, b"old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_output(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn dev_full_gives_an_error_and_stays_a_device() {
        use std::os::unix::fs::FileTypeExt;
        const ENOSPC: i32 = 28;
        let full = Path::new("/dev/full");
        assert!(!Output::create(full).unwrap().is_atomic());
        let err = write_output(full, &[0u8; 1 << 16]).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(ENOSPC), "{err}");
        let meta = std::fs::symlink_metadata(full).unwrap();
        assert!(meta.file_type().is_char_device());
    }

    #[test]
    fn a_fifo_receives_the_bytes_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_output(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_missing_directory_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        let err = Output::create(&file.join("out.csv")).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
        let err = Output::create(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
    }
}
