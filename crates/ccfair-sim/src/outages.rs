//! A rate link's outages (`bottleneck.outages`, a link's `outages`): intervals during which the
//! link sends nothing. Frames wait in its queue (the outage drops nothing; the queue discipline
//! still admits and drops by its own rule); the link's service clock stops over each outage, so a
//! backlogged link loses exactly the outage's length of service, whatever the phase of its frames.
//!
//! Model (token_bucket.rs applies it): the link runs on a service clock
//! `S(t) = t - (outage time before t)`, flat during an outage. The token bucket (tokens, its
//! `full` time) lives in service time: tokens do not accrue while the link is out, the frame
//! in transmission when an outage begins finishes that much later, and a frame whose release
//! falls in an outage or at its start leaves when it ends. Back in real time a service instant
//! `v` is the earliest real instant the link is up at `v` (`real_ns`): after every outage that
//! begins at service time `v` or earlier. Consequences (tests in token_bucket.rs): on a backlogged
//! link every frame after an outage of length L leaves exactly L later; a link idle with a full
//! bucket over an outage sends as it would have; a frame arriving during an outage leaves at
//! its end.
//!
//! Why outages exist: the testbed's userspace bottleneck (ccfair-bottleneck) is a process that now
//! and then does not run for ms, and its link then sends nothing. Each testbed run records those
//! stalls (`testbed.bottleneck.stalls`: `[end, lost]`, a transmission ended at `end` ns after t0
//! and the link then lost `lost` ns of service; docs/testbed.md "Stalls"); `ccfair fidelity` gives
//! the simulator run paired with a kernel run those stalls as the bottleneck's outages
//! `[end, lost]` (the same pairs: an outage `[start, duration]` loses `duration` of service), so
//! both sides compare on the same link service (docs/fidelity.md "Replayed stalls"). The
//! simulator's links have no outages by default. Users also give them to model variable links
//! (handovers, scheduled outages).
//!
//! Input: `[start_ns, duration_ns]` pairs, in time order, not overlapping (one may begin where the
//! previous ends), each duration > 0. Times in ns.

/// The outages of one link, in the time base of the link's token bucket, with the
/// cumulative outage time the service clock needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outages {
    starts_ns: Vec<u64>,
    ends_ns: Vec<u64>,
    /// Total outage time of outages 0..=i.
    total_through_ns: Vec<u64>,
    /// Service time at which outage i begins: `starts_ns[i]` less the outage time before it.
    service_at_start_ns: Vec<u64>,
}

/// Why an outage list is refused: the index of the entry and the message.
pub type OutageError = (usize, String);

impl Outages {
    /// Check `[start_ns, duration_ns]` pairs (see the module header); the error names the entry.
    pub fn check(pairs: &[[u64; 2]]) -> Result<(), OutageError> {
        Self::new(pairs, 0).map(|_| ())
    }

    /// The outages `pairs` (`[start_ns, duration_ns]`, relative to the run's time 0), each shifted by
    /// `offset_ns` (the testbed's bottleneck: its clock at the run's time 0); `None` for none.
    pub fn from_pairs(pairs: &[[u64; 2]], offset_ns: u64) -> Result<Option<Outages>, OutageError> {
        if pairs.is_empty() {
            return Ok(None);
        }
        Self::new(pairs, offset_ns).map(Some)
    }

    fn new(pairs: &[[u64; 2]], offset_ns: u64) -> Result<Outages, OutageError> {
        let n = pairs.len();
        let mut o = Outages {
            starts_ns: Vec::with_capacity(n),
            ends_ns: Vec::with_capacity(n),
            total_through_ns: Vec::with_capacity(n),
            service_at_start_ns: Vec::with_capacity(n),
        };
        let mut total_ns = 0u64;
        for (i, &[start, duration]) in pairs.iter().enumerate() {
            if duration == 0 {
                return Err((i, format!("duration must be > 0 ns, got [{start}, {duration}] ([start_ns, duration_ns])")));
            }
            let Some((s, e)) = offset_ns.checked_add(start).and_then(|s| Some((s, s.checked_add(duration)?))) else {
                return Err((i, format!("[{start}, {duration}] ends beyond 2^64 - 1 ns")));
            };
            if let (Some(&prev_end), Some(&prev_start)) = (o.ends_ns.last(), o.starts_ns.last()) {
                if s < prev_end {
                    let (ps, pe) = (prev_start - offset_ns, prev_end - offset_ns);
                    return Err((
                        i,
                        format!(
                            "starts at {start} ns, before the end of outage {} ([{ps}, {pe}) ns): outages must be in time order \
                             and must not overlap (one may start where the previous ends)",
                            i - 1
                        ),
                    ));
                }
            }
            o.service_at_start_ns.push(s - total_ns);
            total_ns += duration;
            o.starts_ns.push(s);
            o.ends_ns.push(e);
            o.total_through_ns.push(total_ns);
        }
        Ok(o)
    }

    /// The number of outages.
    pub fn len(&self) -> usize {
        self.starts_ns.len()
    }

    /// No outage.
    pub fn is_empty(&self) -> bool {
        self.starts_ns.is_empty()
    }

    /// The link's service clock at real time `t_ns`: `t_ns` less the outage time before it
    /// (constant during an outage).
    pub fn service_ns(&self, t_ns: u64) -> u64 {
        let i = self.starts_ns.partition_point(|&s| s <= t_ns);
        let Some(k) = i.checked_sub(1) else { return t_ns };
        if t_ns < self.ends_ns[k] {
            self.service_at_start_ns[k]
        } else {
            t_ns - self.total_through_ns[k]
        }
    }

    /// The earliest real time at which the link is up with its service clock at `v_ns`: after
    /// every outage that begins at service time `v_ns` or earlier.
    pub fn real_ns(&self, v_ns: u64) -> u64 {
        let j = self.service_at_start_ns.partition_point(|&s| s <= v_ns);
        match j.checked_sub(1) {
            Some(k) => v_ns + self.total_through_ns[k],
            None => v_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_clock_stops_during_an_outage_and_runs_after_it_less_the_time_lost() {
        let o = Outages::from_pairs(&[[1_000, 2_000], [5_000, 1_000]], 0).unwrap().unwrap();
        assert_eq!([o.service_ns(500), o.service_ns(1_000), o.service_ns(2_999), o.service_ns(3_000)], [500, 1_000, 1_000, 1_000]);
        assert_eq!([o.service_ns(4_000), o.service_ns(5_500), o.service_ns(7_000)], [2_000, 3_000, 4_000]);
        // Back in real time: an instant in an outage's service time is its end.
        assert_eq!(
            [o.real_ns(500), o.real_ns(1_000), o.real_ns(2_000), o.real_ns(3_000), o.real_ns(4_000)],
            [500, 3_000, 4_000, 6_000, 7_000]
        );
    }

    #[test]
    fn outages_that_touch_stop_the_clock_over_both() {
        let o = Outages::from_pairs(&[[1_000, 1_000], [2_000, 500]], 0).unwrap().unwrap();
        assert_eq!(o.service_ns(2_200), 1_000);
        assert_eq!(o.real_ns(1_000), 2_500);
    }

    #[test]
    fn an_outage_list_out_of_order_overlapping_or_of_zero_length_is_refused_naming_the_entry() {
        assert_eq!(Outages::check(&[[10, 5], [12, 5]]).unwrap_err().0, 1);
        assert_eq!(Outages::check(&[[10, 5], [3, 1]]).unwrap_err().0, 1);
        assert_eq!(Outages::check(&[[10, 5], [20, 0]]).unwrap_err().0, 1);
        assert_eq!(Outages::check(&[[u64::MAX - 1, 5]]).unwrap_err().0, 0);
        assert!(Outages::check(&[[10, 5], [15, 1]]).is_ok());
        assert_eq!(Outages::from_pairs(&[], 7), Ok(None));
    }

    #[test]
    fn shifted_outages_are_the_same_outages_at_the_offset() {
        let o = Outages::from_pairs(&[[1_000, 2_000]], 1_000_000).unwrap().unwrap();
        assert_eq!(o.service_ns(1_001_500), 1_001_000);
        assert_eq!(o.real_ns(1_001_000), 1_003_000);
    }
}
