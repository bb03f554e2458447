//! Delay lines: every propagation delay of the dumbbell (sim.rs) is a FIFO
//! line. A packet pushed at `now` arrives at `now + delay` (plus optional
//! per-packet host noise, `HostJitter`, which never reorders: a host's queue
//! is FIFO), so a line keeps its packets in a ring buffer (ring.rs), each one's arrival
//! time in its `Packet::enqueue_ns`, and only its head is in the event heap
//! (engine.rs): the heap holds O(flows) entries whatever the window sizes.
//!
//! `DelayLine` is one flow's line (or the bottleneck's output line).
//! `SharedLines` puts the lines of thousands of flows of one delay (no host
//! noise) into one FIFO and one heap entry, with exactly the per-flow lines'
//! event order (same seed, same bits; see its comment and docs/benchmarks.md,
//! "shared delay lines").
//!
//! The lines are generic over the simulation's event type `E`: a line only
//! schedules its own head event.

use crate::engine::{EventQueue, TimeNs};
use crate::packet::Packet;
use crate::ring::Ring;
use crate::rng::stream_rng;
use rand::Rng;
use rand_distr::Exp1;
use rand_pcg::Pcg64Mcg;

pub(crate) struct DelayLine {
    delay_ns: u64,
    /// Packets in arrival order; each one's arrival time is in its
    /// `enqueue_ns` (`Packet::enqueue_ns`: no separate time per entry).
    q: Ring<Packet>,
    /// Host noise: (mean extra delay per packet, its random stream), see `HostJitter`.
    jitter: Option<HostJitter>,
    /// Arrival time of the last packet pushed (FIFO: nobody overtakes it).
    last_at: TimeNs,
}

/// Per-packet host processing/scheduling delay on a delay line: exponential
/// with mean `mean_ns`, drawn from the flow's own stream; a packet never
/// overtakes the one before it (a host's queue is FIFO), so order is kept.
///
/// The draw is `rand_distr::Exp1`, the ziggurat method (Marsaglia, Tsang,
/// "The Ziggurat Method for Generating Random Variables", J. Stat. Softw.
/// 5(8), 2000): one 64-bit draw and a table lookup in ~99 % of the cases,
/// instead of a logarithm per packet (the inverse transform -mean x ln(U)
/// used before cost ~6 % of an S0 run). Same law, different draws: results
/// with host noise changed bits when this was introduced
/// (docs/benchmarks.md); the test `host_jitter_is_exponential_with_its_mean`
/// checks the law.
struct HostJitter {
    mean_ns: u64,
    rng: Pcg64Mcg,
}

impl HostJitter {
    fn draw_ns(&mut self) -> u64 {
        let x: f64 = self.rng.sample(Exp1);
        (self.mean_ns as f64 * x) as u64
    }
}

impl DelayLine {
    pub(crate) fn new(delay_ns: u64) -> DelayLine {
        DelayLine { delay_ns, q: Ring::new(), jitter: None, last_at: 0 }
    }

    /// A line whose packets each get an extra host delay (mean `mean_ns`; 0 = none).
    pub(crate) fn with_jitter(delay_ns: u64, mean_ns: u64, seed: u64, stream_id: u64) -> DelayLine {
        let mut l = DelayLine::new(delay_ns);
        if mean_ns > 0 {
            l.jitter = Some(HostJitter { mean_ns, rng: stream_rng(seed, stream_id) });
        }
        l
    }

    /// Append `p`, sent at `now`; if the line was empty, schedule `head` (this
    /// line's event) for its arrival. (A line of one flow; `SharedLines::push`
    /// for shared ones; not inlined, as before the draw moved out, so that
    /// the callers keep their size.)
    #[inline(never)]
    pub(crate) fn push<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, p: Packet, head: E) {
        let mut at = now + self.delay_ns;
        if self.jitter.is_some() {
            at = self.with_host_noise(at);
        }
        if self.q.is_empty() {
            q.schedule(at, head);
        }
        // The time is written in place, after the copy: written into `p`
        // first, its 8-byte store would make the copy's 16-byte loads wait
        // (no store-to-load forwarding across the two sizes).
        self.q.push_back(p);
        self.q.back_mut().expect("just pushed").enqueue_ns = at;
    }

    /// Arrival time `at` plus a host-noise draw, after the previous arrival.
    /// Out of line, so that `push` holds only the path without host noise
    /// (S0 base 0.988 CPU time with the same instructions (+0.2 %),
    /// grid configs with host noise 1.000-1.008; an effect of code placement,
    /// docs/benchmarks.md).
    #[inline(never)]
    fn with_host_noise(&mut self, at: TimeNs) -> TimeNs {
        let j = self.jitter.as_mut().expect("a line with host noise");
        let at = (at + j.draw_ns()).max(self.last_at);
        self.last_at = at;
        at
    }

    /// A packet pushed now would arrive now, first in line (no delay, no
    /// host noise, nothing queued).
    pub(crate) fn delivers_now(&self) -> bool {
        self.delay_ns == 0 && self.jitter.is_none() && self.q.is_empty()
    }

    /// Take the head, which arrives now; schedule `head` for the next one.
    pub(crate) fn pop<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, head: E) -> Packet {
        let p = self.q.pop_front().expect("line event with empty line");
        debug_assert_eq!(p.enqueue_ns, now);
        if let Some(next) = self.q.front() {
            q.schedule(next.enqueue_ns, head);
        }
        p
    }
}

/// Per flow on a shared line: the packets it has in the line and the
/// sequence number of the head event its own line would have (`SharedLines`).
#[derive(Debug, Clone, Copy, Default)]
struct FlowHead {
    seq: u64,
    pending: u32,
    /// Scratch for `arrange_front`: entries of the flow counted so far.
    rank: u32,
}

/// Flows of the same line delay from which they share one line
/// (`SharedLines`). Below, the per-flow ring buffers stay in the cache and
/// the shared line's bookkeeping costs more than it saves: CPU time against
/// one line per flow 1.02 at 500 CUBIC flows (2.5 Gbit/s), 0.85 at 1 000
/// (5 Gbit/s), 0.88 at 2 000 (10 Gbit/s); 1.09 with 10 flows (1 Gbit/s)
/// (docs/benchmarks.md, "shared delay lines").
pub(crate) const SHARED_LINE_MIN_FLOWS: usize = 1000;

/// `SharedLines::of_flow` of a flow on its own line.
pub(crate) const OWN_LINE: u32 = u32::MAX;

/// The shared delay lines of one direction (access: senders to the
/// bottleneck; reverse: receivers to senders) and which flow uses which.
///
/// Flows whose line in this direction has the same delay (> 0) and no host
/// noise, at least [`SHARED_LINE_MIN_FLOWS`] of them, share one line: one
/// FIFO (sorted by arrival time, as the delay is constant and time only goes
/// forward) and one heap entry, instead of a ring buffer and a heap entry per
/// flow. Pushes and pops then walk one buffer sequentially instead of
/// touching a cold line of one of thousands of buffers (docs/benchmarks.md,
/// "shared delay lines"). Other flows keep their own line
/// (`Simulation::access`, `Simulation::reverse`).
///
/// The event order stays exactly that of one line per flow (same seed, same
/// bits). There, flow X's head event takes its sequence number when it is
/// scheduled: at the push if X's line was empty, else at the pop of X's
/// previous packet; the heap orders by (time, seq). Here `heads[X]` counts
/// X's packets in the shared line and takes X's sequence number at the same
/// two moments ([`EventQueue::take_seq`]), and the line's single heap entry
/// is keyed (arrival of its head, head's flow's seq)
/// ([`EventQueue::schedule_keyed`]). The head is the earliest of the flows'
/// heads in (time, seq) order. Packets of different flows pushed in the same
/// nanosecond form a tie block (same arrival time); within it, flows take
/// turns in the order of their sequence numbers, since a flow whose packet
/// leaves takes a new, larger number for its next one: the block's pop order
/// is round by round (each flow's first packet, then each one's second, ...),
/// flows within a round in the order of their sequence numbers when the block
/// reaches the front. `arrange_front` puts the block in that order once it is
/// complete (no more packets can join a block once its arrival time is less
/// than now + delay, as the delay is > 0).
pub(crate) struct SharedLines {
    lines: Vec<SharedLine>,
    /// Per flow: index of its line in `lines`, or [`OWN_LINE`].
    pub(crate) of_flow: Vec<u32>,
    /// Per flow: its head on its shared line.
    heads: Vec<FlowHead>,
    /// Scratch for `arrange_front`: (round, flow's seq, index in the block).
    order: Vec<(u32, u64, u32)>,
    block: Vec<Packet>,
}

struct SharedLine {
    line: DelayLine,
    /// Arrival time of the tie block at the front that is in pop order
    /// already (`arrange_front`); `TimeNs::MAX`: none.
    arranged_at: TimeNs,
}

impl SharedLines {
    /// Shared lines for flows with one-way delays `delays[i]` and host-noise
    /// means `jitters[i]` (0 = none): a line per delay that at least
    /// `min_shared` (and 2) flows without host noise have (`usize::MAX`: none,
    /// every flow on its own line, the reference the shared lines are tested
    /// against).
    pub(crate) fn new(delays: &[u64], jitters: &[u64], min_shared: usize) -> SharedLines {
        let n = delays.len();
        let shareable = |i: usize| delays[i] > 0 && jitters[i] == 0;
        // Sorted delays for the counts, a short list for the lines (no hash
        // map: its code, placed by the linker beside the event loop, cost the
        // per-flow path instruction-cache misses).
        let mut sorted: Vec<u64> = (0..n).filter(|&i| shareable(i)).map(|i| delays[i]).collect();
        sorted.sort_unstable();
        let count = |d: u64| sorted.partition_point(|&x| x <= d) - sorted.partition_point(|&x| x < d);
        let mut line_of_delay: Vec<(u64, u32)> = Vec::new();
        let mut lines: Vec<SharedLine> = Vec::new();
        let mut of_flow = Vec::with_capacity(n);
        for i in 0..n {
            if shareable(i) && count(delays[i]) >= min_shared.max(2) {
                let l = match line_of_delay.iter().find(|e| e.0 == delays[i]) {
                    Some(e) => e.1,
                    None => {
                        lines.push(SharedLine { line: DelayLine::new(delays[i]), arranged_at: TimeNs::MAX });
                        line_of_delay.push((delays[i], lines.len() as u32 - 1));
                        lines.len() as u32 - 1
                    }
                };
                of_flow.push(l);
            } else {
                of_flow.push(OWN_LINE);
            }
        }
        SharedLines { lines, of_flow, heads: vec![FlowHead::default(); n], order: Vec::new(), block: Vec::new() }
    }

    /// Flow of the packet `i` places behind the front of shared line `l`
    /// (0: the next to arrive), if any. (A hint for prefetching: a tie block
    /// not yet arranged may still change the order.)
    pub(crate) fn flow_at(&self, l: u32, i: usize) -> Option<u32> {
        self.lines[l as usize].line.q.get(i).map(|p| p.flow)
    }

    /// Append `p` (of flow `p.flow`), sent at `now`, to shared line `l`, whose
    /// event is `ev`. (Out of line, as `pop`: the per-flow lines' callers stay small.)
    #[inline(never)]
    pub(crate) fn push<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, l: u32, p: Packet, ev: E) {
        let line = &mut self.lines[l as usize].line;
        let at = now + line.delay_ns;
        let h = &mut self.heads[p.flow as usize];
        if h.pending == 0 {
            // Where the flow's own line would schedule its head event.
            h.seq = q.take_seq();
        }
        h.pending += 1;
        if line.q.is_empty() {
            q.schedule_keyed(at, h.seq, ev);
        }
        line.q.push_back(p);
        line.q.back_mut().expect("just pushed").enqueue_ns = at;
    }

    /// Take the head of shared line `l` (event `ev`), which arrives now;
    /// schedule the line's next head.
    #[inline(never)]
    pub(crate) fn pop<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, l: u32, ev: E) -> Packet {
        let SharedLine { line, arranged_at } = &mut self.lines[l as usize];
        let heads = &mut self.heads;
        let front = line.q.front().expect("line event with empty line");
        debug_assert_eq!(front.enqueue_ns, now);
        if front.enqueue_ns != *arranged_at {
            // The block was not complete when it reached the front; it is now.
            arrange_front(line, arranged_at, heads, &mut self.order, &mut self.block);
        }
        // The flow is read in the line, not from the copy just written (a
        // load from a wider store in flight would wait for it).
        let flow = line.q[0].flow;
        let p = line.q.pop_front().expect("line event with empty line");
        let h = &mut heads[flow as usize];
        h.pending -= 1;
        if h.pending > 0 {
            // Where the flow's own line would schedule its next head.
            h.seq = q.take_seq();
        }
        let Some(next) = line.q.front() else { return p };
        let (at, flow) = (next.enqueue_ns, next.flow);
        let seq = if at == *arranged_at {
            heads[flow as usize].seq
        } else if at < now + line.delay_ns && block_of_one_flow(&line.q, at, flow) {
            // A complete block of one flow's packets (one, or a burst sent in
            // one nanosecond): they leave in their order, as `arrange_front` finds.
            *arranged_at = at;
            heads[flow as usize].seq
        } else {
            front_block_seq(line, arranged_at, heads, now, &mut self.order, &mut self.block)
        };
        q.schedule_keyed(at, seq, ev);
        p
    }
}

/// Whether the tie block at the front of `q` (arrival time `at`, its first
/// packet of flow `flow`) holds packets of `flow` only.
#[inline]
fn block_of_one_flow(q: &Ring<Packet>, at: TimeNs, flow: u32) -> bool {
    let mut i = 1;
    while let Some(e) = q.get(i) {
        if e.enqueue_ns != at {
            return true;
        }
        if e.flow != flow {
            return false;
        }
        i += 1;
    }
    true
}

/// The sequence number of shared line `line`'s next head, whose tie block
/// (of more than one flow, or not yet complete) just reached the front;
/// arranges the block if it is complete.
#[inline(never)]
fn front_block_seq(
    line: &mut DelayLine,
    arranged_at: &mut TimeNs,
    heads: &mut [FlowHead],
    now: TimeNs,
    order: &mut Vec<(u32, u64, u32)>,
    block: &mut Vec<Packet>,
) -> u64 {
    let at = line.q[0].enqueue_ns;
    if at < now + line.delay_ns {
        arrange_front(line, arranged_at, heads, order, block);
        heads[line.q[0].flow as usize].seq
    } else {
        // The block may still grow, but only by flows with larger numbers or
        // by later packets of its flows: its earliest head is known.
        let block = line.q.iter().take_while(|e| e.enqueue_ns == at);
        block.map(|e| heads[e.flow as usize].seq).min().expect("the front is in its block")
    }
}

/// Put the complete tie block at the front of shared line `line` in pop
/// order (see `SharedLines`) and mark it arranged.
#[inline(never)]
fn arrange_front(
    line: &mut DelayLine,
    arranged_at: &mut TimeNs,
    heads: &mut [FlowHead],
    order: &mut Vec<(u32, u64, u32)>,
    block: &mut Vec<Packet>,
) {
    let at = line.q[0].enqueue_ns;
    *arranged_at = at;
    let f0 = line.q[0].flow;
    let mut one_flow = true;
    let mut k = 0;
    for e in line.q.iter().take_while(|e| e.enqueue_ns == at) {
        one_flow &= e.flow == f0;
        k += 1;
    }
    if one_flow {
        return; // one flow's packets leave in their order
    }
    order.clear();
    for (i, e) in line.q.iter().take(k).enumerate() {
        let h = &mut heads[e.flow as usize];
        order.push((h.rank, h.seq, i as u32));
        h.rank += 1;
    }
    for e in line.q.iter().take(k) {
        heads[e.flow as usize].rank = 0;
    }
    order.sort_unstable();
    block.clear();
    block.extend(order.iter().map(|&(_, _, i)| line.q[i as usize]));
    for (slot, p) in line.q.iter_mut().zip(block.drain(..)) {
        *slot = p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn host_jitter_is_exponential_with_its_mean() {
        // n draws of a host-noise delay of mean 200 us (the law is what is
        // checked; the `noise = "host"` means are spec.py HOST_NOISE): mean and
        // standard deviation of an exponential law are both the mean (5
        // standard errors), and the Kolmogorov-Smirnov
        // distance to F(x) = 1 - exp(-x / mean) is below its 0.1 % critical
        // value 1.95 / sqrt(n).
        let mean = 200_000.0;
        let n = 400_000;
        let mut j = HostJitter { mean_ns: mean as u64, rng: stream_rng(42, stream::HOST_SEND) };
        let mut x: Vec<f64> = (0..n).map(|_| j.draw_ns() as f64 + 0.5).collect();
        let m = x.iter().sum::<f64>() / n as f64;
        let sd = (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1) as f64).sqrt();
        let se = mean / (n as f64).sqrt();
        assert!((m - mean).abs() < 5.0 * se, "mean {m} ns");
        // Standard error of the sample sd of an exponential law: mean x sqrt(2 / n).
        assert!((sd - mean).abs() < 5.0 * se * 2f64.sqrt(), "sd {sd} ns");
        x.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let ks = (0..n)
            .map(|i| {
                let f = 1.0 - (-x[i] / mean).exp();
                (f - i as f64 / n as f64).abs().max(((i + 1) as f64 / n as f64 - f).abs())
            })
            .fold(0.0, f64::max);
        assert!(ks < 1.95 / (n as f64).sqrt(), "KS distance {ks}");
    }
}
