//! DCCP (RFC 4340) with CCID 2, TCP-like congestion control (RFC 4341), as a
//! transport beside TCP: a flow with `cca = "ccid2"` (transport "dccp") uses
//! this sender/receiver pair instead of tcp/.
//!
//! What is modelled:
//! - Unreliable datagrams: every data packet has a fresh sequence number,
//!   nothing is retransmitted, the receiver delivers out of order (bytes are
//!   counted at arrival; a lost datagram is simply never delivered).
//! - A Request/Response handshake (Kind::Syn / Kind::SynAck) that gives the
//!   first RTT sample, as DCCP-Request/Response do.
//! - CCID 2 congestion control (ccid2.rs): windows in packets, slow start,
//!   congestion avoidance, cwnd/2 once per window of losses, RTO.
//! - Acknowledgements with an Ack Vector (RFC 4340 §11.4) every Ack Ratio
//!   data packets (RFC 4340 §11.3, RFC 4341 §6.1).
//!
//! Simplifications (also in docs/fidelity.md):
//! - The Ack Vector travels out of band: the receiver queues, per ACK, the
//!   run-length list of data packets it received since its previous ACK
//!   ([`AckVector`]), and the sender takes the entries in order as the ACKs
//!   arrive. This is exactly what a sender learns from the full Ack Vector as
//!   long as no ACK is lost, which holds here: the reverse path is
//!   uncongested and lossless. (A debug assertion checks the pairing.)
//! - The Ack Ratio feature (negotiated with Change/Confirm options) is
//!   modelled as the sender's current value carried on each data packet
//!   (`Packet::dccp_ack_ratio`); the receiver applies it at once.
//! - No ECN (DCCP's ECN Nonce and ECN-marked ACKs are not modelled), no
//!   sequence-window validity checks (RFC 4340 §7.5), no CCVal, no
//!   DCCP-Sync, no Ack-of-Ack pruning (the sender learns every packet's fate
//!   exactly once).

pub mod ccid2;
pub mod receiver;
pub mod sender;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// The canonical CCA name that selects DCCP with CCID 2.
pub use crate::cc::CCID2_NAME;

/// What one ACK reports: its own sequence number (DCCP ACKs are numbered,
/// which is how the sender detects lost ACKs, RFC 4341 §6.1.2) and the runs
/// [start, end) of data sequence numbers received since the previous ACK.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AckVector {
    pub ack_seq: u64,
    /// The ACK's Acknowledgement Number (GSR, greatest sequence number
    /// received, RFC 4340 §7.4), carried here with the vector.
    pub ack_number: u64,
    pub runs: Vec<(u64, u64)>,
}

/// The in-order channel that carries Ack Vectors from a flow's receiver to
/// its sender alongside the ACK packets (see the module documentation).
pub type AckVectorChannel = Rc<RefCell<VecDeque<AckVector>>>;

pub fn channel() -> AckVectorChannel {
    Rc::new(RefCell::new(VecDeque::new()))
}
