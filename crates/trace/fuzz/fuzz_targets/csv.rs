//! CSV parser with detection and with every preset at a few page sizes. Page splitting of a
//! huge block request is bounded by `take` so a valid but enormous row is not a hang.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use trace::csvtrace::{CsvMapping, CsvReader};
use trace::Requests;

fuzz_target!(|data: &[u8]| {
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
        for item in Requests::new(r).take(1 << 16) {
            if item.is_err() {
                break;
            }
        }
    }
});
