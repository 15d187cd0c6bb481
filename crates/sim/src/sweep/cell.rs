//! What names one result: a [`CellKey`], and the pieces it is made of that need work (a
//! trace's content digest, a policy's canonical spelling).
//!
//! A cell is keyed by what decides its numbers, not by where the trace happens to lie:
//! a trace moved or renamed keeps its cells, a trace rewritten gets new ones. Policies are
//! keyed in canonical form (every parameter, defaults included, in the registry's order),
//! so `s3fifo` and `s3fifo:small=0.1` name the same cell when 0.1 is the default.

use std::io::Read;
use std::path::Path;

use policy::PolicySpec;
use xxhash_rust::xxh3::Xxh3;

use super::SweepError;

/// The bufcache version written in every row: a new version may change results, so its
/// cells are computed again.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The content digest of a file: XXH3-128 of its bytes as 32 hex digits, read in 1 MiB
/// pieces (a trace of any size costs one pass and constant memory).
pub fn file_digest(path: &Path) -> Result<String, SweepError> {
    let io = |source| SweepError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut hasher = Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:032x}", hasher.digest128()))
}

/// `spec` with every registered parameter in the registry's order, defaults filled in
/// (the last value given wins, as when the policy is built). Unknown names are left as
/// written: [`SweepSpec::resolve`](super::SweepSpec::resolve) has refused them already.
pub fn canonical_policy(spec: &PolicySpec) -> String {
    let Some(info) = policy::registry::info(&spec.name) else {
        return spec.label();
    };
    let params = info
        .params
        .iter()
        .map(|p| {
            let value = spec
                .params
                .iter()
                .rev()
                .find(|(name, _)| name == p.name)
                .map_or(p.default, |(_, v)| v.as_str());
            (p.name.to_string(), value.to_string())
        })
        .collect();
    PolicySpec {
        name: spec.name.clone(),
        params,
    }
    .label()
}

/// Everything that decides one cell's numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellKey {
    /// The trace's [`file_digest`].
    pub trace_digest: String,
    /// `units` or `bytes`.
    pub mode: String,
    /// Page size the trace was read with (it splits block requests).
    pub page_size: u32,
    /// Warm-up as written.
    pub warmup: String,
    /// The policy in [`canonical_policy`] form.
    pub policy: String,
    /// The size as written.
    pub size: String,
    /// Root seed.
    pub seed: u64,
    /// [`VERSION`].
    pub version: String,
}

/// `units` in unit mode, `bytes` otherwise (the `mode` column).
pub fn mode_name(ignore_size: bool) -> &'static str {
    if ignore_size {
        "units"
    } else {
        "bytes"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_with_its_defaults_written_out_is_the_same_cell() {
        let bare = PolicySpec::parse("s3fifo").unwrap();
        let info = policy::registry::info("s3fifo").unwrap();
        let first = &info.params[0];
        let explicit =
            PolicySpec::parse(&format!("s3fifo:{}={}", first.name, first.default)).unwrap();
        assert_eq!(canonical_policy(&bare), canonical_policy(&explicit));
        let other = PolicySpec::parse(&format!("s3fifo:{}=0.37", first.name)).unwrap();
        assert_ne!(canonical_policy(&bare), canonical_policy(&other));
        assert_eq!(canonical_policy(&PolicySpec::parse("lru").unwrap()), "lru");
    }

    #[test]
    fn the_digest_is_xxh3_128_of_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        // Larger than one read, so the streaming is exercised.
        let bytes: Vec<u8> = (0..(3 << 20) + 17).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let expected = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes));
        assert_eq!(file_digest(&path).unwrap(), expected);
    }
}
