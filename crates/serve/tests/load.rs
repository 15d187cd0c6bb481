//! The load generator against a running server, bounded to a few hundred requests.

use crate::common;

use std::time::Duration;

use serve::load::fileset::{make_files, FileSetSpec};
use serve::load::{run, LoadConfig, LoopMode};
use serve::{MirrorBanking, SchedulerChoice};

fn load_config(addr: std::net::SocketAddr, dir: &std::path::Path, mode: LoopMode) -> LoadConfig {
    LoadConfig {
        target: addr,
        manifest: serve::load::fileset::Manifest::load(dir).unwrap(),
        mode,
        connections: 4,
        requests: 200,
        warmup_requests: 20,
        max_duration: Duration::from_secs(120),
        seed: 5,
        device_path: Some(dir.to_path_buf()),
        progress: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_and_open_loops_count_every_request() {
    let dir = tempfile::tempdir().unwrap();
    make_files(dir.path(), &FileSetSpec::parse("surge:40").unwrap(), 3).unwrap();
    let mirror = SchedulerChoice::Mirror {
        policy: "clock".into(),
        size_bytes: 64 << 20,
        bank: MirrorBanking::Sizes,
    };
    let mut config = common::config(dir.path(), mirror);
    config.report_actual = true;
    let server = serve::serve(config).await.unwrap();
    let addr = server.local_addr();

    let closed = run(&load_config(addr, dir.path(), LoopMode::Closed))
        .await
        .unwrap();
    assert_eq!((closed.ok, closed.errors, closed.rejected), (200, 0, 0));
    assert_eq!(closed.latency.count, 200);
    assert!(closed.throughput_rps > 0.0 && closed.throughput_mb_s > 0.0);
    // cachestat is on this kernel, so every response carries its ground truth and
    // splits into hits and misses; a kernel without it leaves the split to predictions.
    assert_eq!(closed.latency_hit.count + closed.latency_miss.count, 200);
    let json = serde_json::to_value(&closed).unwrap();
    for key in [
        "throughput_rps",
        "latency",
        "latency_hit",
        "latency_miss",
        "device_reads",
    ] {
        assert!(json.get(key).is_some(), "{key}");
    }
    assert!(closed.table().contains("req/s"));

    let open = run(&load_config(
        addr,
        dir.path(),
        LoopMode::Open { rate_per_s: 2000.0 },
    ))
    .await
    .unwrap();
    assert_eq!(
        (open.ok, open.mode, open.rate_per_s),
        (200, "open", Some(2000.0))
    );
    server.shutdown().await;
}

/// A run stops at its time limit even if the server never answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stops_by_itself_when_nobody_answers() {
    let dir = tempfile::tempdir().unwrap();
    make_files(dir.path(), &FileSetSpec::parse("uniform:3x1K").unwrap(), 1).unwrap();
    // A listener that accepts and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let hold = tokio::spawn(async move {
        let mut kept = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            kept.push(s);
        }
    });
    let mut c = load_config(addr, dir.path(), LoopMode::Closed);
    c.warmup_requests = 0;
    c.max_duration = Duration::from_millis(500);
    // Bounded by the deadline: the outer timeout only catches a generator that hangs.
    let r = tokio::time::timeout(Duration::from_secs(60), run(&c)).await;
    hold.abort();
    let r = r.expect("the run ends by itself");
    // Requests in flight at the deadline are abandoned, not counted as answered.
    assert_eq!(r.unwrap().ok, 0);
}
