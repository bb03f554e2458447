// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Veno as a BPF struct_ops congestion control: a function-by-function port of Linux 6.18
 * net/ipv4/tcp_veno.c (veno_enable, veno_disable, tcp_veno_init, tcp_veno_pkts_acked,
 * tcp_veno_state, tcp_veno_cwnd_event, tcp_veno_cong_avoid, tcp_veno_ssthresh).
 * Algorithm: Fu & Liew, "TCP Veno", IEEE JSAC 2003. Vegas' backlog estimate
 * diff = cwnd (rtt - baseRTT) / rtt (x2 fixed point) tells a congestive state (diff >= beta =
 * 3 segments: cwnd grows every other RTT, a loss halves it) from a random-loss state (Reno's
 * growth; a loss cuts cwnd by 1/5 only).
 *
 * Deviations forced by BPF: none in the algorithm; tcp_reno_cong_avoid(), tcp_slow_start(),
 * tcp_cong_avoid_ai() and tcp_reno_undo_cwnd() are the kernel's functions called as kfuncs
 * (the module calls them). No module parameters (beta is a constant in Linux).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

/* Default values of the Veno variables, in fixed-point representation with V_PARAM_SHIFT bits. */
#define V_PARAM_SHIFT 1
static const int beta = 3 << V_PARAM_SHIFT;

/* Veno variables */
struct ccf_veno {
	u8 doing_veno_now; /* if true, do veno for this rtt */
	u16 cntrtt;        /* # of rtts measured within last rtt */
	u32 minrtt;        /* min of rtts measured within last rtt (in usec) */
	u32 basertt;       /* the min of all Veno rtt measurements seen (in usec) */
	u32 inc;           /* decide whether to increase cwnd */
	u32 diff;          /* calculate the diff rate */
};

/* There are several situations when we must "re-start" Veno (idle, RTO): like Vegas. */
static __always_inline void veno_enable(struct sock *sk)
{
	struct ccf_veno *veno = inet_csk_ca(sk);

	/* turn on Veno */
	veno->doing_veno_now = 1;
	veno->minrtt = 0x7fffffff;
}

static __always_inline void veno_disable(struct sock *sk)
{
	struct ccf_veno *veno = inet_csk_ca(sk);

	/* turn off Veno */
	veno->doing_veno_now = 0;
}

static __always_inline void veno_init(struct sock *sk)
{
	struct ccf_veno *veno = inet_csk_ca(sk);

	veno->basertt = 0x7fffffff;
	veno->inc = 1;
	veno_enable(sk);
}

SEC("struct_ops/tcp_veno_init")
void BPF_PROG(tcp_veno_init, struct sock *sk) { veno_init(sk); }

/* Do rtt sampling needed for Veno. */
SEC("struct_ops/tcp_veno_pkts_acked")
void BPF_PROG(tcp_veno_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct ccf_veno *veno = inet_csk_ca(sk);
	u32 vrtt;

	if (sample->rtt_us < 0)
		return;

	/* Never allow zero rtt or baseRTT */
	vrtt = sample->rtt_us + 1;

	/* Filter to find propagation delay: */
	if (vrtt < veno->basertt)
		veno->basertt = vrtt;

	/* Find the min rtt during the last rtt to find
	 * the current prop. delay + queuing delay:
	 */
	veno->minrtt = min(veno->minrtt, vrtt);
	veno->cntrtt++;
}

SEC("struct_ops/tcp_veno_state")
void BPF_PROG(tcp_veno_state, struct sock *sk, u8 ca_state)
{
	if (ca_state == TCP_CA_Open)
		veno_enable(sk);
	else
		veno_disable(sk);
}

/* If the connection is idle and we are restarting, then we don't want to do any Veno
 * calculations until we get fresh rtt samples.  So when we restart, we reset our Veno
 * state to a clean state. After we get acks for this flight of packets, _then_ we can
 * make Veno calculations again.
 */
SEC("struct_ops/tcp_veno_cwnd_event")
void BPF_PROG(tcp_veno_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		veno_init(sk);
}

SEC("struct_ops/tcp_veno_cong_avoid")
void BPF_PROG(tcp_veno_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_veno *veno = inet_csk_ca(sk);

	if (!veno->doing_veno_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}

	/* limited by applications */
	if (!tcp_is_cwnd_limited(sk))
		return;

	/* We do the Veno calculations only if we got enough rtt samples */
	if (veno->cntrtt <= 2) {
		/* We don't have enough rtt samples to do the Veno
		 * calculation, so we'll behave like Reno.
		 */
		tcp_reno_cong_avoid(sk, ack, acked);
	} else {
		u64 target_cwnd;
		u32 rtt;

		/* We have enough rtt samples, so, using the Veno
		 * algorithm, we determine the state of the network.
		 */
		rtt = veno->minrtt;

		target_cwnd = (u64)tcp_snd_cwnd(tp) * veno->basertt;
		target_cwnd <<= V_PARAM_SHIFT;
		target_cwnd = div_u64(target_cwnd, rtt);

		veno->diff = (tcp_snd_cwnd(tp) << V_PARAM_SHIFT) - target_cwnd;

		if (tcp_in_slow_start(tp)) {
			/* Slow start. */
			acked = tcp_slow_start(tp, acked);
			if (!acked)
				goto done;
		}

		/* Congestion avoidance. */
		if (veno->diff < beta) {
			/* In the "non-congestive state", increase cwnd
			 * every rtt.
			 */
			tcp_cong_avoid_ai(tp, tcp_snd_cwnd(tp), acked);
		} else {
			/* In the "congestive state", increase cwnd
			 * every other rtt.
			 */
			if (tp->snd_cwnd_cnt >= tcp_snd_cwnd(tp)) {
				if (veno->inc && tcp_snd_cwnd(tp) < tp->snd_cwnd_clamp) {
					tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + 1);
					veno->inc = 0;
				} else
					veno->inc = 1;
				tp->snd_cwnd_cnt = 0;
			} else
				tp->snd_cwnd_cnt += acked;
		}
done:
		if (tcp_snd_cwnd(tp) < 2)
			tcp_snd_cwnd_set(tp, 2);
		else if (tcp_snd_cwnd(tp) > tp->snd_cwnd_clamp)
			tcp_snd_cwnd_set(tp, tp->snd_cwnd_clamp);
	}
	/* Wipe the slate clean for the next rtt. */
	/* veno->cntrtt = 0; */
	veno->minrtt = 0x7fffffff;
}

/* Veno MD phase */
SEC("struct_ops/tcp_veno_ssthresh")
u32 BPF_PROG(tcp_veno_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_veno *veno = inet_csk_ca(sk);

	if (veno->diff < beta)
		/* in "non-congestive state", cut cwnd by 1/5 */
		return max(tcp_snd_cwnd(tp) * 4 / 5, 2U);
	else
		/* in "congestive state", cut cwnd by 1/2 */
		return max(tcp_snd_cwnd(tp) >> 1U, 2U);
}

CCF_RENO_UNDO_CWND(tcp_veno_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops veno_ops = {
	.init = (void *)tcp_veno_init,
	.ssthresh = (void *)tcp_veno_ssthresh,
	.undo_cwnd = (void *)tcp_veno_undo_cwnd,
	.cong_avoid = (void *)tcp_veno_cong_avoid,
	.pkts_acked = (void *)tcp_veno_pkts_acked,
	.set_state = (void *)tcp_veno_state,
	.cwnd_event = (void *)tcp_veno_cwnd_event,
	.name = CCF_NAME("veno"),
};
