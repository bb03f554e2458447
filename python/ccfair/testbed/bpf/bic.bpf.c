// SPDX-License-Identifier: GPL-2.0
/*
 * BIC TCP as a BPF struct_ops congestion control: a function-by-function port of Linux 6.18
 * net/ipv4/tcp_bic.c (bictcp_reset, bictcp_init, bictcp_update, bictcp_cong_avoid,
 * bictcp_recalc_ssthresh, bictcp_state, bictcp_acked).
 * Algorithm: Xu, Harfoush, Rhee, "Binary Increase Congestion Control", INFOCOM 2004. Above
 * low_window, cwnd approaches the last maximum by binary search (a step of (W_max - cwnd)/4
 * per RTT, at most max_increment), then probes beyond it (slow start, then linear); a loss
 * sets cwnd to beta = 819/1024 of itself, with fast convergence; the ACK ratio (delayed
 * ACKs) scales the per-ACK step.
 *
 * Module parameters (CCF_PARAM, names and defaults of module_param()): fast_convergence,
 * max_increment, low_window, beta, initial_ssthresh, smooth_part.
 * Deviations forced by BPF: the parameters' int arithmetic in divisions is done unsigned
 * (they are positive; BPF has no signed division); tcp_slow_start(), tcp_cong_avoid_ai() and
 * tcp_reno_undo_cwnd() are the kernel's functions called as kfuncs (the module calls them).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

#define BICTCP_BETA_SCALE 1024 /* Scale factor beta calculation: max_cwnd = snd_cwnd * beta */
#define BICTCP_B 4             /* In binary search, go to point (max+min)/N */

CCF_PARAM(int, fast_convergence, 1);
CCF_PARAM(int, max_increment, 16);
CCF_PARAM(int, low_window, 14);
CCF_PARAM(int, beta, 819); /* = 819/1024 (BICTCP_BETA_SCALE) */
CCF_PARAM(int, initial_ssthresh, 0);
CCF_PARAM(int, smooth_part, 20);

/* BIC TCP Parameters (struct bictcp) */
struct ccf_bictcp {
	u32 cnt;           /* increase cwnd by 1 after ACKs */
	u32 last_max_cwnd; /* last maximum snd_cwnd */
	u32 last_cwnd;     /* the last snd_cwnd */
	u32 last_time;     /* time when updated last_cwnd */
	u32 epoch_start;   /* beginning of an epoch */
#define ACK_RATIO_SHIFT 4
	u32 delayed_ack; /* estimate the ratio of Packets/ACKs << 4 */
};

static __always_inline void bictcp_reset(struct ccf_bictcp *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->epoch_start = 0;
	ca->delayed_ack = 2 << ACK_RATIO_SHIFT;
}

SEC("struct_ops/bictcp_init")
void BPF_PROG(bictcp_init, struct sock *sk)
{
	struct ccf_bictcp *ca = inet_csk_ca(sk);

	bictcp_reset(ca);
	if (param_initial_ssthresh)
		tcp_sk(sk)->snd_ssthresh = param_initial_ssthresh;
}

/* Compute congestion window to use. */
static __always_inline void bictcp_update(struct ccf_bictcp *ca, u32 cwnd)
{
	u32 max_inc = (u32)param_max_increment, smooth = (u32)param_smooth_part;

	if (ca->last_cwnd == cwnd && (s32)(tcp_jiffies32 - ca->last_time) <= HZ / 32)
		return;

	ca->last_cwnd = cwnd;
	ca->last_time = tcp_jiffies32;

	if (ca->epoch_start == 0) /* record the beginning of an epoch */
		ca->epoch_start = tcp_jiffies32;

	/* start off normal */
	if (cwnd <= (u32)param_low_window) {
		ca->cnt = cwnd;
		return;
	}

	/* binary increase */
	if (cwnd < ca->last_max_cwnd) {
		u32 dist = (ca->last_max_cwnd - cwnd) / BICTCP_B;

		if (dist > max_inc)
			/* linear increase */
			ca->cnt = cwnd / max_inc;
		else if (dist <= 1U)
			/* binary search increase */
			ca->cnt = (cwnd * smooth) / BICTCP_B;
		else
			/* binary search increase */
			ca->cnt = cwnd / dist;
	} else {
		/* slow start AMD linear increase */
		if (cwnd < ca->last_max_cwnd + BICTCP_B)
			/* slow start */
			ca->cnt = (cwnd * smooth) / BICTCP_B;
		else if (cwnd < ca->last_max_cwnd + max_inc * (BICTCP_B - 1))
			/* slow start */
			ca->cnt = (cwnd * (BICTCP_B - 1)) / (cwnd - ca->last_max_cwnd);
		else
			/* linear increase */
			ca->cnt = cwnd / max_inc;
	}

	/* if in slow start or link utilization is very low */
	if (ca->last_max_cwnd == 0) {
		if (ca->cnt > 20) /* increase cwnd 5% per RTT */
			ca->cnt = 20;
	}

	ca->cnt = (ca->cnt << ACK_RATIO_SHIFT) / ca->delayed_ack;
	if (ca->cnt == 0) /* cannot be zero */
		ca->cnt = 1;
}

SEC("struct_ops/bictcp_cong_avoid")
void BPF_PROG(bictcp_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_bictcp *ca = inet_csk_ca(sk);

	if (!ccf_cong_avoid_open(sk, &acked))
		return;
	bictcp_update(ca, tcp_snd_cwnd(tp));
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

/* behave like Reno until low_window is reached, then increase congestion window slowly */
SEC("struct_ops/bictcp_recalc_ssthresh")
u32 BPF_PROG(bictcp_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_bictcp *ca = inet_csk_ca(sk);

	ca->epoch_start = 0; /* end of epoch */

	/* Wmax and fast convergence */
	if (tcp_snd_cwnd(tp) < ca->last_max_cwnd && param_fast_convergence)
		ca->last_max_cwnd = (tcp_snd_cwnd(tp) * (BICTCP_BETA_SCALE + (u32)param_beta)) / (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = tcp_snd_cwnd(tp);

	if (tcp_snd_cwnd(tp) <= (u32)param_low_window)
		return max(tcp_snd_cwnd(tp) >> 1U, 2U);
	else
		return max((tcp_snd_cwnd(tp) * (u32)param_beta) / BICTCP_BETA_SCALE, 2U);
}

SEC("struct_ops/bictcp_state")
void BPF_PROG(bictcp_state, struct sock *sk, u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		bictcp_reset(inet_csk_ca(sk));
}

/* Track delayed acknowledgment ratio using sliding window: ratio = (15*ratio + sample) / 16 */
SEC("struct_ops/bictcp_acked")
void BPF_PROG(bictcp_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);

	if (icsk->icsk_ca_state == TCP_CA_Open) {
		struct ccf_bictcp *ca = inet_csk_ca(sk);

		ca->delayed_ack += sample->pkts_acked - (ca->delayed_ack >> ACK_RATIO_SHIFT);
	}
}

CCF_RENO_UNDO_CWND(bictcp_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops bic_ops = {
	.init = (void *)bictcp_init,
	.ssthresh = (void *)bictcp_recalc_ssthresh,
	.cong_avoid = (void *)bictcp_cong_avoid,
	.set_state = (void *)bictcp_state,
	.undo_cwnd = (void *)bictcp_undo_cwnd,
	.pkts_acked = (void *)bictcp_acked,
	.name = CCF_NAME("bic"),
};
