//! The sender's outstanding transmissions in send order (Linux
//! `tp->tsorted_sent_queue`, walked by RACK's `tcp_rack_detect_loss`).
//!
//! Linux links every skb into the list when it is sent and unlinks it when a
//! cumulative ACK frees it (`tcp_rtx_queue_unlink_and_free`) or it is
//! retransmitted (moved to the tail). Here an entry is either one
//! transmission (`One`: a retransmission, or any entry rebuilt after an RTO
//! or an undo) or a run of first transmissions of new data sent back to back
//! in sequence order (`Run`): new data goes out in sequence order, so the
//! list of a flow without loss is one run, extended by a send and shortened
//! by a cumulative ACK in O(1), with no 16-byte record per segment. An element
//! of a run has its segment's first send time, which the scoreboard still
//! holds (`sent_ns`) unless the segment was retransmitted at a later
//! nanosecond (then the element is stale, as a stale `One` is):
//! [`first_send_is_current`].
//!
//! The list's last run, the one sends extend, is kept outside the deque
//! (`tail`): a send then compares and increments one field in place, and
//! the cumulative ACK of a flow without loss trims it in place too.

use std::collections::VecDeque;

use super::{F_EVER_RETRANS, F_FIRST_SEND_NS};

/// One entry of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tx {
    /// First transmissions of segments [start, end), in this order.
    Run { start: u64, end: u64 },
    /// One transmission of `seq` at `sent`.
    One { seq: u64, sent: u64 },
}

/// Whether a segment's `sent_ns` is still the time of its first transmission
/// (never retransmitted, or retransmitted only in the same nanosecond).
pub(super) fn first_send_is_current(flags: u8) -> bool {
    flags & F_EVER_RETRANS == 0 || flags & F_FIRST_SEND_NS != 0
}

#[derive(Debug, Default)]
pub(super) struct TxList {
    /// The entries before `tail` (all of them when `tail` is empty).
    q: VecDeque<Tx>,
    /// The last entry when it is a run, `start..end` (empty: none).
    tail: (u64, u64),
}

impl TxList {
    pub fn with_capacity(n: usize) -> TxList {
        TxList { q: VecDeque::with_capacity(n), tail: (0, 0) }
    }

    /// The tail run as an entry, if any.
    fn tail_run(&self) -> Option<Tx> {
        let (start, end) = self.tail;
        (start < end).then_some(Tx::Run { start, end })
    }

    /// Move the tail run (if any) into the deque, before an entry that is not
    /// an extension of it.
    fn close_tail(&mut self) {
        if let Some(run) = self.tail_run() {
            self.q.push_back(run);
        }
        self.tail = (0, 0);
    }

    #[inline(always)]
    pub fn push_first(&mut self, seq: u64) {
        // An empty tail ending at `seq` becomes the run seq..seq+1 too.
        if self.tail.1 == seq {
            self.tail.1 += 1;
        } else {
            self.push_first_new(seq);
        }
    }

    /// `push_first` of segments `seq..seq + n` (n >= 1), in this order.
    #[inline(always)]
    pub fn push_first_run(&mut self, seq: u64, n: u64) {
        if self.tail.1 != seq {
            self.push_first_new(seq);
            self.tail.1 = seq;
        }
        self.tail.1 += n;
    }

    #[inline(never)]
    fn push_first_new(&mut self, seq: u64) {
        self.close_tail();
        self.tail = (seq, seq + 1);
    }

    pub fn push_one(&mut self, seq: u64, sent: u64) {
        self.close_tail();
        self.q.push_back(Tx::One { seq, sent });
    }

    pub fn front(&self) -> Option<(u64, Option<u64>)> {
        match self.q.front().copied().or_else(|| self.tail_run())? {
            Tx::Run { start, .. } => Some((start, None)),
            Tx::One { seq, sent } => Some((seq, Some(sent))),
        }
    }

    pub fn pop_front(&mut self) {
        match self.q.front_mut() {
            Some(Tx::Run { start, end }) if *end - *start > 1 => *start += 1,
            Some(_) => {
                self.q.pop_front();
            }
            None if self.tail.0 < self.tail.1 => self.tail.0 += 1,
            None => {}
        }
    }

    #[inline(always)]
    pub fn trim_below(&mut self, una: u64) {
        if !self.q.is_empty() && !self.trim_deque_below(una) {
            return;
        }
        // The tail run is the front: what lies below `una` leaves it.
        self.tail.0 = self.tail.0.max(una.min(self.tail.1));
    }

    /// `trim_below` on the deque; true if it emptied it.
    #[inline(never)]
    fn trim_deque_below(&mut self, una: u64) -> bool {
        while let Some(front) = self.q.front_mut() {
            match front {
                Tx::Run { start, end } if *start < una => {
                    if *end <= una {
                        self.q.pop_front();
                    } else {
                        *start = una;
                        return false;
                    }
                }
                Tx::One { seq, .. } if *seq < una => {
                    self.q.pop_front();
                }
                _ => return false,
            }
        }
        true
    }

    pub fn take(&mut self) -> VecDeque<Tx> {
        self.close_tail();
        std::mem::take(&mut self.q)
    }

    pub fn clear(&mut self) {
        self.q.clear();
        self.tail = (0, 0);
    }

    /// The entries in order, the tail run last.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = Tx> + '_ {
        self.q.iter().copied().chain(self.tail_run())
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.iter().map(|t| if let Tx::Run { start, end } = t { (end - start) as usize } else { 1 }).sum()
    }

    #[cfg(test)]
    pub fn entries(&self) -> usize {
        self.iter().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(l: &TxList) -> Vec<(u64, Option<u64>)> {
        l.iter()
            .flat_map(|t| match t {
                Tx::Run { start, end } => (start..end).map(|s| (s, None)).collect::<Vec<_>>(),
                Tx::One { seq, sent } => vec![(seq, Some(sent))],
            })
            .collect()
    }

    #[test]
    fn new_data_in_sequence_order_is_one_run_and_a_retransmission_starts_a_new_entry() {
        let mut l = TxList::default();
        for seq in 0..5 {
            l.push_first(seq);
        }
        assert_eq!(l.entries(), 1);
        l.push_one(2, 700);
        l.push_first(5);
        l.push_first(6);
        // Send order: 0..5 first sends, the retransmission of 2, then 5 and 6.
        assert_eq!(walk(&l), vec![(0, None), (1, None), (2, None), (3, None), (4, None), (2, Some(700)), (5, None), (6, None)]);
        assert_eq!((l.entries(), l.len()), (3, 8));
    }

    #[test]
    fn a_run_of_first_sends_at_once_is_the_list_of_its_sends_one_by_one() {
        let (mut one_by_one, mut at_once) = (TxList::default(), TxList::default());
        for (seq, n) in [(0, 3), (3, 1), (4, 2)] {
            (seq..seq + n).for_each(|s| one_by_one.push_first(s));
            at_once.push_first_run(seq, n);
        }
        one_by_one.push_one(1, 500);
        at_once.push_one(1, 500);
        (6..10).for_each(|s| one_by_one.push_first(s));
        at_once.push_first_run(6, 4);
        assert_eq!(walk(&at_once), walk(&one_by_one));
        assert_eq!(at_once.entries(), one_by_one.entries());
        assert_eq!(at_once.entries(), 3);
    }

    #[test]
    fn pop_and_trim_remove_transmissions_from_the_front_in_send_order() {
        let mut l = TxList::default();
        for seq in 0..4 {
            l.push_first(seq);
        }
        l.push_one(1, 500);
        l.push_first(4);
        l.pop_front();
        assert_eq!(l.front(), Some((1, None)));
        // A cumulative ACK up to 3 frees 1 and 2 of the run; the retransmission of 1 waits
        // behind 3 (as in Linux, only the front is unlinked here; RACK skips it later).
        l.trim_below(3);
        assert_eq!(walk(&l), vec![(3, None), (1, Some(500)), (4, None)]);
        l.trim_below(5);
        assert_eq!(walk(&l), vec![]);
        l.pop_front(); // empty: nothing to do
        assert_eq!(l.front(), None);
    }

    #[test]
    fn a_runs_element_is_stale_once_its_segment_was_resent_at_a_later_time() {
        assert!(first_send_is_current(0));
        assert!(!first_send_is_current(F_EVER_RETRANS));
        // Re-sent in the nanosecond of its first send: `sent_ns` is unchanged.
        assert!(first_send_is_current(F_EVER_RETRANS | F_FIRST_SEND_NS));
    }
}
