//! oracleGeneral binary parser, record by record and in batches.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use trace::oracle::OracleGeneralReader;
use trace::{Request, TraceReader};

fuzz_target!(|data: &[u8]| {
    let mut r = OracleGeneralReader::new(data, Path::new("fuzz.oracleGeneral"));
    let mut req = Request::default();
    while let Ok(true) = r.read_into(&mut req) {}
    let mut r = OracleGeneralReader::new(data, Path::new("fuzz.oracleGeneral"));
    let mut buf = [Request::default(); 7];
    while let Ok(n) = r.read_batch(&mut buf) {
        if n == 0 {
            break;
        }
    }
});
