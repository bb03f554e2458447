//! The FIFO storage shared by the single-queue disciplines (drop-tail, STEP,
//! RED, CSAQM): packets in arrival order, their backlog in wire bytes, and
//! the hard limit as Linux's pfifo / bfifo check it (`qlen < limit`,
//! `backlog + len <= limit`; either limit may be absent). The packet the link
//! is transmitting counts against both limits (see `Qdisc::set_in_service`).

use super::{DropReason, InService};
use crate::engine::TimeNs;
use crate::packet::Packet;
use crate::ring::Ring;

pub struct Fifo {
    q: Ring<Packet>,
    bytes: u64,
    /// The limits, `u64::MAX` for none (no backlog reaches it): two
    /// comparisons per enqueue, no test for a limit's presence.
    limit_packets: u64,
    limit_bytes: u64,
    in_service: InService,
}

impl Fifo {
    pub fn new(limit_packets: Option<u64>, limit_bytes: Option<u64>) -> Fifo {
        let (limit_packets, limit_bytes) = (limit_packets.unwrap_or(u64::MAX), limit_bytes.unwrap_or(u64::MAX));
        Fifo { q: Ring::with_capacity(256), bytes: 0, limit_packets, limit_bytes, in_service: InService::default() }
    }

    /// Would admitting a packet of `wire_bytes` exceed either limit (the packet in transmission included)?
    pub fn would_overflow(&self, wire_bytes: u32) -> bool {
        let s = self.in_service;
        self.q.len() as u64 + s.packets >= self.limit_packets || self.bytes + s.bytes + wire_bytes as u64 > self.limit_bytes
    }

    /// The link's packet in transmission (counts against the limits).
    pub fn set_in_service(&mut self, s: InService) {
        self.in_service = s;
    }

    /// Append (the caller has checked `would_overflow`).
    pub fn push(&mut self, p: Packet) {
        self.bytes += p.wire_bytes as u64;
        self.q.push_back(p);
    }

    /// Append `p`, arrived at `now` (the tail of a discipline's enqueue, after its checks).
    pub fn enqueue_at(&mut self, mut p: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        p.enqueue_ns = now;
        self.push(p);
        Ok(())
    }

    pub fn pop(&mut self) -> Option<Packet> {
        let p = self.q.pop_front()?;
        self.bytes -= p.wire_bytes as u64;
        Some(p)
    }

    /// `pop` written into `dst`, the head copied there directly (each path
    /// stores its own value: no `Option` built first, `Qdisc::dequeue_into`).
    #[inline(always)]
    pub fn pop_into(&mut self, dst: &mut Option<Packet>) {
        match self.q.front() {
            Some(p) => {
                self.bytes -= p.wire_bytes as u64;
                *dst = Some(*p);
                self.q.discard_front(1);
            }
            None => *dst = None,
        }
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// The most recently admitted packet.
    pub fn back(&self) -> Option<&Packet> {
        self.q.back()
    }

    /// Queued packets, head first.
    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.q.iter()
    }

    /// Backlog in wire bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The [`Qdisc`](super::Qdisc) methods of a discipline whose whole backlog is the [`Fifo`] in its
/// field `$f` (drop-tail, STEP, RED, CSAQM): `len_packets`, `len_bytes` and `set_in_service`;
/// `fifo_backlog!(f, dequeue)` also `dequeue` as the FIFO's head (drop-tail, STEP).
macro_rules! fifo_backlog {
    ($f:ident) => {
        fn len_packets(&self) -> usize {
            self.$f.len()
        }

        fn len_bytes(&self) -> u64 {
            self.$f.bytes()
        }

        fn set_in_service(&mut self, s: $crate::qdisc::InService) {
            self.$f.set_in_service(s);
        }
    };
    ($f:ident, dequeue) => {
        fn dequeue(
            &mut self,
            _now: $crate::engine::TimeNs,
            _dropped: &mut Vec<($crate::packet::Packet, $crate::qdisc::DropReason)>,
        ) -> Option<$crate::packet::Packet> {
            self.$f.pop()
        }

        fn dequeue_into(
            &mut self,
            _now: $crate::engine::TimeNs,
            _dropped: &mut Vec<($crate::packet::Packet, $crate::qdisc::DropReason)>,
            dst: &mut Option<$crate::packet::Packet>,
        ) {
            self.$f.pop_into(dst)
        }

        $crate::qdisc::fifo::fifo_backlog!($f);
    };
}
pub(crate) use fifo_backlog;

/// The same methods for a discipline that counts its backlog itself and keeps the link's
/// packet in `in_service`: `len_packets` is `$len`, `len_bytes` is `$bytes` (default: the field
/// `bytes`), with `$q` the discipline.
macro_rules! counted_backlog {
    (|$q:ident| $len:expr) => {
        $crate::qdisc::fifo::counted_backlog!(|$q| $len, $q.bytes);
    };
    (|$q:ident| $len:expr, $bytes:expr) => {
        fn len_packets(&self) -> usize {
            let $q = self;
            $len
        }

        fn len_bytes(&self) -> u64 {
            let $q = self;
            $bytes
        }

        fn set_in_service(&mut self, s: $crate::qdisc::InService) {
            self.in_service = s;
        }
    };
}
pub(crate) use counted_backlog;
