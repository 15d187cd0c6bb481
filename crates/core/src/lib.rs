//! Small pieces shared by the policy crate and the simulator, with no policy logic in them.
//!
//! Both need maps keyed by `u64` values that come from traces (block numbers, page keys,
//! graph-write ids), and both promise that the same input gives the same output, down to
//! the order in which tables grow and allocate. So they hash with one fixed function
//! instead of the standard library's per-process random seed:
//!
//! * [`mix`] — the hash itself (MurmurHash3's 64-bit finalizer);
//! * [`MixHasher`] / [`FixedState`] — that hash as a [`std::hash::Hasher`], for any map or
//!   set;
//! * [`FixedHashMap`] — the `u64`-keyed map almost every user wants;
//! * [`ordering::Checker`] — the write-ordering checker the simulator and the pool's crash
//!   enumeration share (one checker, so both prove the same promises).
//!
//! The policy crate's key maps (dense arrays, its open-addressing key index) build on [`mix`];
//! the simulator's buffer table, write-ordering graphs and trace conversion use
//! [`FixedHashMap`] directly.
//!
//! ```
//! use bufcache_core::{mix, FixedHashMap};
//!
//! let mut m: FixedHashMap<&str> = FixedHashMap::default();
//! m.insert(7, "seven");
//! assert_eq!(m.get(&7), Some(&"seven"));
//! // the hash is a pure function of the key: the same in every run and every process
//! assert_eq!(mix(7), mix(7));
//! assert_ne!(mix(7), mix(8));
//! ```

mod hash;
pub mod ordering;

pub use hash::{mix, FixedHashMap, FixedState, MixHasher};
