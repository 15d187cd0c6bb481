//! How a run's configuration is drawn from its seed, and the pool it builds.

use super::*;
use policy::Policy as _;

/// Every registered policy the pool can run (all but the offline ones), straight from the
/// registry: a new policy is in this test the moment it is registered.
fn policies() -> Vec<&'static str> {
    policy::POLICIES
        .iter()
        .filter(|info| {
            let built = policy::PolicySpec::parse(info.name)
                .and_then(|spec| spec.build(&policy::BuildContext::new(64, 0)))
                .unwrap_or_else(|e| panic!("{}: default build: {e}", info.name));
            built.hit_path() != policy::HitPath::Offline
        })
        .map(|info| info.name)
        .collect()
}

impl Config {
    pub(super) fn draw(seed: u64) -> Config {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0xC4A0_5EED);
        let storage = match rng.gen_range(0..4) {
            0 => StorageKind::DirectFiles,
            1 => StorageKind::BufferedFiles,
            _ => StorageKind::Memory,
        };
        // Memory storage can still run the pool's O_DIRECT logic (whole-page writes, trims).
        let io = match storage {
            StorageKind::DirectFiles => IoMode::Direct,
            StorageKind::BufferedFiles => IoMode::Buffered,
            StorageKind::Memory if rng.gen_bool(0.5) => IoMode::Direct,
            StorageKind::Memory => IoMode::Buffered,
        };
        let write_policy = match rng.gen_range(0..4) {
            0 => WritePolicy::WriteThrough,
            1 => WritePolicy::WriteBack {
                interval: Duration::from_millis(50),
                age: Duration::from_millis(100),
            },
            _ => WritePolicy::WriteBack {
                interval: Duration::from_micros(500),
                age: Duration::ZERO,
            },
        };
        let read_ahead = rng.gen_range(0..4);
        Config {
            seed,
            policy: {
                let all = policies();
                all[rng.gen_range(0..all.len())]
            },
            lookup: if rng.gen_bool(0.5) {
                Lookup::Mapped
            } else {
                Lookup::Hashed
            },
            storage,
            io,
            write_policy,
            read_ahead,
            page_size: if rng.gen_bool(0.8) { 4096 } else { 8192 },
            // far fewer frames than the three files' pages: most misses evict
            frames: THREADS * (MAX_HELD + 1) + read_ahead + rng.gen_range(2..12),
            faults: rng.gen_bool(0.5),
            // Drawn last, so the other fields of a seed are what they were before filters.
            admission: if rng.gen_bool(0.5) {
                None
            } else {
                let all = policy::ADMITTERS;
                Some(all[rng.gen_range(0..all.len())].name)
            },
        }
    }

    pub(super) fn build(&self, st: &RecordingStorage) -> BufferPool {
        let builder = match self.admission {
            Some(a) => BufferPool::builder().admission(a),
            None => BufferPool::builder(),
        };
        builder
            .capacity_frames(self.frames)
            .page_size(self.page_size)
            .pin_limit(THREADS * (MAX_HELD + 1))
            .read_ahead(self.read_ahead)
            .lookup(self.lookup)
            .policy(self.policy)
            .io_mode(self.io)
            .write_policy(self.write_policy)
            .seed(self.seed)
            .build_with_storage(st.clone())
            .unwrap_or_else(|e| panic!("{self:?}: build: {e}"))
    }
}
