//! Compressed traces (`.gz`, `.zst`, `.xz`) and standard input (`-`).
//!
//! A file's compression comes from its last suffix, and its format from the name without
//! it (`hm_0.csv.gz` is gzip-compressed CSV). Standard input has no name: its compression
//! is recognised from the first bytes (each of the three formats starts with a fixed magic
//! number), and its format must be given. Decoders stream: memory stays bounded whatever
//! the trace's size (zstd's window, xz's dictionary, a 32 KiB gzip window).
//!
//! Crates: `flate2` (pure-Rust miniz backend) for gzip, including files of several gzip
//! members; `zstd` (already used for oracleGeneral); `liblzma` (the maintained successor of
//! `xz2`, building the bundled xz sources with its `static` feature, so no system library is
//! needed) for xz, including multi-stream files.

use std::io::{self, Read};
use std::path::Path;

use crate::TraceError;

/// How a trace's bytes are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (`.gz`).
    Gzip,
    /// Zstandard (`.zst`).
    Zstd,
    /// xz (`.xz`).
    Xz,
}

const SUFFIXES: &[(&str, Compression)] = &[
    (".gz", Compression::Gzip),
    (".zst", Compression::Zstd),
    (".xz", Compression::Xz),
];

impl Compression {
    /// The compression a file name's last suffix names (case-insensitive), and the name
    /// without that suffix.
    pub fn from_path(path: &Path) -> (Compression, String) {
        let name = path.to_string_lossy().into_owned();
        let lower = name.to_ascii_lowercase();
        for &(suffix, c) in SUFFIXES {
            if lower.ends_with(suffix) {
                return (c, name[..name.len() - suffix.len()].to_string());
            }
        }
        (Compression::None, name)
    }

    /// The compression whose magic number `head` starts with.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    /// `src` decoded. Decoding errors surface later, from reads, as I/O errors that the
    /// readers report with the path and position.
    pub fn decoder<'a>(
        self,
        src: Box<dyn Read + Send + 'a>,
        path: &Path,
    ) -> Result<Box<dyn Read + Send + 'a>, TraceError> {
        Ok(match self {
            Compression::None => src,
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(src)),
            Compression::Zstd => {
                Box::new(zstd::stream::read::Decoder::new(src).map_err(|source| {
                    TraceError::Zstd {
                        path: path.to_path_buf(),
                        offset: 0,
                        source,
                    }
                })?)
            }
            Compression::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(src)),
        })
    }
}

/// Standard input with its compression recognised: the first bytes are read to sniff it,
/// then put back in front of the rest.
pub fn stdin_source() -> io::Result<(Compression, Box<dyn Read + Send>)> {
    let mut stdin = io::stdin();
    let mut head = Vec::with_capacity(6);
    while head.len() < 6 {
        let mut b = [0u8; 6];
        let want = 6 - head.len();
        match stdin.read(&mut b[..want]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let c = Compression::sniff(&head);
    Ok((c, Box::new(io::Cursor::new(head).chain(stdin))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn suffixes_and_magic() {
        let f = |s: &str| Compression::from_path(Path::new(s));
        assert_eq!(f("a/hm_0.csv.GZ"), (Compression::Gzip, "a/hm_0.csv".into()));
        assert_eq!(f("k.txt.zst"), (Compression::Zstd, "k.txt".into()));
        assert_eq!(f("k.txt.xz"), (Compression::Xz, "k.txt".into()));
        assert_eq!(f("k.txt"), (Compression::None, "k.txt".into()));
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8]), Compression::Gzip);
        assert_eq!(Compression::sniff(b"1\n2\n"), Compression::None);
        assert_eq!(Compression::sniff(&[]), Compression::None);
    }

    fn decode(c: Compression, bytes: Vec<u8>) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        c.decoder(Box::new(io::Cursor::new(bytes)), Path::new("t"))
            .unwrap()
            .read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn each_decoder_round_trips_and_sniffs_its_own_output() {
        let text = b"1\n2\nuser:3\n".repeat(100);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).unwrap();
        let gz = gz.finish().unwrap();
        let zst = zstd::encode_all(&text[..], 3).unwrap();
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(&text).unwrap();
        let xz = xz.finish().unwrap();
        for (c, bytes) in [
            (Compression::Gzip, gz),
            (Compression::Zstd, zst),
            (Compression::Xz, xz),
        ] {
            assert_eq!(Compression::sniff(&bytes), c);
            assert_eq!(decode(c, bytes.clone()).unwrap(), text, "{c:?}");
            // Corrupt or cut input is an error, not a panic.
            let cut = bytes[..bytes.len() / 2].to_vec();
            assert!(decode(c, cut).is_err(), "{c:?} truncated");
        }
    }
}
