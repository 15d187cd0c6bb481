//! The file sets the load generator asks for, and the command that writes them.
//!
//! * `uniform`: Burnett's first workload, 200 files of 1 MiB, each equally likely.
//! * `surge`: SURGE-like (Barford & Crovella 1998, as used in the thesis): 12,000 files,
//!   popularity Zipf (s = 1) over a seeded random order of the files, so size and
//!   popularity are independent; sizes heavy-tailed: with probability 0.93 lognormal
//!   (mu 9.0, sigma 1.1: median 8.1 KB) and otherwise Pareto (scale 30 KB, shape 1.2),
//!   capped at 1 MiB. The mean is about 21-22 KB (252 MiB in all with seed 1); SURGE's
//!   own body (mu 9.357, sigma 1.318) would give 28 KB, above the thesis' 21 KB.
//!
//! Files hold seeded random bytes, never holes: reading a hole costs no I/O, so misses
//! would look like hits. `manifest.json` in the directory lists the files in popularity
//! order and how to draw them; the load generator reads only the manifest.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::{Rng, RngCore, SeedableRng};
use rand_distr::{Distribution, LogNormal, Pareto};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use trace::synth::Zipf;

use crate::ServeError;

/// A workload's file set, as asked for on the command line.
#[derive(Clone, Debug, PartialEq)]
pub enum FileSetSpec {
    /// `files` files of `size_bytes` each, drawn uniformly.
    Uniform {
        /// How many files.
        files: usize,
        /// Each file's size.
        size_bytes: u64,
    },
    /// SURGE-like: Zipf popularity, heavy-tailed sizes.
    Surge {
        /// How many files.
        files: usize,
    },
}

impl FileSetSpec {
    /// Burnett's uniform workload: 200 files of 1 MiB.
    pub fn uniform_default() -> Self {
        FileSetSpec::Uniform {
            files: 200,
            size_bytes: 1 << 20,
        }
    }

    /// The SURGE-like workload at the thesis' scale: 12,000 files.
    pub fn surge_default() -> Self {
        FileSetSpec::Surge { files: 12_000 }
    }

    /// Parse `uniform`, `uniform:FILESxSIZE` (e.g. `uniform:200x1M`), `surge` or
    /// `surge:FILES`.
    pub fn parse(text: &str) -> Result<Self, ServeError> {
        let bad = |why: &str| ServeError::config("workload", format!("{text:?}: {why}"));
        let (kind, arg) = match text.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (text, None),
        };
        let spec = match (kind, arg) {
            ("uniform", None) => Self::uniform_default(),
            ("uniform", Some(a)) => {
                let (n, size) = a
                    .split_once('x')
                    .ok_or_else(|| bad("expected FILESxSIZE"))?;
                FileSetSpec::Uniform {
                    files: n.parse().map_err(|_| bad("FILES is not a number"))?,
                    size_bytes: crate::config::parse_size(size)?,
                }
            }
            ("surge", None) => Self::surge_default(),
            ("surge", Some(n)) => FileSetSpec::Surge {
                files: n.parse().map_err(|_| bad("FILES is not a number"))?,
            },
            _ => return Err(bad("expected uniform[:FILESxSIZE] or surge[:FILES]")),
        };
        match spec {
            FileSetSpec::Uniform { files: 0, .. } | FileSetSpec::Surge { files: 0 } => {
                Err(bad("needs at least one file"))
            }
            _ => Ok(spec),
        }
    }
}

/// How the load generator draws files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Popularity {
    /// Every file equally likely.
    Uniform,
    /// The file at rank k (0-based, manifest order) with probability ∝ (k+1)^-s.
    Zipf {
        /// The exponent.
        s: f64,
    },
}

/// One file of a set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Path relative to the set's directory, with `/` separators (also the URL path).
    pub name: String,
    /// Size in bytes.
    pub size_bytes: u64,
}

/// `manifest.json`: what a file set holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// `uniform` or `surge`.
    pub workload: String,
    /// The seed the set was made with.
    pub seed: u64,
    /// How files are drawn.
    pub popularity: Popularity,
    /// The files, most popular first (for `uniform` all are equal).
    pub files: Vec<FileEntry>,
}

/// The manifest's file name inside a set's directory.
pub const MANIFEST: &str = "manifest.json";

impl Manifest {
    /// The files' total size.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size_bytes).sum()
    }

    /// Read `DIR/manifest.json`.
    pub fn load(dir: &Path) -> Result<Self, ServeError> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(ServeError::io("reading", &path))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| ServeError::Parse {
            path: path.clone(),
            why: e.to_string(),
        })?;
        if m.files.is_empty() {
            return Err(ServeError::Parse {
                path,
                why: "the manifest lists no files".into(),
            });
        }
        Ok(m)
    }

    /// Paths of the files on disk under `dir`.
    pub fn paths(&self, dir: &Path) -> Vec<PathBuf> {
        self.files.iter().map(|f| dir.join(&f.name)).collect()
    }
}

/// The manifest of `spec` made with `seed`, without writing anything.
pub fn plan(spec: &FileSetSpec, seed: u64) -> Manifest {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    match *spec {
        FileSetSpec::Uniform { files, size_bytes } => Manifest {
            workload: "uniform".into(),
            seed,
            popularity: Popularity::Uniform,
            files: (0..files)
                .map(|i| FileEntry {
                    name: format!("uniform/f{i:05}.dat"),
                    size_bytes,
                })
                .collect(),
        },
        FileSetSpec::Surge { files } => {
            // Constant, valid parameters: these constructors cannot fail.
            let body = LogNormal::new(9.0, 1.1).expect("valid lognormal");
            let tail = Pareto::new(30_000.0, 1.2).expect("valid pareto");
            let mut entries: Vec<FileEntry> = (0..files)
                .map(|i| {
                    let size = if rng.gen_bool(0.93) {
                        body.sample(&mut rng)
                    } else {
                        tail.sample(&mut rng)
                    };
                    FileEntry {
                        name: format!("surge/{:03}/s{i:05}.dat", i / 1000),
                        size_bytes: (size as u64).clamp(64, 1 << 20),
                    }
                })
                .collect();
            // Popularity rank independent of size: a seeded shuffle (Fisher-Yates).
            for i in (1..entries.len()).rev() {
                let j = rng.gen_range(0..=i);
                entries.swap(i, j);
            }
            Manifest {
                workload: "surge".into(),
                seed,
                popularity: Popularity::Zipf { s: 1.0 },
                files: entries,
            }
        }
    }
}

/// Write the files of `spec` (seeded random bytes) and the manifest into `dir`, and
/// flush them to disk so that a later run starts with nothing dirty.
pub fn make_files(dir: &Path, spec: &FileSetSpec, seed: u64) -> Result<Manifest, ServeError> {
    let manifest = plan(spec, seed);
    let mut data_rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5EED_DA7A);
    let mut chunk = vec![0u8; 1 << 16];
    for (entry, path) in manifest.files.iter().zip(manifest.paths(dir)) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(ServeError::io("creating", parent))?;
        }
        let mut f = std::fs::File::create(&path).map_err(ServeError::io("creating", &path))?;
        let mut left = entry.size_bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            data_rng.fill_bytes(&mut chunk[..n]);
            f.write_all(&chunk[..n])
                .map_err(ServeError::io("writing", &path))?;
            left -= n as u64;
        }
        f.sync_all().map_err(ServeError::io("syncing", &path))?;
    }
    let path = dir.join(MANIFEST);
    let json = serde_json::to_string_pretty(&manifest).expect("a manifest serialises");
    std::fs::write(&path, json).map_err(ServeError::io("writing", &path))?;
    Ok(manifest)
}

/// Draws files from a manifest.
#[derive(Debug)]
pub struct Sampler {
    files: usize,
    zipf: Option<Zipf>,
}

impl Sampler {
    /// A sampler for `manifest`.
    pub fn new(manifest: &Manifest) -> Result<Self, ServeError> {
        let files = manifest.files.len();
        let zipf = match manifest.popularity {
            Popularity::Uniform => None,
            Popularity::Zipf { s } => Some(Zipf::new(files as u64, s).ok_or_else(|| {
                ServeError::config("popularity", format!("zipf s = {s} is not positive"))
            })?),
        };
        Ok(Sampler { files, zipf })
    }

    /// The index of the next file.
    pub fn next(&self, rng: &mut impl RngCore) -> usize {
        match &self.zipf {
            None => rng.gen_range(0..self.files),
            Some(z) => (z.sample(rng) - 1) as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(
            FileSetSpec::parse("uniform").unwrap(),
            FileSetSpec::uniform_default()
        );
        assert_eq!(
            FileSetSpec::parse("uniform:10x4K").unwrap(),
            FileSetSpec::Uniform {
                files: 10,
                size_bytes: 4096
            }
        );
        assert_eq!(
            FileSetSpec::parse("surge:50").unwrap(),
            FileSetSpec::Surge { files: 50 }
        );
        for bad in ["uniform:0x1M", "uniform:10", "surge:x", "zipf", "surge:0"] {
            assert!(FileSetSpec::parse(bad).is_err(), "{bad}");
        }
    }

    /// The SURGE-like set at full scale: 12,000 files, mean size near the thesis' 21 KB,
    /// heavy-tailed (the mean well above the median), and the same for the same seed.
    #[test]
    fn surge_sizes_are_heavy_tailed_with_a_mean_near_21_kb() {
        let m = plan(&FileSetSpec::surge_default(), 1);
        assert_eq!(m.files.len(), 12_000);
        let mean = m.total_bytes() as f64 / 12_000.0;
        assert!((19_000.0..25_000.0).contains(&mean), "mean {mean}");
        let mut sizes: Vec<u64> = m.files.iter().map(|f| f.size_bytes).collect();
        sizes.sort_unstable();
        let median = sizes[6_000] as f64;
        assert!(mean > 1.8 * median, "mean {mean} median {median}");
        assert_eq!(m, plan(&FileSetSpec::surge_default(), 1));
        assert_ne!(m, plan(&FileSetSpec::surge_default(), 2));
    }

    #[test]
    fn files_are_written_with_their_sizes_and_read_back_by_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let m = make_files(dir.path(), &FileSetSpec::parse("surge:30").unwrap(), 7).unwrap();
        assert_eq!(Manifest::load(dir.path()).unwrap(), m);
        for (e, p) in m.files.iter().zip(m.paths(dir.path())) {
            let data = std::fs::read(&p).unwrap();
            assert_eq!(data.len() as u64, e.size_bytes);
            // Random bytes, not a hole of zeros.
            assert!(data.iter().any(|&b| b != 0));
        }
    }

    /// Zipf draws favour the first files of the manifest; uniform draws cover all.
    #[test]
    fn samplers_follow_the_popularity() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let zipf = plan(&FileSetSpec::Surge { files: 100 }, 1);
        let s = Sampler::new(&zipf).unwrap();
        let mut counts = [0u32; 100];
        for _ in 0..20_000 {
            counts[s.next(&mut rng)] += 1;
        }
        // P(rank 1) / P(rank 10) = 10 under s = 1.
        let ratio = f64::from(counts[0]) / f64::from(counts[9]);
        assert!((7.0..14.0).contains(&ratio), "ratio {ratio}");
        let uni = Sampler::new(&plan(&FileSetSpec::parse("uniform:5x1K").unwrap(), 1)).unwrap();
        let mut seen = [false; 5];
        for _ in 0..200 {
            seen[uni.next(&mut rng)] = true;
        }
        assert!(seen.iter().all(|&x| x));
    }
}
