//! TCP receiver, modelled on Linux (net/ipv4/tcp_input.c).
//!
//! - In-order data advances `rcv_nxt` and is delivered to the application
//!   immediately (the reader is never the bottleneck).
//! - Delayed ACKs (RFC 1122 4.2.3.2, RFC 5681 4.2, Linux `__tcp_ack_snd_check`):
//!   ACK every second full segment, otherwise after the delayed-ACK timer.
//!   Its timeout `ato` adapts as Linux's, in jiffies of the host's clock
//!   (HZ = 250: 4 ms): it starts at TCP_ATO_MIN = 10 jiffies (40 ms);
//!   each in-order data skb (`tcp_event_data_recv`, gap m in whole jiffies
//!   since the last) sets it to ato / 2 + 5 if m <= 5, to min(ato / 2 + m,
//!   RTO) if m < ato, and enters quick-ACK mode if m exceeds the receiver's
//!   RTO; a timer that fires doubles it, at most to the RTO
//!   (`tcp_delack_timer_handler`); the timer is set to ato, above 40 ms
//!   bounded by the receiver's smoothed RTT (at least 40 ms) and by
//!   TCP_DELACK_MAX = 200 ms (`tcp_send_delayed_ack`), and as a jiffy timer
//!   it fires at the timer wheel's tick after `jiffies + ato`: 40-44 ms
//!   after a lone segment (kernel/time/timer.c `calc_index`; cc/mod.rs
//!   `timer_list_fires_at_ns`). The receiver's RTT is
//!   the handshake's (SYN-ACK to the first data segment here, to the
//!   handshake's last ACK in Linux, `tcp_synack_rtt_meas`); a receiver that
//!   sends no data has no other sample, and its RTO is srtt + max(2 srtt,
//!   200 ms) (`tcp_rtt_estimator`'s first sample, `__tcp_set_rto`).
//!   Quick-ACK mode at the start of the connection: the first
//!   min(rwnd / 2, 16) segments are ACKed at once (Linux
//!   `tcp_enter_quickack_mode`, TCP_MAX_QUICKACKS = 16).
//! - Out-of-order data is ACKed at once (RFC 5681 4.2) up to SACK
//!   compression, below; a segment that fills a hole is ACKed at once.
//! - SACK compression (optional, `with_sack_compression`, on in Linux
//!   4.18+ by default, off here: docs/fidelity.md; "tcp: add SACK compression" and
//!   86de5921a3d5; a70437cc09a1 the slack; tcp_input.c `__tcp_ack_snd_check`,
//!   `tcp_sack_compress_send_ack`, tcp_timer.c `tcp_compressed_ack_kick`,
//!   tcp_output.c `tcp_event_ack_sent`): an out-of-order segment that
//!   nothing else ACKs at once (quick-ACK mode, CWR) is ACKed at once if it
//!   is one of the first TCP_FASTRETRANS_THRESH = 3 for this rcv_nxt
//!   (`dup_ack_counter`); later ones are counted (`compressed_ack`) and the
//!   first starts a timer of min(`tcp_comp_sack_delay_ns` = 1 ms, rtt / 20)
//!   plus the hrtimer's slack (`tcp_comp_sack_slack_ns` = 100 us: it fires at
//!   the end of its range here) that sends one ACK with the SACK blocks of
//!   then; rtt is the receiver's estimate (`rcv_rtt_est`), the handshake's
//!   srtt if lower (0 before the first estimate: the slack alone). With
//!   `tcp_comp_sack_nr` = 44 counted, the next is ACKed at once. Any ACK sent
//!   clears the count and stops the timer. A segment that extends the third
//!   or a later SACK block, or opens a block behind two
//!   (TCP_SACK_BLOCKS_EXPECTED = 2, `tcp_sack_new_ofo_skb`), first sends the
//!   pending ACK. The timer uses the delayed-ACK timer's slot: the two are
//!   never armed together (in-order data is ACKed at once while data is held
//!   out of order, and the dupACKs before compression disarm it).
//! - An in-order full-sized segment with PSH is ACKed at once (Linux 6.6+,
//!   commit 4720852ed9af: `tcp_measure_rcv_mss` sets ICSK_ACK_PUSHED for it,
//!   and `__tcp_cleanup_rbuf` sends the scheduled ACK when the application's
//!   read empties the receive queue, which the instant reader here always
//!   does). The sender sets PSH on the last segment of each skb of more
//!   than one segment (tcp/sender.rs), so such a segment that arrives as
//!   the only one unACKed is ACKed alone, and its skb's other segments in
//!   pairs as before.
//! - SACK blocks (RFC 2018 section 4, Linux `tcp_sack_new_ofo_skb`,
//!   `tcp_sack_extend`, `tcp_sack_maybe_coalesce`, `tcp_sack_remove`): the
//!   receiver remembers up to 4 blocks (TCP_NUM_SACKS); the block holding the
//!   newest out-of-order segment moves to the front, a new block pushes the
//!   oldest out; blocks that rcv_nxt reaches are removed. An ACK carries the
//!   first `MAX_SACK_BLOCKS` = 3 of them (timestamps take the rest of the
//!   option space, `tcp_established_options`).
//! - D-SACK (RFC 2883 section 4, Linux `tcp_dsack_set`, `tcp_send_dupack`):
//!   a duplicate segment (below rcv_nxt, or already held out of order) is
//!   reported in a D-SACK block placed first, on the ACK sent at once for it
//!   (a segment below rcv_nxt also enters quick-ACK mode,
//!   `tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)`); the D-SACK is sent
//!   once (`tcp_options_write` clears `rx_opt.dsack`).
//! - Quick ACKs while the window opens (Linux `tcp_grow_window`, called by
//!   `tcp_event_data_recv` for in-order data and by `tcp_data_queue_ofo`):
//!   while `rcv_ssthresh` is below the window clamp, each data segment raises
//!   it by 2 segments (`2 * advmss`) and sets `icsk_ack.quick |= 1`, so that
//!   segment is ACKed at once; every ACK of scheduled data takes one from
//!   `quick` (`tcp_dec_quickack_mode`). `rcv_ssthresh` starts at the initial
//!   window, the clamp at `tcp_win_from_space(sk_rcvbuf)`: a receive buffer of
//!   twice the initial window (the default `scaling_ratio` of 1/2 gives the
//!   initial window) times the ratio the first segment measures
//!   (`tcp_measure_rcv_mss`: payload / truesize, `RCV_SCALING_RATIO`), i.e.
//!   1.25 x the initial window; auto-tuning moves the clamp with `sk_rcvbuf`
//!   (`tcp_rcvbuf_grow`). In slow start the clamp grows once per receiver RTT
//!   by about twice the data of the last RTT, and `rcv_ssthresh` follows it
//!   at 2 segments per segment: the receiver ACKs every segment for the first
//!   half of each round after the clamp first grows (HyStart's ACK train sees
//!   ACKs one frame apart), every second one otherwise.
//! - Receive window: starts at `rwnd_init` segments and grows like Linux
//!   6.18's receive-buffer auto-tuning (`tcp_rcv_space_adjust`,
//!   `tcp_rcvbuf_grow` since commits 65c5287892e9 and aa251c84636c): once per
//!   receiver RTT estimate, if the application read `copied` segments, more
//!   than the last time (`space`), the window becomes at least
//!   `2 * copied + 4 * copied * (copied - space) / space` (plus what is held
//!   out of order); capped at `rwnd_max`. The window offered in an ACK is
//!   the buffer's free space at the measured scaling ratio (`tcp_space`:
//!   the clamp, 1.25 x the SYN-ACK's `rwnd_init` before the first
//!   auto-tuning step), at most `rcv_ssthresh` (`__tcp_select_window`), and never less
//!   than the last offer still allows (`tcp_select_window`: the right edge
//!   never moves left), so slow start's flight follows `rcv_ssthresh`. The receiver RTT
//!   (`tcp_rcv_rtt_measure_ts`, `tcp_rcv_rtt_update` since commit
//!   b879dcb1aeec): one sample per new TSecr, in whole 1 ms timestamp ticks
//!   (a zero sample is skipped); a sample below the estimate replaces it, a
//!   larger one moves it by 1/8. So in slow start the estimate falls back to
//!   the base RTT with the first segment of each flight (which met no queue)
//!   and the measurement falls on that segment.
//! - ECN echo (`EcnMode`):
//!   - classic (RFC 3168 6.1.3, Linux tcp_ecn_check_ce / tcp_ecn_accept_cwr):
//!     a CE arrival sets "demand CWR" (entering quick-ACK for 2 segments if it
//!     was not set); every ACK carries ECE until a data segment with CWR
//!     arrives (that segment is ACKed at once);
//!   - scalable (DCTCP's receiver, RFC 8257 3.2, Linux dctcp_ece_ack_update):
//!     ECE on each ACK = CE state of the latest data segment; when the CE
//!     state changes, the segments received so far but not yet ACKed are ACKed
//!     at once with the old state, and the new segment is ACKed at once. The
//!     sender thus learns the CE state of every segment (with lossless ACKs).
//!     With RFC 3168 negotiation (Linux DCTCP: `with_cwr_ack_now`) a data
//!     segment with CWR is also ACKed at once: `tcp_ecn_accept_cwr` sets
//!     ICSK_ACK_NOW for every ECN connection, whatever its CCA (Prague's
//!     AccECN carries CWR as a counter bit instead, so not for Prague).
//! - GRO-style receive coalescing (optional, `gro_ns` > 0; off by default as
//!   on a Linux 6.18 veth and on the testbed, whose veths switch GRO off):
//!   in-order segments of the flow that arrive within one NAPI poll window
//!   (`gro_ns` from the first) merge into one skb as Linux's
//!   `dev_gro_receive` / `tcp_gro_receive` / `skb_gro_receive` do: same ECN
//!   field (`inet_gro_receive` flushes on a TOS difference), same TCP options
//!   (the 1 ms timestamp clock: TSval/TSecr equal), no CWR, contiguous, and
//!   under `gro_max_size` = 64 KB (45 segments of 1448 B). A segment that
//!   does not merge flushes the held skb and starts the next. The receiver
//!   handles the merged skb as one: it carries more than one MSS, so
//!   `__tcp_ack_snd_check` ACKs it at once: one (stretch) ACK per GRO batch.
//!   Out-of-order segments are not coalesced (they are ACKed one by one).
//!   A segment with PSH flushes the held skb it joins (`tcp_gro_receive`
//!   ORs PSH into the held header and flushes), or goes up alone.

use crate::cc::{jiffies, timer_list_fires_at_ns, usecs_to_jiffies, KERNEL_HZ};
use crate::config::{EcnMode, ACK_WIRE_BYTES};
use crate::engine::{TimeNs, Timer};
use crate::packet::{sack_channel, Ecn, Kind, Packet, SackChannel, SackOpt};

/// Linux TCP_DELACK_MIN = TCP_ATO_MIN (HZ/25 jiffies: 40 ms).
pub const DELACK_MIN_JIFFIES: u64 = KERNEL_HZ / 25;
/// Linux TCP_DELACK_MAX (HZ/5 jiffies, `icsk_delack_max`): the longest delayed-ACK timeout.
const DELACK_MAX_JIFFIES: u64 = KERNEL_HZ / 5;
/// Linux HZ/2: `tcp_send_delayed_ack`'s bound on `ato` before the RTT's.
const ATO_BOUND_JIFFIES: u64 = KERNEL_HZ / 2;
/// Linux TCP_RTO_MIN: the receiver's RTO floor (`tcp_rto_min_us`).
const RTO_MIN_NS: u64 = 200_000_000;
/// `Receiver::rtt_tsecr_tick_start` before the first sample: 2^64 -
/// `TS_TICK_NS`, from which every clock reading below it is at least
/// `TS_TICK_NS` on (modulo 2^64), so it starts no tick.
const NO_TICK_START: u64 = 0u64.wrapping_sub(TS_TICK_NS);
/// `Receiver::lrcv_jiffies` before any in-order data: a jiffy no packet arrives in.
const NO_ARRIVAL: u64 = u64::MAX;
/// Linux TCP_MAX_QUICKACKS.
pub const MAX_QUICKACKS: u32 = 16;
/// Linux `tp->scaling_ratio` of the reference receiver, in 1/256
/// (`TCP_RMEM_TO_WIN_SCALE`): `(len << 8) / truesize` of a 1448-byte segment
/// (`tcp_measure_rcv_mss`). Measured on the testbed's Linux 6.18 receiver:
/// its window clamp before auto-tuning is 353 x 1024 bytes for a 579 200-byte
/// buffer (2 x 200 segments), 160/256 (docs/fidelity.md, "The receiver's quick ACKs").
pub const RCV_SCALING_RATIO: u64 = 160;
/// Linux `TCP_DEFAULT_SCALING_RATIO` (1/256): the initial window is half the buffer.
pub const DEFAULT_SCALING_RATIO: u64 = 128;
/// `tcp_grow_window`'s step per data segment: `2 * advmss`, in segments.
pub const RCV_SSTHRESH_STEP_SEGS: u32 = 2;
/// Linux TCP_NUM_SACKS: SACK blocks the receiver remembers (`selective_acks`).
pub const NUM_SACKS: usize = 4;
/// Linux `gro_max_size` default (GRO_LEGACY_MAX_SIZE): a GRO skb stays below 64 KB.
pub const GRO_MAX_SIZE_BYTES: u32 = 65536;
/// Linux TCP timestamp clock tick (TCP_TS_HZ = 1000): GRO merges segments
/// only if their timestamp options are equal.
pub const TS_TICK_NS: u64 = 1_000_000;
/// Linux `tcp_comp_sack_delay_ns` default: the longest a compressed SACK waits.
pub const COMP_SACK_DELAY_NS: u64 = 1_000_000;
/// Linux `tcp_comp_sack_slack_ns` default: the compressed-SACK hrtimer's slack.
pub const COMP_SACK_SLACK_NS: u64 = 100_000;
/// Linux `tcp_comp_sack_nr` default: compressed SACKs before one goes at once (0 = off).
pub const COMP_SACK_NR: u32 = 44;
/// `__tcp_ack_snd_check`: the compressed SACK waits at most rtt / 20 ("5 % of rtt").
const COMP_SACK_RTT_DIVISOR: u64 = 20;
/// Linux TCP_FASTRETRANS_THRESH: dupACKs sent at once per rcv_nxt before compression.
pub const FASTRETRANS_THRESH: u32 = 3;
/// Linux TCP_SACK_BLOCKS_EXPECTED: a change behind this many blocks sends the pending SACK.
const SACK_BLOCKS_EXPECTED: usize = 2;

/// A TCP receiver. Its fields are laid out in declaration order
/// (`repr(C)`): what an in-order data segment and its ACK touch first (3
/// cache lines, [`RECEIVER_HOT_BYTES`]), then out-of-order, SACK, ECN, GRO
/// and handshake state (with thousands of flows a receiver's lines come
/// from memory, as the sender's: docs/benchmarks.md, "Shared delay lines").
#[repr(C)]
pub struct Receiver {
    pub delack_timer: Timer,
    rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted, disjoint, all above rcv_nxt.
    ooo: Vec<(u64, u64)>,
    /// Delayed-ACK timeout (`icsk_ack.ato`) and the last in-order data
    /// arrival (`lrcvtime`), in jiffies of the host's clock as Linux's; the
    /// receiver's RTT from the handshake (0 = none yet; the SYN-ACK's send
    /// time is `synack_ns`, below). `lrcv_jiffies` is `NO_ARRIVAL` before the
    /// first in-order data (a plain value: an `Option` took a tag test and a
    /// tag store per segment).
    ato_jiffies: u64,
    lrcv_jiffies: u64,
    srtt_ns: u64,
    /// The right edge of the last window offered, segments (`rcv_wup + rcv_wnd`).
    right_edge: u64,
    /// Linux `rcv_wup`: `rcv_nxt` when the last ACK was sent (`tcp_select_window`); a
    /// segment starting at or below it replaces `ts_recent` (`tcp_replace_ts_recent`).
    rcv_wup: u64,
    // Auto-tuning state (tp->rcvq_space; `space` and `space_seq` below).
    space_time: u64,
    rcv_rtt_ns: u64,
    /// `space_time + rcv_rtt_ns`, u64::MAX while `rcv_rtt_ns` is 0 (none
    /// yet): `rcv_space_due`'s test per segment as one comparison, kept by
    /// `set_space_time` and `set_rcv_rtt`.
    space_due_ns: u64,
    /// The start of the TSecr tick of the last receiver RTT sample
    /// (`rcv_rtt_last_tsecr`), ns on the receiver's clock (`NO_TICK_START`:
    /// none; a TSecr in the same tick is `TS_TICK_NS` or less after it).
    rtt_tsecr_tick_start: u64,
    /// The TSval the ACKs echo (Linux `rx_opt.ts_recent`).
    ts_recent: u64,
    /// The host's clock phase, ns: its timestamp clock ticks at whole ms of `t + clock_phase_ns`
    /// (cc/mod.rs `host_clock_epoch_ns`).
    clock_phase_ns: u64,
    /// GRO: NAPI poll window (0 = off), its flush timer, the held skb's
    /// first segment and size, and the most segments one skb can hold (the
    /// others below).
    gro_ns: u64,
    pub flow: u32,
    pub mss_bytes: u32,
    /// Full segments received since the last ACK.
    unacked: u32,
    quick: u32,
    /// Linux `rcv_ssthresh` and `window_clamp`, segments (`tcp_grow_window`).
    rcv_ssthresh: u32,
    window_clamp: u32,
    rwnd: u32,
    pub delayed_ack: bool,
    /// Unacknowledged segments that take an ACK at once: 2 with delayed
    /// ACKs, else 1 (every segment; `on_data`'s test of both in one).
    ack_every_segs: u32,
    ecn: EcnMode,
    /// Echo every segment's TSval (`CongestionControl::echoes_newest_tsval`), not Linux's rule.
    echo_newest: bool,
    established: bool,
    // ---- Rarely used on the in-order path.
    /// SACK blocks [start, end), most recent first (`selective_acks`, `num_sacks`).
    sacks: [(u64, u64); NUM_SACKS],
    num_sacks: usize,
    /// D-SACK block for the next ACK (`duplicate_sack`, `rx_opt.dsack`).
    dsack: Option<(u64, u64)>,
    /// SACK compression: `compressed_ack_rcv_nxt`, `dup_ack_counter`,
    /// `compressed_ack` (> 0: `delack_timer` is the compressed-SACK timer),
    /// `tcp_comp_sack_nr`.
    comp_rcv_nxt: u64,
    dup_acks: u32,
    compressed_acks: u32,
    comp_sack_nr: u32,
    rwnd_max: Option<u32>,
    synack_ns: u64,
    space: u64,
    space_seq: u64,
    /// Classic: echo ECE until CWR arrives (Linux TCP_ECN_DEMAND_CWR).
    demand_cwr: bool,
    /// Scalable: CE state of the latest data segment (DCTCP `ce_state`).
    ce_state: bool,
    /// Scalable: ACK a CWR segment at once (`tcp_ecn_accept_cwr`; RFC 3168 ECN).
    cwr_ack_now: bool,
    pub gro_timer: Timer,
    gro_head: Option<Packet>,
    gro_segs: u32,
    gro_max_segs: u32,
    /// Where the SACK options of this flow's ACKs go (its sender's channel, packet.rs).
    sack_tx: SackChannel,
}

/// Bytes at the start of a `Receiver` that an in-order data segment and its
/// ACK touch (the fields before `sacks`).
pub const RECEIVER_HOT_BYTES: usize = std::mem::offset_of!(Receiver, sacks);

impl Receiver {
    pub fn new(flow: u32, mss_bytes: u32, delayed_ack: bool, rwnd_init: u32, rwnd_max: Option<u32>, init_cwnd: u32) -> Receiver {
        let rwnd_init = rwnd_max.map_or(rwnd_init, |m| rwnd_init.min(m));
        Receiver {
            flow,
            mss_bytes,
            delayed_ack,
            ack_every_segs: if delayed_ack { 2 } else { 1 },
            delack_timer: Timer::default(),
            rcv_nxt: 0,
            ooo: Vec::new(),
            sacks: [(0, 0); NUM_SACKS],
            num_sacks: 0,
            dsack: None,
            unacked: 0,
            quick: (rwnd_init / 2).min(MAX_QUICKACKS),
            comp_rcv_nxt: u64::MAX,
            dup_acks: 0,
            compressed_acks: 0,
            comp_sack_nr: 0,
            ato_jiffies: DELACK_MIN_JIFFIES,
            lrcv_jiffies: NO_ARRIVAL,
            synack_ns: 0,
            srtt_ns: 0,
            rwnd: rwnd_init,
            rwnd_max,
            rcv_ssthresh: rwnd_init,
            window_clamp: initial_window_clamp(rwnd_init, rwnd_max),
            right_edge: 0,
            space: init_cwnd as u64,
            space_seq: 0,
            space_time: 0,
            rcv_rtt_ns: 0,
            space_due_ns: u64::MAX,
            rtt_tsecr_tick_start: NO_TICK_START,
            ts_recent: 0,
            clock_phase_ns: 0,
            rcv_wup: 0,
            established: false,
            ecn: EcnMode::Off,
            demand_cwr: false,
            ce_state: false,
            cwr_ack_now: false,
            echo_newest: false,
            gro_ns: 0,
            gro_timer: Timer::default(),
            gro_head: None,
            gro_segs: 0,
            gro_max_segs: 1,
            sack_tx: sack_channel(),
        }
    }

    /// Coalesce received segments as GRO within `window_ns` (0 = off);
    /// `header_bytes` of IP + TCP count towards the 64 KB skb limit.
    pub fn with_gro(mut self, window_ns: u64, header_bytes: u32) -> Receiver {
        self.gro_ns = window_ns;
        self.gro_max_segs = ((GRO_MAX_SIZE_BYTES - 1 - header_bytes) / self.mss_bytes).max(1);
        self
    }

    /// The host's clock phase (cc/mod.rs `host_clock_epoch_ns`): where its timestamp clock ticks.
    pub fn with_clock_phase(mut self, phase_ns: u64) -> Receiver {
        self.clock_phase_ns = phase_ns;
        self
    }

    pub fn gro_on(&self) -> bool {
        self.gro_ns > 0
    }

    /// Send the SACK options through `ch` (the flow's sender's, `Sender::sack_channel`).
    pub fn with_sack_channel(mut self, ch: SackChannel) -> Receiver {
        self.sack_tx = ch;
        self
    }

    /// The channel this receiver sends its SACK options through.
    pub fn sack_channel(&self) -> SackChannel {
        self.sack_tx.clone()
    }

    /// Set how this receiver echoes ECN (the flow's mode).
    pub fn with_ecn(mut self, ecn: EcnMode) -> Receiver {
        self.ecn = ecn;
        self
    }

    /// Scalable mode on an RFC 3168 connection (Linux DCTCP): a data
    /// segment with CWR is ACKed at once (`tcp_ecn_accept_cwr`).
    pub fn with_cwr_ack_now(mut self, on: bool) -> Receiver {
        self.cwr_ack_now = on;
        self
    }

    /// The ACKs echo the newest segment's TSval (a per-packet delay report: LEDBAT).
    pub fn with_newest_tsval_echo(mut self, on: bool) -> Receiver {
        self.echo_newest = on;
        self
    }

    pub fn rwnd(&self) -> u32 {
        self.rwnd
    }

    /// Handle a packet from the network. ACKs go to `out`. Returns the number
    /// of segments newly delivered in order to the application. (Inline into
    /// the event loop: one call per data packet fewer, `on_data` the call.)
    #[inline(always)]
    pub fn on_packet(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) -> u64 {
        match p.kind {
            Kind::Syn => self.on_syn(now, p, out),
            Kind::Data if self.gro_on() => self.gro_receive(now, p, out),
            Kind::Data => self.on_data(now, p, 1, out),
            _ => 0,
        }
    }

    /// The SYN: answer with the SYN-ACK. Inline although it runs once per
    /// connection: out of line it shrank `Simulation::deliver` and moved the
    /// hot code after it, and S0 measured 1.000-1.010 instead of 0.994-0.996
    /// (docs/benchmarks.md: code placement).
    #[inline(always)]
    fn on_syn(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) -> u64 {
        self.established = true;
        self.set_space_time(now);
        self.synack_ns = now;
        let mut a = Packet::new(self.flow, Kind::SynAck, ACK_WIRE_BYTES + 8);
        a.set_rwnd(self.rwnd);
        a.ts_val = now;
        a.ts_ecr = p.ts_val;
        out.push(a);
        0
    }

    /// GRO receive of one data segment: merge it into the held skb, or
    /// flush that and hold this one as the start of the next (in order), or
    /// hand an out-of-order segment up at once. Returns segments delivered.
    #[inline(never)]
    fn gro_receive(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) -> u64 {
        let mut delivered = 0;
        if let Some(head) = &self.gro_head {
            let tick = |t: u64| (t + self.clock_phase_ns) / TS_TICK_NS;
            let merges = p.seq == head.seq + self.gro_segs as u64
                && p.ecn == head.ecn
                && !p.cwr()
                && self.gro_segs < self.gro_max_segs
                && tick(p.ts_val) == tick(head.ts_val)
                && tick(p.ts_ecr) == tick(head.ts_ecr);
            if merges {
                self.gro_segs += 1;
                if p.psh() {
                    // tcp_gro_receive: the held skb takes the PSH and is flushed.
                    if let Some(h) = self.gro_head.as_mut() {
                        h.set_psh(true);
                    }
                    return self.gro_flush(now, out);
                }
                return 0;
            }
            delivered = self.gro_flush(now, out);
        }
        if p.seq == self.rcv_nxt && self.ooo.is_empty() && !p.psh() {
            self.gro_head = Some(*p);
            self.gro_segs = 1;
            self.gro_timer.arm(now + self.gro_ns);
            return delivered;
        }
        delivered + self.on_data(now, p, 1, out)
    }

    /// The NAPI poll ends (or a segment did not merge): the held skb goes up
    /// to TCP as one segment of `gro_segs` MSS. Returns segments delivered.
    pub fn gro_flush(&mut self, now: TimeNs, out: &mut Vec<Packet>) -> u64 {
        self.gro_timer.disarm();
        match self.gro_head.take() {
            Some(head) => self.on_data(now, &head, self.gro_segs as u64, out),
            None => 0,
        }
    }

    /// A data skb of `segs` segments from `p.seq` (more than one only for a
    /// GRO skb, which is always in order).
    ///
    /// The common case takes a short path, as Linux's `tcp_rcv_established`
    /// fast path (header prediction) does: the next expected segment, with
    /// nothing held out of order and no ECN echo to keep, so no SACK option,
    /// no D-SACK and no ECE; only the delayed-ACK decision of
    /// `__tcp_ack_snd_check` (ACK every second segment, or in quick-ACK mode)
    /// and the receive-window check remain. Everything else (out-of-order
    /// data, hole fills, duplicates, ECN) goes through `on_data_general`,
    /// out of line so that this path's code stays small and contiguous.
    #[inline(never)]
    fn on_data(&mut self, now: TimeNs, p: &Packet, segs: u64, out: &mut Vec<Packet>) -> u64 {
        // (With `out` full the general path pushes the ACK: that keeps the
        // allocator call, and the registers it needs saved, off this path.)
        if p.seq != self.rcv_nxt || !self.ooo.is_empty() || self.ecn != EcnMode::Off || out.len() == out.capacity() {
            return self.on_data_general(now, p, segs, out);
        }
        // Blocks are only remembered while data is held out of order
        // (`sack_remove` clears them when the last hole fills), and a D-SACK
        // is taken by the ACK sent at once for its segment.
        debug_assert!(self.num_sacks == 0 && self.dsack.is_none());
        self.measure_rtt(now, p);
        self.rcv_nxt += segs;
        self.unacked += segs as u32;
        self.event_data_recv(now);
        self.grow_window(segs);
        debug_assert!(segs > 0 && self.unacked > 0);
        if self.unacked >= self.ack_every_segs || self.quick > 0 || p.psh() {
            let a = self.ack_packet(now, false);
            self.push_ack(out, a);
        } else if !self.delack_timer.is_armed() {
            self.delack_timer.arm(self.delack_deadline_ns(now));
        }
        if self.rcv_space_due(now) {
            // A tail call: `segs` comes back, not kept across the call.
            return self.rcv_space_measure(now, segs);
        }
        segs
    }

    /// Linux `tcp_event_data_recv`'s delayed-ACK part for in-order data at
    /// `now`: the receiver's RTT from the handshake at the first segment,
    /// then `ato` from the gap since the last in-order arrival, in whole
    /// jiffies (`tcp_jiffies32 - lrcvtime`).
    #[inline(always)]
    fn event_data_recv(&mut self, now: TimeNs) {
        let now_jiffies = jiffies(now + self.clock_phase_ns, KERNEL_HZ);
        if self.lrcv_jiffies != NO_ARRIVAL {
            let m = now_jiffies - self.lrcv_jiffies;
            if m <= DELACK_MIN_JIFFIES / 2 {
                self.ato_jiffies = self.ato_jiffies / 2 + DELACK_MIN_JIFFIES / 2;
            } else if m < self.ato_jiffies {
                self.ato_jiffies = (self.ato_jiffies / 2 + m).min(self.rto_jiffies());
            } else if m > self.rto_jiffies() {
                self.incr_quickack();
            }
        } else {
            self.srtt_ns = now.saturating_sub(self.synack_ns).max(1);
        }
        self.lrcv_jiffies = now_jiffies;
    }

    /// The receiver's RTO from its one RTT sample (`tcp_rtt_estimator`:
    /// rttvar = max(2 srtt, TCP_RTO_MIN); `__tcp_set_rto`: srtt + rttvar in
    /// jiffies, rounded up).
    fn rto_jiffies(&self) -> u64 {
        usecs_to_jiffies(self.srtt_ns + (2 * self.srtt_ns).max(RTO_MIN_NS))
    }

    /// Linux `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`: quick ACKs for half
    /// the window in segments (at least 2, at most 16).
    #[cold]
    fn incr_quickack(&mut self) {
        let quickacks = (self.rwnd / 2).clamp(2, MAX_QUICKACKS);
        self.quick = self.quick.max(quickacks);
    }

    /// Linux `tcp_send_delayed_ack` at `now`: when the delayed-ACK timer
    /// fires. Its timeout is `ato` jiffies; above TCP_ATO_MIN at most the
    /// receiver's RTT (`usecs_to_jiffies`, at least TCP_DELACK_MIN) and HZ/2;
    /// never above `icsk_delack_max` (TCP_DELACK_MAX). It is a jiffy timer
    /// (`sk_reset_timer` at `jiffies + ato`): it fires at the timer wheel's
    /// tick after that, 0-1 jiffy later than `ato` from now
    /// (cc/mod.rs `timer_list_fires_at_ns`).
    #[inline(always)]
    fn delack_deadline_ns(&self, now: TimeNs) -> TimeNs {
        let mut ato = self.ato_jiffies;
        if ato > DELACK_MIN_JIFFIES {
            let rtt_bound = if self.srtt_ns != 0 { usecs_to_jiffies(self.srtt_ns).max(DELACK_MIN_JIFFIES) } else { ATO_BOUND_JIFFIES };
            ato = ato.min(rtt_bound.min(ATO_BOUND_JIFFIES));
        }
        let ato = ato.min(DELACK_MAX_JIFFIES);
        timer_list_fires_at_ns(now + self.clock_phase_ns, ato) - self.clock_phase_ns
    }

    /// Linux `tcp_grow_window` for an skb of `segs` segments: below the
    /// clamp, `rcv_ssthresh` grows by 2 segments per segment (at most to the
    /// clamp) and the skb is ACKed at once (`icsk_ack.quick |= 1`).
    #[inline(always)]
    fn grow_window(&mut self, segs: u64) {
        if self.rcv_ssthresh < self.window_clamp {
            let step = RCV_SSTHRESH_STEP_SEGS as u64 * segs;
            self.rcv_ssthresh = (self.rcv_ssthresh as u64 + step).min(self.window_clamp as u64) as u32;
            self.quick |= 1;
        }
    }

    /// Timestamps of an arriving data segment: Linux `tcp_replace_ts_recent`,
    /// the TSval to echo from a segment that starts at or below `rcv_wup` (the
    /// first in-order segment since the last ACK, or a hole's retransmission;
    /// not the later segments an ACK covers, nor out-of-order ones); and
    /// `tcp_rcv_rtt_measure_ts` / `tcp_rcv_rtt_update`: the RTT from our ACK's
    /// timestamp echoed back, in whole timestamp ticks, once per TSecr; a
    /// lower sample replaces the estimate, a higher one moves it by 1/8.
    #[inline(always)]
    fn measure_rtt(&mut self, now: TimeNs, p: &Packet) {
        if p.seq <= self.rcv_wup || self.echo_newest {
            self.ts_recent = p.ts_val;
        }
        let ecr = p.ts_ecr + self.clock_phase_ns;
        // Another tick than the last sample's: no division per segment.
        if p.ts_ecr != 0 && ecr.wrapping_sub(self.rtt_tsecr_tick_start) >= TS_TICK_NS {
            let tick = ecr / TS_TICK_NS;
            self.rtt_tsecr_tick_start = tick * TS_TICK_NS;
            let ticks = ((now + self.clock_phase_ns) / TS_TICK_NS).saturating_sub(tick);
            if ticks > 0 {
                let sample = ticks * TS_TICK_NS;
                let old = self.rcv_rtt_ns;
                self.set_rcv_rtt(if old == 0 || sample < old { sample } else { old - old / 8 + sample / 8 });
            }
        }
    }

    /// `on_data` for every case: out of order, a hole filled, a duplicate,
    /// or with ECN.
    #[inline(never)]
    fn on_data_general(&mut self, now: TimeNs, p: &Packet, segs: u64, out: &mut Vec<Packet>) -> u64 {
        self.measure_rtt(now, p);
        // tcp_data_queue: a D-SACK is reported only for this segment.
        self.dsack = None;
        let ack_now = self.ecn_on_data(now, p, out);
        let seq = p.seq;
        let had_ooo = !self.ooo.is_empty();
        let mut delivered = 0;
        if seq >= self.rcv_nxt && !self.holds(seq) {
            self.grow_window(segs); // tcp_event_data_recv, tcp_data_queue_ofo
        }
        if seq == self.rcv_nxt {
            self.rcv_nxt += segs;
            delivered = segs;
            // Pull in the first out-of-order range if it is now contiguous.
            if let Some(&(s, e)) = self.ooo.first() {
                if s <= self.rcv_nxt {
                    delivered += e - self.rcv_nxt;
                    self.rcv_nxt = e;
                    self.ooo.remove(0);
                }
            }
            if self.num_sacks > 0 {
                self.sack_remove();
            }
            self.unacked += segs as u32;
            self.event_data_recv(now);
            if had_ooo || !self.delayed_ack || self.unacked >= 2 || self.quick > 0 || ack_now || p.psh() {
                self.send_ack(now, out);
            } else if !self.delack_timer.is_armed() {
                self.delack_timer.arm(self.delack_deadline_ns(now));
            }
            self.rcv_space_adjust(now);
        } else if seq > self.rcv_nxt {
            self.on_out_of_order(now, seq, out);
            // __tcp_ack_snd_check: quick-ACK mode and ICSK_ACK_NOW before compression.
            if ack_now || self.quick > 0 || !self.delayed_ack || !self.compress_sack(now) {
                self.send_ack(now, out);
            }
        } else {
            self.on_duplicate(seq);
            // tcp_send_dupack: no ACK was scheduled, so tcp_dec_quickack_mode counts none.
            let quick = self.quick;
            self.send_ack(now, out);
            self.quick = quick;
        }
        delivered
    }

    /// Out-of-order segment `seq` is already held.
    fn holds(&self, seq: u64) -> bool {
        let i = self.ooo.partition_point(|&(_, e)| e <= seq);
        i < self.ooo.len() && self.ooo[i].0 <= seq
    }

    /// `tcp_data_queue_ofo`: hold the segment (a copy already held is a
    /// duplicate: D-SACK it) and update the SACK blocks.
    fn on_out_of_order(&mut self, now: TimeNs, seq: u64, out: &mut Vec<Packet>) {
        if self.ooo.is_empty() {
            // Initial out-of-order segment: one SACK block.
            self.num_sacks = 0;
        }
        if !self.insert_ooo(seq) {
            self.dsack = Some((seq, seq + 1));
        }
        self.sack_new_ofo(now, seq, seq + 1, out);
    }

    /// `__tcp_ack_snd_check` for an out-of-order segment that nothing else
    /// ACKs at once: true if its ACK is compressed (left to the timer),
    /// false if it goes now (one of the first `FASTRETRANS_THRESH` for this
    /// rcv_nxt, or `comp_sack_nr` already compressed).
    fn compress_sack(&mut self, now: TimeNs) -> bool {
        if self.compressed_acks >= self.comp_sack_nr {
            return false;
        }
        if self.comp_rcv_nxt != self.rcv_nxt {
            self.comp_rcv_nxt = self.rcv_nxt;
            self.dup_acks = 0;
        }
        if self.dup_acks < FASTRETRANS_THRESH {
            self.dup_acks += 1;
            return false;
        }
        if self.compressed_acks == 0 {
            debug_assert!(!self.delack_timer.is_armed(), "a delayed ACK pending while data is held out of order");
            self.delack_timer.arm(now + self.comp_sack_delay_ns() + COMP_SACK_SLACK_NS);
        }
        self.compressed_acks += 1;
        true
    }

    /// The compressed SACK's delay: min(`tcp_comp_sack_delay_ns`, rtt / 20),
    /// rtt the receiver's estimate or the handshake's srtt if lower.
    fn comp_sack_delay_ns(&self) -> u64 {
        let mut rtt_ns = self.rcv_rtt_ns;
        if self.srtt_ns != 0 && self.srtt_ns < rtt_ns {
            rtt_ns = self.srtt_ns;
        }
        (rtt_ns / COMP_SACK_RTT_DIVISOR).min(COMP_SACK_DELAY_NS)
    }

    /// Linux `tcp_sack_compress_send_ack`: send the pending compressed SACK now.
    fn sack_compress_send_ack(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        if self.compressed_acks > 0 {
            self.send_ack(now, out);
        }
    }

    /// SACK compression on (`tcp_comp_sack_nr` = `COMP_SACK_NR`, Linux's
    /// default) or off (0: every out-of-order segment is ACKed at once).
    pub fn with_sack_compression(mut self, on: bool) -> Receiver {
        self.comp_sack_nr = if on { COMP_SACK_NR } else { 0 };
        self
    }

    /// A segment below rcv_nxt (`tcp_data_queue` old data, `tcp_send_dupack`):
    /// D-SACK it and ACK quickly for a while.
    fn on_duplicate(&mut self, seq: u64) {
        self.dsack = Some((seq, seq + 1));
        // tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS) via tcp_incr_quickack.
        self.quick = self.quick.max((self.rwnd / 2).clamp(2, MAX_QUICKACKS));
    }

    /// Linux `tcp_sack_new_ofo_skb`: the block that [start, end) extends moves
    /// to the front (and may merge with others); otherwise a new block goes
    /// in front and, with all 4 in use, the oldest is forgotten.
    /// A change behind the first `SACK_BLOCKS_EXPECTED` blocks sends the
    /// pending compressed SACK: a block extended there before it moves to
    /// the front, a new block before it goes in.
    fn sack_new_ofo(&mut self, now: TimeNs, start: u64, end: u64, out: &mut Vec<Packet>) {
        let n = self.num_sacks;
        for i in 0..n {
            if sack_extend(&mut self.sacks[i], start, end) {
                if i >= SACK_BLOCKS_EXPECTED {
                    self.sack_compress_send_ack(now, out); // the block extended, not yet in front
                }
                self.sacks[..=i].rotate_right(1);
                if n > 1 {
                    self.sack_maybe_coalesce();
                }
                return;
            }
        }
        if n >= SACK_BLOCKS_EXPECTED {
            self.sack_compress_send_ack(now, out);
        }
        let kept = n.min(NUM_SACKS - 1);
        self.sacks.copy_within(0..kept, 1);
        self.sacks[0] = (start, end);
        self.num_sacks = kept + 1;
    }

    /// Linux `tcp_sack_maybe_coalesce`: merge blocks the first one now touches.
    fn sack_maybe_coalesce(&mut self) {
        let mut i = 1;
        while i < self.num_sacks {
            let (s, e) = self.sacks[i];
            if sack_extend(&mut self.sacks[0], s, e) {
                self.sacks.copy_within(i + 1..self.num_sacks, i);
                self.num_sacks -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// Linux `tcp_sack_remove`: rcv_nxt advanced; drop the blocks it covers.
    fn sack_remove(&mut self) {
        if self.ooo.is_empty() {
            self.num_sacks = 0;
            return;
        }
        let mut i = 0;
        while i < self.num_sacks {
            if self.rcv_nxt >= self.sacks[i].0 {
                self.sacks.copy_within(i + 1..self.num_sacks, i);
                self.num_sacks -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// The ACK's SACK option: the D-SACK first, then the most recent blocks,
    /// as many as fit (`tcp_established_options`, `tcp_options_write`).
    #[inline]
    fn sack_option(&mut self) -> SackOpt {
        let mut opt = SackOpt::NONE;
        if self.num_sacks == 0 && self.dsack.is_none() {
            return opt;
        }
        if let Some((s, e)) = self.dsack.take() {
            opt.push(s, e);
        }
        for &(s, e) in &self.sacks[..self.num_sacks] {
            opt.push(s, e);
        }
        opt
    }

    /// ECN processing of an arriving data segment; returns "ACK it at once".
    fn ecn_on_data(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) -> bool {
        let ce = p.ecn == Ecn::Ce;
        match self.ecn {
            EcnMode::Off => false,
            EcnMode::Classic => {
                let mut ack_now = false;
                if p.cwr() {
                    self.demand_cwr = false;
                    ack_now = true;
                }
                if ce && !self.demand_cwr {
                    // tcp_enter_quickack_mode(sk, 2): do not delay the news.
                    self.quick = self.quick.max(2);
                    self.demand_cwr = true;
                }
                ack_now
            }
            EcnMode::Scalable => {
                if ce == self.ce_state {
                    // tcp_ecn_accept_cwr: ICSK_ACK_NOW (the CE event then keeps ECE = CE state).
                    return p.cwr() && self.cwr_ack_now;
                }
                if self.unacked > 0 {
                    // ACK what came before with the old CE state.
                    self.send_ack(now, out);
                }
                self.ce_state = ce;
                true
            }
        }
    }

    fn ece(&self) -> bool {
        match self.ecn {
            EcnMode::Off => false,
            EcnMode::Classic => self.demand_cwr,
            EcnMode::Scalable => self.ce_state,
        }
    }

    /// Hold out-of-order segment `seq`; false if it was already held.
    fn insert_ooo(&mut self, seq: u64) -> bool {
        // Find the first range ending at or after seq.
        let i = self.ooo.partition_point(|&(_, e)| e < seq);
        if i < self.ooo.len() {
            let (s, e) = self.ooo[i];
            if seq >= s && seq < e {
                return false; // already have it
            }
            if e == seq {
                self.ooo[i].1 = seq + 1;
                // Merge with the next range if now adjacent.
                if i + 1 < self.ooo.len() && self.ooo[i + 1].0 == seq + 1 {
                    self.ooo[i].1 = self.ooo[i + 1].1;
                    self.ooo.remove(i + 1);
                }
                return true;
            }
            if s == seq + 1 {
                self.ooo[i].0 = seq;
                return true;
            }
        }
        self.ooo.insert(i, (seq, seq + 1));
        true
    }

    /// An ACK with this receiver's SACK option (if any) and ECN echo; it
    /// takes any compressed SACK along (`tcp_event_ack_sent`).
    fn send_ack(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.compressed_acks = 0;
        let mut a = self.ack_packet(now, self.ece());
        let sack = self.sack_option();
        a.attach_sack(sack, &self.sack_tx);
        self.push_ack(out, a);
    }

    /// The cumulative ACK: window, timestamps, ECE as given, no SACK option.
    #[inline(always)]
    fn ack_packet(&mut self, now: TimeNs, ece: bool) -> Packet {
        let mut a = Packet::new(self.flow, Kind::Ack, ACK_WIRE_BYTES);
        a.set_ack(self.rcv_nxt);
        a.set_rwnd(self.select_window());
        a.ts_val = now;
        a.ts_ecr = self.ts_recent;
        a.set_ece(ece);
        a
    }

    /// Linux `tcp_select_window`: the window offered is the free space,
    /// `tcp_space` = `tcp_win_from_space(sk_rcvbuf)` with the queue empty
    /// (the reader is instant): the window clamp at the scaling ratio the
    /// first segment measured, 1.25 x the SYN-ACK's window until
    /// auto-tuning grows the buffer; capped at `rcv_ssthresh`
    /// (`__tcp_select_window`), but never less than what the last offer
    /// still allows (the right edge never moves left).
    #[inline(always)]
    fn select_window(&mut self) -> u32 {
        let offered = self.window_clamp.min(self.rcv_ssthresh) as u64;
        let win = offered.max(self.right_edge.saturating_sub(self.rcv_nxt));
        self.right_edge = self.rcv_nxt + win;
        self.rcv_wup = self.rcv_nxt;
        win as u32
    }

    /// Send ACK `a`: nothing is left to acknowledge, the delayed ACK is off,
    /// one quick ACK is used (`tcp_event_ack_sent` -> `tcp_dec_quickack_mode`).
    #[inline(always)]
    fn push_ack(&mut self, out: &mut Vec<Packet>, a: Packet) {
        out.push(a);
        self.quick = self.quick.saturating_sub(1);
        self.unacked = 0;
        self.delack_timer.disarm();
    }

    /// Linux `tcp_delack_timer_handler`: a delayed ACK was due; "Delayed
    /// ACK missed: inflate ATO" (twice, at most the RTO), then the ACK. Or
    /// the slot's compressed-SACK timer (`tcp_compressed_ack_kick`): the SACK.
    pub fn on_delack_timer(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        if self.compressed_acks > 0 {
            self.send_ack(now, out);
        } else if self.unacked > 0 {
            self.ato_jiffies = (2 * self.ato_jiffies).min(self.rto_jiffies());
            self.send_ack(now, out);
        }
    }

    /// Linux `tcp_rcv_space_adjust` (dynamic right-sizing of the receive
    /// window): at most once per receiver RTT estimate, so the test is inline
    /// and the measurement out of line.
    #[inline(always)]
    fn rcv_space_adjust(&mut self, now: TimeNs) {
        if self.rcv_space_due(now) {
            self.rcv_space_measure(now, 0);
        }
    }

    /// One receiver RTT estimate has passed since the last measurement.
    #[inline(always)]
    fn rcv_space_due(&self, now: TimeNs) -> bool {
        now >= self.space_due_ns
    }

    fn set_space_time(&mut self, t: TimeNs) {
        self.space_time = t;
        self.update_space_due();
    }

    fn set_rcv_rtt(&mut self, rtt_ns: u64) {
        self.rcv_rtt_ns = rtt_ns;
        self.update_space_due();
    }

    fn update_space_due(&mut self) {
        self.space_due_ns = if self.rcv_rtt_ns == 0 { u64::MAX } else { self.space_time + self.rcv_rtt_ns };
    }

    /// The once-per-RTT part of `rcv_space_adjust`; returns `ret` (for
    /// `on_data`'s tail call).
    #[cold]
    #[inline(never)]
    fn rcv_space_measure(&mut self, now: TimeNs, ret: u64) -> u64 {
        let copied = self.rcv_nxt - self.space_seq;
        if copied > self.space {
            // DRS is one RTT late: twice the last RTT's data, plus twice the growth in slow start.
            let mut rcvwin = 2 * copied;
            rcvwin += 2 * (rcvwin * (copied - self.space) / self.space.max(1));
            if let Some(&(_, end)) = self.ooo.last() {
                rcvwin += end - self.rcv_nxt;
            }
            let cap = self.rwnd_max.map_or(u32::MAX as u64 / 2, |m| m as u64);
            let win = rcvwin.min(cap) as u32;
            self.rwnd = self.rwnd.max(win);
            // `window_clamp` follows the grown `sk_rcvbuf` (tcp_win_from_space(tcp_space_from_win(rcvwin))).
            self.window_clamp = self.window_clamp.max(win);
            self.space = copied;
        }
        self.space_seq = self.rcv_nxt;
        self.set_space_time(now);
        ret
    }
}

/// The window clamp once the first full segment has set `scaling_ratio`
/// (`tcp_measure_rcv_mss` -> `tcp_set_window_clamp(tcp_win_from_space(sk_rcvbuf))`)
/// for a receive buffer that holds the initial window at the default ratio,
/// segments; never above `rwnd_max`.
fn initial_window_clamp(rwnd_init: u32, rwnd_max: Option<u32>) -> u32 {
    let buffer = rwnd_init as u64 * 256 / DEFAULT_SCALING_RATIO;
    let clamp = (buffer * RCV_SCALING_RATIO / 256) as u32;
    rwnd_max.map_or(clamp, |m| clamp.min(m)).max(rwnd_init)
}

/// Linux `tcp_sack_extend`: grow `sp` by [start, end) if they overlap or touch.
fn sack_extend(sp: &mut (u64, u64), start: u64, end: u64) -> bool {
    if start <= sp.1 && sp.0 <= end {
        sp.0 = sp.0.min(start);
        sp.1 = sp.1.max(end);
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64) -> Packet {
        let mut p = Packet::new(0, Kind::Data, 1500);
        p.seq = seq;
        p
    }

    /// A receiver past its start: quick-ACK mode over, the window fully open.
    fn rx() -> Receiver {
        let mut r = Receiver::new(0, 1448, true, 200, None, 10);
        r.quick = 0;
        r.rcv_ssthresh = r.window_clamp;
        r
    }

    #[test]
    fn delayed_ack_every_second_segment() {
        let mut r = rx();
        let mut out = vec![];
        r.on_packet(0, &data(0), &mut out);
        assert!(out.is_empty());
        assert!(r.delack_timer.is_armed());
        r.on_packet(1, &data(1), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack(), 2);
        assert!(!r.delack_timer.is_armed());
    }

    /// The in-order short path of `on_data` (ECN off) must ACK exactly as the
    /// general path does. A classic-ECN receiver that never sees CE or CWR
    /// takes the general path for every segment and behaves as one without
    /// ECN (RFC 3168 6.1.3: ECE only after CE), so both must emit the same
    /// ACKs, deliver the same segments and arm the same delayed-ACK timer,
    /// through quick-ACK mode, delayed ACKs, holes, SACKs, hole fills,
    /// duplicates, the delayed-ACK timer and window growth.
    #[test]
    fn in_order_short_path_acks_as_the_general_path() {
        let mut fast = Receiver::new(0, 1448, true, 10, Some(400), 10);
        let mut general = Receiver::new(0, 1448, true, 10, Some(400), 10).with_ecn(EcnMode::Classic);
        // In order, a gap, the hole filled late, a duplicate, lone segments left to the timer.
        let mut seqs: Vec<u64> = (0..40).collect();
        seqs.extend([42, 43, 44, 40, 41, 45, 46, 45, 47, 48, 49, 52, 50, 51, 53]);
        seqs.extend(54..400);
        let (mut out_f, mut out_g) = (Vec::new(), Vec::new());
        let (mut got_f, mut got_g) = (0, 0);
        let mut now = 100_000_000; // later than the echoed timestamps below (no underflow)
        for (i, &seq) in seqs.iter().enumerate() {
            now += if i % 50 == 49 { 45_000_000 } else { 120_000 };
            for (r, out) in [(&mut fast, &mut out_f), (&mut general, &mut out_g)] {
                if r.delack_timer.deadline().is_some_and(|d| d <= now) {
                    r.on_delack_timer(now, out);
                }
            }
            let mut p = data(seq);
            p.ts_val = now - 25_000_000;
            // Echo of one of our ACKs 5 ms ago: the receiver's RTT estimate.
            p.ts_ecr = now - 5_000_000;
            got_f += fast.on_packet(now, &p, &mut out_f);
            got_g += general.on_packet(now, &p, &mut out_g);
            assert_eq!(fast.delack_timer.deadline(), general.delack_timer.deadline(), "segment {seq}");
        }
        let acks = |r: &Receiver, out: &[Packet]| {
            (0..out.len())
                .map(|i| {
                    let a = &out[i];
                    (a.ack(), a.rwnd(), a.ts_val, a.ts_ecr, a.ece(), sack_of(r, out, i))
                })
                .collect::<Vec<_>>()
        };
        assert_eq!((got_f, acks(&fast, &out_f)), (got_g, acks(&general, &out_g)));
        assert_eq!(got_f, 400);
        assert!(out_f.iter().any(|a| a.has_sack()), "the holes were SACKed");
        assert!(fast.rwnd() > 10, "the window grew");
    }

    #[test]
    fn the_offered_window_is_capped_at_rcv_ssthresh_and_never_shrinks() {
        // __tcp_select_window caps the window at rcv_ssthresh, which
        // tcp_grow_window raises by 2 segments per segment below the clamp;
        // tcp_select_window never moves the right edge left.
        let mut r = Receiver::new(0, 1448, false, 10, None, 10);
        r.quick = 0;
        (r.rwnd, r.window_clamp) = (100, 100); // as auto-tuning raises them
        let mut out = vec![];
        for seq in 0..5 {
            r.on_packet(seq + 1, &data(seq), &mut out);
        }
        assert_eq!(out.iter().map(|a| (a.ack(), a.rwnd())).collect::<Vec<_>>(), vec![(1, 12), (2, 14), (3, 16), (4, 18), (5, 20)]);
        // A lower rcv_ssthresh (memory pressure in Linux) keeps the last right edge: 5 + 20.
        r.rcv_ssthresh = 4;
        r.window_clamp = 4;
        out.clear();
        r.on_packet(10, &data(5), &mut out);
        assert_eq!((out[0].ack(), out[0].rwnd()), (6, 19));
    }

    #[test]
    fn the_offered_window_is_tcp_space_at_the_measured_scaling_ratio_before_auto_tuning() {
        // __tcp_select_window offers tcp_space(sk) = tcp_win_from_space(sk_rcvbuf)
        // (capped at rcv_ssthresh): the SYN-ACK's 200 segments come from a buffer
        // of twice that at the default ratio 1/2; once the first segment measured
        // 160/256 (tcp_measure_rcv_mss), the same buffer holds 250 segments, and
        // rcv_ssthresh reaches them after 25 segments (tcp_grow_window), before
        // any auto-tuning step (no receiver RTT sample yet). The testbed's 6.18
        // sender had 250 segments in flight at that point (docs/linux-ports.md, "Hybla").
        let mut r = Receiver::new(0, 1448, true, 200, None, 10);
        let mut out = vec![];
        r.on_packet(0, &Packet::new(0, Kind::Syn, 60), &mut out);
        assert_eq!(out[0].rwnd(), 200, "the SYN-ACK's window");
        out.clear();
        for s in 0..30 {
            r.on_packet(s + 1, &data(s), &mut out);
        }
        let last = out.last().unwrap();
        assert_eq!((last.ack(), last.rwnd()), (30, 250));
    }

    #[test]
    fn a_lone_segment_is_acked_at_the_timer_wheels_tick_after_40ms() {
        // tcp_send_delayed_ack arms the jiffy timer at jiffies + TCP_ATO_MIN
        // (10 jiffies at HZ = 250); kernel/time/timer.c calc_index puts it in
        // the next bucket (expires + 1 at level 0), so it fires at the 11th
        // tick after the one before the segment: 44 ms after a segment just
        // after a tick, just over 40 ms after one just before a tick.
        let ms = 1_000_000;
        for (phase_ns, at_ns, fires_ns) in [(0, 1_000, 44 * ms), (0, 3_999_999, 44 * ms), (1_500_000, 2_499_999, 42_500_000)] {
            let mut r = rx().with_clock_phase(phase_ns);
            let mut out = vec![];
            r.on_packet(at_ns, &data(0), &mut out);
            assert_eq!(r.delack_timer.deadline(), Some(fires_ns), "phase {phase_ns}, segment at {at_ns}");
            r.on_delack_timer(fires_ns, &mut out);
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].ack(), 1);
        }
    }

    fn pushed(seq: u64) -> Packet {
        let mut p = data(seq);
        p.set_psh(true);
        p
    }

    #[test]
    fn a_full_sized_psh_segment_is_acked_alone_at_once_as_linux_6_6() {
        // tcp_measure_rcv_mss (6.6+, commit 4720852ed9af) sets ICSK_ACK_PUSHED
        // for a full-sized PSH segment; the application's read then empties
        // the receive queue and __tcp_cleanup_rbuf sends the scheduled ACK.
        // Without PSH the lone segment waits for the delayed-ACK timer; with
        // PSH on the second of a pair nothing changes (ACKed as a pair).
        for general in [false, true] {
            let mut r = if general { rx().with_ecn(EcnMode::Classic) } else { rx() };
            let mut out = vec![];
            r.on_packet(0, &data(0), &mut out);
            assert!(out.is_empty() && r.delack_timer.is_armed());
            r.on_packet(10, &pushed(1), &mut out);
            r.on_packet(20, &pushed(2), &mut out);
            r.on_packet(30, &data(3), &mut out);
            r.on_packet(40, &pushed(4), &mut out);
            assert_eq!(out.iter().map(|a| a.ack()).collect::<Vec<_>>(), vec![2, 3, 5], "ECN path {general}");
        }
    }

    #[test]
    fn gro_flushes_the_held_skb_at_a_psh_segment() {
        // tcp_gro_receive: a PSH segment merges into the held skb, ORs its
        // PSH into it and flushes it; the next segment starts a new skb.
        let psh_at_2_and_6 = |k| if k == 2 || k == 6 { pushed(k) } else { data(k) };
        assert_eq!(gro_acks(50_000, 10, 100, psh_at_2_and_6).iter().map(|a| a.0).collect::<Vec<_>>(), vec![3, 7, 10]);
        // A lone PSH segment goes up at once, and is ACKed at once.
        assert_eq!(gro_acks(50_000, 1, 100, pushed), vec![(1, false)]);
    }

    /// A receiver past its start whose SYN-ACK left at 0 and whose first
    /// data segment arrives at `srtt_ns` (the handshake's RTT).
    fn rx_with_rtt(srtt_ns: u64, out: &mut Vec<Packet>) -> Receiver {
        let mut r = rx();
        r.on_packet(0, &Packet::new(0, Kind::Syn, 60), out);
        r.on_packet(srtt_ns, &data(0), out);
        r.on_delack_timer(r.delack_timer.deadline().unwrap(), out);
        out.clear();
        r
    }

    #[test]
    fn a_missed_delayed_ack_inflates_ato_bounded_by_the_receivers_rtt_as_linux() {
        // In jiffies of 4 ms (HZ = 250): tcp_delack_timer_handler doubles ato
        // (10 -> 20, at most the RTO = usecs_to_jiffies(50 + 200 ms) = 63);
        // tcp_send_delayed_ack bounds the timeout by the receiver's srtt
        // (usecs_to_jiffies(50 ms) = 13) while ato > TCP_ATO_MIN (10).
        // The first segment, 10 jiffies after the last (jiffy 22 against 12),
        // sets ato / 2 + m = 20; the next ones, in one jiffy, halve the excess
        // (tcp_event_data_recv: ato / 2 + 5). Each timer fires at the tick
        // after jiffies + timeout (the segment at 91 ms is in jiffy 22: 13
        // jiffies on, the tick of jiffy 36 at 144 ms).
        let mut out = vec![];
        let mut r = rx_with_rtt(50_000_000, &mut out);
        assert_eq!(r.ato_jiffies, 20);
        let ms = 1_000_000;
        let mut timers = vec![];
        for (k, seq) in (1..6).enumerate() {
            let t = 91 * ms + k as u64 * ms;
            r.on_packet(t, &data(seq), &mut out);
            timers.push((r.ato_jiffies, r.delack_timer.deadline().map(|d| d - t)));
        }
        let want = [(20, Some(53 * ms)), (15, None), (12, Some(51 * ms)), (11, None), (10, Some(41 * ms))];
        assert_eq!(timers, want);
        // At a 20 ms receiver RTT the bound is TCP_DELACK_MIN (10 jiffies): the
        // segment at 61 ms (jiffy 15) is ACKed at the tick of jiffy 26.
        let mut r = rx_with_rtt(20_000_000, &mut out);
        r.on_packet(61 * ms, &data(1), &mut out);
        assert_eq!(r.delack_timer.deadline(), Some(104 * ms));
    }

    #[test]
    fn sparse_segments_grow_ato_by_their_gap_and_a_gap_beyond_the_rto_quick_acks() {
        // m < ato: ato = ato / 2 + m in whole jiffies (segments 30 ms apart,
        // 7 or 8 jiffies: 10 -> 12 -> 14 -> 14 -> 15), the timer at min(ato,
        // srtt = 25 jiffies) after the segment's jiffy (80), at the tick after
        // (jiffy 96: 384 ms). A lone segment after a gap longer than the
        // receiver's RTO (usecs_to_jiffies(100 + 200 ms) = 75 jiffies) enters
        // quick-ACK mode (tcp_incr_quickack); after a shorter one it waits.
        let mut out = vec![];
        let mut r = rx_with_rtt(100_000_000, &mut out);
        r.ato_jiffies = DELACK_MIN_JIFFIES;
        let mut t = 200_000_000;
        for seq in 1..6 {
            r.on_packet(t, &data(seq), &mut out);
            t += 30_000_000;
        }
        assert_eq!((r.ato_jiffies, r.delack_timer.deadline()), (15, Some(384_000_000)));
        r.on_delack_timer(r.delack_timer.deadline().unwrap(), &mut out);
        out.clear();
        for (gap, seq, acked_at_once) in [(290_000_000, 6, false), (308_000_000, 7, true)] {
            r.quick = 0;
            r.unacked = 0;
            r.delack_timer.disarm();
            t += gap;
            r.lrcv_jiffies = jiffies(t - gap, KERNEL_HZ);
            r.on_packet(t, &data(seq), &mut out);
            assert_eq!(!out.is_empty(), acked_at_once, "gap {gap} ns");
            out.clear();
        }
    }

    #[test]
    fn quick_acks_each_segment_while_rcv_ssthresh_grows_to_the_clamp_then_sixteen_more() {
        // Linux: the first data segment enters quick-ACK mode for min(rcv_wnd /
        // (2 rcv_mss), 16) ACKs (tcp_event_data_recv -> tcp_incr_quickack);
        // tcp_grow_window raises rcv_ssthresh from the initial window (200) by 2
        // per segment towards the clamp (2 x 200 segments of buffer x 160/256 =
        // 250) and sets icsk_ack.quick |= 1, and each ACK takes one
        // (tcp_dec_quickack_mode). So quick stays at 16-17 while the window
        // grows (segments 0..=24), then 16 more segments are ACKed at once
        // (25..=40), then every second one. (The testbed's 6.18 receiver ACKed
        // segments 0..=41 one by one at this window: docs/fidelity.md.)
        let mut r = Receiver::new(0, 1448, true, 200, None, 10);
        assert_eq!((r.rcv_ssthresh, r.window_clamp, r.quick), (200, 250, 16));
        let mut out = vec![];
        for s in 0..50 {
            r.on_packet(s, &data(s), &mut out);
            if s <= 40 {
                assert_eq!(out.len() as u64, s + 1, "segment {s} ACKed at once");
            }
        }
        assert_eq!(r.rcv_ssthresh, 250);
        assert_eq!(out.len(), 41 + 4, "segments 41..50: every second one");
    }

    /// Feed flights of `sizes` segments one `rtt_ns` apart, 100 us between
    /// segments, every segment echoing a timestamp `rtt_ns` old; returns per
    /// flight the number of segments each ACK covered, in order.
    fn flights(r: &mut Receiver, sizes: &[u64], rtt_ns: u64) -> Vec<Vec<u64>> {
        let (mut seq, mut acked) = (0, 0);
        let mut per_flight = vec![];
        for (k, &n) in sizes.iter().enumerate() {
            let mut out = vec![];
            for i in 0..n {
                let now = (k as u64 + 2) * rtt_ns + i * 100_000;
                if r.delack_timer.deadline().is_some_and(|d| d <= now) {
                    r.on_delack_timer(now, &mut out);
                }
                let mut p = data(seq);
                p.ts_ecr = now - rtt_ns;
                r.on_packet(now, &p, &mut out);
                seq += 1;
            }
            per_flight.push(out.iter().map(|a| a.ack() - std::mem::replace(&mut acked, a.ack())).collect());
        }
        per_flight
    }

    #[test]
    fn auto_tuning_grows_the_window_to_twice_the_data_plus_twice_its_growth_as_linux_6_18() {
        // tcp_rcv_space_adjust -> tcp_rcvbuf_grow (6.18: commits 65c5287892e9,
        // aa251c84636c): once per receiver RTT, with copied > space,
        // rcvwin = 2 copied + 2 x (2 copied) (copied - space) / space, and
        // window_clamp follows sk_rcvbuf. Slow-start flights of 10, 20, 40, 80:
        // measured at the first segment of each flight, copied = the previous
        // flight. 40 after 20: 80 + 160 = 240, below the clamp of 250 (without
        // the 16-segment cushion of older kernels: 288); 80 after 40: 480.
        let run = |sizes: &[u64]| {
            let mut r = Receiver::new(0, 1448, true, 200, None, 10);
            flights(&mut r, sizes, 100_000_000);
            (r.space, r.window_clamp)
        };
        assert_eq!(run(&[10, 20, 40, 80]), (40, 250));
        assert_eq!(run(&[10, 20, 40, 80, 1]), (80, 480));
    }

    #[test]
    fn quick_acks_each_segment_while_rcv_ssthresh_follows_a_clamp_raised_by_auto_tuning() {
        // tcp_grow_window after tcp_rcvbuf_grow moved window_clamp from 250 to
        // 480 at the first segment of a 160-segment flight: from the next one,
        // each segment raises rcv_ssthresh by 2 and is ACKed at once, 115 of
        // them (230 / 2; the first ACK also covers the measuring segment,
        // whose ACK was delayed); then every second segment again.
        let mut r = Receiver::new(0, 1448, true, 200, None, 10);
        let acks = flights(&mut r, &[10, 20, 40, 80, 160], 100_000_000);
        let last = &acks[4];
        assert_eq!(last[0], 2, "{last:?}");
        let singles = last[1..].iter().take_while(|&&k| k == 1).count();
        assert_eq!(singles, 114, "{last:?}");
        assert!(last.iter().rev().take(20).all(|&k| k == 2), "then delayed ACKs: {last:?}");
        assert_eq!(r.rcv_ssthresh, 480);
    }

    #[test]
    fn receiver_rtt_counts_the_ms_ticks_of_the_hosts_clock() {
        // tcp_rcv_rtt_measure_ts: ms of tcp_clock_ns() now minus the TSecr's ms. Echoing
        // 200.5 ms at 300.3 ms: 100 ticks at phase 0, 99 at phase 0.6 ms (200 -> 201.1 ms
        // and 300.9 ms on the host).
        let mut p = data(0);
        p.ts_ecr = 200_500_000;
        let mut r = rx();
        r.measure_rtt(300_300_000, &p);
        assert_eq!(r.rcv_rtt_ns, 100_000_000);
        let mut r = rx().with_clock_phase(600_000);
        r.measure_rtt(300_300_000, &p);
        assert_eq!(r.rcv_rtt_ns, 99_000_000);
    }

    #[test]
    fn an_ack_echoes_the_tsval_of_the_first_segment_since_the_last_ack_as_tcp_replace_ts_recent() {
        // Linux tcp_replace_ts_recent (tcp_input.c): ts_recent takes a segment's TSval only
        // if the segment starts at or below rcv_wup, the rcv_nxt of the last ACK sent
        // (tcp_select_window); the fast path's `rcv_nxt == rcv_wup`. So a delayed ACK of
        // two segments echoes the first one's TSval, and an out-of-order segment's is not
        // echoed: its duplicate ACK echoes the last in-order one's.
        let mut r = rx();
        let mut out = vec![];
        let seg = |seq: u64, ts_ms: u64| {
            let mut p = data(seq);
            p.ts_val = ts_ms * 1_000_000;
            p
        };
        r.on_packet(0, &seg(0, 10), &mut out);
        r.on_packet(1, &seg(1, 11), &mut out);
        assert_eq!((out.len(), out[0].ts_ecr), (1, 10_000_000), "the first segment's TSval");
        r.on_packet(2, &seg(2, 12), &mut out);
        r.on_packet(3, &seg(3, 13), &mut out);
        assert_eq!((out.len(), out[1].ts_ecr), (2, 12_000_000));
        r.on_packet(4, &seg(5, 15), &mut out);
        assert_eq!((out.len(), out[2].ack(), out[2].ts_ecr), (3, 4, 12_000_000), "out of order: not echoed");
        r.on_packet(5, &seg(4, 16), &mut out);
        assert_eq!((out.len(), out[3].ack(), out[3].ts_ecr), (4, 6, 16_000_000), "the hole's segment starts at rcv_wup");
        // A per-packet delay report (LEDBAT's receiver): the newest segment's TSval.
        let mut r = rx().with_newest_tsval_echo(true);
        let mut out = vec![];
        r.on_packet(0, &seg(0, 10), &mut out);
        r.on_packet(1, &seg(1, 11), &mut out);
        assert_eq!(out[0].ts_ecr, 11_000_000);
    }

    #[test]
    fn receiver_rtt_latches_a_lower_sample_and_smooths_a_higher_one_once_per_tsecr() {
        // tcp_rcv_rtt_measure_ts: one sample per new TSecr (rcv_rtt_last_tsecr),
        // in 1 ms timestamp ticks, zero samples skipped; tcp_rcv_rtt_update
        // (commit b879dcb1aeec, 6.16): a lower sample replaces the estimate, a
        // higher one moves it by 1/8.
        let mut r = rx();
        let seg = |now: u64, ecr: u64| {
            let mut p = data(0);
            p.ts_ecr = ecr;
            (now, p)
        };
        let (now, p) = seg(300_000_000, 200_000_000);
        r.measure_rtt(now, &p);
        assert_eq!(r.rcv_rtt_ns, 100_000_000);
        let (now, p) = seg(380_000_000, 200_000_000);
        r.measure_rtt(now, &p);
        assert_eq!(r.rcv_rtt_ns, 100_000_000, "same TSecr: no second sample");
        let (now, p) = seg(381_500_000, 201_400_000);
        r.measure_rtt(now, &p);
        assert_eq!(r.rcv_rtt_ns, 100_000_000 - 12_500_000 + 180_000_000 / 8, "ticks 381 - 201 = 180 ms, smoothed");
        let (now, p) = seg(400_000_000, 310_000_000);
        r.measure_rtt(now, &p);
        assert_eq!(r.rcv_rtt_ns, 90_000_000, "a lower sample is taken as it is");
        let (now, p) = seg(400_900_000, 400_100_000);
        r.measure_rtt(now, &p);
        assert_eq!(r.rcv_rtt_ns, 90_000_000, "a zero-tick sample is skipped");
    }

    #[test]
    fn out_of_order_is_acked_at_once_with_sack_and_hole_fill_acks_at_once() {
        let mut r = rx();
        let mut out = vec![];
        r.on_packet(0, &data(0), &mut out);
        r.on_packet(0, &data(1), &mut out);
        out.clear();
        r.on_packet(0, &data(3), &mut out); // 2 lost
        r.on_packet(0, &data(4), &mut out);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|a| a.ack() == 2));
        assert_eq!((sack_of(&r, &out, 0).block(0, 2), sack_of(&r, &out, 1).block(0, 2)), ((3, 4), (3, 5)), "one growing block");
        out.clear();
        let n = r.on_packet(0, &data(2), &mut out); // retransmission fills the hole
        assert_eq!(n, 3);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack(), 5);
    }

    /// The SACK option of `out[i]`, one of the ACKs `r` sent since `out`
    /// was last cleared (their options are the last ones in `r`'s channel).
    fn sack_of(r: &Receiver, out: &[Packet], i: usize) -> SackOpt {
        if !out[i].has_sack() {
            return SackOpt::NONE;
        }
        let ch = r.sack_channel();
        let ch = ch.borrow();
        let marked = out.iter().filter(|a| a.has_sack()).count();
        ch[ch.len() - marked + out[..i].iter().filter(|a| a.has_sack()).count()]
    }

    /// The SACK blocks of `out[i]` as full segment numbers, in sent order.
    fn blocks(r: &Receiver, out: &[Packet], i: usize) -> Vec<(u64, u64)> {
        let (sack, ack) = (sack_of(r, out, i), out[i].ack());
        (0..sack.len()).map(|i| sack.block(i, ack)).collect()
    }

    #[test]
    fn three_holes_are_reported_as_three_blocks_most_recent_first() {
        // RFC 2018 section 4: the first block holds the most recently received
        // segment, the others the most recently reported ones (Linux
        // tcp_sack_new_ofo_skb moves the extended block to the front).
        let mut r = rx();
        let mut out = vec![];
        for s in [0, 1, 3, 5, 7] {
            r.on_packet(0, &data(s), &mut out); // holes at 2, 4, 6
        }
        let last = out.last().unwrap();
        assert_eq!(last.ack(), 2);
        assert_eq!(blocks(&r, &out, out.len() - 1), vec![(7, 8), (5, 6), (3, 4)]);
        out.clear();
        // 4 arrives: [3,4) [4,5) [5,6) become one block, moved to the front.
        r.on_packet(0, &data(4), &mut out);
        assert_eq!(blocks(&r, &out, 0), vec![(3, 6), (7, 8)]);
        out.clear();
        // 2 fills the first hole: rcv_nxt = 6, the covered block is removed (tcp_sack_remove).
        r.on_packet(0, &data(2), &mut out);
        assert_eq!((out[0].ack(), blocks(&r, &out, 0)), (6, vec![(7, 8)]));
    }

    #[test]
    fn five_holes_keep_four_blocks_and_an_ack_carries_three() {
        // Linux TCP_NUM_SACKS = 4 remembered; with timestamps the option space
        // holds 3 (tcp_established_options). A fifth block forgets the oldest.
        let mut r = rx();
        let mut out = vec![];
        for s in [0, 2, 4, 6, 8, 10] {
            r.on_packet(0, &data(s), &mut out); // holes at 1, 3, 5, 7, 9
        }
        assert_eq!(r.num_sacks, NUM_SACKS);
        assert_eq!(r.sacks, [(10, 11), (8, 9), (6, 7), (4, 5)], "[2,3) forgotten");
        assert_eq!(blocks(&r, &out, out.len() - 1), vec![(10, 11), (8, 9), (6, 7)]);
    }

    #[test]
    fn a_duplicate_below_rcv_nxt_is_dsacked_first_and_only_once() {
        // RFC 2883 section 4 / Linux tcp_data_queue -> tcp_dsack_set: the
        // D-SACK block comes first, then the SACK blocks; it is sent on one
        // ACK only; the receiver enters quick-ACK mode (tcp_enter_quickack_mode).
        let mut r = rx();
        let mut out = vec![];
        for s in [0, 1, 2, 4, 6] {
            r.on_packet(0, &data(s), &mut out);
        }
        out.clear();
        r.on_packet(0, &data(1), &mut out); // a spurious retransmission
        assert_eq!(out.len(), 1, "ACKed at once");
        assert_eq!((out[0].ack(), blocks(&r, &out, 0)), (3, vec![(1, 2), (6, 7), (4, 5)]));
        assert_eq!(r.quick, 16, "min(rwnd / 2, TCP_MAX_QUICKACKS)");
        out.clear();
        r.on_packet(0, &data(8), &mut out);
        assert_eq!(blocks(&r, &out, 0), vec![(8, 9), (6, 7), (4, 5)], "no D-SACK any more");
    }

    #[test]
    fn a_duplicate_of_held_out_of_order_data_is_dsacked_before_its_block() {
        // RFC 2883 section 4 (a duplicate of out-of-order data): the D-SACK, then the SACK
        // block that contains it (Linux tcp_data_queue_ofo: tcp_dsack_set, then
        // tcp_sack_new_ofo_skb moves that block to the front).
        let mut r = rx();
        let mut out = vec![];
        for s in [0, 2, 3, 5] {
            r.on_packet(0, &data(s), &mut out);
        }
        out.clear();
        r.on_packet(0, &data(3), &mut out);
        assert_eq!((out[0].ack(), blocks(&r, &out, 0)), (1, vec![(3, 4), (2, 4), (5, 6)]));
    }

    /// A receiver with GRO (NAPI window `window_ns`) and delayed ACKs, fed
    /// `n` segments `gap_ns` apart (each built by `seg`); the flush timer
    /// fires when due, as in the simulation. Returns (ACKed seq, ECE) per ACK.
    fn gro_acks(window_ns: u64, n: u64, gap_ns: u64, seg: impl Fn(u64) -> Packet) -> Vec<(u64, bool)> {
        let mut r = rx().with_ecn(EcnMode::Scalable).with_gro(window_ns, 52);
        let mut out = vec![];
        for k in 0..n {
            let now = k * gap_ns;
            if let Some(due) = r.gro_timer.deadline().filter(|&d| d <= now) {
                r.gro_flush(due, &mut out);
            }
            r.on_packet(now, &seg(k), &mut out);
        }
        if let Some(due) = r.gro_timer.deadline() {
            r.gro_flush(due, &mut out);
        }
        out.iter().map(|a| (a.ack(), a.ece())).collect()
    }

    #[test]
    fn gro_acks_a_back_to_back_burst_once_per_64kb_skb() {
        // 100 segments 100 ns apart, one NAPI poll (50 us): skb_gro_receive
        // stops below gro_max_size = 65536 B, i.e. 52 + 45 x 1448 B; each
        // merged skb carries more than one MSS, so __tcp_ack_snd_check ACKs
        // it at once: ceil(100 / 45) = 3 stretch ACKs (without GRO: 50).
        assert_eq!(gro_acks(50_000, 100, 100, data), vec![(45, false), (90, false), (100, false)]);
    }

    #[test]
    fn gro_batches_are_what_arrives_within_one_napi_poll() {
        // 1 Gbit/s spacing (12 us) and a 50 us poll: 5 segments per skb, one
        // ACK each: 4 ACKs for 20 segments where delayed ACK alone sends 10.
        assert_eq!(gro_acks(50_000, 20, 12_000, data).iter().map(|a| a.0).collect::<Vec<_>>(), vec![5, 10, 15, 20]);
    }

    #[test]
    fn gro_does_not_merge_across_a_ce_or_timestamp_change() {
        // inet_gro_receive flushes on a TOS (ECN) difference and
        // tcp_gro_receive on different TCP options (TSval, 1 ms clock).
        let ce_from_5 = |k| if k < 5 { data(k) } else { ce(k) };
        assert_eq!(gro_acks(50_000, 10, 100, ce_from_5), vec![(5, false), (10, true)]);
        let ts_from_3 = |k| {
            let mut p = data(k);
            p.ts_val = if k < 3 { 0 } else { TS_TICK_NS };
            p
        };
        assert_eq!(gro_acks(50_000, 6, 100, ts_from_3), vec![(3, false), (6, false)]);
    }

    #[test]
    fn ooo_ranges_merge() {
        let mut r = rx();
        for s in [5, 7, 6, 9, 3] {
            assert!(r.insert_ooo(s));
        }
        assert!(!r.insert_ooo(6), "already held");
        assert_eq!(r.ooo, vec![(3, 4), (5, 8), (9, 10)]);
        r.insert_ooo(4);
        r.insert_ooo(8);
        assert_eq!(r.ooo, vec![(3, 10)]);
    }

    #[test]
    fn window_grows_with_delivery_and_respects_the_cap() {
        let mut r = Receiver::new(0, 1448, false, 20, Some(100), 10);
        let mut out = vec![];
        let mut seq = 0;
        // 50 segments per 10 ms "RTT", receiver RTT estimate from echoed timestamps.
        for round in 0..10u64 {
            for _ in 0..50 {
                let mut p = data(seq);
                p.ts_ecr = round * 10_000_000 + 1;
                r.on_packet(round * 10_000_000 + 10_000_000, &p, &mut out);
                seq += 1;
            }
        }
        assert_eq!(r.rwnd(), 100);
    }

    fn ce(seq: u64) -> Packet {
        let mut p = data(seq);
        p.ecn = Ecn::Ce;
        p
    }

    #[test]
    fn classic_echoes_ece_until_cwr() {
        let mut r = rx().with_ecn(EcnMode::Classic);
        let mut out = vec![];
        r.on_packet(0, &data(0), &mut out);
        r.on_packet(0, &data(1), &mut out);
        assert!(!out[0].ece());
        out.clear();
        r.on_packet(0, &ce(2), &mut out);
        assert_eq!(out.len(), 1, "CE enters quick-ACK: ACKed at once");
        assert!(out[0].ece());
        out.clear();
        for s in 3..7 {
            r.on_packet(0, &data(s), &mut out);
        }
        assert!(!out.is_empty() && out.iter().all(|a| a.ece()), "ECE persists without new CE");
        out.clear();
        let mut c = data(7);
        c.set_cwr(true);
        r.on_packet(0, &c, &mut out);
        assert_eq!(out.len(), 1, "CWR segment ACKed at once");
        assert!(!out[0].ece(), "CWR clears the echo");
    }

    #[test]
    fn scalable_echo_follows_ce_state_with_immediate_acks_on_change() {
        let mut r = rx().with_ecn(EcnMode::Scalable);
        let mut out = vec![];
        r.on_packet(0, &data(0), &mut out); // delayed
        assert!(out.is_empty());
        r.on_packet(0, &ce(1), &mut out);
        // State change: ACK for segment 0 with ECE = 0, then segment 1 at once with ECE = 1.
        assert_eq!(out.iter().map(|a| (a.ack(), a.ece())).collect::<Vec<_>>(), vec![(1, false), (2, true)]);
        out.clear();
        r.on_packet(0, &ce(2), &mut out);
        r.on_packet(0, &ce(3), &mut out);
        assert_eq!(out.iter().map(|a| (a.ack(), a.ece())).collect::<Vec<_>>(), vec![(4, true)], "delayed ACK while CE persists");
        out.clear();
        r.on_packet(0, &ce(4), &mut out);
        r.on_packet(0, &data(5), &mut out);
        assert_eq!(out.iter().map(|a| (a.ack(), a.ece())).collect::<Vec<_>>(), vec![(5, true), (6, false)]);
        // Every segment's CE state reached the sender: CE-echoed ACKs cover 1..=4.
    }

    #[test]
    fn dctcp_receiver_acks_a_cwr_segment_at_once_as_tcp_ecn_accept_cwr() {
        // Linux tcp_ecn_accept_cwr sets ICSK_ACK_NOW for a CWR segment on any
        // RFC 3168 connection, DCTCP's too; the ECE bit stays the CE state.
        let cwr = |seq: u64, ce: bool| {
            let mut p = if ce { self::ce(seq) } else { data(seq) };
            p.set_cwr(true);
            p
        };
        let mut r = rx().with_ecn(EcnMode::Scalable).with_cwr_ack_now(true);
        let mut out = vec![];
        r.on_packet(0, &data(0), &mut out);
        r.on_packet(0, &data(1), &mut out);
        out.clear();
        r.on_packet(0, &cwr(2, false), &mut out);
        assert_eq!(out.iter().map(|a| (a.ack(), a.ece())).collect::<Vec<_>>(), vec![(3, false)], "CWR segment ACKed at once");
        out.clear();
        r.on_packet(0, &ce(3), &mut out); // state change: at once, ECE
        r.on_packet(0, &cwr(4, true), &mut out);
        assert_eq!(out.iter().map(|a| (a.ack(), a.ece())).collect::<Vec<_>>(), vec![(4, true), (5, true)]);
        // Without it (Prague: AccECN has no CWR signal) the segment waits for the delayed ACK.
        let mut p = rx().with_ecn(EcnMode::Scalable);
        let mut out = vec![];
        p.on_packet(0, &data(0), &mut out);
        p.on_packet(0, &data(1), &mut out);
        out.clear();
        p.on_packet(0, &cwr(2, false), &mut out);
        assert!(out.is_empty(), "delayed: {out:?}");
    }

    /// The compressed-SACK timer (the delayed-ACK slot) fires, if armed.
    fn fire_compressed_sack(r: &mut Receiver, out: &mut Vec<Packet>) {
        if let Some(due) = r.delack_timer.deadline() {
            r.on_delack_timer(due, out);
        }
    }

    /// A receiver past its start with segments 0 and 1 ACKed and segment 2
    /// lost, its RTT estimates as given (`rcv_rtt_est`, the handshake's srtt).
    fn rx_with_hole(rcv_rtt_ns: u64, srtt_ns: u64) -> (Receiver, Vec<Packet>) {
        let mut r = rx().with_sack_compression(true);
        let mut out = vec![];
        r.on_packet(0, &data(0), &mut out);
        r.on_packet(0, &data(1), &mut out);
        out.clear();
        r.set_rcv_rtt(rcv_rtt_ns);
        r.srtt_ns = srtt_ns;
        (r, out)
    }

    /// Linux `__tcp_ack_snd_check` (86de5921a3d5, `dup_ack_counter`): the
    /// first TCP_FASTRETRANS_THRESH out-of-order segments for one rcv_nxt
    /// are ACKed at once, the later ones share one ACK the timer sends
    /// (`tcp_compressed_ack_kick`) with the SACK blocks of then.
    #[test]
    fn after_three_dupacks_later_out_of_order_segments_share_one_compressed_sack() {
        let (mut r, mut out) = rx_with_hole(20_000_000, 0);
        for seq in 3..=8 {
            r.on_packet(1_000 * seq, &data(seq), &mut out);
        }
        assert_eq!(out.len(), 3, "segments 3, 4, 5 at once");
        assert_eq!((0..3).map(|i| blocks(&r, &out, i)).collect::<Vec<_>>(), vec![vec![(3, 4)], vec![(3, 5)], vec![(3, 6)]]);
        let due = r.delack_timer.deadline().expect("the compressed-SACK timer");
        out.clear();
        r.on_delack_timer(due, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].ack(), blocks(&r, &out, 0)), (2, vec![(3, 9)]), "one ACK for segments 6-8");
        assert!(!r.delack_timer.is_armed());
        // The next out-of-order segment for the same rcv_nxt is compressed again.
        out.clear();
        r.on_packet(due + 1, &data(9), &mut out);
        assert!(out.is_empty() && r.delack_timer.is_armed());
    }

    /// Linux `__tcp_ack_snd_check`: the timer waits min(tcp_comp_sack_delay_ns
    /// = 1 ms, rtt / 20), rtt = `rcv_rtt_est`, the srtt if lower, plus the
    /// hrtimer's slack tcp_comp_sack_slack_ns = 100 us (a70437cc09a1).
    #[test]
    fn the_compressed_sack_leaves_after_min_1ms_and_rtt_over_20() {
        let due_after = |rcv_rtt_ns: u64, srtt_ns: u64| {
            let (mut r, mut out) = rx_with_hole(rcv_rtt_ns, srtt_ns);
            for seq in 3..=6 {
                r.on_packet(5_000_000, &data(seq), &mut out);
            }
            r.delack_timer.deadline().expect("armed") - 5_000_000
        };
        assert_eq!(due_after(10_000_000, 0), 500_000 + 100_000, "rtt / 20");
        assert_eq!(due_after(50_000_000, 0), 1_000_000 + 100_000, "at most 1 ms");
        assert_eq!(due_after(50_000_000, 4_000_000), 200_000 + 100_000, "the srtt when lower");
        assert_eq!(due_after(4_000_000, 50_000_000), 200_000 + 100_000, "the receiver's estimate when lower");
        assert_eq!(due_after(0, 30_000_000), 100_000, "no receiver estimate yet: rtt 0, the slack alone");
    }

    /// Linux `tcp_event_ack_sent`: any ACK sent (here the one at once for the
    /// segment that fills the hole) clears `compressed_ack` and stops the timer.
    #[test]
    fn an_in_order_ack_cancels_the_pending_compressed_sack() {
        let (mut r, mut out) = rx_with_hole(20_000_000, 0);
        for seq in 3..=7 {
            r.on_packet(0, &data(seq), &mut out);
        }
        assert_eq!(out.len(), 3);
        let due = r.delack_timer.deadline().expect("armed");
        out.clear();
        assert_eq!(r.on_packet(100, &data(2), &mut out), 6);
        assert_eq!(out.iter().map(|a| a.ack()).collect::<Vec<_>>(), vec![8]);
        assert!(!r.delack_timer.is_armed());
        out.clear();
        r.on_delack_timer(due, &mut out);
        assert!(out.is_empty(), "nothing left to send: {out:?}");
    }

    /// Linux `__tcp_ack_snd_check`: with `compressed_ack` at tcp_comp_sack_nr
    /// = 44 the next out-of-order segment is ACKed at once, which clears the
    /// count; the one after is compressed again.
    #[test]
    fn after_44_compressed_sacks_the_next_is_sent_at_once() {
        let (mut r, mut out) = rx_with_hole(20_000_000, 0);
        for seq in 3..=5 {
            r.on_packet(0, &data(seq), &mut out);
        }
        out.clear();
        for seq in 6..6 + COMP_SACK_NR as u64 {
            r.on_packet(0, &data(seq), &mut out);
        }
        assert!(out.is_empty(), "44 compressed");
        let next = 6 + COMP_SACK_NR as u64;
        r.on_packet(0, &data(next), &mut out);
        assert_eq!((out.len(), out[0].ack(), blocks(&r, &out, 0)), (1, 2, vec![(3, next + 1)]));
        assert!(!r.delack_timer.is_armed());
        out.clear();
        r.on_packet(0, &data(next + 1), &mut out);
        assert!(out.is_empty() && r.delack_timer.is_armed(), "compressed again");
    }

    /// Linux `tcp_sack_new_ofo_skb` (TCP_SACK_BLOCKS_EXPECTED = 2): a new
    /// block behind two first sends the pending compressed SACK with the
    /// blocks of before; the segment itself is compressed.
    #[test]
    fn a_third_sack_block_sends_the_pending_compressed_sack_first() {
        let (mut r, mut out) = rx_with_hole(20_000_000, 0);
        for seq in [3, 4, 5, 6, 8] {
            r.on_packet(0, &data(seq), &mut out);
        }
        assert_eq!(out.len(), 3, "6 and 8 compressed");
        out.clear();
        r.on_packet(0, &data(10), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(blocks(&r, &out, 0), vec![(8, 9), (3, 7)], "the blocks before 10's");
        assert!(r.delack_timer.is_armed(), "10 compressed");
        out.clear();
        fire_compressed_sack(&mut r, &mut out);
        assert_eq!(blocks(&r, &out, 0), vec![(10, 11), (8, 9), (3, 7)]);
    }

    /// Linux `__tcp_ack_snd_check`: quick-ACK mode sends at once before the
    /// compression test, and such ACKs do not count towards the three.
    #[test]
    fn out_of_order_segments_in_quick_ack_mode_are_acked_at_once_and_not_counted() {
        let (mut r, mut out) = rx_with_hole(20_000_000, 0);
        r.quick = 2;
        for seq in 3..=9 {
            r.on_packet(0, &data(seq), &mut out);
        }
        assert_eq!(out.len(), 2 + 3, "two quick ACKs, then three dupACKs");
        assert!(r.delack_timer.is_armed(), "9 compressed");
        let mut off = rx_with_hole(20_000_000, 0).0.with_sack_compression(false);
        let mut out = vec![];
        for seq in 3..=9 {
            off.on_packet(0, &data(seq), &mut out);
        }
        assert_eq!(out.len(), 7, "tcp_comp_sack_nr = 0: every one at once");
    }
}
