//! The transmitter of a rate-limited link: a token bucket one frame deep, as
//! Linux's tbf (net/sched/sch_tbf.c, `tbf_dequeue`) and the testbed's
//! userspace bottleneck (crates/ccfair-bottleneck/src/shaper.rs, which uses
//! this type), so that both backends release packets by the same rule.
//!
//! tbf keeps `tokens` (ns of transmission time at the rate) that accrue with
//! time up to the bucket's depth (`buffer`); the packet at the head of its
//! child queue leaves as soon as the tokens cover its length
//! (`psched_l2t_ns(rate, len)`), which they take. Written with `full`, the
//! time at which the bucket is full again (tokens at time t =
//! depth - max(0, full - t)), a head packet of transmission time L that is
//! ready at `now` takes its tokens and leaves at
//!
//! ```text
//! full := max(full, now) + L,   released at max(full - depth, now).
//! ```
//!
//! Consequences (tests below): with a depth of one full frame, a frame that
//! finds the link idle leaves at once (no transmission delay; 1.2112 ms for
//! 1514 bytes at 10 Mbit/s is what a link that delivers at the end of the
//! transmission adds); frames back to back leave one frame time apart; over
//! a busy period the link sends at its rate, at most one bucket ahead of it.
//! The depth is the run's largest data frame: the testbed's `burst_bytes`
//! (python/ccfair/testbed/runner.py) and S0's "token bucket with a one-frame
//! burst". Transmission times are exact: the sub-ns remainder is carried
//! while the link stays busy and dropped when its queue runs empty.
//!
//! With outages (outages.rs; `with_outages`), the same rule runs on the link's
//! service clock, which stops during each outage: `full` is in service time,
//! and a release is taken back to the earliest real time the link is up at it.
//! Without outages the rule above runs as it is (one branch more per release).
//!
//! Times in ns, sizes in bytes, rates in bit/s.

use crate::outages::Outages;

/// A token bucket at `rate_bps`, `depth_ns` deep (see the module header).
#[derive(Debug, Clone)]
pub struct TokenBucket {
    /// Not zero by its type: the division per release needs no test for zero.
    rate_bps: std::num::NonZeroU64,
    /// The bucket's depth as transmission time at the rate.
    depth_ns: u64,
    /// When the bucket is full again: it holds depth - max(0, full - t) of tokens at t.
    full_ns: u64,
    /// Sub-ns remainder of the transmission times so far (numerator mod rate).
    rem: u64,
    /// The link's outages (None: none, the default; then `full_ns` is in real time).
    outages: Option<Box<Outages>>,
}

impl TokenBucket {
    /// A bucket at `rate_bps` holding `depth_bytes`, full at time 0.
    pub fn new(rate_bps: u64, depth_bytes: u64) -> TokenBucket {
        let rate_bps = std::num::NonZeroU64::new(rate_bps).expect("a token bucket needs a rate");
        let depth_ns = (depth_bytes as u128 * 8 * 1_000_000_000 / rate_bps.get() as u128) as u64;
        TokenBucket { rate_bps, depth_ns, full_ns: 0, rem: 0, outages: None }
    }

    /// The same bucket on a link with `outages` (outages.rs; in the time base of `release`'s `now`).
    pub fn with_outages(mut self, outages: Option<Outages>) -> TokenBucket {
        self.outages = outages.map(Box::new);
        self
    }

    /// The bucket's depth, ns of transmission time.
    pub fn depth_ns(&self) -> u64 {
        self.depth_ns
    }

    /// Exact transmission time of `wire_bytes` at the rate, carrying the
    /// sub-ns remainder.
    #[inline]
    pub fn tx_ns(&mut self, wire_bytes: u32) -> u64 {
        let num = wire_bytes as u128 * 8 * 1_000_000_000 + self.rem as u128;
        // The dividend fits in 64 bits for every real packet and rate; a
        // 64-bit division (one instruction for quotient and remainder) is much
        // cheaper than the two 128-bit library calls, with the same result.
        let (q, rem) = match u64::try_from(num) {
            Ok(n) => (n / self.rate_bps, n % self.rate_bps),
            Err(_) => {
                let r = self.rate_bps.get() as u128;
                ((num / r) as u64, (num % r) as u64)
            }
        };
        self.rem = rem;
        q
    }

    /// The head packet of `wire_bytes` is ready at `now`: it takes its tokens
    /// and leaves the link at the returned time (`now` or later).
    #[inline]
    pub fn release(&mut self, now: u64, wire_bytes: u32) -> u64 {
        if self.outages.is_some() {
            return self.release_around_outages(now, wire_bytes);
        }
        self.full_ns = self.full_ns.max(now) + self.tx_ns(wire_bytes);
        self.full_ns.saturating_sub(self.depth_ns).max(now)
    }

    /// `release` on a link with outages: the same rule on the link's service clock (`full_ns` in
    /// service time), the release taken back to the earliest real time the link is up at it.
    #[cold]
    #[inline(never)]
    fn release_around_outages(&mut self, now: u64, wire_bytes: u32) -> u64 {
        let tx_ns = self.tx_ns(wire_bytes);
        let outages = self.outages.as_deref().expect("called with outages");
        let now_s = outages.service_ns(now);
        self.full_ns = self.full_ns.max(now_s) + tx_ns;
        let release_s = self.full_ns.saturating_sub(self.depth_ns).max(now_s);
        outages.real_ns(release_s).max(now)
    }

    /// The queue ran empty: the remainder of the busy period is dropped.
    #[inline]
    pub fn went_idle(&mut self) {
        self.rem = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME_BYTES: u32 = 1514;
    /// 1514 B at 10 Mbit/s.
    const FRAME_NS: u64 = 1_211_200;

    #[test]
    fn a_frame_that_finds_the_link_idle_leaves_without_a_frame_time() {
        // tbf: a full bucket covers one frame, which leaves at once.
        let mut b = TokenBucket::new(10_000_000, FRAME_BYTES as u64);
        assert_eq!(b.release(5_000_000, FRAME_BYTES), 5_000_000);
        // After an idle spell of a frame time or more, again at once.
        b.went_idle();
        assert_eq!(b.release(5_000_000 + FRAME_NS, FRAME_BYTES), 5_000_000 + FRAME_NS);
    }

    #[test]
    fn frames_back_to_back_leave_one_frame_time_apart() {
        let mut b = TokenBucket::new(10_000_000, FRAME_BYTES as u64);
        let t0 = 1_000_000_000;
        let mut ready = t0;
        for k in 0..5 {
            // Each is ready when the one before it has left (the queue is backlogged).
            let d = b.release(ready, FRAME_BYTES);
            assert_eq!(d, t0 + k * FRAME_NS);
            ready = d;
        }
    }

    #[test]
    fn after_a_short_idle_gap_a_frame_waits_for_the_tokens_it_lacks() {
        // The bucket refills at the rate: idle for a third of a frame time
        // after a frame left, a frame waits the other two thirds.
        let mut b = TokenBucket::new(10_000_000, FRAME_BYTES as u64);
        let d0 = b.release(0, FRAME_BYTES);
        assert_eq!(d0, 0, "the bucket is full at time 0");
        let d1 = b.release(d0, FRAME_BYTES);
        b.went_idle();
        let gap = FRAME_NS / 3;
        assert_eq!(b.release(d1 + gap, FRAME_BYTES), d1 + FRAME_NS);
    }

    #[test]
    fn small_packets_on_an_idle_link_share_the_bucket_then_wait() {
        // 66-byte ACK frames: a full 1514-byte bucket lets 22 of them go at
        // once (22 x 66 = 1452); the 23rd waits for its missing tokens.
        let mut b = TokenBucket::new(10_000_000, FRAME_BYTES as u64);
        let now = 1_000_000_000;
        for _ in 0..22 {
            assert_eq!(b.release(now, 66), now);
        }
        let d = b.release(now, 66);
        assert!(d > now && d - now == (23 * 66 - FRAME_BYTES as u64) * 800, "{d}");
    }

    #[test]
    fn over_a_busy_period_the_link_sends_at_its_rate_at_most_one_bucket_ahead() {
        // Conservation: n frames of a backlog leave within n x size / rate of the
        // first one's start; at a rate that does not divide the frame size the
        // carried remainder keeps the total exact to the ns.
        for rate in [10_000_000u64, 7_000_000, 123_456_789] {
            let mut b = TokenBucket::new(rate, FRAME_BYTES as u64);
            let t0 = 3_000_000_000;
            let n = 10_000u64;
            let mut last = t0;
            for _ in 0..n {
                last = b.release(last, FRAME_BYTES);
            }
            let exact_ns = (n as u128 * FRAME_BYTES as u128 * 8_000_000_000 / rate as u128) as u64;
            // The first frame's tokens were in the full bucket: it left at t0, a
            // depth earlier than a link that starts empty would let it.
            assert_eq!(last + b.depth_ns() - t0, exact_ns, "rate {rate}");
        }
    }

    /// Departures of `n` back-to-back frames of a backlog ready at `t0` on `bucket`.
    fn backlog_departures(mut bucket: TokenBucket, t0: u64, n: usize) -> Vec<u64> {
        let mut ready = t0;
        (0..n)
            .map(|_| {
                ready = bucket.release(ready, FRAME_BYTES);
                ready
            })
            .collect()
    }

    fn with_outages(pairs: &[[u64; 2]]) -> TokenBucket {
        TokenBucket::new(10_000_000, FRAME_BYTES as u64).with_outages(Outages::from_pairs(pairs, 0).unwrap())
    }

    #[test]
    fn a_backlogged_link_loses_exactly_the_length_of_an_outage_whatever_the_phase_of_its_frames() {
        // Conservation: the service clock stops for L, so every frame that had not left when the
        // outage began leaves exactly L later, and over any span after it the link has sent
        // L x rate fewer bytes; the frames before it are untouched. Outage starts at 0, a third,
        // a half of a frame time and exactly at a departure.
        let t0 = 1_000_000_000;
        let plain = backlog_departures(TokenBucket::new(10_000_000, FRAME_BYTES as u64), t0, 200);
        for (offset_ns, len_ns) in [(0, 3_000_000), (FRAME_NS / 3, 3_000_000), (FRAME_NS / 2, 50_000), (FRAME_NS, 7_777_777)] {
            let start = t0 + 40 * FRAME_NS + offset_ns;
            let got = backlog_departures(with_outages(&[[start, len_ns]]), t0, 200);
            for (k, (&a, &b)) in plain.iter().zip(&got).enumerate() {
                let want = if a < start { a } else { a + len_ns };
                assert_eq!(b, want, "frame {k}, outage [{start}, +{len_ns})");
            }
        }
    }

    #[test]
    fn an_outage_on_an_idle_link_with_a_full_bucket_changes_nothing() {
        // Frames 20 ms apart (the bucket refills between them); outages in the gaps.
        let arrivals: Vec<u64> = (0..10).map(|k| 5_000_000 + k * 20_000_000).collect();
        let mut plain = TokenBucket::new(10_000_000, FRAME_BYTES as u64);
        let mut out = with_outages(&[[10_000_000, 5_000_000], [50_000_000, 14_000_000]]);
        for &t in &arrivals {
            let (a, b) = (plain.release(t, FRAME_BYTES), out.release(t, FRAME_BYTES));
            plain.went_idle();
            out.went_idle();
            assert_eq!((a, b), (t, t));
        }
    }

    #[test]
    fn a_frame_ready_during_an_outage_is_held_until_it_ends_then_the_link_sends_at_its_rate() {
        let mut b = with_outages(&[[2_000_000, 3_000_000]]);
        assert_eq!(b.release(2_500_000, FRAME_BYTES), 5_000_000, "held to the end of the outage");
        assert_eq!(b.release(5_000_000, FRAME_BYTES), 5_000_000 + FRAME_NS, "then one frame time apart");
        // A frame ready exactly when an outage starts waits for it too.
        let mut b = with_outages(&[[2_000_000, 3_000_000]]);
        assert_eq!(b.release(2_000_000, FRAME_BYTES), 5_000_000);
    }

    #[test]
    fn outages_after_the_traffic_or_none_at_all_give_the_plain_buckets_times() {
        let t0 = 1_000_000_000;
        let plain = backlog_departures(TokenBucket::new(10_000_000, FRAME_BYTES as u64), t0, 500);
        assert_eq!(backlog_departures(with_outages(&[[t0 + 10_000_000_000, 1]]), t0, 500), plain);
        assert_eq!(backlog_departures(with_outages(&[]), t0, 500), plain);
    }
}
