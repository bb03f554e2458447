//! Delay lines: every propagation delay of the dumbbell (sim.rs) is a FIFO
//! line. A packet pushed at `now` arrives at `now + delay` (plus optional
//! host noise, `HostJitter`, which never reorders: a host's queue
//! is FIFO), so a line keeps its packets in a ring buffer (ring.rs), each one's arrival
//! time in its `Packet::enqueue_ns`, and only its head is in the event heap
//! (engine.rs): the heap holds O(flows) entries whatever the window sizes.
//!
//! The host noise delays an skb, not each frame. Linux's TCP hands the
//! device GSO skbs (net/ipv4/tcp_output.c `tcp_write_xmit`, sized by
//! `tcp_tso_autosize`: about 1 ms of data at the pacing rate, at least
//! `tcp_min_tso_segs` = 2 segments); with the device's offloads off, as on
//! the testbed's veths, net/core/dev.c `validate_xmit_skb` splits the skb
//! (`skb_gso_segment`) just before the device and `dev_hard_start_xmit`
//! passes its frames to the driver one after the other (drivers/net/veth.c
//! `veth_xmit` forwards each to the peer's receive path). Whatever delays
//! the host (scheduling, softirqs, timer slack) delays the skb, and its
//! frames leave together: on the testbed 91-95 % of the frames of BBR
//! pairs reach the bottleneck in back-to-back runs of two, a median
//! 3.1 us apart by the kernel's receive stamps (docs/fidelity.md, "TSO/GSO
//! and GRO"). So the first segment of an skb draws the noise and each
//! later one (`Packet::skb_next`) arrives `SKB_FRAME_GAP_NS` after the one
//! before it.
//!
//! `DelayLine` is one flow's line (or the bottleneck's output line).
//! `SharedLines` puts the lines of thousands of flows of one delay (and one
//! host-noise mean) into one FIFO and one heap entry, with exactly the
//! per-flow lines' event order and arrival times (same seed, same bits; see
//! its comment and docs/benchmarks.md, "shared delay lines").
//!
//! The lines are generic over the simulation's event type `E`: a line only
//! schedules its own head event.

use crate::engine::{key_parts, order_key, remove_root, sift_down, sift_up, EventQueue, Keyed, OrderKey, TimeNs, NO_EVENT};
use crate::packet::{Kind, Packet};
use crate::prefetch::prefetch_at;
use crate::ring::Ring;
use crate::rng::stream_rng;
use rand::{Rng, RngCore};
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
    /// The host noise's heavy tail (`HostTail`; None: none).
    tail: Option<Box<HostTail>>,
    /// The `noise-batch` measurement tool's state of this line (noise_batch.rs).
    #[cfg(feature = "noise-batch")]
    pub(crate) batch: crate::noise_batch::LineState,
}

/// A heavy tail of the host noise (docs/fidelity.md, "Host noise and
/// run-to-run spread"): with probability `ppm` / 10^6 an skb (the first
/// segment of one; the later ones follow it) gets a further exponential
/// delay of mean `mean_ns`, drawn from the tail's own stream (one word per
/// skb, and an `Exp1` draw for the few that take it). What it stands for:
/// Linux runs a packet's receive processing in the NET_RX softirq and
/// hands what is pending to the ksoftirqd thread once a task waits for the
/// CPU (`need_resched()`), after 2 ms or after 10 rounds (kernel/softirq.c
/// `handle_softirqs`, MAX_SOFTIRQ_TIME, MAX_SOFTIRQ_RESTART); ksoftirqd then
/// waits for the CPU like any task, so on a loaded host a packet now and
/// then waits milliseconds, and the flow's later ones behind it (FIFO).
/// A what-if: the `noise = "host"` model has no tail (spec.py HOST_NOISE).
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct TailLaw {
    /// `ppm` / 10^6 x 2^64: a word below it takes the tail.
    threshold: u64,
    mean_ns: f64,
}

impl TailLaw {
    /// The law of `ppm` per million skbs with mean `mean_ns` (None if either is 0).
    pub(crate) fn new(ppm: u32, mean_ns: u64) -> Option<TailLaw> {
        (ppm > 0 && mean_ns > 0).then(|| TailLaw {
            threshold: ((u128::from(ppm.min(1_000_000)) << 64) / 1_000_000).min(u128::from(u64::MAX)) as u64,
            mean_ns: mean_ns as f64,
        })
    }

    /// The extra delay of the skb that starts now: 0 for most.
    #[inline(always)]
    fn draw_ns(&self, rng: &mut Pcg64Mcg) -> u64 {
        if rng.next_u64() < self.threshold {
            self.draw_tail_ns(rng)
        } else {
            0
        }
    }

    #[cold]
    #[inline(never)]
    fn draw_tail_ns(&self, rng: &mut Pcg64Mcg) -> u64 {
        draw_exp_ns(rng, self.mean_ns, ExpLayers::get())
    }
}

/// A line's tail (`TailLaw`) and its stream.
struct HostTail {
    law: TailLaw,
    rng: Pcg64Mcg,
}

/// Host processing/scheduling delay on a delay line, per skb: exponential
/// with mean `mean_ns`, drawn from the flow's own stream for a packet that
/// starts an skb (the later segments of the skb follow it
/// `SKB_FRAME_GAP_NS` apart, no draw); a packet never overtakes the one
/// before it (a host's queue is FIFO), so order is kept.
///
/// The draw is `rand_distr::Exp1`, the ziggurat method (Marsaglia, Tsang,
/// "The Ziggurat Method for Generating Random Variables", J. Stat. Softw.
/// 5(8), 2000): one 64-bit draw and a table lookup in about 97 % of the
/// cases, instead of a logarithm per packet (the inverse transform
/// -mean x ln(U) costs ~6 % of an S0 run). That common case runs inline
/// (`draw_exp_ns`, the same values and words as `Exp1`); the test
/// `host_jitter_is_exponential_with_its_mean` checks the law.
/// With host noise, the gap between an skb's frames as they reach the
/// next hop: the median gap of the kernel's receive stamps between
/// back-to-back frames of one flow at the testbed's bottleneck (3.1 us:
/// the host's per-frame cost of the GSO split and the veth's forwarding;
/// docs/fidelity.md, "TSO/GSO and GRO").
pub(crate) const SKB_FRAME_GAP_NS: u64 = 3_000;

struct HostJitter {
    /// The mean, ns, as the `f64` every draw multiplies (converted once).
    mean_ns: f64,
    rng: Pcg64Mcg,
    /// `Exp1`'s layers for the draw's fast path (`ExpLayers`).
    layers: &'static ExpLayers,
}

impl HostJitter {
    fn new(mean_ns: u64, rng: Pcg64Mcg) -> HostJitter {
        HostJitter { mean_ns: mean_ns as f64, rng, layers: ExpLayers::get() }
    }

    fn draw_ns(&mut self) -> u64 {
        draw_exp_ns(&mut self.rng, self.mean_ns, self.layers)
    }
}

/// The widths of `rand_distr::Exp1`'s ziggurat layers, `x[i]` for layer
/// `i` (its table `ZIG_EXP_X`, which the crate keeps private), read back
/// from `Exp1` itself: a generator whose next 64 bits are `i` (fraction 0)
/// makes `Exp1` return `2^-53 x[i]` at once (u = 2^-53, exactly), so
/// `x[i]` is that draw times 2^53 (a power of two: exact). That works for
/// layers 0 to 254, whose next layer is wider than 0; `x[255]` and
/// `x[256]` are set to 0, so that draws in layers 254 and 255 take
/// `Exp1` itself (`draw_exp_ns`).
pub(crate) struct ExpLayers {
    x: [f64; 257],
}

/// A generator that yields one given 64-bit word, once (`ExpLayers::read`).
struct OneWord(Option<u64>);

impl rand::RngCore for OneWord {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0.take().expect("Exp1 reads one word on its fast path")
    }
    fn fill_bytes(&mut self, _: &mut [u8]) {
        unreachable!("Exp1 reads words")
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), rand::Error> {
        unreachable!("Exp1 reads words")
    }
}

impl ExpLayers {
    fn get() -> &'static ExpLayers {
        static LAYERS: std::sync::OnceLock<ExpLayers> = std::sync::OnceLock::new();
        LAYERS.get_or_init(ExpLayers::read)
    }

    fn read() -> ExpLayers {
        let mut x = [0.0; 257];
        for (i, xi) in x.iter_mut().enumerate().take(255) {
            let v: f64 = OneWord(Some(i as u64)).sample(Exp1);
            *xi = v * (1u64 << 53) as f64;
        }
        ExpLayers { x }
    }
}

/// An exponential draw of mean `mean_ns` from `rng` (`HostJitter`): the
/// value of `rng.sample(Exp1)` and the same words taken from `rng`, its
/// fast path written here: the word's low 8 bits choose the layer `i`, its
/// top 52 bits a `u` in (0, 1), and `u x[i]` is the draw if it is below
/// `x[i + 1]` (about 97 % of the draws), the same floating-point operations as
/// `rand_distr`'s `ziggurat`; any other draw starts again from the saved
/// state with `Exp1` (`exp1_again`), which takes the same first word and
/// goes on. The test `the_fast_exponential_draw_is_exp1s` compares them.
#[inline(always)]
fn draw_exp_ns(rng: &mut Pcg64Mcg, mean_ns: f64, layers: &ExpLayers) -> u64 {
    let saved = rng.clone();
    let bits = rng.next_u64();
    let i = (bits & 0xff) as usize;
    let u = f64::from_bits((bits >> 12) | (1023u64 << 52)) - (1.0 - f64::EPSILON / 2.0);
    let x = u * layers.x[i];
    let x = if x < layers.x[i + 1] { x } else { exp1_again(rng, saved) };
    to_ns(mean_ns * x)
}

/// `draw_exp_ns`'s fast path alone: `Some(draw)` when it gives the draw
/// (the word taken from `rng`), else `None` with `rng` as it was (the
/// caller starts over with `draw_exp_ns`): no call on the way.
#[inline(always)]
fn draw_exp_ns_fast(rng: &mut Pcg64Mcg, mean_ns: f64, layers: &ExpLayers) -> Option<u64> {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    let saved = rng.clone();
    let bits = rng.next_u64();
    let i = (bits & 0xff) as usize;
    let u = f64::from_bits((bits >> 12) | (1023u64 << 52)) - (1.0 - f64::EPSILON / 2.0);
    let x = u * layers.x[i];
    let v = mean_ns * x;
    if x < layers.x[i + 1] && (0.0..TWO_POW_63).contains(&v) {
        // SAFETY: as in `to_ns`: `v` is finite and in [0, 2^63).
        Some(unsafe { v.to_int_unchecked::<i64>() as u64 })
    } else {
        *rng = saved;
        None
    }
}

/// `v as u64` for `v` >= 0 (a mean times an `Exp1` value): below 2^63 one
/// conversion instruction, where the saturating cast's checks and its
/// unsigned conversion take a dozen (the cast out of line, so that the
/// compiler does not compute both and select).
#[inline(always)]
fn to_ns(v: f64) -> u64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if (0.0..TWO_POW_63).contains(&v) {
        // SAFETY: `v` is finite and its integer part is in [0, 2^63): it fits
        // an i64, as `to_int_unchecked` requires; the value is `v as u64`'s.
        unsafe { v.to_int_unchecked::<i64>() as u64 }
    } else {
        saturating_ns(v)
    }
}

#[cold]
#[inline(never)]
fn saturating_ns(v: f64) -> u64 {
    v as u64
}

/// An exponential draw of mean `mean_ns` from `rng`, as the host noise draws it (handed to the
/// `noise-batch` measurement tool for its shared processes, noise_batch.rs).
#[cfg(feature = "noise-batch")]
fn exp_ns(rng: &mut Pcg64Mcg, mean_ns: u64) -> u64 {
    draw_exp_ns(rng, mean_ns as f64, ExpLayers::get())
}

/// `Exp1` from the state `saved` (a draw outside `draw_exp_ns`'s fast path).
#[cold]
#[inline(never)]
fn exp1_again(rng: &mut Pcg64Mcg, saved: Pcg64Mcg) -> f64 {
    *rng = saved;
    rng.sample(Exp1)
}

/// The arrival of a packet due at `at` on a line with host noise whose
/// previous packet arrives at `last_at`: a segment following the one before
/// it in its skb (`skb_next`) arrives `SKB_FRAME_GAP_NS` after it (its due
/// time is that one's: both were sent in one nanosecond), any other packet
/// after a `draw` of the noise, never before the previous one.
#[inline(always)]
fn noisy_arrival(at: TimeNs, skb_next: bool, last_at: TimeNs, draw: impl FnOnce() -> u64) -> TimeNs {
    if skb_next {
        (last_at + SKB_FRAME_GAP_NS).max(at)
    } else {
        (at + draw()).max(last_at)
    }
}

impl DelayLine {
    pub(crate) fn new(delay_ns: u64) -> DelayLine {
        DelayLine {
            delay_ns,
            q: Ring::new(),
            jitter: None,
            last_at: 0,
            tail: None,
            #[cfg(feature = "noise-batch")]
            batch: Default::default(),
        }
    }

    /// This line with a heavy tail of its host noise (`TailLaw`: with
    /// probability `ppm` / 10^6 per skb a further delay of mean `mean_ns`;
    /// either 0 = none; only on a line with host noise) from the stream
    /// `stream_id` of `seed`.
    pub(crate) fn with_tail(mut self, ppm: u32, mean_ns: u64, seed: u64, stream_id: u64) -> DelayLine {
        self.tail = TailLaw::new(ppm, mean_ns).map(|law| Box::new(HostTail { law, rng: stream_rng(seed, stream_id) }));
        self
    }

    /// A line whose packets each get an extra host delay (mean `mean_ns`; 0 = none).
    pub(crate) fn with_jitter(delay_ns: u64, mean_ns: u64, seed: u64, stream_id: u64) -> DelayLine {
        let mut l = DelayLine::new(delay_ns);
        #[cfg(feature = "noise-batch")]
        {
            l.batch = crate::noise_batch::LineState::new(seed, stream_id, mean_ns);
        }
        if mean_ns > 0 {
            l.jitter = Some(HostJitter::new(mean_ns, stream_rng(seed, stream_id)));
        }
        l
    }

    /// Append `p`, sent at `now`; if the line was empty, schedule `head` (this
    /// line's event) for its arrival. (A line of one flow; `SharedLines::push`
    /// for shared ones.) No call returns into it: the schedule and a push
    /// that draws the host noise (`push_drawn`) end it, a ring that must
    /// grow and a draw off the fast path of `draw_exp_ns` (about 3 %) start
    /// over in `push_general`, from the state on entry. A call in the
    /// middle, with values live across it, made every push save and restore
    /// six registers; the draw's registers in this function, every push
    /// (docs/benchmarks.md). Not inlined, so that the callers keep their size.
    #[inline(never)]
    pub(crate) fn push_ref<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, p: &Packet, head: E) {
        #[cfg(feature = "noise-batch")]
        if self.jitter.is_some() && crate::noise_batch::mode().is_some() {
            return self.push_batch(q, now, p, head);
        }
        if self.q.is_full() {
            return self.push_general(q, now, p, head);
        }
        let mut at = now + self.delay_ns;
        if self.jitter.is_some() {
            if !p.skb_next() {
                return self.push_drawn(q, at, p, head);
            }
            at = (self.last_at + SKB_FRAME_GAP_NS).max(at);
            self.last_at = at;
        }
        self.push_at(q, at, p, head);
    }

    /// `push_ref` of the leading packets of `ps` that need neither a draw
    /// nor a schedule, right after a push onto this line (so it is not
    /// empty): while the ring has room, each packet that follows the one
    /// before it in its skb (`Packet::skb_next`), or any packet on a line
    /// without host noise. Each is first marked with the CCA class
    /// `cca_class`. Returns how many it pushed and how many of them are
    /// data packets. (No call: a sender's skb of n segments takes one
    /// `push_ref` and this, instead of n `push_ref`s.)
    #[inline(always)]
    pub(crate) fn push_skb_rest(&mut self, now: TimeNs, ps: &mut [Packet], cca_class: u16) -> (usize, u64) {
        debug_assert!(!self.q.is_empty());
        let due = now + self.delay_ns;
        let noisy = self.jitter.is_some();
        let n = ps.len().min(self.q.room());
        let (mut last_at, mut data, mut k) = (self.last_at, 0, 0);
        while k < n {
            let p = &mut ps[k];
            if noisy && !p.skb_next() {
                break;
            }
            data += (p.kind == Kind::Data) as u64;
            p.set_cca_class(cca_class);
            let mut at = due;
            if noisy {
                last_at = (last_at + SKB_FRAME_GAP_NS).max(due);
                at = last_at;
            }
            self.q.push_back_mut_with_room(*p).enqueue_ns = at;
            k += 1;
        }
        self.last_at = last_at;
        (k, data)
    }

    /// The `noise-batch` measurement tool's `push_ref` (noise_batch.rs).
    #[cfg(feature = "noise-batch")]
    fn push_batch<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, p: &Packet, head: E) {
        let at = now + self.delay_ns;
        let arr = if p.skb_next() {
            (self.last_at + SKB_FRAME_GAP_NS).max(at)
        } else {
            let j = self.jitter.as_mut().expect("a line with host noise");
            let mut draw = || draw_exp_ns(&mut j.rng, j.mean_ns, j.layers);
            self.batch.arrival(now, self.delay_ns, &mut draw, exp_ns).max(self.last_at)
        };
        self.last_at = arr;
        if self.q.is_empty() {
            q.schedule(arr, head);
        }
        self.q.push_back_mut(*p).enqueue_ns = arr;
    }

    /// `push_ref` of a packet due at `at` that draws the host noise.
    #[inline(never)]
    fn push_drawn<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, at: TimeNs, p: &Packet, head: E) {
        let Some(j) = self.jitter.as_mut() else { unreachable!("a line with host noise") };
        if self.tail.is_some() {
            // A line with a tail (`TailLaw`) draws in `push_general`.
            return self.push_general(q, at - self.delay_ns, p, head);
        }
        let at = match draw_exp_ns_fast(&mut j.rng, j.mean_ns, j.layers) {
            Some(x) => (at + x).max(self.last_at),
            None => return self.push_general(q, at - self.delay_ns, p, head),
        };
        self.last_at = at;
        self.push_at(q, at, p, head);
    }

    /// Append `p`, arriving at `at` (the ring has room); schedule `head` if
    /// the line was empty.
    #[inline(always)]
    fn push_at<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, at: TimeNs, p: &Packet, head: E) {
        let was_empty = self.q.is_empty();
        // The time is written in place, after the copy: written into `p`
        // first, its 8-byte store would make the copy's 16-byte loads wait
        // (no store-to-load forwarding across the two sizes).
        self.q.push_back_mut_with_room(*p).enqueue_ns = at;
        if was_empty {
            q.schedule(at, head);
        }
    }

    /// `push_ref` of a packet held by value.
    #[inline(always)]
    pub(crate) fn push<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, p: Packet, head: E) {
        self.push_ref(q, now, &p, head);
    }

    /// `push` in general: the ring grown if full, any draw of the noise.
    #[cold]
    #[inline(never)]
    fn push_general<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, p: &Packet, head: E) {
        let mut at = now + self.delay_ns;
        if self.jitter.is_some() {
            at = self.with_host_noise(at, p.skb_next());
        }
        if self.q.is_empty() {
            q.schedule(at, head);
        }
        self.q.push_back_mut(*p).enqueue_ns = at;
    }

    /// Arrival time `at` plus a host-noise draw, after the previous arrival;
    /// for a segment following the one before it in its skb (`skb_next`),
    /// `SKB_FRAME_GAP_NS` after that one's arrival (`noisy_arrival`).
    fn with_host_noise(&mut self, at: TimeNs, skb_next: bool) -> TimeNs {
        let j = self.jitter.as_mut().expect("a line with host noise");
        let tail = self.tail.as_deref_mut();
        let at = noisy_arrival(at, skb_next, self.last_at, || j.draw_ns() + tail.map_or(0, |t| t.law.draw_ns(&mut t.rng)));
        self.last_at = at;
        at
    }

    /// A line without delay and without host noise: a packet pushed onto
    /// it when it is empty would arrive now, first in line (fixed when the
    /// line is built).
    pub(crate) fn is_instant(&self) -> bool {
        self.delay_ns == 0 && self.jitter.is_none() && self.tail.is_none()
    }

    /// Whether the line holds no packet.
    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty()
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

/// `SharedLines::next_key` with no event.
const NO_NEXT: (OrderKey, u32) = (NO_EVENT, 0);

/// `SharedLines::of_flow` of a flow on its own line.
pub(crate) const OWN_LINE: u32 = u32::MAX;

/// `SharedLines::next_flows` of no packet.
pub(crate) const NO_FLOW: u32 = u32::MAX;

/// The shared delay lines of one direction (access: senders to the
/// bottleneck; reverse: receivers to senders) and which flow uses which.
///
/// Flows whose line in this direction has the same delay (> 0) and the same
/// host-noise mean, at least [`SHARED_LINE_MIN_FLOWS`] of them, share one
/// line: one FIFO and one next event, kept outside the event heap (the
/// simulation compares it with the heap's root, as it does its end of
/// transmission), instead of a ring buffer and a heap entry per flow. Pushes and pops then walk one buffer sequentially instead
/// of touching a cold line of one of thousands of buffers (docs/benchmarks.md,
/// "shared delay lines"). Other flows keep their own line
/// (`Simulation::access`, `Simulation::reverse`).
///
/// The event order stays exactly that of one line per flow (same seed, same
/// bits). There, flow X's head event takes its sequence number when it is
/// scheduled: at the push if X's line was empty, else at the pop of X's
/// previous packet; the heap orders by (time, seq). Here `heads[X]` counts
/// X's packets in the shared line and takes X's sequence number at the same
/// two moments ([`EventQueue::take_seq`]), and the line's next event is
/// keyed (arrival of its head, head's flow's seq) (`SharedLines::next_key`,
/// run through [`EventQueue::advance_outside`] when it is the earliest). The
/// head is the earliest of the flows' heads in (time, seq) order.
///
/// Without host noise the FIFO is sorted by arrival time (the delay is
/// constant and time only goes forward). Packets of different flows pushed
/// in the same nanosecond form a tie block (same arrival time); within it,
/// flows take turns in the order of their sequence numbers, since a flow
/// whose packet leaves takes a new, larger number for its next one: the
/// block's pop order is round by round (each flow's first packet, then each
/// one's second, ...), flows within a round in the order of their sequence
/// numbers when the block reaches the front. `arrange_front` puts the block
/// in that order once it is complete (no more packets can join a block once
/// its arrival time is less than now + delay, as the delay is > 0).
///
/// With host noise (`Stage`), a flow's own line gives its packet pushed at
/// `t` the arrival `a = max(t + delay + X, a_prev)` (`HostJitter`: X drawn
/// from the flow's stream, `a_prev` the arrival of the flow's previous
/// packet; a later segment of an skb `max(a_prev + SKB_FRAME_GAP_NS, t +
/// delay)`, `noisy_arrival`), so the flows' packets no longer arrive in the order they were
/// pushed. The FIFO then keeps them in push order with `b = t + delay <= a`;
/// a packet leaves the FIFO for the stage once its `b` is not later than
/// the stage's earliest arrival (`refill`), and draws its X only then (a
/// flow's draws come in its push order either way: the values are those of
/// its own line). Whatever is still in the FIFO arrives after the stage's
/// earliest. The stage keeps each flow's head in a min-heap on (arrival, the
/// flow's sequence number) and the flow's later packets in a list; a head
/// that leaves hands the flow's new sequence number to its successor. The
/// stage holds about (packet rate x mean noise) packets (~80 at 10 Gbit/s
/// and 100 us), so its heap stays in the cache. A push whose packet may
/// arrive before the line's next head (a delay shorter than the head's
/// noise) re-keys the line's next event.
pub(crate) struct SharedLines {
    lines: Vec<SharedLine>,
    /// Per flow: index of its line in `lines`, or [`OWN_LINE`].
    pub(crate) of_flow: Vec<u32>,
    /// Per flow on a shared line without host noise: its head there.
    heads: Vec<FlowHead>,
    /// Per flow on a shared line with host noise: its head, its noise and
    /// its packets in the line's stage (entries of other flows unused; empty
    /// when no line has host noise).
    noisy: Vec<NoisyFlow>,
    /// Scratch for `arrange_front`: (round, flow's seq, index in the block).
    order: Vec<(u32, u64, u32)>,
    block: Vec<Packet>,
    /// The earliest of the lines' next events as the event loop compares
    /// it: ((time, seq) as an `OrderKey`, line); `NO_EVENT` for none.
    next_key: (OrderKey, u32),
}

struct SharedLine {
    line: DelayLine,
    /// Arrival time of the tie block at the front that is in pop order
    /// already (`arrange_front`); `TimeNs::MAX`: none.
    arranged_at: TimeNs,
    /// With host noise: the packets out of the FIFO (see `SharedLines`).
    stage: Option<Box<Stage>>,
    /// (time, seq) of the line's next event as an `OrderKey` (`NO_EVENT`:
    /// none): its head's arrival and the sequence number of the head's flow.
    next: OrderKey,
}

/// Per flow on a shared line with host noise (`SharedLines`): all a packet
/// of the flow touches on its way through the line, in one cache line (the
/// host-noise mean is the line's, `Stage::mean_ns`). With thousands of
/// flows these are read at random; `Stage::refill` prefetches them a few
/// packets ahead.
#[repr(align(64))]
struct NoisyFlow {
    /// The flow's host-noise stream (`HostJitter`'s).
    rng: Pcg64Mcg,
    /// The stream of its noise's tail (`HostTail`'s; unused without one).
    tail_rng: Pcg64Mcg,
    /// Arrival time of the flow's last packet out of the FIFO.
    last_at: TimeNs,
    /// As `FlowHead`: the flow's head's sequence number and its packets in the line.
    seq: u64,
    pending: u32,
    /// The flow's later packets in the stage, in order: first and last slot
    /// ([`NO_SLOT`]: none).
    wait_first: u32,
    wait_last: u32,
    /// The flow's head is in the stage's heap.
    in_heap: bool,
}

impl NoisyFlow {
    fn new(rng: Pcg64Mcg, tail_rng: Pcg64Mcg) -> NoisyFlow {
        NoisyFlow { rng, tail_rng, last_at: 0, seq: 0, pending: 0, wait_first: NO_SLOT, wait_last: NO_SLOT, in_heap: false }
    }
}

/// `Stage::refill` prefetches the state of the flow of the packet this many
/// places behind the FIFO's front.
const PREFETCH_AHEAD: usize = 4;

/// No slot of a `Stage`.
const NO_SLOT: u32 = u32::MAX;

/// A flow's head in a `Stage`: its arrival, its slot and its flow (so that
/// `Stage::pop` reads the flow's state without waiting for the slot). The
/// flow's sequence number, the second half of the head's (arrival, seq)
/// order, is in the slot (`Slot::seq`): 16 bytes a head, one load to
/// compare two (docs/benchmarks.md, "Shared delay lines").
#[derive(Clone, Copy)]
struct Head {
    at: TimeNs,
    slot: u32,
    flow: u32,
}

impl Keyed for Head {
    type Key = TimeNs;
    const SIFT_BY_OFFSET: bool = true;
    /// The arrival alone; heads of one arrival are put in (arrival, seq)
    /// order at the root by `Stage::settle_root`.
    #[inline(always)]
    fn key(&self) -> TimeNs {
        self.at
    }
}

/// The stage's heads, a binary min-heap on the arrival in a `Vec` (children
/// of `i` at `2i + 1`, `2i + 2`), sifted by engine.rs's `sift_up` and
/// `sift_down`, as the event queue is. A head that leaves and hands over to
/// its flow's next packet replaces the root (one sift instead of a pop and a
/// push). Heads of the same arrival leave in the order of their sequence
/// numbers: they form a subtree at the root when they are the earliest
/// (each one's ancestors arrive no later and no earlier), and
/// `Stage::settle_root` puts the one with the smallest number on top.
#[derive(Default)]
struct HeadHeap {
    h: Vec<Head>,
}

impl HeadHeap {
    #[inline(always)]
    fn peek(&self) -> Option<&Head> {
        self.h.first()
    }

    /// The root of a heap that has one: the line's next event is its
    /// stage's root (`Stage::next_key`), so a pop finds one (the check
    /// skipped, as `noisy_flow`'s; debug builds check).
    #[inline(always)]
    fn root(&self) -> Head {
        debug_assert!(!self.h.is_empty(), "the line's event's packet");
        // SAFETY: the heap is not empty (above).
        unsafe { *self.h.get_unchecked(0) }
    }

    #[inline(always)]
    fn push(&mut self, e: Head) {
        let hole = self.h.len();
        self.h.push(e);
        sift_up(&mut self.h, hole, e);
    }

    /// Put `e` in the root's place and sift it down.
    #[inline(always)]
    fn replace_root(&mut self, e: Head) {
        // SAFETY: `Stage::pop`, the only caller, read the root (`root`).
        unsafe { sift_down(&mut self.h, 0, e) };
    }

    /// Remove the root.
    #[inline(always)]
    fn remove_root(&mut self) {
        remove_root(&mut self.h);
    }
}

/// A packet in a `Stage`: the packet, the next slot of its flow's list (of
/// a free slot: the next free slot) and, while the packet is its flow's
/// head, the flow's sequence number (`Head`); one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot {
    p: Packet,
    next: u32,
    seq: u64,
}

/// A stage's packet slots (`Stage::slots`). Slots are only added, and
/// every slot number the stage holds (its heads', its flows' lists', the
/// free list's) was handed out by `Stage::alloc`, so each is below the
/// length: `at` skips the bounds check (one of six per staged packet, a
/// compare and a branch each; docs/benchmarks.md).
struct Slots(Vec<Slot>);

impl Slots {
    /// Slot `i`, one handed out by `Stage::alloc`.
    #[inline(always)]
    fn at(&mut self, i: u32) -> &mut Slot {
        debug_assert!((i as usize) < self.0.len());
        // SAFETY: `i` came from `Stage::alloc`, which returns an index below
        // the length, and the vector never shrinks.
        unsafe { self.0.get_unchecked_mut(i as usize) }
    }
}

/// The state of `flow` on a noisy line, for the flow of a packet on the
/// line: `noisy` has an entry per flow of the run whenever a line has host
/// noise (`SharedLines::with_tails`; it is never resized), and a packet's
/// flow is one of the run's (sim.rs `flow_entry`), so the bounds check is
/// skipped (`Slots`; debug builds check).
#[inline(always)]
fn noisy_flow(noisy: &mut [NoisyFlow], flow: u32) -> &mut NoisyFlow {
    debug_assert!((flow as usize) < noisy.len());
    // SAFETY: `flow` is one of the run's flows and `noisy` has an entry per
    // flow when a line has host noise (above).
    unsafe { noisy.get_unchecked_mut(flow as usize) }
}

/// The packets of a shared line with host noise that left its FIFO
/// (`SharedLines`).
struct Stage {
    /// The line's host-noise mean, ns.
    mean_ns: f64,
    /// The line's host-noise tail (`TailLaw`), if any.
    tail: Option<TailLaw>,
    /// `Exp1`'s layers for the draw's fast path (`ExpLayers`).
    layers: &'static ExpLayers,
    /// The flows' heads, earliest on top.
    heap: HeadHeap,
    /// Packets, each with the next slot of its flow's list (of a free
    /// slot: the next free slot).
    slots: Slots,
    /// The first free slot ([`NO_SLOT`]: none), the free slots chained
    /// through their links (no separate list to push to and pop from).
    free: u32,
}

impl Stage {
    fn new(mean_ns: u64, tail: Option<TailLaw>) -> Stage {
        Stage {
            mean_ns: mean_ns as f64,
            tail,
            layers: ExpLayers::get(),
            heap: HeadHeap::default(),
            slots: Slots(Vec::new()),
            free: NO_SLOT,
        }
    }

    /// A slot holding a copy of `p` arriving at `at`: the first free one,
    /// else a new one. (`p` by reference: by value, it was copied to the
    /// stack first on every call for the rare push of a new slot.)
    #[inline(always)]
    fn alloc(&mut self, p: &Packet, at: TimeNs) -> u32 {
        match self.free {
            NO_SLOT => self.alloc_new(p, at),
            i => {
                let slot = self.slots.at(i);
                self.free = slot.next;
                slot.p = *p;
                slot.next = NO_SLOT;
                slot.p.enqueue_ns = at;
                i
            }
        }
    }

    /// `alloc` with no free slot: a new one.
    #[cold]
    #[inline(never)]
    fn alloc_new(&mut self, p: &Packet, at: TimeNs) -> u32 {
        let v = &mut self.slots.0;
        v.push(Slot { p: *p, next: NO_SLOT, seq: 0 });
        let i = v.len() - 1;
        v[i].p.enqueue_ns = at;
        i as u32
    }

    /// Arrival time of the earliest head.
    fn earliest_ns(&self) -> Option<TimeNs> {
        self.heap.peek().map(|e| e.at)
    }

    /// (arrival, seq) of the earliest head: the line's next event
    /// (`NO_EVENT`: none); the heads of its arrival settled first.
    #[inline(always)]
    fn next_key(&mut self) -> OrderKey {
        let h = self.heap.h.as_slice();
        let Some(root) = h.first() else { return NO_EVENT };
        if h.get(1).is_some_and(|c| c.at == root.at) || h.get(2).is_some_and(|c| c.at == root.at) {
            self.settle_root();
        }
        let root = self.heap.h[0];
        order_key(root.at, self.slots.at(root.slot).seq)
    }

    /// Put the head with the smallest sequence number among those of the
    /// root's arrival at the root (the heap orders by arrival alone; those
    /// heads are all at the root's subtree, so a swap with the root keeps
    /// the heap's order). Rare: two flows' packets arriving in the same
    /// nanosecond.
    #[cold]
    #[inline(never)]
    fn settle_root(&mut self) {
        let at = self.heap.h[0].at;
        let mut best = 0;
        for i in 1..self.heap.h.len() {
            let (e, b) = (self.heap.h[i], self.heap.h[best]);
            if e.at == at && self.slots.at(e.slot).seq < self.slots.at(b.slot).seq {
                best = i;
            }
        }
        self.heap.h.swap(0, best);
    }

    /// Whether `refill` would move the FIFO's front (checked inline, before
    /// the call).
    #[inline(always)]
    fn refills(&self, line: &DelayLine) -> bool {
        line.q.front().is_some_and(|f| self.earliest_ns().is_none_or(|t| f.enqueue_ns <= t))
    }

    /// Move packets from the FIFO of `line` into the stage while one may
    /// arrive no later than the earliest head (see `SharedLines`).
    fn refill(&mut self, line: &mut DelayLine, noisy: &mut [NoisyFlow]) {
        // A line with a tail and one without each in a loop of its own: no
        // test of the tail per packet, and one register more for the loop.
        match self.tail {
            Some(t) => self.refill_with(line, noisy, |rng| t.draw_ns(rng)),
            None => self.refill_with(line, noisy, |_| 0),
        }
    }

    /// `refill`, the tail's extra delay of an skb drawn by `tail_ns` from
    /// the flow's tail stream.
    #[inline(always)]
    fn refill_with(&mut self, line: &mut DelayLine, noisy: &mut [NoisyFlow], tail_ns: impl Fn(&mut Pcg64Mcg) -> u64) {
        let (mean_ns, layers) = (self.mean_ns, self.layers);
        // The earliest head's arrival in a local (a head pushed can only
        // lower it): no read of the heap per packet.
        let mut earliest = self.earliest_ns().unwrap_or(TimeNs::MAX);
        while let Some(front) = line.q.front() {
            if front.enqueue_ns > earliest {
                break;
            }
            if let Some(ahead) = line.q.get(PREFETCH_AHEAD) {
                // A hint: no bounds check (`prefetch_at` never reads).
                prefetch_at(noisy.as_ptr().wrapping_add(ahead.flow as usize));
            }
            let (flow, pushed_at, skb_next) = (front.flow, front.enqueue_ns, front.skb_next());
            let nf = noisy_flow(noisy, flow);
            // As `DelayLine::with_host_noise`, in the flow's push order.
            let at =
                noisy_arrival(pushed_at, skb_next, nf.last_at, || draw_exp_ns(&mut nf.rng, mean_ns, layers) + tail_ns(&mut nf.tail_rng));
            nf.last_at = at;
            // Copied from the FIFO into its slot at once (not through a
            // local), with its arrival time.
            let slot = self.alloc(line.q.front().expect("the front exists"), at);
            line.q.discard_front(1);
            if nf.in_heap {
                match nf.wait_last {
                    NO_SLOT => nf.wait_first = slot,
                    last => self.slots.at(last).next = slot,
                }
                nf.wait_last = slot;
            } else {
                nf.in_heap = true;
                self.slots.at(slot).seq = nf.seq;
                self.heap.push(Head { at, slot, flow });
                earliest = earliest.min(at);
            }
        }
    }

    /// Take the earliest head, the line's event, which arrives now; put the
    /// flow's next packet in the heap.
    fn pop<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, noisy: &mut [NoisyFlow]) -> Packet {
        let Head { slot, flow, .. } = self.heap.root();
        let s = self.slots.at(slot);
        let p = s.p;
        s.next = self.free;
        self.free = slot;
        let nf = noisy_flow(noisy, flow);
        nf.pending -= 1;
        if nf.pending > 0 {
            // Where the flow's own line would schedule its next head.
            nf.seq = q.take_seq();
        }
        match nf.wait_first {
            NO_SLOT => {
                nf.in_heap = false;
                self.heap.remove_root();
            }
            w => {
                let s = self.slots.at(w);
                let (at, next) = (s.p.enqueue_ns, s.next);
                s.seq = nf.seq;
                nf.wait_first = next;
                if next == NO_SLOT {
                    nf.wait_last = NO_SLOT;
                }
                self.heap.replace_root(Head { at, slot: w, flow });
            }
        }
        p
    }
}

impl SharedLines {
    /// Shared lines for flows with one-way delays `delays[i]` and host-noise
    /// means `jitters[i]` (0 = none; flow `i`'s noise stream is
    /// `stream_base + i` of `seed`, as its own line's): a line per (delay,
    /// mean) that at least `min_shared` (and 2) flows have (`usize::MAX`:
    /// none, every flow on its own line, the reference the shared lines are
    /// tested against).
    pub(crate) fn new(delays: &[u64], jitters: &[u64], seed: u64, stream_base: u64, min_shared: usize) -> SharedLines {
        SharedLines::with_tails(delays, jitters, &[], (seed, stream_base), 0, min_shared)
    }

    /// `new` with flow `i`'s host noise given the tail `tails[i]` (ppm,
    /// mean ns; `DelayLine::with_tail`, stream `tail_stream_base + i`; none
    /// past the slice's end): a line per (delay, mean, tail).
    pub(crate) fn with_tails(
        delays: &[u64],
        jitters: &[u64],
        tails: &[(u32, u64)],
        (seed, stream_base): (u64, u64),
        tail_stream_base: u64,
        min_shared: usize,
    ) -> SharedLines {
        let n = delays.len();
        let tail = |i: usize| tails.get(i).copied().filter(|&(ppm, mean)| jitters[i] > 0 && TailLaw::new(ppm, mean).is_some());
        let key = |i: usize| (delays[i], jitters[i], tail(i).unwrap_or((0, 0)));
        // Sorted keys for the counts, a short list for the lines (no hash
        // map: its code, placed by the linker beside the event loop, cost the
        // per-flow path instruction-cache misses).
        type Key = (u64, u64, (u32, u64));
        let mut sorted: Vec<Key> = (0..n).filter(|&i| delays[i] > 0).map(key).collect();
        sorted.sort_unstable();
        let count = |k: Key| sorted.partition_point(|&x| x <= k) - sorted.partition_point(|&x| x < k);
        let mut line_of_key: Vec<(Key, u32)> = Vec::new();
        let mut lines: Vec<SharedLine> = Vec::new();
        let mut of_flow = Vec::with_capacity(n);
        let noise_shared = (0..n).any(|i| jitters[i] > 0 && delays[i] > 0 && count(key(i)) >= min_shared.max(2));
        let mut noisy: Vec<NoisyFlow> =
            if noise_shared { (0..n).map(|_| NoisyFlow::new(Pcg64Mcg::new(0), Pcg64Mcg::new(0))).collect() } else { Vec::new() };
        for i in 0..n {
            if delays[i] == 0 || count(key(i)) < min_shared.max(2) {
                of_flow.push(OWN_LINE);
                continue;
            }
            let l = match line_of_key.iter().find(|e| e.0 == key(i)) {
                Some(e) => e.1,
                None => {
                    let law = tail(i).and_then(|(ppm, mean)| TailLaw::new(ppm, mean));
                    let stage = (jitters[i] > 0).then(|| Box::new(Stage::new(jitters[i], law)));
                    lines.push(SharedLine { line: DelayLine::new(delays[i]), arranged_at: TimeNs::MAX, stage, next: NO_EVENT });
                    line_of_key.push((key(i), lines.len() as u32 - 1));
                    lines.len() as u32 - 1
                }
            };
            of_flow.push(l);
            if jitters[i] > 0 {
                noisy[i] = NoisyFlow::new(stream_rng(seed, stream_base + i as u64), stream_rng(seed, tail_stream_base + i as u64));
            }
        }
        SharedLines { lines, of_flow, heads: vec![FlowHead::default(); n], noisy, order: Vec::new(), block: Vec::new(), next_key: NO_NEXT }
    }

    /// Whether any flow is on one of these lines.
    pub(crate) fn any(&self) -> bool {
        !self.lines.is_empty()
    }

    /// (time, seq, line) of the next event of these lines, the earliest of
    /// their heads' (`None`: every line is empty). The event is the line's
    /// `pop`, run when no event in the queue comes before it. (The event
    /// loop compares `next_key`.)
    #[cfg(test)]
    pub(crate) fn next(&self) -> Option<(TimeNs, u64, u32)> {
        let (k, l) = self.next_key;
        (k != NO_EVENT).then(|| {
            let (t, s) = key_parts(k);
            (t, s, l)
        })
    }

    /// The next event of these lines, the earliest of their heads', as
    /// ((time, seq) as an `OrderKey`, line) (`NO_EVENT`: every line is
    /// empty), the form the event loop compares. The event is the line's
    /// `pop`, run when no event in the queue comes before it.
    #[inline(always)]
    pub(crate) fn next_key(&self) -> (u128, u32) {
        self.next_key
    }

    /// Line `l`'s next event is now `key`; `next` follows.
    #[inline(always)]
    fn set_next(&mut self, l: u32, key: OrderKey) {
        line_at(&mut self.lines, l).next = key;
        self.next_key = if self.lines.len() == 1 { (key, l) } else { earliest_line(&self.lines) };
    }

    /// Flows of the next two packets to leave shared line `l` ([`NO_FLOW`]:
    /// none): the next to arrive and the one after. (A hint for prefetching:
    /// a tie block not yet arranged may still change the order; with host
    /// noise, the second is the earlier child of the stage heap's root,
    /// usually but not always the next head.) Inline in the prefetching
    /// caller, where the pair stays in registers (as two `Option`s it went
    /// through the stack).
    #[inline]
    pub(crate) fn next_flows(&self, l: u32) -> (u32, u32) {
        debug_assert!((l as usize) < self.lines.len(), "line {l} of {}", self.lines.len());
        // SAFETY: `l` is the line of the event just handled, `next_key`'s (`line_at`).
        let sl = unsafe { self.lines.get_unchecked(l as usize) };
        let Some(st) = sl.stage.as_ref() else {
            let flow = |i| sl.line.q.get(i).map_or(NO_FLOW, |p| p.flow);
            return (flow(0), flow(1));
        };
        match st.heap.h.as_slice() {
            [root, a, b, ..] => (root.flow, if b.at < a.at { b.flow } else { a.flow }),
            [root, a] => (root.flow, a.flow),
            [root] => (root.flow, NO_FLOW),
            [] => (NO_FLOW, NO_FLOW),
        }
    }

    /// Append `p` (of flow `p.flow`), sent at `now`, to shared line `l`.
    /// (Out of line, as `pop`: the per-flow lines' callers stay small. The
    /// rarer paths are out of line again, `restage` and `push_plain`, so
    /// that the common one saves few registers.)
    /// A FIFO that must grow takes `push_growing`, so that the common path
    /// makes no call that returns and saves no registers.
    #[inline(never)]
    pub(crate) fn push<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, l: u32, p: &Packet) {
        let SharedLine { line, stage, .. } = line_at(&mut self.lines, l);
        if line.q.is_full() {
            return self.push_growing(q, now, l, p);
        }
        let at = now + line.delay_ns;
        let Some(st) = stage else { return self.push_plain(q, at, l, p) };
        // Into the ring before the flow's state is written: after it, the
        // ring's room was loaded and tested again.
        line.q.push_back_mut_with_room(*p).enqueue_ns = at;
        let nf = noisy_flow(&mut self.noisy, p.flow);
        if nf.pending == 0 {
            // Where the flow's own line would schedule its head event.
            nf.seq = q.take_seq();
        }
        nf.pending += 1;
        if st.earliest_ns().is_none_or(|t| at <= t) {
            // The packet may arrive before the line's head.
            self.restage(l);
        }
    }

    /// `push` onto a line whose FIFO is full: grow it, then push.
    #[cold]
    #[inline(never)]
    fn push_growing<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, l: u32, p: &Packet) {
        self.lines[l as usize].line.q.make_room(*p);
        self.push(q, now, l, p);
    }

    /// Refill the stage of shared line `l` (with host noise) and re-key the
    /// line's next event.
    #[inline(never)]
    fn restage(&mut self, l: u32) {
        let SharedLine { line, stage, .. } = &mut self.lines[l as usize];
        let st = stage.as_mut().expect("a line with host noise");
        st.refill(line, &mut self.noisy);
        let key = st.next_key();
        self.set_next(l, key);
    }

    /// `push` onto a shared line without host noise, arriving at `at`.
    #[inline(never)]
    fn push_plain<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, at: TimeNs, l: u32, p: &Packet) {
        let line = &mut self.lines[l as usize].line;
        let h = &mut self.heads[p.flow as usize];
        if h.pending == 0 {
            // Where the flow's own line would schedule its head event.
            h.seq = q.take_seq();
        }
        h.pending += 1;
        let was_empty = line.q.is_empty();
        line.q.push_back_mut(*p).enqueue_ns = at;
        if was_empty {
            let seq = h.seq;
            self.set_next(l, order_key(at, seq));
        }
    }

    /// Take the head of shared line `l`, which arrives now (the line's next
    /// event, `next`); key the line's next event by its next head.
    #[inline(never)]
    pub(crate) fn pop<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, l: u32) -> Packet {
        debug_assert_eq!(key_parts(self.lines[l as usize].next).0, now, "the line's next event is now");
        let SharedLine { line, stage, .. } = line_at(&mut self.lines, l);
        let Some(st) = stage else { return self.pop_plain(q, now, l) };
        let p = st.pop(q, &mut self.noisy);
        if st.refills(line) {
            st.refill(line, &mut self.noisy);
        }
        let key = st.next_key();
        self.set_next(l, key);
        p
    }

    /// `pop` of a shared line without host noise.
    #[inline(never)]
    fn pop_plain<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, now: TimeNs, l: u32) -> Packet {
        let SharedLine { line, arranged_at, .. } = &mut self.lines[l as usize];
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
        let Some(next) = line.q.front() else {
            self.set_next(l, NO_EVENT);
            return p;
        };
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
        self.set_next(l, order_key(at, seq));
        p
    }
}

/// Line `l` of `lines`, a `SharedLines`' lines: `l` is a flow's `of_flow`
/// entry that is not `OWN_LINE` (the callers' test) or `next_key`'s line,
/// each an index of `lines` (built together in `with_tails`; `lines` never
/// changes length), so the bounds check is skipped, as `noisy_flow`'s (on
/// the per-packet push and pop).
#[inline(always)]
fn line_at(lines: &mut [SharedLine], l: u32) -> &mut SharedLine {
    debug_assert!((l as usize) < lines.len(), "line {l} of {}", lines.len());
    // SAFETY: `l < lines.len()` (above).
    unsafe { lines.get_unchecked_mut(l as usize) }
}

/// (key, line) of the earliest next event of `lines` (`NO_NEXT`: none).
fn earliest_line(lines: &[SharedLine]) -> (OrderKey, u32) {
    (0..lines.len() as u32).map(|l| (lines[l as usize].next, l)).filter(|&(k, _)| k != NO_EVENT).min().unwrap_or(NO_NEXT)
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
    fn the_fast_exponential_draw_is_exp1s() {
        // draw_exp_ns's fast path against rand_distr's Exp1 from the same
        // state: the same value (as the product and cast every line takes)
        // and the same state after, over streams of several seeds (every
        // layer, the rejections and the tail draws of layer 0 included), and
        // the read-back layers decreasing from Exp1's tail start R = 7.697...
        let layers = ExpLayers::get();
        assert!(layers.x[1] > 7.69 && layers.x[1] < 7.70, "x[1] = {}", layers.x[1]);
        assert!(layers.x.windows(2).take(254).all(|w| w[0] > w[1] && w[1] > 0.0));
        let mean = 123_456.0;
        let (mut off_fast_path, mut more_words) = (0, 0);
        for seed in 0..8 {
            let mut a = stream_rng(seed, stream::HOST_SEND);
            let mut b = a.clone();
            for _ in 0..250_000 {
                let mut one_word = b.clone();
                let layer = one_word.next_u64() & 0xff;
                let want = (mean * b.sample::<f64, _>(Exp1)) as u64;
                assert_eq!(draw_exp_ns(&mut a, mean, layers), want);
                assert!(a == b, "the same words taken");
                off_fast_path += (layer >= 254) as u32;
                more_words += (one_word != b) as u32;
            }
        }
        // Both kinds of draws that leave the fast path occurred.
        assert!(off_fast_path > 10_000 && more_words > 10_000, "{off_fast_path} {more_words}");
    }

    /// Arrival times at the end of a line of `delay_ns` with host noise of
    /// mean `mean_ns` (seed 42), of skbs of 1, 2, 3, 1, 2, 3, ... segments
    /// sent 1 ms apart, each segment after an skb's first marked
    /// `skb_next` if `marked`: per skb, its frames' arrivals.
    fn skb_arrivals(delay_ns: u64, mean_ns: u64, marked: bool, skbs: u64) -> Vec<Vec<TimeNs>> {
        let mut line = DelayLine::with_jitter(delay_ns, mean_ns, 42, stream::HOST_SEND);
        let mut q: EventQueue<u8> = EventQueue::new();
        let mut seq = 0;
        for k in 0..skbs {
            for i in 0..1 + k % 3 {
                let mut p = Packet::new(0, crate::packet::Kind::Data, 1500);
                p.seq = seq;
                p.set_skb_next(marked && i > 0);
                seq += 1;
                line.push(&mut q, k * 1_000_000, p, 0);
            }
        }
        let mut at = vec![];
        while let Some((t, _)) = q.pop() {
            at.push(line.pop(&mut q, t, 0).enqueue_ns);
        }
        let mut per_skb = vec![];
        for k in 0..skbs {
            let rest = at.split_off((1 + k % 3) as usize);
            per_skb.push(std::mem::replace(&mut at, rest));
        }
        per_skb
    }

    #[test]
    fn an_skbs_frames_leave_the_host_back_to_back_under_host_noise() {
        // Linux hands the device GSO skbs (tcp_output.c tcp_write_xmit); with
        // offloads off net/core/dev.c validate_xmit_skb splits one just before
        // the device (skb_gso_segment) and dev_hard_start_xmit passes its
        // frames to the driver one after the other: what delays the host
        // delays the skb, its frames leave back to back (the testbed: 91-95 %
        // of BBR's frames in runs of two, docs/fidelity.md). On a line with
        // host noise each skb's first frame draws the delay from the flow's
        // stream, in order, and each later frame arrives SKB_FRAME_GAP_NS
        // after the one before it.
        let (delay, mean, skbs) = (5_000_000, 100_000, 30_000);
        let arrivals = skb_arrivals(delay, mean, true, skbs);
        let mut draws = HostJitter::new(mean, stream_rng(42, stream::HOST_SEND));
        let mut first_delays = vec![];
        for (k, skb) in arrivals.iter().enumerate() {
            assert!(skb.windows(2).all(|w| w[1] - w[0] == SKB_FRAME_GAP_NS), "skb {k}: {skb:?}");
            let extra = skb[0] - (k as u64 * 1_000_000 + delay);
            // 1 ms apart, a draw of mean 100 us rarely waits for the skb before.
            let draw = draws.draw_ns();
            if k == 0 || skb[0] > *arrivals[k - 1].last().unwrap() {
                assert_eq!(extra, draw, "skb {k}: one draw per skb, in order");
            }
            first_delays.push(extra as f64);
        }
        let n = first_delays.len() as f64;
        let m = first_delays.iter().sum::<f64>() / n;
        assert!((m - mean as f64).abs() < 5.0 * mean as f64 / n.sqrt(), "mean extra delay {m} ns per skb");
        // The same segments without the mark: each draws its own delay, and
        // a frame arrives within 30 us of the one before it in its skb only
        // when its draw is not 30 us above that one's (about 63 %).
        let apart = skb_arrivals(delay, mean, false, skbs);
        let (mut close, mut later) = (0, 0);
        for w in apart.iter().flat_map(|skb| skb.windows(2)) {
            later += 1;
            close += (w[1] - w[0] < 30_000) as u32;
        }
        let f = close as f64 / later as f64;
        assert!((0.55..0.70).contains(&f), "per-frame noise: {f} of later frames within 30 us");
    }

    #[test]
    fn an_skbs_segments_pushed_in_one_go_arrive_as_pushed_one_by_one() {
        // push_skb_rest after an skb's first push_ref: the same arrivals,
        // packets and marks as push_ref for every segment, with host noise
        // and without, across ring growth (skbs of 1 to 11 segments, sent
        // 20 us apart, the line holding many).
        for mean_ns in [0, 100_000] {
            let mut one = DelayLine::with_jitter(5_000_000, mean_ns, 7, stream::HOST_SEND);
            let mut run = DelayLine::with_jitter(5_000_000, mean_ns, 7, stream::HOST_SEND);
            let (mut q1, mut q2): (EventQueue<u8>, EventQueue<u8>) = (EventQueue::new(), EventQueue::new());
            let (mut seq, mut data) = (0, 0);
            for k in 0..2_000u64 {
                let now = k * 20_000;
                let mut skb: Vec<Packet> = (0..1 + k % 11)
                    .map(|i| {
                        let mut p = Packet::new(0, Kind::Data, 1500);
                        (p.seq, seq) = (seq, seq + 1);
                        p.set_skb_next(i > 0);
                        p
                    })
                    .collect();
                for p in &skb {
                    let mut p = *p;
                    p.set_cca_class(3);
                    one.push_ref(&mut q1, now, &p, 0);
                }
                skb[0].set_cca_class(3);
                run.push_ref(&mut q2, now, &skb[0], 0);
                let mut i = 1;
                while i < skb.len() {
                    let (pushed, d) = run.push_skb_rest(now, &mut skb[i..], 3);
                    (data, i) = (data + d, i + pushed);
                    if pushed == 0 {
                        // A full ring: push_ref grows it.
                        skb[i].set_cca_class(3);
                        run.push_ref(&mut q2, now, &skb[i], 0);
                        (data, i) = (data + 1, i + 1);
                    }
                }
                data += 1;
            }
            assert_eq!(data, seq, "every packet counted once as data");
            let (a, b): (Vec<Packet>, Vec<Packet>) = (one.q.iter().copied().collect(), run.q.iter().copied().collect());
            assert_eq!(a.len() as u64, seq);
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "the same packets, arrivals and marks");
            assert!(a.iter().all(|p| p.cca_class() == 3));
            assert_eq!((q1.len(), q1.peek_key().map(|k| k.0)), (q2.len(), q2.peek_key().map(|k| k.0)));
        }
    }

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
        let mut j = HostJitter::new(mean as u64, stream_rng(42, stream::HOST_SEND));
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

    #[test]
    fn the_host_noise_tail_takes_its_share_of_skbs_with_an_exponential_of_its_mean() {
        // n draws of the tail at 5 000 per million, mean 3 ms: the count taking it
        // is binomial (within 5 standard deviations of n p), and the delays
        // that took it have an exponential law's mean and sd (5 standard errors).
        let (ppm, mean) = (5_000u32, 3_000_000.0);
        let law = TailLaw::new(ppm, mean as u64).expect("a tail");
        let mut rng = stream_rng(42, stream::HOST_TAIL_ACK);
        let n = 2_000_000;
        let taken: Vec<f64> = (0..n).map(|_| law.draw_ns(&mut rng)).filter(|&x| x > 0).map(|x| x as f64).collect();
        let p = f64::from(ppm) / 1e6;
        let k = taken.len() as f64;
        assert!((k - n as f64 * p).abs() < 5.0 * (n as f64 * p * (1.0 - p)).sqrt(), "{k} of {n} took the tail");
        let m = taken.iter().sum::<f64>() / k;
        let sd = (taken.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (k - 1.0)).sqrt();
        let se = mean / k.sqrt();
        assert!((m - mean).abs() < 5.0 * se, "mean {m} ns");
        assert!((sd - mean).abs() < 5.0 * se * 2f64.sqrt(), "sd {sd} ns");
        assert!(TailLaw::new(0, 3_000_000).is_none() && TailLaw::new(5_000, 0).is_none(), "0 is none");
    }
}
