//! Packets on the simulated wire. One struct for data, ACK and handshake
//! segments; sequence numbers count segments (packets), not bytes, because
//! every data segment of a flow carries one MSS (see docs/fidelity.md).

/// ECN codepoint in the IP header (RFC 3168; ECT(1) is the L4S identifier, RFC 9331).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Connection request (handshake).
    Syn,
    /// Handshake reply.
    SynAck,
    /// Data segment `seq`.
    Data,
    /// Pure ACK: cumulative `ack`, optional one-segment SACK `sack`.
    Ack,
}

#[derive(Debug, Clone, Copy)]
pub struct Packet {
    pub flow: u32,
    pub kind: Kind,
    /// Data: segment number. Ack: unused.
    pub seq: u64,
    /// Ack: next expected segment (cumulative). Data: unused.
    pub ack: u64,
    /// Ack: segment reported by SACK (the out-of-order arrival that triggered
    /// this ACK), or u64::MAX for none.
    pub sack: u64,
    /// Ack: advertised receive window, segments.
    pub rwnd: u32,
    /// Bytes on the wire (headers included).
    pub wire_bytes: u32,
    pub ecn: Ecn,
    /// Ack: ECN-Echo.
    pub ece: bool,
    /// Data: Congestion Window Reduced (RFC 3168): the sender reduced after ECE.
    pub cwr: bool,
    /// Timestamp value (TSval) set by the sender of this packet, ns.
    pub ts_val: u64,
    /// Timestamp echo (TSecr), ns.
    pub ts_ecr: u64,
    /// Time the packet entered the bottleneck queue (for sojourn statistics).
    pub enqueue_ns: u64,
    /// Packet value set by a PPV edge marker (qdisc/ppv.rs); 0 = none.
    pub pv: u32,
    /// Index of the flow's CCA among the run's distinct CCAs (order of first
    /// appearance in the config), set by the simulator; for CCA-aware qdiscs (RRMQS).
    pub cca_class: u16,
}

pub const NO_SACK: u64 = u64::MAX;

impl Ecn {
    /// ECT(0), ECT(1) or CE: an AQM may mark it instead of dropping it.
    pub fn is_capable(self) -> bool {
        self != Ecn::NotEct
    }
}

impl Packet {
    pub fn new(flow: u32, kind: Kind, wire_bytes: u32) -> Packet {
        Packet {
            flow,
            kind,
            seq: 0,
            ack: 0,
            sack: NO_SACK,
            rwnd: 0,
            wire_bytes,
            ecn: Ecn::NotEct,
            ece: false,
            cwr: false,
            ts_val: 0,
            ts_ecr: 0,
            enqueue_ns: 0,
            pv: 0,
            cca_class: 0,
        }
    }
}
