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

#[derive(Debug, Clone, Copy)]
pub struct Packet {
    pub flow: u32,
    pub kind: Kind,
    /// Data: segment number. Ack: unused.
    pub seq: u64,
    /// Ack: next expected segment (cumulative). Data: unused.
    pub ack: u64,
    /// Ack: SACK blocks, most recent first; the first may be a D-SACK.
    pub sack: SackOpt,
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

impl Packet {
    pub fn new(flow: u32, kind: Kind, wire_bytes: u32) -> Packet {
        Packet {
            flow,
            kind,
            seq: 0,
            ack: 0,
            sack: SackOpt::NONE,
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
}
