//! Virtual time: the clock's instants ([`VTime`]) and durations ([`Nanos`]).
//!
//! An instant is a [`VTime`], a count of nanoseconds since the start of the run that can
//! only move forward through [`VTime::later`], which stops at [`VTime::END`] (2^64 − 1 ns,
//! about 584 years) instead of wrapping around into the past. There is no `Add` and no
//! way to subtract past zero: wrapping time arithmetic cannot be written. The engine runs
//! no event due at the end of time: the flusher's wake-up is dropped, anything else stops
//! the run with [`super::RunError::TimeOverflow`].
//!
//! Durations stay plain [`Nanos`] (`u64`), as workloads write them (`Op::Compute`, a
//! script's delays); they enter the clock only through [`VTime::later`].

/// A duration in nanoseconds (compute times, service times, CPU costs).
pub type Nanos = u64;

/// Nanoseconds per second, for reports.
pub const NS_PER_S: f64 = 1e9;

/// Where the clock ends, in nanoseconds: 2^64 − 1, about 584 years ([`VTime::END`]).
pub const END_OF_TIME: Nanos = Nanos::MAX;

/// An instant of virtual time: nanoseconds since the run started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VTime(Nanos);

impl VTime {
    /// The start of a run.
    pub const ZERO: VTime = VTime(0);
    /// The end of the clock ([`END_OF_TIME`]); additions stop here.
    pub const END: VTime = VTime(END_OF_TIME);

    /// The instant `ns` nanoseconds after the start.
    #[inline]
    pub const fn from_ns(ns: Nanos) -> Self {
        VTime(ns)
    }

    /// Nanoseconds since the start.
    #[inline]
    pub const fn as_ns(self) -> Nanos {
        self.0
    }

    /// Seconds since the start, for reports.
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S
    }

    /// `delay` after this instant, or [`VTime::END`] if that is past the clock's end.
    /// Every event time the engine and the disks compute goes through here.
    #[inline]
    #[must_use]
    pub fn later(self, delay: Nanos) -> VTime {
        VTime(self.0.saturating_add(delay))
    }

    /// The time from `earlier` to this instant (0 if `earlier` is not earlier).
    #[inline]
    pub fn since(self, earlier: VTime) -> Nanos {
        debug_assert!(earlier <= self, "{earlier:?} is after {self:?}");
        self.0.saturating_sub(earlier.0)
    }

    /// True at the end of the clock, where no event may run.
    #[inline]
    pub fn is_end(self) -> bool {
        self == VTime::END
    }
}

/// `value` units of `ns_per_unit` nanoseconds (as written in configurations), rounded to
/// whole nanoseconds, if the clock can hold it: zero or more and before [`END_OF_TIME`].
/// Otherwise the message says what is allowed. Validation calls this so that a duration
/// that cannot be represented is refused up front, where the plain conversion (`as
/// Nanos`) would silently clamp it to 0 or to the end of time.
pub fn check_time(value: f64, ns_per_unit: f64, unit: &str) -> Result<Nanos, String> {
    let ns = (value * ns_per_unit).round();
    // NaN fails both comparisons; END_OF_TIME as f64 is 2^64, so `ns` below it fits.
    if value >= 0.0 && ns < END_OF_TIME as f64 {
        Ok(ns as Nanos)
    } else {
        Err(format!(
            "must be zero or more {unit} and less than {} (2^64 ns, where the simulator's clock ends), got {value}",
            END_OF_TIME as f64 / ns_per_unit
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_the_clock_cannot_hold_are_refused() {
        assert_eq!(check_time(1.5, 1e9, "seconds"), Ok(1_500_000_000));
        assert_eq!(check_time(0.0, 1e9, "seconds"), Ok(0));
        assert_eq!(
            check_time(18e9, 1e9, "seconds"),
            Ok(18_000_000_000_000_000_000)
        );
        for bad in [-1.0, -1e-12, 18.5e9, 1e300, f64::INFINITY, f64::NAN] {
            let e = check_time(bad, 1e9, "seconds").unwrap_err();
            assert!(e.contains("seconds and less than 18446744073.7"), "{e}");
        }
    }

    #[test]
    fn later_stops_at_the_end_of_the_clock() {
        let t = VTime::from_ns(10);
        assert_eq!(t.later(5), VTime::from_ns(15));
        assert_eq!(t.later(0), t);
        assert_eq!(VTime::from_ns(END_OF_TIME - 3).later(3), VTime::END);
        assert_eq!(VTime::from_ns(END_OF_TIME - 3).later(4), VTime::END);
        assert_eq!(VTime::END.later(u64::MAX), VTime::END);
        assert!(VTime::END.is_end() && !VTime::from_ns(END_OF_TIME - 1).is_end());
    }

    #[test]
    fn durations_between_instants() {
        let (a, b) = (VTime::from_ns(7), VTime::from_ns(19));
        assert_eq!(b.since(a), 12);
        assert_eq!(a.since(a), 0);
        assert_eq!(VTime::END.since(VTime::ZERO), END_OF_TIME);
        assert_eq!(VTime::from_ns(1_500_000_000).as_secs_f64(), 1.5);
    }
}
