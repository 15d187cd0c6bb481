//! CSV parser with detection and with every preset at a few page sizes.
//!
//! A block row asking for a huge request is split into pages: 1 TiB at 1-byte pages is
//! 2^40 requests from one short row. The reader keeps such a row as a page range, so its
//! memory does not depend on the size; `run` checks that (heap bound per input byte), and
//! `drain` stops after a budget of requests per input byte so that one such input does not
//! run for hours. The budget hides no memory amplification: see `bufcache_trace_fuzz`.
#![no_main]
use bufcache_trace_fuzz::{drain, run};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use trace::csvtrace::{CsvMapping, CsvReader};

fuzz_target!(|data: &[u8]| {
    run(data.len(), || {
        let (sel, body) = match data.split_first() {
            Some((s, b)) => (*s, b),
            None => (0, data),
        };
        let mapping = match sel % 4 {
            0 => None,
            1 => Some(CsvMapping::cloudphysics()),
            2 => Some(CsvMapping::msr()),
            _ => Some(CsvMapping::keyed()),
        };
        let page = [1u32, 512, 4096, 65536][(sel as usize >> 2) % 4];
        if let Ok(r) = CsvReader::new(body, Path::new("fuzz.csv"), mapping.as_ref(), page) {
            drain(r, data.len());
        }
    });
});
