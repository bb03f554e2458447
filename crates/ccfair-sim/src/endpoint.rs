//! The two transports a flow can use, behind one small dispatch: TCP
//! (tcp/sender.rs, tcp/receiver.rs) or DCCP with CCID 2 (dccp/). sim.rs
//! holds one [`FlowSender`] and one [`FlowReceiver`] per flow.

use crate::config::EcnMode;
use crate::dccp::receiver::DccpReceiver;
use crate::dccp::sender::DccpSender;
use crate::engine::{EventQueue, TimeNs, Timer, TimerPop};
use crate::packet::Packet;
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::{Sender, SenderStats};

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

/// A sender's timers: retransmission, pacing, RACK reordering.
#[derive(Debug, Clone, Copy)]
pub enum SenderTimer {
    Rto,
    Pace,
    Reo,
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
    /// The popped entry `ev` of timer `t`: when it fires (its deadline did not move), its
    /// handler, which sends into `out`; whether it fired.
    #[inline]
    pub fn on_timer_pop<E: Eq + Copy>(&mut self, t: SenderTimer, now: TimeNs, q: &mut EventQueue<E>, ev: E, out: &mut Vec<Packet>) -> bool {
        let (rto, pace, reo) = self.timers();
        let timer = match t {
            SenderTimer::Rto => rto,
            SenderTimer::Pace => pace,
            SenderTimer::Reo => reo,
        };
        if timer.on_pop(now, q, ev) != TimerPop::Fire {
            return false;
        }
        match t {
            SenderTimer::Rto => self.on_rto(now, out),
            SenderTimer::Pace => self.on_pace_timer(now, out),
            SenderTimer::Reo => self.on_reo_timer(now, out),
        }
        true
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
    /// (Inline, as `Receiver::on_packet`: the event loop calls `on_data`.)
    #[inline(always)]
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
    /// The delayed-ACK timer and the GRO flush timer (TCP receivers with
    /// coalescing on), with one match (the event loop syncs both per packet).
    #[inline(always)]
    pub fn timers(&mut self) -> (&mut Timer, Option<&mut Timer>) {
        match self {
            FlowReceiver::Tcp(r) => {
                let gro_on = r.gro_on();
                (&mut r.delack_timer, if gro_on { Some(&mut r.gro_timer) } else { None })
            }
            FlowReceiver::Dccp(r) => (&mut r.delack_timer, None),
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
