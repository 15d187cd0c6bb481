//! The experiment's figure specs from points made by hand: file names, titles, and each
//! series' points (the drawing itself is `report`'s, tested there).

use report::Series;
use serve::experiment::{figures, open_loop_summary, Point};

fn point(
    scheduler: &'static str,
    mode: &'static str,
    x: Option<f64>,
    rps: f64,
    mean: f64,
) -> Point {
    Point {
        workload: "uniform".into(),
        scheduler,
        mode,
        offered_rps: if mode == "open" { x } else { None },
        load: if mode == "open" {
            Some(x.unwrap() / 100.0)
        } else {
            None
        },
        mirror_ratio: if mode == "closed" { x } else { None },
        mirror_mib: x.map(|r| 80.0 * r),
        cache_mib: 80.0,
        set_mib: 200.0,
        disk_limit_mb_s: Some(50),
        cgroup_cache_mib: Some(80.0),
        throughput_rps: rps,
        throughput_mb_s: rps,
        mean_ms: mean,
        p50_ms: mean / 2.0,
        p99_ms: mean * 4.0,
        p999_ms: mean * 5.0,
        hits: 30,
        misses: 70,
        hit_mean_ms: 1.0,
        miss_mean_ms: 2.0,
        prediction_accuracy: None,
        false_hits: 0,
        false_misses: 0,
        joined: 0,
        prediction_accuracy_joined: None,
        device_reads: None,
        device_read_mb: None,
        ok: 100,
        failed: 0,
        round: None,
        mirror_policy: None,
        cgroup_poll: None,
        mirror_tracked: false,
        cgroup_refaults: None,
        cgroup_active_file_mib: None,
        cgroup_inactive_file_mib: None,
    }
}

fn series<'a>(s: &'a [Series], label: &str) -> &'a Series {
    s.iter()
        .find(|s| s.label.as_deref() == Some(label))
        .unwrap_or_else(|| panic!("no series {label}"))
}

#[test]
fn the_estimate_sweep_draws_the_mirror_against_level_lines() {
    let points = vec![
        point("fifo", "closed", None, 85.0, 370.0),
        point("mirror", "closed", Some(0.5), 86.0, 366.0),
        point("mirror", "closed", Some(1.0), 89.0, 352.0),
        point("mirror", "closed", Some(2.0), 99.0, 317.0),
        point("mirror-adaptive", "closed", Some(0.5), 84.0, 374.0),
        point("cachestat", "closed", None, 103.0, 306.0),
    ];
    let files = figures(&points);
    let names: Vec<&str> = files.iter().map(|f| f.file_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "uniform-by-estimate-throughput.svg",
            "uniform-by-estimate-response.svg"
        ]
    );
    let throughput = &files[0].figure;
    assert!(throughput.title.starts_with("uniform: throughput"));
    assert_eq!(
        series(&throughput.series, "mirror").points,
        [(0.5, 86.0), (1.0, 89.0), (2.0, 99.0)]
    );
    assert_eq!(
        series(&throughput.series, "adaptive mirror (from)").points,
        [(0.5, 84.0)]
    );
    // Schedulers without an estimate are level lines across the mirror's range.
    assert_eq!(
        series(&throughput.series, "fifo").points,
        [(0.5, 85.0), (2.0, 85.0)]
    );
    assert_eq!(
        series(&files[1].figure.series, "cachestat").points,
        [(0.5, 306.0), (2.0, 306.0)]
    );
    // No nowait or pool point: no such line.
    assert_eq!(throughput.series.len(), 4);
    for f in &files {
        report::render_svg(&f.figure).unwrap();
    }
}

#[test]
fn the_open_loop_draws_one_line_per_scheduler_by_offered_rate() {
    let mut points = vec![point("fifo", "closed", None, 100.0, 300.0)];
    for (rate, fifo_ms, mirror_ms) in [(30.0, 20.0, 18.0), (95.0, 900.0, 300.0)] {
        points.push(point("fifo", "open", Some(rate), rate, fifo_ms));
        points.push(point("mirror", "open", Some(rate), rate, mirror_ms));
    }
    // A run that served nothing cannot sit on a log axis: left out of those figures.
    points.push(point("pool", "open", Some(95.0), 0.0, 0.0));
    let files = figures(&points);
    let names: Vec<&str> = files.iter().map(|f| f.file_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "uniform-open-loop-mean.svg",
            "uniform-open-loop-p99.svg",
            "uniform-open-loop-hits.svg"
        ]
    );
    let mean = &files[0].figure;
    assert_eq!(
        series(&mean.series, "fifo").points,
        [(30.0, 20.0), (95.0, 900.0)]
    );
    assert_eq!(
        series(&files[1].figure.series, "mirror").points,
        [(30.0, 72.0), (95.0, 1200.0)]
    );
    assert!(mean
        .series
        .iter()
        .all(|s| s.label.as_deref() != Some("pool")));
    assert_eq!(
        series(&files[2].figure.series, "pool").points,
        [(95.0, 30.0)]
    );
    for f in &files {
        report::render_svg(&f.figure).unwrap();
    }
    let text = open_loop_summary(&points);
    assert!(
        text.contains("mirror vs fifo mean response time: 3.00x lower (target >= 2x: met)"),
        "{text}"
    );
    assert!(
        text.contains("1.11x lower (target >= 2x: missed)"),
        "{text}"
    );
}
