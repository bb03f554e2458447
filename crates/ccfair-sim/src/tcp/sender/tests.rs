use super::*;
use crate::cc::reno::Reno;

const RTT: u64 = 100_000_000;

/// An established Reno sender (SYN RTT = 100 ms) and its first flight.
fn established() -> (Sender, Vec<Packet>) {
    established_with(EcnMode::Off)
}

/// Flow 0, MSS 1448 (1500 on the wire), IW10, unpaced, bulk, RTO_MIN_NS.
fn sender_cfg(ecn: EcnMode) -> SenderConfig {
    SenderConfig {
        flow: 0,
        mss_bytes: 1448,
        wire_bytes: 1500,
        init_cwnd_pkts: 10,
        pacing: false,
        stop_ns: None,
        size_bytes: None,
        rate_cap_bps: None,
        ecn,
        rto_min_ns: crate::tcp::rtt::RTO_MIN_NS,
        gso_max_segs: GSO_MAX_SEGS,
        skb_stack_ns: 0,
    }
}

fn established_with(ecn: EcnMode) -> (Sender, Vec<Packet>) {
    handshake(sender_cfg(ecn), Box::new(Reno))
}

/// A sender with `cfg` and `cc` after its SYN-ACK (rwnd 1000, at RTT = 100 ms) and its first flight.
fn handshake(cfg: SenderConfig, cc: Box<dyn CongestionControl>) -> (Sender, Vec<Packet>) {
    let mut s = Sender::new(cfg, cc);
    let mut out = vec![];
    s.start(0, &mut out);
    let mut synack = Packet::new(0, Kind::SynAck, 60);
    synack.set_rwnd(1000);
    synack.ts_ecr = 0;
    out.clear();
    s.on_ack(RTT, &synack, &mut out);
    (s, out)
}

/// No SACK block in [`ack`].
const NO_SACK: u64 = u64::MAX;

/// An ACK of everything below `cum`, without SACK.
fn plain_ack(cum: u64) -> Packet {
    let mut a = Packet::new(0, Kind::Ack, 52);
    a.set_ack(cum);
    a.set_rwnd(1000);
    a
}

/// An ACK of everything below `cum`, SACKing segment `sack` (or none),
/// its SACK option sent through `s`'s channel (as its receiver does).
fn ack_to(s: &Sender, cum: u64, sack: u64) -> Packet {
    let mut o = SackOpt::NONE;
    if sack != NO_SACK {
        o.push(sack, sack + 1);
    }
    ack_with(s, cum, o)
}

/// An ACK of everything below `cum` with SACK option `o`, sent through `s`'s channel.
fn ack_with(s: &Sender, cum: u64, o: SackOpt) -> Packet {
    let mut a = Packet::new(0, Kind::Ack, 52);
    a.set_ack(cum);
    a.attach_sack(o, &s.sack_channel());
    a.set_rwnd(1000);
    a
}

fn seqs(out: &[Packet]) -> Vec<u64> {
    out.iter().map(|p| p.seq).collect()
}

#[test]
fn initial_window_is_ten_segments() {
    let (s, out) = established();
    assert_eq!(seqs(&out), (0..10).collect::<Vec<_>>());
    assert_eq!(s.in_flight(), 10);
    assert_eq!(s.srtt_ns(), RTT);
}

#[test]
fn slow_start_sends_two_per_acked_segment() {
    let (mut s, _) = established();
    let mut out = vec![];
    s.on_ack(2 * RTT, &plain_ack(1), &mut out);
    assert_eq!(s.tp.cwnd, 11);
    assert_eq!(seqs(&out), vec![10, 11]);
}

#[test]
fn three_sacks_trigger_fast_retransmit_and_prr_reaches_ssthresh() {
    // TSO off (one segment per send), as RFC 3042 counts: with TSO, Linux
    // may defer a one-segment allowance (tcp_tso_should_defer, tested below).
    let (mut s, _) = handshake(SenderConfig { gso_max_segs: 1, ..sender_cfg(EcnMode::Off) }, Box::new(Reno));
    let t = 2 * RTT;
    let mut out = vec![];
    // Segment 0 is lost; 1, 2, 3 arrive and are SACKed.
    s.on_ack(t, &ack_to(&s, 0, 1), &mut out);
    s.on_ack(t, &ack_to(&s, 0, 2), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Open, "fewer than DupThresh SACKs: no recovery yet");
    assert_eq!(seqs(&out), vec![10, 11], "limited transmit (RFC 3042): new data per SACK, cwnd unchanged");
    assert_eq!(s.tp.cwnd, 10);
    out.clear();
    s.on_ack(t, &ack_to(&s, 0, 3), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!(s.tp.ssthresh, 5, "Reno halves cwnd 10");
    assert_eq!(out.first().map(|p| p.seq), Some(0), "fast retransmit of the hole first");
    assert_eq!(s.stats.retransmissions, 1);
    // Remaining SACKs: PRR sends about ssthresh/prior_cwnd = 1/2 per delivery.
    out.clear();
    for k in 4..10 {
        s.on_ack(t, &ack_to(&s, 0, k), &mut out);
    }
    // RFC 6937 / tcp_cwnd_reduction, prior_cwnd 10, ssthresh 5: prr_delivered
    // 2..7 allows ceil(5*d/10) sends in total; pipe falls by one per SACK.
    // The two new segments go out at d = 3 and d = 5; at d = 7 pipe == ssthresh,
    // the slow-start bound min(ssthresh - pipe, ..) = 0 applies and PRR
    // lands exactly on ssthresh.
    assert_eq!(seqs(&out), vec![12, 13]);
    assert_eq!(s.in_flight(), 5);
    assert_eq!(s.tp.cwnd, 5);
    // The retransmission is ACKed: everything up to snd_nxt is cumulatively ACKed.
    let nxt = s.tp.snd_nxt;
    s.on_ack(t + RTT, &plain_ack(nxt), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Open);
    // tcp_end_cwnd_reduction sets cwnd = ssthresh = 5; the same ACK then runs
    // congestion avoidance with its 5 newly ACKed segments: 5/5 -> +1.
    assert_eq!(s.tp.ssthresh, 5);
    assert_eq!(s.tp.cwnd, 6);
}

#[test]
fn lost_retransmission_is_detected_by_rack_without_rto() {
    let (mut s, _) = established();
    let t = 2 * RTT;
    let mut out = vec![];
    for k in 1..10 {
        s.on_ack(t, &ack_to(&s, 0, k), &mut out);
    }
    assert_eq!(s.stats.retransmissions, 1);
    // Segments sent after the retransmission are SACKed one RTT later, but not 0:
    // the retransmission was lost too.
    let after: Vec<u64> = out.iter().map(|p| p.seq).filter(|&q| q >= 10).collect();
    assert!(!after.is_empty());
    for &q in &after {
        s.on_ack(t + RTT + 1, &ack_to(&s, 0, q), &mut out);
    }
    assert_eq!(s.stats.retransmissions, 2, "second retransmission of segment 0");
    assert_eq!(s.stats.rto_count, 0);
}

/// When a jiffy timer armed at `now` for `timeout_ns` (in whole jiffies,
/// `usecs_to_jiffies`) fires: the timer wheel's tick after its expiry (these
/// senders' host clock ticks at time 0).
fn jiffy_timer_at(now: u64, timeout_ns: u64) -> u64 {
    crate::cc::timer_list_fires_at_ns(now, usecs_to_jiffies(timeout_ns))
}

/// The first timer of a silent flight is the tail loss probe (PTO = 2 SRTT
/// + 2 ms); fire it (a bulk flow probes with one new segment) and return
/// the RTO deadline armed after it.
fn fire_probe(s: &mut Sender) -> u64 {
    let pto = s.rto_timer.deadline().unwrap();
    // Armed at 100 ms (jiffy 25 at HZ = 250) for usecs_to_jiffies(202 ms) =
    // 51 jiffies: the tick of jiffy 77.
    assert_eq!(pto, 308_000_000, "PTO = 2 SRTT + 2 ms after the first send, at the wheel's next tick");
    assert_eq!(pto, jiffy_timer_at(RTT, 2 * RTT + TLP_EXTRA_NS));
    let mut out = vec![];
    s.on_rto(pto, &mut out);
    assert_eq!((seqs(&out), s.stats.loss_probes, s.stats.rto_count), (vec![10], 1, 0));
    s.rto_timer.deadline().unwrap()
}

#[test]
fn tail_loss_probe_fires_after_two_srtt_and_turns_a_tail_loss_into_fast_recovery() {
    // RFC 8985 7.2-7.3, Linux tcp_schedule_loss_probe / tcp_send_loss_probe.
    let cfg = SenderConfig { size_bytes: Some(10 * 1448), ..sender_cfg(EcnMode::Off) };
    let (mut s, mut out) = handshake(cfg, Box::new(Reno));
    assert_eq!(seqs(&out), (0..10).collect::<Vec<_>>());
    // 0..7 arrive; the tail 8, 9 is lost: nothing more will be ACKed.
    s.on_ack(2 * RTT, &plain_ack(8), &mut out);
    let pto = s.rto_timer.deadline().unwrap();
    assert_eq!(pto, jiffy_timer_at(2 * RTT, 2 * s.srtt_ns() + TLP_EXTRA_NS), "PTO = 2 SRTT (+2 ms), well before the RTO");
    out.clear();
    s.on_rto(pto, &mut out);
    assert_eq!(seqs(&out), vec![9], "no new data: the probe retransmits the highest segment");
    assert_eq!((s.stats.loss_probes, s.stats.rto_count), (1, 0));
    // The probe is SACKed: RACK marks 8 lost and fast recovery repairs it, no RTO.
    out.clear();
    s.on_ack(pto + RTT, &ack_to(&s, 8, 9), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!(seqs(&out), vec![8]);
    assert_eq!(s.stats.rto_count, 0);
}

#[test]
fn three_losses_in_one_window_are_repaired_in_one_rtt_from_one_ack_with_three_blocks() {
    // RFC 2018 section 4 (the receiver repeats the most recent blocks) and
    // Linux tcp_sacktag_write_queue (the sender tags every block): one ACK
    // that reports three holes lets RACK mark all three lost at once.
    use crate::tcp::receiver::Receiver;
    let (mut s, flight) = established();
    let mut r = Receiver::new(0, 1448, false, 200, None, 10).with_sack_channel(s.sack_channel());
    let mut acks = vec![];
    for p in flight.iter().filter(|p| ![2, 5, 8].contains(&p.seq)) {
        r.on_packet(RTT + RTT / 2, p, &mut acks);
    }
    // The ACK path delivers only the flight's last ACK (ACK loss, or
    // several ACKs coalesced): it alone must carry the three holes.
    let (last, lost) = acks.split_last().unwrap();
    let ch = s.sack_channel();
    for a in lost {
        a.take_sack(&ch); // lost on the way: its option is never used
    }
    let sack = *ch.borrow().front().unwrap();
    let blocks: Vec<(u64, u64)> = (0..sack.len()).map(|i| sack.block(i, last.ack())).collect();
    assert_eq!((last.ack(), blocks), (2, vec![(9, 10), (6, 8), (3, 5)]));
    let mut out = vec![];
    s.on_ack(2 * RTT, last, &mut out);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    let rtx: Vec<u64> = out.iter().map(|p| p.seq).filter(|&q| q < 10).collect();
    assert_eq!(rtx, vec![2, 5, 8], "all three holes retransmitted on that ACK");
    // One RTT later the retransmissions have arrived: the window is repaired.
    let mut acks = vec![];
    for p in &out {
        r.on_packet(2 * RTT + RTT / 2, p, &mut acks);
    }
    let mut more = vec![];
    for a in &acks {
        s.on_ack(3 * RTT, a, &mut more);
    }
    assert!(s.tp.snd_una >= 10, "snd_una {} after one RTT", s.tp.snd_una);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!((s.stats.retransmissions, s.stats.rto_count), (3, 0));
}

/// A Reno sender in congestion avoidance (cwnd 10, ssthresh 8) whose
/// first flight's ACKs are all delayed: the probe fires, then the RTO
/// (Loss: ssthresh 5, cwnd 1, segment 0 retransmitted). Returns the time.
fn spurious_rto() -> (Sender, u64) {
    let (mut s, _) = established();
    s.tp.ssthresh = 8;
    let rto = fire_probe(&mut s);
    let mut out = vec![];
    s.on_rto(rto, &mut out);
    assert_eq!((s.tp.ca_state, s.tp.ssthresh, s.tp.cwnd), (CaState::Loss, 5, 1));
    assert_eq!(seqs(&out), vec![0]);
    (s, rto)
}

#[test]
fn spurious_rto_is_undone_by_frto_restoring_cwnd_and_ssthresh() {
    // RFC 5682 section 3.1 (SACK-enhanced F-RTO) as Linux tcp_process_loss:
    // the first ACK after the RTO advances snd_una, so new data goes out
    // instead of retransmissions (step 2b); the next ACK acknowledges data
    // that was never retransmitted: the RTO was spurious (step 3b), and
    // tcp_try_undo_loss restores cwnd = tcp_reno_undo_cwnd = max(cwnd,
    // prior_cwnd) = 10 and ssthresh = prior_ssthresh = 8. No echoed
    // timestamps here (TSecr 0), so only F-RTO can tell.
    let (mut s, rto) = spurious_rto();
    let mut out = vec![];
    s.on_ack(rto + 1_000_000, &plain_ack(1), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Loss);
    assert_eq!(seqs(&out), vec![11, 12], "step 2b: new data, not segments 1, 2");
    out.clear();
    s.on_ack(rto + 2_000_000, &plain_ack(2), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!((s.tp.cwnd, s.tp.ssthresh), (10, 8));
    assert_eq!((s.stats.spurious_rtos, s.stats.undos, s.stats.retransmissions), (1, 1, 1));
    assert_eq!(s.lost_out, 0, "loss marks forgotten (tcp_undo_cwnd_reduction unmark_loss)");
}

#[test]
fn spurious_rto_with_timestamps_is_undone_on_the_first_ack() {
    // Eifel detection (RFC 3522) as Linux tcp_packet_delayed: the ACK
    // echoes the original's timestamp, older than the retransmission, so
    // tcp_try_undo_loss undoes at once (not counted as an F-RTO undo).
    let (mut s, rto) = spurious_rto();
    let mut a = plain_ack(1);
    a.ts_ecr = RTT; // segment 0 was first sent at RTT
    let mut out = vec![];
    s.on_ack(rto + 1_000_000, &a, &mut out);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!((s.tp.cwnd, s.tp.ssthresh), (10, 8));
    assert_eq!((s.stats.spurious_rtos, s.stats.undos), (0, 1));
}

#[test]
fn a_real_loss_after_an_rto_is_not_undone_by_frto() {
    // RFC 5682 step 3a: the new data sent in step 2b is SACKed above a
    // hole, so the loss was real: F-RTO ends, the lost segments are
    // retransmitted and the reduction stays.
    let (mut s, rto) = spurious_rto();
    let mut out = vec![];
    s.on_ack(rto + 1_000_000, &plain_ack(1), &mut out);
    assert_eq!(seqs(&out), vec![11, 12]);
    out.clear();
    s.on_ack(rto + 2_000_000, &ack_to(&s, 1, 11), &mut out);
    assert!(!s.frto);
    assert_eq!((s.tp.ssthresh, s.stats.undos), (5, 0));
    assert!(out.iter().any(|p| p.seq == 1), "conventional recovery retransmits segment 1");
}

#[test]
fn a_lost_retransmission_in_loss_enters_recovery_with_a_new_reduction() {
    // Linux tcp_fastretrans_alert, case TCP_CA_Loss: when RACK finds a
    // retransmission lost (FLAG_LOST_RETRANS) the state machine falls
    // through to tcp_enter_recovery, which reduces ssthresh again from
    // the current cwnd (Loss is not a cwnd reduction state).
    let (mut s, rto) = spurious_rto();
    s.tp.cwnd = 4;
    let mut out = vec![];
    s.try_send(rto, &mut out);
    assert_eq!(seqs(&out), vec![1, 2, 3], "retransmissions after segment 0's");
    // Segment 2's retransmission is SACKed; 0's and 1's, sent before it, are not.
    s.on_ack(rto + RTT, &ack_to(&s, 0, 2), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!((s.tp.ssthresh, s.stats.recoveries), (2, 1), "Reno: max(cwnd 4 / 2, 2)");
    assert_eq!(s.stats.undos, 0);
}

#[test]
fn spurious_fast_retransmit_from_reordering_is_undone_by_dsack() {
    // RFC 2883 section 5 / Linux: segment 0 is only delayed (reordered);
    // three SACKs make RACK mark it lost and fast recovery retransmits it.
    // The receiver then gets the original and the retransmission and
    // D-SACKs the latter; tcp_check_dsack counts it (undo_retrans 1 -> 0)
    // and tcp_try_undo_dsack restores cwnd (max(cwnd, prior_cwnd 10)) and
    // ssthresh (prior_ssthresh 20). TSecr 0: no timestamp undo.
    let (mut s, _) = established();
    s.tp.ssthresh = 20;
    let t = 2 * RTT;
    let mut out = vec![];
    for k in 1..=3 {
        s.on_ack(t, &ack_to(&s, 0, k), &mut out);
    }
    assert_eq!((s.tp.ca_state, s.tp.ssthresh, s.stats.retransmissions), (CaState::Recovery, 5, 1));
    // The delayed original arrives: everything up to 10 is ACKed.
    s.on_ack(t + 1_000_000, &plain_ack(10), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Recovery, "a partial ACK: no evidence yet");
    let mut o = SackOpt::NONE;
    o.push(0, 1); // D-SACK of the retransmission
    let d = ack_with(&s, 10, o);
    s.on_ack(t + RTT / 2, &d, &mut out);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!(s.tp.ssthresh, 20);
    assert!(s.tp.cwnd >= 10, "cwnd {}", s.tp.cwnd);
    assert_eq!((s.stats.undos, s.stats.dsack_segs), (1, 1));
}

#[test]
fn rto_marks_everything_lost_sets_cwnd_one_and_backs_off() {
    let (mut s, _) = established();
    let mut out = vec![];
    // RTO = srtt + max(4 rttvar, 200 ms) = 300 ms = 75 jiffies after the probe
    // (jiffy 77): beyond 62 jiffies the timer wheel's level 1 holds the timer,
    // 8 jiffies (32 ms) a bucket (kernel/time/timer.c, "HZ 250 ... Level 1
    // Granularity 32 ms"): it fires at the bucket after jiffy 152, jiffy 160.
    let rto = fire_probe(&mut s);
    assert_eq!(rto, 640_000_000, "RTO 300 ms after the probe, at the next 32 ms bucket");
    s.on_rto(rto, &mut out);
    assert_eq!(s.tp.ca_state, CaState::Loss);
    assert_eq!(s.tp.cwnd, 1);
    assert_eq!(s.tp.ssthresh, 5);
    assert_eq!(seqs(&out), vec![0], "retransmit the head only");
    // Backoff doubles the RTO: 150 jiffies from jiffy 160 (bucket of jiffy 312),
    // then 300 from jiffy 312 (bucket of jiffy 616).
    let rto2 = s.rto_timer.deadline().unwrap();
    assert_eq!(rto2 - rto, 608_000_000, "backoff doubles the RTO");
    out.clear();
    s.on_rto(rto2, &mut out);
    assert_eq!(s.rto_timer.deadline().unwrap() - rto2, 1_216_000_000);
    assert_eq!(s.stats.rto_count, 2);
    // An ACK of new data resets the backoff and slow start resumes from 1.
    s.on_ack(rto2 + RTT, &plain_ack(1), &mut out);
    assert_eq!(s.tp.cwnd, 2);
    assert_eq!(s.backoff, 0);
}

/// Linux tcp_input.c `tcp_mark_skb_lost` (called for every unSACKed skb by
/// `tcp_timeout_mark_lost`) adds to `tp->lost` when an skb is first marked
/// lost or when its retransmission (TCPCB_LOST | TCPCB_SACKED_RETRANS) is
/// found lost; an skb already marked lost and not resent since adds nothing
/// (5.x `tcp_sum_lost`). A second RTO thus counts only the head's lost
/// retransmission.
#[test]
fn a_second_rto_counts_only_the_lost_retransmission_not_the_segments_already_marked_lost() {
    let (mut s, _) = established();
    let mut out = vec![];
    let rto = fire_probe(&mut s);
    let outstanding = s.tp.snd_nxt - s.tp.snd_una;
    s.on_rto(rto, &mut out);
    assert_eq!((s.stats.losses_detected, s.tp.lost), (outstanding, outstanding), "first RTO: every outstanding segment");
    assert_eq!(seqs(&out), vec![0], "the head is retransmitted");
    let rto2 = s.rto_timer.deadline().unwrap();
    s.on_rto(rto2, &mut out);
    assert_eq!((s.stats.losses_detected, s.tp.lost), (outstanding + 1, outstanding + 1), "second RTO: the head's retransmission only");
}

#[test]
fn tso_bursts_follow_tcp_tso_autosize_at_three_pacing_rates() {
    // tcp_tso_autosize: bytes = pacing_rate >> sk_pacing_shift (10: ~1 ms),
    // segs = max(bytes / mss, min_tso_segs = 2), at most a 64 KB GSO packet.
    for (rate_bytes_per_s, segs) in [
        (125_000u64, 2usize), // 1 Mbit/s: 122 B per ms -> the 2-segment minimum
        (12_500_000, 8),      // 100 Mbit/s: 12207 B per ms -> 8 x 1448 B
        (1_250_000_000, 45),  // 10 Gbit/s: capped at (65536 - 320) / 1448 = 45
    ] {
        let (mut s, _) = established();
        s.tp.pacing = true;
        s.tp.pacing_rate_bytes_per_s = rate_bytes_per_s;
        s.tp.cwnd = 1000;
        s.next_send_ns = RTT + 1; // the burst leaves at its earliest departure: no credit
        let mut out = vec![];
        s.on_pace_timer(RTT + 1, &mut out);
        assert_eq!(out.len(), segs, "burst at {rate_bytes_per_s} B/s");
        // The next burst waits for the pacing slot of the whole burst.
        let gap = s.pace_timer.deadline().unwrap() - (RTT + 1);
        assert_eq!(gap, segs as u64 * (1448 * 1_000_000_000 / rate_bytes_per_s));
    }
}

#[test]
fn a_paced_flow_sends_its_first_ten_data_segments_unpaced_then_charges_the_skb_that_reaches_ten() {
    // Linux tcp_output.c `tcp_update_skb_after_send`: tcp_wstamp_ns advances by
    // the skb's time at sk_pacing_rate only when `tp->data_segs_out >= 10`
    // (this skb counted; "original sch_fq does not pace first 10 MSS"), so the
    // initial window leaves back to back, as 2-segment skbs here (1 ms at the
    // pacing rate is < 2 MSS), and the skb that reaches 10 is charged whole.
    let (mut s, first) = handshake(SenderConfig { pacing: true, ..sender_cfg(EcnMode::Off) }, Box::new(Reno));
    assert_eq!(first.len(), 10, "the initial window leaves at once");
    assert!(first.iter().all(|p| p.ts_val == RTT));
    assert_eq!(s.tso_segs(), 2);
    let gap = 1448 * 1_000_000_000 / s.tp.pacing_rate_bytes_per_s;
    assert_eq!(s.next_send_ns, RTT + 2 * gap, "the 5th skb (segments 9-10) is charged for both");
    // With room in cwnd, the next skb waits for that slot and is charged whole.
    s.tp.cwnd = 1000;
    let mut out = vec![];
    s.on_pace_timer(RTT, &mut out);
    assert!(out.is_empty(), "nothing before the pacing slot");
    s.on_pace_timer(RTT + 2 * gap, &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(s.next_send_ns, RTT + 4 * gap);
}

#[test]
fn a_paced_skb_sent_late_takes_its_lateness_off_its_pacing_time_up_to_half() {
    // Linux tcp_output.c: `__tcp_transmit_skb` sets tcp_wstamp_ns = max(tcp_wstamp_ns,
    // now) and `tcp_update_skb_after_send` takes credit = that move ("OS jitter") off
    // the skb's time at the pacing rate, at most half of it: len_ns -= min(len_ns / 2,
    // credit). A 2-segment skb at 1 Mbit/s is 2 x 11.584 ms of pacing.
    let rate_bytes_per_s = 125_000u64;
    let seg_ns = 1448 * 1_000_000_000 / rate_bytes_per_s;
    for (late_ns, charged_ns) in [(0, 2 * seg_ns), (3_000_000, 2 * seg_ns - 3_000_000), (50_000_000, seg_ns)] {
        let (mut s, _) = established();
        s.tp.pacing = true;
        s.tp.pacing_rate_bytes_per_s = rate_bytes_per_s;
        s.tp.cwnd = 1000;
        let slot = RTT + 1;
        s.next_send_ns = slot;
        let mut out = vec![];
        s.on_pace_timer(slot + late_ns, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(s.next_send_ns, slot + late_ns + charged_ns, "sent {late_ns} ns late");
    }
}

#[test]
fn bbr_sends_one_segment_skbs_below_1_2_mbit_per_s_of_pacing_and_two_above() {
    // Linux tcp_output.c `tcp_tso_segs`: min_tso = ca_ops->min_tso_segs(sk) if
    // the CCA has it; tcp_bbr.c `bbr_min_tso_segs`: 1 while sk_pacing_rate <
    // bbr_min_tso_rate (1.2 Mbit/s) / 8, else 2. At these rates 1 ms of data
    // is < 1 MSS, so the minimum decides the skb. Reno keeps the sysctl's 2.
    for (rate_bytes_per_s, bbr_segs) in [(125_000u64, 1usize), (149_999, 1), (150_000, 2), (200_000, 2)] {
        let (mut s, _) = handshake(sender_cfg(EcnMode::Off), Box::new(crate::cc::bbr::Bbr::new(1)));
        s.tp.pacing_rate_bytes_per_s = rate_bytes_per_s;
        s.tp.cwnd = 1000;
        s.next_send_ns = 0; // the initial window's pacing slot is over
        let mut out = vec![];
        s.on_pace_timer(RTT + 1, &mut out);
        assert_eq!(out.len(), bbr_segs, "BBR at {rate_bytes_per_s} B/s");
        let (mut r, _) = established();
        r.tp.pacing = true;
        r.tp.pacing_rate_bytes_per_s = rate_bytes_per_s;
        r.tp.cwnd = 1000;
        out.clear();
        r.on_pace_timer(RTT + 1, &mut out);
        assert_eq!(out.len(), 2, "Reno at {rate_bytes_per_s} B/s");
    }
}

/// An unpaced Reno sender with cwnd = ssthresh = `cwnd` and its 1000-segment
/// receive window filled at RTT; then ACKs of 2 segments each, `gap_ns`
/// apart from 2 RTT. Returns the segments each ACK released.
fn ack_clocked_bursts(gso_max_segs: u32, cwnd: u32, gap_ns: u64, acks: u64) -> Vec<usize> {
    ack_clocked_sends(gso_max_segs, cwnd, gap_ns, acks).iter().map(Vec::len).collect()
}

/// `ack_clocked_bursts`'s sends after the first ACK that sent anything,
/// each as its segments' `Packet::skb_next` marks.
fn ack_clocked_skb_marks(gso_max_segs: u32, cwnd: u32, gap_ns: u64, acks: u64) -> Vec<Vec<bool>> {
    ack_clocked_sends(gso_max_segs, cwnd, gap_ns, acks).into_iter().skip(1).filter(|b| !b.is_empty()).collect()
}

/// `ack_clocked_bursts`'s sends, each as its segments' `Packet::skb_next` marks.
fn ack_clocked_sends(gso_max_segs: u32, cwnd: u32, gap_ns: u64, acks: u64) -> Vec<Vec<bool>> {
    let (mut s, _) = handshake(SenderConfig { gso_max_segs, ..sender_cfg(EcnMode::Off) }, Box::new(Reno));
    s.tp.cwnd = cwnd;
    s.tp.ssthresh = cwnd;
    let mut out = vec![];
    s.on_pace_timer(RTT, &mut out);
    assert_eq!(s.tp.snd_nxt, 1000.min(cwnd as u64), "the first window leaves at once");
    (0..acks)
        .map(|k| {
            out.clear();
            s.on_ack(2 * RTT + k * gap_ns, &plain_ack(2 * (k + 1)), &mut out);
            out.iter().map(Packet::skb_next).collect()
        })
        .collect()
}

#[test]
fn unpaced_tso_bursts_follow_tcp_tso_autosize_of_tcp_update_pacing_rate() {
    // Linux sets sk_pacing_rate for every flow (tcp_update_pacing_rate:
    // 120 % of cwnd x mss / srtt in congestion avoidance) and sizes TSO
    // skbs from it (tcp_tso_autosize: rate >> 10, >= 2 segments, <= 64 KB).
    // An unpaced flow then defers small allowances (tcp_tso_should_defer:
    // the last send was < 1 ms ago, the head's ACK is due, less than a
    // full skb and less than cwnd/3 allowed) and sends full skbs. srtt =
    // 100 ms, ACKs of 2 segments every 10 us (fewer than cwnd / 2 ACKs):
    for (cwnd, segs, acks) in [
        (100u32, 2usize, 45u64), // 1.74 MB/s: 1697 B per ms -> the 2-segment minimum
        (700, 8, 45),            // 12.2 MB/s: 11878 B per ms -> 8 x 1448 B
        (4000, 45, 150),         // 69.5 MB/s: capped at (65536 - 320) / 1448 = 45
    ] {
        let bursts = ack_clocked_bursts(GSO_MAX_SEGS, cwnd, 10_000, acks);
        assert_eq!(bursts[0], 2, "the first ACK after 100 ms of silence sends at once");
        let later: Vec<usize> = bursts[1..].iter().copied().filter(|&b| b > 0).collect();
        assert!(later.len() >= 3 && later.iter().all(|&b| b == segs), "cwnd {cwnd}: bursts {later:?}, want {segs}");
    }
    // TSO/GSO off (gso_max_segs 1): each ACK's allowance leaves at once.
    assert!(ack_clocked_bursts(1, 4000, 10_000, 50).iter().all(|&b| b == 2));
}

fn pushed_seqs(out: &[Packet]) -> Vec<u64> {
    out.iter().filter(|p| p.psh()).map(|p| p.seq).collect()
}

#[test]
fn psh_marks_the_last_segment_of_each_skb_of_more_than_one_segment() {
    // Linux __tcp_transmit_skb: "Force a PSH flag on all (GSO) packets ...
    // we do not force the PSH flag for non GSO packets": tcp_skb_pcount(skb)
    // > 1 sets PSH, which tcp_gso_segment keeps on the last segment only.
    // The initial window goes as skbs of tcp_tso_autosize's 2-segment minimum.
    let (mut s, first) = established();
    assert_eq!(pushed_seqs(&first), vec![1, 3, 5, 7, 9]);
    // Congestion avoidance: an ACK of 2 releases one 2-segment skb; an ACK
    // of 1 (cwnd unchanged) a one-segment skb, which carries no PSH.
    s.tp.ssthresh = 10;
    let mut out = vec![];
    s.on_ack(2 * RTT, &plain_ack(2), &mut out);
    assert_eq!((seqs(&out), pushed_seqs(&out)), (vec![10, 11], vec![11]));
    out.clear();
    s.on_ack(2 * RTT + 2_000_000, &plain_ack(3), &mut out); // > 1 ms: tcp_tso_should_defer sends
    assert_eq!((seqs(&out), pushed_seqs(&out)), (vec![12], vec![]));
    // A retransmission is a one-segment skb of its own.
    out.clear();
    s.on_rto(2 * RTT + 2 * RTT, &mut out);
    assert!(!out.is_empty() && out.iter().all(|p| !p.psh()));
    // TSO/GSO off: every skb is one segment, none carries PSH.
    let (_, first) = handshake(SenderConfig { gso_max_segs: 1, ..sender_cfg(EcnMode::Off) }, Box::new(Reno));
    assert_eq!((first.len(), pushed_seqs(&first)), (10, vec![]));
}

fn skb_next_seqs(out: &[Packet]) -> Vec<u64> {
    out.iter().filter(|p| p.skb_next()).map(|p| p.seq).collect()
}

#[test]
fn an_skbs_segments_after_its_first_are_marked_to_follow_it_out_of_the_host() {
    // With offloads off, net/core/dev.c validate_xmit_skb splits a GSO skb
    // (skb_gso_segment) just before the device, and dev_hard_start_xmit
    // hands its frames to the driver one after the other: every segment of
    // an skb after its first follows the one before it (lines.rs). The
    // initial window goes as skbs of tcp_tso_autosize's 2-segment minimum.
    let (mut s, first) = established();
    assert_eq!(skb_next_seqs(&first), vec![1, 3, 5, 7, 9]);
    // An ACK of 2 releases one 2-segment skb, an ACK of 1 a one-segment skb.
    s.tp.ssthresh = 10;
    let mut out = vec![];
    s.on_ack(2 * RTT, &plain_ack(2), &mut out);
    assert_eq!((seqs(&out), skb_next_seqs(&out)), (vec![10, 11], vec![11]));
    out.clear();
    s.on_ack(2 * RTT + 2_000_000, &plain_ack(3), &mut out);
    assert_eq!((seqs(&out), skb_next_seqs(&out)), (vec![12], vec![]));
    // A retransmission is a one-segment skb of its own.
    out.clear();
    s.on_rto(2 * RTT + 2 * RTT, &mut out);
    assert!(!out.is_empty() && out.iter().all(|p| !p.skb_next()));
    // TSO/GSO off: every segment is an skb.
    let (_, first) = handshake(SenderConfig { gso_max_segs: 1, ..sender_cfg(EcnMode::Off) }, Box::new(Reno));
    assert_eq!((first.len(), skb_next_seqs(&first)), (10, vec![]));
    // Larger skbs: cwnd 700 at srtt 100 ms gives 8-segment skbs
    // (`unpaced_tso_bursts_follow_tcp_tso_autosize_of_tcp_update_pacing_rate`):
    // one unmarked segment per skb.
    let bursts = ack_clocked_skb_marks(GSO_MAX_SEGS, 700, 10_000, 45);
    assert!(bursts.len() >= 3 && bursts.iter().all(|b| b.len() == 8 && b.iter().skip(1).all(|&m| m) && !b[0]), "{bursts:?}");
}

#[test]
fn unpaced_tso_defers_at_most_one_millisecond_after_the_last_send() {
    // tcp_tso_should_defer: "allowing defer only if the last write was
    // recent (1 ms)". ACKs every 100 us: 2 segments go at the first ACK,
    // then nothing until the ACK more than 1 ms after that send (the
    // 11th), which sends the 22 segments allowed by then, and so on.
    let bursts = ack_clocked_bursts(GSO_MAX_SEGS, 4000, 100_000, 34);
    let sends: Vec<(usize, usize)> = bursts.iter().copied().enumerate().filter(|&(_, b)| b > 0).collect();
    assert_eq!(sends, vec![(0, 2), (11, 22), (22, 22), (33, 22)]);
}

#[test]
fn back_to_back_rto_keeps_the_first_rtos_ssthresh() {
    // Linux tcp_enter_loss sets ssthresh in Loss only while icsk_retransmits == 0.
    let (mut s, _) = established();
    let mut out = vec![];
    let rto = fire_probe(&mut s);
    s.on_rto(rto, &mut out);
    assert_eq!(s.tp.ssthresh, 5, "first RTO: ssthresh = 10 / 2");
    let rto2 = s.rto_timer.deadline().unwrap();
    s.on_rto(rto2, &mut out);
    assert_eq!((s.tp.ssthresh, s.tp.cwnd), (5, 1), "second RTO of the episode keeps ssthresh 5 (was cut to 2)");
    let rto3 = s.rto_timer.deadline().unwrap();
    s.on_rto(rto3, &mut out);
    assert_eq!(s.tp.ssthresh, 5);
    // After snd_una advances (retransmits cleared) a new RTO inside the
    // same Loss episode reduces again: ssthresh = max(cwnd / 2, 2).
    s.on_ack(rto3 + RTT, &plain_ack(1), &mut out);
    assert_eq!(s.tp.cwnd, 2);
    let rto4 = s.rto_timer.deadline().unwrap();
    s.on_rto(rto4, &mut out);
    assert_eq!(s.tp.ssthresh, 2);
}

#[test]
fn receiver_window_limits_new_data() {
    let (mut s, _) = established();
    let mut out = vec![];
    let mut a = plain_ack(10);
    a.set_rwnd(12);
    s.on_ack(2 * RTT, &a, &mut out);
    assert_eq!(s.tp.snd_nxt, 22, "never beyond snd_una + rwnd");
}

#[test]
fn delivery_rate_sample_matches_ack_clock() {
    // One segment acked per 1 ms for a 10-packet window: delivered/interval = 1 pkt/ms.
    // (The sample is kept for a CCA that reads it, one with `cong_control`: BBR.)
    let (mut s, _) = handshake(sender_cfg(EcnMode::Off), Box::new(crate::cc::bbr::Bbr::new(1)));
    let mut out = vec![];
    for k in 1..=10u64 {
        s.on_ack(2 * RTT + k * 1_000_000, &plain_ack(k), &mut out);
    }
    // tcp_rate.c: the last sample covers the 10 packets delivered since the
    // flight was sent (delivered_mstamp = connection start, at the SYN-ACK):
    // interval = max(send phase 0, ack phase RTT + 10 ms).
    assert_eq!(s.tp.delivered, 10);
    assert_eq!(s.rate_delivered, 10);
    assert_eq!(s.rate_interval_ns, (RTT + 10_000_000) as i64);
}

fn ece_ack(cum: u64) -> Packet {
    let mut a = plain_ack(cum);
    a.set_ece(true);
    a
}

#[test]
fn classic_ecn_reduces_once_per_window_and_signals_cwr() {
    let (mut s, first) = established_with(EcnMode::Classic);
    assert!(first.iter().all(|p| p.ecn == Ecn::Ect0 && !p.cwr()), "new data is ECT(0)");
    let mut out = vec![];
    s.on_ack(2 * RTT, &ece_ack(1), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Cwr);
    assert_eq!((s.stats.ecn_reductions, s.tp.ssthresh), (1, 5), "Reno's ssthresh: half of 10");
    assert_eq!(s.tp.delivered_ce, 1);
    // PRR (prior_cwnd 10, ssthresh 5): one new segment, and it carries CWR.
    assert_eq!(seqs(&out), vec![10]);
    assert!(out[0].cwr());
    // More ECE within the same window: no second reduction; CWR only once.
    for k in 2..=10 {
        s.on_ack(2 * RTT + k, &ece_ack(k), &mut out);
    }
    assert_eq!(s.stats.ecn_reductions, 1);
    assert_eq!(s.tp.delivered_ce, 10);
    assert_eq!(out.iter().filter(|p| p.cwr()).count(), 1);
    assert_eq!(s.tp.ca_state, CaState::Cwr, "held until data above high_seq is ACKed");
    assert_eq!(s.tp.cwnd, 5, "PRR brought cwnd down to ssthresh");
    // The CWR segment (10) is ACKed without ECE: CWR ends at ssthresh.
    s.on_ack(3 * RTT, &plain_ack(11), &mut out);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!(s.stats.recoveries, 0);
    // A new ECE in the next window: a second reduction.
    let before = s.tp.cwnd;
    s.on_ack(3 * RTT + 1, &ece_ack(12), &mut out);
    assert_eq!(s.stats.ecn_reductions, 2);
    assert_eq!(s.tp.ssthresh, (before / 2).max(2));
}

#[test]
fn rate_sample_counts_ce_over_its_interval_and_flags_this_ack() {
    // google/bbr v2alpha tcp_rate.c: rs->delivered_ce = tp->delivered_ce -
    // (tp->delivered_ce when the sampled packet was sent), over the same
    // interval as rs->delivered; rs->is_ece is this ACK's FLAG_ECE.
    let rec = Recorder::default();
    let (mut s, mut out) = handshake(sender_cfg(EcnMode::Scalable), Box::new(rec.clone()));
    // First flight (0..10): odd segments' ACKs carry ECE, one ACK per segment.
    for k in 1..=10u64 {
        let a = if k % 2 == 0 { ece_ack(k) } else { plain_ack(k) };
        s.on_ack(2 * RTT + k * 1_000_000, &a, &mut out);
    }
    let rs = *rec.0.lock().unwrap().last().unwrap();
    assert_eq!((rs.delivered, rs.delivered_ce, rs.is_ece), (10, 5, true));
    assert_eq!(s.tp.delivered_ce, 5);
    // An ACK without ECE: is_ece false, but the sample still spans the CE
    // deliveries since its packet was sent (segment 10 was sent after the
    // ACK of segment 0, when delivered_ce was 0).
    s.on_ack(3 * RTT, &plain_ack(11), &mut out);
    let rs = *rec.0.lock().unwrap().last().unwrap();
    assert!(!rs.is_ece);
    assert_eq!((rs.delivered, rs.delivered_ce), (10, 5));
}

#[test]
fn ecn_codepoints_of_retransmissions_and_ece_ignored_when_off() {
    // Classic: a retransmission is Not-ECT (RFC 3168 6.1.5, Linux tcp_ecn_send).
    let (mut s, _) = established_with(EcnMode::Classic);
    let mut out = vec![];
    for k in 1..=3 {
        s.on_ack(2 * RTT, &ack_to(&s, 0, k), &mut out);
    }
    let rtx: Vec<&Packet> = out.iter().filter(|p| p.seq == 0).collect();
    assert_eq!(rtx.len(), 1);
    assert_eq!(rtx[0].ecn, Ecn::NotEct);
    // Scalable: every data segment is ECT(1), retransmissions included.
    let (mut s, first) = established_with(EcnMode::Scalable);
    assert!(first.iter().all(|p| p.ecn == Ecn::Ect1));
    out.clear();
    for k in 1..=3 {
        s.on_ack(2 * RTT, &ack_to(&s, 0, k), &mut out);
    }
    assert!(out.iter().all(|p| p.ecn == Ecn::Ect1));
    // Off: Not-ECT, and a stray ECE changes nothing.
    let (mut s, first) = established_with(EcnMode::Off);
    assert!(first.iter().all(|p| p.ecn == Ecn::NotEct));
    s.on_ack(2 * RTT, &ece_ack(1), &mut out);
    assert_eq!((s.tp.ca_state, s.tp.delivered_ce, s.stats.ecn_reductions), (CaState::Open, 0, 0));
}

/// A CCA that only records the rate samples the sender gives it.
#[derive(Clone, Default)]
struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<RateSample>>>);

impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        (tp.cwnd / 2).max(2)
    }
    fn cong_control(&mut self, _tp: &mut TcpCc, rs: &RateSample) -> bool {
        self.0.lock().unwrap().push(*rs);
        false
    }
}

#[test]
fn rate_sample_carries_tx_in_flight_and_losses_since_send() {
    // BBRv2's tcp_rate fields: tx.in_flight when the sampled segment was
    // sent, and tp->lost now minus tp->lost then.
    let cfg = sender_cfg(EcnMode::Off);
    let rec = Recorder::default();
    let mut s = Sender::new(cfg, Box::new(rec.clone()));
    let mut out = vec![];
    s.start(0, &mut out);
    let mut synack = Packet::new(0, Kind::SynAck, 60);
    synack.set_rwnd(1000);
    s.on_ack(RTT, &synack, &mut out);
    // Segment 0 is lost; SACKs of 1, 2, 3: the third marks 0 lost (RACK).
    for k in 1..=3 {
        s.on_ack(2 * RTT, &ack_to(&s, 0, k), &mut out);
    }
    let last = *rec.0.lock().unwrap().last().unwrap();
    assert_eq!(s.tp.lost, 1);
    assert_eq!(last.tx_in_flight, 4, "segment 3 left with segments 0-2 in flight");
    assert_eq!(last.lost, 1, "one segment marked lost since segment 3 was sent");
    assert_eq!(last.losses, 1);
}

/// A CCA that records the `pkts_acked` samples the sender gives it.
#[derive(Clone, Default)]
struct AckedRecorder(std::sync::Arc<std::sync::Mutex<Vec<(u32, bool)>>>);

impl CongestionControl for AckedRecorder {
    fn name(&self) -> &'static str {
        "acked-recorder"
    }
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        (tp.cwnd / 2).max(2)
    }
    fn pkts_acked(&mut self, _tp: &mut TcpCc, sample: &AckSample) {
        self.0.lock().unwrap().push((sample.pkts_acked, sample.rtt_ns >= 0));
    }
}

#[test]
fn pkts_acked_counts_what_the_cumulative_ack_removes_on_every_ack_as_tcp_clean_rtx_queue() {
    // Linux tcp_clean_rtx_queue calls pkts_acked on every ACK with the
    // packets the cumulative ACK takes off the retransmission queue, SACKed
    // earlier or not, and ca_rtt_us (the newest (S)ACKed packet's RTT).
    let rec = AckedRecorder::default();
    let (mut s, _) = handshake(sender_cfg(EcnMode::Off), Box::new(rec.clone()));
    let mut out = vec![];
    s.on_ack(2 * RTT, &plain_ack(2), &mut out); // 0-1 ACKed
    s.on_ack(2 * RTT, &ack_to(&s, 2, 3), &mut out); // 3 SACKed: nothing removed
    s.on_ack(2 * RTT, &ack_to(&s, 2, 3), &mut out); // a repeat: nothing new
    s.on_ack(2 * RTT, &plain_ack(5), &mut out); // 2-4 removed, 3 SACKed before
    assert_eq!(*rec.0.lock().unwrap(), vec![(2, true), (0, true), (0, false), (3, true)]);
}

#[test]
fn tso_segs_is_one_ms_of_pacing_rate_clamped_to_min_segs_and_a_64k_gso_packet() {
    // Linux tcp_tso_autosize: clamp(rate >> sk_pacing_shift / mss,
    // MIN_TSO_SEGS, GSO_MAX_BYTES / mss), then min gso_max_segs; also for
    // an MSS so large that a 64 KB GSO packet holds fewer than MIN_TSO_SEGS.
    for (mss, gso_max_segs) in [536u32, 1448, 9000, 40_000, 65_000].into_iter().flat_map(|m| [(m, GSO_MAX_SEGS), (m, 1), (m, 4)]) {
        let mut cfg = sender_cfg(EcnMode::Off);
        cfg.mss_bytes = mss;
        cfg.gso_max_segs = gso_max_segs;
        let mut s = Sender::new(cfg, Box::new(Reno));
        for rate in [0u64, 1_000, 150_000, 1_250_000, 1_500_000, 3_000_000, 12_500_000, 125_000_000, 1_250_000_000, u64::MAX] {
            s.tp.pacing_rate_bytes_per_s = rate;
            let m = mss as u64;
            let want = ((rate >> PACING_SHIFT) / m).max(MIN_TSO_SEGS).min((GSO_MAX_BYTES / m).max(1));
            assert_eq!(s.tso_segs() as u64, want.min(gso_max_segs as u64), "mss {mss} rate {rate} gso_max_segs {gso_max_segs}");
        }
    }
}

#[test]
fn tsorted_keeps_only_outstanding_transmissions_across_cumulative_acks() {
    // Linux unlinks an skb from tsorted_sent_queue when a cumulative ACK
    // frees it (tcp_rtx_queue_unlink_and_free): with no loss, the list is the
    // segments in flight, not every segment sent since the last RACK walk.
    let (mut s, _) = established();
    let mut out = vec![];
    for k in 1..=200u64 {
        s.on_ack(RTT + k * 1_000_000, &plain_ack(k), &mut out);
        assert_eq!(s.tsorted.len(), s.packets_out as usize, "after ACK {k}");
        assert_eq!(s.tsorted.front().map(|(seq, _)| seq), Some(s.tp.snd_una), "after ACK {k}");
        // New data in sequence order: one run.
        assert_eq!(s.tsorted.entries(), 1, "after ACK {k}");
    }
}

#[test]
fn plain_cumulative_acks_take_the_general_loops_results_in_one_pass() {
    // clean_plain_acked against the segment-by-segment loop (Linux
    // tcp_clean_rtx_queue): two senders get the same ACKs (stretch ACKs of
    // 1-5 segments, duplicate ACKs, SACK blocks, so losses, retransmissions
    // and RTOs too); one frees every segment through the general loop. Same
    // rate samples, RACK state, RTT, window and packets after every ACK.
    let run = |general: bool| {
        let rec = Recorder::default();
        let (mut s, mut out) = handshake(sender_cfg(EcnMode::Off), Box::new(rec.clone()));
        s.test_general_ack_path = general;
        let mut trace = vec![format!("{:?}", seqs(&out))];
        let mut walk = AckWalk::new(0x2545_f491_4f6c_dd1d);
        for _ in 0..3000 {
            walk.step(&mut s, &mut out);
            trace.push(format!(
                "{:?} {:?} {} {} {} {} {} {} {}",
                seqs(&out),
                rec.0.lock().unwrap().last(),
                s.rack_xmit_ns,
                s.rack_end_seq,
                s.rack_rtt_ns,
                s.rtt.srtt_ns,
                s.tp.cwnd,
                s.in_flight(),
                s.stats.losses_detected
            ));
        }
        trace
    };
    let (fast, general) = (run(false), run(true));
    for (i, (f, g)) in fast.iter().zip(&general).enumerate() {
        assert_eq!(f, g, "after step {i}");
    }
}

#[test]
fn an_unpaced_skb_sent_in_one_go_is_its_segments_sent_one_by_one() {
    // transmit_new_run against send's loop, one segment per pass: two
    // senders get the same ACKs (stretch and duplicate ACKs, SACK blocks,
    // so losses, retransmissions and RTOs; ECE, so CWR on new data; a
    // receive window that often limits the skb); one sends every segment
    // through the loop. Same packets (flags included), scoreboard, send
    // order list, counters and timer after every step.
    let run = |ecn: EcnMode, general: bool| {
        let (mut s, mut out) = handshake(sender_cfg(ecn), Box::new(Reno));
        s.test_general_send_path = general;
        let mut trace = vec![format!("{out:?}")];
        let (mut x, mut now, mut cum, mut later_segs) = (0x5851_f42d_4c95_7f2d_u64, 2 * RTT, 0, 0);
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            now += 1 + x % 3_000_000;
            cum = (cum + x % 6).min(s.tp.snd_nxt);
            out.clear();
            if x % 97 == 0 {
                s.on_rto(now, &mut out);
            } else {
                let sack = if x % 5 == 0 && cum + 3 < s.tp.snd_nxt { cum + 2 + x % 3 } else { NO_SACK };
                let mut a = ack_to(&s, cum, sack);
                a.set_ece(x % 11 == 0);
                a.set_rwnd(8 + (x % 40) as u32);
                s.on_ack(now, &a, &mut out);
            }
            cum = cum.max(s.tp.snd_una);
            later_segs += out.iter().filter(|p| p.skb_next()).count();
            trace.push(format!(
                "{out:?} {:?} {:?} {:?} {} {} {} {:?}",
                s.segs.iter().collect::<Vec<_>>(),
                s.tsorted,
                s.stats,
                s.prr_out,
                s.tp.in_flight,
                s.last_xmit_ns,
                s.rto_timer.deadline()
            ));
        }
        (trace, later_segs)
    };
    for ecn in [EcnMode::Off, EcnMode::Classic, EcnMode::Scalable] {
        let ((fast, later_segs), (general, _)) = (run(ecn, false), run(ecn, true));
        for (i, (f, g)) in fast.iter().zip(&general).enumerate() {
            assert_eq!(f, g, "{ecn:?}: after step {i}");
        }
        assert!(later_segs > 300, "{ecn:?}: skbs of several segments sent ({later_segs} segments after an skb's first)");
    }
}

/// A random walk of ACKs and RTOs (xorshift stream): time moves on by up to
/// 3 ms a step, the cumulative ACK by up to five segments, about one ACK in
/// five carries a SACK block two to four segments above it, about one step
/// in 100 is an RTO.
struct AckWalk {
    x: u64,
    now: TimeNs,
    cum: u64,
}

impl AckWalk {
    fn new(seed: u64) -> AckWalk {
        AckWalk { x: seed, now: 2 * RTT, cum: 0 }
    }

    /// One step: `s` gets the ACK (or RTO), `out` holds what it sent.
    fn step(&mut self, s: &mut Sender, out: &mut Vec<Packet>) {
        let x = &mut self.x;
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        self.now += 1 + *x % 3_000_000;
        self.cum = (self.cum + *x % 6).min(s.tp.snd_nxt);
        let sack = if *x % 5 == 0 && self.cum + 3 < s.tp.snd_nxt { self.cum + 2 + *x % 3 } else { NO_SACK };
        out.clear();
        if *x % 97 == 0 {
            s.on_rto(self.now, out);
        } else {
            s.on_ack(self.now, &ack_to(s, self.cum, sack), out);
        }
        self.cum = self.cum.max(s.tp.snd_una);
    }
}

#[test]
fn in_flight_is_out_minus_sacked_and_lost_plus_retrans_after_every_ack_and_rto() {
    // `pipe` is maintained where the counters change; it must stay equal to
    // Linux's tcp_packets_in_flight formula through SACKs, losses,
    // retransmissions, RTOs and undos (every step checked, not only at
    // calls of in_flight()).
    let (mut s, mut out) = established();
    let mut walk = AckWalk::new(0x9e37_79b9_7f4a_7c15);
    let mut lossy_steps = 0;
    for step in 0..5000 {
        walk.step(&mut s, &mut out);
        assert_eq!(s.pipe, s.in_flight_from_counters(), "after step {step}");
        lossy_steps += (s.lost_out > 0 || s.retrans_out > 0) as u32;
    }
    assert!(lossy_steps > 100, "the run exercises losses and retransmissions ({lossy_steps} steps)");
}

/// The first flight (0..9, sent at RTT) with 1..3 SACKed at 2 RTT: RACK
/// marks 0 lost and retransmits it then (SACK RTT 100 ms: srtt stays 100 ms).
fn retransmitted_head() -> Sender {
    let (mut s, _) = established();
    let mut o = SackOpt::NONE;
    o.push(1, 4);
    let mut a = ack_with(&s, 0, o);
    a.ts_ecr = RTT;
    let mut out = vec![];
    s.on_ack(2 * RTT, &a, &mut out);
    assert!(out.iter().any(|p| p.seq == 0), "segment 0 retransmitted");
    assert_eq!(s.rtt.srtt_ns, RTT);
    s
}

#[test]
fn an_ack_of_retransmitted_data_takes_its_rtt_from_the_echoed_timestamp_in_whole_ms() {
    // tcp_ack_update_rtt: no send-time RTT (Karn), so now - TSecr in whole
    // 1 ms ticks (tcp_rtt_tsopt_us): 337.4 ms - 200 ms gives 137 ms.
    let mut s = retransmitted_head();
    let mut a = plain_ack(4);
    a.ts_ecr = 2 * RTT; // the retransmission's TSval
    s.on_ack(2 * RTT + 137_400_000, &a, &mut vec![]);
    assert_eq!(s.rtt.srtt_ns, (7 * RTT + 137_000_000) / 8);
    // Without a timestamp the ACK gives no RTT at all.
    let mut s = retransmitted_head();
    s.on_ack(2 * RTT + 137_400_000, &plain_ack(4), &mut vec![]);
    assert_eq!(s.rtt.srtt_ns, RTT);
}

#[test]
fn karn_drops_the_send_time_rtts_of_an_ack_that_frees_a_retransmitted_segment() {
    // tcp_clean_rtx_queue: FLAG_RETRANS_DATA_ACKED voids seq_rtt_us and
    // ca_rtt_us even for the never-retransmitted segments 4 and 5 it frees.
    let mut s = retransmitted_head();
    s.on_ack(2 * RTT + 50_000_000, &plain_ack(6), &mut vec![]);
    assert_eq!(s.rtt.srtt_ns, RTT, "no sample from segments 4, 5 (250 ms)");
}

#[test]
fn retransmissions_go_in_sequence_order_not_in_rack_marking_order() {
    // Linux tcp_xmit_retransmit_queue walks the rtx queue from its head
    // (sequence order). RACK (RFC 8985 6.2, tcp_rack_detect_loss) marks in
    // send order: segment 4 (sent at RTT) before 0's retransmission (sent
    // at 2 RTT); both are lost once a segment sent after 0's retransmission
    // is SACKed, and 0 goes out first.
    let mut s = retransmitted_head();
    let mut o = SackOpt::NONE;
    o.push(5, 12);
    let mut out = vec![];
    s.on_ack(3 * RTT + 1, &ack_with(&s, 0, o), &mut out);
    assert_eq!(s.stats.retransmissions, 3, "0 again and 4");
    assert_eq!(seqs(&out)[..2], [0, 4]);
}

#[test]
fn min_rtt_takes_the_newest_acked_segments_rtt_and_srtt_the_oldest() {
    // tcp_ack_update_rtt: seq_rtt_us (the oldest freed segment's) feeds
    // srtt, ca_rtt_us (the newest's) tcp_update_rtt_min.
    let (mut s, _) = established();
    let mut out = vec![];
    s.on_ack(2 * RTT, &plain_ack(2), &mut out);
    assert_eq!(seqs(&out), vec![10, 11, 12, 13], "sent at 2 RTT");
    assert_eq!((s.tp.min_rtt_ns, s.rtt.srtt_ns), (RTT, RTT));
    // Segment 2 was sent at RTT (150 ms ago), 13 at 2 RTT (50 ms ago).
    s.on_ack(2 * RTT + 50_000_000, &plain_ack(14), &mut vec![]);
    assert_eq!(s.tp.min_rtt_ns, 50_000_000);
    assert_eq!(s.rtt.srtt_ns, (7 * RTT + 150_000_000) / 8);
}

#[test]
fn under_karn_a_new_sack_still_gives_min_rtt_the_newest_sacked_segments_rtt() {
    // tcp_clean_rtx_queue: FLAG_RETRANS_DATA_ACKED voids the cumulative
    // RTTs, but sack_rtt_us (first_sackt) feeds srtt and ca_rtt_us
    // (last_sackt) min_rtt. Segments 4..9 were sent at RTT (150 ms ago), 10
    // at 2 RTT (50 ms ago); the ACK frees the retransmitted segment 0.
    let mut s = retransmitted_head();
    assert_eq!(s.segs[(10 - s.tp.snd_una) as usize].sent_ns, 2 * RTT, "segment 10 sent with the retransmission");
    let mut o = SackOpt::NONE;
    o.push(4, 11);
    s.on_ack(2 * RTT + 50_000_000, &ack_with(&s, 4, o), &mut vec![]);
    assert_eq!(s.tp.min_rtt_ns, 50_000_000);
    assert_eq!(s.rtt.srtt_ns, (7 * RTT + 150_000_000) / 8);
}

/// Linux tcp_output.c `tcp_xmit_retransmit_queue`: when the segment at the
/// head of the retransmission queue (snd_una's) is retransmitted, the RTO is
/// reset to `icsk_rto` from now (`tcp_reset_xmit_timer(sk, ICSK_TIME_RETRANS,
/// icsk_rto, ...)`), not left running from the last ACK that advanced snd_una.
#[test]
fn retransmitting_the_head_restarts_the_rto_from_the_retransmission() {
    let (mut s, _) = established();
    let t = 2 * RTT;
    let mut out = vec![];
    // Segments 0 and 4 of the first flight are lost: SACKs of 1-3 start
    // recovery (0 retransmitted), SACKs of 5-9 make RACK mark 4 (retransmitted).
    for k in (1..4).chain(5..10) {
        s.on_ack(t, &ack_to(&s, 0, k), &mut out);
    }
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    let rtx: Vec<u64> = seqs(&out).into_iter().filter(|&q| q < 10).collect();
    assert_eq!(rtx, vec![0, 4]);
    let new_after: Vec<u64> = seqs(&out).into_iter().filter(|&q| q >= 10).collect();
    assert!(!new_after.is_empty(), "new data sent after the retransmission of 4");
    // One RTT later 0's retransmission is acknowledged: snd_una advances to 4
    // and, in recovery (no probe), the RTO runs from this ACK.
    out.clear();
    let mut o = SackOpt::NONE;
    o.push(5, 10);
    s.on_ack(t + RTT, &ack_with(&s, 4, o), &mut out);
    assert_eq!(s.tp.snd_una, 4);
    let from_una = s.rto_timer.deadline().unwrap();
    assert_eq!(from_una, jiffy_timer_at(t + RTT, s.rto_span_ns()));
    // 50 ms later a segment sent after 4's retransmission is SACKed: RACK
    // finds that retransmission lost, and 4, now the head, goes out again.
    let t2 = t + RTT + 50_000_000;
    out.clear();
    s.on_ack(t2, &ack_to(&s, 4, new_after[0]), &mut out);
    assert_eq!(seqs(&out).first(), Some(&4), "the head retransmitted again");
    let rto_at = jiffy_timer_at(t2, s.rto_span_ns());
    assert_eq!(s.rto_timer.deadline(), Some(rto_at), "RTO restarted at the head's retransmission");
    assert!(rto_at > from_una);
    assert_eq!(s.stats.rto_count, 0);
}

#[test]
fn rack_rtt_is_the_last_segment_taken_the_cumulative_acks_after_the_sack_blocks() {
    // RFC 8985 6.2 step 2 and Linux tcp_rack_advance: RACK.rtt is set by
    // every (S)ACKed segment that is not ambiguous, RACK.xmit_ts only by a
    // more recently sent one. tcp_ack tags the SACK blocks
    // (tcp_sacktag_write_queue) before it frees the cumulatively ACKed
    // segments (tcp_clean_rtx_queue): an ACK that SACKs new data and
    // cumulatively ACKs an older segment leaves RACK.rtt at the older
    // segment's RTT, RACK.xmit_ts at the new data's send time, and the
    // segments sent with the older one are not yet overdue.
    let (mut s, _) = established();
    let mut out = vec![];
    // Segment 0 of the first flight (sent at RTT) is ACKed; 10 and 11 leave at 2 RTT.
    s.on_ack(2 * RTT, &plain_ack(1), &mut out);
    assert_eq!(seqs(&out), vec![10, 11]);
    // Segment 1 (sent at RTT) arrives late, with 10 SACKed beside it.
    let t = 3 * RTT + 5_000_000;
    s.on_ack(t, &ack_to(&s, 2, 10), &mut out);
    assert_eq!((s.rack_xmit_ns, s.rack_end_seq), (2 * RTT, 10), "RACK.xmit_ts: segment 10, sent last");
    assert_eq!(s.rack_rtt_ns, t - RTT, "RACK.rtt: segment 1's, taken last");
    // 2..9, sent at RTT, are due at RTT + RACK.rtt + reo_wnd, after now.
    assert_eq!(s.stats.losses_detected, 0);
}

#[test]
fn a_flights_skbs_are_stamped_the_stack_time_apart_and_an_skbs_frames_share_its_stamp() {
    // Linux stamps each skb as it leaves TCP (__tcp_transmit_skb); on the
    // testbed a flight's skbs reach the device ~10 us apart (net:net_dev_queue),
    // the frames of a GSO skb together. Three one-segment skbs and a
    // two-segment one, sent at 5 ms: TSvals 5 ms + 0, 10, 20, 30, 30 us.
    let mut out: Vec<Packet> = (0..5).map(|_| Packet::new(0, Kind::Data, 1500)).collect();
    for p in &mut out {
        p.ts_val = 5_000_000;
    }
    out[4].set_skb_next(true);
    stamp_skbs(&mut out, 10_000);
    let offsets: Vec<u64> = out.iter().map(|p| p.ts_val - 5_000_000).collect();
    assert_eq!(offsets, vec![0, 10_000, 20_000, 30_000, 30_000]);
}

#[test]
fn with_a_stack_time_the_skbs_of_one_send_carry_later_tsvals_and_without_it_one() {
    // cwnd 10 unpaced: the initial window leaves as GSO skbs (tcp_cwnd_test: at
    // most half the cwnd each). Each skb's frames share a TSval; the skbs step.
    for stack_ns in [0, 10_000] {
        let (_, out) = handshake(SenderConfig { skb_stack_ns: stack_ns, ..sender_cfg(EcnMode::Off) }, Box::new(Reno));
        let skbs: Vec<u64> = out.iter().filter(|p| !p.skb_next()).map(|p| p.ts_val).collect();
        assert!(skbs.len() >= 2, "{} skbs", skbs.len());
        let steps: Vec<u64> = skbs.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(steps.iter().all(|&d| d == stack_ns), "stack {stack_ns}: steps {steps:?}");
        assert!(out.iter().all(|p| !p.skb_next() || skbs.contains(&p.ts_val)));
    }
}
