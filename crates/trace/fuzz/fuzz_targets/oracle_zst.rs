//! zstd-compressed oracleGeneral: arbitrary bytes as a compressed stream, and arbitrary
//! bytes compressed properly (so the record parser behind the decoder is reached too).
//!
//! A tiny frame can decompress to millions of records (an RLE block is 128 KiB from 4
//! bytes). The decoder streams within the frame's window (at most 128 MiB, zstd's default
//! limit, whatever size the frame claims), so memory stays bounded; the Rust side is
//! checked by `run`, zstd's C allocations by libFuzzer's `-rss_limit_mb`. `drain` stops
//! after a budget of records per input byte (see `bufcache_trace_fuzz` for why that hides
//! no memory amplification).
#![no_main]
use bufcache_trace_fuzz::{drain, run};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use trace::oracle::OracleGeneralReader;
use trace::Request;

fn drain_zstd(bytes: &[u8], input_len: usize) {
    if let Ok(r) = OracleGeneralReader::new_zstd(bytes, Path::new("fuzz.oracleGeneral.zst")) {
        drain(r, input_len);
    }
}

fuzz_target!(|data: &[u8]| {
    run(data.len(), || {
        drain_zstd(data, data.len());
        if let Ok(c) = zstd_compress(data) {
            drain_zstd(&c, data.len());
        }
    });
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
