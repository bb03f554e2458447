//! The TCP sender's recovery state machine (see sender.rs for the overview):
//! Linux `tcp_fastretrans_alert` and `tcp_process_loss` (net/ipv4/tcp_input.c),
//! undo of spurious reductions (`tcp_undo_cwnd_reduction`, `tcp_try_undo_dsack`
//! (RFC 2883), `tcp_packet_delayed` (Eifel, RFC 3522), `tcp_try_undo_recovery` /
//! `_partial` / `_loss`, F-RTO (RFC 5682 section 3.1)), fast recovery with PRR
//! (RFC 6937, `tcp_enter_recovery`, `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction`)
//! and ECN's CWR (RFC 3168, `tcp_enter_cwr`).

use super::*;

impl Sender {
    pub(super) fn set_state(&mut self, s: CaState) {
        if s != self.tp.ca_state {
            self.cc.set_state(&mut self.tp, s);
            self.tp.ca_state = s;
        }
    }

    /// Linux `tcp_fastretrans_alert` (SACK, RACK): leave a finished episode
    /// (undoing its reduction if it proved spurious), detect losses, enter
    /// Recovery or CWR. There is no Disorder state: Open stands for it.
    pub(super) fn fastretrans_alert(&mut self, now: TimeNs, f: &AckFlags, ece: bool) {
        if ece {
            self.prior_ssthresh = 0; // ECN proves congestion: no undo
        }
        // D. Exit a state when high_seq is ACKed.
        if self.tp.ca_state == CaState::Open {
            self.retrans_stamp = 0;
        } else if self.tp.snd_una >= self.high_seq {
            match self.tp.ca_state {
                // CWR is held until something above high_seq is ACKed, so
                // that CWR reached the receiver.
                CaState::Cwr if self.tp.snd_una > self.high_seq => self.end_cwnd_reduction(),
                CaState::Recovery => {
                    self.try_undo_recovery(f);
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        // E. Process the state.
        match self.tp.ca_state {
            CaState::Recovery => {
                if f.una_advanced && self.try_undo_partial(f) {
                    return;
                }
                if self.try_undo_dsack() {
                    self.try_to_open(ece);
                }
                self.rack_detect_loss(now);
                if self.tp.ca_state != CaState::Recovery && self.lost_out > 0 {
                    self.enter_recovery(ece);
                }
                return;
            }
            CaState::Loss => {
                self.process_loss(now, f);
                let prior_retrans = self.retrans_out;
                self.rack_detect_loss(now);
                let lost_retrans = self.retrans_out < prior_retrans;
                // Change state if cwnd is undone or retransmissions are lost.
                if !(self.tp.ca_state == CaState::Open || lost_retrans) {
                    return;
                }
            }
            _ => {}
        }
        if self.tp.ca_state == CaState::Open {
            self.try_undo_dsack();
        }
        self.rack_detect_loss(now);
        if self.lost_out == 0 {
            self.try_to_open(ece);
            return;
        }
        self.enter_recovery(ece);
    }

    /// Linux `tcp_process_loss`: in Loss, undo a spurious RTO (timestamps,
    /// or F-RTO, RFC 5682 section 3.1 with SACK); otherwise retransmit.
    pub(super) fn process_loss(&mut self, now: TimeNs, f: &AckFlags) {
        let recovered = self.tp.snd_una >= self.high_seq;
        if f.una_advanced && self.try_undo_loss(false, f) {
            return;
        }
        if self.frto {
            // Step 3.b: never-retransmitted data was (S)ACKed: not all was lost.
            if f.orig_sack_acked && self.try_undo_loss(true, f) {
                return;
            }
            if self.tp.snd_nxt > self.high_seq {
                // Step 3.a: new data sent after the RTO drew a SACK or a
                // duplicate ACK: the loss was real.
                if f.data_sacked || (!f.una_advanced && !f.dsacking) {
                    self.frto = false;
                }
            } else if f.una_advanced && !recovered {
                // Step 2.b: send new data instead of retransmitting.
                self.high_seq = self.tp.snd_nxt;
                let window_open = self.tp.snd_nxt < self.tp.snd_una + self.rwnd as u64;
                if window_open && self.tp.snd_nxt < self.segs_available(now) {
                    self.frto_send_new = true;
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            // Step 2.a: the RTO retransmission alone repaired the window.
            self.try_undo_recovery(f);
        }
    }

    /// Linux `tcp_packet_delayed` (Eifel detection, RFC 3522, with 6.18's
    /// rule for no retransmission yet): the ACK echoes a timestamp older than
    /// the episode's first retransmission, so the original got through.
    pub(super) fn packet_delayed(&self, f: &AckFlags) -> bool {
        if self.retrans_stamp != 0 {
            return f.ts_ecr != 0 && f.ts_ecr < self.retrans_stamp;
        }
        true
    }

    /// Linux `tcp_may_undo`: all retransmissions D-SACKed, or timestamps show
    /// that the originals arrived.
    pub(super) fn may_undo(&self, f: &AckFlags) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(f))
    }

    /// Linux `tcp_undo_cwnd_reduction`: restore cwnd through the CCA's
    /// `undo_cwnd` and ssthresh from `prior_ssthresh`; `unmark_loss` also
    /// forgets every loss mark (the segments are in flight again).
    pub(super) fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for g in self.segs.iter_mut() {
                g.flags &= !F_LOST;
            }
            self.pipe += self.lost_out;
            self.lost_out = 0;
            self.rtx_queue.clear();
            self.rebuild_tsorted();
        }
        if self.prior_ssthresh != 0 {
            self.tp.cwnd = self.cc.undo_cwnd(&self.tp).max(1);
            if self.prior_ssthresh > self.tp.ssthresh {
                self.tp.ssthresh = self.prior_ssthresh;
                self.queue_cwr = false; // tcp_ecn_withdraw_cwr
            }
        }
        self.undo_marker = None;
        self.stats.undos += 1;
        self.tp.in_flight = self.in_flight();
    }

    /// After loss marks are forgotten, RACK must watch those segments again:
    /// rebuild the send-ordered list of outstanding transmissions.
    pub(super) fn rebuild_tsorted(&mut self) {
        let mut v = std::mem::take(&mut self.scratch);
        v.clear();
        let una = self.tp.snd_una;
        for (i, g) in self.segs.iter().enumerate() {
            if g.flags & F_SACKED == 0 {
                v.push((g.sent_ns, una + i as u64));
            }
        }
        v.sort_unstable();
        self.tsorted.clear();
        for &(sent, seq) in &v {
            self.tsorted.push_one(seq, sent);
        }
        self.scratch = v;
    }

    /// Linux `tcp_try_undo_recovery`: at the end of Recovery (or Loss), undo
    /// if the episode was spurious; back to Open.
    pub(super) fn try_undo_recovery(&mut self, f: &AckFlags) {
        if self.may_undo(f) {
            self.undo_cwnd_reduction(false);
        }
        self.set_state(CaState::Open);
    }

    /// Linux `tcp_try_undo_dsack`: D-SACKs showed every retransmission of
    /// the episode spurious.
    pub(super) fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// Linux `tcp_try_undo_loss`: undo an RTO's reduction (Loss -> Open).
    pub(super) fn try_undo_loss(&mut self, frto_undo: bool, f: &AckFlags) -> bool {
        if frto_undo || self.may_undo(f) {
            self.undo_cwnd_reduction(true);
            if frto_undo {
                self.stats.spurious_rtos += 1;
            }
            self.retransmits = 0;
            self.set_state(CaState::Open);
            return true;
        }
        false
    }

    /// Linux `tcp_try_undo_partial`: a partial ACK in Recovery whose echoed
    /// timestamp predates the retransmission: the hole was filled by the
    /// delayed original. With retransmissions still out, hold (mark no more
    /// losses on this ACK); else undo.
    pub(super) fn try_undo_partial(&mut self, f: &AckFlags) -> bool {
        if self.undo_marker.is_some() && self.packet_delayed(f) {
            if self.retrans_out > 0 {
                return true;
            }
            self.undo_cwnd_reduction(true);
            self.try_keep_open();
        }
        false
    }

    /// Linux `tcp_try_to_open`: ECE enters CWR; otherwise stay (or become) Open.
    pub(super) fn try_to_open(&mut self, ece: bool) {
        if !self.any_retrans_done() {
            self.retrans_stamp = 0;
        }
        if ece && self.tp.ca_state < CaState::Cwr {
            self.enter_cwr();
        }
        if self.tp.ca_state != CaState::Cwr {
            self.try_keep_open();
        }
    }

    /// Linux `tcp_try_keep_open` (without Disorder).
    pub(super) fn try_keep_open(&mut self) {
        if self.tp.ca_state != CaState::Open {
            self.set_state(CaState::Open);
            self.high_seq = self.tp.snd_nxt;
        }
    }

    /// Linux `tcp_any_retrans_done`.
    pub(super) fn any_retrans_done(&self) -> bool {
        self.retrans_out > 0 || self.segs.front().is_some_and(|g| g.flags & F_EVER_RETRANS != 0)
    }

    /// Linux `tcp_current_ssthresh`: the ssthresh an undo may restore.
    pub(super) fn current_ssthresh(&self) -> u32 {
        if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.tp.ssthresh
        } else {
            self.tp.ssthresh.max((self.tp.cwnd >> 1) + (self.tp.cwnd >> 2))
        }
    }

    /// Linux `tcp_init_undo`.
    pub(super) fn init_undo(&mut self) {
        self.undo_marker = Some(self.tp.snd_una);
        self.undo_retrans = if self.retrans_out > 0 { self.retrans_out as i64 } else { -1 };
    }

    /// Linux `tcp_enter_recovery` + `tcp_init_cwnd_reduction`. From CWR (an
    /// ECN reduction already under way) the reduction is not started again
    /// (`tcp_in_cwnd_reduction`); the recovery point still moves to snd_nxt.
    /// A new episode starts its retransmission clock afresh when nothing is
    /// retransmitted (Linux "tcp: fix tcp_enter_recovery() to zero
    /// retrans_stamp when it's safe").
    pub(super) fn enter_recovery(&mut self, ece: bool) {
        self.stats.recoveries += 1;
        self.high_seq = self.tp.snd_nxt;
        self.prior_ssthresh = 0;
        self.init_undo();
        if !self.any_retrans_done() {
            self.retrans_stamp = 0;
        }
        if !matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            if !ece {
                self.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.set_state(CaState::Recovery);
    }

    /// Linux `tcp_init_cwnd_reduction` (without high_seq).
    pub(super) fn init_cwnd_reduction(&mut self) {
        self.tlp_high_seq = 0;
        self.tp.prior_cwnd = self.tp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tp.cwnd_cnt = 0;
        self.tp.ssthresh = self.cc.ssthresh(&self.tp);
    }

    /// Linux `tcp_enter_cwr`: one ECN-triggered reduction, paced by PRR; the
    /// next new segment carries CWR (`tcp_ecn_queue_cwr`). ECN proves
    /// congestion, so the reduction is never undone.
    pub(super) fn enter_cwr(&mut self) {
        self.stats.ecn_reductions += 1;
        self.prior_ssthresh = 0;
        self.undo_marker = None;
        self.high_seq = self.tp.snd_nxt;
        self.init_cwnd_reduction();
        self.queue_cwr = true;
        self.set_state(CaState::Cwr);
    }

    /// Linux `tcp_enter_cwr` called by the CCA (`TcpCc::enter_cwr`: CDG's
    /// backoff): the reduction of ECN's CWR, started only below CWR; the CWR
    /// flag goes out only on an ECN connection (`tcp_ecn_queue_cwr`).
    pub(super) fn enter_cwr_for_cca(&mut self) {
        self.prior_ssthresh = 0;
        if self.tp.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.high_seq = self.tp.snd_nxt;
            self.init_cwnd_reduction();
            self.queue_cwr |= self.cfg.ecn != EcnMode::Off;
            self.set_state(CaState::Cwr);
        }
    }

    /// Linux `tcp_end_cwnd_reduction`: cwnd = ssthresh after CWR, or after a
    /// Recovery that was not undone.
    pub(super) fn end_cwnd_reduction(&mut self) {
        let reduce = self.tp.ca_state == CaState::Cwr || self.undo_marker.is_some();
        if !self.cc_controls && self.tp.ssthresh < INFINITE_SSTHRESH && reduce {
            self.tp.cwnd = self.tp.ssthresh;
            self.tp.cwnd_cnt = 0;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
        self.set_state(CaState::Open);
    }

    /// Proportional rate reduction, RFC 6937 as Linux `tcp_cwnd_reduction`.
    pub(super) fn prr(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.in_flight() as i64;
        let delta = self.tp.ssthresh as i64 - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            // Proportional part: pace reductions over the recovery round.
            let dividend = self.tp.ssthresh as u64 * self.prr_delivered as u64 + self.tp.prior_cwnd as u64 - 1;
            (dividend / self.tp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            // Slow-start reduction bound: grow back towards ssthresh.
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tp.cwnd = (in_flight + sndcnt).max(1) as u32;
    }
}
