//! Two pools under one memory budget: a scan and a hot index (`pool::budget::IndexScan`).
//! Prints, for each arbiter, how often the index refaulted after the warm-up, how much of
//! it stayed resident, and how often the scan asked for (and got) an index page.
//!
//! ```text
//! cargo run -p bufcache-pool --release --example budget_index_scan
//! ```

use pool::budget::{ArbiterSpec, IndexScan, Kind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scenario = IndexScan::default();
    println!(
        "budget {} pages; index {} pages swept every {} rounds; scan {} new pages a round; {} rounds",
        scenario.budget_pages,
        scenario.index_pages,
        scenario.sweep_every,
        scenario.scan_per_round,
        scenario.rounds
    );
    println!(
        "{:<12} {:<7} {:>13} {:>15} {:>10} {:>8}",
        "arbiter", "index", "index misses", "index resident", "scan asked", "scan got"
    );
    let runs = [
        ("sprite", Kind::Memory),
        ("penalty:60", Kind::Memory),
        ("sprite", Kind::File),
        ("refault", Kind::File),
        ("balance", Kind::File),
    ];
    for (name, kind) in runs {
        let spec: ArbiterSpec = name.parse()?;
        let o = scenario.run(&spec, kind)?;
        println!(
            "{:<12} {:<7} {:>13} {:>15} {:>10} {:>8}",
            name,
            format!("{kind:?}").to_lowercase(),
            o.index_misses,
            format!("{}/{}", o.index_resident, scenario.index_pages),
            o.scan_asked,
            o.scan_got
        );
    }
    Ok(())
}
