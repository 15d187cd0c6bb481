//! The process's own heap, where it competes with the page cache for one memory cgroup.
//!
//! A server that reads whole files into buffers of a megabyte frees them a moment later.
//! glibc serves blocks that large with `mmap` at first, but raises its threshold to the
//! size of each such block freed, after which they come from the heap's arenas, which
//! keep freed memory instead of returning it. In the cache-aware server's experiment the
//! server's resident memory then grew from 8 to 18-27 MiB over a run, inside the cgroup
//! that bounds the page cache, so the page cache shrank by as much while the mirror
//! went on simulating a cache of fixed size. With a fixed threshold, large blocks always
//! come from `mmap` and go back at `free`: the server's memory stays at its working size
//! (3-8 MiB there) and the page cache at what the cgroup leaves it.

#![allow(unsafe_code)]

/// Blocks of at least `bytes` are mapped on their own and unmapped when freed, for the
/// rest of the process's life (glibc's `M_MMAP_THRESHOLD`, which also stops glibc from
/// moving the threshold). Returns whether the allocator took the setting: `false` on other
/// C libraries, for a value that is no C `int`, or for one glibc refuses.
pub fn return_large_blocks(bytes: usize) -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let Ok(value) = libc::c_int::try_from(bytes) else {
            return false;
        };
        // SAFETY: mallopt only sets an allocator parameter; it takes plain integers and
        // touches no memory of ours. It may be called at any time, from any thread.
        unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, value) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = bytes;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_takes_a_threshold_and_large_blocks_still_work() {
        assert!(!return_large_blocks(usize::MAX), "no C int");
        if cfg!(all(target_os = "linux", target_env = "gnu")) {
            assert!(return_large_blocks(256 << 10));
            // Large allocations still work, and are zeroed, freed and made again.
            for _ in 0..3 {
                let mut v = vec![0u8; 1 << 20];
                assert!(v.iter().all(|&b| b == 0));
                v[12345] = 7;
                assert_eq!(v.iter().map(|&b| u64::from(b)).sum::<u64>(), 7);
            }
        }
    }
}
