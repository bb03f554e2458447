//! TCP sender, modelled on Linux's (net/ipv4/tcp_output.c, tcp_input.c,
//! tcp_recovery.c, tcp_rate.c, tcp_timer.c).
//!
//! - Handshake: a SYN through the real path; its RTT seeds SRTT (as Linux's
//!   SYN RTT does); a lost SYN is retried after 1 s, doubling.
//! - Initial window 10 segments (RFC 6928), cwnd in segments.
//! - SACK scoreboard per segment: sacked / lost / retransmitted flags and the
//!   counters `packets_out`, `sacked_out`, `lost_out`, `retrans_out`, with
//!   in_flight = out - (sacked + lost) + retrans (`tcp_packets_in_flight`).
//!   Every SACK block of an ACK is used (RFC 2018, Linux
//!   `tcp_sacktag_write_queue` / `tcp_sacktag_one`, skipping what the previous
//!   ACK's blocks covered, `recv_sack_cache`); a first block below the
//!   cumulative ACK or inside the second is a D-SACK (RFC 2883,
//!   `tcp_check_dsack`, `tcp_dsack_seen`): it counts a spurious
//!   retransmission (`undo_retrans`) and a delivery.
//! - Loss detection by RACK (RFC 8985): a segment is lost when a segment sent
//!   later was delivered and it is older than RACK.rtt + reo_wnd. As in Linux
//!   without observed reordering, reo_wnd = 0 once in recovery or when
//!   sacked_out >= 3 (DupThresh), else min_rtt/4 with the reordering timer.
//!   Lost retransmissions are detected the same way (no RTO needed).
//! - Fast recovery with PRR (RFC 6937, Linux `tcp_cwnd_reduction`), recovery
//!   point = snd_nxt at entry; on exit cwnd = ssthresh (`tcp_end_cwnd_reduction`).
//! - RTO (RFC 6298 with Linux's 200 ms minimum, see rtt.rs), exponential
//!   backoff, `tcp_enter_loss`: every unSACKed segment not sent within the
//!   last RACK.rtt is marked lost (`tcp_timeout_mark_lost`), cwnd = in_flight + 1.
//! - Recovery state machine as `tcp_fastretrans_alert` (no Disorder state):
//!   only "dubious" ACKs enter it (`tcp_ack_is_dubious`). Undo of spurious
//!   reductions (`tcp_undo_cwnd_reduction`: cwnd from the CCA's `undo_cwnd`,
//!   ssthresh = max(ssthresh, prior_ssthresh)) when D-SACKs show every
//!   retransmission spurious (`tcp_try_undo_dsack`), when the echoed
//!   timestamp predates the first retransmission (Eifel, RFC 3522,
//!   `tcp_packet_delayed`, `tcp_try_undo_recovery` / `_partial` / `_loss`),
//!   or by F-RTO after an RTO (RFC 5682 section 3.1, SACK variant,
//!   `tcp_process_loss`: new data first, undo if never-retransmitted data is
//!   then (S)ACKed). ECN reductions are never undone (`prior_ssthresh = 0`).
//! - Delivery-rate samples as Linux tcp_rate.c (`tcp_rate_skb_sent`,
//!   `tcp_rate_skb_delivered`, `tcp_rate_gen`), consumed by BBR.
//! - Pacing (Linux internal pacing / fq): the next packet leaves no earlier than
//!   the previous departure + mss / pacing_rate, except that a TSO-autosized
//!   burst (`tcp_tso_autosize`: ~1 ms of data, >= 2 segments, <= 64 KB) may
//!   leave back-to-back, as Linux sends one TSO packet per pacing slot. Window-based CCAs that pace use
//!   `tcp_update_pacing_rate`: 200 % (slow start) or 120 % (congestion
//!   avoidance) of cwnd x mss / srtt.
//! - Receiver window: never send beyond snd_una + rwnd.
//! - ECN (RFC 3168, Linux tcp_ecn_send / tcp_enter_cwr): new data is ECT(0)
//!   (classic) or ECT(1) (scalable); classic retransmissions are Not-ECT (as
//!   Linux for CCAs without TCP_CONG_NEEDS_ECN). An ACK with ECE in Open state
//!   enters CWR: ssthresh from the CCA, PRR down to it, one reduction per
//!   window (CWR ends when snd_una passes the point where it began); the next
//!   new data segment carries CWR. Every ACK with ECE counts its newly
//!   delivered packets into `delivered_ce` (Linux `tcp_newly_delivered`), the
//!   per-packet CE count that DCTCP/Prague read in `in_ack_event`.
//! - Tail loss probe (RFC 8985 section 7, Linux tcp_schedule_loss_probe):
//!   PTO = 2 SRTT + 2 ms (+200 ms with one packet out), capped by the RTO;
//!   probe with new data or the highest segment, once per episode.
//!   A probe's retransmission is not an outstanding retransmission nor
//!   counted for undo (`__tcp_retransmit_skb`); its D-SACK ends the episode
//!   (`FLAG_DSACK_TLP`).
//! Simplifications are listed in docs/fidelity.md (Sender).

use std::collections::VecDeque;

use crate::cc::{AckSample, CaEvent, CaState, CongestionControl, RateSample, TcpCc, INFINITE_SSTHRESH};
use crate::config::EcnMode;
use crate::engine::{TimeNs, Timer};
use crate::packet::Ecn;
use crate::packet::{Kind, Packet, MAX_SACK_BLOCKS};
use crate::tcp::rtt::{RttEstimator, RTO_INIT_NS, RTO_MAX_NS};

/// RFC 6675 / Linux `tp->reordering` default (sysctl_tcp_reordering).
pub const DUPTHRESH: u32 = 3;
/// Linux `sysctl_tcp_pacing_ss_ratio` (percent).
pub const PACING_SS_RATIO_PCT: u64 = 200;
/// Linux `sysctl_tcp_pacing_ca_ratio` (percent).
pub const PACING_CA_RATIO_PCT: u64 = 120;

/// Linux `sk_pacing_shift` default (TSO bursts of ~1 ms of data).
pub const PACING_SHIFT: u32 = 10;
/// Linux `sysctl_tcp_min_tso_segs`.
pub const MIN_TSO_SEGS: u64 = 2;
/// TLP: extra probe timeout with more than one packet out (Linux TCP_TIMEOUT_MIN, 2 jiffies).
pub const TLP_EXTRA_NS: u64 = 2_000_000;
/// TLP: extra probe timeout with one packet out, for a delayed ACK (Linux TCP_RTO_MIN).
pub const TLP_DELACK_NS: u64 = 200_000_000;
/// Linux GSO_LEGACY_MAX_SIZE (64 KB) minus headers.
pub const GSO_MAX_BYTES: u64 = 65536 - 320;
/// Linux device default `gso_max_segs` (GSO_MAX_SEGS): no cap below the 64 KB size.
pub const GSO_MAX_SEGS: u32 = 65535;
/// Linux `sysctl_tcp_tso_win_divisor` (3 on this kernel, 6.18).
pub const TSO_WIN_DIVISOR: u64 = 3;
/// `tcp_tso_should_defer`: defer only if the last transmission is at most this old (NSEC_PER_MSEC).
pub const TSO_DEFER_RECENT_NS: u64 = 1_000_000;
/// `tcp_tso_should_defer`: defer only if the next ACK is expected within min(srtt / 2, this).
pub const TSO_DEFER_ACK_MAX_NS: u64 = 1_000_000;

const F_SACKED: u8 = 1;
const F_LOST: u8 = 2;
/// A retransmission of this segment is outstanding (Linux TCPCB_SACKED_RETRANS).
const F_RETRANS: u8 = 4;
/// The segment was retransmitted at least once (Linux TCPCB_EVER_RETRANS).
const F_EVER_RETRANS: u8 = 8;
const F_APP_LIMITED: u8 = 16;
/// Its delivery was already counted in a rate sample (Linux clears delivered_mstamp).
const F_RATE_DONE: u8 = 32;

/// Per-segment scoreboard entry (Linux `tcp_skb_cb` + `tx` rate fields).
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// Time of the most recent (re)transmission.
    sent_ns: u64,
    /// tcp_rate: `tp->first_tx_mstamp` when sent.
    first_tx_ns: u64,
    /// tcp_rate: `tp->delivered_mstamp` when sent.
    delivered_ns: u64,
    /// tcp_rate: `tp->delivered` when sent.
    delivered: u64,
    /// tcp_rate (BBRv2 `tx.in_flight`): packets in flight just after this send.
    tx_in_flight: u32,
    /// tcp_rate (BBRv2 `tx.lost`): `tp->lost` when sent.
    tx_lost: u64,
    /// tcp_rate (BBRv2 `tx.delivered_ce`): `tp->delivered_ce` when sent.
    tx_delivered_ce: u64,
    flags: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnState {
    Idle,
    SynSent,
    Established,
}

#[derive(Debug, Clone)]
pub struct SenderConfig {
    pub flow: u32,
    pub mss_bytes: u32,
    pub wire_bytes: u32,
    pub init_cwnd_pkts: u32,
    pub pacing: bool,
    pub stop_ns: Option<u64>,
    /// Finite flow size (None = bulk).
    pub size_bytes: Option<u64>,
    /// Application data rate (None = always has data).
    pub rate_cap_bps: Option<u64>,
    /// ECN use (resolved: the CCA's default already applied).
    pub ecn: EcnMode,
    /// Minimum RTO (Linux route `rto_min`; TCP_RTO_MIN = 200 ms by default).
    pub rto_min_ns: u64,
    /// Segments per TSO/GSO burst at most (the device's `gso_max_segs`):
    /// [`GSO_MAX_SEGS`] = Linux autosizing, 1 = TSO/GSO off (one segment per send).
    pub gso_max_segs: u32,
}

#[derive(Debug, Clone, Default)]
pub struct SenderStats {
    pub sent_packets: u64,
    pub retransmissions: u64,
    pub losses_detected: u64,
    pub rto_count: u64,
    pub recoveries: u64,
    pub rtt_sum_ns: u128,
    pub rtt_samples: u64,
    pub min_rtt_ns: u64,
    /// ACKs that carried ECN-Echo.
    pub ece_acks: u64,
    /// ECN-triggered window reductions (entries into CWR).
    pub ecn_reductions: u64,
    /// Tail loss probes sent (RFC 8985 TLP).
    pub loss_probes: u64,
    /// Window reductions undone as spurious (DSACK, timestamps or F-RTO).
    pub undos: u64,
    /// RTOs found spurious by F-RTO (Linux LINUX_MIB_TCPSPURIOUSRTOS).
    pub spurious_rtos: u64,
    /// D-SACKed segments accepted (Linux `dsack_dups` minus dubious ones).
    pub dsack_segs: u64,
    /// TSO/GSO bursts (skbs) of new data an unpaced sender sent, and how
    /// often `tcp_tso_should_defer` held data back (see `unpaced_skb_segs`).
    pub tso_bursts: u64,
    pub tso_deferrals: u64,
}

pub struct Sender {
    pub cfg: SenderConfig,
    pub cc: Box<dyn CongestionControl>,
    pub tp: TcpCc,
    pub state: ConnState,
    pub stats: SenderStats,
    pub rto_timer: Timer,
    pub pace_timer: Timer,
    pub reo_timer: Timer,

    segs: VecDeque<Seg>,
    packets_out: u32,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Outstanding transmissions in send order (Linux `tsorted_sent_queue`).
    tsorted: VecDeque<(u64, u64)>,
    /// Segments marked lost, waiting to be retransmitted, in marking order.
    rtx_queue: VecDeque<u64>,
    // RACK state (RFC 8985 6.1).
    rack_xmit_ns: u64,
    rack_end_seq: u64,
    rack_rtt_ns: u64,
    // Recovery.
    high_seq: u64,
    prr_delivered: u32,
    prr_out: u32,
    /// Whether the CCA takes over cwnd (`cong_control`); learnt on the first ACK.
    cc_controls: bool,
    rtt: RttEstimator,
    backoff: u32,
    /// RTOs since snd_una last advanced (Linux `icsk_retransmits`).
    retransmits: u32,
    /// The retransmission timer is armed as a tail loss probe (ICSK_TIME_LOSS_PROBE).
    tlp_armed: bool,
    /// snd_nxt when the outstanding probe was sent, 0 = none (`tlp_high_seq`).
    tlp_high_seq: u64,
    /// The outstanding probe was a retransmission (`tlp_retrans`).
    tlp_retrans: bool,
    rwnd: u32,
    next_send_ns: u64,
    syn_sent_ns: u64,
    start_ns: u64,
    syn_retries: u32,
    ts_recent: u64,
    // tcp_rate.c connection state.
    first_tx_ns: u64,
    rate_delivered: i64,
    rate_interval_ns: i64,
    // tcp_cwnd_validate state.
    max_packets_out: u32,
    cwnd_usage_seq: u64,
    cwnd_limited_flag: bool,
    /// Set CWR on the next new data segment (Linux TCP_ECN_QUEUE_CWR).
    queue_cwr: bool,
    // Undo state (Linux tcp_sock: undo_marker, undo_retrans, prior_ssthresh,
    // retrans_stamp, frto, dsack_dups, recv_sack_cache).
    /// snd_una when the reduction that may be undone began (None = no undo).
    undo_marker: Option<u64>,
    /// Retransmissions not yet shown spurious by a D-SACK (-1 = none sent).
    undo_retrans: i64,
    /// ssthresh to restore on undo (0 = undo of ssthresh not allowed).
    prior_ssthresh: u32,
    /// Time of the episode's first retransmission, 0 = none yet.
    retrans_stamp: u64,
    /// F-RTO (RFC 5682) armed for this Loss episode.
    frto: bool,
    /// F-RTO step 2b: send new data, not retransmissions, on this ACK.
    frto_send_new: bool,
    /// D-SACKed segments reported (checked against retransmissions sent).
    dsack_dups: u64,
    /// Valid SACK blocks of the previous ACK, sorted (`recv_sack_cache`):
    /// their segments are already tagged, so a walk skips them.
    sack_cache: [(u64, u64); MAX_SACK_BLOCKS],
    sack_cache_len: usize,
    /// Scratch space to rebuild `tsorted` after an undo (kept to reuse its allocation).
    scratch: Vec<(u64, u64)>,
    /// Time of the last transmission (`tp->tcp_wstamp_ns` of an unpaced flow).
    last_xmit_ns: u64,
}

/// What one ACK did (Linux tcp_ack `flag` bits the recovery code reads).
#[derive(Default)]
struct AckFlags {
    /// FLAG_SND_UNA_ADVANCED.
    una_advanced: bool,
    /// FLAG_DATA_SACKED: some segment newly SACKed.
    data_sacked: bool,
    /// FLAG_ORIG_SACK_ACKED: a never-retransmitted segment below high_seq newly (S)ACKed.
    orig_sack_acked: bool,
    /// FLAG_DSACKING_ACK: the ACK carried an accepted D-SACK.
    dsacking: bool,
    /// FLAG_DSACK_TLP: the D-SACK covers the tail loss probe.
    dsack_tlp: bool,
    /// Segments the D-SACK reports delivered twice (counted as delivered).
    dsack_segs: u32,
    /// Echoed timestamp (TSecr) of the ACK, 0 = none.
    ts_ecr: u64,
}

/// Per-ACK accumulators of the cumulative-ACK and SACK walks.
#[derive(Default)]
struct AckAcc {
    /// Segments newly ACKed or SACKed.
    newly_delivered: u32,
    rate: RateAcc,
    /// RTT of the newest delivered, never retransmitted segment.
    ca_rtt: Option<u64>,
    /// RTT of the newest newly SACKed, never retransmitted segment.
    sack_rtt: Option<u64>,
    flags: AckFlags,
}

/// Per-ACK bookkeeping of tcp_rate.c `tcp_rate_skb_delivered`.
#[derive(Default)]
struct RateAcc {
    have: bool,
    prior_delivered: u64,
    prior_ns: u64,
    first_tx_ns: u64,
    snd_interval_ns: i64,
    is_app_limited: bool,
    is_retrans: bool,
    tx_in_flight: u32,
    tx_lost: u64,
    prior_delivered_ce: u64,
}

impl Sender {
    pub fn new(cfg: SenderConfig, cc: Box<dyn CongestionControl>) -> Sender {
        let mut tp = TcpCc::new(cfg.mss_bytes, cfg.wire_bytes, cfg.init_cwnd_pkts);
        tp.pacing = cfg.pacing || cc.needs_pacing();
        tp.is_cwnd_limited = false;
        let rtt = RttEstimator::with_rto_min(cfg.rto_min_ns);
        Sender {
            cfg,
            cc,
            tp,
            state: ConnState::Idle,
            stats: SenderStats { min_rtt_ns: 0, ..Default::default() },
            rto_timer: Timer::default(),
            pace_timer: Timer::default(),
            reo_timer: Timer::default(),
            segs: VecDeque::with_capacity(64),
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            tsorted: VecDeque::with_capacity(64),
            rtx_queue: VecDeque::new(),
            rack_xmit_ns: 0,
            rack_end_seq: 0,
            rack_rtt_ns: 0,
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            cc_controls: false,
            rtt,
            backoff: 0,
            retransmits: 0,
            tlp_armed: false,
            tlp_high_seq: 0,
            tlp_retrans: false,
            rwnd: 10,
            next_send_ns: 0,
            syn_sent_ns: 0,
            start_ns: 0,
            syn_retries: 0,
            ts_recent: 0,
            first_tx_ns: 0,
            rate_delivered: 0,
            rate_interval_ns: 0,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            cwnd_limited_flag: false,
            queue_cwr: false,
            undo_marker: None,
            undo_retrans: -1,
            prior_ssthresh: 0,
            retrans_stamp: 0,
            frto: false,
            frto_send_new: false,
            dsack_dups: 0,
            sack_cache: [(0, 0); MAX_SACK_BLOCKS],
            sack_cache_len: 0,
            scratch: Vec::new(),
            last_xmit_ns: 0,
        }
    }

    /// Packets in flight (Linux `tcp_packets_in_flight`).
    pub fn in_flight(&self) -> u32 {
        self.packets_out - (self.sacked_out + self.lost_out) + self.retrans_out
    }

    pub fn srtt_ns(&self) -> u64 {
        self.rtt.srtt_ns
    }

    fn seg(&mut self, seq: u64) -> &mut Seg {
        let i = (seq - self.tp.snd_una) as usize;
        &mut self.segs[i]
    }

    /// Segments the application has handed to TCP by `now` (u64::MAX = unbounded).
    fn segs_available(&self, now: TimeNs) -> u64 {
        let mss = self.cfg.mss_bytes as u64;
        let mut avail = self.cfg.size_bytes.map_or(u64::MAX, |b| b.div_ceil(mss));
        if let Some(rate) = self.cfg.rate_cap_bps {
            let bytes = rate as u128 * now.saturating_sub(self.start_ns) as u128 / 8_000_000_000;
            avail = avail.min((bytes as u64 / mss) + 1);
        }
        avail
    }

    /// Whether the application has unsent data; if it will have more later
    /// (rate cap), arm the application timer (shared with pacing) for then.
    fn has_new_data(&mut self, now: TimeNs) -> bool {
        if self.cfg.stop_ns.is_some_and(|s| now >= s) {
            return false;
        }
        if self.tp.snd_nxt < self.segs_available(now) {
            return true;
        }
        if let (Some(rate), true) =
            (self.cfg.rate_cap_bps, self.cfg.size_bytes.is_none_or(|b| self.tp.snd_nxt * (self.cfg.mss_bytes as u64) < b))
        {
            // Time at which segment snd_nxt becomes available.
            let need_bytes = self.tp.snd_nxt as u128 * self.cfg.mss_bytes as u128;
            let at = self.start_ns + (need_bytes * 8_000_000_000).div_ceil(rate as u128) as u64;
            self.pace_timer.arm(at.max(now + 1));
        }
        false
    }

    /// True once every byte of a finite flow is cumulatively ACKed.
    pub fn is_complete(&self) -> bool {
        self.cfg.size_bytes.is_some_and(|b| self.tp.snd_una * self.cfg.mss_bytes as u64 >= b)
    }

    // ------------------------------------------------------------------ start

    /// Open the connection: send the SYN.
    pub fn start(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.start_ns = now;
        self.state = ConnState::SynSent;
        self.send_syn(now, out);
    }

    fn send_syn(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.syn_sent_ns = now;
        let mut p = Packet::new(self.cfg.flow, Kind::Syn, crate::config::ACK_WIRE_BYTES + 8);
        p.ts_val = now;
        out.push(p);
        let rto = RTO_INIT_NS.saturating_mul(1 << self.syn_retries.min(10)).min(RTO_MAX_NS);
        self.rto_timer.arm(now + rto);
    }

    fn on_synack(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) {
        self.state = ConnState::Established;
        // Timestamps make the SYN RTT unambiguous even after a SYN retry.
        let sample = now.saturating_sub(p.ts_ecr).max(1);
        self.rtt_sample(now, sample);
        self.rwnd = p.rwnd;
        self.ts_recent = p.ts_val;
        self.rto_timer.disarm();
        if self.syn_retries > 0 {
            // RFC 6298 5.7 / Linux: cwnd = 1 after a lost SYN.
            self.tp.cwnd = 1;
        }
        self.tp.now_ns = now;
        self.cc.init(&mut self.tp);
        if !self.cc.needs_pacing() {
            self.update_pacing_rate();
        }
        self.try_send(now, out);
    }

    fn rtt_sample(&mut self, now: TimeNs, sample_ns: u64) {
        self.rtt.update(sample_ns);
        self.tp.srtt_ns = self.rtt.srtt_ns;
        self.tp.min_rtt_ns = self.rtt.min_rtt.update(now, sample_ns); // tcp_update_rtt_min (rtt.rs)
        self.stats.min_rtt_ns = self.tp.min_rtt_ns;
        self.stats.rtt_sum_ns += sample_ns as u128;
        self.stats.rtt_samples += 1;
    }

    // ------------------------------------------------------------------- send

    /// Send as much as cwnd, rwnd, the application and pacing allow.
    pub fn try_send(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        if self.state != ConnState::Established {
            return;
        }
        // F-RTO step 2b (tcp_xmit_recovery with REXMIT_NEW): new data first;
        // if none can go, F-RTO ends and the retransmissions go instead.
        let frto_new = std::mem::take(&mut self.frto_send_new);
        let mut sent_any = false;
        let mut cwnd_limited = false;
        let mut burst_quota = 0u32;
        loop {
            if self.in_flight() >= self.tp.cwnd {
                cwnd_limited = true;
                break;
            }
            let rtx = if frto_new { None } else { self.next_retransmission() };
            if rtx.is_none() {
                if !self.has_new_data(now) {
                    // Application-limited (Linux tcp_rate_check_app_limited).
                    self.tp.app_limited = (self.tp.delivered + self.in_flight() as u64).max(1);
                    break;
                }
                if self.tp.snd_nxt >= self.tp.snd_una + self.rwnd as u64 {
                    break;
                }
            }
            if self.tp.pacing && burst_quota == 0 {
                // TSO autosizing: when the pacing slot opens, a burst of up to
                // `tso_segs` leaves back-to-back; each segment is charged.
                if now < self.next_send_ns {
                    self.pace_timer.arm(self.next_send_ns);
                    break;
                }
                burst_quota = self.tso_segs();
            } else if !self.tp.pacing && burst_quota == 0 && rtx.is_none() {
                match self.unpaced_skb_segs(now) {
                    Ok(segs) => burst_quota = segs,
                    Err(deferred_by_cwnd) => {
                        cwnd_limited |= deferred_by_cwnd;
                        break;
                    }
                }
            }
            burst_quota = burst_quota.saturating_sub(1);
            self.transmit(now, rtx, false, out);
            sent_any = true;
        }
        if frto_new && self.tp.snd_nxt <= self.high_seq {
            self.frto = false;
            return self.try_send(now, out);
        }
        cwnd_limited |= self.in_flight() >= self.tp.cwnd;
        if sent_any || cwnd_limited {
            self.cwnd_validate(cwnd_limited);
        }
        if sent_any {
            // tcp_write_xmit: one loss probe per tail-loss episode.
            self.schedule_loss_probe(now, false);
        }
    }

    /// One GSO skb of new data of an unpaced flow (Linux `tcp_write_xmit`):
    /// `Ok(segments)` to send back to back now (`tcp_cwnd_test`: at most
    /// half the cwnd and what cwnd allows, at most `tso_segs`), or
    /// `Err(cwnd_limited)` when `tcp_tso_should_defer` holds the data back
    /// for a larger burst. With TSO/GSO off (`gso_max_segs` = 1) every
    /// segment goes at once, as before issue 13.
    fn unpaced_skb_segs(&mut self, now: TimeNs) -> Result<u32, bool> {
        let max_segs = self.tso_segs();
        if max_segs <= 1 {
            return Ok(1);
        }
        if let Some(cwnd_limited) = self.tso_should_defer(now, max_segs) {
            self.stats.tso_deferrals += 1;
            return Err(cwnd_limited);
        }
        self.stats.tso_bursts += 1;
        let in_flight = self.in_flight();
        let cwnd_test = (self.tp.cwnd / 2).max(1).min(self.tp.cwnd.saturating_sub(in_flight));
        Ok(cwnd_test.clamp(1, max_segs))
    }

    /// Linux `tcp_tso_should_defer` (tcp_output.c, 6.18, with "tcp: fix
    /// tcp_tso_should_defer() vs large RTT", 2025): `Some(cwnd_limited)` to
    /// defer a bulk skb of `max_segs` segments, None to send now. Defers
    /// while all of: not in Recovery/Loss; the last transmission at most
    /// 1 ms ago; less than a full skb allowed by cwnd and rwnd; less than
    /// 1/`tso_win_divisor` of the window allowed; the ACK of the oldest
    /// outstanding segment due within min(srtt / 2, 1 ms). The skb's last
    /// data (nothing more from the application fits) goes at once, as
    /// Linux's FIN/EOR skb (a rate-capped application's partial skb too,
    /// where Linux would wait for the next write).
    fn tso_should_defer(&self, now: TimeNs, max_segs: u32) -> Option<bool> {
        if self.tp.ca_state >= CaState::Recovery || now > self.last_xmit_ns + TSO_DEFER_RECENT_NS {
            return None;
        }
        let send_win = (self.tp.snd_una + self.rwnd as u64).saturating_sub(self.tp.snd_nxt);
        let cong_win = self.tp.cwnd.saturating_sub(self.in_flight()) as u64;
        let limit = send_win.min(cong_win);
        if limit >= max_segs as u64 || self.segs_available(now).saturating_sub(self.tp.snd_nxt) <= limit {
            return None;
        }
        let mss = self.cfg.mss_bytes as u64;
        let chunk_bytes = (self.rwnd as u64).min(self.tp.cwnd as u64) * mss / TSO_WIN_DIVISOR;
        if limit * mss >= chunk_bytes {
            return None;
        }
        let head_sent_ns = self.segs.front()?.sent_ns;
        let srtt = self.rtt.srtt_ns;
        let how_far_is_the_ack = (head_sent_ns + srtt) as i64 - now as i64;
        if how_far_is_the_ack > (srtt / 2).min(TSO_DEFER_ACK_MAX_NS) as i64 {
            return None;
        }
        Some(cong_win < send_win)
    }

    /// Linux `tcp_schedule_loss_probe` (RFC 8985 section 7.2): arm the
    /// retransmission timer as a probe timeout PTO = 2 SRTT (+ 200 ms for a
    /// delayed ACK with one packet out, else + 2 ms), no later than the RTO.
    /// Only in Open / CWR with data out. Returns whether it armed.
    fn schedule_loss_probe(&mut self, now: TimeNs, advancing_rto: bool) -> bool {
        if self.packets_out == 0 || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr) || self.rtt.srtt_ns == 0 {
            return false;
        }
        let extra = if self.packets_out == 1 { TLP_DELACK_NS } else { TLP_EXTRA_NS };
        let mut timeout = 2 * self.rtt.srtt_ns + extra;
        let rto = self.rtt.backed_off_rto_ns(self.backoff);
        let rto_delta = if advancing_rto {
            rto
        } else {
            // tcp_rto_delta_us: the RTO counted from the oldest outstanding send.
            let head_sent = self.segs.front().map_or(now, |g| g.sent_ns);
            (head_sent + rto).saturating_sub(now)
        };
        if rto_delta > 0 {
            timeout = timeout.min(rto_delta);
        }
        self.rto_timer.arm(now + timeout);
        self.tlp_armed = true;
        true
    }

    /// Linux `tcp_send_loss_probe`: one new segment if the window allows
    /// (even beyond cwnd), else a retransmission of the highest segment; then
    /// the RTO. One probe per episode (`tlp_high_seq`).
    fn send_loss_probe(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.tlp_armed = false;
        let before = out.len();
        if self.tlp_high_seq == 0 {
            let new_ok = self.has_new_data(now) && self.tp.snd_nxt < self.tp.snd_una + self.rwnd as u64;
            let tail = self.tp.snd_nxt - 1;
            let tail_flags = self.segs[(tail - self.tp.snd_una) as usize].flags;
            if new_ok {
                self.tlp_retrans = false;
                self.transmit(now, None, false, out);
            } else if tail_flags & (F_SACKED | F_RETRANS) == 0 {
                self.tlp_retrans = true;
                self.transmit(now, Some(tail), true, out);
            }
            if out.len() > before {
                self.stats.loss_probes += 1;
                self.tlp_high_seq = self.tp.snd_nxt;
            }
        }
        self.rto_timer.arm(now + self.rtt.backed_off_rto_ns(self.backoff));
    }

    /// Linux `tcp_process_tlp_ack`: a probe that repaired a real tail loss
    /// (the ACK goes beyond it) costs one cwnd reduction (CWR and back); a
    /// D-SACK of the probe or a pure duplicate ACK shows that nothing was
    /// lost and ends the episode without one.
    fn process_tlp_ack(&mut self, ack: u64, f: &AckFlags) {
        if self.tlp_high_seq == 0 || ack < self.tlp_high_seq {
            return;
        }
        if !self.tlp_retrans || f.dsack_tlp {
            self.tlp_high_seq = 0;
        } else if ack > self.tlp_high_seq {
            self.init_cwnd_reduction();
            self.set_state(CaState::Cwr);
            self.end_cwnd_reduction();
        } else if !(f.una_advanced || f.data_sacked) {
            self.tlp_high_seq = 0;
        }
    }

    /// Linux `tcp_cwnd_validate` (the part that tracks cwnd use).
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        if self.tp.snd_una >= self.cwnd_usage_seq || is_cwnd_limited || (!self.cwnd_limited_flag && self.packets_out > self.max_packets_out)
        {
            self.cwnd_limited_flag = is_cwnd_limited;
            self.max_packets_out = self.packets_out;
            self.cwnd_usage_seq = self.tp.snd_nxt;
        }
    }

    /// Linux `tcp_is_cwnd_limited`.
    fn is_cwnd_limited(&self) -> bool {
        if self.cwnd_limited_flag {
            return true;
        }
        if self.tp.in_slow_start() {
            return self.tp.cwnd < 2 * self.max_packets_out;
        }
        false
    }

    fn next_retransmission(&mut self) -> Option<u64> {
        while let Some(&seq) = self.rtx_queue.front() {
            if seq >= self.tp.snd_una {
                let f = self.segs[(seq - self.tp.snd_una) as usize].flags;
                if f & F_LOST != 0 && f & (F_RETRANS | F_SACKED) == 0 {
                    return Some(seq);
                }
            }
            self.rtx_queue.pop_front();
        }
        None
    }

    /// Send segment `rtx` again, or the next new one. A loss probe's
    /// retransmission (`probe`) is not counted as an outstanding
    /// retransmission nor for undo (Linux sends it by `__tcp_retransmit_skb`,
    /// not `tcp_retransmit_skb`), but as ever retransmitted.
    fn transmit(&mut self, now: TimeNs, rtx: Option<u64>, probe: bool, out: &mut Vec<Packet>) {
        let was_idle = self.in_flight() == 0;
        if self.packets_out == 0 {
            // tcp_rate_skb_sent: restart the sampling epoch after idle.
            self.first_tx_ns = now;
            self.tp.delivered_time_ns = now;
        }
        if was_idle {
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        let rate = Seg {
            sent_ns: now,
            first_tx_ns: self.first_tx_ns,
            delivered_ns: self.tp.delivered_time_ns,
            delivered: self.tp.delivered,
            tx_in_flight: self.in_flight() + 1,
            tx_lost: self.tp.lost,
            tx_delivered_ce: self.tp.delivered_ce,
            flags: if self.tp.app_limited != 0 { F_APP_LIMITED } else { 0 },
        };
        let seq = match rtx {
            Some(seq) => {
                let s = self.seg(seq);
                s.sent_ns = rate.sent_ns;
                s.first_tx_ns = rate.first_tx_ns;
                s.delivered_ns = rate.delivered_ns;
                s.delivered = rate.delivered;
                s.tx_in_flight = rate.tx_in_flight;
                s.tx_lost = rate.tx_lost;
                s.tx_delivered_ce = rate.tx_delivered_ce;
                s.flags = (s.flags & !(F_APP_LIMITED | F_RATE_DONE)) | rate.flags | F_EVER_RETRANS;
                if !probe {
                    s.flags |= F_RETRANS;
                    self.count_retransmission(now);
                }
                self.stats.retransmissions += 1;
                if self.rtx_queue.front() == Some(&seq) {
                    self.rtx_queue.pop_front();
                }
                seq
            }
            None => {
                let seq = self.tp.snd_nxt;
                self.segs.push_back(rate);
                self.tp.snd_nxt += 1;
                self.packets_out += 1;
                seq
            }
        };
        self.tsorted.push_back((seq, now));
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        if self.tp.pacing {
            self.next_send_ns = self.next_send_ns.max(now) + self.pacing_gap_ns();
        }
        self.last_xmit_ns = now;
        if !self.rto_timer.is_armed() {
            self.rto_timer.arm(now + self.rtt.backed_off_rto_ns(self.backoff));
        }
        let mut p = Packet::new(self.cfg.flow, Kind::Data, self.cfg.wire_bytes);
        p.seq = seq;
        let is_new = rtx.is_none();
        p.ecn = match self.cfg.ecn {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic if is_new => Ecn::Ect0,
            EcnMode::Classic => Ecn::NotEct,
            EcnMode::Scalable => Ecn::Ect1,
        };
        if is_new && self.queue_cwr {
            p.cwr = true;
            self.queue_cwr = false;
        }
        p.ts_val = now;
        p.ts_ecr = self.ts_recent;
        out.push(p);
        self.stats.sent_packets += 1;
        self.tp.in_flight = self.in_flight();
    }

    /// Linux `tcp_retransmit_skb`'s bookkeeping: one more retransmission
    /// outstanding, the episode's first retransmission time, and one more
    /// retransmission that a D-SACK must show spurious before an undo.
    fn count_retransmission(&mut self, now: TimeNs) {
        self.retrans_out += 1;
        if self.retrans_stamp == 0 {
            self.retrans_stamp = now.max(1);
        }
        self.undo_retrans = self.undo_retrans.max(0) + 1;
    }

    /// Time one segment occupies at the pacing rate, ns (0 if no rate yet).
    fn pacing_gap_ns(&self) -> u64 {
        let rate = self.tp.pacing_rate_bytes_per_s;
        if rate == 0 {
            return 0;
        }
        self.cfg.mss_bytes as u64 * 1_000_000_000 / rate
    }

    /// Linux `tcp_tso_autosize`: segments per TSO burst = the data of one
    /// 2^-sk_pacing_shift s (~1 ms) at the pacing rate, at least
    /// `MIN_TSO_SEGS`, at most a 64 KB GSO packet and the device's
    /// `gso_max_segs` (1 = TSO/GSO off).
    pub fn tso_segs(&self) -> u32 {
        let bytes = self.tp.pacing_rate_bytes_per_s >> PACING_SHIFT;
        let max = (GSO_MAX_BYTES / self.cfg.mss_bytes as u64).max(1);
        (((bytes / self.cfg.mss_bytes as u64).max(MIN_TSO_SEGS)).min(max) as u32).min(self.cfg.gso_max_segs)
    }

    /// Linux `tcp_update_pacing_rate` for window-based CCAs that pace.
    fn update_pacing_rate(&mut self) {
        let srtt = self.rtt.srtt_ns.max(1);
        let ratio = if self.tp.cwnd < self.tp.ssthresh / 2 { PACING_SS_RATIO_PCT } else { PACING_CA_RATIO_PCT };
        let cwnd = self.tp.cwnd.max(self.packets_out) as u64;
        let rate = (self.cfg.mss_bytes as u64 * cwnd * ratio / 100) as u128 * 1_000_000_000 / srtt as u128;
        self.tp.pacing_rate_bytes_per_s = rate.min(u64::MAX as u128) as u64;
    }

    // -------------------------------------------------------------------- ACK

    pub fn on_ack(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        match (self.state, p.kind) {
            (ConnState::SynSent, Kind::SynAck) => return self.on_synack(now, p, out),
            (ConnState::Established, Kind::Ack) => {}
            _ => return,
        }
        self.rwnd = p.rwnd;
        self.ts_recent = p.ts_val;
        self.tp.rcv_tsval_ns = p.ts_val;
        self.tp.rcv_tsecr_ns = p.ts_ecr;
        let prior_in_flight = self.in_flight();
        let prior_una = self.tp.snd_una;
        let mut acc = AckAcc::default();
        acc.flags.ts_ecr = p.ts_ecr;
        let mut seq_rtt: Option<u64> = None; // oldest cumulatively ACKed, never retransmitted

        // Cumulative ACK (tcp_clean_rtx_queue).
        let in_loss = self.tp.ca_state == CaState::Loss;
        let ack = p.ack.min(self.tp.snd_nxt);
        while self.tp.snd_una < ack {
            let seq = self.tp.snd_una;
            let seg = self.segs.pop_front().expect("scoreboard covers [snd_una, snd_nxt)");
            self.tp.snd_una += 1;
            self.packets_out -= 1;
            if seg.flags & F_SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                acc.newly_delivered += 1;
                self.rate_delivered(&seg, &mut acc.rate);
                self.rack_advance(now, &seg, seq);
                if seg.flags & F_EVER_RETRANS == 0 {
                    let r = now - seg.sent_ns;
                    seq_rtt.get_or_insert(r);
                    acc.ca_rtt = Some(r);
                    // FLAG_ORIG_SACK_ACKED (read only in Loss, by F-RTO).
                    acc.flags.orig_sack_acked |= in_loss && seq < self.high_seq;
                }
            }
            if seg.flags & F_LOST != 0 {
                self.lost_out -= 1;
            }
            if seg.flags & F_RETRANS != 0 {
                self.retrans_out -= 1;
            }
        }
        acc.flags.una_advanced = self.tp.snd_una > prior_una;
        // SACK blocks, D-SACK first (tcp_sacktag_write_queue).
        if !p.sack.is_empty() {
            self.sacktag(now, p, prior_una, &mut acc);
        }
        // tcp_dsack_seen: a D-SACKed (spurious) retransmission was delivered.
        let newly_delivered = acc.newly_delivered + acc.flags.dsack_segs;
        let rate = std::mem::take(&mut acc.rate);
        let ca_rtt = acc.ca_rtt;
        let sack_rtt = acc.sack_rtt;
        let flags = acc.flags;
        let una_advanced = flags.una_advanced;
        if una_advanced {
            // tcp_ack: FLAG_SND_UNA_ADVANCED clears icsk_retransmits (and the backoff).
            self.backoff = 0;
            self.retransmits = 0;
        }
        if newly_delivered > 0 {
            self.tp.delivered += newly_delivered as u64;
            self.tp.delivered_time_ns = now;
        }
        // tcp_ecn_rcv_ecn_echo: ECE counts only on an ECN-capable connection.
        let ece = p.ece && self.cfg.ecn != EcnMode::Off;
        let newly_ce = if ece { newly_delivered } else { 0 };
        if ece {
            self.stats.ece_acks += 1;
            self.tp.delivered_ce += newly_ce as u64;
        }
        if let Some(r) = seq_rtt.or(sack_rtt) {
            self.rtt_sample(now, r);
        }
        self.tp.in_flight = self.in_flight();
        let ack_sample = AckSample { pkts_acked: acc.newly_delivered, rtt_ns: ca_rtt.map_or(-1, |r| r as i64), in_flight: prior_in_flight };
        self.cc.in_ack_event(&mut self.tp, ece);
        if acc.newly_delivered > 0 {
            self.cc.pkts_acked(&mut self.tp, &ack_sample);
        }

        let lost_before = self.tp.lost;
        // tcp_ack_is_dubious: an ACK in Open that only advances snd_una skips
        // the recovery state machine (and RACK), as in Linux.
        if !una_advanced || flags.data_sacked || flags.dsacking || ece || self.tp.ca_state != CaState::Open {
            self.fastretrans_alert(now, &flags, ece);
        }
        let newly_lost = (self.tp.lost - lost_before) as u32;

        let mut rs = self.rate_gen(now, newly_delivered, newly_lost, prior_in_flight, &rate);
        rs.rtt_ns = ack_sample.rtt_ns;
        rs.is_ece = ece;
        self.tp.in_flight = self.in_flight();
        // Linux keeps tp->is_cwnd_limited current for every CCA (BBRv2's
        // inflight_hi growth reads it in cong_control).
        self.tp.is_cwnd_limited = self.is_cwnd_limited();
        self.cc_controls = self.cc.cong_control(&mut self.tp, &rs);
        if !self.cc_controls {
            match self.tp.ca_state {
                CaState::Recovery | CaState::Cwr => self.prr(newly_delivered, newly_lost, una_advanced),
                _ => {
                    // tcp_may_raise_cwnd: with default reordering only an ACK that
                    // advances snd_una (FLAG_DATA_ACKED) may grow cwnd.
                    if newly_delivered > 0 && una_advanced {
                        self.tp.is_cwnd_limited = self.is_cwnd_limited();
                        self.cc.cong_avoid(&mut self.tp, newly_delivered);
                    }
                }
            }
            // Linux computes sk_pacing_rate for every CCA without cong_control,
            // paced or not (HyStart reads it); it is only enforced when pacing.
            self.update_pacing_rate();
        }
        self.tp.cwnd = self.tp.cwnd.max(1);

        self.process_tlp_ack(p.ack, &flags);
        if self.packets_out == 0 {
            self.rto_timer.disarm();
            self.tlp_armed = false;
        } else if una_advanced && !self.schedule_loss_probe(now, true) {
            // tcp_set_xmit_timer: the probe if it may be sent, else the RTO.
            self.tlp_armed = false;
            self.rto_timer.arm(now + self.rtt.backed_off_rto_ns(self.backoff));
        }
        self.try_send(now, out);
    }

    /// tcp_rate.c `tcp_rate_skb_delivered`: remember the most recently sent
    /// delivered segment's sending-time snapshot.
    fn rate_delivered(&self, seg: &Seg, acc: &mut RateAcc) {
        if seg.flags & F_RATE_DONE != 0 {
            return;
        }
        if !acc.have || seg.delivered > acc.prior_delivered {
            acc.have = true;
            acc.prior_delivered = seg.delivered;
            acc.prior_ns = seg.delivered_ns;
            acc.is_app_limited = seg.flags & F_APP_LIMITED != 0;
            acc.is_retrans = seg.flags & F_RETRANS != 0;
            acc.first_tx_ns = seg.sent_ns;
            acc.snd_interval_ns = seg.sent_ns as i64 - seg.first_tx_ns as i64;
            acc.tx_in_flight = seg.tx_in_flight;
            acc.tx_lost = seg.tx_lost;
            acc.prior_delivered_ce = seg.tx_delivered_ce;
        }
    }

    /// tcp_rate.c `tcp_rate_gen`.
    fn rate_gen(&mut self, now: TimeNs, delivered: u32, lost: u32, prior_in_flight: u32, acc: &RateAcc) -> RateSample {
        if self.tp.app_limited != 0 && self.tp.delivered > self.tp.app_limited {
            self.tp.app_limited = 0;
        }
        let mut rs = RateSample {
            acked_sacked: delivered,
            losses: lost,
            prior_in_flight,
            delivered: -1,
            interval_ns: -1,
            rtt_ns: -1,
            ..Default::default()
        };
        if acc.have {
            self.first_tx_ns = acc.first_tx_ns;
            rs.prior_delivered = acc.prior_delivered;
            rs.is_app_limited = acc.is_app_limited;
            rs.is_retrans = acc.is_retrans;
            rs.tx_in_flight = acc.tx_in_flight;
            rs.lost = self.tp.lost.saturating_sub(acc.tx_lost);
        }
        if !acc.have || delivered == 0 {
            return rs;
        }
        rs.delivered = (self.tp.delivered - acc.prior_delivered) as i64;
        // v2alpha tcp_rate_gen: CE-echoed deliveries over the same interval.
        rs.delivered_ce = self.tp.delivered_ce.saturating_sub(acc.prior_delivered_ce) as u32;
        let ack_interval = now as i64 - acc.prior_ns as i64;
        rs.interval_ns = acc.snd_interval_ns.max(ack_interval);
        let min_rtt = if self.tp.min_rtt_ns == u64::MAX { 0 } else { self.tp.min_rtt_ns as i64 };
        if rs.interval_ns < min_rtt {
            rs.interval_ns = -1;
            return rs;
        }
        if !rs.is_app_limited
            || (rs.delivered as i128 * self.rate_interval_ns as i128 >= self.rate_delivered as i128 * rs.interval_ns as i128)
        {
            self.rate_delivered = rs.delivered;
            self.rate_interval_ns = rs.interval_ns;
        }
        rs
    }

    // ------------------------------------------------------------------- SACK

    /// Linux `tcp_sacktag_write_queue`: tag the segments of every SACK block
    /// of the ACK. A first block below the cumulative ACK, or inside the
    /// second block, is a D-SACK (`tcp_check_dsack`, RFC 2883 section 4).
    /// Parts of blocks the previous ACK already reported are skipped
    /// (`recv_sack_cache`), so a steady stream of growing blocks costs one
    /// segment per ACK, not the whole block.
    fn sacktag(&mut self, now: TimeNs, p: &Packet, prior_una: u64, acc: &mut AckAcc) {
        if self.sacked_out == 0 {
            self.sack_cache_len = 0;
        }
        let dsack = self.check_dsack(p, prior_una, &mut acc.flags);
        let (una, nxt) = (self.tp.snd_una, self.tp.snd_nxt);
        let mut used = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n_used = 0;
        for i in 0..p.sack.len() {
            let (start, end) = p.sack.block(i, p.ack);
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
    fn sacktag_uncached(&mut self, now: TimeNs, start: u64, end: u64, acc: &mut AckAcc) {
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
    fn check_dsack(&mut self, p: &Packet, prior_una: u64, f: &mut AckFlags) -> bool {
        let (s0, e0) = p.sack.block(0, p.ack);
        let inside_second = p.sack.len() > 1 && {
            let (s1, e1) = p.sack.block(1, p.ack);
            s0 >= s1 && e0 <= e1
        };
        if !(s0 < p.ack || inside_second) || s0 >= e0 {
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
    fn sacktag_one(&mut self, now: TimeNs, seq: u64, dup: bool, acc: &mut AckAcc) {
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
                    self.retrans_out -= 1;
                }
            } else {
                if seg.flags & F_EVER_RETRANS == 0 {
                    acc.flags.orig_sack_acked |= seq < self.high_seq;
                    let r = now - seg.sent_ns;
                    acc.sack_rtt = Some(acc.sack_rtt.map_or(r, |c| c.max(r)));
                    acc.ca_rtt = Some(acc.ca_rtt.map_or(r, |c| c.min(r)));
                }
                if seg.flags & F_LOST != 0 {
                    flags &= !F_LOST;
                    self.lost_out -= 1;
                }
            }
            self.segs[i].flags = flags;
            self.sacked_out += 1;
            acc.newly_delivered += 1;
            acc.flags.data_sacked = true;
            self.rate_delivered(&seg, &mut acc.rate);
            self.rack_advance(now, &seg, seq);
        }
        if dup && self.segs[i].flags & F_RETRANS != 0 {
            self.segs[i].flags &= !F_RETRANS;
            self.retrans_out -= 1;
        }
    }

    // --------------------------------------------------------------- recovery

    fn set_state(&mut self, s: CaState) {
        if s != self.tp.ca_state {
            self.cc.set_state(&mut self.tp, s);
            self.tp.ca_state = s;
        }
    }

    /// Linux `tcp_fastretrans_alert` (SACK, RACK): leave a finished episode
    /// (undoing its reduction if it proved spurious), detect losses, enter
    /// Recovery or CWR. There is no Disorder state: Open stands for it.
    fn fastretrans_alert(&mut self, now: TimeNs, f: &AckFlags, ece: bool) {
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
    fn process_loss(&mut self, now: TimeNs, f: &AckFlags) {
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
    fn packet_delayed(&self, f: &AckFlags) -> bool {
        if self.retrans_stamp != 0 {
            return f.ts_ecr != 0 && f.ts_ecr < self.retrans_stamp;
        }
        true
    }

    /// Linux `tcp_may_undo`: all retransmissions D-SACKed, or timestamps show
    /// that the originals arrived.
    fn may_undo(&self, f: &AckFlags) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(f))
    }

    /// Linux `tcp_undo_cwnd_reduction`: restore cwnd through the CCA's
    /// `undo_cwnd` and ssthresh from `prior_ssthresh`; `unmark_loss` also
    /// forgets every loss mark (the segments are in flight again).
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for g in self.segs.iter_mut() {
                g.flags &= !F_LOST;
            }
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
    fn rebuild_tsorted(&mut self) {
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
        self.tsorted.extend(v.iter().map(|&(sent, seq)| (seq, sent)));
        self.scratch = v;
    }

    /// Linux `tcp_try_undo_recovery`: at the end of Recovery (or Loss), undo
    /// if the episode was spurious; back to Open.
    fn try_undo_recovery(&mut self, f: &AckFlags) {
        if self.may_undo(f) {
            self.undo_cwnd_reduction(false);
        }
        self.set_state(CaState::Open);
    }

    /// Linux `tcp_try_undo_dsack`: D-SACKs showed every retransmission of
    /// the episode spurious.
    fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// Linux `tcp_try_undo_loss`: undo an RTO's reduction (Loss -> Open).
    fn try_undo_loss(&mut self, frto_undo: bool, f: &AckFlags) -> bool {
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
    fn try_undo_partial(&mut self, f: &AckFlags) -> bool {
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
    fn try_to_open(&mut self, ece: bool) {
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
    fn try_keep_open(&mut self) {
        if self.tp.ca_state != CaState::Open {
            self.set_state(CaState::Open);
            self.high_seq = self.tp.snd_nxt;
        }
    }

    /// Linux `tcp_any_retrans_done`.
    fn any_retrans_done(&self) -> bool {
        self.retrans_out > 0 || self.segs.front().is_some_and(|g| g.flags & F_EVER_RETRANS != 0)
    }

    /// Linux `tcp_current_ssthresh`: the ssthresh an undo may restore.
    fn current_ssthresh(&self) -> u32 {
        if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.tp.ssthresh
        } else {
            self.tp.ssthresh.max((self.tp.cwnd >> 1) + (self.tp.cwnd >> 2))
        }
    }

    /// Linux `tcp_init_undo`.
    fn init_undo(&mut self) {
        self.undo_marker = Some(self.tp.snd_una);
        self.undo_retrans = if self.retrans_out > 0 { self.retrans_out as i64 } else { -1 };
    }

    /// Linux `tcp_enter_recovery` + `tcp_init_cwnd_reduction`. From CWR (an
    /// ECN reduction already under way) the reduction is not started again
    /// (`tcp_in_cwnd_reduction`); the recovery point still moves to snd_nxt.
    /// A new episode starts its retransmission clock afresh when nothing is
    /// retransmitted (Linux "tcp: fix tcp_enter_recovery() to zero
    /// retrans_stamp when it's safe").
    fn enter_recovery(&mut self, ece: bool) {
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
    fn init_cwnd_reduction(&mut self) {
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
    fn enter_cwr(&mut self) {
        self.stats.ecn_reductions += 1;
        self.prior_ssthresh = 0;
        self.undo_marker = None;
        self.high_seq = self.tp.snd_nxt;
        self.init_cwnd_reduction();
        self.queue_cwr = true;
        self.set_state(CaState::Cwr);
    }

    /// Linux `tcp_end_cwnd_reduction`: cwnd = ssthresh after CWR, or after a
    /// Recovery that was not undone.
    fn end_cwnd_reduction(&mut self) {
        let reduce = self.tp.ca_state == CaState::Cwr || self.undo_marker.is_some();
        if !self.cc_controls && self.tp.ssthresh < INFINITE_SSTHRESH && reduce {
            self.tp.cwnd = self.tp.ssthresh;
            self.tp.cwnd_cnt = 0;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
        self.set_state(CaState::Open);
    }

    /// Proportional rate reduction, RFC 6937 as Linux `tcp_cwnd_reduction`.
    fn prr(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
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

    /// RACK.update (RFC 8985 6.2 step 2, Linux `tcp_rack_advance`).
    fn rack_advance(&mut self, now: TimeNs, seg: &Seg, seq: u64) {
        let rtt = now - seg.sent_ns;
        if seg.flags & F_EVER_RETRANS != 0 && self.tp.min_rtt_ns != u64::MAX && rtt < self.tp.min_rtt_ns {
            // Possibly the ACK of the original transmission: ambiguous, skip.
            return;
        }
        if seg.sent_ns > self.rack_xmit_ns || (seg.sent_ns == self.rack_xmit_ns && seq > self.rack_end_seq) {
            self.rack_xmit_ns = seg.sent_ns;
            self.rack_end_seq = seq;
            self.rack_rtt_ns = rtt;
        }
    }

    /// RACK.detect_loss (RFC 8985 6.2 step 5, Linux `tcp_rack_detect_loss`).
    fn rack_detect_loss(&mut self, now: TimeNs) {
        let no_reordering_window = self.tp.ca_state >= CaState::Recovery || self.sacked_out >= DUPTHRESH;
        let reo_wnd =
            if no_reordering_window || self.tp.min_rtt_ns == u64::MAX { 0 } else { (self.tp.min_rtt_ns / 4).min(self.rtt.srtt_ns) };
        while let Some(&(seq, sent)) = self.tsorted.front() {
            if seq < self.tp.snd_una {
                self.tsorted.pop_front();
                continue;
            }
            let seg = self.segs[(seq - self.tp.snd_una) as usize];
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
                self.reo_timer.arm(deadline);
                break;
            }
        }
        self.tp.in_flight = self.in_flight();
    }

    /// Linux `tcp_mark_skb_lost`.
    fn mark_lost(&mut self, seq: u64) {
        let i = (seq - self.tp.snd_una) as usize;
        let f = self.segs[i].flags;
        if f & F_SACKED != 0 {
            return;
        }
        if f & F_LOST != 0 {
            if f & F_RETRANS != 0 {
                self.segs[i].flags &= !F_RETRANS;
                self.retrans_out -= 1;
            }
        } else {
            self.segs[i].flags |= F_LOST;
            self.lost_out += 1;
        }
        self.tp.lost += 1;
        self.stats.losses_detected += 1;
        self.rtx_queue.push_back(seq);
    }

    // ----------------------------------------------------------------- timers

    /// RACK reordering timer (Linux `tcp_rack_reo_timeout`).
    pub fn on_reo_timer(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        if self.state != ConnState::Established {
            return;
        }
        self.tp.now_ns = now;
        let lost_before = self.tp.lost;
        self.rack_detect_loss(now);
        if self.tp.lost > lost_before && self.tp.ca_state < CaState::Recovery {
            self.enter_recovery(false);
            // As tcp_cwnd_reduction would on the next ACK: allow the retransmission.
            self.tp.cwnd = self.tp.cwnd.min(self.in_flight() + 1).max(1);
        }
        self.try_send(now, out);
    }

    /// Retransmission timeout (Linux `tcp_retransmit_timer` + `tcp_enter_loss`).
    pub fn on_rto(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        match self.state {
            ConnState::Idle => return,
            ConnState::SynSent => {
                self.syn_retries += 1;
                self.stats.rto_count += 1;
                return self.send_syn(now, out);
            }
            ConnState::Established => {}
        }
        if self.packets_out == 0 {
            return;
        }
        if self.tlp_armed {
            if matches!(self.tp.ca_state, CaState::Open | CaState::Cwr) {
                return self.send_loss_probe(now, out);
            }
            // Recovery began after the probe was armed: Linux has re-armed the
            // RTO (tcp_rearm_rto) when it retransmitted; so do we, from the head.
            self.tlp_armed = false;
            let head_sent = self.segs.front().map_or(now, |g| g.sent_ns);
            let at = head_sent + self.rtt.backed_off_rto_ns(self.backoff);
            if at > now {
                self.rto_timer.arm(at);
                return;
            }
        }
        self.tlp_high_seq = 0;
        self.stats.rto_count += 1;
        let new_recovery = self.tp.ca_state < CaState::Recovery;
        self.timeout_mark_lost(now);
        // tcp_enter_loss: reduce ssthresh only if it was not yet reduced in
        // this window; in Loss only on the first RTO (icsk_retransmits == 0),
        // so back-to-back RTOs keep the first RTO's ssthresh.
        if self.tp.ca_state <= CaState::Disorder
            || self.tp.snd_una >= self.high_seq
            || (self.tp.ca_state == CaState::Loss && self.retransmits == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.cwnd;
            self.tp.ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
            self.init_undo();
        }
        self.tp.cwnd = self.in_flight() + 1;
        self.tp.cwnd_cnt = 0;
        self.set_state(CaState::Loss);
        self.high_seq = self.tp.snd_nxt;
        // F-RTO (RFC 5682 3.1 step 1) unless a recovery was already under way
        // (recurring timeouts on the same snd_una keep it, section 3.2).
        self.frto = new_recovery || self.retransmits > 0;
        self.frto_send_new = false;
        self.backoff += 1;
        self.retransmits += 1;
        self.tp.in_flight = self.in_flight();
        // BBR and friends see the loss through their next rate sample.
        self.rto_timer.arm(now + self.rtt.backed_off_rto_ns(self.backoff));
        self.next_send_ns = now;
        self.try_send(now, out);
    }

    /// Linux `tcp_timeout_mark_lost` with RACK: every unSACKed segment is
    /// lost, except those sent less than RACK.rtt ago (not the head): they
    /// may still be in flight, and RACK keeps watching them.
    fn timeout_mark_lost(&mut self, now: TimeNs) {
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
            }
            if f & F_LOST == 0 {
                self.segs[i].flags |= F_LOST;
                self.lost_out += 1;
            }
            self.tp.lost += 1;
            self.stats.losses_detected += 1;
            self.rtx_queue.push_back(una + i as u64);
        }
        let segs = &self.segs;
        self.tsorted.retain(|&(seq, sent)| {
            seq >= una && segs[(seq - una) as usize].flags & (F_LOST | F_SACKED) == 0 && segs[(seq - una) as usize].sent_ns == sent
        });
    }

    pub fn on_pace_timer(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        self.try_send(now, out);
    }
}

#[cfg(test)]
mod tests {
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
        synack.rwnd = 1000;
        synack.ts_ecr = 0;
        out.clear();
        s.on_ack(RTT, &synack, &mut out);
        (s, out)
    }

    /// No SACK block in [`ack`].
    const NO_SACK: u64 = u64::MAX;

    /// An ACK of everything below `cum`, SACKing segment `sack` (or none).
    fn ack(cum: u64, sack: u64) -> Packet {
        let mut a = Packet::new(0, Kind::Ack, 52);
        a.ack = cum;
        if sack != NO_SACK {
            a.sack.push(sack, sack + 1);
        }
        a.rwnd = 1000;
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
        s.on_ack(2 * RTT, &ack(1, NO_SACK), &mut out);
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
        s.on_ack(t, &ack(0, 1), &mut out);
        s.on_ack(t, &ack(0, 2), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Open, "fewer than DupThresh SACKs: no recovery yet");
        assert_eq!(seqs(&out), vec![10, 11], "limited transmit (RFC 3042): new data per SACK, cwnd unchanged");
        assert_eq!(s.tp.cwnd, 10);
        out.clear();
        s.on_ack(t, &ack(0, 3), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Recovery);
        assert_eq!(s.tp.ssthresh, 5, "Reno halves cwnd 10");
        assert_eq!(out.first().map(|p| p.seq), Some(0), "fast retransmit of the hole first");
        assert_eq!(s.stats.retransmissions, 1);
        // Remaining SACKs: PRR sends about ssthresh/prior_cwnd = 1/2 per delivery.
        out.clear();
        for k in 4..10 {
            s.on_ack(t, &ack(0, k), &mut out);
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
        s.on_ack(t + RTT, &ack(nxt, NO_SACK), &mut out);
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
            s.on_ack(t, &ack(0, k), &mut out);
        }
        assert_eq!(s.stats.retransmissions, 1);
        // Segments sent after the retransmission are SACKed one RTT later, but not 0:
        // the retransmission was lost too.
        let after: Vec<u64> = out.iter().map(|p| p.seq).filter(|&q| q >= 10).collect();
        assert!(!after.is_empty());
        for &q in &after {
            s.on_ack(t + RTT + 1, &ack(0, q), &mut out);
        }
        assert_eq!(s.stats.retransmissions, 2, "second retransmission of segment 0");
        assert_eq!(s.stats.rto_count, 0);
    }

    /// The first timer of a silent flight is the tail loss probe (PTO = 2 SRTT
    /// + 2 ms); fire it (a bulk flow probes with one new segment) and return
    /// the RTO deadline armed after it.
    fn fire_probe(s: &mut Sender) -> u64 {
        let pto = s.rto_timer.deadline.unwrap();
        assert_eq!(pto, RTT + 2 * RTT + TLP_EXTRA_NS, "PTO = 2 SRTT + 2 ms after the first send");
        let mut out = vec![];
        s.on_rto(pto, &mut out);
        assert_eq!((seqs(&out), s.stats.loss_probes, s.stats.rto_count), (vec![10], 1, 0));
        s.rto_timer.deadline.unwrap()
    }

    #[test]
    fn tail_loss_probe_fires_after_two_srtt_and_turns_a_tail_loss_into_fast_recovery() {
        // RFC 8985 7.2-7.3, Linux tcp_schedule_loss_probe / tcp_send_loss_probe.
        let cfg = SenderConfig { size_bytes: Some(10 * 1448), ..sender_cfg(EcnMode::Off) };
        let (mut s, mut out) = handshake(cfg, Box::new(Reno));
        assert_eq!(seqs(&out), (0..10).collect::<Vec<_>>());
        // 0..7 arrive; the tail 8, 9 is lost: nothing more will be ACKed.
        s.on_ack(2 * RTT, &ack(8, NO_SACK), &mut out);
        let pto = s.rto_timer.deadline.unwrap();
        assert_eq!(pto, 2 * RTT + 2 * s.srtt_ns() + TLP_EXTRA_NS, "PTO = 2 SRTT (+2 ms), well before the RTO");
        out.clear();
        s.on_rto(pto, &mut out);
        assert_eq!(seqs(&out), vec![9], "no new data: the probe retransmits the highest segment");
        assert_eq!((s.stats.loss_probes, s.stats.rto_count), (1, 0));
        // The probe is SACKed: RACK marks 8 lost and fast recovery repairs it, no RTO.
        out.clear();
        s.on_ack(pto + RTT, &ack(8, 9), &mut out);
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
        let mut r = Receiver::new(0, 1448, false, 200, None, 10);
        let mut acks = vec![];
        for p in flight.iter().filter(|p| ![2, 5, 8].contains(&p.seq)) {
            r.on_packet(RTT + RTT / 2, p, &mut acks);
        }
        // The ACK path delivers only the flight's last ACK (ACK loss, or
        // several ACKs coalesced): it alone must carry the three holes.
        let last = *acks.last().unwrap();
        let blocks: Vec<(u64, u64)> = (0..last.sack.len()).map(|i| last.sack.block(i, last.ack)).collect();
        assert_eq!((last.ack, blocks), (2, vec![(9, 10), (6, 8), (3, 5)]));
        let mut out = vec![];
        s.on_ack(2 * RTT, &last, &mut out);
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
        s.on_ack(rto + 1_000_000, &ack(1, NO_SACK), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Loss);
        assert_eq!(seqs(&out), vec![11, 12], "step 2b: new data, not segments 1, 2");
        out.clear();
        s.on_ack(rto + 2_000_000, &ack(2, NO_SACK), &mut out);
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
        let mut a = ack(1, NO_SACK);
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
        s.on_ack(rto + 1_000_000, &ack(1, NO_SACK), &mut out);
        assert_eq!(seqs(&out), vec![11, 12]);
        out.clear();
        s.on_ack(rto + 2_000_000, &ack(1, 11), &mut out);
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
        s.on_ack(rto + RTT, &ack(0, 2), &mut out);
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
            s.on_ack(t, &ack(0, k), &mut out);
        }
        assert_eq!((s.tp.ca_state, s.tp.ssthresh, s.stats.retransmissions), (CaState::Recovery, 5, 1));
        // The delayed original arrives: everything up to 10 is ACKed.
        s.on_ack(t + 1_000_000, &ack(10, NO_SACK), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Recovery, "a partial ACK: no evidence yet");
        let mut d = ack(10, NO_SACK);
        d.sack.push(0, 1); // D-SACK of the retransmission
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
        let pto = RTT + 2 * RTT + TLP_EXTRA_NS;
        let rto = fire_probe(&mut s);
        assert_eq!(rto, pto + 300_000_000, "RTO = srtt + max(4 rttvar, 200 ms) = 100 + 200 ms after the probe");
        s.on_rto(rto, &mut out);
        assert_eq!(s.tp.ca_state, CaState::Loss);
        assert_eq!(s.tp.cwnd, 1);
        assert_eq!(s.tp.ssthresh, 5);
        assert_eq!(seqs(&out), vec![0], "retransmit the head only");
        let rto2 = s.rto_timer.deadline.unwrap();
        assert_eq!(rto2 - rto, 600_000_000, "backoff doubles the RTO");
        out.clear();
        s.on_rto(rto2, &mut out);
        assert_eq!(s.rto_timer.deadline.unwrap() - rto2, 1_200_000_000);
        assert_eq!(s.stats.rto_count, 2);
        // An ACK of new data resets the backoff and slow start resumes from 1.
        s.on_ack(rto2 + RTT, &ack(1, NO_SACK), &mut out);
        assert_eq!(s.tp.cwnd, 2);
        assert_eq!(s.backoff, 0);
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
            let mut out = vec![];
            s.on_pace_timer(RTT + 1, &mut out);
            assert_eq!(out.len(), segs, "burst at {rate_bytes_per_s} B/s");
            // The next burst waits for the pacing slot of the whole burst.
            let gap = s.pace_timer.deadline.unwrap() - (RTT + 1);
            assert_eq!(gap, segs as u64 * (1448 * 1_000_000_000 / rate_bytes_per_s));
        }
    }

    /// An unpaced Reno sender with cwnd = ssthresh = `cwnd` and its 1000-segment
    /// receive window filled at RTT; then ACKs of 2 segments each, `gap_ns`
    /// apart from 2 RTT. Returns the segments each ACK released.
    fn ack_clocked_bursts(gso_max_segs: u32, cwnd: u32, gap_ns: u64, acks: u64) -> Vec<usize> {
        let (mut s, _) = handshake(SenderConfig { gso_max_segs, ..sender_cfg(EcnMode::Off) }, Box::new(Reno));
        s.tp.cwnd = cwnd;
        s.tp.ssthresh = cwnd;
        let mut out = vec![];
        s.on_pace_timer(RTT, &mut out);
        assert_eq!(s.tp.snd_nxt, 1000.min(cwnd as u64), "the first window leaves at once");
        (0..acks)
            .map(|k| {
                out.clear();
                s.on_ack(2 * RTT + k * gap_ns, &ack(2 * (k + 1), NO_SACK), &mut out);
                out.len()
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
        let rto2 = s.rto_timer.deadline.unwrap();
        s.on_rto(rto2, &mut out);
        assert_eq!((s.tp.ssthresh, s.tp.cwnd), (5, 1), "second RTO of the episode keeps ssthresh 5 (was cut to 2)");
        let rto3 = s.rto_timer.deadline.unwrap();
        s.on_rto(rto3, &mut out);
        assert_eq!(s.tp.ssthresh, 5);
        // After snd_una advances (retransmits cleared) a new RTO inside the
        // same Loss episode reduces again: ssthresh = max(cwnd / 2, 2).
        s.on_ack(rto3 + RTT, &ack(1, NO_SACK), &mut out);
        assert_eq!(s.tp.cwnd, 2);
        let rto4 = s.rto_timer.deadline.unwrap();
        s.on_rto(rto4, &mut out);
        assert_eq!(s.tp.ssthresh, 2);
    }

    #[test]
    fn receiver_window_limits_new_data() {
        let (mut s, _) = established();
        let mut out = vec![];
        let mut a = ack(10, NO_SACK);
        a.rwnd = 12;
        s.on_ack(2 * RTT, &a, &mut out);
        assert_eq!(s.tp.snd_nxt, 22, "never beyond snd_una + rwnd");
    }

    #[test]
    fn delivery_rate_sample_matches_ack_clock() {
        // One segment acked per 1 ms for a 10-packet window: delivered/interval = 1 pkt/ms.
        let (mut s, _) = established();
        let mut out = vec![];
        for k in 1..=10u64 {
            s.on_ack(2 * RTT + k * 1_000_000, &ack(k, NO_SACK), &mut out);
        }
        // tcp_rate.c: the last sample covers the 10 packets delivered since the
        // flight was sent (delivered_mstamp = connection start, at the SYN-ACK):
        // interval = max(send phase 0, ack phase RTT + 10 ms).
        assert_eq!(s.tp.delivered, 10);
        assert_eq!(s.rate_delivered, 10);
        assert_eq!(s.rate_interval_ns, (RTT + 10_000_000) as i64);
    }

    fn ece_ack(cum: u64) -> Packet {
        let mut a = ack(cum, NO_SACK);
        a.ece = true;
        a
    }

    #[test]
    fn classic_ecn_reduces_once_per_window_and_signals_cwr() {
        let (mut s, first) = established_with(EcnMode::Classic);
        assert!(first.iter().all(|p| p.ecn == Ecn::Ect0 && !p.cwr), "new data is ECT(0)");
        let mut out = vec![];
        s.on_ack(2 * RTT, &ece_ack(1), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Cwr);
        assert_eq!((s.stats.ecn_reductions, s.tp.ssthresh), (1, 5), "Reno's ssthresh: half of 10");
        assert_eq!(s.tp.delivered_ce, 1);
        // PRR (prior_cwnd 10, ssthresh 5): one new segment, and it carries CWR.
        assert_eq!(seqs(&out), vec![10]);
        assert!(out[0].cwr);
        // More ECE within the same window: no second reduction; CWR only once.
        for k in 2..=10 {
            s.on_ack(2 * RTT + k, &ece_ack(k), &mut out);
        }
        assert_eq!(s.stats.ecn_reductions, 1);
        assert_eq!(s.tp.delivered_ce, 10);
        assert_eq!(out.iter().filter(|p| p.cwr).count(), 1);
        assert_eq!(s.tp.ca_state, CaState::Cwr, "held until data above high_seq is ACKed");
        assert_eq!(s.tp.cwnd, 5, "PRR brought cwnd down to ssthresh");
        // The CWR segment (10) is ACKed without ECE: CWR ends at ssthresh.
        s.on_ack(3 * RTT, &ack(11, NO_SACK), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Open);
        assert_eq!(s.stats.recoveries, 0);
        // A new ECE in the next window: a second reduction.
        let before = s.tp.cwnd;
        s.on_ack(3 * RTT + 1, &ece_ack(12), &mut out);
        assert_eq!(s.stats.ecn_reductions, 2);
        assert_eq!(s.tp.ssthresh, (before / 2).max(2));
    }

    /// Reno that records every rate sample it is given.
    struct RecordRs(std::sync::Arc<std::sync::Mutex<Vec<RateSample>>>);
    impl CongestionControl for RecordRs {
        fn name(&self) -> &'static str {
            "record"
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
    fn rate_sample_counts_ce_over_its_interval_and_flags_this_ack() {
        // google/bbr v2alpha tcp_rate.c: rs->delivered_ce = tp->delivered_ce -
        // (tp->delivered_ce when the sampled packet was sent), over the same
        // interval as rs->delivered; rs->is_ece is this ACK's FLAG_ECE.
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (mut s, mut out) = handshake(sender_cfg(EcnMode::Scalable), Box::new(RecordRs(log.clone())));
        // First flight (0..10): odd segments' ACKs carry ECE, one ACK per segment.
        for k in 1..=10u64 {
            let a = if k % 2 == 0 { ece_ack(k) } else { ack(k, NO_SACK) };
            s.on_ack(2 * RTT + k * 1_000_000, &a, &mut out);
        }
        let rs = *log.lock().unwrap().last().unwrap();
        assert_eq!((rs.delivered, rs.delivered_ce, rs.is_ece), (10, 5, true));
        assert_eq!(s.tp.delivered_ce, 5);
        // An ACK without ECE: is_ece false, but the sample still spans the CE
        // deliveries since its packet was sent (segment 10 was sent after the
        // ACK of segment 0, when delivered_ce was 0).
        s.on_ack(3 * RTT, &ack(11, NO_SACK), &mut out);
        let rs = *log.lock().unwrap().last().unwrap();
        assert!(!rs.is_ece);
        assert_eq!((rs.delivered, rs.delivered_ce), (10, 5));
    }

    #[test]
    fn ecn_codepoints_of_retransmissions_and_ece_ignored_when_off() {
        // Classic: a retransmission is Not-ECT (RFC 3168 6.1.5, Linux tcp_ecn_send).
        let (mut s, _) = established_with(EcnMode::Classic);
        let mut out = vec![];
        for k in 1..=3 {
            s.on_ack(2 * RTT, &ack(0, k), &mut out);
        }
        let rtx: Vec<&Packet> = out.iter().filter(|p| p.seq == 0).collect();
        assert_eq!(rtx.len(), 1);
        assert_eq!(rtx[0].ecn, Ecn::NotEct);
        // Scalable: every data segment is ECT(1), retransmissions included.
        let (mut s, first) = established_with(EcnMode::Scalable);
        assert!(first.iter().all(|p| p.ecn == Ecn::Ect1));
        out.clear();
        for k in 1..=3 {
            s.on_ack(2 * RTT, &ack(0, k), &mut out);
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
        synack.rwnd = 1000;
        s.on_ack(RTT, &synack, &mut out);
        // Segment 0 is lost; SACKs of 1, 2, 3: the third marks 0 lost (RACK).
        for k in 1..=3 {
            s.on_ack(2 * RTT, &ack(0, k), &mut out);
        }
        let last = *rec.0.lock().unwrap().last().unwrap();
        assert_eq!(s.tp.lost, 1);
        assert_eq!(last.tx_in_flight, 4, "segment 3 left with segments 0-2 in flight");
        assert_eq!(last.lost, 1, "one segment marked lost since segment 3 was sent");
        assert_eq!(last.losses, 1);
    }
}
