// SPDX-License-Identifier: GPL-2.0
/*
 * H-TCP as a BPF struct_ops congestion control: a function-by-function port of Linux 6.18
 * net/ipv4/tcp_htcp.c (htcp_cong_time, htcp_ccount, htcp_reset, htcp_cwnd_undo,
 * measure_rtt, measure_achieved_throughput, htcp_beta_update, htcp_alpha_update,
 * htcp_param_update, htcp_recalc_ssthresh, htcp_cong_avoid, htcp_init, htcp_state).
 * Algorithm: Leith & Shorten, "H-TCP", PFLDnet 2004. The increase alpha grows with the time
 * since the last congestion event (1 + 10 (t - 1 s) + ((t - 1 s)/2)^2 per RTT after the
 * first second), scaled by the RTT (use_rtt_scaling); the decrease beta = minRTT/maxRTT in
 * [0.5, 0.8], or 0.5 when the achieved throughput changed by more than 20 %
 * (use_bandwidth_switch).
 *
 * Module parameters (CCF_PARAM, names and defaults of module_param()): use_rtt_scaling,
 * use_bandwidth_switch.
 * Deviations forced by BPF: jiffies is bpf_jiffies64() (the same counter); the snd_cwnd_clamp
 * check reads the socket's clamp as Linux does; tcp_slow_start() and tcp_reno_undo_cwnd() are
 * the kernel's functions called as kfuncs (the module calls them).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

#define ALPHA_BASE (1 << 7) /* 1.0 with shift << 7 */
#define BETA_MIN (1 << 6)   /* 0.5 with shift << 7 */
#define BETA_MAX 102        /* 0.8 with shift << 7 */

CCF_PARAM(int, use_rtt_scaling, 1);
CCF_PARAM(int, use_bandwidth_switch, 1);

struct ccf_htcp {
	u32 alpha;     /* Fixed point arith, << 7 */
	u8 beta;       /* Fixed point arith, << 7 */
	u8 modeswitch; /* Delay modeswitch until we had at least one congestion event */
	u16 pkts_acked;
	u32 packetcount;
	u32 minRTT;
	u32 maxRTT;
	u32 last_cong; /* Time since last congestion event end */
	u32 undo_last_cong;

	u32 undo_maxRTT;
	u32 undo_old_maxB;

	/* Bandwidth estimation */
	u32 minB;
	u32 maxB;
	u32 old_maxB;
	u32 Bi;
	u32 lasttime;
};

static __always_inline u32 htcp_cong_time(const struct ccf_htcp *ca) { return (u32)jiffies - ca->last_cong; }

static __always_inline u32 htcp_ccount(const struct ccf_htcp *ca) { return htcp_cong_time(ca) / ca->minRTT; }

static __always_inline void htcp_reset(struct ccf_htcp *ca)
{
	ca->undo_last_cong = ca->last_cong;
	ca->undo_maxRTT = ca->maxRTT;
	ca->undo_old_maxB = ca->old_maxB;

	ca->last_cong = jiffies;
}

SEC("struct_ops/htcp_cwnd_undo")
u32 BPF_PROG(htcp_cwnd_undo, struct sock *sk)
{
	struct ccf_htcp *ca = inet_csk_ca(sk);

	if (ca->undo_last_cong) {
		ca->last_cong = ca->undo_last_cong;
		ca->maxRTT = ca->undo_maxRTT;
		ca->old_maxB = ca->undo_old_maxB;
		ca->undo_last_cong = 0;
	}
	return tcp_reno_undo_cwnd(sk);
}

static __always_inline void measure_rtt(struct sock *sk, u32 srtt)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);
	struct ccf_htcp *ca = inet_csk_ca(sk);

	/* keep track of minimum RTT seen so far, minRTT is zero at first */
	if (ca->minRTT > srtt || !ca->minRTT)
		ca->minRTT = srtt;

	/* max RTT */
	if (icsk->icsk_ca_state == TCP_CA_Open) {
		if (ca->maxRTT < ca->minRTT)
			ca->maxRTT = ca->minRTT;
		if (ca->maxRTT < srtt && srtt <= ca->maxRTT + msecs_to_jiffies(20))
			ca->maxRTT = srtt;
	}
}

SEC("struct_ops/measure_achieved_throughput")
void BPF_PROG(measure_achieved_throughput, struct sock *sk, const struct ack_sample *sample)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_htcp *ca = inet_csk_ca(sk);
	u32 now = tcp_jiffies32;
	u8 state = icsk->icsk_ca_state;

	if (state == TCP_CA_Open)
		ca->pkts_acked = sample->pkts_acked;

	if (sample->rtt_us > 0)
		measure_rtt(sk, usecs_to_jiffies(sample->rtt_us));

	if (!param_use_bandwidth_switch)
		return;

	/* achieved throughput calculations */
	if (!((1 << state) & (TCPF_CA_Open | TCPF_CA_Disorder))) {
		ca->packetcount = 0;
		ca->lasttime = now;
		return;
	}

	ca->packetcount += sample->pkts_acked;

	if (ca->packetcount >= tcp_snd_cwnd(tp) - (ca->alpha >> 7 ?: 1) && now - ca->lasttime >= ca->minRTT &&
	    ca->minRTT > 0) {
		u32 cur_Bi = ca->packetcount * HZ / (now - ca->lasttime);

		if (htcp_ccount(ca) <= 3) {
			/* just after backoff */
			ca->minB = ca->maxB = ca->Bi = cur_Bi;
		} else {
			ca->Bi = (3 * ca->Bi + cur_Bi) / 4;
			if (ca->Bi > ca->maxB)
				ca->maxB = ca->Bi;
			if (ca->minB > ca->maxB)
				ca->minB = ca->maxB;
		}
		ca->packetcount = 0;
		ca->lasttime = now;
	}
}

static __always_inline void htcp_beta_update(struct ccf_htcp *ca, u32 minRTT, u32 maxRTT)
{
	if (param_use_bandwidth_switch) {
		u32 maxB = ca->maxB;
		u32 old_maxB = ca->old_maxB;

		ca->old_maxB = ca->maxB;
		if (!between(5 * maxB, 4 * old_maxB, 6 * old_maxB)) {
			ca->beta = BETA_MIN;
			ca->modeswitch = 0;
			return;
		}
	}

	if (ca->modeswitch && minRTT > msecs_to_jiffies(10) && maxRTT) {
		ca->beta = (minRTT << 7) / maxRTT;
		if (ca->beta < BETA_MIN)
			ca->beta = BETA_MIN;
		else if (ca->beta > BETA_MAX)
			ca->beta = BETA_MAX;
	} else {
		ca->beta = BETA_MIN;
		ca->modeswitch = 1;
	}
}

static __always_inline void htcp_alpha_update(struct ccf_htcp *ca)
{
	u32 minRTT = ca->minRTT;
	u32 factor = 1;
	u32 diff = htcp_cong_time(ca);

	if (diff > HZ) {
		diff -= HZ;
		factor = 1 + (10 * diff + ((diff / 2) * (diff / 2) / HZ)) / HZ;
	}

	if (param_use_rtt_scaling && minRTT) {
		u32 scale = (HZ << 3) / (10 * minRTT);

		/* clamping ratio to interval [0.5,10]<<3 */
		scale = min(max(scale, 1U << 2), 10U << 3);
		factor = (factor << 3) / scale;
		if (!factor)
			factor = 1;
	}

	ca->alpha = 2 * factor * ((1 << 7) - ca->beta);
	if (!ca->alpha)
		ca->alpha = ALPHA_BASE;
}

/* After a congestion event: beta from the RTTs (and bandwidth switch), then alpha. */
static __always_inline void htcp_param_update(struct sock *sk)
{
	struct ccf_htcp *ca = inet_csk_ca(sk);
	u32 minRTT = ca->minRTT;
	u32 maxRTT = ca->maxRTT;

	htcp_beta_update(ca, minRTT, maxRTT);
	htcp_alpha_update(ca);

	/* add slowly fading memory for maxRTT to accommodate routing changes */
	if (minRTT > 0 && maxRTT > minRTT)
		ca->maxRTT = minRTT + ((maxRTT - minRTT) * 95) / 100;
}

SEC("struct_ops/htcp_recalc_ssthresh")
u32 BPF_PROG(htcp_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct ccf_htcp *ca = inet_csk_ca(sk);

	htcp_param_update(sk);
	return max((tcp_snd_cwnd(tp) * ca->beta) >> 7, 2U);
}

SEC("struct_ops/htcp_cong_avoid")
void BPF_PROG(htcp_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_htcp *ca = inet_csk_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;

	if (tcp_in_slow_start(tp))
		tcp_slow_start(tp, acked);
	else {
		/* In dangerous area, increase slowly.
		 * In theory this is tp->snd_cwnd += alpha / tp->snd_cwnd
		 */
		if ((tp->snd_cwnd_cnt * ca->alpha) >> 7 >= tcp_snd_cwnd(tp)) {
			if (tcp_snd_cwnd(tp) < tp->snd_cwnd_clamp)
				tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + 1);
			tp->snd_cwnd_cnt = 0;
			htcp_alpha_update(ca);
		} else
			tp->snd_cwnd_cnt += ca->pkts_acked;

		ca->pkts_acked = 1;
	}
}

SEC("struct_ops/htcp_init")
void BPF_PROG(htcp_init, struct sock *sk)
{
	struct ccf_htcp *ca = inet_csk_ca(sk);

	__builtin_memset(ca, 0, sizeof(struct ccf_htcp));
	ca->alpha = ALPHA_BASE;
	ca->beta = BETA_MIN;
	ca->pkts_acked = 1;
	ca->last_cong = jiffies;
}

SEC("struct_ops/htcp_state")
void BPF_PROG(htcp_state, struct sock *sk, u8 new_state)
{
	switch (new_state) {
	case TCP_CA_Open: {
		struct ccf_htcp *ca = inet_csk_ca(sk);

		if (ca->undo_last_cong) {
			ca->last_cong = jiffies;
			ca->undo_last_cong = 0;
		}
	} break;
	case TCP_CA_CWR:
	case TCP_CA_Recovery:
	case TCP_CA_Loss:
		htcp_reset(inet_csk_ca(sk));
		break;
	}
}

SEC(".struct_ops")
struct tcp_congestion_ops htcp_ops = {
	.init = (void *)htcp_init,
	.ssthresh = (void *)htcp_recalc_ssthresh,
	.cong_avoid = (void *)htcp_cong_avoid,
	.set_state = (void *)htcp_state,
	.undo_cwnd = (void *)htcp_cwnd_undo,
	.pkts_acked = (void *)measure_achieved_throughput,
	.name = CCF_NAME("htcp"),
};
