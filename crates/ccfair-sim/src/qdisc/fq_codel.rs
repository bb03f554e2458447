//! FQ-CoDel: flow queueing with a CoDel AQM per queue.
//!
//! Arrivals are hashed (with a per-run perturbation) into one of `flows`
//! buckets, each a FIFO with its own CoDel state. A scheduler serves the
//! buckets by deficit round robin with a byte `quantum`, keeping two lists:
//! a bucket that becomes active joins `new_flows` (served first, so sparse
//! flows see almost no queueing); once its deficit is spent it moves to the
//! tail of `old_flows`. A bucket leaving `new_flows` empty goes to
//! `old_flows` (if that is non-empty) rather than straight out, which stops
//! a flow from gaming the new list. CoDel runs on each bucket at dequeue.
//! When the total limit (packets or memory) is exceeded after an enqueue,
//! packets are dropped from the head of the bucket with the largest backlog
//! until half of its backlog or `drop_batch` packets are gone.
//!
//! Sources: RFC 8290 (Hoeiland-Joergensen et al. 2018) sections 4-5;
//! Linux net/sched/sch_fq_codel.c (`fq_codel_enqueue`, `fq_codel_drop`
//! batch drop of half the fattest backlog, max 64 packets; `fq_codel_dequeue`
//! with the CoDel backlog check on the total backlog; defaults limit 10240
//! packets, 1024 flows, quantum = MTU 1514, memory limit 32 MiB, ecn on).
//!
//! Differences from Linux (docs/fidelity.md): the hash is SplitMix64 of the
//! flow id xor a seeded perturbation (Linux: skb flow hash of the 5-tuple);
//! memory is counted in wire bytes (Linux: skb truesize).

use crate::ring::Ring;

use super::codel::{codel_dequeue, CodelParams, CodelQueue, CodelStats, CodelVars};
use super::{DropReason, Qdisc};

/// Where FQ-CoDel is specified.
pub const SOURCE: &str = "FQ-CoDel: RFC 8290; Linux sch_fq_codel";

crate::declare_params! {
    /// FQ-CoDel's parameters (RFC 8290; defaults = Linux sch_fq_codel).
    pub struct FqCodelConfig {
        /// Queue limit, packets (Linux sch_fq_codel default 10240).
        limit_packets: Option<u64> = Some(10 * 1024), Range::at_least(1.0);
        /// Queue limit, wire bytes (unset: none).
        limit_bytes: Option<u64> = None, Range::at_least(1500.0);
        /// Memory limit over all queues, wire bytes (Linux memory_limit 32 MiB).
        memory_limit_bytes: Option<u64> = Some(32 << 20), Range::at_least(1500.0);
        /// Hash buckets (Linux `flows`).
        flows: u32 = 1024, Range::closed(1.0, 65536.0);
        /// DRR quantum (Linux: the device MTU).
        quantum_bytes: u64 = 1514, Range::above(0.0);
        /// CoDel target per queue (RFC 8290).
        target_ns: u64 = 5_000_000, Range::above(0.0);
        /// CoDel interval per queue (RFC 8290).
        interval_ns: u64 = 100_000_000, Range::above(0.0);
        /// No drop while a queue holds at most this (Linux: the device MTU).
        mtu_bytes: u64 = 1514, Range::above(0.0);
        /// Mark ECN-capable packets instead of dropping them (Linux sch_fq_codel: on).
        ecn: bool = true, Range::Any;
        /// Packets dropped at most per overflow from the fattest queue (Linux drop_batch_size).
        drop_batch: u32 = 64, Range::at_least(1.0);
    }
    check = check_fq_codel;
}

fn check_fq_codel(c: &FqCodelConfig) -> Result<(), crate::params::ParamError> {
    super::codel::target_below_interval(c.target_ns, c.interval_ns)
}
use crate::engine::TimeNs;
use crate::packet::Packet;
use crate::rng::{derive_seed, splitmix64, stream};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum List {
    None,
    New,
    Old,
}

struct Bucket {
    q: Ring<Packet>,
    backlog: u64,
    deficit: i64,
    list: List,
    vars: CodelVars,
}

/// Totals the CoDel backlog check and the limits use.
struct Totals {
    packets: u64,
    bytes: u64,
}

/// A bucket's queue as CoDel sees it (its `vars` are borrowed apart).
struct View<'a> {
    q: &'a mut Ring<Packet>,
    backlog: &'a mut u64,
    t: &'a mut Totals,
}

impl CodelQueue for View<'_> {
    fn pop_head(&mut self) -> Option<Packet> {
        let p = self.q.pop_front()?;
        *self.backlog -= p.wire_bytes as u64;
        self.t.packets -= 1;
        self.t.bytes -= p.wire_bytes as u64;
        Some(p)
    }
    fn backlog_bytes(&self) -> u64 {
        self.t.bytes // Linux passes &sch->qstats.backlog: the whole qdisc
    }
}

pub struct FqCodel {
    par: CodelParams,
    limit_packets: Option<u64>,
    limit_bytes: Option<u64>,
    memory_limit_bytes: Option<u64>,
    in_service: super::InService,
    quantum: i64,
    drop_batch: u32,
    perturbation: u64,
    buckets: Vec<Bucket>,
    new_flows: Ring<u32>,
    old_flows: Ring<u32>,
    t: Totals,
    pending_drops: Vec<(Packet, DropReason)>,
    pub stats: CodelStats,
    /// Packets dropped by the overflow batch drop.
    pub overflow_drops: u64,
    /// Buckets that entered `new_flows`.
    pub new_flow_count: u64,
}

impl FqCodel {
    pub fn new(c: &FqCodelConfig, seed: u64) -> Self {
        FqCodel {
            par: CodelParams { target_ns: c.target_ns, interval_ns: c.interval_ns, mtu_bytes: c.mtu_bytes, ecn: c.ecn },
            limit_packets: c.limit_packets,
            limit_bytes: c.limit_bytes,
            memory_limit_bytes: c.memory_limit_bytes,
            in_service: super::InService::default(),
            quantum: c.quantum_bytes as i64,
            drop_batch: c.drop_batch.max(1),
            perturbation: derive_seed(seed, stream::QDISC),
            buckets: (0..c.flows)
                .map(|_| Bucket { q: Ring::new(), backlog: 0, deficit: 0, list: List::None, vars: CodelVars::default() })
                .collect(),
            new_flows: Ring::new(),
            old_flows: Ring::new(),
            t: Totals { packets: 0, bytes: 0 },
            pending_drops: Vec::new(),
            stats: CodelStats::default(),
            overflow_drops: 0,
            new_flow_count: 0,
        }
    }

    /// Bucket of a flow: a perturbed hash scaled onto [0, flows) (Linux reciprocal_scale).
    pub fn bucket_of(&self, flow: u32) -> usize {
        let h = splitmix64(flow as u64 ^ self.perturbation) >> 32;
        ((h * self.buckets.len() as u64) >> 32) as usize
    }

    fn over_limit(&self) -> bool {
        // The packet in transmission counts against the limits (mod.rs), not the memory limit
        // (Linux's memory_usage drops at dequeue).
        let s = self.in_service;
        self.limit_packets.is_some_and(|l| self.t.packets + s.packets > l)
            || self.limit_bytes.is_some_and(|l| self.t.bytes + s.bytes > l)
            || self.memory_limit_bytes.is_some_and(|l| self.t.bytes > l)
    }

    /// Linux fq_codel_drop: drop from the head of the fattest bucket until half
    /// its backlog or `drop_batch` packets are gone.
    fn drop_from_fattest(&mut self) {
        let (idx, _) = self.buckets.iter().enumerate().max_by_key(|(i, b)| (b.backlog, std::cmp::Reverse(*i))).expect("buckets");
        let b = &mut self.buckets[idx];
        let threshold = b.backlog / 2;
        let mut len = 0;
        let mut n = 0;
        while let Some(p) = b.q.pop_front() {
            b.backlog -= p.wire_bytes as u64;
            self.t.packets -= 1;
            self.t.bytes -= p.wire_bytes as u64;
            len += p.wire_bytes as u64;
            n += 1;
            self.overflow_drops += 1;
            self.pending_drops.push((p, DropReason::Overflow));
            if n >= self.drop_batch || len >= threshold {
                break;
            }
        }
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        let idx = self.bucket_of(pkt.flow);
        pkt.enqueue_ns = now;
        let b = &mut self.buckets[idx];
        b.backlog += pkt.wire_bytes as u64;
        self.t.packets += 1;
        self.t.bytes += pkt.wire_bytes as u64;
        b.q.push_back(pkt);
        if b.list == List::None {
            b.list = List::New;
            b.deficit = self.quantum;
            self.new_flows.push_back(idx as u32);
            self.new_flow_count += 1;
        }
        // Always admit, then (if over a limit) batch-drop from the fattest bucket,
        // repeated until under the limits (Linux drops once per arrival; with
        // equal-sized packets once is enough).
        while self.over_limit() {
            self.drop_from_fattest();
        }
        Ok(())
    }

    super::pending_drops!(pending_drops);

    fn dequeue(&mut self, now: TimeNs, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let head = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            let &idx = head.front()?;
            let b = &mut self.buckets[idx as usize];
            if b.deficit <= 0 {
                b.deficit += self.quantum;
                b.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(idx);
                continue;
            }
            let Bucket { q, backlog, vars, .. } = b;
            let mut view = View { q, backlog, t: &mut self.t };
            let p = codel_dequeue(&mut view, &self.par, vars, &mut self.stats, now, dropped);
            match p {
                Some(p) => {
                    b.deficit -= p.wire_bytes as i64;
                    return Some(p);
                }
                None => {
                    // Empty bucket: force a pass through old_flows to prevent starvation.
                    if from_new {
                        self.new_flows.pop_front();
                    } else {
                        self.old_flows.pop_front();
                    }
                    if from_new && !self.old_flows.is_empty() {
                        b.list = List::Old;
                        self.old_flows.push_back(idx);
                    } else {
                        b.list = List::None;
                    }
                }
            }
        }
    }

    super::fifo::counted_backlog!(|q| q.t.packets as usize, q.t.bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn fq(json: &str) -> FqCodel {
        FqCodel::new(&serde_json::from_str(json).unwrap(), 1)
    }

    /// Two flow ids that land in different buckets.
    fn distinct_flows(q: &FqCodel, n: usize) -> Vec<u32> {
        let mut out: Vec<u32> = vec![];
        for f in 0..1000 {
            if out.iter().all(|&g| q.bucket_of(g) != q.bucket_of(f)) {
                out.push(f);
            }
            if out.len() == n {
                break;
            }
        }
        out
    }

    #[test]
    fn a_new_flow_is_served_before_old_ones() {
        // RFC 8290 section 4.1: a flow that becomes active goes on the new list,
        // which has priority over the old list.
        let mut q = fq("{}");
        let f = distinct_flows(&q, 3);
        let mut dropped = vec![];
        for _ in 0..20 {
            q.enqueue(Packet::new(f[0], Kind::Data, 1500), 0).unwrap();
            q.enqueue(Packet::new(f[1], Kind::Data, 1500), 0).unwrap();
        }
        // Serve a while: both bulk flows use up their first quantum and move to old.
        for _ in 0..6 {
            q.dequeue(1, &mut dropped).unwrap();
        }
        assert!(q.new_flows.is_empty());
        q.enqueue(Packet::new(f[2], Kind::Data, 100), 2).unwrap();
        assert_eq!(q.dequeue(3, &mut dropped).unwrap().flow, f[2], "the sparse flow goes first");
        // Afterwards the bulk flows alternate by quantum (1514 B: one 1500-B packet each).
        let order: Vec<u32> = (0..6).map(|_| q.dequeue(4, &mut dropped).unwrap().flow).collect();
        assert!(order.windows(2).all(|w| w[0] != w[1]), "{order:?}");
        assert!(dropped.is_empty());
    }

    #[test]
    fn drr_gives_equal_bytes_to_flows_with_different_packet_sizes() {
        let mut q = fq(r#"{"limit_packets":100000}"#);
        let f = distinct_flows(&q, 2);
        for _ in 0..3000 {
            q.enqueue(Packet::new(f[0], Kind::Data, 1500), 0).unwrap();
            q.enqueue(Packet::new(f[1], Kind::Data, 300), 0).unwrap();
            q.enqueue(Packet::new(f[1], Kind::Data, 300), 0).unwrap();
        }
        let mut bytes = [0u64; 2];
        let mut dropped = vec![];
        for _ in 0..2000 {
            // time 0: no CoDel drops (sojourn 0)
            let p = q.dequeue(0, &mut dropped).unwrap();
            bytes[(p.flow == f[1]) as usize] += p.wire_bytes as u64;
        }
        let ratio = bytes[0] as f64 / bytes[1] as f64;
        assert!((ratio - 1.0).abs() < 0.01, "{bytes:?}");
    }

    #[test]
    fn overflow_drops_half_the_fattest_queue_from_its_head() {
        let mut q = fq(r#"{"limit_packets":100}"#);
        let f = distinct_flows(&q, 2);
        for i in 0..90 {
            let mut p = Packet::new(f[0], Kind::Data, 1500);
            p.seq = i;
            q.enqueue(p, 0).unwrap();
        }
        for _ in 0..10 {
            q.enqueue(Packet::new(f[1], Kind::Data, 1500), 0).unwrap();
        }
        let mut d = vec![];
        q.take_enqueue_drops(&mut d);
        assert!(d.is_empty());
        // The 101st packet (of the thin flow) overflows: the fat flow loses half
        // its backlog (90 x 1500 B -> 45 packets, under the batch cap of 64).
        q.enqueue(Packet::new(f[1], Kind::Data, 1500), 0).unwrap();
        q.take_enqueue_drops(&mut d);
        assert_eq!(d.len(), 45);
        assert!(d.iter().all(|(p, r)| p.flow == f[0] && *r == DropReason::Overflow));
        assert_eq!(d.iter().map(|(p, _)| p.seq).collect::<Vec<_>>(), (0..45).collect::<Vec<_>>(), "from the head");
        assert_eq!(q.len_packets(), 101 - 45);
    }

    #[test]
    fn per_bucket_codel_drops_only_the_standing_queue() {
        // A bulk flow with a standing queue gets CoDel drops; a sparse flow
        // sharing the link is never dropped.
        let mut q = fq(r#"{"ecn":false}"#);
        let f = distinct_flows(&q, 2);
        let mut dropped = vec![];
        let mut now = 0;
        for _ in 0..200 {
            q.enqueue(Packet::new(f[0], Kind::Data, 1500), now).unwrap();
        }
        for k in 0..20_000u64 {
            now += 1_200_000; // 10 Mbit/s: one 1500-byte packet per 1.2 ms
            q.enqueue(Packet::new(f[0], Kind::Data, 1500), now).unwrap();
            if k % 50 == 0 {
                q.enqueue(Packet::new(f[1], Kind::Data, 100), now).unwrap();
            }
            q.dequeue(now, &mut dropped);
        }
        assert!(!dropped.is_empty());
        assert!(dropped.iter().all(|(p, r)| p.flow == f[0] && *r == DropReason::Aqm));
    }
}
