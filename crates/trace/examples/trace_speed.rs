//! Measures reader and generator throughput (numbers are printed, never asserted).
//!
//! `cargo run -p bufcache-trace --release --example trace_speed -- [records] [dir]`
//! writes a synthetic oracleGeneral file of `records` records (default 10M) into `dir`
//! (default the system temp dir), reads it twice (the second read is from the page
//! cache), and times Zipf generation of 20M samples over 1M keys.

use std::path::PathBuf;
use std::time::Instant;

use trace::synth::{generate, Workload};
use trace::{open, write_trace, Format, ReadOptions, Request, TraceReader};

fn main() -> Result<(), trace::TraceError> {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let dir = args
        .get(2)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);

    let w: Workload = "zipf(keys=1000000,alpha=1.0)".parse()?;
    let t = Instant::now();
    let mut sum = 0u64;
    for r in generate(&w, 20_000_000, 1) {
        sum = sum.wrapping_add(r.key);
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "zipf: 20M samples over 1M keys in {dt:.3} s ({:.1} M/s) [checksum {sum}]",
        20.0 / dt
    );

    for (fmt, name) in [
        (Format::OracleGeneral, "speed.oracleGeneral"),
        (Format::OracleGeneralZst, "speed.oracleGeneral.zst"),
    ] {
        let path = dir.join(name);
        let t = Instant::now();
        write_trace(&path, fmt, generate(&w, n, 2).map(Ok))?;
        println!(
            "{fmt}: wrote {n} records in {:.3} s",
            t.elapsed().as_secs_f64()
        );
        for pass in 0..2 {
            let mut r = open(&path, None, &ReadOptions::default())?;
            let mut req = Request::default();
            let t = Instant::now();
            let mut count = 0u64;
            let mut keys = 0u64;
            while r.read_into(&mut req)? {
                count += 1;
                keys = keys.wrapping_add(req.key);
            }
            let dt = t.elapsed().as_secs_f64();
            println!("{fmt} pass {pass}: read_into {count} records in {dt:.3} s = {:.1} M records/s [checksum {keys}]", count as f64 / dt / 1e6);
            let mut r = open(&path, None, &ReadOptions::default())?;
            let mut buf = vec![Request::default(); 4096];
            let t = Instant::now();
            let mut count = 0u64;
            loop {
                let k = r.read_batch(&mut buf)?;
                if k == 0 {
                    break;
                }
                count += k as u64;
            }
            let dt = t.elapsed().as_secs_f64();
            println!(
                "{fmt} pass {pass}: read_batch {count} records in {dt:.3} s = {:.1} M records/s",
                count as f64 / dt / 1e6
            );
        }
        std::fs::remove_file(&path).map_err(|source| trace::TraceError::Io { path, source })?;
    }
    Ok(())
}
