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
//!   backoff, restarted by an ACK that advances snd_una and by a retransmission
//!   of snd_una's segment (`tcp_xmit_retransmit_queue`), `tcp_enter_loss`: every
//!   unSACKed segment not sent within the last RACK.rtt is marked lost
//!   (`tcp_timeout_mark_lost`), cwnd = in_flight + 1.
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
//!   leave back-to-back, as Linux sends one TSO packet per pacing slot; an skb
//!   leaving c ns after its slot takes min(c, half its pacing time) off the
//!   next slot (`tcp_update_skb_after_send`'s credit). Window-based CCAs that pace use
//!   `tcp_update_pacing_rate`: 200 % (slow start) or 120 % (congestion
//!   avoidance) of cwnd x mss / srtt.
//! - Receiver window: never send beyond snd_una + rwnd.
//! - PSH (Linux `__tcp_transmit_skb`, commit 051ba67447de "tcp: force a PSH
//!   flag on TSO packets"): an skb of new data of more than one segment
//!   (`tcp_skb_pcount(skb) > 1`) carries PSH, which GSO leaves on its last
//!   segment (`tcp_gso_segment`); a one-segment skb carries none. The
//!   application's pushes (`tcp_push` at the end of each write,
//!   `forced_push`) are not modelled: the application never ends a write.
//! - An skb's segments after its first carry `Packet::skb_next`: with
//!   offloads off GSO splits the skb just before the device
//!   (net/core/dev.c `validate_xmit_skb`), whose frames leave back to back;
//!   the host noise (lines.rs) delays the skb, not each frame.
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
//! - The retransmission timer (RTO, loss probe, RACK's reorder timer) is
//!   Linux's jiffy timer `icsk_retransmit_timer`: its timeout in whole jiffies
//!   (`usecs_to_jiffies`, HZ = 250: 4 ms; the RTO as `icsk_rto`), and it fires
//!   at the timer wheel's tick after `jiffies + timeout` (cc/mod.rs
//!   `timer_list_fires_at_ns`).
//! Files: this one (state, send path, ACK processing, timers), sender/scoreboard.rs
//! (SACK tagging, D-SACK, RACK loss marking), sender/tsorted.rs (the
//! send-ordered list of outstanding transmissions RACK walks),
//! sender/recovery.rs (the recovery state machine, undo, PRR, CWR), sender/tests.rs.
//! Simplifications are listed in docs/fidelity.md (Sender).

use crate::cc::{
    timer_list_fires_at_ns, usecs_to_jiffies, AckSample, CaEvent, CaState, CongestionControl, Hooks, RateSample, TcpCc, INFINITE_SSTHRESH,
    NS_PER_KERNEL_JIFFY,
};
use crate::config::EcnMode;
use crate::engine::{TimeNs, Timer};
use crate::packet::Ecn;
use crate::packet::{sack_channel, Kind, Packet, SackChannel, SackOpt, MAX_SACK_BLOCKS};
use crate::prefetch::prefetch;
use crate::ring::Ring;
use crate::tcp::rtt::{tsopt_rtt_ns, RttEstimator, RTO_INIT_NS, RTO_MAX_NS};

mod recovery;
mod scoreboard;
#[cfg(test)]
mod tests;
mod tsorted;

use tsorted::TxList;

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
/// Pacing charges an skb only once this many data segments have been sent,
/// its own included (`tcp_update_skb_after_send`: `tp->data_segs_out >= 10`,
/// "original sch_fq does not pace first 10 MSS"): the initial window leaves
/// at once.
pub const UNPACED_DATA_SEGS: u64 = 10;
/// TLP: extra probe timeout with more than one packet out, and RACK's reorder
/// timer's (Linux TCP_TIMEOUT_MIN_US, 2 ms).
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
/// Scoreboard entries allocated at the first send (`segs`: it doubles when
/// full and shrinks to twice its length when at most a quarter full, not
/// below this; ring.rs `shrink_if_sparse`). A FIFO writes its free slots
/// next, so a flow cycles through all of them whatever its window: with
/// thousands of flows of a few segments each, the first allocation is most
/// of a flow's memory. Below 32, windows that move across it made the ring
/// grow and shrink often (docs/benchmarks.md).
const SCOREBOARD_FIRST_SEGS: usize = 32;

const F_SACKED: u8 = 1;
const F_LOST: u8 = 2;
/// A retransmission of this segment is outstanding (Linux TCPCB_SACKED_RETRANS).
const F_RETRANS: u8 = 4;
/// The segment was retransmitted at least once (Linux TCPCB_EVER_RETRANS).
const F_EVER_RETRANS: u8 = 8;
const F_APP_LIMITED: u8 = 16;
/// Its delivery was already counted in a rate sample (Linux clears delivered_mstamp).
const F_RATE_DONE: u8 = 32;
/// Retransmitted, but every retransmission was in the nanosecond of its first
/// transmission, so `sent_ns` is still that time (sender/tsorted.rs).
const F_FIRST_SEND_NS: u8 = 64;

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
    /// tcp_rate (BBRv2 `tx.lost`): the low 32 bits of `tp->lost` when sent
    /// (u32 as in Linux). Read only as `tp.lost - tx_lost` in wrapping u32
    /// arithmetic, exact while that difference is below 2^32: `tp.lost` only
    /// grows and debug builds assert it stays below 2^32 where it is counted
    /// (sender/scoreboard.rs).
    tx_lost: u32,
    /// tcp_rate (BBRv2 `tx.delivered_ce`): the low 32 bits of
    /// `tp->delivered_ce` when sent. Read only as the u32 of
    /// `tp.delivered_ce - tx_delivered_ce` (`RateSample::delivered_ce`), which
    /// the low 32 bits give exactly (`delivered_ce` only grows).
    tx_delivered_ce: u32,
    flags: u8,
}

// Four u64, three u32 and the flags: 48 bytes a scoreboard entry (56 with
// the two counters at u64), read once per segment by the cumulative ACK.
const _: () = assert!(std::mem::size_of::<Seg>() == 48);

/// Bytes at the start of a `Sender` that an ACK and the sends after it touch
/// (all fields before `stats` and its first seven counters; `Sender`).
pub const SENDER_HOT_BYTES: usize = std::mem::offset_of!(Sender, stats) + std::mem::offset_of!(SenderStats, losses_detected);

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
    /// The host stack's time per skb, ns (`stamp_skbs`; 0 = none).
    pub skb_stack_ns: u64,
}

/// A sender's counters. The first seven (64 bytes) change on every ACK or
/// send (or retransmission); the others rarely (`repr(C)`: in this order; `Sender`).
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct SenderStats {
    pub rtt_sum_ns: u128,
    pub sent_packets: u64,
    pub rtt_samples: u64,
    pub min_rtt_ns: u64,
    /// TSO/GSO bursts (skbs) of new data an unpaced sender sent, and how
    /// often `tcp_tso_should_defer` held data back (see `unpaced_skb_segs`).
    pub tso_bursts: u64,
    pub tso_deferrals: u64,
    pub retransmissions: u64,
    pub losses_detected: u64,
    pub rto_count: u64,
    pub recoveries: u64,
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
}

/// A TCP sender. Its fields are laid out in declaration order (`repr(C)`):
/// what an ACK and the sends after it read and write comes first, in
/// [`SENDER_HOT_BYTES`], and the rarely used state (recovery, undo, SACK
/// history, the handshake, most counters) after it. With thousands of flows
/// an ACK finds its sender out of the cache, and Rust's own layout, which
/// orders fields by alignment, mixed the per-ACK fields with rarely used
/// ones over the sender's ~17 cache lines (docs/benchmarks.md, "Shared
/// delay lines").
#[repr(C)]
pub struct Sender {
    // ---- What an ACK and the sends after it touch (`SENDER_HOT_BYTES`).
    pub tp: TcpCc,
    pub cc: Box<dyn CongestionControl>,
    segs: Ring<Seg>,
    // RACK state (RFC 8985 6.1).
    rack_xmit_ns: u64,
    rack_end_seq: u64,
    rack_rtt_ns: u64,
    /// Outstanding transmissions in send order (Linux `tsorted_sent_queue`, sender/tsorted.rs).
    tsorted: TxList,
    /// Segments marked lost, waiting to be retransmitted, in marking order;
    /// the lowest one that needs it goes first (`next_retransmission`).
    rtx_queue: Ring<u64>,
    pub rto_timer: Timer,
    pub pace_timer: Timer,
    pub reo_timer: Timer,
    rtt: RttEstimator,
    ts_recent: u64,
    // tcp_rate.c connection state.
    first_tx_ns: u64,
    rate_delivered: i64,
    rate_interval_ns: i64,
    // tcp_cwnd_validate state (with `max_packets_out`, `cwnd_limited_flag`).
    cwnd_usage_seq: u64,
    /// Time of the last transmission (`tp->tcp_wstamp_ns` of an unpaced flow).
    last_xmit_ns: u64,
    /// Most segments per TSO burst: a 64 KB GSO packet (at least 1) and the
    /// device's `gso_max_segs` (`tso_segs`' upper bound, fixed by the MSS).
    tso_max_segs: u64,
    /// Earliest departure of the next paced skb (`tp->tcp_wstamp_ns`).
    next_send_ns: u64,
    /// snd_nxt when the outstanding probe was sent, 0 = none (`tlp_high_seq`).
    tlp_high_seq: u64,
    // Recovery.
    high_seq: u64,
    /// SACK options of the ACKs that carry one, from the flow's receiver (packet.rs).
    sack_rx: SackChannel,
    packets_out: u32,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Packets in flight, `packets_out - (sacked_out + lost_out) + retrans_out`
    /// (Linux `tcp_packets_in_flight`), kept up to date at every change of
    /// those counters: read several times per ACK and per send.
    pipe: u32,
    backoff: u32,
    /// RTOs since snd_una last advanced (Linux `icsk_retransmits`).
    retransmits: u32,
    rwnd: u32,
    /// Segments of the paced skb being sent so far.
    pace_skb_segs: u32,
    /// How late the paced skb being sent left against its earliest departure,
    /// not yet taken off its pacing time (`tcp_update_skb_after_send`'s credit).
    pace_credit_ns: u64,
    max_packets_out: u32,
    /// snd_una when the reduction that may be undone began (None = no undo).
    /// In the hot part although rarely used: the `FlowSender` enum keeps its
    /// variant in the tag of one of the sender's `Option<u64>`s, and rustc
    /// chose this one when it was among the cold fields (every match on the
    /// enum then read a cold line); now it chooses `rto_timer`'s (the
    /// machine code of sim.rs `flush_sender_out`).
    undo_marker: Option<u64>,
    pub cfg: SenderConfig,
    /// A bulk application's (no size, no rate cap) stop time (`u64::MAX`:
    /// none), 0 for any other: before it, `has_new_data` holds without
    /// reading the configuration's three `Option`s.
    bulk_until_ns: TimeNs,
    pub state: ConnState,
    /// `cc.hooks()`, asked once: the optional hooks the CCA implements (the
    /// others' calls are skipped, cc/mod.rs `Hooks`).
    hooks: Hooks,
    /// Whether the CCA takes over cwnd (`cong_control`); learnt on the first ACK.
    cc_controls: bool,
    /// The retransmission timer is armed as a tail loss probe (ICSK_TIME_LOSS_PROBE).
    tlp_armed: bool,
    cwnd_limited_flag: bool,
    /// Set CWR on the next new data segment (Linux TCP_ECN_QUEUE_CWR).
    queue_cwr: bool,
    /// F-RTO step 2b: send new data, not retransmissions, on this ACK.
    frto_send_new: bool,
    /// The outstanding probe was a retransmission (`tlp_retrans`).
    tlp_retrans: bool,
    /// Its counters read on every ACK and send first (`SenderStats`).
    pub stats: SenderStats,
    // ---- Rarely used: recovery, undo, SACK history, the handshake.
    prr_delivered: u32,
    prr_out: u32,
    // Undo state (Linux tcp_sock: undo_marker, undo_retrans, prior_ssthresh,
    // retrans_stamp, frto, dsack_dups, recv_sack_cache; `undo_marker` above).
    /// Retransmissions not yet shown spurious by a D-SACK (-1 = none sent).
    undo_retrans: i64,
    /// Time of the episode's first retransmission, 0 = none yet.
    retrans_stamp: u64,
    /// D-SACKed segments reported (checked against retransmissions sent).
    dsack_dups: u64,
    syn_sent_ns: u64,
    start_ns: u64,
    /// ssthresh to restore on undo (0 = undo of ssthresh not allowed).
    prior_ssthresh: u32,
    syn_retries: u32,
    /// Valid SACK blocks of the previous ACK, sorted (`recv_sack_cache`):
    /// their segments are already tagged, so a walk skips them.
    sack_cache: [(u64, u64); MAX_SACK_BLOCKS],
    sack_cache_len: usize,
    /// Scratch space to rebuild `tsorted` after an undo (kept to reuse its allocation).
    scratch: Vec<(u64, u64)>,
    /// F-RTO (RFC 5682) armed for this Loss episode.
    frto: bool,
    /// Tests: free every ACKed segment through the general loop.
    #[cfg(test)]
    test_general_ack_path: bool,
    /// Tests: send every segment through `send`'s loop (no `transmit_new_run`).
    #[cfg(test)]
    test_general_send_path: bool,
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

/// An [`AckAcc`] RTT of none: after every RTT (a plain value, where an
/// `Option` took a tag write per accumulator per ACK and a tag test per read).
const NO_RTT: u64 = u64::MAX;

/// Per-ACK accumulators of the cumulative-ACK and SACK walks.
struct AckAcc {
    /// Segments newly ACKed or SACKed.
    newly_delivered: u32,
    /// The rate sample's segment so far (None: no delivery sampled yet). An
    /// Option, so that a new accumulator per ACK writes one tag instead of
    /// zeroing the snapshot, and rate_gen reads it in place.
    rate: Option<RateAcc>,
    /// RTT of the oldest cumulatively ACKed, never retransmitted segment
    /// (`NO_RTT`: none, as the three below).
    seq_rtt: u64,
    /// RTT of the newest cumulatively ACKed, never retransmitted segment.
    ca_rtt: u64,
    /// RTT of the oldest newly SACKed, never retransmitted segment (`first_sackt`).
    sack_rtt: u64,
    /// RTT of the newest newly SACKed, never retransmitted segment
    /// (`last_sackt`): `ca_rtt_us` whenever there is one, even under Karn.
    sack_ca_rtt: u64,
    /// FLAG_RETRANS_DATA_ACKED: the cumulative ACK covers a segment that was
    /// ever retransmitted (SACKed or not), so Karn's rule drops its RTTs.
    retrans_data_acked: bool,
    /// RACK.rtt candidates (`NO_RTT`: none): the last cumulatively ACKed
    /// segment's RTT, and the highest newly SACKed segment's with its
    /// sequence number (`take_rack_rtt`).
    rack_cum_rtt: u64,
    rack_sack_rtt: u64,
    rack_sack_seq: u64,
    flags: AckFlags,
}

impl Default for AckAcc {
    fn default() -> Self {
        AckAcc {
            newly_delivered: 0,
            rate: None,
            seq_rtt: NO_RTT,
            ca_rtt: NO_RTT,
            sack_rtt: NO_RTT,
            sack_ca_rtt: NO_RTT,
            retrans_data_acked: false,
            rack_cum_rtt: NO_RTT,
            rack_sack_rtt: NO_RTT,
            rack_sack_seq: 0,
            flags: AckFlags::default(),
        }
    }
}

/// What an ACK delivered, as the phases after `account_ack` read it.
struct AckDelivery {
    /// Segments newly ACKed, SACKed or D-SACKed.
    newly_delivered: u32,
    /// The ACK echoes congestion (ECE on an ECN-capable connection).
    ece: bool,
    /// The CCA's RTT sample of the ACK, ns (-1: none).
    rtt_ns: i64,
}

/// `rate_gen`'s result: the rate sample's delivered packets and interval, ns (-1: none).
#[derive(Clone, Copy)]
struct RateGen {
    delivered: i64,
    interval_ns: i64,
}

/// Per-ACK bookkeeping of tcp_rate.c `tcp_rate_skb_delivered`: the
/// sampled segment's scoreboard entry as it was delivered (one 48-byte
/// copy per ACK), read as its sending-time snapshot.
struct RateAcc(Seg);

impl RateAcc {
    /// The sending-time snapshot of a delivered segment (`tcp_rate_skb_delivered`).
    #[inline]
    fn of(seg: &Seg) -> RateAcc {
        RateAcc(*seg)
    }

    /// `tp->delivered` when the segment was sent.
    fn prior_delivered(&self) -> u64 {
        self.0.delivered
    }

    /// `tp->delivered_mstamp` when the segment was sent.
    fn prior_ns(&self) -> u64 {
        self.0.delivered_ns
    }

    /// The segment's (last) send time: the next sampling epoch's start
    /// (`tp->first_tx_mstamp = tx_tstamp`).
    fn send_ns(&self) -> u64 {
        self.0.sent_ns
    }

    /// The send phase of the sample (`rs->interval_us` before the ACK phase).
    fn snd_interval_ns(&self) -> i64 {
        self.0.sent_ns as i64 - self.0.first_tx_ns as i64
    }

    fn is_app_limited(&self) -> bool {
        self.0.flags & F_APP_LIMITED != 0
    }

    fn is_retrans(&self) -> bool {
        self.0.flags & F_RETRANS != 0
    }
}

/// The skb of new data that the last `skb_segs` packets of `out` form is
/// complete: with more than one segment its last one carries PSH (Linux
/// `__tcp_transmit_skb`: `if (tcp_skb_pcount(skb) > 1) tcb->tcp_flags |=
/// TCPHDR_PSH`, kept on the last segment by `tcp_gso_segment`).
#[inline(always)]
fn end_skb(out: &mut [Packet], skb_segs: &mut u32) {
    if *skb_segs > 1 {
        if let Some(p) = out.last_mut() {
            p.set_psh(true);
        }
    }
    *skb_segs = 0;
}

/// The TSvals of the skbs one send leaves with (`packets`, in order): the
/// k-th skb's (k from 0) `k x stack_ns` later. Linux stamps each skb as it
/// leaves TCP (`__tcp_transmit_skb`: `skb_mstamp_ns` from the clock, the
/// TSval its ms), and the stack takes some us per skb: on the testbed
/// (tracepoint net:net_dev_queue, consecutive skbs of one flow's flight)
/// the skbs of a flight reach the device a median 9 us apart at lp/lp 10M
/// 50ms (458 gaps; one-segment skbs) and 12 us at cubic/cubic 20M 50ms
/// (1 047; GSO skbs), so a flight's last skb now and then carries the next
/// ms's TSval (docs/linux-ports.md "TCP-LP"). The frames of one skb share
/// its stamp (`Packet::skb_next`).
fn stamp_skbs(packets: &mut [Packet], stack_ns: u64) {
    let mut k = 0u64;
    for (i, p) in packets.iter_mut().enumerate() {
        if i > 0 && !p.skb_next() {
            k += 1;
        }
        p.ts_val += k * stack_ns;
    }
}

/// The segment just sent follows the one before it in its skb: GSO
/// splits the skb into MTU frames just before the device, which sends them
/// back to back (net/core/dev.c `validate_xmit_skb` -> `skb_gso_segment`,
/// then `dev_hard_start_xmit` hands the frames to the driver one after the
/// other; `Packet::skb_next`, lines.rs `SKB_FRAME_GAP_NS`).
#[inline(always)]
fn mark_skb_next(out: &mut [Packet]) {
    if let Some(p) = out.last_mut() {
        p.set_skb_next(true);
    }
}

impl Sender {
    pub fn new(cfg: SenderConfig, cc: Box<dyn CongestionControl>) -> Sender {
        let mut tp = TcpCc::new(cfg.mss_bytes, cfg.wire_bytes, cfg.init_cwnd_pkts);
        tp.pacing = cfg.pacing || cc.needs_pacing();
        let hooks = cc.hooks();
        tp.is_cwnd_limited = false;
        let rtt = RttEstimator::with_rto_min(cfg.rto_min_ns);
        let tso_max_segs = (GSO_MAX_BYTES / cfg.mss_bytes as u64).max(1).min(cfg.gso_max_segs as u64);
        let bulk = cfg.size_bytes.is_none() && cfg.rate_cap_bps.is_none();
        Sender {
            bulk_until_ns: if bulk { cfg.stop_ns.unwrap_or(u64::MAX) } else { 0 },
            cfg,
            cc,
            tp,
            state: ConnState::Idle,
            stats: SenderStats { min_rtt_ns: 0, ..Default::default() },
            rto_timer: Timer::default(),
            pace_timer: Timer::default(),
            reo_timer: Timer::default(),
            segs: Ring::with_capacity(SCOREBOARD_FIRST_SEGS),
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            pipe: 0,
            tsorted: TxList::with_capacity(4),
            rtx_queue: Ring::new(),
            rack_xmit_ns: 0,
            rack_end_seq: 0,
            rack_rtt_ns: 0,
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            cc_controls: false,
            hooks,
            rtt,
            backoff: 0,
            retransmits: 0,
            tlp_armed: false,
            tlp_high_seq: 0,
            tlp_retrans: false,
            rwnd: 10,
            next_send_ns: 0,
            pace_skb_segs: 0,
            pace_credit_ns: 0,
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
            tso_max_segs,
            sack_rx: sack_channel(),
            #[cfg(test)]
            test_general_ack_path: false,
            #[cfg(test)]
            test_general_send_path: false,
        }
    }

    /// Prefetch what the next ACK reads first outside the sender: the CCA's
    /// state and the oldest scoreboard segment, which a cumulative ACK frees
    /// (separate allocations; prefetch.rs).
    pub(crate) fn prefetch_ack_state(&self) {
        prefetch(&*self.cc);
        if let Some(oldest) = self.segs.front() {
            prefetch(oldest);
        }
    }

    /// Packets in flight (Linux `tcp_packets_in_flight`). Tests check on
    /// every call that the maintained `pipe` equals the counters' formula.
    #[inline]
    pub fn in_flight(&self) -> u32 {
        #[cfg(test)]
        assert_eq!(self.pipe, self.in_flight_from_counters(), "pipe out of step with the scoreboard counters");
        self.pipe
    }

    /// `tcp_packets_in_flight` from the scoreboard counters.
    #[cfg(test)]
    fn in_flight_from_counters(&self) -> u32 {
        self.packets_out - (self.sacked_out + self.lost_out) + self.retrans_out
    }

    pub fn srtt_ns(&self) -> u64 {
        self.rtt.srtt_ns
    }

    /// The channel the flow's receiver sends its SACK options through (packet.rs).
    pub fn sack_channel(&self) -> SackChannel {
        self.sack_rx.clone()
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
    ///
    /// A bulk flow (no size, no rate cap: every flow of the S0 grid) is
    /// tested inline: try_send asks once per segment, and the call with the
    /// general case cost more than the test.
    #[inline]
    fn has_new_data(&mut self, now: TimeNs) -> bool {
        if now < self.bulk_until_ns {
            // A bulk flow before its stop: segs_available is unbounded.
            return true;
        }
        // (A bulk flow at or after its stop too: false, from the stop time.)
        self.has_new_limited_data(now)
    }

    /// `has_new_data` of a finite or rate-capped application.
    #[inline(never)]
    fn has_new_limited_data(&mut self, now: TimeNs) -> bool {
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
        self.rto_timer.arm(self.jiffy_timer_fires_ns(now, rto / NS_PER_KERNEL_JIFFY));
    }

    fn on_synack(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) {
        self.state = ConnState::Established;
        // Timestamps make the SYN RTT unambiguous even after a SYN retry.
        let sample = now.saturating_sub(p.ts_ecr).max(1);
        self.rtt_sample(now, sample, sample);
        self.rwnd = p.rwnd();
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

    /// One RTT measurement: `sample_ns` (`seq_rtt_us`) into srtt and the
    /// RTO (`tcp_rtt_estimator`), `ca_rtt_ns` into min_rtt (`tcp_update_rtt_min`, rtt.rs).
    fn rtt_sample(&mut self, now: TimeNs, sample_ns: u64, ca_rtt_ns: u64) {
        self.rtt.update(sample_ns);
        self.tp.srtt_ns = self.rtt.srtt_ns;
        self.tp.min_rtt_ns = self.rtt.min_rtt.update(now, ca_rtt_ns.max(1));
        self.stats.min_rtt_ns = self.tp.min_rtt_ns;
        self.stats.rtt_sum_ns += sample_ns as u128;
        self.stats.rtt_samples += 1;
    }

    // ------------------------------------------------------------------- send

    /// Send as much as cwnd, rwnd, the application and pacing allow.
    #[inline]
    pub fn try_send(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.send(now, out);
    }

    /// `try_send`; true if it armed the loss probe (after sending), which
    /// then supersedes any timer armed before it.
    fn send(&mut self, now: TimeNs, out: &mut Vec<Packet>) -> bool {
        let first = out.len();
        let armed = self.send_skbs(now, out);
        if self.cfg.skb_stack_ns > 0 {
            stamp_skbs(&mut out[first..], self.cfg.skb_stack_ns);
        }
        armed
    }

    fn send_skbs(&mut self, now: TimeNs, out: &mut Vec<Packet>) -> bool {
        if self.state != ConnState::Established {
            return false;
        }
        // F-RTO step 2b (tcp_xmit_recovery with REXMIT_NEW): new data first;
        // if none can go, F-RTO ends and the retransmissions go instead.
        let frto_new = std::mem::take(&mut self.frto_send_new);
        let mut sent_any = false;
        let mut cwnd_limited = false;
        let mut burst_quota = 0u32;
        // Segments of the skb of new data being sent (`tcp_skb_pcount`).
        let mut skb_segs = 0u32;
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
                self.pace_skb_segs = 0;
                end_skb(out, &mut skb_segs);
            } else if !self.tp.pacing && burst_quota == 0 && rtx.is_none() {
                match self.unpaced_skb_segs(now) {
                    Ok(segs) => burst_quota = segs,
                    Err(deferred_by_cwnd) => {
                        cwnd_limited |= deferred_by_cwnd;
                        break;
                    }
                }
                end_skb(out, &mut skb_segs);
                if let Some(n) = self.new_run_len(burst_quota) {
                    // The skb's segments in one go, as this loop would send them one by one.
                    self.transmit_new_run(now, n, out);
                    burst_quota -= n;
                    skb_segs = n;
                    sent_any = true;
                    continue;
                }
            }
            if rtx.is_some() {
                // A retransmission is an skb of its own.
                self.pace_skb_segs = 0;
                end_skb(out, &mut skb_segs);
            }
            burst_quota = burst_quota.saturating_sub(1);
            self.transmit(now, rtx, false, out);
            if rtx.is_none() && skb_segs > 0 {
                mark_skb_next(out);
            }
            skb_segs += rtx.is_none() as u32;
            sent_any = true;
        }
        self.pace_skb_segs = 0;
        end_skb(out, &mut skb_segs);
        if frto_new && self.tp.snd_nxt <= self.high_seq {
            self.frto = false;
            return self.send_skbs(now, out);
        }
        cwnd_limited |= self.in_flight() >= self.tp.cwnd;
        if sent_any || cwnd_limited {
            self.cwnd_validate(cwnd_limited);
        }
        // tcp_write_xmit: one loss probe per tail-loss episode.
        sent_any && self.schedule_loss_probe(now, false)
    }

    /// One GSO skb of new data of an unpaced flow (Linux `tcp_write_xmit`):
    /// `Ok(segments)` to send back to back now (`tcp_cwnd_test`: at most
    /// half the cwnd and what cwnd allows, at most `tso_segs`), or
    /// `Err(cwnd_limited)` when `tcp_tso_should_defer` holds the data back
    /// for a larger burst. With TSO/GSO off (`gso_max_segs` = 1) every
    /// segment goes at once (the model without TSO).
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

    /// When the retransmission timer (a jiffy timer) armed now for `jiffies`
    /// jiffies fires: at the timer wheel's tick after `jiffies + n` on the
    /// host's clock (cc/mod.rs `timer_list_fires_at_ns`).
    #[inline]
    fn jiffy_timer_fires_ns(&self, now: TimeNs, jiffies: u64) -> TimeNs {
        let phase = self.tp.clock_phase_ns;
        timer_list_fires_at_ns(now + phase, jiffies) - phase
    }

    /// The RTO after the backoff as Linux keeps it: `icsk_rto` in whole
    /// jiffies (`__tcp_set_rto`: `usecs_to_jiffies(srtt + rttvar)`), shifted
    /// by the backoff and capped at TCP_RTO_MAX (`inet_csk_rto_backoff`).
    fn rto_jiffies(&self) -> u64 {
        let max_jiffies = RTO_MAX_NS / NS_PER_KERNEL_JIFFY;
        let rto_jiffies = usecs_to_jiffies(self.rtt.rto_ns()).min(max_jiffies);
        (rto_jiffies << self.backoff.min(20)).min(max_jiffies)
    }

    /// `rto_jiffies` in ns.
    fn rto_span_ns(&self) -> u64 {
        self.rto_jiffies() * NS_PER_KERNEL_JIFFY
    }

    /// The retransmission timer set to the RTO now (`tcp_reset_xmit_timer`
    /// with `ICSK_TIME_RETRANS`).
    #[inline]
    fn rto_deadline_ns(&self, now: TimeNs) -> TimeNs {
        self.jiffy_timer_fires_ns(now, self.rto_jiffies())
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
        let timeout = usecs_to_jiffies(2 * self.rtt.srtt_ns + extra);
        let rto_jiffies = self.rto_jiffies();
        // The RTO in whole jiffies: `usecs_to_jiffies(jiffies_to_usecs(icsk_rto))` is itself.
        let timeout = if advancing_rto {
            match rto_jiffies {
                0 => timeout,
                rto => timeout.min(rto),
            }
        } else {
            // tcp_rto_delta_us: the RTO counted from the oldest outstanding send.
            let head_sent = self.segs.front().map_or(now, |g| g.sent_ns);
            match (head_sent + rto_jiffies * NS_PER_KERNEL_JIFFY).saturating_sub(now) {
                0 => timeout,
                rto_delta => timeout.min(usecs_to_jiffies(rto_delta)),
            }
        };
        self.rto_timer.arm(self.jiffy_timer_fires_ns(now, timeout));
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
        self.rto_timer.arm(self.rto_deadline_ns(now));
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
            if self.needs_retransmission(seq) {
                self.lowest_retransmission_first();
                return self.rtx_queue.front().copied();
            }
            self.rtx_queue.pop_front();
        }
        None
    }

    /// Segment `seq` is marked lost, not SACKed and has no retransmission
    /// outstanding (`tcp_xmit_retransmit_queue`'s test).
    fn needs_retransmission(&self, seq: u64) -> bool {
        if seq < self.tp.snd_una {
            return false;
        }
        let f = self.segs[(seq - self.tp.snd_una) as usize].flags;
        f & F_LOST != 0 && f & (F_RETRANS | F_SACKED) == 0
    }

    /// Linux `tcp_xmit_retransmit_queue` walks the retransmission queue in
    /// sequence order: RACK marks losses in send order (a lost
    /// retransmission after an original sent before it), so the lowest
    /// sequence number that needs a retransmission moves to the front.
    fn lowest_retransmission_first(&mut self) {
        let mut best = 0;
        for i in 1..self.rtx_queue.len() {
            let seq = self.rtx_queue[i];
            if seq < self.rtx_queue[best] && self.needs_retransmission(seq) {
                best = i;
            }
        }
        if best != 0 {
            let front = self.rtx_queue[0];
            self.rtx_queue[0] = self.rtx_queue[best];
            self.rtx_queue[best] = front;
        }
    }

    /// Linux `tcp_xmit_retransmit_queue` (net/ipv4/tcp_output.c): retransmitting
    /// the head of the retransmission queue (snd_una's segment) restarts the
    /// RTO, `icsk_rto` (backed off) from now, unless RACK's reordering timer
    /// holds the timer slot (`icsk_pending == ICSK_TIME_REO_TIMEOUT`; Linux's
    /// RTO, probe and reordering timers share one slot, so the RTO armed here
    /// replaces a pending probe). Otherwise the RTO would still run from the
    /// last ACK that advanced snd_una and could expire while the head's
    /// retransmission is on its way. The RTO's own retransmission of the head
    /// arms the same deadline (`on_rto`).
    #[cold]
    #[inline(never)]
    fn rearm_rto_at_head_retransmission(&mut self, now: TimeNs) {
        if self.reo_timer.deadline().is_some_and(|at| at > now) {
            return;
        }
        self.rto_timer.arm(self.rto_deadline_ns(now));
        self.tlp_armed = false;
    }

    /// Send segment `rtx` again, or the next new one. A loss probe's
    /// retransmission (`probe`) is not counted as an outstanding
    /// retransmission nor for undo (Linux sends it by `__tcp_retransmit_skb`,
    /// not `tcp_retransmit_skb`), but as ever retransmitted.
    ///
    /// Inlined into try_send's loop (its one hot caller, once per data
    /// packet): as a call it paid six register saves and restores and the
    /// argument moves per packet (docs/benchmarks.md).
    #[inline(always)]
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
            tx_lost: self.tp.lost as u32,
            tx_delivered_ce: self.tp.delivered_ce as u32,
            flags: if self.tp.app_limited != 0 { F_APP_LIMITED } else { 0 },
        };
        let seq = match rtx {
            Some(seq) => {
                let s = self.seg(seq);
                s.first_tx_ns = rate.first_tx_ns;
                s.delivered_ns = rate.delivered_ns;
                s.delivered = rate.delivered;
                s.tx_in_flight = rate.tx_in_flight;
                s.tx_lost = rate.tx_lost;
                s.tx_delivered_ce = rate.tx_delivered_ce;
                // Still the first transmission's time (tsorted.rs) only if re-sent in its nanosecond.
                let first_send = tsorted::first_send_is_current(s.flags) && s.sent_ns == now;
                s.sent_ns = rate.sent_ns;
                s.flags = (s.flags & !(F_APP_LIMITED | F_RATE_DONE | F_FIRST_SEND_NS)) | rate.flags | F_EVER_RETRANS;
                if first_send {
                    s.flags |= F_FIRST_SEND_NS;
                }
                if !probe {
                    s.flags |= F_RETRANS;
                    self.count_retransmission(now);
                    if seq == self.tp.snd_una {
                        self.rearm_rto_at_head_retransmission(now);
                    }
                }
                self.stats.retransmissions += 1;
                if self.rtx_queue.front() == Some(&seq) {
                    self.rtx_queue.pop_front();
                }
                self.tsorted.push_one(seq, now);
                seq
            }
            None => {
                let seq = self.tp.snd_nxt;
                self.segs.push_back(rate);
                self.tp.snd_nxt += 1;
                self.packets_out += 1;
                self.pipe += 1;
                self.tsorted.push_first(seq);
                seq
            }
        };
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        if self.tp.pacing {
            self.charge_pacing(now);
        }
        self.last_xmit_ns = now;
        if !self.rto_timer.is_armed() {
            self.rto_timer.arm(self.rto_deadline_ns(now));
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
            p.set_cwr(true);
            self.queue_cwr = false;
        }
        p.ts_val = now;
        p.ts_ecr = self.ts_recent;
        out.push(p);
        self.stats.sent_packets += 1;
        self.tp.in_flight = self.in_flight();
    }

    /// How many segments of the unpaced skb of new data of `quota` segments
    /// about to be sent `send`'s loop would send one by one, each passing
    /// its tests as the first: no retransmission waits (the queue was found
    /// empty, or F-RTO sends new data; new data adds none), a bulk
    /// application always has data (the stop time is fixed within the
    /// call), and each segment takes one of cwnd and one of rwnd. None
    /// (the loop sends them) for a finite or rate-capped application, and
    /// for a flow with nothing in flight (`transmit`'s restart after idle).
    #[inline(always)]
    fn new_run_len(&self, quota: u32) -> Option<u32> {
        let pipe = self.in_flight();
        if pipe == 0 || self.cfg.size_bytes.is_some() || self.cfg.rate_cap_bps.is_some() {
            return None;
        }
        #[cfg(test)]
        if self.test_general_send_path {
            return None;
        }
        // The loop's tests passed for the first segment: both rooms are at least 1.
        let cwnd_room = self.tp.cwnd - pipe;
        let rwnd_room = self.tp.snd_una + self.rwnd as u64 - self.tp.snd_nxt;
        Some(quota.min(cwnd_room).min(rwnd_room.min(u32::MAX as u64) as u32))
    }

    /// `transmit` of the `n` (>= 1) new segments of an unpaced skb, the
    /// first of them its first (`new_run_len`), then each marked as
    /// following the one before it: with data in flight (no sampling
    /// restart, no `TxStart`), the same rate snapshot for every segment but
    /// the in-flight count, a queued CWR on the first.
    #[inline(always)]
    fn transmit_new_run(&mut self, now: TimeNs, n: u32, out: &mut Vec<Packet>) {
        debug_assert!(n > 0 && self.packets_out > 0 && self.in_flight() > 0 && !self.tp.pacing);
        let first_seq = self.tp.snd_nxt;
        let pipe = self.in_flight();
        let rate = Seg {
            sent_ns: now,
            first_tx_ns: self.first_tx_ns,
            delivered_ns: self.tp.delivered_time_ns,
            delivered: self.tp.delivered,
            tx_in_flight: 0,
            tx_lost: self.tp.lost as u32,
            tx_delivered_ce: self.tp.delivered_ce as u32,
            flags: if self.tp.app_limited != 0 { F_APP_LIMITED } else { 0 },
        };
        self.segs.push_back_n(n as usize, |i| Seg { tx_in_flight: pipe + 1 + i as u32, ..rate });
        self.tp.snd_nxt += n as u64;
        self.packets_out += n;
        self.pipe += n;
        self.tsorted.push_first_run(first_seq, n as u64);
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += n;
        }
        self.last_xmit_ns = now;
        if !self.rto_timer.is_armed() {
            self.rto_timer.arm(self.rto_deadline_ns(now));
        }
        let mut p = Packet::new(self.cfg.flow, Kind::Data, self.cfg.wire_bytes);
        p.seq = first_seq;
        p.ecn = match self.cfg.ecn {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::Scalable => Ecn::Ect1,
        };
        p.ts_val = now;
        p.ts_ecr = self.ts_recent;
        if self.queue_cwr {
            p.set_cwr(true);
            self.queue_cwr = false;
        }
        out.push(p);
        p.set_cwr(false);
        p.set_skb_next(true);
        out.extend((first_seq + 1..first_seq + n as u64).map(|seq| {
            p.seq = seq;
            p
        }));
        self.stats.sent_packets += n as u64;
        self.tp.in_flight = self.in_flight();
    }

    /// Linux `tcp_retransmit_skb`'s bookkeeping: one more retransmission
    /// outstanding, the episode's first retransmission time, and one more
    /// retransmission that a D-SACK must show spurious before an undo.
    fn count_retransmission(&mut self, now: TimeNs) {
        self.retrans_out += 1;
        self.pipe += 1;
        if self.retrans_stamp == 0 {
            self.retrans_stamp = now.max(1);
        }
        self.undo_retrans = self.undo_retrans.max(0) + 1;
    }

    /// Linux `tcp_update_skb_after_send` for one segment of the paced skb
    /// being sent (called before `sent_packets` counts it): the earliest
    /// departure moves to at least now, then by the segment's time at the
    /// pacing rate; nothing while fewer than `UNPACED_DATA_SEGS` data segments
    /// have been sent, then the whole skb whose last segment reaches it.
    /// "OS jitter" credit: an skb leaving `c` ns after its earliest departure
    /// (`__tcp_transmit_skb`: `tcp_wstamp_ns = max(tcp_wstamp_ns, now)`, the
    /// credit the difference) takes min(its pacing time / 2, c) off that time,
    /// so a sender held back by its window catches up by up to half an skb's
    /// time when an ACK lets it send.
    fn charge_pacing(&mut self, now: TimeNs) {
        self.pace_skb_segs += 1;
        if self.pace_skb_segs == 1 {
            self.pace_credit_ns = now.saturating_sub(self.next_send_ns);
        }
        self.next_send_ns = self.next_send_ns.max(now);
        let data_segs_out = self.stats.sent_packets + 1;
        let segs = match data_segs_out.cmp(&UNPACED_DATA_SEGS) {
            std::cmp::Ordering::Less => return,
            std::cmp::Ordering::Equal => self.pace_skb_segs as u64,
            std::cmp::Ordering::Greater => 1,
        };
        let len_ns = segs * self.pacing_gap_ns();
        let cut_ns = (len_ns / 2).min(self.pace_credit_ns);
        self.pace_credit_ns -= cut_ns;
        self.next_send_ns += len_ns - cut_ns;
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
        let own_min = if self.hooks.has(Hooks::MIN_TSO_SEGS) { self.cc.min_tso_segs(&self.tp) } else { None };
        let min_segs = own_min.map_or(MIN_TSO_SEGS, u64::from);
        let bytes = self.tp.pacing_rate_bytes_per_s >> PACING_SHIFT;
        // One division: the upper bound depends on the MSS only (`tso_max_segs`).
        // Below ~2 MSS per ms (S0's 10 Mbit/s) the old form divided three times.
        (bytes / self.cfg.mss_bytes as u64).max(min_segs).min(self.tso_max_segs) as u32
    }

    /// Linux `tcp_update_pacing_rate` for window-based CCAs that pace.
    fn update_pacing_rate(&mut self) {
        let srtt = self.rtt.srtt_ns.max(1);
        let ratio = if self.tp.cwnd < self.tp.ssthresh / 2 { PACING_SS_RATIO_PCT } else { PACING_CA_RATIO_PCT };
        let cwnd = self.tp.cwnd.max(self.packets_out) as u64;
        let bytes = self.cfg.mss_bytes as u64 * cwnd * ratio / 100;
        // A 64-bit division when the product fits (the 128-bit one is a call).
        self.tp.pacing_rate_bytes_per_s = match bytes.checked_mul(1_000_000_000) {
            Some(b) => b / srtt,
            None => (bytes as u128 * 1_000_000_000 / srtt as u128).min(u64::MAX as u128) as u64,
        };
    }

    // -------------------------------------------------------------------- ACK

    /// Process an ACK (Linux `tcp_ack`), in its phases: the header
    /// (`read_ack_header`), the cumulative ACK (`clean_acked`), the SACK
    /// blocks (`sacktag`), delivery accounting and the CCA's per-ACK hooks
    /// (`account_ack`), the recovery state machine (`recover_on_ack`), the
    /// congestion window (`control_cwnd_on_ack`), the timers
    /// (`rearm_on_ack`), then sending.
    ///
    /// Not inlined: inlined, this large function made the simulator's
    /// dispatch loop about 3 % slower (docs/benchmarks.md). Its phases are
    /// inlined into it.
    #[inline(never)]
    pub fn on_ack(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        // Taken from the channel for every ACK, so the options stay in step.
        let sack = p.take_sack(&self.sack_rx);
        match (self.state, p.kind) {
            (ConnState::SynSent, Kind::SynAck) => return self.on_synack(now, p, out),
            (ConnState::Established, Kind::Ack) => {}
            _ => return,
        }
        self.read_ack_header(p);
        let prior_in_flight = self.in_flight();
        let prior_una = self.tp.snd_una;
        let mut acc = AckAcc::default();
        acc.flags.ts_ecr = p.ts_ecr;
        self.clean_acked(now, p.ack(), &mut acc);
        // SACK blocks, D-SACK first (tcp_sacktag_write_queue).
        if !sack.is_empty() {
            self.sacktag(now, &sack, p.ack(), prior_una, &mut acc);
        }
        self.take_rack_rtt(&acc);
        let d = self.account_ack(now, p, &acc, prior_in_flight, prior_una);
        let newly_lost = self.recover_on_ack(now, &acc.flags, d.ece);
        self.control_cwnd_on_ack(now, &acc, &d, newly_lost, prior_in_flight);
        let rearm = self.rearm_on_ack(p.ack(), &acc.flags);
        let probe_armed = self.send(now, out);
        if rearm && !probe_armed {
            self.rearm_after_send(now);
        }
    }

    /// The ACK's receive window and timestamps.
    #[inline(always)]
    fn read_ack_header(&mut self, p: &Packet) {
        self.rwnd = p.rwnd();
        self.ts_recent = p.ts_val;
        self.tp.rcv_tsval_ns = p.ts_val;
        self.tp.rcv_tsecr_ns = p.ts_ecr;
    }

    /// The cumulative ACK `ack_no` (tcp_clean_rtx_queue): frees the segments
    /// below it, counting their deliveries, rate and RACK state and RTTs
    /// into `acc`.
    #[inline(always)]
    fn clean_acked(&mut self, now: TimeNs, ack_no: u64, acc: &mut AckAcc) {
        let prior_una = self.tp.snd_una;
        let in_loss = self.tp.ca_state == CaState::Loss;
        let ack = ack_no.min(self.tp.snd_nxt);
        if ack > self.tp.snd_una && !self.general_ack_path() {
            self.clean_plain_acked(now, (ack - self.tp.snd_una) as usize, in_loss, acc);
        }
        // The general case (what clean_plain_acked left: all or nothing).
        while self.tp.snd_una < ack {
            let seq = self.tp.snd_una;
            let seg = self.segs.pop_front().expect("scoreboard covers [snd_una, snd_nxt)");
            self.tp.snd_una += 1;
            self.packets_out -= 1;
            // In flight loses the segment's share, 1 - sacked - lost + retrans
            // (SACKed and lost are never both set).
            let (sacked, lost, retrans) =
                ((seg.flags & F_SACKED != 0) as u32, (seg.flags & F_LOST != 0) as u32, (seg.flags & F_RETRANS != 0) as u32);
            self.pipe = self.pipe + sacked + lost - 1 - retrans;
            // tcp_clean_rtx_queue: TCPCB_RETRANS on any freed segment sets
            // FLAG_RETRANS_DATA_ACKED, which voids the ACK's send-time RTTs.
            acc.retrans_data_acked |= seg.flags & F_EVER_RETRANS != 0;
            if seg.flags & F_SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                acc.newly_delivered += 1;
                self.rate_delivered(&seg, &mut acc.rate);
                self.rack_advance(now, &seg, seq, &mut acc.rack_cum_rtt);
                if seg.flags & F_EVER_RETRANS == 0 {
                    let r = now - seg.sent_ns;
                    if acc.seq_rtt == NO_RTT {
                        acc.seq_rtt = r;
                    }
                    acc.ca_rtt = r;
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
        self.segs.shrink_if_sparse();
        acc.flags.una_advanced = self.tp.snd_una > prior_una;
        if acc.retrans_data_acked {
            // `if (first_ackt && !(flag & FLAG_RETRANS_DATA_ACKED))`: no seq_rtt_us, no ca_rtt_us.
            (acc.seq_rtt, acc.ca_rtt) = (NO_RTT, NO_RTT);
        }
        // tcp_rtx_queue_unlink_and_free: a freed skb leaves the tsorted list.
        // Only the front is trimmed (retransmissions sit later in send order);
        // RACK's walk skips any other entry below snd_una, as before.
        self.tsorted.trim_below(self.tp.snd_una);
    }

    /// What the ACK delivered (D-SACKed segments included), ECE, the RTT
    /// sample, and the CCA's per-ACK hooks (`in_ack_event`, `pkts_acked`).
    #[inline(always)]
    fn account_ack(&mut self, now: TimeNs, p: &Packet, acc: &AckAcc, prior_in_flight: u32, prior_una: u64) -> AckDelivery {
        // tcp_dsack_seen: a D-SACKed (spurious) retransmission was delivered.
        let newly_delivered = acc.newly_delivered + acc.flags.dsack_segs;
        if acc.flags.una_advanced {
            // tcp_ack: FLAG_SND_UNA_ADVANCED clears icsk_retransmits (and the backoff).
            self.backoff = 0;
            self.retransmits = 0;
        }
        if newly_delivered > 0 {
            self.tp.delivered += newly_delivered as u64;
            self.tp.delivered_time_ns = now;
        }
        // tcp_ecn_rcv_ecn_echo: ECE counts only on an ECN-capable connection.
        let ece = p.ece() && self.cfg.ecn != EcnMode::Off;
        let newly_ce = if ece { newly_delivered } else { 0 };
        if ece {
            self.stats.ece_acks += 1;
            self.tp.delivered_ce += newly_ce as u64;
        }
        let ca_rtt = self.ack_update_rtt(now, acc);
        self.tp.in_flight = self.in_flight();
        // tcp_clean_rtx_queue: `pkts_acked` on every ACK, with the packets
        // the cumulative ACK removes (SACKed earlier or not) and ca_rtt_us.
        let rtt_ns = ca_rtt.map_or(-1, |r| r as i64);
        if self.hooks.has(Hooks::IN_ACK_EVENT) {
            self.cc.in_ack_event(&mut self.tp, ece);
        }
        self.tp.sacked_out = self.sacked_out;
        self.tp.rate_prior_delivered = acc.rate.as_ref().map_or(0, |r| r.prior_delivered());
        if self.hooks.has(Hooks::PKTS_ACKED) {
            let cum_acked = (self.tp.snd_una - prior_una) as u32;
            let ack_sample = AckSample { pkts_acked: cum_acked, rtt_ns, in_flight: prior_in_flight };
            self.cc.pkts_acked(&mut self.tp, &ack_sample);
        }
        AckDelivery { newly_delivered, ece, rtt_ns }
    }

    /// Linux `tcp_ack_update_rtt`: the RTT of the oldest (S)ACKed segment
    /// sent once feeds srtt and the RTO, the newest one's (`ca_rtt_us`, the
    /// newest SACKed one's if any: `tcp_clean_rtx_queue`) the min_rtt filter; with neither (Karn's rule: only retransmitted data
    /// ACKed) an ACK that advances snd_una over data (FLAG_ACKED) takes both
    /// from its echoed timestamp (`tcp_rtt_tsopt_us`). Returns `ca_rtt_us`,
    /// the CCA's sample (`rs->rtt_us`, `ack_sample.rtt_us`).
    #[inline(always)]
    fn ack_update_rtt(&mut self, now: TimeNs, acc: &AckAcc) -> Option<u64> {
        let or = |a: u64, b: u64| if a != NO_RTT { a } else { b };
        let (mut seq_rtt, mut ca_rtt) = (or(acc.seq_rtt, acc.sack_rtt), or(acc.sack_ca_rtt, acc.ca_rtt));
        if seq_rtt == NO_RTT && acc.flags.una_advanced && acc.flags.ts_ecr != 0 {
            let r = tsopt_rtt_ns(self.tp.host_clock_ns(now), self.tp.host_clock_ns(acc.flags.ts_ecr));
            (seq_rtt, ca_rtt) = (r, r);
        }
        if seq_rtt != NO_RTT {
            self.rtt_sample(now, seq_rtt, or(ca_rtt, seq_rtt));
        }
        (ca_rtt != NO_RTT).then_some(ca_rtt)
    }

    /// The recovery state machine, for an ACK that is dubious
    /// (tcp_ack_is_dubious: an ACK in Open that only advances snd_una skips
    /// it, and RACK, as in Linux). Returns the segments newly marked lost.
    #[inline(always)]
    fn recover_on_ack(&mut self, now: TimeNs, flags: &AckFlags, ece: bool) -> u32 {
        let lost_before = self.tp.lost;
        if !flags.una_advanced || flags.data_sacked || flags.dsacking || ece || self.tp.ca_state != CaState::Open {
            self.fastretrans_alert(now, flags, ece);
        }
        (self.tp.lost - lost_before) as u32
    }

    /// The rate sample and the congestion window: the CCA's `cong_control`,
    /// else PRR in Recovery / CWR or `cong_avoid`, and the pacing rate.
    #[inline(always)]
    fn control_cwnd_on_ack(&mut self, now: TimeNs, acc: &AckAcc, d: &AckDelivery, newly_lost: u32, prior_in_flight: u32) {
        let (newly_delivered, una_advanced) = (d.newly_delivered, acc.flags.una_advanced);
        let rate = self.rate_gen(now, newly_delivered, acc.rate.as_ref());
        self.tp.in_flight = self.in_flight();
        // Linux keeps tp->is_cwnd_limited current for every CCA (BBRv2's
        // inflight_hi growth reads it in cong_control).
        self.tp.is_cwnd_limited = self.is_cwnd_limited();
        #[cfg(debug_assertions)]
        let window_before = (self.tp.cwnd, self.tp.ssthresh, self.tp.is_cwnd_limited);
        // The rate sample is built for a CCA that reads it only.
        self.cc_controls = self.hooks.has(Hooks::CONG_CONTROL) && {
            let rs = self.rate_sample(rate, d, newly_lost, prior_in_flight, acc.rate.as_ref());
            self.cc.cong_control(&mut self.tp, &rs)
        };
        if !self.cc_controls {
            // A CCA that leaves the window to the sender changes nothing
            // here, so `is_cwnd_limited` (cwnd, ssthresh, the sender's own
            // state) still holds for `cong_avoid`.
            #[cfg(debug_assertions)]
            debug_assert_eq!(
                window_before,
                (self.tp.cwnd, self.tp.ssthresh, self.tp.is_cwnd_limited),
                "cong_control returned false after changing the window"
            );
            match self.tp.ca_state {
                CaState::Recovery | CaState::Cwr => self.prr(newly_delivered, newly_lost, una_advanced),
                _ => {
                    // tcp_may_raise_cwnd: with default reordering only an ACK that
                    // advances snd_una (FLAG_DATA_ACKED) may grow cwnd.
                    if newly_delivered > 0 && una_advanced {
                        self.cc.cong_avoid(&mut self.tp, newly_delivered);
                        if self.tp.enter_cwr {
                            self.tp.enter_cwr = false;
                            self.enter_cwr_for_cca();
                        }
                    }
                }
            }
            // Linux computes sk_pacing_rate for every CCA without cong_control,
            // paced or not (HyStart reads it); it is only enforced when pacing.
            self.update_pacing_rate();
        }
        self.tp.cwnd = self.tp.cwnd.max(1);
    }

    /// The tail loss probe's ACK, then the timers (tcp_set_xmit_timer):
    /// none with nothing in flight; else, when the ACK advanced snd_una, the
    /// probe or the RTO, which `rearm_after_send` arms (returns true) unless
    /// the sends that follow arm the probe themselves. Arming only stores a
    /// deadline, and that probe overwrites this one; in between, the sends
    /// read the timer only to arm an unarmed RTO, which this one would
    /// overwrite too; and what the probe-or-RTO choice reads (the state,
    /// srtt, the backoff, and `packets_out` where a probe may be armed,
    /// i.e. where the sends' own probe is armed if they sent) the sends do
    /// not change. So the timer ends as Linux's order leaves it.
    #[inline(always)]
    fn rearm_on_ack(&mut self, ack_no: u64, flags: &AckFlags) -> bool {
        self.process_tlp_ack(ack_no, flags);
        if self.packets_out == 0 {
            self.rto_timer.disarm();
            self.tlp_armed = false;
            return false;
        }
        flags.una_advanced
    }

    /// tcp_set_xmit_timer after an ACK that advanced snd_una: the probe if
    /// it may be sent, else the RTO.
    fn rearm_after_send(&mut self, now: TimeNs) {
        if !self.schedule_loss_probe(now, true) {
            self.tlp_armed = false;
            self.rto_timer.arm(self.rto_deadline_ns(now));
        }
    }

    /// Tests run the same ACKs with and without `clean_plain_acked`.
    #[cfg(test)]
    fn general_ack_path(&self) -> bool {
        self.test_general_ack_path
    }

    #[cfg(not(test))]
    #[inline(always)]
    fn general_ack_path(&self) -> bool {
        false
    }

    /// `tcp_clean_rtx_queue` for the common ACK: the `n` segments it frees
    /// were none of them SACKed, marked lost, (ever) retransmitted or already
    /// counted in a rate sample. Then each segment only adds to the same
    /// accumulators, and one pass over their scoreboard entries finds what
    /// the general loop in `on_ack` would find segment by segment: the rate
    /// sample's segment (the first with the largest `delivered`), RACK's most
    /// recently sent segment, and the RTTs of the first and the last. Frees
    /// them all, or changes nothing (the general loop then frees them).
    #[inline]
    fn clean_plain_acked(&mut self, now: TimeNs, n: usize, in_loss: bool, acc: &mut AckAcc) {
        let una = self.tp.snd_una;
        // Segments contiguous in the ring's storage only (one slice, a plain
        // loop); across its wrap, about once per pass, the general loop frees them.
        let Some(plain @ [first, .., last] | plain @ [first @ last]) = self.segs.front_run(n) else {
            return;
        };
        let (mut flags, mut rate_seg, last_sent_ns) = (0u8, first, last.sent_ns);
        for g in plain {
            flags |= g.flags;
            if g.delivered > rate_seg.delivered {
                rate_seg = g;
            }
        }
        if flags & (F_SACKED | F_LOST | F_RETRANS | F_EVER_RETRANS | F_RATE_DONE) != 0 {
            return;
        }
        // The ACK's first delivery, not yet rate-sampled: rate_delivered takes it as it is.
        acc.rate = Some(RateAcc::of(rate_seg));
        acc.seq_rtt = now - first.sent_ns;
        acc.ca_rtt = now - last_sent_ns;
        // tcp_rack_advance over the segments, the latest (sent_ns, seq)
        // winning: none was retransmitted, and new data leaves in sequence
        // order as time goes on, so the last one sent is the last one.
        debug_assert!(self.segs.iter().take(n).map(|g| g.sent_ns).is_sorted());
        let last_seq = una + n as u64 - 1;
        if last_sent_ns > self.rack_xmit_ns || (last_sent_ns == self.rack_xmit_ns && last_seq > self.rack_end_seq) {
            (self.rack_xmit_ns, self.rack_end_seq) = (last_sent_ns, last_seq);
        }
        acc.rack_cum_rtt = now - last_sent_ns;
        acc.flags.orig_sack_acked |= in_loss && una < self.high_seq;
        acc.newly_delivered += n as u32;
        self.tp.snd_una += n as u64;
        self.packets_out -= n as u32;
        self.pipe -= n as u32;
        self.segs.discard_front(n);
    }

    /// tcp_rate.c `tcp_rate_skb_delivered`: remember the most recently sent
    /// delivered segment's sending-time snapshot.
    fn rate_delivered(&self, seg: &Seg, acc: &mut Option<RateAcc>) {
        if seg.flags & F_RATE_DONE != 0 {
            return;
        }
        if acc.as_ref().is_none_or(|a| seg.delivered > a.prior_delivered()) {
            *acc = Some(RateAcc::of(seg));
        }
    }

    /// tcp_rate.c `tcp_rate_gen`: the connection's rate state (the end of
    /// an app-limited phase, the sampling epoch, the last sample that was not
    /// app-limited or beat it) and the sample's delivered packets and
    /// interval (-1: none; the interval -1 too when shorter than min_rtt).
    /// The sample and the last one kept (`rate_delivered`,
    /// `rate_interval_ns`) are read by the rate sample only, built for a CCA
    /// with `cong_control` (`control_cwnd_on_ack`): for any other they are
    /// not computed (the sample is "none").
    #[inline(always)]
    fn rate_gen(&mut self, now: TimeNs, delivered: u32, acc: Option<&RateAcc>) -> RateGen {
        if self.tp.app_limited != 0 && self.tp.delivered > self.tp.app_limited {
            self.tp.app_limited = 0;
        }
        let Some(acc) = acc else {
            return RateGen { delivered: -1, interval_ns: -1 };
        };
        self.first_tx_ns = acc.send_ns();
        if delivered == 0 || !self.hooks.has(Hooks::CONG_CONTROL) {
            return RateGen { delivered: -1, interval_ns: -1 };
        }
        let rs_delivered = (self.tp.delivered - acc.prior_delivered()) as i64;
        let ack_interval = now as i64 - acc.prior_ns() as i64;
        let interval_ns = acc.snd_interval_ns().max(ack_interval);
        let min_rtt = if self.tp.min_rtt_ns == u64::MAX { 0 } else { self.tp.min_rtt_ns as i64 };
        if interval_ns < min_rtt {
            return RateGen { delivered: rs_delivered, interval_ns: -1 };
        }
        if !acc.is_app_limited()
            || (rs_delivered as i128 * self.rate_interval_ns as i128 >= self.rate_delivered as i128 * interval_ns as i128)
        {
            self.rate_delivered = rs_delivered;
            self.rate_interval_ns = interval_ns;
        }
        RateGen { delivered: rs_delivered, interval_ns }
    }

    /// The rate sample (`struct rate_sample`) of an ACK that delivered `d`
    /// and marked `lost` lost, from `rate_gen`'s result and the sampled
    /// segment's snapshot `acc`.
    #[inline(always)]
    fn rate_sample(&self, gen: RateGen, d: &AckDelivery, lost: u32, prior_in_flight: u32, acc: Option<&RateAcc>) -> RateSample {
        let mut rs = RateSample {
            acked_sacked: d.newly_delivered,
            losses: lost,
            prior_in_flight,
            delivered: gen.delivered,
            interval_ns: gen.interval_ns,
            rtt_ns: d.rtt_ns,
            is_ece: d.ece,
            ..Default::default()
        };
        if let Some(acc) = acc {
            rs.prior_delivered = acc.prior_delivered();
            rs.is_app_limited = acc.is_app_limited();
            rs.is_retrans = acc.is_retrans();
            rs.tx_in_flight = acc.0.tx_in_flight;
            // tp.lost only grows, by fewer than 2^32 during a segment's flight
            // (Seg::tx_lost): the u32 difference is the u64 one.
            rs.lost = (self.tp.lost as u32).wrapping_sub(acc.0.tx_lost) as u64;
            if d.newly_delivered > 0 {
                // v2alpha tcp_rate_gen: CE-echoed deliveries over the same interval.
                rs.delivered_ce = (self.tp.delivered_ce as u32).wrapping_sub(acc.0.tx_delivered_ce);
            }
        }
        rs
    }

    // ------------------------------------------------------------------- SACK

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
            let at = head_sent + self.rto_span_ns();
            if at > now {
                self.rto_timer.arm(self.jiffy_timer_fires_ns(now, usecs_to_jiffies(at - now)));
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
        self.rto_timer.arm(self.rto_deadline_ns(now));
        self.next_send_ns = now;
        self.try_send(now, out);
    }

    pub fn on_pace_timer(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        self.try_send(now, out);
    }
}
