//! Every policy by name: the one place a new policy is registered.
//!
//! Adding a policy takes two edits: its own file (a type implementing [`Policy`] and
//! [`NamedPolicy`]) and one line in the `policies!` list in `lib.rs`. The list declares
//! the policy's module and re-exports its type, and generates [`AnyPolicy`] (runtime
//! choice by name) and [`POLICIES`] (the catalogue behind `bufcache policies`). Hot loops
//! stay monomorphic through [`PolicyVisitor`].
//!
//! ```
//! use policy::{BuildContext, Cache, PolicySpec, Access};
//!
//! let spec = PolicySpec::parse("lru").unwrap();
//! let ctx = BuildContext::new(100, 7);
//! let mut cache = Cache::new(spec.build(&ctx).unwrap(), 100);
//! assert!(!cache.access(&Access::unit(1, 0)).is_hit());
//! assert!(cache.access(&Access::unit(1, 1)).is_hit());
//! assert!(PolicySpec::parse("lru:nonsense=1").unwrap().build(&ctx).is_err());
//! ```

use crate::params::{ConfigError, ParamInfo, Params};
use crate::Policy;
pub use crate::{AnyPolicy, POLICIES};

/// What every policy is built from besides its own parameters.
#[derive(Clone, Copy, Debug, Default)]
pub struct BuildContext {
    /// Capacity in units (objects, or bytes when sizes are bytes).
    pub capacity: u64,
    /// Root seed for policies that draw random numbers.
    pub seed: u64,
    /// `Some(n)` when every key the policy will see is a dense id below `n` (the replay
    /// engine numbers a trace's objects); policies then find ghost entries by indexing an
    /// array instead of hashing. `None` for arbitrary keys.
    pub key_space: Option<u64>,
    /// `Some` when the policy is a miniature cache of a spatially sampled trace
    /// (`sim::mrc::minisim`): it stands for a cache of [`Miniature::capacity`] units on
    /// the whole trace, and its driver tells it each request's place in the trace
    /// ([`Policy::set_trace_clock`]). Policies whose adaptive state is paced by request
    /// counts (W-TinyLFU's sketch and hill climber) then pace it by the trace instead.
    pub miniature: Option<Miniature>,
}

/// What a miniature cache stands for ([`BuildContext::miniature`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Miniature {
    /// The fraction of the trace's keys the sample holds.
    pub rate: f64,
    /// The full-size capacity the miniature stands for, in the same units.
    pub capacity: u64,
}

impl BuildContext {
    /// A context for arbitrary keys.
    pub fn new(capacity: u64, seed: u64) -> Self {
        BuildContext {
            capacity,
            seed,
            key_space: None,
            miniature: None,
        }
    }

    /// Declare that the policy is a miniature standing for `capacity` units of the whole
    /// trace, sampled at `rate` ([`BuildContext::miniature`]).
    pub fn with_miniature(mut self, rate: f64, capacity: u64) -> Self {
        self.miniature = Some(Miniature { rate, capacity });
        self
    }

    /// Declare that keys are dense ids below `keys`.
    pub fn with_key_space(mut self, keys: u64) -> Self {
        self.key_space = Some(keys);
        self
    }
}

/// A policy that can be built by name.
pub trait NamedPolicy: Policy + Clone + Send + Sized {
    /// Short stable name (`lru`, `s3fifo`).
    const NAME: &'static str;
    /// One line: what it is and where it comes from.
    const SUMMARY: &'static str;
    /// Parameters with defaults.
    const PARAMS: &'static [ParamInfo];
    /// Whether the policy draws on [`BuildContext::seed`], so that two builds with
    /// different seeds may choose different victims for the same requests. Everything
    /// else must be a pure function of its requests (a test in `tests/invariants.rs`
    /// holds every registered policy to what it declares here).
    const SEEDED: bool = false;
    /// Whether the policy hashes or reads key values itself (a sketch, a filter, a page
    /// number in the key's bits), so that its choices depend on the key values and not
    /// only on which requests repeat: renumbering the
    /// keys of a trace (the replay engine's dense ids) may then change its results.
    const HASHES_KEYS: bool = false;
    /// Build for `ctx.capacity` with validated parameters.
    fn build(ctx: &BuildContext, params: &Params) -> Result<Self, ConfigError>;
}

/// Catalogue entry for one policy.
#[derive(Clone, Copy)]
pub struct PolicyInfo {
    /// Short name.
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// Parameters with defaults.
    pub params: &'static [ParamInfo],
    /// See [`NamedPolicy::SEEDED`].
    pub seeded: bool,
    /// See [`NamedPolicy::HASHES_KEYS`].
    pub hashes_keys: bool,
    pub(crate) build: fn(&BuildContext, &Params) -> Result<AnyPolicy, ConfigError>,
}

impl std::fmt::Debug for PolicyInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyInfo")
            .field("name", &self.name)
            .finish()
    }
}

/// Runs generic code on whichever concrete policy an [`AnyPolicy`] holds, so that hot loops
/// are compiled once per policy instead of dispatching on every call.
pub trait PolicyVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the concrete policy.
    fn visit<P: Policy + Clone + Send + 'static>(self, policy: P) -> Self::Output;
}

/// Declares every policy: `Variant => [pub] module::Type` per line. Emits the modules and
/// the re-exports, [`AnyPolicy`], [`POLICIES`] and `AnyPolicy`'s dispatch. Invoked once,
/// in `lib.rs`.
macro_rules! policies {
    ($($variant:ident => $vis:vis $module:ident :: $ty:ident),* $(,)?) => {
        $(
            $vis mod $module;
            pub use $module::$ty;
        )*

        /// Any registered policy, chosen at run time.
        #[derive(Clone, Debug)]
        #[allow(clippy::large_enum_variant)]
        pub enum AnyPolicy {
            $(
                #[doc = concat!("`", stringify!($ty), "`")]
                $variant($ty)
            ),*
        }

        /// Every registered policy, in the order `bufcache policies` lists them.
        pub static POLICIES: &[$crate::registry::PolicyInfo] = &[
            $($crate::registry::PolicyInfo {
                name: <$ty as $crate::registry::NamedPolicy>::NAME,
                summary: <$ty as $crate::registry::NamedPolicy>::SUMMARY,
                params: <$ty as $crate::registry::NamedPolicy>::PARAMS,
                seeded: <$ty as $crate::registry::NamedPolicy>::SEEDED,
                hashes_keys: <$ty as $crate::registry::NamedPolicy>::HASHES_KEYS,
                build: |ctx, params| {
                    Ok(AnyPolicy::$variant(<$ty as $crate::registry::NamedPolicy>::build(ctx, params)?))
                },
            }),*
        ];

        impl AnyPolicy {
            /// Hand the concrete policy to `visitor`.
            pub fn visit<V: $crate::registry::PolicyVisitor>(self, visitor: V) -> V::Output {
                match self { $(AnyPolicy::$variant(p) => visitor.visit(p)),* }
            }
        }

        impl Policy for AnyPolicy {
            fn name(&self) -> &'static str {
                match self { $(AnyPolicy::$variant(p) => p.name()),* }
            }
            fn len(&self) -> usize {
                match self { $(AnyPolicy::$variant(p) => p.len()),* }
            }
            #[inline]
            fn on_hit(&mut self, frame: FrameId, access: &Access) {
                match self { $(AnyPolicy::$variant(p) => p.on_hit(frame, access)),* }
            }
            #[inline]
            fn on_insert(&mut self, frame: FrameId, access: &Access) {
                match self { $(AnyPolicy::$variant(p) => p.on_insert(frame, access)),* }
            }
            #[inline]
            fn evict(&mut self, incoming: &Access, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
                match self { $(AnyPolicy::$variant(p) => p.evict(incoming, evictable)),* }
            }
            fn remove(&mut self, frame: FrameId) {
                match self { $(AnyPolicy::$variant(p) => p.remove(frame)),* }
            }
            fn victims(&self, n: usize, evictable: &dyn Fn(FrameId) -> bool, out: &mut Vec<FrameId>) {
                match self { $(AnyPolicy::$variant(p) => p.victims(n, evictable, out)),* }
            }
            fn needs_future(&self) -> bool {
                match self { $(AnyPolicy::$variant(p) => p.needs_future()),* }
            }
            fn hit_path(&self) -> $crate::HitPath {
                match self { $(AnyPolicy::$variant(p) => p.hit_path()),* }
            }
            fn contests(&self) -> bool {
                match self { $(AnyPolicy::$variant(p) => p.contests()),* }
            }
            fn contest(&mut self, incoming: &Access, victim: FrameId) -> $crate::Verdict {
                match self { $(AnyPolicy::$variant(p) => p.contest(incoming, victim)),* }
            }
            fn set_capacity(&mut self, capacity: u64) {
                match self { $(AnyPolicy::$variant(p) => p.set_capacity(capacity)),* }
            }
            fn set_wall_clock(&mut self, now_ms: u64) {
                match self { $(AnyPolicy::$variant(p) => p.set_wall_clock(now_ms)),* }
            }
            #[inline]
            fn set_trace_clock(&mut self, position: u64) {
                match self { $(AnyPolicy::$variant(p) => p.set_trace_clock(position)),* }
            }
            fn miniature_samples(&self) -> u64 {
                match self { $(AnyPolicy::$variant(p) => p.miniature_samples()),* }
            }
            fn flush_stats(&mut self) {
                match self { $(AnyPolicy::$variant(p) => p.flush_stats()),* }
            }
            fn wants_flush_events(&self) -> bool {
                match self { $(AnyPolicy::$variant(p) => p.wants_flush_events()),* }
            }
        }
    };
}

/// Look up a policy by its short name.
pub fn info(name: &str) -> Option<&'static PolicyInfo> {
    POLICIES.iter().find(|p| p.name == name)
}

/// A policy name with parameters, as written on the command line: `name[:param=value...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicySpec {
    /// Short name.
    pub name: String,
    /// `(param, value)` pairs in the order given.
    pub params: Vec<(String, String)>,
}

impl PolicySpec {
    /// Parse `name[:param=value...]`. Names are checked by [`PolicySpec::build`].
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let (name, params) = crate::params::split_spec(text)?;
        Ok(PolicySpec { name, params })
    }

    /// The spec as it would be written, with parameters (for reports).
    pub fn label(&self) -> String {
        crate::params::join_spec(&self.name, &self.params)
    }

    /// Build the policy for `ctx`.
    pub fn build(&self, ctx: &BuildContext) -> Result<AnyPolicy, ConfigError> {
        let info = info(&self.name).ok_or_else(|| ConfigError::UnknownPolicy {
            name: self.name.clone(),
            known: POLICIES
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        let params = Params::new(info.name, info.params, self.params.clone())?;
        (info.build)(ctx, &params)
    }
}

impl std::str::FromStr for PolicySpec {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PolicySpec::parse(s)
    }
}

impl std::fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}
