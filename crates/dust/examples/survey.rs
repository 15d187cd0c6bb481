//! Print Dust's features and verdict for many simulated policies, sizes and size hints:
//! the table the classifier's thresholds in `docs/dust.md` were read from.
//!
//! `cargo run --release -p bufcache-dust --example survey -- [ITERATIONS] [POLICY,...] [PAGES,...] [HINTS,...] [SEED]`

use dust::{fingerprint, DustConfig, SimTarget};
use rayon::prelude::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let iterations: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let policies: Vec<String> = args
        .get(2)
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_else(|| {
            "fifo,lru,lfu,random,sfifo,clock,twoq,lruk,arc,lirs,s3fifo,sieve,wtinylfu,clockpro,car,linux"
                .split(',')
                .map(String::from)
                .collect()
        });
    let sizes: Vec<u64> = args
        .get(3)
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1000, 20000]);
    let hints: Vec<f64> = args
        .get(4)
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![0.8, 0.9, 1.0, 1.1, 1.2]);
    let seed: u64 = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(5);
    let mut jobs = Vec::new();
    for p in &policies {
        for &s in &sizes {
            for &h in &hints {
                jobs.push((p.clone(), s, h));
            }
        }
    }
    let rows: Vec<String> = jobs
        .par_iter()
        .map(|(p, s, h)| {
            let mut t = SimTarget::parse(&format!("sim:{p}:pages={s}"), seed ^ 1).unwrap();
            let cfg = DustConfig {
                iterations,
                seed,
                size_hint: Some((*s as f64 * h).round() as u64),
                ..DustConfig::default()
            };
            let r = fingerprint(&mut t, &cfg).unwrap();
            let f = &r.features;
            let prof = |v: &[f64]| v.iter().map(|x| format!("{:.0}", x * 9.0)).collect::<String>();
            format!(
                "{p:>8} {s:>6} {h:>4} | ST surv {:.2} I {:.2} R {:.2} F {:.2} mix {:.2} [{}] | UB surv {:.2} I {:.2} R {:.2} F {:.2} mix {:.2} [{}] shift {:.2} | hot {:.2} cold {:.2} | {} {:.2} {:?}",
                f.short_term.survival, f.short_term.initial, f.short_term.recency, f.short_term.frequency, f.short_term.mixedness, prof(&f.short_term.profile),
                f.use_bits.survival, f.use_bits.initial, f.use_bits.recency, f.use_bits.frequency, f.use_bits.mixedness, prof(&f.use_bits.profile),
                f.use_bit_shift, f.hot_survival, f.cold_survival,
                r.verdict.verdict, r.verdict.confidence, r.verdict.attributes.iter().map(|a| a.name()).collect::<Vec<_>>()
            )
        })
        .collect();
    for r in rows {
        println!("{r}");
    }
}
