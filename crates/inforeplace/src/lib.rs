//! InfoReplace: an application turns the cache's replacement policy into the one it needs
//! (Burnett 2006, thesis ch.3).
//!
//! A *source* is a cache that can list its next victims and raises a page's priority when
//! the page is read ([`Source`]): the buffer pool ([`PoolSource`]), a simulated cache of
//! any policy ([`SimSource`]), or the unmodified Linux page cache through an algorithmic
//! mirror ([`PageCacheSource`] over a [`KernelFile`]). A *target* is any online policy of the policy crate,
//! PinRange included. [`InfoReplace`] simulates the target on every access, watches the
//! source's victim list, and re-reads the pages the target wants kept before the source
//! can evict them; [`Overhead`] splits its cost as the thesis's Figure 3.1 does.
//!
//! ```
//! use inforeplace::{InfoReplace, PageKey, SimSource};
//!
//! // MRU emulated over an LRU cache of 3 pages: a loop over 4 pages keeps hitting.
//! let source = SimSource::new("lru", 3, 0)?;
//! let mut info = InfoReplace::new(source, "mru")?;
//! let mut hits = 0;
//! for _ in 0..3 {
//!     for page in 0..4 {
//!         let p = PageKey { file: 0, page };
//!         info.before_access(p)?;
//!         hits += u32::from(info.source_mut().access(p)?);
//!     }
//! }
//! assert_eq!(hits, 6); // as MRU itself; LRU alone hits none
//! assert_eq!(info.inaccuracy()?, 0.0);
//! // FIFO ignores hits: nothing can be steered.
//! assert!(InfoReplace::new(SimSource::new("fifo", 3, 0)?, "lru").is_err());
//! # Ok::<(), inforeplace::InfoReplaceError>(())
//! ```

mod control;
mod error;
pub mod experiment;
pub mod kernel;
mod mirror_source;
mod overhead;
mod pool_source;
mod sim_source;
mod source;

pub use control::{Config, InfoReplace};
pub use error::{InfoReplaceError, SourceError};
pub use kernel::{KernelFile, PageCacheFile, ReadHow};
pub use mirror_source::{Agreement, KernelCalls, Levers, PageCacheSource};
pub use overhead::{Overhead, Part};
pub use pool_source::{FileNo, PoolSource};
pub use sim_source::SimSource;
pub use source::{PageKey, Source};
