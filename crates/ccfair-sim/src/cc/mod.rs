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

/// [`declare_params!`](crate::declare_params) for a congestion control: the parameter struct,
/// then `cca Algo = "name", "source"; build = |p, seed| expr;` writes `impl Cca for Algo`
/// (`expr` builds one from the parameters `p` and the flow's `seed`).
#[macro_export]
macro_rules! declare_cca {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($fields:tt)* }
        $(check = $check:path;)?
        cca $cca:ident = $cca_name:literal, $source:literal;
        build = |$p:ident, $seed:ident| $build:expr;
    ) => {
        $crate::declare_params! {
            $(#[$meta])*
            pub struct $name { $($fields)* }
            $(check = $check;)?
        }

        impl $crate::cc::Cca for $cca {
            type Params = $name;
            const NAME: &'static str = $cca_name;
            const SOURCE: &'static str = $source;
            fn build($p: &$name, $seed: u64) -> Box<dyn $crate::cc::CongestionControl> {
                Box::new($build)
            }
        }
    };
}

/// `impl Default for Algo` as `expr`: an algorithm at its parameters' defaults.
macro_rules! default_is {
    ($algo:ident = $e:expr) => {
        impl Default for $algo {
            fn default() -> Self {
                $e
            }
        }
    };
}

/// Inside an `impl CongestionControl`: what the algorithm needs of the sender, each hook
/// named returning true (the others keep the trait's `false`): `ecn` (`needs_ecn`),
/// `pacing` (`needs_pacing`), `cwr_acked_at_once` (`acks_cwr_at_once`),
/// `own_pacing_rate` (`sets_pacing_rate`), `newest_tsval_echoed` (`echoes_newest_tsval`).
/// `needs!(ecn, pacing);`
macro_rules! needs {
    ($($what:ident),+) => { $(needs!(@ $what);)+ };
    (@ecn) => { fn needs_ecn(&self) -> bool { true } };
    (@pacing) => { fn needs_pacing(&self) -> bool { true } };
    (@cwr_acked_at_once) => { fn acks_cwr_at_once(&self) -> bool { true } };
    (@own_pacing_rate) => { fn sets_pacing_rate(&self) -> bool { true } };
    (@newest_tsval_echoed) => { fn echoes_newest_tsval(&self) -> bool { true } };
}

/// Inside an `impl CongestionControl`: the optional per-ACK and per-send hooks the
/// algorithm implements ([`Hooks`]), by their method names; the sender calls no other
/// of them. `hooks!();` (none), `hooks!(pkts_acked);`, `hooks!(cong_control, min_tso_segs);`
macro_rules! hooks {
    () => { fn hooks(&self) -> $crate::cc::Hooks { $crate::cc::Hooks::NONE } };
    ($($hook:ident),+) => { fn hooks(&self) -> $crate::cc::Hooks { $crate::cc::Hooks::NONE $(.with(hooks!(@ $hook)))+ } };
    (@in_ack_event) => { $crate::cc::Hooks::IN_ACK_EVENT };
    (@pkts_acked) => { $crate::cc::Hooks::PKTS_ACKED };
    (@cong_control) => { $crate::cc::Hooks::CONG_CONTROL };
    (@min_tso_segs) => { $crate::cc::Hooks::MIN_TSO_SEGS };
}

pub mod bbr;
pub mod bbr2;
pub mod bbr3;
pub mod bic;
pub mod cdg;
pub mod ctcp;
pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod ledbat;
pub mod lp;
pub mod nv;
pub mod prague;
pub mod reno;
pub mod scalable;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod yeah;

use serde_json::{Map, Value};

use crate::params::{ParamError, ParamSpec, Params};

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
    /// Minimum RTT: Linux's windowed running min over 300 s (tcp_min_rtt, tcp/rtt.rs `MinRttFilter`), ns.
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
    /// The hosts' timestamp clock (`tcp_clock_ns`, ns since boot; one clock for every
    /// end, as on one Linux host) at simulated time 0, below 2^32 ms: Linux's
    /// `tcp_time_stamp_ts` and the TSecr it reads (`rcv_tsecr`, its own `tsoffset`
    /// taken off by `tcp_fast_parse_options`) are (time + this) in ms mod 2^32
    /// ([`TcpCc::draw_ts_clocks`]).
    pub ts_epoch_ns: u64,
    /// The receiver's timestamp offset (its `tp->tsoffset`), TS ticks (ms): the
    /// Linux-unit TSval of the last ACK is (`rcv_tsval_ns` + epoch) in ms + this.
    pub peer_ts_offset_ms: u32,
    /// The host's clock phase, ns: simulated time `t` reads `t + clock_phase_ns` on the
    /// host's tick clocks, jiffies and the 1 ms TCP timestamp clock: `ts_epoch_ns` within
    /// [`HOST_CLOCK_PHASE_SPAN_NS`], where those clocks tick as they do on the whole epoch.
    pub clock_phase_ns: u64,
    /// Packets SACKed above snd_una (`tp->sacked_out`), current at `pkts_acked`.
    pub sacked_out: u32,
    /// `delivered` when the most recently sent packet this ACK delivered was sent
    /// (Linux `sack->rate->prior_delivered`; 0 if none), current at `pkts_acked`:
    /// Linux's `ack_sample.in_flight` is mss x (delivered - this).
    pub rate_prior_delivered: u64,
    /// Set by a CCA's `cong_avoid` to ask for Linux's `tcp_enter_cwr` (CDG's
    /// delay-gradient backoff); the sender enters CWR right after the hook.
    pub enter_cwr: bool,
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
            ts_epoch_ns: 0,
            peer_ts_offset_ms: 0,
            clock_phase_ns: 0,
            sacked_out: 0,
            rate_prior_delivered: 0,
            enter_cwr: false,
        }
    }

    /// The timestamp clocks of TCP flow `flow` of a run with `seed` whose hosts' clock,
    /// `tcp_clock_ns` (ns since boot, `ktime_get_ns`), reads `epoch_ns` at time 0
    /// ([`host_clock_epoch_ns`]): its whole value for TSvals in Linux units, its phase
    /// within [`HOST_CLOCK_PHASE_SPAN_NS`] for the tick clocks ([`TcpCc::host_clock_ns`]).
    /// Linux with `net.ipv4.tcp_timestamps = 1` (its default) adds "a random offset for
    /// each connection" (Documentation/networking/ip-sysctl.rst): each end's
    /// `tp->tsoffset = secure_tcp_ts_off(net, saddr, daddr)` (net/core/secure_seq.c, a
    /// keyed hash with a per-boot secret) to every TSval it sends (`tcp_skb_timestamp_ts`
    /// + tsoffset, tcp_output.c) and takes its own off the TSecr it receives
    /// (`tcp_fast_parse_options`, tcp_input.c): only the receiver's offset reaches the
    /// sender's CCA, a uniform u32 from the flow's own stream
    /// ([`crate::rng::stream::TCP_TS_OFFSET`]). With `= 2` (`random = false`) no end
    /// adds one. Only values in Linux units read them (TCP-LP); everything else uses
    /// timestamp differences.
    pub fn draw_ts_clocks(&mut self, seed: u64, flow: u32, random: bool, epoch_ns: u64) {
        use crate::rng::{stream, stream_rng};
        use rand::Rng;
        self.ts_epoch_ns = epoch_ns;
        self.clock_phase_ns = epoch_ns % HOST_CLOCK_PHASE_SPAN_NS;
        self.peer_ts_offset_ms = if random { stream_rng(seed, stream::TCP_TS_OFFSET + flow as u64).gen() } else { 0 };
    }

    /// Time `ns` on the host's tick clocks (jiffies, the TCP timestamp clock): `ns` plus the
    /// host's clock phase (the epoch's, [`TcpCc::draw_ts_clocks`]).
    pub fn host_clock_ns(&self, ns: u64) -> u64 {
        ns + self.clock_phase_ns
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// The opening of Linux's loss-based `cong_avoid` hooks (`tcp_reno_cong_avoid`): no growth
    /// unless the window limits the sender (`tcp_is_cwnd_limited`), then slow start below
    /// ssthresh. The ACKed segments left for congestion avoidance; None: nothing more to do.
    #[inline]
    pub fn after_slow_start(&mut self, acked: u32) -> Option<u32> {
        if !self.is_cwnd_limited {
            return None;
        }
        if !self.in_slow_start() {
            return Some(acked);
        }
        let left = self.slow_start(acked);
        (left > 0).then_some(left)
    }

    /// The same opening as tcp_highspeed.c and tcp_htcp.c write it: slow start takes the whole
    /// ACK (no leftover carried into congestion avoidance). True: congestion avoidance follows.
    #[inline]
    pub fn past_slow_start(&mut self, acked: u32) -> bool {
        if !self.is_cwnd_limited {
            return false;
        }
        if self.in_slow_start() {
            self.slow_start(acked);
            return false;
        }
        true
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
    /// Packets the cumulative ACK removed from the retransmission queue,
    /// SACKed earlier or not (Linux `tcp_clean_rtx_queue`'s `pkts_acked`);
    /// 0 for an ACK that only SACKs or repeats. `pkts_acked` is called on
    /// every ACK.
    pub pkts_acked: u32,
    /// RTT sample of this ACK, ns; negative = none (e.g. only retransmissions acked).
    pub rtt_ns: i64,
    /// In-flight before this ACK.
    pub in_flight: u32,
}

/// Span of the hosts' clock phase, ns: one jiffy at HZ = 250, a whole number of jiffies at
/// HZ = 1000 and of 1 ms timestamp ticks, so that every tick clock's phase is uniform.
pub const HOST_CLOCK_PHASE_SPAN_NS: u64 = 4_000_000;

/// The TCP timestamp clock's wrap, ns: TSvals are ms mod 2^32.
const TS_WRAP_NS: u64 = (1 << 32) * 1_000_000;

/// The hosts' clock (`tcp_clock_ns`, ns since boot) at the run's time 0: `given` (a testbed
/// run's recorded one, RunConfig `tcp_timestamp_epoch_ns`) or one uniform value below 2^32 ms
/// drawn from the seed ([`crate::rng::stream::TCP_TS_EPOCH`]), mod 2^32 ms. Linux's tick
/// clocks count from the host's boot, not from a connection's start: jiffies from
/// `INITIAL_JIFFIES` at each tick (include/linux/jiffies.h, kernel/time/tick-common.c
/// `tick_periodic` -> `do_timer`), the TCP timestamp clock as whole ms of `tcp_clock_ns()`
/// (`ktime_get_ns`, include/net/tcp.h `tcp_time_stamp_ms`), so where a flow's start falls
/// within a tick is arbitrary; its phase within [`HOST_CLOCK_PHASE_SPAN_NS`] is uniform. One
/// clock per run: the reference testbed's flows share one kernel. With `phase = false`
/// (`noise = "none"`'s idealized hosts) the clock reads a whole span at time 0, so the tick
/// clocks tick at time 0.
pub fn host_clock_epoch_ns(seed: u64, given: Option<u64>, phase: bool) -> u64 {
    use rand::Rng;
    let drawn = || crate::rng::stream_rng(seed, crate::rng::stream::TCP_TS_EPOCH).gen_range(0..TS_WRAP_NS);
    let epoch = given.unwrap_or_else(drawn) % TS_WRAP_NS;
    if phase {
        epoch
    } else {
        epoch - epoch % HOST_CLOCK_PHASE_SPAN_NS
    }
}

/// Linux's jiffies at time `ns` with a kernel tick rate of `hz` per second (CONFIG_HZ).
pub(crate) const fn jiffies(ns: u64, hz: u64) -> u64 {
    ns / (1_000_000_000 / hz)
}

/// The reference kernel's tick rate, jiffies per second: CONFIG_HZ of the testbed's Linux 6.18
/// (/proc/config.gz: CONFIG_HZ = 250; Debian's and Ubuntu's too).
pub(crate) const KERNEL_HZ: u64 = 250;
/// Nanoseconds per jiffy at [`KERNEL_HZ`].
pub(crate) const NS_PER_KERNEL_JIFFY: u64 = 1_000_000_000 / KERNEL_HZ;
/// kernel/time/timer.c: a wheel level's buckets (`LVL_BITS` = 6) and the granularity step
/// between levels (`LVL_CLK_SHIFT` = 3).
const TIMER_LVL_SIZE: u64 = 64;
const TIMER_LVL_CLK_SHIFT: u32 = 3;
/// The wheel's last level's shift (`LVL_DEPTH` = 9 at HZ > 100: levels 0-8).
const TIMER_LVL_MAX_SHIFT: u32 = 8 * TIMER_LVL_CLK_SHIFT;

/// Linux `usecs_to_jiffies` of a span in ns (truncated to us first): whole jiffies at
/// [`KERNEL_HZ`], rounded up: `ceil(floor(ns / 1000) / U)` with U = us per jiffy. As one
/// division: `ceil(q / U) = floor((q + U - 1) / U)` and `floor(ns / 1000) + c = floor((ns +
/// 1000 c) / 1000)`, and nested floor divisions by whole numbers are one by their product,
/// so it is `floor((ns + 1000 (U - 1)) / (1000 U))` (the test
/// `usecs_to_jiffies_is_linuxs_two_step_rounding`); the sum's overflow (a span of ~584
/// years) takes the two steps.
pub(crate) const fn usecs_to_jiffies(ns: u64) -> u64 {
    const US_PER_JIFFY: u64 = NS_PER_KERNEL_JIFFY / 1_000;
    match ns.checked_add(1_000 * (US_PER_JIFFY - 1)) {
        Some(sum) => sum / NS_PER_KERNEL_JIFFY,
        None => (ns / 1_000).div_ceil(US_PER_JIFFY),
    }
}

/// The host time (ns, on the host's clock: [`TcpCc::host_clock_ns`]) at which a Linux
/// `timer_list` (a jiffy timer: the delayed-ACK timer) armed at host time `host_ns` to expire
/// `n` jiffies later (`jiffies + n`) fires. The timer wheel never fires a timer early: a timer
/// armed just before a tick would, so kernel/time/timer.c `calc_index` puts it in the bucket
/// after its expiry at its level's granularity (`(expires >> LVL_SHIFT(lvl)) + 1`), and the
/// level is the first whose range holds `n` (`calc_wheel_index`: `LVL_START(lvl + 1)` =
/// 63 << 3 lvl jiffies). So a timer fewer than 63 jiffies ahead fires at the tick of
/// `jiffies + n + 1`: between `n` and `n + 1` jiffies after it is armed, by where in its jiffy
/// it was armed (Thomas Gleixner on netdev, 2022: "the off by one has a reason and is required
/// to prevent too short timeouts ... a property of low granularity tick based timer wheels").
pub(crate) const fn timer_list_fires_at_ns(host_ns: u64, n: u64) -> u64 {
    let mut shift = 0;
    while shift < TIMER_LVL_MAX_SHIFT && n >= (TIMER_LVL_SIZE - 1) << shift {
        shift += TIMER_LVL_CLK_SHIFT;
    }
    let expires = host_ns / NS_PER_KERNEL_JIFFY + n;
    (((expires >> shift) + 1) << shift) * NS_PER_KERNEL_JIFFY
}

/// The optional hooks the sender calls on every ACK or every send
/// (`in_ack_event`, `pkts_acked`, `cong_control`, `min_tso_segs`) that an
/// algorithm implements, declared next to them ([`CongestionControl::hooks`],
/// the `hooks!` macro). The sender reads the set once, when the flow is built,
/// and skips the call of a hook outside it: the trait's default there does
/// nothing (`in_ack_event`, `pkts_acked`) or answers what the sender then
/// assumes (`cong_control` false, `min_tso_segs` None), so the run is the same
/// and each ACK makes up to three indirect calls fewer (docs/benchmarks.md).
/// The test `skipping_the_hooks_an_algorithm_does_not_declare_changes_no_result`
/// (sim.rs) runs every registered algorithm with and without the skipping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hooks(u8);

impl Hooks {
    pub const NONE: Hooks = Hooks(0);
    pub const IN_ACK_EVENT: Hooks = Hooks(1);
    pub const PKTS_ACKED: Hooks = Hooks(1 << 1);
    pub const CONG_CONTROL: Hooks = Hooks(1 << 2);
    pub const MIN_TSO_SEGS: Hooks = Hooks(1 << 3);
    pub const ALL: Hooks = Hooks(0b1111);

    /// This set and `other`'s hooks.
    pub const fn with(self, other: Hooks) -> Hooks {
        Hooks(self.0 | other.0)
    }

    /// Whether every hook of `h` is in the set.
    #[inline(always)]
    pub const fn has(self, h: Hooks) -> bool {
        self.0 & h.0 == h.0
    }
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

    /// The fewest segments per TSO/GSO skb (Linux `min_tso_segs`, which
    /// `tcp_tso_segs` asks before `tcp_tso_autosize`); None: the sysctl's
    /// `tcp_min_tso_segs`.
    fn min_tso_segs(&self, _tp: &TcpCc) -> Option<u32> {
        None
    }

    /// Whether the sender should pace even if the flow did not ask for pacing
    /// (BBR: `sk_pacing_status = SK_PACING_NEEDED`).
    fn needs_pacing(&self) -> bool {
        false
    }

    /// The receiver ACKs a segment carrying CWR at once: Linux's `tcp_ecn_accept_cwr`
    /// under RFC 3168 ECN negotiation, which DCTCP uses (tcp/receiver.rs); AccECN
    /// (Prague) does not.
    fn acks_cwr_at_once(&self) -> bool {
        false
    }

    /// The receiver's ACK echoes the TSval of the newest segment it covers, a per-packet
    /// one-way delay report (RFC 6817's LEDBAT receiver, ns-3's TCP), instead of Linux's
    /// first segment since the previous ACK (`tcp_replace_ts_recent`, tcp/receiver.rs).
    fn echoes_newest_tsval(&self) -> bool {
        false
    }

    /// The optional per-ACK and per-send hooks it implements ([`Hooks`]; the
    /// `hooks!` macro). Default: all of them, so an algorithm that declares
    /// nothing gets every call.
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }

    /// True when the CCA sets `tp.pacing_rate_bytes_per_s` itself (BBR). The
    /// sender computes Linux's `tcp_update_pacing_rate` only for CCAs without
    /// `cong_control`, so this is informational.
    fn sets_pacing_rate(&self) -> bool {
        false
    }
}

/// A congestion-control algorithm's declaration, next to its code: name,
/// source, declared parameters ([`crate::declare_params!`]) and constructor.
/// Registering it is one line in [`REGISTRY`].
pub trait Cca {
    /// Parameters (see crate::params); `NoParams` if it has none.
    type Params: Params;
    /// Canonical name (Linux's spelling).
    const NAME: &'static str;
    /// Where the algorithm is specified (RFC, paper, Linux file).
    const SOURCE: &'static str;
    /// Named parameter sets, kept as names (older variant names such as `prague-rttdep`).
    const VARIANTS: &'static [Variant] = &[];
    /// A fresh instance; `seed` feeds the algorithm's own random choices.
    fn build(p: &Self::Params, seed: u64) -> Box<dyn CongestionControl>;
}

/// A named parameter set of an algorithm: `name` means `base` with `params`.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    pub name: &'static str,
    /// JSON object of field values (simulator units), e.g. `{"target_ns": 25000000}`.
    pub params: &'static str,
    pub doc: &'static str,
    /// Other spellings of the variant's name (lower case).
    pub aliases: &'static [&'static str],
}

/// One registered algorithm (built from a [`Cca`] by [`tcp`]).
pub struct Entry {
    pub name: &'static str,
    pub source: &'static str,
    /// Other spellings accepted in experiment files (lower case).
    pub aliases: &'static [&'static str],
    pub variants: &'static [Variant],
    pub spec: fn() -> Vec<ParamSpec>,
    /// The given fields over the defaults, validated: an [`Algorithm`].
    pub prepare: PrepareFn,
    /// Its colour in figures (`#rrggbb`; None: one drawn from its name), and that of its
    /// paced flows when they differ (plots.py).
    pub colour: Option<&'static str>,
    pub paced_colour: Option<&'static str>,
}

impl Entry {
    /// The entry with its colour in figures.
    pub const fn colour(self, colour: &'static str) -> Entry {
        Entry { colour: Some(colour), ..self }
    }

    /// The entry with the colour of its paced flows in figures.
    pub const fn paced_colour(self, colour: &'static str) -> Entry {
        Entry { paced_colour: Some(colour), ..self }
    }
}

/// Parameters (field names, simulator units) -> the algorithm with every parameter validated.
pub type PrepareFn = fn(&Map<String, Value>) -> Result<Algorithm, ParamError>;

/// An algorithm with its parameters validated (typed, [`crate::params::Params`]): it builds
/// instances and lists the parameters it runs with without checking them again. The only way
/// to one is [`prepare`] (a registry entry's `prepare`), so a run validates each flow's
/// parameters once (`RunConfig::resolve`) and builds its flows from the result.
pub struct Algorithm(Box<dyn Prepared>);

/// The typed parameters of one algorithm behind [`Algorithm`].
trait Prepared: Send + Sync {
    /// A fresh instance; None: not a TCP congestion control (DCCP's CCID 2, run by dccp/).
    fn build(&self, seed: u64) -> Option<Box<dyn CongestionControl>>;
    fn to_map(&self) -> Map<String, Value>;
}

/// A TCP congestion control `C` with its parameters.
struct Tcp<C: Cca>(C::Params, std::marker::PhantomData<fn() -> C>);

impl<C: Cca + 'static> Prepared for Tcp<C> {
    fn build(&self, seed: u64) -> Option<Box<dyn CongestionControl>> {
        Some(C::build(&self.0, seed))
    }
    fn to_map(&self) -> Map<String, Value> {
        self.0.to_map()
    }
}

/// An entry that is not a TCP congestion control, with its parameters (none).
struct NotTcp(crate::params::NoParams);

impl Prepared for NotTcp {
    fn build(&self, _seed: u64) -> Option<Box<dyn CongestionControl>> {
        None
    }
    fn to_map(&self) -> Map<String, Value> {
        self.0.to_map()
    }
}

impl Algorithm {
    /// A fresh instance (`seed`: the algorithm's own random choices); None for DCCP's CCID 2.
    pub fn build(&self, seed: u64) -> Option<Box<dyn CongestionControl>> {
        self.0.build(seed)
    }

    /// Every parameter it runs with, by field name (simulator units).
    pub fn resolved(&self) -> Map<String, Value> {
        self.0.to_map()
    }
}

#[cfg(test)]
impl Algorithm {
    /// This algorithm with every optional hook called whatever it declares
    /// ([`Hooks`]): its instances answer `hooks()` with the default, all.
    pub(crate) fn calling_every_hook(self) -> Algorithm {
        Algorithm(Box::new(EveryHook(self.0)))
    }
}

/// An algorithm whose instances are wrapped in [`CallsEveryHook`].
#[cfg(test)]
struct EveryHook(Box<dyn Prepared>);

#[cfg(test)]
impl Prepared for EveryHook {
    fn build(&self, seed: u64) -> Option<Box<dyn CongestionControl>> {
        self.0.build(seed).map(|c| Box::new(CallsEveryHook(c)) as Box<dyn CongestionControl>)
    }
    fn to_map(&self) -> Map<String, Value> {
        self.0.to_map()
    }
}

/// An algorithm passing every call on to `0` but `hooks`, which keeps the
/// trait's default (every hook called).
#[cfg(test)]
struct CallsEveryHook(Box<dyn CongestionControl>);

#[cfg(test)]
impl CongestionControl for CallsEveryHook {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn init(&mut self, tp: &mut TcpCc) {
        self.0.init(tp)
    }
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.0.ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        self.0.cong_avoid(tp, acked)
    }
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) -> bool {
        self.0.cong_control(tp, rs)
    }
    fn pkts_acked(&mut self, tp: &mut TcpCc, sample: &AckSample) {
        self.0.pkts_acked(tp, sample)
    }
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        self.0.set_state(tp, new_state)
    }
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CaEvent) {
        self.0.cwnd_event(tp, ev)
    }
    fn undo_cwnd(&mut self, tp: &TcpCc) -> u32 {
        self.0.undo_cwnd(tp)
    }
    fn in_ack_event(&mut self, tp: &mut TcpCc, ece: bool) {
        self.0.in_ack_event(tp, ece)
    }
    fn needs_ecn(&self) -> bool {
        self.0.needs_ecn()
    }
    fn min_tso_segs(&self, tp: &TcpCc) -> Option<u32> {
        self.0.min_tso_segs(tp)
    }
    fn needs_pacing(&self) -> bool {
        self.0.needs_pacing()
    }
    fn acks_cwr_at_once(&self) -> bool {
        self.0.acks_cwr_at_once()
    }
    fn echoes_newest_tsval(&self) -> bool {
        self.0.echoes_newest_tsval()
    }
    fn sets_pacing_rate(&self) -> bool {
        self.0.sets_pacing_rate()
    }
}

impl std::fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Algorithm({:?})", self.resolved())
    }
}

fn prepare_tcp<C: Cca + 'static>(m: &Map<String, Value>) -> Result<Algorithm, ParamError> {
    C::Params::from_map(m).map(|p| Algorithm(Box::new(Tcp::<C>(p, std::marker::PhantomData))))
}

fn prepare_not_tcp(m: &Map<String, Value>) -> Result<Algorithm, ParamError> {
    crate::params::NoParams::from_map(m).map(|p| Algorithm(Box::new(NotTcp(p))))
}

/// The registry entry of a TCP congestion control, with its alternative spellings.
pub const fn tcp<C: Cca + 'static>(aliases: &'static [&'static str]) -> Entry {
    Entry {
        name: C::NAME,
        source: C::SOURCE,
        aliases,
        variants: C::VARIANTS,
        spec: C::Params::spec,
        prepare: prepare_tcp::<C>,
        colour: None,
        paced_colour: None,
    }
}

/// Every algorithm, one line each: `tcp::<file::Type>(&[aliases])`, with its colour in
/// figures for the common ones (Okabe & Ito 2008's colour-blind-safe palette, then tab10).
pub static REGISTRY: &[Entry] = &[
    tcp::<reno::Reno>(&["newreno", "new-reno", "new_reno"]).colour("#009E73"),
    tcp::<cubic::Cubic>(&[]).colour("#0072B2").paced_colour("#56B4E9"),
    tcp::<bbr::Bbr>(&["bbr1", "bbrv1"]).colour("#D55E00"),
    tcp::<bic::Bic>(&["tcpbic", "bic-tcp"]).colour("#7f7f7f"),
    tcp::<highspeed::HighSpeed>(&["hstcp", "high-speed", "tcphighspeed"]),
    tcp::<htcp::Htcp>(&["h-tcp", "tcphtcp"]),
    tcp::<hybla::Hybla>(&["tcphybla"]),
    tcp::<illinois::Illinois>(&["tcp-illinois", "tcpillinois"]),
    tcp::<scalable::Scalable>(&["stcp", "tcpscalable"]),
    tcp::<veno::Veno>(&["tcpveno"]),
    tcp::<westwood::Westwood>(&["westwood+", "westwoodplus", "westwood-plus", "tcpwestwoodplus"]),
    tcp::<yeah::Yeah>(&["yeah-tcp", "tcpyeah"]),
    tcp::<dctcp::Dctcp>(&[]).colour("#CC79A7"),
    tcp::<prague::Prague>(&["tcp-prague"]).colour("#000000"),
    tcp::<vegas::Vegas>(&["tcpvegas"]).colour("#8c564b"),
    tcp::<ledbat::Ledbat>(&["tcpledbat"]).colour("#bcbd22"),
    tcp::<bbr2::Bbr2>(&["bbrv2"]).colour("#E69F00"),
    tcp::<bbr3::Bbr3>(&["bbrv3"]).colour("#882255"),
    tcp::<lp::Lp>(&["tcp-lp", "tcplp"]),
    tcp::<ctcp::Ctcp>(&["compound", "compoundtcp", "compound-tcp", "tcpcompound"]).colour("#17becf"),
    tcp::<nv::Nv>(&["tcp-nv", "tcpnv"]),
    tcp::<cdg::Cdg>(&["tcp-cdg", "tcpcdg"]),
    Entry {
        name: CCID2_NAME,
        source: "DCCP CCID 2 (TCP-like, datagrams, no retransmission, Ack Ratio): RFC 4341 / RFC 4340; selects transport dccp (dccp/)",
        aliases: &["dccp", "ccid-2", "dccp-ccid2"],
        variants: &[],
        spec: crate::params::NoParams::spec,
        prepare: prepare_not_tcp,
        colour: Some("#9467bd"),
        paced_colour: None,
    },
];

/// The name that selects DCCP with CCID 2 (run by dccp/, not a TCP congestion control).
pub const CCID2_NAME: &str = "ccid2";

/// The entry and (if `name` is a variant) the variant that `name` selects.
/// `name` is canonical, a variant or an alias (exact, lower case).
pub fn lookup(name: &str) -> Option<(&'static Entry, Option<&'static Variant>)> {
    for e in REGISTRY {
        if e.name == name || e.aliases.contains(&name) {
            return Some((e, None));
        }
        if let Some(v) = e.variants.iter().find(|v| v.name == name || v.aliases.contains(&name)) {
            return Some((e, Some(v)));
        }
    }
    None
}

/// The fields a flow's algorithm runs with: its variant's set, then `params` on top.
fn merged(variant: Option<&Variant>, params: &Map<String, Value>) -> Map<String, Value> {
    let mut m = match variant {
        Some(v) => match serde_json::from_str::<Value>(v.params) {
            Ok(Value::Object(m)) => m,
            _ => panic!("variant {} declares invalid JSON params", v.name),
        },
        None => Map::new(),
    };
    m.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
    m
}

/// Algorithm `name` with every parameter it runs with (defaults, variant, then `params`), validated.
pub fn prepare(name: &str, params: &Map<String, Value>) -> Result<Algorithm, ParamError> {
    let (e, v) = lookup(name).ok_or_else(|| ParamError::new("name", unknown_cca(name)))?;
    (e.prepare)(&merged(v, params))
}

/// Every parameter `name` runs with (defaults, variant, then `params`), validated.
pub fn resolve(name: &str, params: &Map<String, Value>) -> Result<Map<String, Value>, ParamError> {
    prepare(name, params).map(|a| a.resolved())
}

/// "unknown CCA 'x'; allowed: ..." for error messages.
pub fn unknown_cca(name: &str) -> String {
    format!("unknown CCA '{name}'; allowed: {}", names().join(", "))
}

/// (canonical name or variant, source) for every algorithm, for `ccfair list ccas`.
pub fn catalogue() -> Vec<(&'static str, &'static str)> {
    let mut out = vec![];
    for e in REGISTRY {
        out.push((e.name, e.source));
        out.extend(e.variants.iter().map(|v| (v.name, v.doc)));
    }
    out
}

/// Canonical names and variants, for error messages.
pub fn names() -> Vec<&'static str> {
    catalogue().iter().map(|(n, _)| *n).collect()
}

/// Build a fresh instance with default parameters (see [`make_with`]).
pub fn make(name: &str, seed: u64) -> Option<Box<dyn CongestionControl>> {
    make_with(name, &Map::new(), seed).ok()
}

/// Build a fresh instance by name (canonical or variant) with `params` (field
/// names, simulator units) over the defaults. `seed` feeds the algorithm's own
/// random choices (e.g. BBR's initial gain-cycle phase); it is derived from the
/// run seed and the flow index, so runs stay deterministic.
pub fn make_with(name: &str, params: &Map<String, Value>, seed: u64) -> Result<Box<dyn CongestionControl>, ParamError> {
    prepare(name, params)?.build(seed).ok_or_else(|| ParamError::new("name", format!("'{name}' is not a TCP congestion control")))
}

/// The registry as JSON (for `_core.schema()`): per algorithm its name, source,
/// aliases, variants, parameters, transport, colours in figures, and its capabilities
/// (needs ECN, always paces).
pub fn schema_json() -> Value {
    REGISTRY.iter().map(entry_json).collect()
}

/// One registry entry as JSON (see [`schema_json`]).
pub fn entry_json(e: &Entry) -> Value {
    let built = |v: Option<&Variant>| (e.prepare)(&merged(v, &Map::new())).ok().and_then(|a| a.build(0));
    let needs_ecn = |v: Option<&Variant>| built(v).is_some_and(|c| c.needs_ecn());
    let needs_pacing = |v: Option<&Variant>| built(v).is_some_and(|c| c.needs_pacing());
    let variants: Vec<Value> = e
        .variants
        .iter()
        .map(|v| {
            serde_json::json!({"name": v.name, "params": serde_json::from_str::<Value>(v.params).unwrap_or(Value::Null),
                "doc": v.doc, "aliases": v.aliases, "needs_ecn": needs_ecn(Some(v)), "needs_pacing": needs_pacing(Some(v))})
        })
        .collect();
    serde_json::json!({
        "name": e.name,
        "source": e.source,
        "aliases": e.aliases,
        "variants": variants,
        "transport": if built(None).is_some() { "tcp" } else { "dccp" },
        "needs_ecn": needs_ecn(None),
        "needs_pacing": needs_pacing(None),
        "colour": e.colour,
        "paced_colour": e.paced_colour,
        "params": (e.spec)().iter().map(ParamSpec::to_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// A connection state as the sender has it after the handshake.
    pub fn tp() -> TcpCc {
        TcpCc::new(1448, 1500, 10)
    }

    /// The same at a given window and slow-start threshold.
    pub fn tp_at(cwnd: u32, ssthresh: u32) -> TcpCc {
        TcpCc { cwnd, ssthresh, ..tp() }
    }

    /// A fresh `C` after its `init` on a fresh connection state.
    pub fn started<C: CongestionControl + Default>() -> (C, TcpCc) {
        let (mut c, mut t) = (C::default(), tp());
        c.init(&mut t);
        (c, t)
    }

    /// `n` ACKs of one packet each through `cc.cong_avoid`; the window after them.
    pub fn ack_each(cc: &mut (impl CongestionControl + ?Sized), t: &mut TcpCc, n: u32) -> u32 {
        for _ in 0..n {
            cc.cong_avoid(t, 1);
        }
        t.cwnd
    }

    /// From `cwnd` and `ssthresh`, runs of one-packet ACKs (`runs`: how many in each) through
    /// `cc.cong_avoid`; the window after each run.
    pub fn cwnds_after(mut cc: impl CongestionControl, cwnd: u32, ssthresh: u32, runs: &[u32]) -> Vec<u32> {
        let mut t = tp_at(cwnd, ssthresh);
        runs.iter().map(|&n| ack_each(&mut cc, &mut t, n)).collect()
    }
}

#[cfg(test)]
mod clock_phase_tests {
    use super::*;

    #[test]
    fn the_hosts_clock_is_one_draw_per_seed_its_phase_uniform_over_one_jiffy_at_hz_250() {
        // Linux's tick clocks count from boot (jiffies from INITIAL_JIFFIES, the timestamp
        // clock as ms of ktime_get_ns), so a flow's start falls anywhere within a tick:
        // same seed, same clock; over many seeds every quarter of the 4 ms span is as likely.
        let phase = |seed| host_clock_epoch_ns(seed, None, true) % HOST_CLOCK_PHASE_SPAN_NS;
        assert_eq!(host_clock_epoch_ns(7, None, true), host_clock_epoch_ns(7, None, true));
        let draws: Vec<u64> = (0..4000).map(phase).collect();
        for q in 0..4 {
            let lo = q * HOST_CLOCK_PHASE_SPAN_NS / 4;
            let n = draws.iter().filter(|&&p| (lo..lo + HOST_CLOCK_PHASE_SPAN_NS / 4).contains(&p)).count();
            assert!((900..1100).contains(&n), "quarter {q}: {n} of 4000");
        }
        // The span is whole ticks of every clock that reads it: HZ 250 and 1000 (1 ms: also
        // the TCP timestamp tick).
        assert_eq!(HOST_CLOCK_PHASE_SPAN_NS % (1_000_000_000 / 250), 0);
        assert_eq!(HOST_CLOCK_PHASE_SPAN_NS % (1_000_000_000 / 1000), 0);
        // A testbed run's recorded clock is the run's; idealized hosts tick at time 0.
        assert_eq!(host_clock_epoch_ns(7, Some(59_059_023_581_346), true), 59_059_023_581_346);
        assert_eq!(host_clock_epoch_ns(7, Some(59_059_023_581_346), false), 59_059_020_000_000);
    }

    #[test]
    fn a_flows_tick_phase_is_its_hosts_clock_within_one_span() {
        // The TSvals LP reads are the whole clock in ms; jiffies and the timestamp ticks tick
        // where the whole clock's would: at the clock's phase within 4 ms.
        let mut t = testutil::tp();
        t.draw_ts_clocks(1, 0, false, 59_059_023_581_346);
        assert_eq!((t.ts_epoch_ns, t.clock_phase_ns), (59_059_023_581_346, 3_581_346));
    }

    #[test]
    fn a_jiffy_timer_fires_at_the_wheel_tick_after_its_expiry_never_before() {
        // kernel/time/timer.c calc_wheel_index / calc_index at HZ = 250 (4 ms): below 63
        // jiffies ahead (level 0) the tick after jiffies + n; from 63 (level 1, 8 jiffies a
        // bucket) the next multiple of 8 after it; from 504 (level 2) of 64.
        let j = |k: u64| k * NS_PER_KERNEL_JIFFY;
        assert_eq!(timer_list_fires_at_ns(j(5), 10), j(16));
        assert_eq!(timer_list_fires_at_ns(j(5) + 3_999_999, 10), j(16));
        assert_eq!(timer_list_fires_at_ns(j(0), 62), j(63));
        assert_eq!(timer_list_fires_at_ns(j(0), 63), j(64));
        assert_eq!(timer_list_fires_at_ns(j(5), 100), j(112));
        assert_eq!(timer_list_fires_at_ns(j(1), 600), j(640));
        for n in [1, 10, 50, 62, 63, 100, 503, 504, 4000] {
            for at in [j(7), j(7) + 1, j(8) - 1] {
                let fires = timer_list_fires_at_ns(at, n);
                assert!(fires > j(7 + n) && fires % NS_PER_KERNEL_JIFFY == 0, "n {n}, armed at {at}");
            }
        }
    }

    #[test]
    fn usecs_to_jiffies_is_linuxs_two_step_rounding() {
        // include/linux/jiffies.h: usecs_to_jiffies rounds a span in us up to whole jiffies;
        // a span in ns is truncated to us first, as TCP's us clock is.
        let two_step = |ns: u64| (ns / 1_000).div_ceil(NS_PER_KERNEL_JIFFY / 1_000);
        let j = NS_PER_KERNEL_JIFFY;
        let edges = [0, 1, 999, 1_000, 1_001, j - 1_000, j - 1, j, j + 1, j + 999, j + 1_000, 7 * j + 500];
        // The largest span whose sum does not overflow, the first that does, the largest.
        let last_sum = u64::MAX - (j - 1_000);
        for ns in edges.into_iter().chain([last_sum, last_sum + 1, u64::MAX]) {
            assert_eq!(usecs_to_jiffies(ns), two_step(ns), "ns {ns}");
        }
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            for ns in [x >> 24, x >> 34, x] {
                assert_eq!(usecs_to_jiffies(ns), two_step(ns), "ns {ns}");
            }
        }
        assert_eq!(usecs_to_jiffies(50_000_000), 13); // 50 ms at HZ 250: 12.5 jiffies, up
    }

    #[test]
    fn jiffies_tick_at_the_hosts_clock_phase() {
        let mut t = testutil::tp();
        t.clock_phase_ns = 1_500_000;
        // Simulated 2.5 ms is 4 ms on the host: the first HZ = 250 jiffy has ticked.
        assert_eq!(jiffies(t.host_clock_ns(2_499_999), 250), 0);
        assert_eq!(jiffies(t.host_clock_ns(2_500_000), 250), 1);
    }
}

#[cfg(test)]
mod registry_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_registered_algorithm_resolves_its_defaults_and_builds_under_its_name() {
        for e in REGISTRY {
            let prepared = (e.prepare)(&Map::new()).unwrap();
            let resolved = prepared.resolved();
            let spec = (e.spec)();
            assert_eq!(resolved.len(), spec.len(), "{}", e.name);
            for p in &spec {
                assert_eq!(resolved[p.field], p.default, "{}.{}", e.name, p.name);
                assert!(!p.doc.is_empty(), "{}.{} needs a doc line", e.name, p.name);
            }
            let tcp = prepared.build(1);
            if let Some(cc) = &tcp {
                assert_eq!(cc.name(), e.name);
            }
            for v in e.variants {
                assert!(make(v.name, 1).is_some() || tcp.is_none(), "{}", v.name);
            }
        }
    }

    #[test]
    fn names_aliases_and_variants_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for e in REGISTRY {
            for n in std::iter::once(&e.name).chain(e.aliases).chain(e.variants.iter().map(|v| &v.name)) {
                assert!(seen.insert(*n), "{n} registered twice");
            }
        }
    }

    #[test]
    fn a_variant_is_its_base_with_the_declared_parameters_and_given_ones_on_top() {
        let none = Map::new();
        assert_eq!(resolve("ledbat25", &none).unwrap()["target_ns"], json!(25_000_000));
        assert_eq!(resolve("ledbat-25ms", &none).unwrap()["target_ns"], json!(25_000_000));
        let given = json!({"target_ns": 50_000_000});
        assert_eq!(resolve("ledbat25", given.as_object().unwrap()).unwrap()["target_ns"], json!(50_000_000));
        assert_eq!(resolve("prague-rttdep", &none).unwrap()["rtt_independence"], json!(false));
        assert!(make("prague-rttdep", 1).is_some());
    }

    #[test]
    fn an_invalid_parameter_is_refused_with_its_name() {
        let bad = json!({"beta": 1.0});
        let e = make_with("cubic", bad.as_object().unwrap(), 1).err().unwrap();
        assert_eq!((e.field.as_str(), e.msg.as_str()), ("beta", "must be a number in (0, 1), got 1"));
        assert_eq!(resolve("nosuch", &Map::new()).unwrap_err().field, "name");
    }

    #[test]
    fn the_schema_lists_every_algorithm_with_its_parameters_and_ecn_need() {
        let s = schema_json();
        let by_name = |n: &str| s.as_array().unwrap().iter().find(|e| e["name"] == n).unwrap().clone();
        assert_eq!(by_name("dctcp")["needs_ecn"], json!(true));
        assert_eq!(by_name("cubic")["needs_ecn"], json!(false));
        assert_eq!(by_name("prague")["variants"][0]["needs_ecn"], json!(true));
        assert_eq!(by_name("ccid2")["transport"], json!("dccp"));
        let beta = by_name("cubic")["params"][0].clone();
        assert_eq!(
            (beta["name"].clone(), beta["default"].clone(), beta["exclusive_maximum"].clone()),
            (json!("beta"), json!(0.7), json!(1.0))
        );
    }

    /// A new algorithm is one file: its params (declare_params!), its Cca impl,
    /// and one registry line `tcp::<toy::Toy>(&[...])`. This is that file.
    mod toy {
        use super::super::*;

        crate::declare_cca! {
            /// Toy: Reno with another decrease factor.
            pub struct ToyConfig {
                /// Multiplicative decrease factor.
                beta: f64 = 0.5, Range::open(0.0, 1.0);
            }
            cca Toy = "toy", "a test";
            build = |p, _seed| Toy(p.beta);
        }

        pub struct Toy(f64);

        impl CongestionControl for Toy {
            fn name(&self) -> &'static str {
                "toy"
            }
            fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
                ((f64::from(tp.cwnd) * self.0) as u32).max(2)
            }
            needs!(pacing);
        }
    }

    #[test]
    fn a_toy_algorithm_needs_one_declaration_and_one_registry_line() {
        let entry = tcp::<toy::Toy>(&["toy-tcp"]).colour("#123456");
        let given = json!({"beta": 0.25});
        let mut cc = (entry.prepare)(given.as_object().unwrap()).unwrap().build(1).unwrap();
        let tp = TcpCc::new(1448, 1500, 100);
        assert_eq!(cc.ssthresh(&tp), 25);
        assert_eq!((entry.prepare)(&Map::new()).unwrap().resolved()["beta"], json!(0.5));
        let bad = json!({"beta": 2});
        assert_eq!((entry.prepare)(bad.as_object().unwrap()).unwrap_err().field, "beta");
        assert_eq!((entry.spec)()[0].doc, "Multiplicative decrease factor.");
        // what Python, the schema and the figures learn from the same line (`_core.schema()`)
        let j = entry_json(&entry);
        assert_eq!((j["name"].clone(), j["aliases"].clone(), j["transport"].clone()), (json!("toy"), json!(["toy-tcp"]), json!("tcp")));
        assert_eq!((j["needs_pacing"].clone(), j["needs_ecn"].clone()), (json!(true), json!(false)));
        assert_eq!((j["colour"].clone(), j["paced_colour"].clone()), (json!("#123456"), Value::Null));
        assert_eq!(j["params"][0]["name"], json!("beta"));
    }

    #[test]
    fn capabilities_come_from_the_algorithms_themselves() {
        let schema = schema_json();
        let entry = |name: &str| schema.as_array().unwrap().iter().find(|e| e["name"] == name).unwrap().clone();
        for (name, pacing, ecn) in
            [("bbr", true, false), ("bbr2", true, false), ("prague", true, true), ("cubic", false, false), ("dctcp", false, true)]
        {
            assert_eq!((entry(name)["needs_pacing"].clone(), entry(name)["needs_ecn"].clone()), (json!(pacing), json!(ecn)), "{name}");
        }
        assert_eq!(entry(CCID2_NAME)["transport"], json!("dccp"));
        let acks_cwr: Vec<&str> = REGISTRY
            .iter()
            .filter_map(|e| (e.prepare)(&Map::new()).unwrap().build(0))
            .filter(|c| c.acks_cwr_at_once())
            .map(|c| c.name())
            .collect();
        assert_eq!(acks_cwr, ["dctcp"], "Linux: only DCTCP negotiates RFC 3168 ECN among ECN-based CCAs here");
    }
}
