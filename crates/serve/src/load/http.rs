//! One client connection: HTTP/1.1 keep-alive through hyper's client, reconnecting after
//! a failure.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use rand_xoshiro::Xoshiro256PlusPlus;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::fileset::Sampler;
use super::stats::{CacheWord, Recorder};
use crate::{ACTUAL_HEADER, PREDICTED_HEADER};

/// When a connection sends.
pub enum Schedule {
    /// As soon as the last response is complete.
    Closed,
    /// At the due times the pacer hands this connection ([`super::pacer`]): requests
    /// `index, index + connections, ...` of the run.
    Open {
        /// Due times, in order; closed when the run has no more for this connection.
        tickets: UnboundedReceiver<Instant>,
    },
}

/// A connection's job.
pub struct Connection {
    pub target: SocketAddr,
    pub rng: Xoshiro256PlusPlus,
    pub sampler: Arc<Sampler>,
    pub paths: Arc<Vec<String>>,
    pub issued: Arc<AtomicU64>,
    pub done: Arc<AtomicU64>,
    pub requests: u64,
    pub deadline: Instant,
    pub schedule: Schedule,
}

/// A failed exchange gets one fresh connection before the next request; reconnecting
/// waits this long after a failed connect, so a dead server costs no busy loop.
const RECONNECT_PAUSE: Duration = Duration::from_millis(50);

impl Connection {
    pub async fn run(mut self) -> Recorder {
        let mut rec = Recorder::default();
        let mut sender: Option<SendRequest<Empty<Bytes>>> = None;
        loop {
            // Which request of the run this is, and when it was due.
            let due = match &mut self.schedule {
                Schedule::Closed => {
                    if self.issued.fetch_add(1, Ordering::Relaxed) >= self.requests {
                        break;
                    }
                    None
                }
                Schedule::Open { tickets } => {
                    let next = tokio::time::timeout_at(self.deadline, tickets.recv()).await;
                    match next {
                        Ok(Some(due)) => Some(due),
                        Ok(None) | Err(_) => break,
                    }
                }
            };
            if Instant::now() >= self.deadline {
                break;
            }
            let sent = Instant::now();
            let path = &self.paths[self.sampler.next(&mut self.rng)];
            if sender.is_none() {
                sender = tokio::time::timeout_at(self.deadline, connect(self.target))
                    .await
                    .unwrap_or(None);
                if sender.is_none() {
                    rec.errors += 1;
                    tokio::time::sleep(RECONNECT_PAUSE).await;
                    continue;
                }
            }
            let s = sender.as_mut().expect("connected above");
            // A request still unanswered at the deadline is abandoned, not counted.
            let Ok(answer) = tokio::time::timeout_at(self.deadline, exchange(s, path)).await else {
                break;
            };
            match answer {
                Ok((status, bytes, word)) if status.is_success() => {
                    let from = due.unwrap_or(sent);
                    let latency_us = from.elapsed().as_micros() as u64;
                    rec.success(latency_us, bytes, word);
                }
                Ok((StatusCode::SERVICE_UNAVAILABLE, _, _)) => rec.rejected += 1,
                Ok((status, _, _)) => {
                    tracing::debug!(%status, path, "unexpected status");
                    rec.errors += 1;
                }
                Err(e) => {
                    tracing::debug!(path, "request failed: {e}");
                    rec.errors += 1;
                    sender = None;
                }
            }
            self.done.fetch_add(1, Ordering::Relaxed);
        }
        rec
    }
}

async fn connect(target: SocketAddr) -> Option<SendRequest<Empty<Bytes>>> {
    let stream = tokio::net::TcpStream::connect(target).await.ok()?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Some(sender)
}

async fn exchange(
    sender: &mut SendRequest<Empty<Bytes>>,
    path: &str,
) -> Result<(StatusCode, u64, CacheWord), hyper::Error> {
    sender.ready().await?;
    let req = Request::get(path)
        .header(hyper::header::HOST, "localhost")
        .body(Empty::<Bytes>::new())
        .expect("a GET with a path from the manifest is a valid request");
    let resp = sender.send_request(req).await?;
    let status = resp.status();
    let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok());
    let word = CacheWord::from_headers(header(PREDICTED_HEADER), header(ACTUAL_HEADER));
    let mut body = resp.into_body();
    let mut bytes = 0u64;
    while let Some(frame) = body.frame().await {
        if let Some(data) = frame?.data_ref() {
            bytes += data.len() as u64;
        }
    }
    Ok((status, bytes, word))
}
