//! The two transports a flow can use, behind one small dispatch: TCP
//! (tcp/sender.rs, tcp/receiver.rs) or DCCP with CCID 2 (dccp/). sim.rs
//! and topology.rs hold one [`FlowSender`] and one [`FlowReceiver`] per
//! flow, built from the run's config by [`build_endpoints`].

use crate::cc;
use crate::config::{EcnMode, RunConfig, Transport, HEADER_BYTES};
use crate::dccp::receiver::DccpReceiver;
use crate::dccp::sender::{DccpSender, DccpSenderConfig};
use crate::engine::{TimeNs, Timer};
use crate::packet::Packet;
use crate::prefetch::prefetch;
use crate::rng::{derive_seed, stream, stream_rng};
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::SenderConfig;
use crate::tcp::sender::{Sender, SenderStats};
use rand::Rng;

// Not boxed: one per flow, touched on every packet; an indirection costs more than the size.
#[allow(clippy::large_enum_variant)]
pub enum FlowSender {
    Tcp(Sender),
    Dccp(DccpSender),
}

// As FlowSender: one per flow, used on every packet; boxing the TCP
// receiver (SACK blocks, GRO skb) would add a pointer chase per packet.
#[allow(clippy::large_enum_variant)]
pub enum FlowReceiver {
    Tcp(Receiver),
    Dccp(DccpReceiver),
}

macro_rules! both {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            FlowSender::Tcp($s) => $e,
            FlowSender::Dccp($s) => $e,
        }
    };
}

impl FlowSender {
    /// Prefetch the sender's state (`prefetch.rs`): the whole enum, variant
    /// unseen, as matching on it would load the tag, a demand miss.
    pub(crate) fn prefetch(&self) {
        prefetch(self)
    }

    /// Prefetch what a TCP sender's next ACK reads first outside the sender
    /// (`Sender::prefetch_ack_state`; reads the sender's pointers, so the
    /// sender should be cached already).
    pub(crate) fn prefetch_ack_state(&self) {
        if let FlowSender::Tcp(s) = self {
            s.prefetch_ack_state();
        }
    }

    pub fn start(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        both!(self, s => s.start(now, out))
    }
    pub fn on_ack(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) {
        both!(self, s => s.on_ack(now, p, out))
    }
    pub fn on_rto(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        both!(self, s => s.on_rto(now, out))
    }
    pub fn on_pace_timer(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        both!(self, s => s.on_pace_timer(now, out))
    }
    pub fn on_reo_timer(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        both!(self, s => s.on_reo_timer(now, out))
    }
    /// (RTO, pacing/application, reordering) timers.
    pub fn timers(&mut self) -> (&mut Timer, &mut Timer, &mut Timer) {
        both!(self, s => (&mut s.rto_timer, &mut s.pace_timer, &mut s.reo_timer))
    }
    pub fn stats(&self) -> &SenderStats {
        both!(self, s => &s.stats)
    }
    pub fn in_flight(&self) -> u32 {
        both!(self, s => s.in_flight())
    }
    pub fn srtt_ns(&self) -> u64 {
        both!(self, s => s.srtt_ns())
    }
    pub fn cwnd_pkts(&self) -> u32 {
        match self {
            FlowSender::Tcp(s) => s.tp.cwnd,
            FlowSender::Dccp(s) => s.cc.cwnd,
        }
    }
    pub fn ssthresh_pkts(&self) -> u32 {
        match self {
            FlowSender::Tcp(s) => s.tp.ssthresh,
            FlowSender::Dccp(s) => s.cc.ssthresh,
        }
    }
    pub fn pacing_rate_bps(&self) -> u64 {
        match self {
            FlowSender::Tcp(s) => s.tp.pacing_rate_bytes_per_s.saturating_mul(8),
            FlowSender::Dccp(_) => 0,
        }
    }
    pub fn cca_name(&self) -> &str {
        match self {
            FlowSender::Tcp(s) => s.cc.name(),
            FlowSender::Dccp(_) => crate::dccp::CCID2_NAME,
        }
    }
    pub fn ecn(&self) -> EcnMode {
        match self {
            FlowSender::Tcp(s) => s.cfg.ecn,
            FlowSender::Dccp(_) => EcnMode::Off,
        }
    }
}

impl FlowReceiver {
    pub fn on_packet(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) -> u64 {
        match self {
            FlowReceiver::Tcp(r) => r.on_packet(now, p, out),
            FlowReceiver::Dccp(r) => r.on_packet(now, p, out),
        }
    }
    pub fn on_delack_timer(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        match self {
            FlowReceiver::Tcp(r) => r.on_delack_timer(now, out),
            FlowReceiver::Dccp(r) => r.on_delack_timer(now, out),
        }
    }
    pub fn delack_timer(&mut self) -> &mut Timer {
        match self {
            FlowReceiver::Tcp(r) => &mut r.delack_timer,
            FlowReceiver::Dccp(r) => &mut r.delack_timer,
        }
    }
    /// The GRO flush timer (TCP receivers with coalescing on).
    pub fn gro_timer(&mut self) -> Option<&mut Timer> {
        match self {
            FlowReceiver::Tcp(r) if r.gro_on() => Some(&mut r.gro_timer),
            _ => None,
        }
    }
    /// End of a NAPI poll: deliver the held GRO batch; returns segments delivered in order.
    pub fn on_gro_timer(&mut self, now: TimeNs, out: &mut Vec<Packet>) -> u64 {
        match self {
            FlowReceiver::Tcp(r) => r.gro_flush(now, out),
            FlowReceiver::Dccp(_) => 0,
        }
    }
    pub fn mss_bytes(&self) -> u32 {
        match self {
            FlowReceiver::Tcp(r) => r.mss_bytes,
            FlowReceiver::Dccp(r) => r.mss_bytes,
        }
    }
}

/// Every flow's sender and receiver, and its start time (start jitter drawn).
pub(crate) struct Endpoints {
    pub(crate) senders: Vec<FlowSender>,
    pub(crate) receivers: Vec<FlowReceiver>,
    pub(crate) starts: Vec<u64>,
    /// Per flow: uses scalable ECN (its packets form the L4S class).
    pub(crate) flow_l4s: Vec<bool>,
}

/// The endpoints of `cfg`'s flows (each from its own random streams).
pub(crate) fn build_endpoints(cfg: &RunConfig) -> Endpoints {
    let n = cfg.flows.len();
    let mut senders = Vec::with_capacity(n);
    let mut receivers = Vec::with_capacity(n);
    let mut starts = Vec::with_capacity(n);
    let mut flow_l4s = Vec::with_capacity(n);
    for (i, f) in cfg.flows.iter().enumerate() {
        if f.transport() == Transport::Dccp {
            let ch = crate::dccp::channel();
            let dcfg = DccpSenderConfig {
                flow: i as u32,
                mss_bytes: f.mss_bytes,
                wire_bytes: f.mss_bytes + HEADER_BYTES,
                init_cwnd_pkts: f.init_cwnd_pkts.unwrap_or_else(|| crate::dccp::ccid2::initial_window_pkts(f.mss_bytes)),
                stop_ns: f.stop_ns,
                size_bytes: f.size_bytes,
            };
            senders.push(FlowSender::Dccp(DccpSender::new(dcfg, ch.clone())));
            receivers.push(FlowReceiver::Dccp(DccpReceiver::new(i as u32, f.mss_bytes, ch)));
            flow_l4s.push(false);
        } else {
            let cca_seed = derive_seed(cfg.seed, stream::FLOW_CCA + i as u64);
            let cca = cc::make_with(&f.cca, &f.cca_params, cca_seed).expect("validated CCA and params");
            let ecn = resolve_ecn(f.ecn, cca.as_ref());
            // Linux DCTCP negotiates RFC 3168 ECN, so its receiver ACKs CWR at once
            // (tcp_ecn_accept_cwr); Prague's AccECN does not (tcp/receiver.rs).
            let cwr_ack_now = cca.name() == "dctcp";
            flow_l4s.push(ecn == EcnMode::Scalable);
            let sender = Sender::new(
                SenderConfig {
                    flow: i as u32,
                    mss_bytes: f.mss_bytes,
                    wire_bytes: f.mss_bytes + HEADER_BYTES,
                    init_cwnd_pkts: f.init_cwnd_pkts.unwrap_or(crate::config::TCP_INIT_CWND_PKTS),
                    pacing: f.pacing,
                    stop_ns: f.stop_ns,
                    size_bytes: f.size_bytes,
                    rate_cap_bps: f.rate_cap_bps,
                    ecn,
                    rto_min_ns: f.min_rto_ns.unwrap_or(crate::tcp::rtt::RTO_MIN_NS),
                    gso_max_segs: f.tso_max_segs.unwrap_or(crate::tcp::sender::GSO_MAX_SEGS),
                },
                cca,
            );
            receivers.push(FlowReceiver::Tcp(
                Receiver::new(
                    i as u32,
                    f.mss_bytes,
                    f.delayed_ack,
                    f.rwnd_init_pkts,
                    f.rwnd_max_pkts,
                    f.init_cwnd_pkts.unwrap_or(crate::config::TCP_INIT_CWND_PKTS),
                )
                .with_sack_channel(sender.sack_channel())
                .with_ecn(ecn)
                .with_cwr_ack_now(cwr_ack_now)
                .with_gro(f.gro_ns, HEADER_BYTES),
            ));
            senders.push(FlowSender::Tcp(sender));
        }
        let jitter =
            if f.start_jitter_ns > 0 { stream_rng(cfg.seed, stream::FLOW_START + i as u64).gen_range(0..f.start_jitter_ns) } else { 0 };
        starts.push(f.start_ns + jitter);
    }
    Endpoints { senders, receivers, starts, flow_l4s }
}

/// Per flow: the index of its CCA among the run's distinct CCAs, in order of first appearance.
pub(crate) fn cca_classes(cfg: &RunConfig) -> (Vec<u16>, Vec<String>) {
    let mut cca_classes: Vec<String> = Vec::new();
    let cca_class: Vec<u16> = cfg
        .flows
        .iter()
        .map(|f| match cca_classes.iter().position(|c| *c == f.cca) {
            Some(k) => k as u16,
            None => {
                cca_classes.push(f.cca.clone());
                (cca_classes.len() - 1) as u16
            }
        })
        .collect();
    (cca_class, cca_classes)
}

/// A flow's ECN mode: as configured, else scalable for CCAs that need ECN
/// (DCTCP, Prague; Linux TCP_CONG_NEEDS_ECN), else off.
pub fn resolve_ecn(cfg: Option<EcnMode>, cca: &dyn cc::CongestionControl) -> EcnMode {
    cfg.unwrap_or(if cca.needs_ecn() { EcnMode::Scalable } else { EcnMode::Off })
}
