//! Text parser: any bytes give requests then the end or one typed error, never a panic,
//! within the heap bound of `bufcache_trace_fuzz` (one request per line: no amplification).
#![no_main]
use bufcache_trace_fuzz::{drain, run};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use trace::text::TextReader;

fuzz_target!(|data: &[u8]| {
    run(data.len(), || {
        let hash = data.first().is_some_and(|b| b & 1 == 1);
        let r = TextReader::new(data, Path::new("fuzz.txt"), 4096).hash_strings(hash);
        drain(r, data.len());
    });
});
