//! An interrupted atomic write leaves nothing behind: SIGINT or SIGTERM while `trace
//! generate` is writing a large output removes the hidden temporary file, and the process
//! exits with the shell's status for the signal.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn interrupted_by(signal: &str, status: i32) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.txt");
    // Far more requests than it can write before the signal arrives (debug build: minutes);
    // text output streams, so memory stays flat.
    let mut child = Command::new(env!("CARGO_BIN_EXE_bufcache"))
        .args([
            "trace",
            "generate",
            "uniform",
            "--requests",
            "400000000",
            "-o",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the temporary file exists and has grown: the write is under way.
    let start = Instant::now();
    loop {
        let growing = std::fs::read_dir(dir.path()).unwrap().any(|e| {
            let e = e.unwrap();
            e.file_name().to_string_lossy().contains(".tmp-")
                && e.metadata().map(|m| m.len() > 0).unwrap_or(false)
        });
        if growing {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "generate ended before it could be interrupted"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let result = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(status), "{stderr}");
    assert!(
        stderr.contains("unfinished output files removed"),
        "{stderr}"
    );
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "left behind");
}

#[test]
fn sigint_removes_the_temporary_file() {
    interrupted_by("INT", 130);
}

#[test]
fn sigterm_removes_the_temporary_file() {
    interrupted_by("TERM", 143);
}
