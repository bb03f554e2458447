// SPDX-License-Identifier: GPL-2.0
/* TCP-Illinois as a BPF struct_ops congestion control: Linux 6.18
 * net/ipv4/tcp_illinois.c ported function by function (rtt_reset,
 * tcp_illinois_init, tcp_illinois_acked, max_delay, avg_delay, alpha, beta,
 * update_params, tcp_illinois_state, tcp_illinois_cong_avoid,
 * tcp_illinois_ssthresh; undo_cwnd is the kernel's tcp_reno_undo_cwnd).
 * Algorithm: Liu, Basar, Srikant, "TCP-Illinois: A loss- and delay-based
 * congestion control algorithm for high-speed networks", Perf. Eval. 2008.
 * Deviations forced by BPF: module parameters win_thresh and theta are
 * read-only global data set at load (CCF_PARAM); do_div becomes a 64-bit
 * unsigned division; no get_info.
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

#define ALPHA_SHIFT 7
#define ALPHA_SCALE (1u << ALPHA_SHIFT)
#define ALPHA_MIN ((3 * ALPHA_SCALE) / 10) /* ~0.3 */
#define ALPHA_MAX (10 * ALPHA_SCALE)       /* 10.0 */
#define ALPHA_BASE ALPHA_SCALE             /* 1.0 */
#define RTT_MAX (0xffffffffU / ALPHA_MAX)  /* 3.3 s */

#define BETA_SHIFT 6
#define BETA_SCALE (1u << BETA_SHIFT)
#define BETA_MIN (BETA_SCALE / 8) /* 0.125 */
#define BETA_MAX (BETA_SCALE / 2) /* 0.5 */
#define BETA_BASE BETA_MAX

/* module parameters */
CCF_PARAM(int, win_thresh, 15);
CCF_PARAM(int, theta, 5);

struct illinois {
	__u64 sum_rtt;   /* sum of RTTs within the last RTT */
	__u16 cnt_rtt;   /* RTT samples within the last RTT */
	__u32 base_rtt;  /* min of all RTTs, us */
	__u32 max_rtt;   /* max of all RTTs, us */
	__u32 end_seq;   /* right edge of the current RTT */
	__u32 alpha;     /* additive increase, 1/128 */
	__u32 beta;      /* multiplicative decrease, 1/64 */
	__u16 acked;     /* packets acked by the current ACK */
	__u8 rtt_above;  /* average RTT has gone above the threshold */
	__u8 rtt_low;    /* RTTs below the threshold */
};

static __always_inline void rtt_reset(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct illinois *ca = inet_csk_ca(sk);

	ca->end_seq = tp->snd_nxt;
	ca->cnt_rtt = 0;
	ca->sum_rtt = 0;
}

SEC("struct_ops")
void BPF_PROG(ccf_illinois_init, struct sock *sk)
{
	struct illinois *ca = inet_csk_ca(sk);

	ca->alpha = ALPHA_MAX;
	ca->beta = BETA_BASE;
	ca->base_rtt = 0x7fffffff;
	ca->max_rtt = 0;
	ca->acked = 0;
	ca->rtt_low = 0;
	ca->rtt_above = 0;
	rtt_reset(sk);
}

SEC("struct_ops")
void BPF_PROG(ccf_illinois_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct illinois *ca = inet_csk_ca(sk);
	__s32 rtt_us = sample->rtt_us;

	ca->acked = sample->pkts_acked;
	/* dup ACK, no RTT sample */
	if (rtt_us < 0)
		return;
	/* bogus values would wrap the alpha arithmetic */
	if (rtt_us > (__s32)RTT_MAX)
		rtt_us = RTT_MAX;
	if (ca->base_rtt > rtt_us)
		ca->base_rtt = rtt_us;
	if (ca->max_rtt < rtt_us)
		ca->max_rtt = rtt_us;
	++ca->cnt_rtt;
	ca->sum_rtt += rtt_us;
}

/* maximum queueing delay */
static __always_inline __u32 max_delay(const struct illinois *ca)
{
	return ca->max_rtt - ca->base_rtt;
}

/* average queueing delay */
static __always_inline __u32 avg_delay(const struct illinois *ca)
{
	__u64 t = ca->sum_rtt;

	t /= ca->cnt_rtt;
	return t - ca->base_rtt;
}

/* alpha: 10 at low delay, falling to 0.3 at the maximum delay */
static __always_inline __u32 alpha(struct illinois *ca, __u32 da, __u32 dm)
{
	__u32 d1 = dm / 100; /* low threshold */

	if (da <= d1) {
		if (!ca->rtt_above)
			return ALPHA_MAX;
		/* theta good RTTs before alpha returns to its maximum */
		if (++ca->rtt_low < param_theta)
			return ca->alpha;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		return ALPHA_MAX;
	}

	ca->rtt_above = 1;
	dm -= d1;
	da -= d1;
	return (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN);
}

/* beta: 1/8 below 10 % of the maximum delay, 1/2 above 80 %, linear between */
static __always_inline __u32 beta(__u32 da, __u32 dm)
{
	__u32 d2, d3;

	d2 = dm / 10;
	if (da <= d2)
		return BETA_MIN;
	d3 = (8 * dm) / 10;
	if (da >= d3 || d3 <= d2)
		return BETA_MAX;
	return (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2);
}

/* once per RTT */
static __always_inline void update_params(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct illinois *ca = inet_csk_ca(sk);

	if (tp->snd_cwnd < param_win_thresh) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
	} else if (ca->cnt_rtt > 0) {
		__u32 dm = max_delay(ca);
		__u32 da = avg_delay(ca);

		ca->alpha = alpha(ca, da, dm);
		ca->beta = beta(da, dm);
	}
	rtt_reset(sk);
}

SEC("struct_ops")
void BPF_PROG(ccf_illinois_state, struct sock *sk, __u8 new_state)
{
	struct illinois *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Loss) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		rtt_reset(sk);
	}
}

SEC("struct_ops")
void BPF_PROG(ccf_illinois_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct illinois *ca = inet_csk_ca(sk);

	if (after(ack, ca->end_seq))
		update_params(sk);

	/* RFC 2861: grow only when the window is used */
	if (!tcp_is_cwnd_limited(sk))
		return;

	if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	} else {
		__u32 delta;

		tp->snd_cwnd_cnt += ca->acked;
		ca->acked = 1;
		/* cwnd += alpha / cwnd */
		delta = (tp->snd_cwnd_cnt * ca->alpha) >> ALPHA_SHIFT;
		if (delta >= tp->snd_cwnd) {
			tp->snd_cwnd = min(tp->snd_cwnd + delta / tp->snd_cwnd, (__u32)tp->snd_cwnd_clamp);
			tp->snd_cwnd_cnt = 0;
		}
	}
}

SEC("struct_ops")
__u32 BPF_PROG(ccf_illinois_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct illinois *ca = inet_csk_ca(sk);
	__u32 decr;

	decr = (tp->snd_cwnd * ca->beta) >> BETA_SHIFT;
	return max(tp->snd_cwnd - decr, 2U);
}

CCF_RENO_UNDO_CWND(ccf_illinois_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops ccf_illinois = {
	.init = (void *)ccf_illinois_init,
	.ssthresh = (void *)ccf_illinois_ssthresh,
	.undo_cwnd = (void *)ccf_illinois_undo_cwnd,
	.cong_avoid = (void *)ccf_illinois_cong_avoid,
	.set_state = (void *)ccf_illinois_state,
	.pkts_acked = (void *)ccf_illinois_acked,
	.name = CCF_NAME("illinois"),
};
