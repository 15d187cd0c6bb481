//! oracleGeneral binary parser, record by record and in batches (24 bytes per record: no
//! amplification), within the heap bound of `bufcache_trace_fuzz`.
#![no_main]
use bufcache_trace_fuzz::{drain, run};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use trace::oracle::OracleGeneralReader;
use trace::{Request, TraceReader};

fuzz_target!(|data: &[u8]| {
    run(data.len(), || {
        drain(
            OracleGeneralReader::new(data, Path::new("fuzz.oracleGeneral")),
            data.len(),
        );
        let mut r = OracleGeneralReader::new(data, Path::new("fuzz.oracleGeneral"));
        let mut buf = [Request::default(); 7];
        while let Ok(n) = r.read_batch(&mut buf) {
            if n == 0 {
                break;
            }
        }
    });
});
