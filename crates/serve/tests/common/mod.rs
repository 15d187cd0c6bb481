//! A server on 127.0.0.1:0 over a temporary tree, and a raw HTTP/1.1 client that sends
//! exactly the bytes a test gives it.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use serve::{SchedulerChoice, ServeConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A temporary tree: `root/` with `a.txt` (0..=255 repeated to 1000 bytes), `sub/b.txt`,
/// `big.dat` (`big_bytes` of data), a link out of the root and `secret` beside it.
pub struct Tree {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub a: Vec<u8>,
}

pub fn tree(big_bytes: usize) -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let a: Vec<u8> = (0..1000u32).map(|i| (i % 256) as u8).collect();
    std::fs::write(root.join("a.txt"), &a).unwrap();
    std::fs::write(root.join("sub/b.txt"), b"bee").unwrap();
    std::fs::write(root.join("big.dat"), vec![0x42u8; big_bytes]).unwrap();
    std::fs::write(dir.path().join("secret"), b"TOP SECRET").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret"), root.join("escape")).unwrap();
    Tree { dir, root, a }
}

/// A test configuration: loopback port 0, short timeouts.
pub fn config(root: &std::path::Path, scheduler: SchedulerChoice) -> ServeConfig {
    let mut c = ServeConfig::new(root);
    c.listen = "127.0.0.1:0".parse().unwrap();
    c.scheduler = scheduler;
    c.header_timeout = Duration::from_millis(300);
    c.idle_timeout = Duration::from_millis(300);
    c
}

/// A parsed response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A client connection that keeps what it read past one response (pipelining).
pub struct Conn {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    pub async fn open(addr: std::net::SocketAddr) -> Conn {
        Conn {
            stream: TcpStream::connect(addr).await.unwrap(),
            buf: Vec::new(),
        }
    }

    pub async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
    }

    async fn fill(&mut self) -> Option<()> {
        let mut chunk = [0u8; 8192];
        let n = tokio::time::timeout(Duration::from_secs(20), self.stream.read(&mut chunk))
            .await
            .expect("the server answers within 20 s")
            .ok()?;
        if n == 0 {
            return None;
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Some(())
    }

    /// Read one response (`head`: no body expected). `None` when the connection closed
    /// before a whole header arrived.
    pub async fn reply(&mut self, head: bool) -> Option<Reply> {
        let header_end = loop {
            if let Some(i) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            self.fill().await?;
        };
        let text = String::from_utf8_lossy(&self.buf[..header_end]).to_string();
        let mut lines = text.split("\r\n");
        let status: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        let mut reply = Reply {
            status,
            headers,
            body: Vec::new(),
        };
        let len: usize = if head || status == 304 {
            0
        } else {
            reply
                .header("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        while self.buf.len() < header_end + len {
            if self.fill().await.is_none() {
                break;
            }
        }
        let end = (header_end + len).min(self.buf.len());
        reply.body = self.buf[header_end..end].to_vec();
        self.buf.drain(..end);
        Some(reply)
    }
}

/// Send `request` on a new connection and read one response.
pub async fn exchange(addr: std::net::SocketAddr, request: &[u8]) -> Option<Reply> {
    let mut c = Conn::open(addr).await;
    c.send(request).await;
    c.reply(request.starts_with(b"HEAD")).await
}

/// `GET path` with extra header lines.
pub fn get(path: &str, extra: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: t\r\n{extra}\r\n").into_bytes()
}
