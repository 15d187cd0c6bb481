//! Text parser: any bytes give requests then the end or one typed error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use trace::text::TextReader;
use trace::Requests;

fuzz_target!(|data: &[u8]| {
    let hash = data.first().is_some_and(|b| b & 1 == 1);
    let r = TextReader::new(data, Path::new("fuzz.txt"), 4096).hash_strings(hash);
    for item in Requests::new(r) {
        if item.is_err() {
            break;
        }
    }
});
