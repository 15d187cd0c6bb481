//! Processes waiting in the buffer cache: for one buffer (its read or write to finish),
//! or for any buffer to become free.
//!
//! A process waits for at most one thing at a time, so every list is threaded through one
//! "next" slot per process: no allocation while a run goes on. Waking a list empties it
//! and yields its processes in the order they started waiting, which is the order their
//! wake-up events are scheduled in (and so part of what makes runs repeatable).

/// No process: the end of a list.
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct List {
    head: u32,
    tail: u32,
}

impl List {
    const EMPTY: List = List {
        head: NONE,
        tail: NONE,
    };
}

/// Every wait list of the cache.
#[derive(Clone, Debug)]
pub(super) struct WaitLists {
    /// Per process: the next process in the same list.
    next: Vec<u32>,
    /// Per buffer: processes waiting for its I/O (grown on demand).
    buffer: Vec<List>,
    /// Processes waiting for any buffer.
    any: List,
}

impl WaitLists {
    /// No one waiting, for `processes` processes.
    pub fn new(processes: usize) -> Self {
        WaitLists {
            next: vec![NONE; processes],
            buffer: Vec::new(),
            any: List::EMPTY,
        }
    }

    /// `pid` waits for buffer `f`'s I/O.
    pub fn wait_for_buffer(&mut self, pid: u32, f: u32) {
        if self.buffer.len() <= f as usize {
            self.buffer.resize(f as usize + 1, List::EMPTY);
        }
        let list = &mut self.buffer[f as usize];
        Self::append(&mut self.next, list, pid);
    }

    /// `pid` waits for any buffer to come free.
    pub fn wait_for_any(&mut self, pid: u32) {
        Self::append(&mut self.next, &mut self.any, pid);
    }

    /// True if no process waits for buffer `f`.
    pub fn none_wait_for(&self, f: u32) -> bool {
        self.buffer
            .get(f as usize)
            .is_none_or(|l| *l == List::EMPTY)
    }

    /// Empty buffer `f`'s list; `wake` is called for each process, first waiter first.
    #[inline]
    pub fn wake_buffer(&mut self, f: u32, wake: impl FnMut(u32)) {
        if let Some(list) = self.buffer.get_mut(f as usize) {
            let head = std::mem::replace(list, List::EMPTY).head;
            Self::drain(&self.next, head, wake);
        }
    }

    /// Empty the any-buffer list; `wake` is called for each process, first waiter first.
    #[inline]
    pub fn wake_any(&mut self, wake: impl FnMut(u32)) {
        let head = std::mem::replace(&mut self.any, List::EMPTY).head;
        Self::drain(&self.next, head, wake);
    }

    fn append(next: &mut [u32], list: &mut List, pid: u32) {
        debug_assert!(
            pid != NONE && (pid as usize) < next.len(),
            "no process {pid}"
        );
        next[pid as usize] = NONE;
        if list.tail == NONE {
            list.head = pid;
        } else {
            next[list.tail as usize] = pid;
        }
        list.tail = pid;
    }

    fn drain(next: &[u32], mut pid: u32, mut wake: impl FnMut(u32)) {
        while pid != NONE {
            let following = next[pid as usize];
            wake(pid);
            pid = following;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn woken_of(w: &mut WaitLists, f: u32) -> Vec<u32> {
        let mut v = Vec::new();
        w.wake_buffer(f, |p| v.push(p));
        v
    }

    #[test]
    fn lists_wake_in_arrival_order_and_empty() {
        let mut w = WaitLists::new(5);
        w.wait_for_buffer(3, 7);
        w.wait_for_any(1);
        w.wait_for_buffer(0, 7);
        w.wait_for_any(4);
        w.wait_for_buffer(2, 2);
        assert!(!w.none_wait_for(7) && w.none_wait_for(3) && w.none_wait_for(100));
        assert_eq!(woken_of(&mut w, 7), [3, 0]);
        assert!(w.none_wait_for(7));
        assert_eq!(woken_of(&mut w, 7), [] as [u32; 0]);
        let mut any = Vec::new();
        w.wake_any(|p| any.push(p));
        assert_eq!(any, [1, 4]);
        assert_eq!(woken_of(&mut w, 2), [2]);
        // Buffers no one ever waited for wake no one.
        assert_eq!(woken_of(&mut w, 50), [] as [u32; 0]);
    }

    #[test]
    fn a_woken_process_can_wait_again() {
        let mut w = WaitLists::new(2);
        w.wait_for_buffer(0, 1);
        w.wait_for_buffer(1, 1);
        let mut again = Vec::new();
        w.wake_buffer(1, |p| again.push(p));
        // Re-queue in the order woken, as processes retrying would.
        for p in again {
            w.wait_for_buffer(p, 1);
        }
        assert_eq!(woken_of(&mut w, 1), [0, 1]);
    }
}
