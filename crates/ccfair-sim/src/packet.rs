//! Packets on the simulated wire. One struct for data, ACK and handshake
//! segments; sequence numbers count segments (packets), not bytes, because
//! every data segment of a flow carries one MSS (see docs/fidelity.md).
//!
//! An ACK's SACK option ([`SackOpt`]) holds up to [`MAX_SACK_BLOCKS`] blocks,
//! the first possibly a D-SACK (RFC 2018 section 3, RFC 2883 section 4). It is
//! a fixed-size array of 32-bit segment numbers (like TCP's 32-bit sequence
//! space, widened again against the cumulative ACK), so a packet stays small
//! and `Copy` with no allocation.

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
    /// Pure ACK: cumulative `ack`, SACK option `sack`.
    Ack,
}

/// A packet: 72 bytes, `Copy`. Fields that only one direction uses share
/// storage, because packets are copied into and out of the delay lines and
/// the bottleneck queue (issue 16: at 2 000 flows those copies miss the
/// cache, and their cost grows with the packet's size):
/// - `seq` is the data segment number, and the cumulative ACK of an ACK
///   ([`Packet::ack`]);
/// - the 24-byte option area holds an ACK's SACK option ([`Packet::sack`]), or
///   a forward packet's (SYN, data) marks: the PPV packet value
///   ([`Packet::pv`]) and the CCA class ([`Packet::cca_class`]). DCCP puts its
///   Ack Ratio (data) and Acknowledgement Number (ACK) there (dccp/).
///
/// The accessors check in debug builds that a packet of the other direction
/// never reads or writes them.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    /// Time the packet entered the bottleneck queue (for sojourn statistics).
    /// While the packet is on one of the simulator's delay lines (sim.rs
    /// `DelayLine`), the time it leaves that line: the line stores no time
    /// of its own per packet. Nothing reads it after the bottleneck.
    pub enqueue_ns: u64,
    /// Data: segment number. Ack: next expected segment (cumulative ACK,
    /// also [`Packet::ack`]). DCCP: the packet's own sequence number (data and ACK).
    pub seq: u64,
    /// Timestamp value (TSval) set by the sender of this packet, ns.
    pub ts_val: u64,
    /// Timestamp echo (TSecr), ns.
    pub ts_ecr: u64,
    pub flow: u32,
    /// Ack: advertised receive window, segments.
    pub rwnd: u32,
    /// Bytes on the wire (headers included).
    pub wire_bytes: u32,
    pub kind: Kind,
    pub ecn: Ecn,
    /// Ack: ECN-Echo.
    pub ece: bool,
    /// Data: Congestion Window Reduced (RFC 3168): the sender reduced after ECE.
    pub cwr: bool,
    /// Ack: the SACK option. Syn/Data: [[PPV packet value, CCA class], [DCCP
    /// Ack Ratio, unused], unused]. DCCP Ack: the Acknowledgement Number (first block).
    opt: [[u32; 2]; MAX_SACK_BLOCKS],
}

/// SACK blocks per ACK: Linux's TCP_NUM_SACKS is 4, but with timestamps
/// (on in the simulator, whose headers carry them, and on the testbed hosts:
/// net.ipv4.tcp_timestamps = 1) the 40-byte option space leaves room for 3
/// (tcp_established_options: (40 - 12 - 4) / 8). A D-SACK takes one of them.
pub const MAX_SACK_BLOCKS: usize = 3;

/// The SACK option of an ACK: blocks [start, end) of segment numbers, in the
/// order the receiver sends them (D-SACK first, then the most recent block).
/// Unused slots are empty blocks (start == end), so the option is 24 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SackOpt {
    /// Low 32 bits of (start, end), widened by [`SackOpt::block`].
    blocks: [[u32; 2]; MAX_SACK_BLOCKS],
}

impl SackOpt {
    /// No SACK option.
    pub const NONE: SackOpt = SackOpt { blocks: [[0; 2]; MAX_SACK_BLOCKS] };

    /// Append block [start, end) (start < end); ignored when the option is full.
    #[inline]
    pub fn push(&mut self, start: u64, end: u64) {
        let n = self.len();
        if n < MAX_SACK_BLOCKS {
            self.blocks[n] = [start as u32, end as u32];
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.blocks.iter().take_while(|b| b[0] != b[1]).count()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.blocks[0][0] == self.blocks[0][1]
    }

    /// Block `i` as full segment numbers, given the ACK's cumulative `ack`
    /// (blocks lie within 2^31 segments of it, as TCP's sequence space).
    pub fn block(&self, i: usize, ack: u64) -> (u64, u64) {
        let widen = |x: u32| ack.wrapping_add(x.wrapping_sub(ack as u32) as i32 as i64 as u64);
        let [s, e] = self.blocks[i];
        (widen(s), widen(e))
    }
}

impl Ecn {
    /// ECT(0), ECT(1) or CE: an AQM may mark it instead of dropping it.
    pub fn is_capable(self) -> bool {
        self != Ecn::NotEct
    }
}

impl Kind {
    /// SYN and data travel from the sender through the bottleneck; SYN-ACK
    /// and ACK travel back on the (uncongested) reverse path.
    pub fn is_forward(self) -> bool {
        matches!(self, Kind::Syn | Kind::Data)
    }
}

impl Packet {
    pub fn new(flow: u32, kind: Kind, wire_bytes: u32) -> Packet {
        Packet {
            enqueue_ns: 0,
            seq: 0,
            ts_val: 0,
            ts_ecr: 0,
            flow,
            rwnd: 0,
            wire_bytes,
            kind,
            ecn: Ecn::NotEct,
            ece: false,
            cwr: false,
            opt: [[0; 2]; MAX_SACK_BLOCKS],
        }
    }

    /// Ack: next expected segment (cumulative), stored in `seq`.
    #[inline]
    pub fn ack(&self) -> u64 {
        self.seq
    }

    #[inline]
    pub fn set_ack(&mut self, ack: u64) {
        self.seq = ack;
    }

    /// Ack: SACK blocks, most recent first; the first may be a D-SACK.
    #[inline]
    pub fn sack(&self) -> SackOpt {
        debug_assert!(!self.kind.is_forward(), "SACK option of a {:?}", self.kind);
        SackOpt { blocks: self.opt }
    }

    #[inline]
    pub fn set_sack(&mut self, sack: SackOpt) {
        debug_assert!(!self.kind.is_forward(), "SACK option of a {:?}", self.kind);
        self.opt = sack.blocks;
    }

    /// Packet value set by a PPV edge marker (qdisc/ppv.rs); 0 = none.
    #[inline]
    pub fn pv(&self) -> u32 {
        debug_assert!(self.kind.is_forward(), "packet value of a {:?}", self.kind);
        self.opt[0][0]
    }

    #[inline]
    pub fn set_pv(&mut self, pv: u32) {
        debug_assert!(self.kind.is_forward(), "packet value of a {:?}", self.kind);
        self.opt[0][0] = pv;
    }

    /// Index of the flow's CCA among the run's distinct CCAs (order of first
    /// appearance in the config), set by the simulator; for CCA-aware qdiscs (RRMQS).
    #[inline]
    pub fn cca_class(&self) -> u16 {
        debug_assert!(self.kind.is_forward(), "CCA class of a {:?}", self.kind);
        self.opt[0][1] as u16
    }

    #[inline]
    pub fn set_cca_class(&mut self, class: u16) {
        debug_assert!(self.kind.is_forward(), "CCA class of a {:?}", self.kind);
        self.opt[0][1] = class as u32;
    }

    /// DCCP data: the sender's Ack Ratio (dccp/mod.rs).
    pub fn dccp_ack_ratio(&self) -> u32 {
        debug_assert!(self.kind == Kind::Data);
        self.opt[1][0]
    }

    pub fn set_dccp_ack_ratio(&mut self, ratio: u32) {
        debug_assert!(self.kind == Kind::Data);
        self.opt[1][0] = ratio;
    }

    /// DCCP ACK: the Acknowledgement Number (greatest sequence number received).
    pub fn dccp_ack(&self) -> u64 {
        debug_assert!(self.kind == Kind::Ack);
        self.opt[0][0] as u64 | (self.opt[0][1] as u64) << 32
    }

    pub fn set_dccp_ack(&mut self, ack: u64) {
        debug_assert!(self.kind == Kind::Ack);
        self.opt[0] = [ack as u32, (ack >> 32) as u32];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_blocks_widen_around_the_cumulative_ack_and_stay_small() {
        // Blocks are stored as 32-bit numbers (TCP's sequence space) and
        // widened against the ACK: a D-SACK below it and blocks above it.
        let ack = (1u64 << 32) + 5;
        let mut o = SackOpt::NONE;
        o.push(ack - 7, ack - 6);
        o.push(ack + 3, ack + 9);
        o.push(ack + 20, ack + 21);
        o.push(ack + 30, ack + 31); // full: ignored
        assert_eq!(o.len(), MAX_SACK_BLOCKS);
        assert_eq!((0..3).map(|i| o.block(i, ack)).collect::<Vec<_>>(), vec![(ack - 7, ack - 6), (ack + 3, ack + 9), (ack + 20, ack + 21)]);
        assert_eq!(std::mem::size_of::<SackOpt>(), 24, "no allocation: three 8-byte blocks per packet");
    }

    #[test]
    fn direction_specific_fields_share_storage_without_mixing() {
        // An ACK's SACK option and a data packet's marks use the same words:
        // each direction reads back what it wrote.
        let mut a = Packet::new(1, Kind::Ack, 64);
        let mut o = SackOpt::NONE;
        o.push(10, 12);
        o.push(20, 21);
        a.set_ack(7);
        a.set_sack(o);
        assert_eq!((a.ack(), a.sack(), a.sack().block(1, 7)), (7, o, (20, 21)));
        let mut d = Packet::new(1, Kind::Data, 1500);
        d.seq = 9;
        d.set_pv(u32::MAX);
        d.set_cca_class(u16::MAX);
        assert_eq!((d.seq, d.pv(), d.cca_class()), (9, u32::MAX, u16::MAX));
        let mut dccp_ack = Packet::new(1, Kind::Ack, 64);
        dccp_ack.set_dccp_ack((1 << 40) + 3);
        assert_eq!(dccp_ack.dccp_ack(), (1 << 40) + 3);
        assert_eq!(std::mem::size_of::<Packet>(), 72);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "SACK option of a Data")]
    fn a_data_packet_has_no_sack_option() {
        Packet::new(0, Kind::Data, 1500).sack();
    }
}
