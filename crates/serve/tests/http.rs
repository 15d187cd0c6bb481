//! The HTTP features against a running server on 127.0.0.1:0.

use crate::common;

use common::{config, exchange, get, tree, Conn};
use serve::{MirrorBanking, SchedulerChoice};

#[tokio::test]
async fn get_head_range_and_last_modified() {
    let t = tree(10);
    let server = serve::serve(config(&t.root, SchedulerChoice::Fifo))
        .await
        .unwrap();
    let addr = server.local_addr();

    let r = exchange(addr, &get("/a.txt", "")).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, t.a);
    assert_eq!(r.header("content-length"), Some("1000"));
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
    assert_eq!(r.header("x-bufcache-predicted"), Some("unknown"));
    let modified = r.header("last-modified").unwrap().to_string();
    assert!(httpdate::parse_http_date(&modified).is_ok(), "{modified}");

    let r = exchange(addr, b"HEAD /sub/b.txt HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    assert_eq!((r.status, r.header("content-length")), (200, Some("3")));
    assert!(r.body.is_empty());

    let r = exchange(addr, &get("/a.txt", "Range: bytes=10-19\r\n"))
        .await
        .unwrap();
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &t.a[10..20]);
    assert_eq!(r.header("content-range"), Some("bytes 10-19/1000"));
    assert_eq!(r.header("content-length"), Some("10"));

    let r = exchange(addr, &get("/a.txt", "Range: bytes=-5\r\n"))
        .await
        .unwrap();
    assert_eq!((r.status, r.body.as_slice()), (206, &t.a[995..]));

    let r = exchange(addr, &get("/a.txt", "Range: bytes=1000-\r\n"))
        .await
        .unwrap();
    assert_eq!(r.status, 416);
    assert_eq!(r.header("content-range"), Some("bytes */1000"));

    // Not modified since its own Last-Modified; modified since long before.
    let since = format!("If-Modified-Since: {modified}\r\n");
    let r = exchange(addr, &get("/a.txt", &since)).await.unwrap();
    assert_eq!((r.status, r.body.len()), (304, 0));
    let old = "If-Modified-Since: Thu, 01 Jan 1970 00:00:01 GMT\r\n";
    assert_eq!(
        exchange(addr, &get("/a.txt", old)).await.unwrap().status,
        200
    );

    let r = exchange(
        addr,
        b"POST /a.txt HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
    )
    .await
    .unwrap();
    assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD")));
    server.shutdown().await;
}

#[tokio::test]
async fn keep_alive_serves_several_requests_on_one_connection() {
    let t = tree(10);
    let server = serve::serve(config(&t.root, SchedulerChoice::Fifo))
        .await
        .unwrap();
    let mut s = Conn::open(server.local_addr()).await;
    for path in ["/a.txt", "/sub/b.txt", "/a.txt"] {
        s.send(&get(path, "")).await;
        let r = s.reply(false).await.expect("the connection stays open");
        assert_eq!(r.status, 200, "{path}");
    }
    // Pipelined: two requests in one write, two responses in order.
    let mut two = get("/sub/b.txt", "");
    two.extend(get("/a.txt", "Range: bytes=0-1\r\n"));
    s.send(&two).await;
    assert_eq!(s.reply(false).await.unwrap().body, b"bee");
    assert_eq!(s.reply(false).await.unwrap().body, &t.a[..2]);
    server.shutdown().await;
}

/// The pool scheduler reads through `bufcache-pool`, whose residency is exact: the first
/// read of a file misses, the second hits, and both return the file's bytes.
#[tokio::test]
async fn the_pool_backend_serves_exact_bytes_and_knows_its_hits() {
    let t = tree(10);
    let pool = SchedulerChoice::Pool {
        policy: "lru".into(),
        capacity_bytes: 1 << 20,
    };
    let server = serve::serve(config(&t.root, pool)).await.unwrap();
    let addr = server.local_addr();
    let first = exchange(addr, &get("/a.txt", "")).await.unwrap();
    assert_eq!(first.body, t.a);
    assert_eq!(first.header("x-bufcache-actual"), Some("miss"));
    assert_eq!(first.header("x-bufcache-predicted"), Some("miss"));
    let second = exchange(addr, &get("/a.txt", "Range: bytes=500-\r\n"))
        .await
        .unwrap();
    assert_eq!(second.body, &t.a[500..]);
    assert_eq!(second.header("x-bufcache-actual"), Some("hit"));
    assert_eq!(second.header("x-bufcache-predicted"), Some("hit"));
    server.shutdown().await;
}

/// `--trace` logs each GET in schedule order with what was predicted and what the cache
/// held (the pool's map: exact), and a replay of the log through a mirror of the same
/// kind agrees with it: a miss, then a hit.
#[tokio::test]
async fn the_request_log_records_each_get_and_replays() {
    use serve::oracle::{Actual, Prediction};
    let t = tree(10);
    let log = t.dir.path().join("trace.jsonl");
    let mut c = config(
        &t.root,
        SchedulerChoice::Pool {
            policy: "lru".into(),
            capacity_bytes: 1 << 20,
        },
    );
    c.trace = Some(log.clone());
    let server = serve::serve(c).await.unwrap();
    let addr = server.local_addr();
    exchange(addr, &get("/a.txt", "")).await.unwrap();
    let head = b"HEAD /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_eq!(exchange(addr, head).await.unwrap().status, 200);
    exchange(addr, &get("/a.txt", "Range: bytes=500-\r\n"))
        .await
        .unwrap();
    server.shutdown().await;
    let trace = serve::trace_log::read_trace(&log).unwrap();
    assert_eq!(trace.len(), 2, "one line per GET, none for HEAD");
    let seen: Vec<_> = trace
        .iter()
        .map(|r| {
            (
                r.order,
                r.first_page,
                r.pages,
                r.predicted,
                r.cached_pages,
                r.actual,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (0, 0, 1, Prediction::Miss, Some(0), Some(Actual::Miss)),
            (1, 0, 1, Prediction::Hit, Some(1), Some(Actual::Hit)),
        ]
    );
    assert_eq!(trace[0].inode, trace[1].inode);
    assert!(trace.iter().all(|r| r.start_us <= r.end_us));
    assert!(
        trace[0].end_us <= trace[1].start_us,
        "served one after the other"
    );
    let at_choice: Vec<_> = trace.iter().map(|r| r.cached_at_choice).collect();
    assert_eq!(
        at_choice,
        [Some(0), Some(1)],
        "the cache asked when each was chosen"
    );
    let scoring = serve::replay::Scoring::default();
    let s = serve::replay::evaluate(
        &trace,
        &[],
        "lru",
        1 << 20,
        serve::replay::Feed::Scheduled,
        scoring,
    )
    .unwrap();
    assert_eq!((s.compared, s.right_misses, s.right_hits), (2, 1, 1));
}

/// Every other scheduler serves the same bytes; the mirror predicts a miss for a file
/// it has not seen and a hit after (its own model, whatever the kernel holds).
#[tokio::test]
async fn every_scheduler_serves_the_same_bytes() {
    let t = tree(10);
    for choice in [
        SchedulerChoice::NoWait,
        SchedulerChoice::Cachestat,
        SchedulerChoice::Mirror {
            policy: "clock".into(),
            size_bytes: 1 << 20,
            bank: MirrorBanking::Single,
        },
    ] {
        let name = choice.name();
        let server = serve::serve(config(&t.root, choice)).await.unwrap();
        let addr = server.local_addr();
        let r1 = exchange(addr, &get("/a.txt", "")).await.unwrap();
        let r2 = exchange(addr, &get("/a.txt", "")).await.unwrap();
        assert_eq!((r1.status, &r1.body), (200, &t.a), "{name}");
        assert_eq!(r2.body, t.a, "{name}");
        if name == "mirror" {
            assert_eq!(r1.header("x-bufcache-predicted"), Some("miss"));
            assert_eq!(r2.header("x-bufcache-predicted"), Some("hit"));
        } else {
            assert!(r2.header("x-bufcache-predicted").is_some(), "{name}");
        }
        server.shutdown().await;
    }
}

/// Hits are read inline without waiting; a range the page cache does not hold is left to
/// the blocking read. The file lives in the build's temporary directory (a disk, where
/// dropping clean pages works; tmpfs would keep them).
#[test]
fn a_cached_range_is_read_inline_and_a_dropped_one_is_not() {
    use serve::backend::Backend;
    use serve::open_files::OpenFile;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("f");
    let data: Vec<u8> = (0..64 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let file = OpenFile::open(&path).unwrap();
    let job = Backend::Os.job(&file, 100, 40_000).unwrap();
    assert_eq!(
        Backend::Os.read_cached(&job).as_deref(),
        Some(&data[100..40_000])
    );
    file.file.sync_all().unwrap();
    rustix::fs::fadvise(&*file.file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
    assert_eq!(Backend::Os.read_cached(&job), None);
    // The blocking read still serves it, and brings it in.
    assert_eq!(Backend::Os.read(&job).unwrap(), &data[100..40_000]);
    assert_eq!(
        Backend::Os.read_cached(&job).as_deref(),
        Some(&data[100..40_000])
    );
}
