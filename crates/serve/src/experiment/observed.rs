//! `--observed-flushes`: the mirror lines run the one configuration that met every
//! target of issue 15 together (the seventh pass of
//! `docs/experiments/cache-aware-server.md`): the model of the kernel's reclaim with its
//! stale memory-cgroup statistics (`linux:stats_events=true`), told of each flush of the
//! server's cgroup through the `memcg:memcg_flush_stats` tracepoint
//! (`--mirror-flush-events`). The tracepoint needs root and Linux 6.14; where it is
//! missing the experiment says so and its mirror lines run the fresh `linux` model, the
//! default, so that one command runs everywhere and states what it measured.

use super::ExperimentConfig;

/// The mirror policy of the observed-flush lines.
pub const OBSERVED_POLICY: &str = "linux:stats_events=true";
/// What the mirror lines run where the flushes cannot be watched.
pub const FALLBACK_POLICY: &str = "linux";

/// The configuration the experiment runs, and the line of its output that says which
/// mirror that is. `available` is whether the flushes can be watched here (the reason
/// why not otherwise; [`linux::memcg_flushes::available`]). Without `observed_flushes`
/// the configuration is returned as it is, with no note.
pub fn resolve(
    config: &ExperimentConfig,
    available: Result<(), String>,
) -> (ExperimentConfig, Option<String>) {
    let mut c = config.clone();
    if !config.observed_flushes {
        return (c, None);
    }
    let note = match available {
        Ok(()) => {
            c.mirror_policy = OBSERVED_POLICY.into();
            c.mirror_flush_events = true;
            format!(
                "observed flushes: the mirror lines run {OBSERVED_POLICY}, told of the \
                 kernel's statistics flushes of their cgroup (memcg:memcg_flush_stats); \
                 no adaptive mirror lines (they cannot be told)"
            )
        }
        Err(why) => {
            c.mirror_policy = FALLBACK_POLICY.into();
            c.mirror_flush_events = false;
            format!(
                "no flush tracepoint ({why}): the mirror lines run the fresh \
                 {FALLBACK_POLICY} mirror instead of the observed-flush one"
            )
        }
    };
    (c, Some(note))
}

#[cfg(test)]
mod tests {
    use super::super::tests::config;
    use super::super::{plan, Line, Planned, Sweep};
    use super::*;

    /// Where the tracepoint is, the mirror lines watch the flushes with the
    /// stale-statistics model and the adaptive lines are left out; where it is not, the
    /// fresh `linux` mirror runs with every line, and the note says why.
    #[test]
    fn observed_flushes_run_where_the_tracepoint_is_and_the_fresh_mirror_elsewhere() {
        let mut c = config(false, Sweep::ByEstimate);
        // Not asked: nothing changes, nothing is said.
        let (same, note) = resolve(&c, Err("nope".into()));
        assert_eq!(
            (same.mirror_policy.as_str(), same.mirror_flush_events),
            ("clock", false)
        );
        assert_eq!(note, None);

        c.observed_flushes = true;
        let (here, note) = resolve(&c, Ok(()));
        assert_eq!(here.mirror_policy, "linux:stats_events=true");
        assert!(here.mirror_flush_events);
        assert!(note.unwrap().starts_with("observed flushes: "));
        here.validate().unwrap();
        let uniform = &plan(&here, true)[0].runs;
        // fifo, the six estimates, nowait, cachestat, pool: no adaptive mirror.
        assert_eq!(uniform.len(), 10);
        assert!(!uniform
            .iter()
            .any(|r| matches!(r, Planned::Closed(Line::AdaptiveMirror { .. }))));

        let (elsewhere, note) = resolve(&c, Err("not root".into()));
        assert_eq!(elsewhere.mirror_policy, "linux");
        assert!(!elsewhere.mirror_flush_events);
        assert_eq!(
            note.unwrap(),
            "no flush tracepoint (not root): the mirror lines run the fresh linux mirror \
             instead of the observed-flush one"
        );
        assert_eq!(
            plan(&elsewhere, true)[0].runs.len(),
            12,
            "adaptive lines too"
        );
    }
}
