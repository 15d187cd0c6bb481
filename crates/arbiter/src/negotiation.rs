//! Counting negotiations as Nelson's Table 2 does: how often a consumer asked another for
//! a page, and how often it got one.

/// Asked and satisfied counts for every ordered pair of consumers.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Negotiations {
    n: usize,
    asked: Vec<u64>,
    satisfied: Vec<u64>,
}

impl Negotiations {
    /// Counters for `n` consumers, all zero.
    pub fn new(n: usize) -> Self {
        Negotiations {
            n,
            asked: vec![0; n * n],
            satisfied: vec![0; n * n],
        }
    }

    /// `requester` needed a page with none free, consulted every other consumer, and
    /// `victim` gave it up (the requester itself when it recycled its own page).
    pub fn record(&mut self, requester: usize, victim: usize) {
        for other in (0..self.n).filter(|&o| o != requester) {
            self.asked[requester * self.n + other] += 1;
        }
        if victim != requester {
            self.satisfied[requester * self.n + victim] += 1;
        }
    }

    /// Times `from` asked `to` for a page.
    pub fn asked(&self, from: usize, to: usize) -> u64 {
        self.asked[from * self.n + to]
    }

    /// Times `to` gave `from` a page.
    pub fn satisfied(&self, from: usize, to: usize) -> u64 {
        self.satisfied[from * self.n + to]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_direction_apart() {
        let mut n = Negotiations::new(2);
        n.record(0, 1);
        n.record(0, 0);
        n.record(1, 0);
        assert_eq!((n.asked(0, 1), n.satisfied(0, 1)), (2, 1));
        assert_eq!((n.asked(1, 0), n.satisfied(1, 0)), (1, 1));
    }
}
