//! The TCP sender's SACK scoreboard and loss marking (see sender.rs for the
//! overview): every SACK block of an ACK (RFC 2018, Linux
//! `tcp_sacktag_write_queue` / `tcp_sacktag_one`, `recv_sack_cache`), D-SACK
//! (RFC 2883, `tcp_check_dsack`), RACK loss detection (RFC 8985,
//! net/ipv4/tcp_recovery.c `tcp_rack_advance` / `tcp_rack_detect_loss`),
//! `tcp_mark_skb_lost` and the RTO's `tcp_timeout_mark_lost`.

use super::tsorted::{self, Tx};
use super::*;

impl Sender {
    /// Linux `tcp_sacktag_write_queue`: tag the segments of every SACK block
    /// of the ACK. A first block below the cumulative ACK, or inside the
    /// second block, is a D-SACK (`tcp_check_dsack`, RFC 2883 section 4).
    /// Parts of blocks the previous ACK already reported are skipped
    /// (`recv_sack_cache`), so a steady stream of growing blocks costs one
    /// segment per ACK, not the whole block.
    pub(super) fn sacktag(&mut self, now: TimeNs, sack: &SackOpt, ack: u64, prior_una: u64, acc: &mut AckAcc) {
        if self.sacked_out == 0 {
            self.sack_cache_len = 0;
        }
        let dsack = self.check_dsack(sack, ack, prior_una, &mut acc.flags);
        let (una, nxt) = (self.tp.snd_una, self.tp.snd_nxt);
        let mut used = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n_used = 0;
        for i in 0..sack.len() {
            let (start, end) = sack.block(i, ack);
            // tcp_is_sackblock_valid / "ignore very old stuff", clipped to the window.
            let (start, end) = (start.max(una), end.min(nxt));
            if start >= end {
                continue;
            }
            if i == 0 && dsack {
                for seq in start..end {
                    self.sacktag_one(now, seq, true, acc);
                }
            } else {
                self.sacktag_uncached(now, start, end, acc);
            }
            used[n_used] = (start, end);
            n_used += 1;
        }
        if n_used > 1 {
            used[..n_used].sort_unstable();
        }
        self.sack_cache = used;
        self.sack_cache_len = n_used;
    }

    /// Tag [start, end) except what the cached blocks of the previous ACK cover.
    pub(super) fn sacktag_uncached(&mut self, now: TimeNs, start: u64, end: u64, acc: &mut AckAcc) {
        let cache = &self.sack_cache[..self.sack_cache_len];
        if cache.iter().any(|&(cs, ce)| cs <= start && end <= ce) {
            return; // reported before: nothing new
        }
        let mut cur = start;
        for k in 0..self.sack_cache_len {
            let (cs, ce) = self.sack_cache[k];
            if ce <= cur {
                continue;
            }
            if cs >= end {
                break;
            }
            for seq in cur..cs.max(cur) {
                self.sacktag_one(now, seq, false, acc);
            }
            cur = cur.max(ce);
        }
        for seq in cur..end {
            self.sacktag_one(now, seq, false, acc);
        }
    }

    /// Linux `tcp_check_dsack` + `tcp_dsack_seen`: is the first block a
    /// D-SACK, and one to believe (no more duplicates than retransmissions
    /// sent)? A D-SACK below snd_una counts against `undo_retrans` here
    /// ("dumb counting"); one inside the window is counted by the walk.
    pub(super) fn check_dsack(&mut self, sack: &SackOpt, ack: u64, prior_una: u64, f: &mut AckFlags) -> bool {
        let (s0, e0) = sack.block(0, ack);
        let inside_second = sack.len() > 1 && {
            let (s1, e1) = sack.block(1, ack);
            s0 >= s1 && e0 <= e1
        };
        if !(s0 < ack || inside_second) || s0 >= e0 {
            return false;
        }
        let dup_segs = e0 - s0;
        if dup_segs == 1 && self.tlp_high_seq != 0 && self.tlp_high_seq == e0 {
            f.dsack_tlp = true;
        }
        self.dsack_dups += dup_segs;
        if self.dsack_dups > self.stats.retransmissions {
            return false; // dubious: more duplicates than retransmissions
        }
        self.stats.dsack_segs += dup_segs;
        f.dsacking = true;
        f.dsack_segs += dup_segs as u32;
        // A D-SACK of a loss probe does not count: probes are not in
        // undo_retrans (Linux "tcp: fix incorrect undo caused by DSACK of TLP
        // retransmit").
        if let Some(marker) = self.undo_marker {
            if self.undo_retrans > 0 && e0 <= prior_una && e0 > marker && !f.dsack_tlp {
                self.undo_retrans = (self.undo_retrans - dup_segs as i64).max(0);
            }
        }
        true
    }

    /// Linux `tcp_sacktag_one` for segment `seq` (`dup`: inside a D-SACK).
    pub(super) fn sacktag_one(&mut self, now: TimeNs, seq: u64, dup: bool, acc: &mut AckAcc) {
        let i = (seq - self.tp.snd_una) as usize;
        let seg = self.segs[i];
        if dup && seg.flags & F_EVER_RETRANS != 0 && !acc.flags.dsack_tlp {
            if let Some(marker) = self.undo_marker {
                if self.undo_retrans > 0 && seq + 1 > marker {
                    self.undo_retrans -= 1;
                }
            }
        }
        if seg.flags & F_SACKED == 0 {
            let mut flags = seg.flags | F_SACKED | F_RATE_DONE;
            if seg.flags & F_RETRANS != 0 {
                // S|R without L: the retransmission is still in flight.
                if seg.flags & F_LOST != 0 {
                    flags &= !(F_LOST | F_RETRANS);
                    self.lost_out -= 1;
                    self.retrans_out -= 1; // in flight: + 1 - 1
                }
            } else {
                if seg.flags & F_EVER_RETRANS == 0 {
                    acc.flags.orig_sack_acked |= seq < self.high_seq;
                    let r = now - seg.sent_ns;
                    if acc.sack_rtt == NO_RTT || r > acc.sack_rtt {
                        acc.sack_rtt = r;
                    }
                    acc.sack_ca_rtt = acc.sack_ca_rtt.min(r); // NO_RTT: none
                }
                if seg.flags & F_LOST != 0 {
                    flags &= !F_LOST;
                    self.lost_out -= 1;
                    self.pipe += 1;
                }
            }
            self.segs[i].flags = flags;
            self.sacked_out += 1;
            self.pipe -= 1;
            acc.newly_delivered += 1;
            acc.flags.data_sacked = true;
            self.rate_delivered(&seg, &mut acc.rate);
            // The highest newly SACKed segment is the last one Linux's ordered walk takes.
            let mut rtt = NO_RTT;
            self.rack_advance(now, &seg, seq, &mut rtt);
            if rtt != NO_RTT && (acc.rack_sack_rtt == NO_RTT || seq > acc.rack_sack_seq) {
                (acc.rack_sack_rtt, acc.rack_sack_seq) = (rtt, seq);
            }
        }
        if dup && self.segs[i].flags & F_RETRANS != 0 {
            self.segs[i].flags &= !F_RETRANS;
            self.retrans_out -= 1;
            self.pipe -= 1;
        }
    }

    // --------------------------------------------------------------- recovery

    /// RACK.update (RFC 8985 6.2 step 2, Linux `tcp_rack_advance`) for one
    /// newly (S)ACKed segment: RACK.xmit_ts / end_seq move to the most
    /// recently sent one; RACK.rtt is the RTT of every segment taken, so the
    /// last one taken sets it (`take_rack_rtt`). A retransmitted segment
    /// (S)ACKed sooner than min_rtt after its last send is ambiguous: skipped.
    pub(super) fn rack_advance(&mut self, now: TimeNs, seg: &Seg, seq: u64, rtt_slot: &mut u64) {
        let rtt = now - seg.sent_ns;
        if seg.flags & F_EVER_RETRANS != 0 && self.tp.min_rtt_ns != u64::MAX && rtt < self.tp.min_rtt_ns {
            return;
        }
        *rtt_slot = rtt;
        if seg.sent_ns > self.rack_xmit_ns || (seg.sent_ns == self.rack_xmit_ns && seq > self.rack_end_seq) {
            self.rack_xmit_ns = seg.sent_ns;
            self.rack_end_seq = seq;
        }
    }

    /// RACK.rtt after an ACK: Linux's `tcp_ack` tags the SACK blocks first,
    /// in ascending sequence order (`tcp_sacktag_write_queue` sorts them),
    /// then frees the cumulatively ACKed segments in sequence order
    /// (`tcp_clean_rtx_queue`), each calling `tcp_rack_advance`, which sets
    /// `rack.rtt_us` every time: the last cumulatively ACKed segment taken
    /// wins, else the highest newly SACKed one. Not necessarily the most
    /// recently sent: a retransmission ACKed with newer data SACKed sets it.
    pub(super) fn take_rack_rtt(&mut self, acc: &AckAcc) {
        if acc.rack_cum_rtt != NO_RTT {
            self.rack_rtt_ns = acc.rack_cum_rtt;
        } else if acc.rack_sack_rtt != NO_RTT {
            self.rack_rtt_ns = acc.rack_sack_rtt;
        }
    }

    /// RACK.detect_loss (RFC 8985 6.2 step 5, Linux `tcp_rack_detect_loss`).
    pub(super) fn rack_detect_loss(&mut self, now: TimeNs) {
        let no_reordering_window = self.tp.ca_state >= CaState::Recovery || self.sacked_out >= DUPTHRESH;
        let reo_wnd =
            if no_reordering_window || self.tp.min_rtt_ns == u64::MAX { 0 } else { (self.tp.min_rtt_ns / 4).min(self.rtt.srtt_ns) };
        while let Some((seq, sent)) = self.tsorted.front() {
            if seq < self.tp.snd_una {
                self.tsorted.pop_front();
                continue;
            }
            let seg = self.segs[(seq - self.tp.snd_una) as usize];
            // A run's element: the first send time, if the segment still holds it.
            let Some(sent) = sent.or(tsorted::first_send_is_current(seg.flags).then_some(seg.sent_ns)) else {
                self.tsorted.pop_front();
                continue;
            };
            let outstanding = seg.sent_ns == sent && seg.flags & F_SACKED == 0 && (seg.flags & F_LOST == 0 || seg.flags & F_RETRANS != 0);
            if !outstanding {
                self.tsorted.pop_front();
                continue;
            }
            let sent_before = sent < self.rack_xmit_ns || (sent == self.rack_xmit_ns && seq < self.rack_end_seq);
            if !sent_before {
                break;
            }
            let deadline = sent + self.rack_rtt_ns + reo_wnd;
            if deadline <= now {
                self.mark_lost(seq);
                self.tsorted.pop_front();
            } else {
                // tcp_rack_mark_lost: the reorder timer, a jiffy timer, at
                // usecs_to_jiffies(remaining + TCP_TIMEOUT_MIN_US).
                let jiffies = usecs_to_jiffies(deadline - now + TLP_EXTRA_NS);
                self.reo_timer.arm(self.jiffy_timer_fires_ns(now, jiffies));
                break;
            }
        }
        self.tp.in_flight = self.in_flight();
    }

    /// Linux `tcp_mark_skb_lost`.
    pub(super) fn mark_lost(&mut self, seq: u64) {
        let i = (seq - self.tp.snd_una) as usize;
        let f = self.segs[i].flags;
        if f & F_SACKED != 0 {
            return;
        }
        if f & F_LOST != 0 {
            if f & F_RETRANS == 0 {
                // Marked lost before and not resent since: nothing new is lost.
                self.rtx_queue.push_back(seq);
                return;
            }
            self.segs[i].flags &= !F_RETRANS;
            self.retrans_out -= 1;
            self.pipe -= 1;
        } else {
            self.segs[i].flags |= F_LOST;
            self.lost_out += 1;
            self.pipe -= 1;
        }
        self.count_loss();
        self.rtx_queue.push_back(seq);
    }

    /// `tp->lost` in Linux's `tcp_mark_skb_lost` (5.x: `tcp_sum_lost`, `!(sacked
    /// & TCPCB_LOST) || (sacked & TCPCB_SACKED_RETRANS)`): a segment counts the
    /// first time it is marked lost and each time a retransmission of it is
    /// found lost, never when one already marked lost and not resent is marked again.
    fn count_loss(&mut self) {
        self.tp.lost += 1;
        debug_assert!(self.tp.lost <= u32::MAX as u64, "Seg::tx_lost holds tp.lost in 32 bits");
        self.stats.losses_detected += 1;
    }

    // ----------------------------------------------------------------- timers

    /// Linux `tcp_timeout_mark_lost` with RACK: every unSACKed segment is
    /// lost, except those sent less than RACK.rtt ago (not the head): they
    /// may still be in flight, and RACK keeps watching them.
    pub(super) fn timeout_mark_lost(&mut self, now: TimeNs) {
        self.rtx_queue.clear();
        let una = self.tp.snd_una;
        for i in 0..self.segs.len() {
            let f = self.segs[i].flags;
            if f & F_SACKED != 0 {
                continue;
            }
            if i > 0 && self.segs[i].sent_ns + self.rack_rtt_ns > now {
                continue;
            }
            if f & F_RETRANS != 0 {
                self.segs[i].flags &= !F_RETRANS;
                self.retrans_out -= 1;
                self.pipe -= 1;
            }
            if f & F_LOST == 0 {
                self.segs[i].flags |= F_LOST;
                self.lost_out += 1;
                self.pipe -= 1;
            }
            // `tcp_mark_skb_lost`: counted unless already lost and not resent since.
            if f & (F_LOST | F_RETRANS) != F_LOST {
                self.count_loss();
            }
            self.rtx_queue.push_back(una + i as u64);
        }
        // Keep the transmissions RACK still watches, in order, one entry each.
        for tx in self.tsorted.take() {
            let (from, to, sent) = match tx {
                Tx::Run { start, end } => (start.max(una), end, None),
                Tx::One { seq, sent } => (seq.max(una), seq + 1, Some(sent)),
            };
            for seq in from..to {
                let g = self.segs[(seq - una) as usize];
                let Some(sent) = sent.or(tsorted::first_send_is_current(g.flags).then_some(g.sent_ns)) else {
                    continue; // a run's element re-sent since: stale
                };
                if g.flags & (F_LOST | F_SACKED) == 0 && g.sent_ns == sent {
                    self.tsorted.push_one(seq, sent);
                }
            }
        }
    }
}
