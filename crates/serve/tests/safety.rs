//! Each safety rule against a running server on 127.0.0.1:0: traversal in every
//! spelling, malformed and oversized requests, slow clients, the bounded queue, the
//! loopback default.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{config, exchange, get, tree, Conn};
use serve::backend::Backend;
use serve::{MirrorBanking, SchedulerChoice};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

#[tokio::test]
async fn traversal_is_refused_in_every_spelling() {
    let t = tree(10);
    let server = serve::serve(config(&t.root, SchedulerChoice::Fifo))
        .await
        .unwrap();
    let addr = server.local_addr();
    for (target, status) in [
        ("/../secret", 403),
        ("/sub/../../secret", 403),
        ("/%2e%2e/secret", 403),
        ("/%2E%2E/secret", 403),
        ("/sub/..%2f..%2fsecret", 403),
        ("/..%5csecret", 403),
        ("/escape", 403),
        ("/%ff", 400),
        ("/a.txt%00", 403),
        ("//etc/passwd", 404),
        ("/nothing", 404),
        ("/sub", 404),
    ] {
        let r = exchange(addr, &get(target, "")).await.unwrap();
        assert_eq!(r.status, status, "{target}");
        assert!(
            !String::from_utf8_lossy(&r.body).contains("TOP SECRET"),
            "{target}"
        );
    }
    // An absolute-form target is reduced to its path, which is then checked the same.
    let r = exchange(addr, b"GET http://t/../secret HTTP/1.1\r\nHost: t\r\n\r\n").await;
    assert_eq!(r.map(|r| r.status), Some(403));
    server.shutdown().await;
}

/// The open-file cache does not keep serving a file once the tree changes under it: a
/// served file replaced by a link leading out of the root is refused on the next
/// request, and a deleted one is not found.
#[tokio::test]
async fn a_served_file_swapped_for_an_escaping_link_is_refused_at_once() {
    let t = tree(10);
    let server = serve::serve(config(&t.root, SchedulerChoice::Fifo))
        .await
        .unwrap();
    let addr = server.local_addr();
    assert_eq!(
        exchange(addr, &get("/sub/b.txt", "")).await.unwrap().body,
        b"bee"
    );
    let link = t.root.join("sub/link.tmp");
    std::os::unix::fs::symlink(t.dir.path().join("secret"), &link).unwrap();
    std::fs::rename(&link, t.root.join("sub/b.txt")).unwrap();
    let r = exchange(addr, &get("/sub/b.txt", "")).await.unwrap();
    assert_eq!(r.status, 403);
    assert!(!String::from_utf8_lossy(&r.body).contains("TOP SECRET"));
    assert_eq!(
        exchange(addr, &get("/a.txt", "")).await.unwrap().status,
        200
    );
    std::fs::remove_file(t.root.join("a.txt")).unwrap();
    assert_eq!(
        exchange(addr, &get("/a.txt", "")).await.unwrap().status,
        404
    );
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_and_oversized_requests_are_refused_and_the_server_lives_on() {
    let t = tree(10);
    let server = serve::serve(config(&t.root, SchedulerChoice::Fifo))
        .await
        .unwrap();
    let addr = server.local_addr();
    let garbage = exchange(addr, b"GARBAGE\r\n\r\n").await;
    assert_eq!(garbage.map(|r| r.status), Some(400));
    let bad_version = exchange(addr, b"GET /a.txt HTTP/9.9\r\n\r\n").await;
    assert_eq!(bad_version.map(|r| r.status), Some(400));
    let huge = format!("X-Big: {}\r\n", "x".repeat(64 * 1024));
    let big = exchange(addr, &get("/a.txt", &huge)).await;
    assert_eq!(big.map(|r| r.status), Some(431));
    let long_uri = format!("/{}", "a".repeat(70_000));
    let long = exchange(addr, &get(&long_uri, "")).await;
    // The request line alone overflows the header limit.
    assert_eq!(long.map(|r| r.status), Some(431));
    // Still serving.
    assert_eq!(
        exchange(addr, &get("/a.txt", "")).await.unwrap().status,
        200
    );
    server.shutdown().await;
}

/// A client that never finishes its header is cut off (hyper's header timeout); one that
/// stops reading a large response is cut off by the idle timeout, long before the body
/// is through. Both limits are 300 ms here; the test waits seconds, so only a server
/// that never closes fails it.
#[tokio::test]
async fn slow_clients_are_cut_off() {
    let big = 32 << 20;
    let t = tree(big);
    let server = serve::serve(config(&t.root, SchedulerChoice::Fifo))
        .await
        .unwrap();
    let addr = server.local_addr();

    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /a.txt HTTP/1.1\r\nHo").await.unwrap();
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut rest)).await;
    assert!(
        closed.is_ok(),
        "a half-sent header must not hold the connection"
    );

    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut s = socket.connect(addr).await.unwrap();
    s.write_all(&get("/big.dat", "")).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut got = 0usize;
    let mut chunk = vec![0u8; 1 << 16];
    let drained = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
    })
    .await;
    assert!(drained.is_ok(), "the server closed the stalled connection");
    assert!(
        got < big,
        "the whole body ({got} bytes) reached a client that stopped reading"
    );
    assert_eq!(
        exchange(addr, &get("/a.txt", "")).await.unwrap().status,
        200
    );
    server.shutdown().await;
}

/// One slot, one place in the queue: with the slot held and the place taken, the next
/// GET is answered 503 with Retry-After; once the slot is free both are served.
#[tokio::test]
async fn a_full_queue_answers_503_with_retry_after() {
    let t = tree(10);
    let mut c = config(&t.root, SchedulerChoice::Fifo);
    c.in_service = 1;
    c.queue_capacity = 1;
    let server = serve::serve(c).await.unwrap();
    let addr = server.local_addr();
    let file = serve::open_files::OpenFile::open(&t.root.join("a.txt")).unwrap();
    let job = Backend::Os.job(&file, 0, 1).unwrap();
    let held = server.scheduler().admit(Arc::new(job)).await.unwrap();

    let mut queued = Conn::open(addr).await;
    queued.send(&get("/a.txt", "")).await;
    for _ in 0..2000 {
        if server.scheduler().queued() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(server.scheduler().queued(), 1);
    let r = exchange(addr, &get("/a.txt", "")).await.unwrap();
    assert_eq!((r.status, r.header("retry-after")), (503, Some("1")));
    // HEAD reads no data and never queues.
    let h = exchange(addr, b"HEAD /a.txt HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(h.status, 200);
    drop(held);
    let r = queued.reply(false).await.unwrap();
    assert_eq!((r.status, r.body.len()), (200, 1000));
    server.shutdown().await;
}

#[tokio::test]
async fn only_loopback_unless_allowed_and_bad_configs_are_errors() {
    let t = tree(10);
    let mut c = config(&t.root, SchedulerChoice::Fifo);
    c.listen = "0.0.0.0:0".parse().unwrap();
    let e = serve::serve(c).await.unwrap_err();
    assert!(e.to_string().contains("loopback"), "{e}");
    let c = config(&t.root.join("a.txt"), SchedulerChoice::Fifo);
    assert!(serve::serve(c).await.is_err(), "a file is not a root");
    let c = config(
        &t.root,
        SchedulerChoice::Mirror {
            policy: "belady".into(),
            size_bytes: 1 << 20,
            bank: MirrorBanking::Single,
        },
    );
    assert!(serve::serve(c).await.is_err());
}
