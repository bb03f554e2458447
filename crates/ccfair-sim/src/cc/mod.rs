//! Congestion control: the trait every algorithm implements, and the registry.
//!
//! The trait mirrors Linux's `struct tcp_congestion_ops` (include/net/tcp.h),
//! because every algorithm we model is specified against it:
//!
//! | Linux hook      | here                 | who uses it                         |
//! |-----------------|----------------------|-------------------------------------|
//! | `ssthresh`      | [`CongestionControl::ssthresh`]     | all loss-based (on loss / ECE)      |
//! | `cong_avoid`    | [`CongestionControl::cong_avoid`]   | window-based growth (Reno, CUBIC)   |
//! | `cong_control`  | [`CongestionControl::cong_control`] | rate-based: BBR sets cwnd + pacing  |
//! | `pkts_acked`    | [`CongestionControl::pkts_acked`]   | delay-based (Vegas, HyStart, LEDBAT)|
//! | `set_state`     | [`CongestionControl::set_state`]    | entering Loss / Recovery / CWR      |
//! | `cwnd_event`    | [`CongestionControl::cwnd_event`]   | ECN (CE seen / not seen), TX start  |
//! | `undo_cwnd`     | [`CongestionControl::undo_cwnd`]    | spurious-loss undo                  |
//! | `in_ack_event`  | [`CongestionControl::in_ack_event`] | ECN-based (DCTCP/Prague alpha)      |
//!
//! The sender owns the connection state ([`TcpCc`]) and calls the hooks in the
//! same order as Linux's `tcp_ack()` -> `tcp_cong_control()`:
//!   1. `pkts_acked` with the RTT sample of this ACK;
//!   2. loss detection / recovery state changes (`ssthresh`, `set_state`);
//!   3. if the CCA has `cong_control` it sets cwnd/pacing itself; otherwise in
//!      Recovery/CWR the sender applies PRR (RFC 6937), and in Open state calls
//!      `cong_avoid` when the flow is cwnd-limited.
//!
//! Windows are in packets (segments) as in Linux (`tp->snd_cwnd`).

pub mod bbr;
pub mod bbr2;
pub mod bbr3;
pub mod bic;
pub mod ctcp;
pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod ledbat;
pub mod lp;
pub mod prague;
pub mod reno;
pub mod scalable;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod yeah;

/// Linux's `tcp_ca_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// Linux's `tcp_ca_event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight.
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of CWR / Recovery (cwnd reduction complete).
    CompleteCwr,
    /// Retransmission timeout (entering Loss).
    Loss,
    /// Linux: the receiver got a packet without CE. The receiver's ECN echo is
    /// modelled in tcp/receiver.rs, so the sender never raises this; a sender-side
    /// CCA sees ECN through `in_ack_event` and `delivered_ce`.
    EcnNoCe,
    /// Linux: the receiver got a CE packet (see `EcnNoCe`).
    EcnIsCe,
}

/// Congestion-relevant connection state, owned by the sender and lent to the
/// CCA on every hook. Field names follow Linux's `struct tcp_sock`.
#[derive(Debug, Clone)]
pub struct TcpCc {
    /// Current simulated time, ns.
    pub now_ns: u64,
    /// Congestion window, packets (`snd_cwnd`).
    pub cwnd: u32,
    /// Linear-increase counter (`snd_cwnd_cnt`).
    pub cwnd_cnt: u32,
    /// Upper bound of cwnd (`snd_cwnd_clamp`).
    pub cwnd_clamp: u32,
    /// Slow-start threshold, packets (`snd_ssthresh`); `INFINITE_SSTHRESH` initially.
    pub ssthresh: u32,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Bytes per segment on the wire (MSS + headers).
    pub wire_bytes: u32,
    /// Smoothed RTT, ns (0 before the first sample).
    pub srtt_ns: u64,
    /// Minimum RTT seen (Linux keeps a windowed min; we keep the lifetime min), ns.
    pub min_rtt_ns: u64,
    /// Packets in flight (`tcp_packets_in_flight`: out - sacked - lost + retrans).
    pub in_flight: u32,
    /// Packets delivered (acked or sacked) so far (`tp->delivered`).
    pub delivered: u64,
    /// Packets delivered that carried CE (for ECN-based CCAs).
    pub delivered_ce: u64,
    /// Time `delivered` last changed, ns (`tp->delivered_mstamp`).
    pub delivered_time_ns: u64,
    /// Loss-recovery state machine (`icsk_ca_state`).
    pub ca_state: CaState,
    /// Pacing rate in bytes per second (`sk_pacing_rate`), 0 = not set.
    pub pacing_rate_bytes_per_s: u64,
    /// Whether the sender paces at all.
    pub pacing: bool,
    /// `tp->app_limited`: nonzero while the application limits sending.
    pub app_limited: u64,
    /// Total segments marked lost so far (`tp->lost`).
    pub lost: u64,
    /// Highest sequence sent + 1 (packets) (`snd_nxt`).
    pub snd_nxt: u64,
    /// Lowest unacknowledged sequence (packets) (`snd_una`).
    pub snd_una: u64,
    /// cwnd before the last reduction (`prior_cwnd`).
    pub prior_cwnd: u32,
    /// Whether the flow used its whole cwnd recently (`tcp_is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// TSval of the last ACK: the receiver's clock when it sent the ACK, ns; 0 = none
    /// (ns-3 `m_rcvTimestampValue`). Hosts share the simulator clock, so
    /// `rcv_tsval_ns - rcv_tsecr_ns` is a one-way (forward) delay sample (LEDBAT).
    pub rcv_tsval_ns: u64,
    /// TSecr of the last ACK: the TSval of the data segment it echoes, ns; 0 = none.
    pub rcv_tsecr_ns: u64,
}

pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl TcpCc {
    /// State of a connection before its first ACK: cwnd = `init_cwnd`,
    /// infinite ssthresh, no RTT sample, Open.
    pub fn new(mss: u32, wire_bytes: u32, init_cwnd: u32) -> TcpCc {
        TcpCc {
            now_ns: 0,
            cwnd: init_cwnd,
            cwnd_cnt: 0,
            cwnd_clamp: u32::MAX / 2,
            ssthresh: INFINITE_SSTHRESH,
            mss,
            wire_bytes,
            srtt_ns: 0,
            min_rtt_ns: u64::MAX,
            in_flight: 0,
            delivered: 0,
            delivered_ce: 0,
            delivered_time_ns: 0,
            ca_state: CaState::Open,
            pacing_rate_bytes_per_s: 0,
            pacing: false,
            app_limited: 0,
            lost: 0,
            snd_nxt: 0,
            snd_una: 0,
            prior_cwnd: 0,
            is_cwnd_limited: true,
            rcv_tsval_ns: 0,
            rcv_tsecr_ns: 0,
        }
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Linux `tcp_slow_start`: grow cwnd by `acked`, but not past ssthresh;
    /// returns the ACKed packets left over for congestion avoidance.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = (self.cwnd.saturating_add(acked)).min(self.ssthresh);
        let used = cwnd - self.cwnd.min(cwnd);
        let left = acked - used.min(acked);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        left
    }

    /// Linux `tcp_cong_avoid_ai`: cwnd += acked / w (w = ACKs needed per +1).
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        // If credits accumulated at a higher w, apply them gently.
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }
}

/// What one ACK delivered, plus the delivery-rate sample of Linux's
/// `tcp_rate.c` (`struct rate_sample`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RateSample {
    /// `tp->delivered` at the time the sampled packet was sent.
    pub prior_delivered: u64,
    /// Packets delivered over `interval_ns` (0 if no sample).
    pub delivered: i64,
    /// Sampling interval, ns; negative = invalid sample (Linux: -1).
    pub interval_ns: i64,
    /// RTT of the most recently sent packet this ACK delivered, ns; negative = none.
    pub rtt_ns: i64,
    /// Packets newly marked lost while processing this ACK.
    pub losses: u32,
    /// Packets newly acked or sacked by this ACK.
    pub acked_sacked: u32,
    /// In-flight before this ACK was processed.
    pub prior_in_flight: u32,
    /// The sampled packet was sent while the application limited sending.
    pub is_app_limited: bool,
    /// The sampled packet was a retransmission.
    pub is_retrans: bool,
    /// Packets delivered with an ECE echo over `interval_ns`, i.e. from the
    /// sampled packet's send to this ACK (google/bbr v2alpha tcp_rate.c
    /// `rs->delivered_ce = tp->delivered_ce - rs->prior_delivered_ce`); 0 if
    /// no sample.
    pub delivered_ce: u32,
    /// This ACK carried ECE (BBRv2 `rs->is_ece`, from FLAG_ECE).
    pub is_ece: bool,
    /// In-flight just after the sampled packet was sent (BBRv2 `rs->tx_in_flight`).
    pub tx_in_flight: u32,
    /// Packets marked lost between the sampled packet's send and this ACK
    /// (BBRv2 `rs->lost` = `tp->lost` now minus `tx.lost` at send).
    pub lost: u64,
}

/// Once-per-window CE accounting of DCTCP-style CCAs (Linux `dctcp_update_alpha`:
/// `next_seq`, `old_delivered`, `old_delivered_ce`). A window ends when
/// snd_una reaches the snd_nxt recorded when the window started.
#[derive(Debug, Clone, Copy, Default)]
pub struct CeWindow {
    next_seq: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
}

impl CeWindow {
    /// Start a new window now.
    pub fn reset(&mut self, tp: &TcpCc) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// If the window has ended: (packets delivered, at least 1; of them CE-marked)
    /// since it started. The caller updates its estimate, then calls `reset`.
    pub fn ended(&self, tp: &TcpCc) -> Option<(u64, u64)> {
        if tp.snd_una < self.next_seq {
            return None;
        }
        Some(((tp.delivered - self.old_delivered).max(1), tp.delivered_ce - self.old_delivered_ce))
    }
}

/// ACK facts for `pkts_acked` (Linux `struct ack_sample`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AckSample {
    /// Packets newly acked (cumulatively or by SACK).
    pub pkts_acked: u32,
    /// RTT sample of this ACK, ns; negative = none (e.g. only retransmissions acked).
    pub rtt_ns: i64,
    /// In-flight before this ACK.
    pub in_flight: u32,
}

/// One congestion-control algorithm. Only `name` and `ssthresh` are required;
/// every other hook has Linux's default (no-op / Reno-like) behaviour.
pub trait CongestionControl: Send {
    /// Canonical name (as Linux's `tcp_congestion_control` sysctl spells it).
    fn name(&self) -> &'static str;

    /// Called once when the connection starts.
    fn init(&mut self, _tp: &mut TcpCc) {}

    /// Slow-start threshold to use after a loss / ECE (Linux `ssthresh`).
    fn ssthresh(&mut self, tp: &TcpCc) -> u32;

    /// Window growth on an ACK in Open state when cwnd-limited (Linux `cong_avoid`).
    /// Default: Reno (`tcp_reno_cong_avoid`).
    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        reno::reno_cong_avoid(tp, acked);
    }

    /// Full control of cwnd and pacing rate on every ACK (Linux `cong_control`).
    /// Return `true` if this CCA handles it (then PRR and `cong_avoid` are skipped).
    fn cong_control(&mut self, _tp: &mut TcpCc, _rs: &RateSample) -> bool {
        false
    }

    /// Per-ACK sample of acked packets and RTT (Linux `pkts_acked`).
    fn pkts_acked(&mut self, _tp: &mut TcpCc, _sample: &AckSample) {}

    /// Loss-recovery state change (Linux `set_state`), called before the change.
    fn set_state(&mut self, _tp: &mut TcpCc, _new_state: CaState) {}

    /// Congestion event (Linux `cwnd_event`).
    fn cwnd_event(&mut self, _tp: &mut TcpCc, _ev: CaEvent) {}

    /// cwnd to restore when a loss turns out spurious (Linux `undo_cwnd`).
    fn undo_cwnd(&mut self, tp: &TcpCc) -> u32 {
        tp.cwnd.max(tp.prior_cwnd)
    }

    /// Per-ACK event (Linux `in_ack_event`), called on every ACK after the
    /// delivered / delivered_ce counters include it; `ece` = the ACK carried
    /// ECN-Echo (Linux CA_ACK_ECE).
    fn in_ack_event(&mut self, _tp: &mut TcpCc, _ece: bool) {}

    /// The algorithm needs ECN (Linux TCP_CONG_NEEDS_ECN): a flow using it is
    /// scalable-ECN-capable unless its `ecn` option says otherwise.
    fn needs_ecn(&self) -> bool {
        false
    }

    /// Whether the sender should pace even if the flow did not ask for pacing
    /// (BBR: `sk_pacing_status = SK_PACING_NEEDED`).
    fn needs_pacing(&self) -> bool {
        false
    }

    /// True when the CCA sets `tp.pacing_rate_bytes_per_s` itself (BBR). The
    /// sender computes Linux's `tcp_update_pacing_rate` only for CCAs without
    /// `cong_control`, so this is informational.
    fn sets_pacing_rate(&self) -> bool {
        false
    }
}

/// (canonical name, source) for every algorithm, for `ccfair list ccas`.
pub fn catalogue() -> &'static [(&'static str, &'static str)] {
    &[
        ("reno", "NewReno: RFC 5681 / RFC 6582; Linux net/ipv4/tcp_cong.c (tcp_reno_*)"),
        ("cubic", "CUBIC: RFC 9438; Linux net/ipv4/tcp_cubic.c with HyStart"),
        ("bbr", "BBRv1: draft-cardwell-iccrg-bbr-congestion-control-00; Linux net/ipv4/tcp_bbr.c"),
        ("bic", "BIC: Xu, Harfoush, Rhee, INFOCOM 2004; Linux net/ipv4/tcp_bic.c"),
        ("highspeed", "HighSpeed TCP: RFC 3649; Linux net/ipv4/tcp_highspeed.c"),
        ("htcp", "H-TCP: Leith & Shorten, PFLDnet 2004; Linux net/ipv4/tcp_htcp.c"),
        ("hybla", "Hybla: Caini & Firrincieli, IJSCN 2004; Linux net/ipv4/tcp_hybla.c"),
        ("illinois", "TCP-Illinois: Liu, Basar, Srikant, Perf. Eval. 2008; Linux net/ipv4/tcp_illinois.c"),
        ("scalable", "Scalable TCP: Kelly, CCR 2003; Linux net/ipv4/tcp_scalable.c"),
        ("veno", "Veno: Fu & Liew, IEEE JSAC 2003; Linux net/ipv4/tcp_veno.c"),
        ("westwood", "Westwood+: Mascolo et al. 2001, Grieco & Mascolo 2004; Linux net/ipv4/tcp_westwood.c"),
        ("yeah", "YeAH-TCP: Baiocchi, Castellani, Vacirca, PFLDnet 2007; Linux net/ipv4/tcp_yeah.c"),
        ("dctcp", "DCTCP: RFC 8257; Linux net/ipv4/tcp_dctcp.c (g = 1/16, halve on loss as Linux >= 5.1)"),
        ("prague", "TCP Prague (L4S): draft-briscoe-iccrg-prague-congestion-control; scalable ECN, RTT-independent increase (25 ms)"),
        ("prague-rttdep", "TCP Prague without RTT-independence (Reno additive increase)"),
        ("vegas", "Vegas: Brakmo & Peterson, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c (alpha 2, beta 4, gamma 1)"),
        ("ledbat", "LEDBAT: RFC 6817; ns-3 tcp-ledbat.cc (target 100 ms, gain 1)"),
        ("ledbat25", "LEDBAT with a 25 ms target (early LEDBAT drafts); otherwise as ledbat"),
        ("bbr2", "BBRv2: Linux v2alpha net/ipv4/tcp_bbr2.c (google/bbr); draft-cardwell-iccrg-bbr-congestion-control-02; ECN logic on"),
        ("bbr3", "BBRv3: google/bbr v3 net/ipv4/tcp_bbr.c; draft-ietf-ccwg-bbr-01 (v2's machine with v3's gains and rules; ECN logic on)"),
        ("lp", "TCP-LP (low priority): Kuzmanovic & Knightly, INFOCOM 2003; Linux net/ipv4/tcp_lp.c (one-way delay threshold 15 %, inference 3 RTT)"),
        ("ctcp", "Compound TCP: Tan et al., IEEE INFOCOM 2006 (alpha 1/8, beta 1/2, k 0.75, gamma 30)"),
        ("ccid2", "DCCP CCID 2 (TCP-like, datagrams, no retransmission, Ack Ratio): RFC 4341 / RFC 4340; selects transport dccp (dccp/)"),
    ]
}

/// Canonical names, for error messages.
pub fn names() -> Vec<&'static str> {
    catalogue().iter().map(|(n, _)| *n).collect()
}

/// Build a fresh instance by canonical name. `seed` feeds the algorithm's own
/// random choices (e.g. BBR's initial gain-cycle phase); it is derived from the
/// run seed and the flow index, so runs stay deterministic.
pub fn make(name: &str, seed: u64) -> Option<Box<dyn CongestionControl>> {
    match name {
        "reno" => Some(Box::new(reno::Reno)),
        "cubic" => Some(Box::new(cubic::Cubic::new())),
        "bbr" => Some(Box::new(bbr::Bbr::new(seed))),
        "bic" => Some(Box::new(bic::Bic::new())),
        "highspeed" => Some(Box::new(highspeed::HighSpeed::new())),
        "htcp" => Some(Box::new(htcp::Htcp::new())),
        "hybla" => Some(Box::new(hybla::Hybla::new())),
        "illinois" => Some(Box::new(illinois::Illinois::new())),
        "scalable" => Some(Box::new(scalable::Scalable)),
        "veno" => Some(Box::new(veno::Veno::new())),
        "westwood" => Some(Box::new(westwood::Westwood::new())),
        "yeah" => Some(Box::new(yeah::Yeah::new())),
        "dctcp" => Some(Box::new(dctcp::Dctcp::new())),
        "prague" => Some(Box::new(prague::Prague::new(true))),
        "prague-rttdep" => Some(Box::new(prague::Prague::new(false))),
        "vegas" => Some(Box::new(vegas::Vegas::new())),
        "ledbat" => Some(Box::new(ledbat::Ledbat::new())),
        "ledbat25" => Some(Box::new(ledbat::Ledbat::with_target(ledbat::TARGET_25MS_NS))),
        "bbr2" => Some(Box::new(bbr2::Bbr2::new(seed))),
        "bbr3" => Some(Box::new(bbr3::new(seed))),
        "ctcp" => Some(Box::new(ctcp::Ctcp::new())),
        "lp" => Some(Box::new(lp::Lp::new())),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// A connection state as the sender has it after the handshake.
    pub fn tp() -> TcpCc {
        TcpCc::new(1448, 1500, 10)
    }
}
