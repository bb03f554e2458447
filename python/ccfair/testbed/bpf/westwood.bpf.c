// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Westwood+ as a BPF struct_ops congestion control: a function-by-function port of
 * Linux 6.18 net/ipv4/tcp_westwood.c (tcp_westwood_init, westwood_do_filter, westwood_filter,
 * tcp_westwood_pkts_acked, westwood_update_window, update_rtt_min, westwood_fast_bw,
 * westwood_acked_count, tcp_westwood_bw_rttmin, tcp_westwood_ack, tcp_westwood_event).
 * Algorithm: Mascolo et al. 2001, Grieco & Mascolo 2004 (Westwood+). The bytes ACKed per RTT
 * window (at least 50 ms) give a bandwidth sample, low-pass filtered twice (7/8); after a
 * loss (and at the end of CWR) ssthresh = bandwidth estimate x min RTT (at least 2 segments);
 * Reno otherwise.
 *
 * Deviations forced by BPF: none in the algorithm; tcp_reno_ssthresh(), tcp_reno_cong_avoid()
 * and tcp_reno_undo_cwnd() are the kernel's functions called as kfuncs (the module's ops
 * table points at them). No module parameters (Linux has none).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

/* TCP Westwood structure */
struct ccf_westwood {
	u32 bw_ns_est;  /* first bandwidth estimation..not too smoothed 8) */
	u32 bw_est;     /* bandwidth estimate */
	u32 rtt_win_sx; /* here starts a new evaluation... */
	u32 bk;
	u32 snd_una; /* used for evaluating the number of acked bytes */
	u32 cumul_ack;
	u32 accounted;
	u32 rtt;
	u32 rtt_min; /* minimum observed RTT */
	u8 first_ack; /* flag which infers that this is the first ack */
	u8 reset_rtt_min; /* Reset RTT min to next RTT sample*/
};

/* TCP Westwood functions and constants */
#define TCP_WESTWOOD_RTT_MIN (HZ / 20) /* 50ms */
#define TCP_WESTWOOD_INIT_RTT (20 * HZ) /* maybe too conservative?! */

/* Called after the initial SYN: RTTmin starts at TCP_WESTWOOD_INIT_RTT (too conservative on
 * purpose, replaced within the first RTT). */
SEC("struct_ops/tcp_westwood_init")
void BPF_PROG(tcp_westwood_init, struct sock *sk)
{
	struct ccf_westwood *w = inet_csk_ca(sk);

	w->bk = 0;
	w->bw_ns_est = 0;
	w->bw_est = 0;
	w->accounted = 0;
	w->cumul_ack = 0;
	w->reset_rtt_min = 1;
	w->rtt_min = w->rtt = TCP_WESTWOOD_INIT_RTT;
	w->rtt_win_sx = tcp_jiffies32;
	w->snd_una = tcp_sk(sk)->snd_una;
	w->first_ack = 1;
}

/* Low-pass filter. Implemented using constant coefficients. */
static __always_inline u32 westwood_do_filter(u32 a, u32 b) { return ((7 * a) + b) >> 3; }

static __always_inline void westwood_filter(struct ccf_westwood *w, u32 delta)
{
	/* If the filter is empty fill it with the first sample of bandwidth  */
	if (w->bw_ns_est == 0 && w->bw_est == 0) {
		w->bw_ns_est = w->bk / delta;
		w->bw_est = w->bw_ns_est;
	} else {
		w->bw_ns_est = westwood_do_filter(w->bw_ns_est, w->bk / delta);
		w->bw_est = westwood_do_filter(w->bw_est, w->bw_ns_est);
	}
}

/* Called after processing group of packets; all westwood needs is the last sample of srtt. */
SEC("struct_ops/tcp_westwood_pkts_acked")
void BPF_PROG(tcp_westwood_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct ccf_westwood *w = inet_csk_ca(sk);

	if (sample->rtt_us > 0)
		w->rtt = usecs_to_jiffies(sample->rtt_us);
}

/* Updates the RTT evaluation window if it is the right moment, and then the filter. */
static __always_inline void westwood_update_window(struct sock *sk)
{
	struct ccf_westwood *w = inet_csk_ca(sk);
	s32 delta = tcp_jiffies32 - w->rtt_win_sx;

	/* Initialize w->snd_una with the first acked sequence number in order
	 * to fix mismatch between tp->snd_una and w->snd_una for the first
	 * bandwidth sample
	 */
	if (w->first_ack) {
		w->snd_una = tcp_sk(sk)->snd_una;
		w->first_ack = 0;
	}

	/* See if a RTT-window has passed (at least TCP_WESTWOOD_RTT_MIN: on a short RTT we
	 * keep building the sample). */
	if (w->rtt && delta > max_t(u32, w->rtt, TCP_WESTWOOD_RTT_MIN)) {
		westwood_filter(w, delta);

		w->bk = 0;
		w->rtt_win_sx = tcp_jiffies32;
	}
}

static __always_inline void update_rtt_min(struct ccf_westwood *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min = w->rtt;
		w->reset_rtt_min = 0;
	} else
		w->rtt_min = min(w->rtt, w->rtt_min);
}

/* Fast path (header prediction succeeded): the update is straightforward. */
static __always_inline void westwood_fast_bw(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_westwood *w = inet_csk_ca(sk);

	westwood_update_window(sk);

	w->bk += tp->snd_una - w->snd_una;
	w->snd_una = tp->snd_una;
	update_rtt_min(w);
}

/* cumul_ack for bk in case of delayed or partial acks. */
static __always_inline u32 westwood_acked_count(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_westwood *w = inet_csk_ca(sk);

	w->cumul_ack = tp->snd_una - w->snd_una;

	/* If cumul_ack is 0 this is a dupack since it's not moving
	 * tp->snd_una.
	 */
	if (!w->cumul_ack) {
		w->accounted += tp->mss_cache;
		w->cumul_ack = tp->mss_cache;
	}

	if (w->cumul_ack > tp->mss_cache) {
		/* Partial or delayed ack */
		if (w->accounted >= w->cumul_ack) {
			w->accounted -= w->cumul_ack;
			w->cumul_ack = tp->mss_cache;
		} else {
			w->cumul_ack -= w->accounted;
			w->accounted = 0;
		}
	}

	w->snd_una = tp->snd_una;

	return w->cumul_ack;
}

/* Bandwidth estimate x min RTT, in packets (mss_cache); at least 2. */
static __always_inline u32 tcp_westwood_bw_rttmin(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct ccf_westwood *w = inet_csk_ca(sk);

	return max_t(u32, (w->bw_est * w->rtt_min) / tp->mss_cache, 2);
}

SEC("struct_ops/tcp_westwood_ack")
void BPF_PROG(tcp_westwood_ack, struct sock *sk, u32 ack_flags)
{
	if (ack_flags & CA_ACK_SLOWPATH) {
		struct ccf_westwood *w = inet_csk_ca(sk);

		westwood_update_window(sk);
		w->bk += westwood_acked_count(sk);

		update_rtt_min(w);
		return;
	}

	westwood_fast_bw(sk);
}

SEC("struct_ops/tcp_westwood_event")
void BPF_PROG(tcp_westwood_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_westwood *w = inet_csk_ca(sk);

	switch (event) {
	case CA_EVENT_COMPLETE_CWR:
		tp->snd_ssthresh = tcp_westwood_bw_rttmin(sk);
		tcp_snd_cwnd_set(tp, tp->snd_ssthresh);
		break;
	case CA_EVENT_LOSS:
		tp->snd_ssthresh = tcp_westwood_bw_rttmin(sk);
		/* Update RTT_min when next ack arrives */
		w->reset_rtt_min = 1;
		break;
	default:
		/* don't care */
		break;
	}
}

SEC("struct_ops/tcp_westwood_ssthresh")
u32 BPF_PROG(tcp_westwood_ssthresh, struct sock *sk) { return tcp_reno_ssthresh(sk); }

SEC("struct_ops/tcp_westwood_cong_avoid")
void BPF_PROG(tcp_westwood_cong_avoid, struct sock *sk, u32 ack, u32 acked) { tcp_reno_cong_avoid(sk, ack, acked); }

CCF_RENO_UNDO_CWND(tcp_westwood_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops westwood_ops = {
	.init = (void *)tcp_westwood_init,
	.ssthresh = (void *)tcp_westwood_ssthresh,
	.cong_avoid = (void *)tcp_westwood_cong_avoid,
	.undo_cwnd = (void *)tcp_westwood_undo_cwnd,
	.cwnd_event = (void *)tcp_westwood_event,
	.in_ack_event = (void *)tcp_westwood_ack,
	.pkts_acked = (void *)tcp_westwood_pkts_acked,
	.name = CCF_NAME("westwood"),
};
