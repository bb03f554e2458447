//! Packets on the simulated wire. One struct for data, ACK and handshake
//! segments; sequence numbers count segments (packets), not bytes, because
//! every data segment of a flow carries one MSS (see docs/fidelity.md).
//!
//! An ACK's SACK option ([`SackOpt`]) holds up to [`MAX_SACK_BLOCKS`] blocks,
//! the first possibly a D-SACK (RFC 2018 section 3, RFC 2883 section 4). It is
//! a fixed-size array of 32-bit segment numbers (like TCP's 32-bit sequence
//! space, widened again against the cumulative ACK), `Copy` with no
//! allocation; it travels beside its ACK, not in it (see [`Packet`]).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

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

/// A packet: 48 bytes, `Copy`. Packets are copied into and out of the
/// delay lines and the bottleneck queue; at 2 000 flows those copies miss
/// the cache, and their cost grows with the packet's size
/// (docs/benchmarks.md). So:
/// - `seq` is the data segment number, and the cumulative ACK of an ACK
///   ([`Packet::ack`]);
/// - one 32-bit word holds an ACK's receive window ([`Packet::rwnd`]) or a
///   forward packet's (SYN, data) marks: the PPV packet value
///   ([`Packet::pv`], at most `qdisc::ppv::PV_MAX` = 4095) and the CCA class
///   ([`Packet::cca_class`]);
/// - an ACK's SACK option does not travel in the packet: the receiver hands
///   it to its sender through the flow's [`SackChannel`] and sets
///   [`Packet::has_sack`] (the reverse path is FIFO and lossless, so the
///   sender takes the options in order, as DCCP's Ack Vectors, dccp/mod.rs);
///   an ACK without blocks (the common case) carries nothing more;
/// - ECE (ACK), CWR, PSH and the skb mark (data) and the SACK mark are bits of one flags byte.
///
/// The direction-specific accessors check in debug builds that a packet of
/// the other direction never uses them.
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
    /// Timestamp echo (TSecr), ns. DCCP data: the sender's Ack Ratio
    /// ([`Packet::dccp_ack_ratio`]; its data packets echo no timestamp).
    pub ts_ecr: u64,
    pub flow: u32,
    /// Bytes on the wire (headers included).
    pub wire_bytes: u32,
    /// Ack: receive window. Syn/Data: PPV packet value (low 16 bits), CCA class (high 16 bits).
    word: u32,
    pub kind: Kind,
    pub ecn: Ecn,
    /// [`F_ECE`] | [`F_CWR`] | [`F_SACK`] | [`F_CE_IN`] | [`F_PSH`] | [`F_SKB_NEXT`].
    flags: u8,
}

/// Ack: ECN-Echo.
const F_ECE: u8 = 1;
/// Data: Congestion Window Reduced (RFC 3168): the sender reduced after ECE.
const F_CWR: u8 = 2;
/// Ack: a SACK option waits in the flow's [`SackChannel`].
const F_SACK: u8 = 4;
/// In a topology's queue (topology.rs): the packet was CE already when it
/// entered, so a CE mark on leaving is not this queue's.
const F_CE_IN: u8 = 8;
/// Data: PSH, on the last segment of a multi-segment skb (tcp/sender.rs,
/// Linux `__tcp_transmit_skb`); the receiver ACKs it at once (tcp/receiver.rs).
const F_PSH: u8 = 16;
/// Data: a segment of a GSO skb after its first (tcp/sender.rs); it leaves
/// the host right behind the one before it (lines.rs, `SKB_FRAME_GAP_NS`).
const F_SKB_NEXT: u8 = 32;

/// A flow's in-order channel of SACK options from its receiver to its
/// sender, beside the ACKs that carry [`Packet::has_sack`].
pub type SackChannel = Rc<RefCell<VecDeque<SackOpt>>>;

pub fn sack_channel() -> SackChannel {
    Rc::new(RefCell::new(VecDeque::new()))
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
        Packet { enqueue_ns: 0, seq: 0, ts_val: 0, ts_ecr: 0, flow, wire_bytes, word: 0, kind, ecn: Ecn::NotEct, flags: 0 }
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

    #[inline]
    fn flag(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    #[inline]
    fn set_flag(&mut self, f: u8, on: bool) {
        self.flags = if on { self.flags | f } else { self.flags & !f };
    }

    /// Ack: ECN-Echo.
    #[inline]
    pub fn ece(&self) -> bool {
        self.flag(F_ECE)
    }

    #[inline]
    pub fn set_ece(&mut self, on: bool) {
        self.set_flag(F_ECE, on);
    }

    /// Data: Congestion Window Reduced (RFC 3168): the sender reduced after ECE.
    #[inline]
    pub fn cwr(&self) -> bool {
        self.flag(F_CWR)
    }

    #[inline]
    pub fn set_cwr(&mut self, on: bool) {
        self.set_flag(F_CWR, on);
    }

    /// Data: PSH.
    #[inline]
    pub fn psh(&self) -> bool {
        self.flag(F_PSH)
    }

    #[inline]
    pub fn set_psh(&mut self, on: bool) {
        self.set_flag(F_PSH, on);
    }

    /// Data: a segment of an skb after its first, sent right behind the
    /// segment before it (the skb's frames leave the host back to back).
    #[inline]
    pub fn skb_next(&self) -> bool {
        self.flag(F_SKB_NEXT)
    }

    #[inline]
    pub fn set_skb_next(&mut self, on: bool) {
        self.set_flag(F_SKB_NEXT, on);
    }

    /// Ack: its SACK option waits in the flow's [`SackChannel`].
    #[inline]
    pub fn has_sack(&self) -> bool {
        self.flag(F_SACK)
    }

    /// Record whether the packet is CE as it enters a queue ([`Packet::marked_here`]).
    pub(crate) fn note_ce_on_entry(&mut self) {
        let ce = self.ecn == Ecn::Ce;
        self.set_flag(F_CE_IN, ce);
    }

    /// The packet became CE in the queue it leaves (it was not on entry).
    pub(crate) fn marked_here(&self) -> bool {
        self.ecn == Ecn::Ce && !self.flag(F_CE_IN)
    }

    /// Ack: send `sack` (if it has blocks) through `ch` with this ACK.
    pub fn attach_sack(&mut self, sack: SackOpt, ch: &SackChannel) {
        debug_assert!(self.kind == Kind::Ack);
        if !sack.is_empty() {
            ch.borrow_mut().push_back(sack);
            self.set_flag(F_SACK, true);
        }
    }

    /// Ack: its SACK option, taken from `ch` (the flow's channel, in ACK order).
    #[inline]
    pub fn take_sack(&self, ch: &SackChannel) -> SackOpt {
        if self.has_sack() {
            ch.borrow_mut().pop_front().expect("a SACK option for each marked ACK")
        } else {
            SackOpt::NONE
        }
    }

    /// Ack: advertised receive window, segments.
    #[inline]
    pub fn rwnd(&self) -> u32 {
        debug_assert!(!self.kind.is_forward(), "receive window of a {:?}", self.kind);
        self.word
    }

    #[inline]
    pub fn set_rwnd(&mut self, rwnd: u32) {
        debug_assert!(!self.kind.is_forward(), "receive window of a {:?}", self.kind);
        self.word = rwnd;
    }

    /// Packet value set by a PPV edge marker (qdisc/ppv.rs, at most
    /// `PV_MAX` = 4095); 0 = none.
    #[inline]
    pub fn pv(&self) -> u32 {
        debug_assert!(self.kind.is_forward(), "packet value of a {:?}", self.kind);
        self.word & 0xffff
    }

    #[inline]
    pub fn set_pv(&mut self, pv: u32) {
        debug_assert!(self.kind.is_forward(), "packet value of a {:?}", self.kind);
        assert!(pv <= u16::MAX as u32, "packet value {pv} > 65535");
        self.word = (self.word & 0xffff_0000) | pv;
    }

    /// Index of the flow's CCA among the run's distinct CCAs (order of first
    /// appearance in the config), set by the simulator; for CCA-aware qdiscs (RRMQS).
    #[inline]
    pub fn cca_class(&self) -> u16 {
        debug_assert!(self.kind.is_forward(), "CCA class of a {:?}", self.kind);
        (self.word >> 16) as u16
    }

    #[inline]
    pub fn set_cca_class(&mut self, class: u16) {
        debug_assert!(self.kind.is_forward(), "CCA class of a {:?}", self.kind);
        self.word = (self.word & 0xffff) | (class as u32) << 16;
    }

    /// DCCP data: the sender's Ack Ratio (dccp/mod.rs), in `ts_ecr`.
    pub fn dccp_ack_ratio(&self) -> u32 {
        debug_assert!(self.kind == Kind::Data);
        self.ts_ecr as u32
    }

    pub fn set_dccp_ack_ratio(&mut self, ratio: u32) {
        debug_assert!(self.kind == Kind::Data);
        self.ts_ecr = ratio as u64;
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
        // An ACK's window and a data packet's marks use the same word, the
        // flags one byte: each reads back what it wrote.
        let mut a = Packet::new(1, Kind::Ack, 64);
        a.set_ack(7);
        a.set_rwnd(u32::MAX);
        a.set_ece(true);
        assert_eq!((a.ack(), a.rwnd(), a.ece(), a.cwr(), a.has_sack()), (7, u32::MAX, true, false, false));
        let mut d = Packet::new(1, Kind::Data, 1500);
        d.seq = 9;
        d.set_pv(4095);
        d.set_cca_class(u16::MAX);
        d.set_cwr(true);
        d.set_psh(true);
        d.set_skb_next(true);
        d.set_pv(17);
        assert_eq!((d.seq, d.pv(), d.cca_class(), d.cwr(), d.psh(), d.ece()), (9, 17, u16::MAX, true, true, false));
        assert!(d.skb_next() && !a.skb_next());
        assert_eq!(std::mem::size_of::<Packet>(), 48);
    }

    #[test]
    fn sack_options_reach_the_sender_in_ack_order_and_only_with_blocks() {
        // The receiver marks only ACKs with blocks; the sender takes the
        // options in order, an unmarked ACK taking none.
        let ch = sack_channel();
        let mut opts = [SackOpt::NONE; 2];
        opts[0].push(5, 6);
        opts[1].push(5, 7);
        let mut acks = [Packet::new(0, Kind::Ack, 64); 3];
        acks[0].attach_sack(opts[0], &ch);
        acks[1].attach_sack(SackOpt::NONE, &ch);
        acks[2].attach_sack(opts[1], &ch);
        assert_eq!(acks.iter().map(|a| a.has_sack()).collect::<Vec<_>>(), vec![true, false, true]);
        let got: Vec<SackOpt> = acks.iter().map(|a| a.take_sack(&ch)).collect();
        assert_eq!(got, vec![opts[0], SackOpt::NONE, opts[1]]);
        assert!(ch.borrow().is_empty());
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "receive window of a Data")]
    fn a_data_packet_has_no_receive_window() {
        Packet::new(0, Kind::Data, 1500).rwnd();
    }
}
