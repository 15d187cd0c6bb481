//! HTTP/1.1 over hyper: the request path from socket to response.
//!
//! Per request: method (GET, HEAD; else 405), the open file and its metadata
//! ([`crate::open_files`], which resolves paths through [`crate::safe_path`]),
//! `If-Modified-Since` (304), `Range` ([`crate::range`]), then for GET the scheduler
//! ([`crate::scheduler`]): a slot, the ground truth for `x-bufcache-actual` (when asked
//! for), the read (inline when the page cache holds all of it, else on a blocking
//! thread), and the slot freed before the response is written. HEAD reads no
//! data and so never queues. Every failure is a status and a log line; nothing a client
//! sends can panic the server.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinHandle;

use crate::backend::{Backend, Job};
use crate::bank_score::ServiceTimes;
use crate::cgroup_poll::Poller;
use crate::deadline_io::Deadline;
use crate::flush_watch::{FlushSink, FlushWatch};
use crate::in_flight::InFlight;
use crate::open_files::{OpenFile, OpenFiles};
use crate::oracle::{self, resident_pages, Actual};
use crate::range::{interpret, RangeAnswer};
use crate::scheduler::{Probe, Scheduler};
use crate::trace_log::{TraceLog, TraceRecord};
use crate::{ServeConfig, ServeError, ACTUAL_HEADER, PREDICTED_HEADER};

/// Response header: microseconds the request waited for a slot.
pub const QUEUE_HEADER: &str = "x-bufcache-queue-us";

/// What every request handler shares.
struct Context {
    files: OpenFiles,
    scheduler: Arc<Scheduler>,
    backend: Backend,
    max_body_bytes: u64,
    report_actual: bool,
    /// Reads in service, kept only with `report_actual` (for the `joined` ground truth).
    in_flight: Arc<InFlight>,
    /// The request log (`--trace`), which implies `report_actual`.
    trace: Option<Arc<TraceLog>>,
    /// `--cgroup-poll`'s thread, stopped when the server's last connection ends.
    _poller: Option<Poller>,
    /// `--mirror-flush-events`' thread, the same.
    _flush_watch: Option<FlushWatch>,
}

/// A server accepting connections in the background.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    scheduler: Arc<Scheduler>,
    stop: watch::Sender<bool>,
    accept: JoinHandle<()>,
}

impl RunningServer {
    /// The address actually bound (the port chosen when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The scheduler: how many requests wait now, and (in tests) a way to occupy a slot.
    pub fn scheduler(&self) -> &Arc<Scheduler> {
        &self.scheduler
    }

    /// Stop accepting connections. Connections already open finish their requests and
    /// close when idle.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.accept.await;
    }
}

/// Bind and start serving in the background (call within a tokio runtime).
pub async fn serve(config: ServeConfig) -> Result<RunningServer, ServeError> {
    config.validate()?;
    let root = config
        .root
        .canonicalize()
        .map_err(ServeError::io("opening the root directory", &config.root))?;
    if !root.is_dir() {
        return Err(ServeError::config(
            "root",
            format!("{} is not a directory", root.display()),
        ));
    }
    let backend = oracle::backend_for(&config.scheduler)?;
    let poller = config
        .cgroup_poll
        .map(Poller::start)
        .transpose()
        .map_err(|e| ServeError::config("cgroup poll", format!("starting its thread: {e}")))?;
    let size_reading = poller.as_ref().filter(|_| config.mirror_track);
    let trace = config
        .trace
        .as_deref()
        .map(TraceLog::create)
        .transpose()?
        .map(Arc::new);
    // The kernel's flushes go to the request log as well, for a replay to flush with.
    let flush_watch = config
        .mirror_flush_events
        .then(|| {
            let log = trace.clone();
            let sink = log.map(|l| Box::new(move |ns| l.write_flush(ns)) as FlushSink);
            FlushWatch::start(sink)
        })
        .transpose()?;
    let oracle = oracle::build(
        &config.scheduler,
        &backend,
        size_reading.map(Poller::latest),
        flush_watch.as_ref().map(FlushWatch::count),
    )?;
    // The log also records what the cache held when each request was chosen.
    let probe: Option<Probe> = trace.as_ref().map(|_| {
        let backend = backend.clone();
        Box::new(move |job: &Job| resident_pages(&backend, job)) as Probe
    });
    tracing::info!(
        scheduler = config.scheduler.name(),
        "serving {}",
        root.display()
    );
    let context = Arc::new(Context {
        files: OpenFiles::new(
            root,
            config.open_file_ttl,
            config.open_files.min(descriptor_budget()),
        ),
        scheduler: Scheduler::with_probe(config.in_service, config.queue_capacity, oracle, probe),
        backend,
        max_body_bytes: config.max_body_bytes,
        report_actual: config.report_actual || trace.is_some(),
        in_flight: InFlight::new(),
        trace,
        _poller: poller,
        _flush_watch: flush_watch,
    });
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Net {
            what: format!("binding {}", config.listen),
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ServeError::Net {
        what: "reading the bound address".into(),
        source,
    })?;
    tracing::info!(%addr, "listening");
    let (stop, stopped) = watch::channel(false);
    let scheduler = Arc::clone(&context.scheduler);
    let accept = tokio::spawn(accept_loop(listener, config, context, stopped));
    Ok(RunningServer {
        addr,
        scheduler,
        stop,
        accept,
    })
}

async fn accept_loop(
    listener: TcpListener,
    config: ServeConfig,
    context: Arc<Context>,
    mut stopped: watch::Receiver<bool>,
) {
    let connections = Arc::new(Semaphore::new(config.max_connections));
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stopped.changed() => return,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of descriptors and the like: say so, breathe, go on.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            tracing::warn!(%peer, "connection refused: {} already open", config.max_connections);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let io = TokioIo::new(Deadline::new(stream, config.idle_timeout));
        let context = Arc::clone(&context);
        let header_timeout = config.header_timeout;
        let max_header_bytes = config.max_header_bytes;
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let context = Arc::clone(&context);
                async move { Ok::<_, Infallible>(respond(&context, req).await) }
            });
            let result = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .max_buf_size(max_header_bytes)
                .keep_alive(true)
                .serve_connection(io, service)
                .await;
            if let Err(e) = result {
                tracing::debug!(%peer, "connection closed: {e}");
            }
            drop(permit);
        });
    }
}

/// Raise this process's soft limit on open descriptors to its hard limit: the open-file
/// cache and the pool (one descriptor per file of the set) hold many files open, and the
/// soft limit is often 1024 for historical reasons only. `bufcache serve` calls it; a
/// library user decides for their own process. A failure leaves the limit as it was.
pub fn raise_open_file_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        if let Err(e) = setrlimit(Resource::Nofile, limit) {
            tracing::debug!("could not raise the open-file limit: {e}");
        }
    }
}

/// Files the open-file cache may hold: half the process's descriptor limit, so that
/// kept-open files never starve connections (or the pool) of descriptors.
fn descriptor_budget() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    limit
        .current
        .map_or(usize::MAX, |n| usize::try_from(n / 2).unwrap_or(usize::MAX))
}

type Reply = Response<Full<Bytes>>;

fn plain(status: StatusCode, text: &str) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(format!("{text}\n"))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

async fn respond(context: &Context, req: Request<Incoming>) -> Reply {
    let head = match *req.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
    };
    let opened = match context.files.get(req.uri().path()) {
        Ok(o) => o,
        Err(refusal) => {
            let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_REQUEST);
            tracing::debug!(path = req.uri().path(), ?refusal, "refused");
            return plain(status, &format!("{refusal:?}"));
        }
    };
    let (len, modified) = (opened.len, opened.modified);
    if let (Some(m), Some(since)) = (modified, header_str(&req, header::IF_MODIFIED_SINCE)) {
        if let Ok(since) = httpdate::parse_http_date(since) {
            if whole_seconds(m) <= whole_seconds(since) {
                let mut r = plain(StatusCode::NOT_MODIFIED, "");
                *r.body_mut() = Full::new(Bytes::new());
                r.headers_mut().remove(header::CONTENT_TYPE);
                return r;
            }
        }
    }
    let (status, start, end) = match interpret(header_str(&req, header::RANGE), len) {
        RangeAnswer::Whole => (StatusCode::OK, 0, len),
        RangeAnswer::Part { start, end } => (StatusCode::PARTIAL_CONTENT, start, end),
        RangeAnswer::Unsatisfiable => {
            let mut r = plain(StatusCode::RANGE_NOT_SATISFIABLE, "range outside the file");
            if let Ok(v) = HeaderValue::from_str(&format!("bytes */{len}")) {
                r.headers_mut().insert(header::CONTENT_RANGE, v);
            }
            return r;
        }
    };
    if end - start > context.max_body_bytes {
        return plain(
            StatusCode::FORBIDDEN,
            "larger than the server's body limit: ask for a smaller Range",
        );
    }
    let mut reply = if head {
        Response::new(Full::new(Bytes::new()))
    } else {
        match read_scheduled(context, &opened.file, start, end).await {
            Ok(r) => r,
            Err(r) => return r,
        }
    };
    *reply.status_mut() = status;
    let h = reply.headers_mut();
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(end - start));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Some(m) = modified {
        if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(m)) {
            h.insert(header::LAST_MODIFIED, v);
        }
    }
    if status == StatusCode::PARTIAL_CONTENT {
        if let Ok(v) = HeaderValue::from_str(&format!("bytes {}-{}/{len}", start, end - 1)) {
            h.insert(header::CONTENT_RANGE, v);
        }
    }
    reply
}

/// Wait for a slot, read, free the slot: the scheduled part of a GET.
async fn read_scheduled(
    context: &Context,
    file: &OpenFile,
    start: u64,
    end: u64,
) -> Result<Reply, Reply> {
    let internal = |e: &dyn std::fmt::Display| {
        tracing::warn!("{e}");
        plain(StatusCode::INTERNAL_SERVER_ERROR, "read failed")
    };
    let job = context
        .backend
        .job(file, start, end)
        .map_err(|e| internal(&e))?;
    let job = Arc::new(job);
    let slot = match context.scheduler.admit(Arc::clone(&job)).await {
        Ok(s) => s,
        Err(_) => {
            let mut r = plain(StatusCode::SERVICE_UNAVAILABLE, "queue full, try again");
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return Err(r);
        }
    };
    // The ground truth first: the read brings the pages in. Both answers are quick
    // (a map lookup, or one cachestat). A miss whose pages another request in service
    // is reading is `joined`: it waits on that read and reads nothing itself.
    // The span a bank of mirrors may judge, from here to the read's end, is what a
    // request log records (`start_us`..`end_us`): live and offline judge alike.
    let granted = std::time::Instant::now();
    let start_us = context.trace.as_ref().map(|log| log.now_us());
    let pages = job.pages();
    let (cached, actual, _reading) = if context.report_actual {
        let cached = resident_pages(&context.backend, &job);
        let actual = cached.map(|n| {
            if n >= pages.end - pages.start {
                Actual::Hit
            } else if context.in_flight.covers(job.inode, &pages) {
                Actual::Joined
            } else {
                Actual::Miss
            }
        });
        let reading = context.in_flight.enter(job.inode, pages.clone());
        (cached, actual, Some(reading))
    } else {
        let actual = context.backend.pool_resident(&job).map(Actual::from_hit);
        (None, actual, None)
    };
    let started = std::time::Instant::now();
    let data = match context.backend.read_cached(&job) {
        Some(d) => Ok(d),
        None => {
            let backend = context.backend.clone();
            let read_job: Arc<Job> = Arc::clone(&job);
            tokio::task::spawn_blocking(move || backend.read(&read_job))
                .await
                .map_err(|e| internal(&e))?
        }
    };
    let read_ns = started.elapsed().as_nanos() as u64;
    let data = match data {
        Ok(d) => {
            let times = ServiceTimes {
                read_ns,
                span_ns: granted.elapsed().as_nanos() as u64,
            };
            context.scheduler.served(&job, times);
            d
        }
        Err(e) => {
            context.scheduler.abandoned(&job);
            return Err(internal(&e));
        }
    };
    let (prediction, queued_us) = (slot.prediction, slot.queued_us);
    if let (Some(log), Some(start_us)) = (&context.trace, start_us) {
        log.write(&TraceRecord {
            order: slot.order,
            inode: job.inode,
            first_page: pages.start,
            pages: pages.end - pages.start,
            predicted: prediction,
            cached_pages: cached,
            cached_at_choice: slot.cached_at_choice,
            actual,
            start_us,
            end_us: log.now_us(),
        });
    }
    drop(slot);
    let mut r = Response::new(Full::new(Bytes::from(data)));
    let h = r.headers_mut();
    h.insert(
        PREDICTED_HEADER,
        HeaderValue::from_static(prediction.as_str()),
    );
    if let Some(actual) = actual {
        h.insert(ACTUAL_HEADER, HeaderValue::from_static(actual.as_str()));
    }
    h.insert(QUEUE_HEADER, HeaderValue::from(queued_us));
    Ok(r)
}

fn header_str(req: &Request<Incoming>, name: header::HeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

fn whole_seconds(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
