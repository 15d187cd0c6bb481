//! The baseline for the server's overhead: the smallest static file server on the same
//! crates (tokio, hyper), with no scheduler, no queue, no Range, no timeouts and only a
//! `..` check. `docs/serve.md` compares `bufcache serve` against it under wrk.
//!
//!     cargo run --release -p bufcache-serve --example minimal_static -- ROOT [ADDR]
//!
//! Not for use as a server: it exists to be measured against.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let root = Arc::new(PathBuf::from(args.next().unwrap_or_else(|| ".".into())));
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let root = Arc::clone(&root);
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                let root = Arc::clone(&root);
                async move {
                    let path = req.uri().path().trim_start_matches('/');
                    let reply = if path.split('/').any(|s| s == "..") {
                        None
                    } else {
                        tokio::fs::read(root.join(path)).await.ok()
                    };
                    Ok::<_, Infallible>(match reply {
                        Some(data) => Response::new(Full::new(Bytes::from(data))),
                        None => {
                            let mut r = Response::new(Full::new(Bytes::new()));
                            *r.status_mut() = StatusCode::NOT_FOUND;
                            r
                        }
                    })
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
