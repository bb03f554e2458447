//! RRMQS — Round Robin Measuring Queues Set, with a per-CCA flow meter and a
//! feedback loop (S1: "Ensuring Transport Fairness with Smart Networks", ETH
//! semester thesis 2020).
//!
//! Queues: one large main queue plus one small measuring queue per CCA class
//! (`Packet::cca_class()`; the network is assumed to know a flow's CCA, as S1
//! does). A measuring queue holds at most `measure_flows` (C_f) flows and
//! `measure_limit_packets` (C_p) packets.
//!
//! Enqueue: the first packet of a flow never seen before is pinned (by flow
//! id, our 5-tuple) to its class's measuring queue if fewer than C_f flows
//! are pinned there; pinned flows always go to that queue (tail drop at
//! C_p); every other packet goes to the main queue (tail drop at its limit).
//! A pin is released when the flow completes (the simulator's equivalent of
//! seeing its FIN) or after `pin_timeout_ns` without arrivals; the freed slot
//! goes to the next *new* flow of that class.
//!
//! Dequeue: when both parts are backlogged, with probability `p` (S1: 1/51)
//! serve the measuring set first — round robin over the classes, skipping
//! empty queues — else the main queue first; if the first choice is empty,
//! take the other.
//!
//! Flow meter: every `window_ns` (S1: 0.5 s), per class and separately for
//! the main queue and the measuring set, count enqueued packets and distinct
//! flows (a Bloom filter per part and class, reset every window: a flow is
//! new when inserting it sets at least one bit). Per-flow rate = packets /
//! window / flows. V = main per-flow rates, V' = measuring per-flow rates,
//! I = V / V' per class (undefined when either part saw no flow of the class).
//!
//! Feedback (`feedback`):
//! - `S1`: i_j > `high` (1.2) -> drop every main-queue arrival of class j
//!   during the next window; i_j < `low` (0.8) -> class j's main-queue
//!   packets go to a priority FIFO served before the normal one. With
//!   `relative` (ours; off by default) the thresholds apply to i_j / G, G the
//!   geometric mean of the window's defined indices: S1's rule assumes I = 1
//!   means fair, but the level of I depends on how many flows share the main
//!   queue (a measuring flow gets about p / (m C_f) of the link), while S1's
//!   fairness J(V, V') only asks for equal slowdowns.
//! - `Improved` (ours, beyond S1; the thesis names delaying instead of
//!   dropping and better meters as open points): the main queue becomes one
//!   FIFO per class served by deficit round robin with quantum
//!   `quantum_bytes x w_j x n_j`, n_j the class's distinct main-queue flows
//!   in the last window (Bloom count), so equal weights mean equal per-flow
//!   shares across classes. Each window the weights move proportionally
//!   towards equal slowdowns: ln I_j is smoothed by an EWMA (`ewma`), and,
//!   in windows with a fresh index for class j, w_j <- w_j x (G / I_j)^`gain`,
//!   G the geometric mean of the smoothed I over the classes measured, normalised to geometric mean 1 and clamped
//!   to [`weight_min`, `weight_max`]. Nothing is dropped by the feedback; a
//!   class above the mean is delayed. On main-queue overflow the head of the
//!   longest class FIFO is dropped (SFQ/fq_codel-style), so a class within
//!   its share keeps its packets.
//! - `Allocate` (ours, beyond S1): the same per-class DRR main queue, but the
//!   weights are set directly instead of integrated. Every
//!   `alloc_interval_ns` (100 ms): V'_j = mean rate of class j's pinned flows
//!   so far (completed: admitted packets / lifetime; in progress for at least
//!   one interval: dequeued packets / elapsed); V_j = the same over its main
//!   flows; I_j = V_j / V'_j and G their geometric mean. Then
//!   ln w_j = ln V'_j + `alloc_gain` x ln(G / I_j) (feed-forward on the
//!   reference plus a proportional correction on the run's cumulative index),
//!   normalised to geometric mean 1 and clamped to [`weight_min`,
//!   `weight_max`]. A class without a reference takes the geometric mean of
//!   the others'. Quanta are scaled by the Bloom flow count as above, so
//!   w_j x n_j is the class's share: each main flow of class j is served in
//!   proportion to V'_j.
//! - `Off`: meter only.
//!
//! Meters (`meter`): `Window` is S1's per-window packet rate above. `Flow`
//! (ours, the thesis's "FCT-based metering"): the gateway keeps, per flow,
//! the time of its first packet and its admitted packets; when the flow
//! completes (FIN), its lifetime rate = packets / (completion - first
//! packet) is added to its class and part. V_j (V'_j) = mean lifetime rate
//! of the class's main (pinned) flows that completed in the window. Both
//! meters are always logged; `meter` selects the index the feedback uses.
//!
//! Constants (defaults, config.rs / spec.py): p = 1/51, window 500 ms, high
//! 1.2, low 0.8, C_f 2, Bloom filter 4096 bits x 3 hashes (double hashing,
//! Kirsch & Mitzenmacher, ESA 2006) salted from the run seed. Allocate (ours,
//! tuned on the S1 preset, seeds 1-5, docs/in-network.md): alloc_interval
//! 100 ms, alloc_gain 4. DRR: Shreedhar & Varghese, SIGCOMM 1995.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::{DropReason, Qdisc};
use crate::engine::TimeNs;
use crate::packet::Packet;
use crate::result::MeterResult;
use crate::rng::splitmix64;

/// Which meter's index drives the feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Meter {
    Window,
    Flow,
}

/// Which feedback loop acts on the meter's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    Off,
    S1,
    Improved,
    Allocate,
}

pub const DEFAULT_P: f64 = 1.0 / 51.0;
pub const DEFAULT_WINDOW_NS: u64 = 500_000_000;
pub const DEFAULT_HIGH: f64 = 1.2;
pub const DEFAULT_LOW: f64 = 0.8;
pub const DEFAULT_MEASURE_FLOWS: u32 = 2;
pub const DEFAULT_MEASURE_LIMIT_PKTS: u64 = 20;
pub const DEFAULT_BLOOM_BITS: u32 = 4096;
pub const DEFAULT_BLOOM_HASHES: u32 = 3;
pub const DEFAULT_PIN_TIMEOUT_NS: u64 = 1_000_000_000;
pub const DEFAULT_QUANTUM_BYTES: u64 = 1514;
pub const DEFAULT_GAIN: f64 = 0.5;
pub const DEFAULT_EWMA: f64 = 0.5;
pub const DEFAULT_WEIGHT_MIN: f64 = 0.05;
pub const DEFAULT_WEIGHT_MAX: f64 = 20.0;
pub const DEFAULT_ALLOC_INTERVAL_NS: u64 = 100_000_000;
pub const DEFAULT_ALLOC_GAIN: f64 = 4.0;

/// Where RRMQS is specified.
pub const SOURCE: &str = "RRMQS + flow meter + feedback (S1): main queue and per-CCA measuring queues";

crate::param_choice!(Meter);
crate::param_choice!(Feedback);

crate::declare_params! {
    /// RRMQS's parameters (S1's values; see docs/in-network.md).
    pub struct RrmqsConfig {
        /// Main queue limit, packets (experiment files: bottleneck.buffer or qdisc.limit).
        limit_packets: u64 = 1000, Range::at_least(1.0);
        /// C_p: packets per measuring queue.
        measure_limit_packets: u64 = DEFAULT_MEASURE_LIMIT_PKTS, Range::at_least(1.0);
        /// C_f: flows pinned per measuring queue.
        measure_flows: u32 = DEFAULT_MEASURE_FLOWS, Range::Any;
        /// Probability of serving the measuring set first.
        p: f64 = DEFAULT_P, Range::closed(0.0, 1.0);
        /// Meter window.
        window_ns: u64 = DEFAULT_WINDOW_NS, Range::above(0.0);
        /// Feedback loop acting on the meter's output.
        feedback: Feedback = Feedback::S1, Range::Choice(&["off", "s1", "improved", "allocate"]);
        /// Which meter's index drives the feedback.
        meter: Meter = Meter::Window, Range::Choice(&["window", "flow"]);
        /// S1 feedback: penalise a CCA whose index exceeds this.
        high: f64 = DEFAULT_HIGH, Range::above(0.0);
        /// S1 feedback: compare i_j / (geometric mean of the window's indices) with the thresholds.
        relative: bool = false, Range::Any;
        /// S1 feedback: prioritise a CCA whose index is below this.
        low: f64 = DEFAULT_LOW, Range::above(0.0);
        /// Bits of the per-queue Bloom filter counting flows.
        bloom_bits: u32 = DEFAULT_BLOOM_BITS, Range::at_least(64.0);
        /// Hash functions of the Bloom filter.
        bloom_hashes: u32 = DEFAULT_BLOOM_HASHES, Range::closed(1.0, 16.0);
        /// A pinned flow is released after this long without a packet.
        pin_timeout_ns: u64 = DEFAULT_PIN_TIMEOUT_NS, Range::above(0.0);
        /// Improved feedback: DRR quantum at weight 1.
        quantum_bytes: u64 = DEFAULT_QUANTUM_BYTES, Range::above(0.0);
        /// Improved feedback: gain of the weight update.
        gain: f64 = DEFAULT_GAIN, Range::at_least(0.0);
        /// Improved feedback: EWMA weight of the index.
        ewma: f64 = DEFAULT_EWMA, Range::open_closed(0.0, 1.0);
        /// Improved feedback: smallest weight.
        weight_min: f64 = DEFAULT_WEIGHT_MIN, Range::open_closed(0.0, 1.0);
        /// Improved feedback: largest weight.
        weight_max: f64 = DEFAULT_WEIGHT_MAX, Range::at_least(1.0);
        /// Allocate feedback: weight update period.
        alloc_interval_ns: u64 = DEFAULT_ALLOC_INTERVAL_NS, Range::above(0.0);
        /// Allocate feedback: correction gain (0 = feed-forward only).
        alloc_gain: f64 = DEFAULT_ALLOC_GAIN, Range::at_least(0.0);
    }
    check = check_rrmqs;
}

fn check_rrmqs(c: &RrmqsConfig) -> Result<(), crate::params::ParamError> {
    crate::params::ParamError::at_most("low", c.low, "high", c.high)
}

/// A Bloom filter counting distinct keys: `insert` is true when the key was
/// (probably) not in the filter yet, i.e. at least one of its bits was clear.
/// False positives make the count an underestimate.
pub struct Bloom {
    words: Vec<u64>,
    nbits: u64,
    hashes: u32,
    salt: u64,
    count: u32,
}

impl Bloom {
    pub fn new(nbits: u32, hashes: u32, salt: u64) -> Bloom {
        let nbits = nbits.max(64) as u64;
        Bloom { words: vec![0; nbits.div_ceil(64) as usize], nbits, hashes, salt, count: 0 }
    }

    pub fn insert(&mut self, key: u64) -> bool {
        let h = splitmix64(key ^ self.salt);
        let (h1, h2) = (h & 0xFFFF_FFFF, (h >> 32) | 1);
        let mut new = false;
        for i in 0..self.hashes as u64 {
            let b = h1.wrapping_add(i.wrapping_mul(h2)) % self.nbits;
            let (w, m) = ((b / 64) as usize, 1u64 << (b % 64));
            if self.words[w] & m == 0 {
                new = true;
                self.words[w] |= m;
            }
        }
        if new {
            self.count += 1;
        }
        new
    }

    /// Distinct keys inserted since the last reset (estimate).
    pub fn count(&self) -> u32 {
        self.count
    }

    pub fn reset(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.count = 0;
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    None,
    Drop,
    Priority,
}

const FLOW_NEW: u8 = 0;
const FLOW_MAIN: u8 = 1;
const FLOW_PINNED: u8 = 2;
const FLOW_DONE: u8 = 3;
const MAIN: usize = 0;
const MEAS: usize = 1;

pub struct Rrmqs {
    c: RrmqsConfig,
    rng: Pcg64Mcg,
    salt: u64,
    // Main queue. S1/off: main[0] normal, main[1] priority. Improved: one FIFO per class.
    main: Vec<VecDeque<Packet>>,
    main_bytes_q: Vec<u64>,
    deficit: Vec<u64>,
    active: VecDeque<usize>,
    in_active: Vec<bool>,
    main_pkts: u64,
    in_service: super::InService,
    // Measuring set.
    meas: Vec<VecDeque<Packet>>,
    rr_next: usize,
    meas_pkts: u64,
    bytes: u64,
    // Pinning, by flow id.
    flow_state: Vec<u8>,
    flow_pin: Vec<u32>,
    pinned_count: Vec<u32>,
    pin_last_ns: Vec<u64>,
    // Flow meter: per flow first arrival and admitted packets; per [part][class] sums of completed flows' rates.
    flow_first_ns: Vec<u64>,
    flow_pkts: Vec<u64>,
    /// Packets of the flow dequeued so far (allocate feedback: in-progress rates are delivered, not admitted, rates).
    flow_served: Vec<u64>,
    flow_class: Vec<u16>,
    done_sum: [Vec<f64>; 2],
    done_cnt: [Vec<u32>; 2],
    // Meter: [part][class].
    pkts: [Vec<u64>; 2],
    bloom: [Vec<Bloom>; 2],
    win_index: u32,
    win_end_ns: u64,
    /// Allocate feedback: time of the next weight update.
    alloc_next_ns: u64,
    // Feedback.
    action: Vec<Action>,
    weight: Vec<f64>,
    /// Improved feedback: distinct main-queue flows of each class in the last window (DRR scales quanta by it).
    flows_last: Vec<u32>,
    ln_index: Vec<Option<f64>>,
    /// Allocate feedback: per [part][class] lifetime rates of the flows completed so far in the run (sum, count).
    cum_sum: [Vec<f64>; 2],
    cum_cnt: [Vec<u32>; 2],
    /// Allocate feedback: ln of each class's correction factor.
    corr: Vec<f64>,
    log: MeterResult,
    pending_drops: Vec<(Packet, DropReason)>,
}

impl Rrmqs {
    /// `seed` is this discipline's stream seed (rng::stream::QDISC).
    pub fn new(c: &RrmqsConfig, seed: u64) -> Rrmqs {
        let mut q = Rrmqs {
            c: c.clone(),
            in_service: super::InService::default(),
            rng: Pcg64Mcg::seed_from_u64(seed),
            salt: splitmix64(seed ^ 0xB100_F11E),
            main: Vec::new(),
            main_bytes_q: Vec::new(),
            deficit: Vec::new(),
            active: VecDeque::new(),
            in_active: Vec::new(),
            main_pkts: 0,
            meas: Vec::new(),
            rr_next: 0,
            meas_pkts: 0,
            bytes: 0,
            flow_state: Vec::new(),
            flow_pin: Vec::new(),
            pinned_count: Vec::new(),
            pin_last_ns: Vec::new(),
            flow_first_ns: Vec::new(),
            flow_pkts: Vec::new(),
            flow_served: Vec::new(),
            flow_class: Vec::new(),
            done_sum: [Vec::new(), Vec::new()],
            done_cnt: [Vec::new(), Vec::new()],
            pkts: [Vec::new(), Vec::new()],
            bloom: [Vec::new(), Vec::new()],
            win_index: 0,
            win_end_ns: c.window_ns,
            alloc_next_ns: c.alloc_interval_ns,
            action: Vec::new(),
            weight: Vec::new(),
            flows_last: Vec::new(),
            ln_index: Vec::new(),
            cum_sum: [Vec::new(), Vec::new()],
            cum_cnt: [Vec::new(), Vec::new()],
            corr: Vec::new(),
            log: MeterResult::default(),
            pending_drops: Vec::new(),
        };
        q.set_classes(1);
        q
    }

    /// Per-class DRR main queue (improved and allocate feedback).
    fn improved(&self) -> bool {
        matches!(self.c.feedback, Feedback::Improved | Feedback::Allocate)
    }

    fn ensure_class(&mut self, n: usize) {
        while self.meas.len() < n {
            let j = self.meas.len() as u64;
            self.meas.push(VecDeque::new());
            self.pinned_count.push(0);
            for part in 0..2 {
                self.pkts[part].push(0);
                self.done_sum[part].push(0.0);
                self.done_cnt[part].push(0);
                self.cum_sum[part].push(0.0);
                self.cum_cnt[part].push(0);
                let salt = splitmix64(self.salt ^ (j * 2 + part as u64 + 1));
                self.bloom[part].push(Bloom::new(self.c.bloom_bits, self.c.bloom_hashes, salt));
            }
            self.action.push(Action::None);
            self.weight.push(1.0);
            self.flows_last.push(1);
            self.ln_index.push(None);
            self.corr.push(0.0);
        }
        let nq = if self.improved() { n.max(self.main.len()) } else { 2 };
        while self.main.len() < nq {
            self.main.push(VecDeque::new());
            self.main_bytes_q.push(0);
            self.deficit.push(0);
            self.in_active.push(false);
        }
    }

    fn classes(&self) -> usize {
        self.meas.len()
    }

    /// Close every window that ended at or before `now`.
    fn roll(&mut self, now: TimeNs) {
        loop {
            let next_alloc = if self.c.feedback == Feedback::Allocate { self.alloc_next_ns } else { u64::MAX };
            if now < self.win_end_ns.min(next_alloc) {
                break;
            }
            if next_alloc <= self.win_end_ns {
                self.allocate(next_alloc);
                self.alloc_next_ns += self.c.alloc_interval_ns;
            } else {
                self.close_window();
                self.win_index += 1;
                self.win_end_ns += self.c.window_ns;
            }
        }
    }

    /// The end of a measurement window: per class the rates and index I = V / V'
    /// (`window_index`), the next window's treatment (`decide`), one log row per class
    /// (`log_window`), then the counters restart and idle pins are released (`reset_window`).
    fn close_window(&mut self) {
        let (index, rates, flow_rates) = self.window_index();
        self.decide(&index);
        self.log_window(&index, &rates, &flow_rates);
        self.reset_window();
    }

    /// Per class: the index I (NaN when undefined), the packet rates per flow (V, V') and the
    /// completed flows' mean lifetime rates, packets/s (NaN when none).
    #[allow(clippy::type_complexity)]
    fn window_index(&self) -> (Vec<f64>, Vec<(f64, f64)>, Vec<(f64, f64)>) {
        let m = self.classes();
        let win_s = self.c.window_ns as f64 / 1e9;
        let mut index = vec![f64::NAN; m];
        let mut rates = vec![(f64::NAN, f64::NAN); m];
        let mut flow_rates = vec![(f64::NAN, f64::NAN); m];
        for j in 0..m {
            let r = |part: usize| {
                let f = self.bloom[part][j].count();
                if f == 0 {
                    f64::NAN
                } else {
                    self.pkts[part][j] as f64 / win_s / f as f64
                }
            };
            let fr = |part: usize| {
                let n = self.done_cnt[part][j];
                if n == 0 {
                    f64::NAN
                } else {
                    self.done_sum[part][j] / n as f64
                }
            };
            let (v, vp) = (r(MAIN), r(MEAS));
            rates[j] = (v, vp);
            flow_rates[j] = (fr(MAIN), fr(MEAS));
            let (a, b) = if self.c.meter == Meter::Flow { flow_rates[j] } else { (v, vp) };
            if a.is_finite() && b.is_finite() && b > 0.0 {
                index[j] = a / b;
            }
        }
        (index, rates, flow_rates)
    }

    /// The next window's treatment of each class from this window's index (feedback S1 or improved).
    fn decide(&mut self, index: &[f64]) {
        let m = self.classes();
        match self.c.feedback {
            Feedback::Off => {}
            Feedback::S1 => {
                let known: Vec<f64> = index.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect();
                let g = if self.c.relative && !known.is_empty() {
                    (known.iter().map(|x| x.ln()).sum::<f64>() / known.len() as f64).exp()
                } else {
                    1.0
                };
                for j in 0..m {
                    let i = index[j] / g;
                    self.action[j] = if i > self.c.high {
                        Action::Drop
                    } else if i < self.c.low {
                        Action::Priority
                    } else {
                        Action::None
                    };
                }
            }
            Feedback::Improved => {
                // Only classes with a fresh index this window move their weight
                // (an integral step on a stale index would wind up).
                let fresh: Vec<bool> = index.iter().map(|x| x.is_finite() && *x > 0.0).collect();
                for j in 0..m {
                    if fresh[j] {
                        let x = index[j].ln();
                        self.ln_index[j] = Some(match self.ln_index[j] {
                            Some(old) => (1.0 - self.c.ewma) * old + self.c.ewma * x,
                            None => x,
                        });
                    }
                }
                let known: Vec<f64> = self.ln_index.iter().flatten().copied().collect();
                if known.len() >= 2 {
                    let g = known.iter().sum::<f64>() / known.len() as f64;
                    for j in 0..m {
                        if let (true, Some(l)) = (fresh[j], self.ln_index[j]) {
                            self.weight[j] *= (self.c.gain * (g - l)).exp();
                        }
                    }
                    let lg = self.weight.iter().map(|w| w.ln()).sum::<f64>() / m as f64;
                    for w in self.weight.iter_mut() {
                        *w = (*w / lg.exp()).clamp(self.c.weight_min, self.c.weight_max);
                    }
                }
            }
            Feedback::Allocate => {} // every alloc_interval, from roll()
        }
    }

    /// One meter-log row per class for the window just closed.
    fn log_window(&mut self, index: &[f64], rates: &[(f64, f64)], flow_rates: &[(f64, f64)]) {
        let m = self.classes();
        let lg = &mut self.log;
        for j in 0..m {
            lg.window.push(self.win_index);
            lg.start_ns.push(self.win_index as u64 * self.c.window_ns);
            lg.class.push(j as u16);
            lg.main_pkts.push(self.pkts[MAIN][j]);
            lg.rrmqs_pkts.push(self.pkts[MEAS][j]);
            lg.main_flows.push(self.bloom[MAIN][j].count());
            lg.rrmqs_flows.push(self.bloom[MEAS][j].count());
            lg.main_rate.push(rates[j].0);
            lg.rrmqs_rate.push(rates[j].1);
            lg.index.push(index[j]);
            lg.action.push(
                match (self.c.feedback, self.action[j]) {
                    (Feedback::Off, _) => "off",
                    (Feedback::Improved, _) => "weight",
                    (Feedback::Allocate, _) => "allocate",
                    (_, Action::Drop) => "drop",
                    (_, Action::Priority) => "priority",
                    (_, Action::None) => "none",
                }
                .to_string(),
            );
            lg.weight.push(self.weight[j]);
            lg.main_done.push(self.done_cnt[MAIN][j]);
            lg.rrmqs_done.push(self.done_cnt[MEAS][j]);
            lg.main_flow_rate.push(flow_rates[j].0);
            lg.rrmqs_flow_rate.push(flow_rates[j].1);
        }
    }

    /// Restart the window's counters and Bloom filters; release the pins of flows idle for pin_timeout.
    fn reset_window(&mut self) {
        let m = self.classes();
        for j in 0..m {
            self.flows_last[j] = self.bloom[MAIN][j].count().max(1);
        }
        for part in 0..2 {
            for j in 0..m {
                self.pkts[part][j] = 0;
                self.bloom[part][j].reset();
                self.done_sum[part][j] = 0.0;
                self.done_cnt[part][j] = 0;
            }
        }
        // Release pins of flows idle for pin_timeout.
        let end = self.win_end_ns;
        for k in 0..self.log.pinned_flow.len() {
            if self.log.released_ns[k] == u64::MAX && self.pin_last_ns[k] + self.c.pin_timeout_ns <= end {
                self.release(k, self.pin_last_ns[k] + self.c.pin_timeout_ns);
            }
        }
    }

    /// Allocate feedback: each class's reference per-flow rate V'_j (packets/s)
    /// at `now`: the mean over its pinned flows so far, completed ones at their
    /// lifetime rate, pinned ones still in progress (pinned at least one window
    /// ago) at dequeued packets / elapsed time. None before the class has one.
    fn reference(&self, now: TimeNs) -> Vec<Option<f64>> {
        let in_progress = (0..self.log.pinned_flow.len())
            .filter(|&k| self.log.released_ns[k] == u64::MAX)
            .map(|k| (self.log.pinned_flow[k] as usize, self.log.pinned_class[k] as usize));
        self.mean_rates(MEAS, now, in_progress)
    }

    /// Per class, the mean per-flow rate (packets/s) of one part (`MAIN` or
    /// `MEAS`): its completed flows at their lifetime rate (`cum_sum`,
    /// `cum_cnt`) and the given in-progress `(flow, class)` pairs that are at
    /// least one `alloc_interval_ns` old at dequeued packets / elapsed time.
    /// None where the class has no such flow (or only idle ones).
    fn mean_rates(&self, part: usize, now: TimeNs, in_progress: impl Iterator<Item = (usize, usize)>) -> Vec<Option<f64>> {
        let mut sum = self.cum_sum[part].clone();
        let mut cnt: Vec<f64> = self.cum_cnt[part].iter().map(|&n| n as f64).collect();
        for (f, j) in in_progress {
            let age = now.saturating_sub(self.flow_first_ns[f]);
            if age >= self.c.alloc_interval_ns {
                sum[j] += self.flow_served[f] as f64 / (age as f64 / 1e9);
                cnt[j] += 1.0;
            }
        }
        (0..self.classes()).map(|j| if cnt[j] > 0.0 && sum[j] > 0.0 { Some(sum[j] / cnt[j]) } else { None }).collect()
    }

    /// Allocate feedback, every `alloc_interval_ns`: ln w_j = ln V'_j + corr_j,
    /// normalised to geometric mean 1 and clamped to [`weight_min`,
    /// `weight_max`]; a class without a reference yet gets the geometric mean of
    /// the others'. corr_j = `alloc_gain` x ln(G / I_j), I_j = V_j / V'_j the
    /// class's index so far and G the geometric mean of the defined indices: V_j
    /// is the mean rate of the class's main flows seen so far (completed ones at
    /// their lifetime rate, in-progress ones older than one interval at
    /// dequeued packets / elapsed). The index is cumulative, so the correction
    /// is proportional: a class whose earlier flows got too much is held back
    /// until its mean comes down.
    fn allocate(&mut self, now: TimeNs) {
        let m = self.classes();
        let refs = self.reference(now);
        let known: Vec<f64> = refs.iter().flatten().map(|r| r.ln()).collect();
        if known.is_empty() {
            return;
        }
        let prior = known.iter().sum::<f64>() / known.len() as f64;
        let main_flows = (0..self.flow_state.len()).filter(|&f| self.flow_state[f] == FLOW_MAIN).map(|f| (f, self.flow_class[f] as usize));
        let main = self.mean_rates(MAIN, now, main_flows);
        let idx: Vec<Option<f64>> = (0..m)
            .map(|j| match (main[j], refs[j]) {
                (Some(v), Some(r)) => Some(v.ln() - r.ln()),
                _ => None,
            })
            .collect();
        let xs: Vec<f64> = idx.iter().flatten().copied().collect();
        if xs.len() >= 2 {
            let g = xs.iter().sum::<f64>() / xs.len() as f64;
            for j in 0..m {
                if let Some(x) = idx[j] {
                    self.corr[j] = self.c.alloc_gain * (g - x);
                }
            }
        }
        let lw: Vec<f64> = (0..m).map(|j| refs[j].map_or(prior, f64::ln) + self.corr[j]).collect();
        let g = lw.iter().sum::<f64>() / m as f64;
        for j in 0..m {
            self.weight[j] = (lw[j] - g).exp().clamp(self.c.weight_min, self.c.weight_max);
        }
    }

    fn release(&mut self, k: usize, now: TimeNs) {
        self.log.released_ns[k] = now;
        let j = self.log.pinned_class[k] as usize;
        self.pinned_count[j] -= 1;
        let f = self.log.pinned_flow[k] as usize;
        self.flow_state[f] = FLOW_MAIN;
    }

    fn count(&mut self, part: usize, j: usize, flow: u32) {
        self.pkts[part][j] += 1;
        self.bloom[part][j].insert(flow as u64);
    }

    fn main_queue_of(&self, j: usize) -> usize {
        if self.improved() {
            j
        } else if self.action[j] == Action::Priority {
            1
        } else {
            0
        }
    }

    fn push_main(&mut self, qi: usize, p: Packet) {
        self.main_pkts += 1;
        self.bytes += p.wire_bytes as u64;
        self.main_bytes_q[qi] += p.wire_bytes as u64;
        self.main[qi].push_back(p);
        if self.improved() && !self.in_active[qi] {
            self.in_active[qi] = true;
            self.deficit[qi] = self.quantum(qi);
            self.active.push_back(qi);
        }
    }

    fn pop_main_from(&mut self, qi: usize) -> Option<Packet> {
        let p = self.main[qi].pop_front()?;
        self.main_pkts -= 1;
        self.bytes -= p.wire_bytes as u64;
        self.main_bytes_q[qi] -= p.wire_bytes as u64;
        Some(p)
    }

    fn quantum(&self, j: usize) -> u64 {
        ((self.c.quantum_bytes as f64 * self.weight[j] * self.flows_last[j] as f64).round() as u64).max(1)
    }

    fn deq_main(&mut self) -> Option<Packet> {
        if self.main_pkts == 0 {
            return None;
        }
        if !self.improved() {
            return self.pop_main_from(1).or_else(|| self.pop_main_from(0));
        }
        // Deficit round robin over the class FIFOs (Shreedhar & Varghese 1995).
        loop {
            let qi = *self.active.front().expect("backlog without active class");
            let Some(head) = self.main[qi].front() else {
                self.active.pop_front();
                self.in_active[qi] = false;
                continue;
            };
            let len = head.wire_bytes as u64;
            if len <= self.deficit[qi] {
                self.deficit[qi] -= len;
                let p = self.pop_main_from(qi);
                if self.main[qi].is_empty() {
                    self.active.pop_front();
                    self.in_active[qi] = false;
                }
                return p;
            }
            self.deficit[qi] += self.quantum(qi);
            self.active.rotate_left(1);
        }
    }

    fn deq_meas(&mut self) -> Option<Packet> {
        let m = self.classes();
        for k in 0..m {
            let j = (self.rr_next + k) % m;
            if let Some(p) = self.meas[j].pop_front() {
                self.rr_next = (j + 1) % m;
                self.meas_pkts -= 1;
                self.bytes -= p.wire_bytes as u64;
                return Some(p);
            }
        }
        None
    }

    fn flow_slot(&mut self, flow: u32) -> usize {
        let f = flow as usize;
        if f >= self.flow_state.len() {
            self.flow_state.resize(f + 1, FLOW_NEW);
            self.flow_pin.resize(f + 1, 0);
            self.flow_first_ns.resize(f + 1, 0);
            self.flow_pkts.resize(f + 1, 0);
            self.flow_served.resize(f + 1, 0);
            self.flow_class.resize(f + 1, 0);
        }
        f
    }
}

impl Qdisc for Rrmqs {
    fn enqueue(&mut self, pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        self.roll(now);
        let j = pkt.cca_class() as usize;
        self.ensure_class(j + 1);
        let f = self.flow_slot(pkt.flow);
        if self.flow_state[f] == FLOW_NEW {
            self.flow_first_ns[f] = now;
            self.flow_class[f] = j as u16;
            if self.pinned_count[j] < self.c.measure_flows {
                self.pinned_count[j] += 1;
                self.flow_state[f] = FLOW_PINNED;
                self.flow_pin[f] = self.log.pinned_flow.len() as u32;
                self.log.pinned_flow.push(pkt.flow);
                self.log.pinned_class.push(j as u16);
                self.log.pinned_ns.push(now);
                self.log.released_ns.push(u64::MAX);
                self.pin_last_ns.push(now);
            } else {
                self.flow_state[f] = FLOW_MAIN;
            }
        }
        if self.flow_state[f] == FLOW_PINNED {
            self.pin_last_ns[self.flow_pin[f] as usize] = now;
            if self.meas[j].len() as u64 >= self.c.measure_limit_packets {
                return Err((pkt, DropReason::Overflow));
            }
            self.count(MEAS, j, pkt.flow);
            self.flow_pkts[f] += 1;
            self.meas_pkts += 1;
            self.bytes += pkt.wire_bytes as u64;
            self.meas[j].push_back(pkt);
            return Ok(());
        }
        if self.c.feedback == Feedback::S1 && self.action[j] == Action::Drop {
            return Err((pkt, DropReason::Aqm));
        }
        let qi = self.main_queue_of(j);
        if self.main_pkts + self.in_service.packets >= self.c.limit_packets {
            if !self.improved() {
                return Err((pkt, DropReason::Overflow));
            }
            // Longest class FIFO loses its head; the arrival if it is the longest.
            let longest = (0..self.main.len()).max_by_key(|&k| (self.main[k].len(), std::cmp::Reverse(k))).unwrap_or(qi);
            if longest == qi || self.main[longest].len() <= self.main[qi].len() {
                return Err((pkt, DropReason::Overflow));
            }
            let d = self.pop_main_from(longest).expect("longest queue is non-empty");
            self.pending_drops.push((d, DropReason::Overflow));
        }
        self.count(MAIN, j, pkt.flow);
        self.flow_pkts[f] += 1;
        self.push_main(qi, pkt);
        Ok(())
    }

    fn dequeue(&mut self, now: TimeNs, _dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        self.roll(now);
        let meas_first = if self.main_pkts > 0 && self.meas_pkts > 0 { self.rng.gen::<f64>() < self.c.p } else { self.meas_pkts > 0 };
        let p = if meas_first { self.deq_meas().or_else(|| self.deq_main()) } else { self.deq_main().or_else(|| self.deq_meas()) };
        if let Some(p) = &p {
            self.flow_served[p.flow as usize] += 1;
        }
        p
    }

    fn len_packets(&self) -> usize {
        (self.main_pkts + self.meas_pkts) as usize
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn set_in_service(&mut self, s: super::InService) {
        self.in_service = s;
    }

    fn take_enqueue_drops(&mut self, dropped: &mut Vec<(Packet, DropReason)>) {
        dropped.append(&mut self.pending_drops);
    }

    fn drops_others_on_enqueue(&self) -> bool {
        true
    }

    fn set_classes(&mut self, n: usize) {
        self.ensure_class(n.max(1));
    }

    fn flow_finished(&mut self, flow: u32, now: TimeNs) {
        let f = flow as usize;
        if f >= self.flow_state.len() || self.flow_state[f] == FLOW_NEW || self.flow_state[f] == FLOW_DONE {
            return;
        }
        self.roll(now);
        // The flow's class: from its pin, else from the class its packets were counted in.
        let pinned = self.flow_state[f] == FLOW_PINNED;
        if let Some(j) = self.flow_class.get(f).copied() {
            let life = now.saturating_sub(self.flow_first_ns[f]).max(1) as f64 / 1e9;
            let part = if pinned { MEAS } else { MAIN };
            self.done_sum[part][j as usize] += self.flow_pkts[f] as f64 / life;
            self.done_cnt[part][j as usize] += 1;
            self.cum_sum[part][j as usize] += self.flow_pkts[f] as f64 / life;
            self.cum_cnt[part][j as usize] += 1;
        }
        if pinned {
            self.release(self.flow_pin[f] as usize, now);
        }
        self.flow_state[f] = FLOW_DONE;
    }

    fn take_meter(&mut self, now: TimeNs) -> Option<MeterResult> {
        self.roll(now);
        Some(std::mem::take(&mut self.log))
    }
}

#[cfg(test)]
#[path = "rrmqs_tests.rs"]
mod tests;
