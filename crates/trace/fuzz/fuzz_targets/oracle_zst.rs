//! zstd-compressed oracleGeneral: arbitrary bytes as a compressed stream, and arbitrary
//! bytes compressed properly (so the record parser behind the decoder is reached too).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use trace::oracle::OracleGeneralReader;
use trace::{Request, TraceReader};

fn drain(bytes: &[u8]) {
    if let Ok(mut r) = OracleGeneralReader::new_zstd(bytes, Path::new("fuzz.oracleGeneral.zst")) {
        let mut req = Request::default();
        // Bounded: a tiny frame can claim a huge decompressed size.
        for _ in 0..(1 << 16) {
            if !matches!(r.read_into(&mut req), Ok(true)) {
                break;
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    drain(data);
    if let Ok(c) = zstd_compress(data) {
        drain(&c);
    }
});

fn zstd_compress(data: &[u8]) -> Result<Vec<u8>, trace::TraceError> {
    let mut w = trace::oracle::OracleGeneralWriter::new_zstd(Vec::new(), Path::new("c"), 1)?;
    // Re-encode the input as records through the crate's zstd writer, so the fuzzer also
    // produces valid frames whose records reach the parser behind the decoder.
    for chunk in data.chunks_exact(24) {
        let mut a = [0u8; 24];
        a.copy_from_slice(chunk);
        let req = Request {
            time: u32::from_le_bytes([a[0], a[1], a[2], a[3]]) as u64,
            key: u64::from_le_bytes([a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]]),
            size: u32::from_le_bytes([a[12], a[13], a[14], a[15]]),
            next_access: trace::NEVER,
            ..Request::default()
        };
        w.write(&req)?;
    }
    w.finish()
}
