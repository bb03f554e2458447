//! Queue disciplines at the bottleneck: a small trait, one file per discipline.
//!
//! The bottleneck link calls `enqueue` when a packet arrives and `dequeue`
//! whenever it is ready to transmit. A discipline may drop at enqueue (the
//! packet is handed back) or at dequeue (AQMs such as CoDel push dropped
//! packets into `dropped`), and may ECN-mark packets it forwards.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::TimeNs;
use crate::packet::{Ecn, Packet};
use crate::params::{ParamError, ParamSpec, Params};

pub mod codel;
pub mod csaqm;
pub mod droptail;
pub mod drr;
pub mod dualpi2;
pub mod fifo;
pub mod fq_codel;
pub mod pi2;
pub mod pie;
pub mod ppv;
pub mod red;
pub mod rrmqs;
pub mod step;

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full.
    Overflow,
    /// The AQM decided to drop.
    Aqm,
}

/// The packet the link is transmitting, as the limits count it (0/0: idle).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InService {
    pub packets: u64,
    /// Its wire bytes (L2 overhead included).
    pub bytes: u64,
}

impl InService {
    /// The link serializes a packet of `wire_bytes`, or (None) is idle.
    pub fn of(wire_bytes: Option<u32>) -> InService {
        wire_bytes.map_or_else(InService::default, |b| InService { packets: 1, bytes: b as u64 })
    }
}

pub trait Qdisc: Send {
    /// Admit `pkt` or hand it back as dropped.
    fn enqueue(&mut self, pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)>;
    /// Next packet to transmit; packets the discipline drops on the way go to `dropped`.
    fn dequeue(&mut self, now: TimeNs, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet>;
    /// `dequeue` written into `dst` (the link's place for the packet in
    /// transmission, sim.rs `start_tx`). A FIFO's copies its head straight
    /// there: `*dst = self.dequeue(..)` went through a temporary on the
    /// stack (an `Option` built on two paths), 22 instructions for 48 bytes
    /// (docs/benchmarks.md).
    #[inline(always)]
    fn dequeue_into(&mut self, now: TimeNs, dropped: &mut Vec<(Packet, DropReason)>, dst: &mut Option<Packet>) {
        *dst = self.dequeue(now, dropped);
    }
    /// Backlog in packets.
    fn len_packets(&self) -> usize;
    /// Backlog in bytes (wire size).
    fn len_bytes(&self) -> u64;
    /// The link started (`Some(wire bytes)`) a packet this discipline
    /// dequeued, or went idle (`None`); the hard limits count the packet until
    /// it has left (header). A packet that starts as soon as the one before
    /// it ends replaces it with no idle call in between (sim.rs `start_tx`).
    fn set_in_service(&mut self, s: InService);
    /// Packets other than the arrival that the last `enqueue` dropped (e.g.
    /// FQ-CoDel's batch drop from the fattest queue). Called after every
    /// enqueue of a discipline that `drops_others_on_enqueue`.
    fn take_enqueue_drops(&mut self, _dropped: &mut Vec<(Packet, DropReason)>) {}
    /// Whether `enqueue` may drop packets other than the arrival (handed over
    /// by `take_enqueue_drops`). Asked once per run: the others cost no call
    /// per packet.
    fn drops_others_on_enqueue(&self) -> bool {
        false
    }
    /// The run has `n` CCA classes (`Packet::cca_class < n`). Called once after `build`.
    fn set_classes(&mut self, _n: usize) {}
    /// Flow `flow` completed (its last byte was delivered): the gateway's view of its FIN.
    fn flow_finished(&mut self, _flow: u32, _now: TimeNs) {}
    /// The measurement log of disciplines that keep one (RRMQS's flow meter), at the end of the run.
    fn take_meter(&mut self, _now: TimeNs) -> Option<crate::result::MeterResult> {
        None
    }
}

/// A boxed discipline is a discipline: sim.rs runs drop-tail as its own
/// type (its enqueue and dequeue inlined into the event loop) and every other
/// discipline through this box. Every method delegates, the defaulted ones
/// too (a default here would hide the discipline's own).
impl<Q: Qdisc + ?Sized> Qdisc for Box<Q> {
    fn enqueue(&mut self, pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        (**self).enqueue(pkt, now)
    }
    fn dequeue(&mut self, now: TimeNs, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        (**self).dequeue(now, dropped)
    }
    fn dequeue_into(&mut self, now: TimeNs, dropped: &mut Vec<(Packet, DropReason)>, dst: &mut Option<Packet>) {
        (**self).dequeue_into(now, dropped, dst)
    }
    fn len_packets(&self) -> usize {
        (**self).len_packets()
    }
    fn len_bytes(&self) -> u64 {
        (**self).len_bytes()
    }
    fn set_in_service(&mut self, s: InService) {
        (**self).set_in_service(s)
    }
    fn take_enqueue_drops(&mut self, dropped: &mut Vec<(Packet, DropReason)>) {
        (**self).take_enqueue_drops(dropped)
    }
    fn drops_others_on_enqueue(&self) -> bool {
        (**self).drops_others_on_enqueue()
    }
    fn set_classes(&mut self, n: usize) {
        (**self).set_classes(n)
    }
    fn flow_finished(&mut self, flow: u32, now: TimeNs) {
        (**self).flow_finished(flow, now)
    }
    fn take_meter(&mut self, now: TimeNs) -> Option<crate::result::MeterResult> {
        (**self).take_meter(now)
    }
}

/// An AQM's congestion signal to `pkt`: with `ecn` on and the packet ECN-capable a CE mark
/// (`marks` + 1; the packet goes on), else a drop (`drops` + 1; the packet comes back in the error).
pub fn mark_or_drop(mut pkt: Packet, ecn: bool, marks: &mut u64, drops: &mut u64) -> Result<Packet, (Packet, DropReason)> {
    if ecn && mark_ce(&mut pkt) {
        *marks += 1;
        Ok(pkt)
    } else {
        *drops += 1;
        Err((pkt, DropReason::Aqm))
    }
}

/// The [`Qdisc`] methods of a discipline that drops queued packets at enqueue (the fattest
/// flow's head, FQ-CoDel and FQ-DRR) into its field `$f`: `take_enqueue_drops` hands them
/// over and `drops_others_on_enqueue` says so.
macro_rules! pending_drops {
    ($f:ident) => {
        fn take_enqueue_drops(&mut self, dropped: &mut Vec<(Packet, DropReason)>) {
            dropped.append(&mut self.$f);
        }

        fn drops_others_on_enqueue(&self) -> bool {
            true
        }
    };
}
use pending_drops;

/// [`declare_params!`](crate::declare_params) for a discipline with Linux sch_codel's and
/// sch_pie's hard limit: `limit_packets` (default 1000) and `limit_bytes` (unset), then
/// its own fields.
macro_rules! limited_queue_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($fields:tt)* }
        $(check = $check:path;)?
    ) => {
        $crate::declare_params! {
            $(#[$meta])*
            pub struct $name {
                /// Queue limit, packets (Linux sch_codel / sch_pie default 1000).
                limit_packets: Option<u64> = Some(1000), Range::at_least(1.0);
                /// Queue limit, wire bytes (unset: none).
                limit_bytes: Option<u64> = None, Range::at_least(1500.0);
                $($fields)*
            }
            $(check = $check;)?
        }
    };
}
use limited_queue_params;

/// CE-mark `p` if it is ECN-capable; false for Not-ECT (the caller drops it).
/// Like Linux INET_ECN_set_ce: an already CE-marked packet counts as marked.
pub fn mark_ce(p: &mut Packet) -> bool {
    match p.ecn {
        Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce => {
            p.ecn = Ecn::Ce;
            true
        }
        Ecn::NotEct => false,
    }
}

/// What the rest of ccfair needs to know of a discipline, never asked by its name:
/// declared on its registry line (`, caps { meter }`), absent ones false.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// It keeps a flow-meter log ([`Qdisc::take_meter`] gives one; RRMQS): the result
    /// carries its `meter` tables (`every_discipline_has_a_meter_exactly_when_it_declares_one`).
    pub meter: bool,
    /// With its `ecn` on it marks ECN-capable packets above a shallow threshold and drops
    /// every other packet there (STEP, DCTCP's step marking): with no ECN-capable flow it is a
    /// hard drop threshold, which the experiment file warns about.
    pub needs_ecn_flows: bool,
}

/// The queue-discipline registry: one line per discipline (its `kind`, its
/// declared config in its own file, accepted aliases, how to build it from
/// the config `c`, the run `seed` and the link `rate` in bit/s, and its
/// [`Capabilities`] if any). From it come [`QdiscConfig`] (the `bottleneck.qdisc`
/// of a RunConfig), [`build`], [`QdiscConfig::validate`] and [`schema_json`].
macro_rules! registry {
    ($( $variant:ident($module:ident :: $cfg:ident) = $kind:literal, [$($alias:literal),*], |$c:ident, $seed:ident, $rate:ident| $build:expr
        $(, caps { $($cap:ident),* })?; )*) => {
        /// Queue discipline at the bottleneck, tagged by `kind`.
        #[derive(Debug, Clone, Serialize, Deserialize)]
        #[serde(tag = "kind", deny_unknown_fields)]
        pub enum QdiscConfig {
            $( #[serde(rename = $kind)] $variant($module::$cfg), )*
        }

        /// Build the discipline; `seed` is the run seed (randomised disciplines draw
        /// from the `rng::stream::QDISC` stream), `rate_bps` the link it feeds.
        pub fn build(cfg: &QdiscConfig, seed: u64, rate_bps: u64) -> Box<dyn Qdisc> {
            match cfg {
                $( QdiscConfig::$variant($c) => {
                    let ($seed, $rate) = (seed, rate_bps);
                    let _ = ($seed, $rate);
                    Box::new($build)
                } )*
            }
        }

        impl QdiscConfig {
            /// Every field of the discipline's config as JSON (simulator units).
            pub fn to_map(&self) -> serde_json::Map<String, Value> {
                match self {
                    $( QdiscConfig::$variant(c) => c.to_map(), )*
                }
            }

            /// Check every parameter's range and the discipline's own cross-field checks.
            pub fn validate(&self) -> Result<(), ParamError> {
                match self {
                    $( QdiscConfig::$variant(c) => c.validate(), )*
                }
            }
        }

        /// Every parameter discipline `kind` runs with: its defaults overridden by
        /// `params` (field names, simulator units), validated.
        pub fn resolve(kind: &str, params: &serde_json::Map<String, Value>) -> Result<serde_json::Map<String, Value>, ParamError> {
            match kind {
                $( $kind => $module::$cfg::from_map(params).map(|c| c.to_map()), )*
                _ => Err(ParamError::new("kind", format!("unknown queue discipline '{kind}'; allowed: {}",
                    registry().iter().map(|r| r.0).collect::<Vec<_>>().join(", ")))),
            }
        }

        /// Every discipline: (kind, source, aliases, parameters, capabilities).
        #[allow(clippy::needless_update)]
        pub fn registry() -> Vec<(&'static str, &'static str, &'static [&'static str], Vec<ParamSpec>, Capabilities)> {
            vec![
                $( ($kind, $module::SOURCE, &[$($alias),*], $module::$cfg::spec(),
                    Capabilities { $($($cap: true,)*)? ..Capabilities::default() }), )*
            ]
        }
    };
}

registry! {
    Droptail(droptail::DroptailConfig) = "droptail", ["drop-tail", "drop_tail", "taildrop", "tail-drop", "fifo", "pfifo", "bfifo"],
        |c, seed, rate| droptail::DropTail::from_config(c);
    Red(red::RedConfig) = "red", [], |c, seed, rate| red::Red::new(c, seed, rate);
    Step(step::StepConfig) = "step", [], |c, seed, rate| step::Step::new(c), caps { needs_ecn_flows };
    Codel(codel::CodelConfig) = "codel", [], |c, seed, rate| codel::Codel::new(c);
    FqCodel(fq_codel::FqCodelConfig) = "fq_codel", ["fq-codel", "fqcodel"], |c, seed, rate| fq_codel::FqCodel::new(c, seed);
    Pie(pie::PieConfig) = "pie", [], |c, seed, rate| pie::Pie::new(c, seed);
    FqDrr(drr::FqDrrConfig) = "fq_drr", ["drr", "fq-drr"], |c, seed, rate| drr::FqDrr::new(c);
    Pi2(pi2::Pi2Config) = "pi2", [], |c, seed, rate| pi2::Pi2::from_config(c, qdisc_seed(seed));
    DualPi2(dualpi2::DualPi2Config) = "dualpi2", ["dual-pi2", "dualq"], |c, seed, rate| dualpi2::DualPi2::from_config(c, qdisc_seed(seed));
    Csaqm(csaqm::CsaqmConfig) = "csaqm", ["ppv", "cs-aqm"], |c, seed, rate| csaqm::Csaqm::new(c, qdisc_seed(seed), rate);
    Rrmqs(rrmqs::RrmqsConfig) = "rrmqs", [], |c, seed, rate| rrmqs::Rrmqs::new(c, qdisc_seed(seed)), caps { meter };
}

/// The seed of a discipline's own random stream (`rng::stream::QDISC`).
fn qdisc_seed(seed: u64) -> u64 {
    crate::rng::derive_seed(seed, crate::rng::stream::QDISC)
}

impl QdiscConfig {
    /// Drop-tail with these limits (either may be unset: unbounded).
    pub fn droptail(limit_packets: Option<u64>, limit_bytes: Option<u64>) -> QdiscConfig {
        QdiscConfig::Droptail(droptail::DroptailConfig { limit_packets, limit_bytes })
    }

    /// (limit_packets, limit_bytes) of any discipline.
    pub fn limits(&self) -> (Option<u64>, Option<u64>) {
        let m = self.to_map();
        (m.get("limit_packets").and_then(Value::as_u64), m.get("limit_bytes").and_then(Value::as_u64))
    }
}

/// Every discipline as JSON (for `_core.schema()`): kind, source, aliases, parameters, capabilities.
pub fn schema_json() -> Value {
    Value::Array(
        registry()
            .into_iter()
            .map(|(kind, source, aliases, spec, caps)| {
                serde_json::json!({"kind": kind, "source": source, "aliases": aliases,
                    "params": spec.iter().map(ParamSpec::to_json).collect::<Vec<_>>(),
                    "meter": caps.meter, "needs_ecn_flows": caps.needs_ecn_flows})
            })
            .collect(),
    )
}

#[cfg(test)]
mod conservation_tests {
    //! Conservation for every discipline: packets in = out + dropped + queued,
    //! for seeded random traffic (random flows, sizes, ECN codepoints, arrival
    //! and departure times), checked after every operation.
    use super::*;
    use crate::packet::Kind;

    /// Every registered discipline whose defaults stand alone, at its defaults with a 40-packet
    /// limit, then chosen settings; every registered discipline is among them
    /// (`every_registered_discipline_is_tested`).
    fn all() -> Vec<QdiscConfig> {
        let mut out: Vec<QdiscConfig> = registry().iter().filter_map(|(kind, ..)| at_defaults(kind)).collect();
        out.extend(chosen());
        out
    }

    fn at_defaults(kind: &str) -> Option<QdiscConfig> {
        let mut m = resolve(kind, &serde_json::Map::new()).ok()?;
        m.insert("limit_packets".into(), 40.into());
        m.insert("kind".into(), kind.into());
        serde_json::from_value(Value::Object(m)).ok()
    }

    fn kind_of(cfg: &QdiscConfig) -> String {
        serde_json::to_value(cfg).unwrap()["kind"].as_str().unwrap().to_string()
    }

    #[test]
    fn every_registered_discipline_is_tested() {
        let tested: Vec<String> = all().iter().map(kind_of).collect();
        for (kind, ..) in registry() {
            assert!(tested.iter().any(|t| t == kind), "{kind} has no case in the every-discipline tests");
        }
    }

    fn caps_of(cfg: &QdiscConfig) -> Capabilities {
        let kind = kind_of(cfg);
        registry().into_iter().find(|r| r.0 == kind).map(|r| r.4).unwrap()
    }

    #[test]
    fn every_discipline_has_a_meter_exactly_when_it_declares_one() {
        for cfg in all() {
            let mut q = build(&cfg, 7, 10_000_000);
            q.set_classes(2);
            assert_eq!(q.take_meter(1_000_000_000).is_some(), caps_of(&cfg).meter, "{cfg:?}");
        }
    }

    #[test]
    fn a_discipline_needing_ecn_flows_marks_them_where_it_drops_the_others() {
        let arrivals = |cfg: &QdiscConfig, ecn: Ecn| {
            let mut q = build(cfg, 7, 10_000_000);
            let mut admitted = 0;
            for i in 0..30u32 {
                let mut p = Packet::new(i % 3, Kind::Data, 1514);
                p.ecn = ecn;
                admitted += q.enqueue(p, 0).is_ok() as u32;
            }
            let mut marked = 0;
            while let Some(p) = q.dequeue(0, &mut vec![]) {
                marked += (p.ecn == Ecn::Ce) as u32;
            }
            (admitted, marked)
        };
        let with_ecn = all().into_iter().filter(|c| c.to_map().get("ecn") == Some(&Value::Bool(true)));
        let declaring: Vec<QdiscConfig> = with_ecn.filter(|c| caps_of(c).needs_ecn_flows).collect();
        assert!(!declaring.is_empty());
        for cfg in declaring {
            let (ect_admitted, ect_marked) = arrivals(&cfg, Ecn::Ect1);
            let (not_ect_admitted, _) = arrivals(&cfg, Ecn::NotEct);
            assert!(ect_admitted == 30 && ect_marked > 0, "{cfg:?}: ECN-capable packets marked, not dropped");
            assert!(not_ect_admitted < 30, "{cfg:?}: the others dropped at the same threshold");
        }
    }

    fn chosen() -> Vec<QdiscConfig> {
        let j = |s: &str| serde_json::from_str::<QdiscConfig>(s).unwrap();
        vec![
            QdiscConfig::droptail(Some(40), None),
            j(r#"{"kind":"red","limit_packets":40,"min_th":5,"max_th":15,"max_p":0.1,"w_q":0.02}"#),
            j(r#"{"kind":"red","limit_bytes":60000,"byte_mode":true,"gentle":true,"ecn":true,"w_q":0.02}"#),
            j(r#"{"kind":"step","limit_packets":40,"threshold_packets":10}"#),
            j(r#"{"kind":"step","limit_packets":40,"threshold_bytes":9000,"ecn":false}"#),
            j(r#"{"kind":"codel","limit_packets":40,"target_ns":1000000,"interval_ns":20000000,"ecn":true}"#),
            j(r#"{"kind":"codel","limit_packets":40,"target_ns":1000000,"interval_ns":20000000}"#),
            j(r#"{"kind":"fq_codel","limit_packets":40,"flows":8,"target_ns":1000000,"interval_ns":20000000}"#),
            j(r#"{"kind":"fq_codel","limit_packets":1000,"memory_limit_bytes":30000,"flows":4,"ecn":false}"#),
            j(r#"{"kind":"pie","limit_packets":40,"target_ns":2000000,"tupdate_ns":2000000,"burst_ns":0}"#),
            j(r#"{"kind":"pie","limit_packets":40,"ecn":true,"derandomize":false,"target_ns":2000000,"tupdate_ns":2000000,"burst_ns":0}"#),
            j(r#"{"kind":"fq_drr","limit_packets":40}"#),
            j(r#"{"kind":"fq_drr","limit_bytes":30000,"quantum_bytes":300}"#),
            j(r#"{"kind":"pi2","limit_packets":40,"target_ns":2000000,"tupdate_ns":2000000}"#),
            j(r#"{"kind":"dualpi2","limit_packets":40,"target_ns":2000000,"tupdate_ns":2000000}"#),
            j(
                r#"{"kind":"dualpi2","limit_packets":40,"target_ns":2000000,"tupdate_ns":2000000,"ramp_range_ns":500000,"drop_overload":false}"#,
            ),
            j(r#"{"kind":"csaqm","limit_packets":40,"target_ns":2000000,"update_ns":1000000,"drop_above":2.0}"#),
            j(r#"{"kind":"csaqm","limit_bytes":30000,"target_ns":1000000,"ecn":false,"weights":[1,2,3]}"#),
            j(r#"{"kind":"rrmqs","limit_packets":40,"measure_limit_packets":2,"p":0.2,"window_ns":20000000}"#),
            j(r#"{"kind":"rrmqs","limit_packets":40,"measure_limit_packets":3,"p":0.2,"window_ns":20000000,"feedback":"improved"}"#),
            j(
                r#"{"kind":"rrmqs","limit_packets":40,"measure_limit_packets":3,"p":0.2,"window_ns":20000000,"feedback":"allocate","alloc_interval_ns":5000000}"#,
            ),
        ]
    }

    #[test]
    fn every_hard_limit_counts_the_packet_on_the_link() {
        // Linux tbf + child: the head paying for its tokens is in the child's qlen/backlog,
        // so a limit of N holds N with it. 200 arrivals at once, one packet in transmission.
        for cfg in all() {
            let mut q = build(&cfg, 7, 10_000_000);
            q.set_in_service(InService::of(Some(1514)));
            for i in 0..200u32 {
                let mut p = Packet::new(i % 6, Kind::Data, 1514);
                p.ecn = Ecn::Ect1;
                let _ = q.enqueue(p, 0);
                q.take_enqueue_drops(&mut vec![]);
            }
            let m = cfg.to_map();
            let kind = kind_of(&cfg);
            let (held, held_bytes) = (q.len_packets() as u64 + 1, q.len_bytes() + 1514);
            if let Some(l) = m.get("limit_packets").and_then(|v| v.as_u64()) {
                if kind != "rrmqs" {
                    // RRMQS's measurement queues are outside its main limit.
                    assert!(held <= l, "{cfg:?}: {held} held");
                }
                if ["droptail", "codel", "fq_codel", "fq_drr", "pi2", "dualpi2"].contains(&kind.as_str())
                    && ["limit_bytes", "memory_limit_bytes"]
                        .iter()
                        .all(|k| m.get(*k).and_then(|v| v.as_u64()).is_none_or(|b| b >= l * 1514))
                {
                    assert_eq!(held, l, "{cfg:?}");
                }
            }
            if let Some(l) = m.get("limit_bytes").and_then(|v| v.as_u64()) {
                assert!(held_bytes <= l, "{cfg:?}: {held_bytes} B held");
                assert!(held_bytes + 1514 > l, "{cfg:?}: room for one more frame");
            }
        }
    }

    #[test]
    fn every_qdisc_conserves_packets_under_random_traffic() {
        for (k, cfg) in all().iter().enumerate() {
            let mut q = build(cfg, 7, 10_000_000);
            let (mut inp, mut out, mut drop) = (0u64, 0u64, 0u64);
            let (mut inb, mut outb, mut dropb) = (0u64, 0u64, 0u64);
            let mut x: u64 = 99 + k as u64;
            let mut now = 0u64;
            let mut dropped = vec![];
            for _ in 0..20_000 {
                x = crate::rng::splitmix64(x);
                now += x % 400_000; // up to 0.4 ms between operations
                                    // Bursty: arrivals dominate in phases so queues fill and AQMs act.
                let arrive = (x >> 8) % 10 < if (now / 50_000_000) % 2 == 0 { 8 } else { 4 };
                if arrive {
                    let mut p = Packet::new(((x >> 16) % 6) as u32, Kind::Data, 52 + ((x >> 24) % 1449) as u32);
                    p.ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1][((x >> 40) % 3) as usize];
                    inp += 1;
                    inb += p.wire_bytes as u64;
                    if let Err((d, _)) = q.enqueue(p, now) {
                        drop += 1;
                        dropb += d.wire_bytes as u64;
                    }
                    // Only where the discipline says so, as the simulator does:
                    // one that drops others without saying it fails the balance.
                    if q.drops_others_on_enqueue() {
                        q.take_enqueue_drops(&mut dropped);
                    }
                } else if let Some(p) = q.dequeue(now, &mut dropped) {
                    out += 1;
                    outb += p.wire_bytes as u64;
                }
                for (d, _) in dropped.drain(..) {
                    drop += 1;
                    dropb += d.wire_bytes as u64;
                }
                assert_eq!(inp, out + drop + q.len_packets() as u64, "{cfg:?}");
                assert_eq!(inb, outb + dropb + q.len_bytes(), "{cfg:?}");
            }
            assert!(drop > 0 && out > 0, "{cfg:?}: traffic must exercise drops and departures");
            // Drain: everything left comes out or is dropped.
            now += 1_000_000_000;
            while let Some(p) = q.dequeue(now, &mut dropped) {
                out += 1;
                outb += p.wire_bytes as u64;
                now += 1_000;
            }
            for (d, _) in dropped.drain(..) {
                drop += 1;
                dropb += d.wire_bytes as u64;
            }
            assert_eq!(q.len_packets(), 0, "{cfg:?}");
            assert_eq!((inp, inb), (out + drop, outb + dropb), "{cfg:?}");
        }
    }
}

#[cfg(test)]
#[allow(dead_code)] // the macro's expansion for two disciplines, not every function used
mod toy_registry_tests {
    //! A new discipline is one file (here the module `toy`) plus one line in
    //! `registry!`; this test runs the same macro with a toy line added.
    use super::*;

    mod toy {
        use super::super::fifo::Fifo;
        use super::super::{DropReason, Qdisc};
        use crate::engine::TimeNs;
        use crate::packet::Packet;

        pub const SOURCE: &str = "a test";

        crate::declare_params! {
            /// Toy: a FIFO that drops every `nth` arrival.
            pub struct ToyConfig {
                /// Queue limit, packets.
                limit_packets: Option<u64> = Some(100), Range::at_least(1.0);
                /// Drop every nth arrival.
                nth: u64 = 3, Range::at_least(1.0);
            }
        }

        pub struct Toy {
            fifo: Fifo,
            nth: u64,
            seen: u64,
        }

        impl Toy {
            pub fn new(c: &ToyConfig) -> Toy {
                Toy { fifo: Fifo::new(c.limit_packets, None), nth: c.nth, seen: 0 }
            }
        }

        impl Qdisc for Toy {
            fn enqueue(&mut self, pkt: Packet, _now: TimeNs) -> Result<(), (Packet, DropReason)> {
                self.seen += 1;
                if self.seen % self.nth == 0 || self.fifo.would_overflow(pkt.wire_bytes) {
                    return Err((pkt, DropReason::Aqm));
                }
                self.fifo.push(pkt);
                Ok(())
            }
            crate::qdisc::fifo::fifo_backlog!(fifo, dequeue);
        }
    }

    registry! {
        Codel(codel::CodelConfig) = "codel", [], |c, seed, rate| codel::Codel::new(c);
        Toy(toy::ToyConfig) = "toy", ["toy-aqm"], |c, seed, rate| toy::Toy::new(c);
    }

    #[test]
    fn a_toy_discipline_needs_one_file_and_one_registry_line() {
        let cfg: QdiscConfig = serde_json::from_str(r#"{"kind": "toy", "nth": 2}"#).unwrap();
        assert!(cfg.validate().is_ok());
        let mut q = build(&cfg, 1, 10_000_000);
        let pkt = || crate::packet::Packet::new(0, crate::packet::Kind::Data, 1500);
        let admitted = (0..10).filter(|_| q.enqueue(pkt(), 0).is_ok()).count();
        assert_eq!(admitted, 5, "every 2nd arrival dropped");
        let bad: QdiscConfig = serde_json::from_str(r#"{"kind": "toy", "nth": 0}"#).unwrap();
        let e = bad.validate().unwrap_err();
        assert_eq!((e.field.as_str(), e.msg.as_str()), ("nth", "must be an integer >= 1, got 0"));
        let reg = registry();
        let toy = reg.iter().find(|r| r.0 == "toy").unwrap();
        assert_eq!((toy.2, toy.3[1].name, toy.3[1].doc), (&["toy-aqm"][..], "nth", "Drop every nth arrival."));
        assert_eq!(resolve("toy", &serde_json::Map::new()).unwrap()["nth"], serde_json::json!(3));
    }
}
