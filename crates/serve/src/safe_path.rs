//! From a request's path to a file under the served root, or a refusal.
//!
//! Every segment is percent-decoded on its own, after splitting on `/`, so an encoded
//! slash (`%2f`) cannot join two segments into `..`; a decoded segment that is `..`, or
//! that holds `/`, `\` or NUL, is refused outright rather than normalised (a client asking
//! for it is either broken or probing). The joined path is then canonicalised and must
//! still lie under the canonical root: that is what catches symbolic links that lead out.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

use percent_encoding::percent_decode_str;

/// Why a path was refused, and so which status answers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not valid percent-encoding of UTF-8, or a forbidden byte: 400.
    BadEncoding,
    /// `..`, or a path that leaves the root (through a link): 403.
    Traversal,
    /// Nothing there, or not a regular file: 404.
    NotFound,
}

impl Refusal {
    /// The HTTP status for the refusal.
    pub fn status(self) -> u16 {
        match self {
            Refusal::BadEncoding => 400,
            Refusal::Traversal => 403,
            Refusal::NotFound => 404,
        }
    }
}

/// Resolve `request_path` (the path of the request target, still percent-encoded) under
/// `root`, which must already be canonical. Returns the canonical path of a regular file.
pub fn resolve(root: &Path, request_path: &str) -> Result<PathBuf, Refusal> {
    resolve_file(root, request_path).map(|(path, _)| path)
}

/// [`resolve`], with the metadata of the file found (so that a caller need not `stat`
/// it a second time).
pub fn resolve_file(root: &Path, request_path: &str) -> Result<(PathBuf, Metadata), Refusal> {
    if !request_path.starts_with('/') {
        return Err(Refusal::BadEncoding);
    }
    let mut joined = root.to_path_buf();
    for raw in request_path.split('/') {
        let segment = percent_decode_str(raw)
            .decode_utf8()
            .map_err(|_| Refusal::BadEncoding)?;
        if segment.contains(['/', '\\', '\0']) {
            return Err(Refusal::Traversal);
        }
        match segment.as_ref() {
            "" | "." => {}
            ".." => return Err(Refusal::Traversal),
            name => joined.push(name),
        }
    }
    let real = joined.canonicalize().map_err(|_| Refusal::NotFound)?;
    if !real.starts_with(root) {
        return Err(Refusal::Traversal);
    }
    match real.metadata() {
        Ok(m) if m.is_file() => Ok((real, m)),
        _ => Err(Refusal::NotFound),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.txt"), b"a").unwrap();
        std::fs::write(root.join("sub/b c.txt"), b"b").unwrap();
        std::fs::write(dir.path().join("secret"), b"s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("a.txt"), root.join("in")).unwrap();
        let root = root.canonicalize().unwrap();
        (dir, root)
    }

    #[test]
    fn files_under_the_root_resolve() {
        let (_d, root) = tree();
        assert_eq!(resolve(&root, "/a.txt").unwrap(), root.join("a.txt"));
        assert_eq!(resolve(&root, "//a.txt").unwrap(), root.join("a.txt"));
        assert_eq!(
            resolve(&root, "/./sub/b%20c.txt").unwrap(),
            root.join("sub/b c.txt")
        );
        // A link that stays inside the root is followed.
        assert_eq!(resolve(&root, "/in").unwrap(), root.join("a.txt"));
    }

    #[test]
    fn traversal_in_every_spelling_is_refused() {
        let (_d, root) = tree();
        for p in [
            "/../secret",
            "/sub/../../secret",
            "/%2e%2e/secret",
            "/%2E%2E/secret",
            "/sub/..%2f..%2fsecret",
            "/..%5csecret",
            "/a.txt%00",
            "/out",
        ] {
            assert_eq!(resolve(&root, p), Err(Refusal::Traversal), "{p}");
        }
        // `sub/..` back to the root is refused too: no `..` is ever interpreted.
        assert_eq!(resolve(&root, "/sub/../a.txt"), Err(Refusal::Traversal));
    }

    #[test]
    fn bad_encodings_and_missing_files() {
        let (_d, root) = tree();
        assert_eq!(resolve(&root, "/%ff"), Err(Refusal::BadEncoding));
        assert_eq!(resolve(&root, "a.txt"), Err(Refusal::BadEncoding));
        assert_eq!(resolve(&root, "/nope"), Err(Refusal::NotFound));
        assert_eq!(resolve(&root, "/sub"), Err(Refusal::NotFound));
        assert_eq!(resolve(&root, "/"), Err(Refusal::NotFound));
        assert_eq!(Refusal::Traversal.status(), 403);
    }
}
