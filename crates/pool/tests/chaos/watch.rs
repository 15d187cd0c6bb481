//! Fault injection and the watchdog that turns a hang into an abort with the seed.

use super::*;

/// Inject faults until told to stop: transient ones of every kind on every operation,
/// and now and then one file whose writes all fail with ENOSPC for a while.
pub(super) fn inject_faults(sh: &Shared, seed: u64, deadline: Instant) {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xFA17);
    while Instant::now() < deadline && !sh.stop.load(Ordering::Relaxed) {
        let op = [
            FaultOp::Write,
            FaultOp::Read,
            FaultOp::Sync,
            FaultOp::SetLen,
        ][rng.gen_range(0..4)];
        let kind = [FaultKind::Eio, FaultKind::NoSpace, FaultKind::ShortWrite][rng.gen_range(0..3)];
        if rng.gen_bool(0.1) {
            let f = rng.gen_range(0..FILES);
            sh.st.inject_path(
                &sh.files[f].path,
                FaultOp::Write,
                FaultKind::NoSpace,
                0,
                usize::MAX,
            );
            std::thread::sleep(Duration::from_millis(rng.gen_range(1..20)));
            sh.st.clear_faults();
        } else {
            sh.st
                .inject(op, kind, rng.gen_range(0..30), rng.gen_range(1..4));
            std::thread::sleep(Duration::from_millis(rng.gen_range(1..5)));
        }
        if rng.gen_bool(0.05) {
            sh.st.clear_faults();
        }
    }
    sh.st.clear_faults();
}

/// Print to the real stderr (not the test harness's capture) and abort: for hangs, where
/// a panic would leave the stuck threads running and the test never ending.
pub(super) fn abort_hang(cfg: &Config, what: &str) -> ! {
    let _ = writeln!(
        std::io::stderr(),
        "\nchaos: HANG ({what}): no progress for 20 s; seed {} (BUFCACHE_CHAOS_SEED={} \
         replays it)\nconfig: {cfg:?}",
        cfg.seed,
        cfg.seed
    );
    std::process::abort();
}

/// Run `f` on this thread while a watchdog aborts the process if `progress` stops moving.
pub(super) fn watched<T>(
    cfg: &Config,
    what: &str,
    progress: &AtomicU64,
    f: impl FnOnce() -> T,
) -> T {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut last = (progress.load(Ordering::Relaxed), Instant::now());
            while !done.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(20));
                let now = progress.load(Ordering::Relaxed);
                if now != last.0 {
                    last = (now, Instant::now());
                } else if last.1.elapsed() > Duration::from_secs(20) {
                    abort_hang(cfg, what);
                }
            }
        });
        let out = f();
        done.store(true, Ordering::Release);
        out
    })
}
