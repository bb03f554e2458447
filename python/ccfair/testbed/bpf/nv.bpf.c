// SPDX-License-Identifier: GPL-2.0
/* TCP-NV as a BPF struct_ops congestion control: Linux 6.18
 * net/ipv4/tcp_nv.c ported function by function (tcpnv_reset, tcpnv_init,
 * nv_get_bounded_rtt, tcpnv_cong_avoid, tcpnv_recalc_ssthresh, tcpnv_state,
 * tcpnv_acked; undo_cwnd is the kernel's tcp_reno_undo_cwnd).
 * Algorithm (L. Brakmo, "TCP-NV: An Update to TCP-Vegas", 2016, and the
 * module's comments): once per RTT, with at least nv_*_eval_min_calls ACK
 * samples, the window the measured maximum rate needs at the minimum RTT
 * (cwnd_by_slope) plus nv_pad packets bounds cwnd: above it cwnd drops by
 * 30 % of the excess, below it (by nv_pad_buffer) cwnd may grow (Reno).
 * Deviations forced by BPF:
 *  - module parameters (nv_pad, nv_reset_period, nv_min_cwnd) are read-only
 *    global data set at load (CCF_PARAM); the module's other statics are
 *    constants;
 *  - get_random_bytes(&rand, 1) -> bpf_get_prandom_u32() & 0xff;
 *  - tcp_call_bpf(sk, BPF_SOCK_OPS_BASE_RTT) asks a sock_ops program for a
 *    base RTT; ccfair attaches none, so the answer is "none" (-1) as the
 *    module would get;
 *  - no get_info.
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

/* module parameters */
CCF_PARAM(int, nv_pad, 10);
CCF_PARAM(int, nv_reset_period, 5); /* s */
CCF_PARAM(int, nv_min_cwnd, 2);
/* the module's other statics (no module_param) */
static const int nv_pad_buffer = 2;
static const int nv_cong_dec_mult = 30 * 128 / 100; /* 30 % */
static const int nv_ssthresh_factor = 8;             /* = 1 */
static const int nv_rtt_factor = 128;                /* 1/2 old + 1/2 new */
static const int nv_loss_dec_factor = 819;           /* 80 % */
static const int nv_cwnd_growth_rate_neg = 8;
static const int nv_cwnd_growth_rate_pos = 0; /* 0: fixed, like Reno */
static const int nv_dec_eval_min_calls = 60;
static const int nv_inc_eval_min_calls = 20;
static const int nv_ssthresh_eval_min_calls = 30;
static const int nv_stop_rtt_cnt = 10;
static const int nv_rtt_min_cnt = 2;

/* include/linux/jiffies.h */
#define time_after_eq(a, b) ((long)((a) - (b)) >= 0)

struct tcpnv {
	unsigned long nv_min_rtt_reset_jiffies; /* when to switch to nv_min_rtt_new */
	__s8 cwnd_growth_factor;   /* < 0: less than 1 packet per RTT */
	__u8 available8;
	__u16 available16;
	__u8 nv_allow_cwnd_growth : 1, nv_reset : 1, nv_catchup : 1;
	__u8 nv_eval_call_cnt; /* calls since the last evaluation */
	__u8 nv_min_cwnd;      /* no CA decision below this cwnd */
	__u8 nv_rtt_cnt;       /* RTTs without a CA decision */
	__u32 nv_last_rtt;
	__u32 nv_min_rtt;      /* active min RTT */
	__u32 nv_min_rtt_new;  /* min RTT for future use */
	__u32 nv_base_rtt;     /* if non-zero: threshold for congestion */
	__u32 nv_lower_bound_rtt; /* 80 % of nv_base_rtt */
	__u32 nv_rtt_max_rate; /* max rate seen during the current RTT */
	__u32 nv_rtt_start_seq; /* the RTT ends when an ACK passes this */
	__u32 nv_last_snd_una;
	__u32 nv_no_cong_cnt;  /* consecutive no-congestion decisions */
};

#define NV_INIT_RTT 0xffffffffU
#define NV_MIN_CWND 4
#define NV_MIN_CWND_GROW 2
#define NV_TSO_CWND_BOUND 80

static __always_inline void tcpnv_reset(struct tcpnv *ca, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	ca->nv_reset = 0;
	ca->nv_no_cong_cnt = 0;
	ca->nv_rtt_cnt = 0;
	ca->nv_last_rtt = 0;
	ca->nv_rtt_max_rate = 0;
	ca->nv_rtt_start_seq = tp->snd_una;
	ca->nv_eval_call_cnt = 0;
	ca->nv_last_snd_una = tp->snd_una;
}

SEC("struct_ops")
void BPF_PROG(ccf_nv_init, struct sock *sk)
{
	struct tcpnv *ca = inet_csk_ca(sk);
	int base_rtt;

	tcpnv_reset(ca, sk);
	base_rtt = -1; /* tcp_call_bpf(sk, BPF_SOCK_OPS_BASE_RTT, 0, NULL): no sock_ops program */
	if (base_rtt > 0) {
		ca->nv_base_rtt = base_rtt;
		ca->nv_lower_bound_rtt = (base_rtt * 205) >> 8; /* 80 % */
	} else {
		ca->nv_base_rtt = 0;
		ca->nv_lower_bound_rtt = 0;
	}
	ca->nv_allow_cwnd_growth = 1;
	ca->nv_min_rtt_reset_jiffies = jiffies + 2 * HZ;
	ca->nv_min_rtt = NV_INIT_RTT;
	ca->nv_min_rtt_new = NV_INIT_RTT;
	ca->nv_min_cwnd = NV_MIN_CWND;
	ca->nv_catchup = 0;
	ca->cwnd_growth_factor = 0;
}

/* the optional upper (base_rtt) and lower (lower_bound_rtt) bounds */
static __always_inline __u32 nv_get_bounded_rtt(struct tcpnv *ca, __u32 val)
{
	if (ca->nv_lower_bound_rtt > 0 && val < ca->nv_lower_bound_rtt)
		return ca->nv_lower_bound_rtt;
	else if (ca->nv_base_rtt > 0 && val > ca->nv_base_rtt)
		return ca->nv_base_rtt;
	else
		return val;
}

SEC("struct_ops")
void BPF_PROG(ccf_nv_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct tcpnv *ca = inet_csk_ca(sk);
	__u32 cnt;

	if (!tcp_is_cwnd_limited(sk))
		return;
	/* grow only while NV has not detected congestion */
	if (!ca->nv_allow_cwnd_growth)
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	if (ca->cwnd_growth_factor < 0) {
		cnt = tp->snd_cwnd << (-ca->cwnd_growth_factor & 31);
		tcp_cong_avoid_ai(tp, cnt, acked);
	} else {
		cnt = max(4U, tp->snd_cwnd >> (ca->cwnd_growth_factor & 31));
		tcp_cong_avoid_ai(tp, cnt, acked);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(ccf_nv_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max((tp->snd_cwnd * nv_loss_dec_factor) >> 10, 2U);
}

SEC("struct_ops")
void BPF_PROG(ccf_nv_state, struct sock *sk, __u8 new_state)
{
	struct tcpnv *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Open && ca->nv_reset) {
		tcpnv_reset(ca, sk);
	} else if (new_state == TCP_CA_Loss || new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery) {
		ca->nv_reset = 1;
		ca->nv_allow_cwnd_growth = 0;
		if (new_state == TCP_CA_Loss) {
			/* back to the Reno growth rate */
			if (ca->cwnd_growth_factor > 0)
				ca->cwnd_growth_factor = 0;
			/* and lower it if allowed */
			if (nv_cwnd_growth_rate_neg > 0 && ca->cwnd_growth_factor > -8)
				ca->cwnd_growth_factor--;
		}
	}
}

/* the once-per-RTT decision of tcpnv_acked */
static __always_inline void tcpnv_decide(struct sock *sk, struct tcpnv *ca, __u32 bytes_acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 max_win, cwnd_by_slope;

	ca->nv_rtt_start_seq = tp->snd_nxt;
	if (ca->nv_rtt_cnt < 0xff)
		ca->nv_rtt_cnt++;

	/* one call per RTT: cwnd too small (TSO, LRO, coalescing): raise ca->nv_min_cwnd */
	if (ca->nv_eval_call_cnt == 1 && bytes_acked >= (ca->nv_min_cwnd - 1) * tp->mss_cache &&
	    ca->nv_min_cwnd < (NV_TSO_CWND_BOUND + 1)) {
		ca->nv_min_cwnd = min(ca->nv_min_cwnd + NV_MIN_CWND_GROW, NV_TSO_CWND_BOUND + 1);
		ca->nv_rtt_start_seq = tp->snd_nxt + ca->nv_min_cwnd * tp->mss_cache;
		ca->nv_eval_call_cnt = 0;
		ca->nv_allow_cwnd_growth = 1;
		return;
	}

	/* the window the maximum rate needs at the min RTT:
	 * slope = 80000.0 * mss / nv_min_rtt, cwnd_by_slope = nv_rtt_max_rate / slope */
	cwnd_by_slope = (__u32)(((__u64)ca->nv_rtt_max_rate * ca->nv_min_rtt) / (80000ULL * tp->mss_cache));
	max_win = cwnd_by_slope + param_nv_pad;

	if (tp->snd_cwnd > max_win) {
		/* congestion; enough data for a decision? */
		if (ca->nv_rtt_cnt < nv_rtt_min_cnt) {
			return;
		} else if (tp->snd_ssthresh == TCP_INFINITE_SSTHRESH) {
			if (ca->nv_eval_call_cnt < nv_ssthresh_eval_min_calls)
				return;
		} else if (ca->nv_eval_call_cnt < nv_dec_eval_min_calls) {
			if (ca->nv_allow_cwnd_growth && ca->nv_rtt_cnt > nv_stop_rtt_cnt)
				ca->nv_allow_cwnd_growth = 0;
			return;
		}
		ca->nv_allow_cwnd_growth = 0;
		tp->snd_ssthresh = (nv_ssthresh_factor * max_win) >> 3;
		if (tp->snd_cwnd - max_win > 2) {
			/* gap > 2: exponential decrease */
			int dec;

			dec = max(2U, ((tp->snd_cwnd - max_win) * nv_cong_dec_mult) >> 7);
			tp->snd_cwnd = tp->snd_cwnd - dec;
		} else if (nv_cong_dec_mult > 0) {
			tp->snd_cwnd = max_win;
		}
		if (ca->cwnd_growth_factor > 0)
			ca->cwnd_growth_factor = 0;
		ca->nv_no_cong_cnt = 0;
	} else if (tp->snd_cwnd <= max_win - nv_pad_buffer) {
		/* no congestion: grow if allowed */
		if (ca->nv_eval_call_cnt < nv_inc_eval_min_calls)
			return;
		ca->nv_allow_cwnd_growth = 1;
		ca->nv_no_cong_cnt++;
		if (ca->cwnd_growth_factor < 0 && nv_cwnd_growth_rate_neg > 0 &&
		    ca->nv_no_cong_cnt > nv_cwnd_growth_rate_neg) {
			ca->cwnd_growth_factor++;
			ca->nv_no_cong_cnt = 0;
		} else if (ca->cwnd_growth_factor >= 0 && nv_cwnd_growth_rate_pos > 0 &&
			   ca->nv_no_cong_cnt > nv_cwnd_growth_rate_pos) {
			ca->cwnd_growth_factor++;
			ca->nv_no_cong_cnt = 0;
		}
	} else {
		/* in between: nothing */
		return;
	}

	ca->nv_eval_call_cnt = 0;
	ca->nv_rtt_cnt = 0;
	ca->nv_rtt_max_rate = 0;
	/* NV itself must not take cwnd below nv_min_cwnd */
	if (tp->snd_cwnd < param_nv_min_cwnd)
		tp->snd_cwnd = param_nv_min_cwnd;
}

SEC("struct_ops")
void BPF_PROG(ccf_nv_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct tcpnv *ca = inet_csk_ca(sk);
	unsigned long now = jiffies;
	__u64 rate64;
	__u32 rate;
	__u32 avg_rtt;
	__u32 bytes_acked = 0;
	__u8 state = inet_csk_ca_state(sk);

	/* some calls are for duplicates without timestamps */
	if (sample->rtt_us < 0)
		return;
	/* only in Open and Disorder */
	if (state != TCP_CA_Open && state != TCP_CA_Disorder)
		return;

	/* stop growing if we were catching up */
	if (ca->nv_catchup && tp->snd_cwnd >= param_nv_min_cwnd) {
		ca->nv_catchup = 0;
		ca->nv_allow_cwnd_growth = 0;
	}

	bytes_acked = tp->snd_una - ca->nv_last_snd_una;
	ca->nv_last_snd_una = tp->snd_una;

	if (sample->in_flight == 0)
		return;

	/* moving average of the RTT */
	if (nv_rtt_factor > 0) {
		if (ca->nv_last_rtt > 0) {
			avg_rtt = (((__u64)sample->rtt_us) * nv_rtt_factor +
				   ((__u64)ca->nv_last_rtt) * (256 - nv_rtt_factor)) >> 8;
		} else {
			avg_rtt = sample->rtt_us;
			ca->nv_min_rtt = avg_rtt << 1;
		}
		ca->nv_last_rtt = avg_rtt;
	} else {
		avg_rtt = sample->rtt_us;
	}

	/* rate in 100s of bit/s */
	rate64 = ((__u64)sample->in_flight) * 80000;
	rate64 /= avg_rtt ? avg_rtt : 1;
	rate = (__u32)rate64;

	/* the maximum rate seen during this RTT */
	if (ca->nv_rtt_max_rate < rate)
		ca->nv_rtt_max_rate = rate;

	if (ca->nv_eval_call_cnt < 255)
		ca->nv_eval_call_cnt++;

	/* bounds apply to the min RTT only */
	avg_rtt = nv_get_bounded_rtt(ca, avg_rtt);
	if (avg_rtt < ca->nv_min_rtt)
		ca->nv_min_rtt = avg_rtt;
	if (avg_rtt < ca->nv_min_rtt_new)
		ca->nv_min_rtt_new = avg_rtt;

	/* every nv_reset_period x [3/4, 5/4) s, the min RTT starts anew */
	if (time_after_eq(now, ca->nv_min_rtt_reset_jiffies)) {
		__u32 rand = bpf_get_prandom_u32() & 0xff;

		ca->nv_min_rtt = ca->nv_min_rtt_new;
		ca->nv_min_rtt_new = NV_INIT_RTT;
		ca->nv_min_rtt_reset_jiffies = now + ((param_nv_reset_period * (384 + rand) * HZ) >> 9);
		/* now and then lower ca->nv_min_cwnd, in case it is no longer right */
		ca->nv_min_cwnd = max(ca->nv_min_cwnd / 2, NV_MIN_CWND);
	}

	/* once per RTT */
	if (before(ca->nv_rtt_start_seq, tp->snd_una))
		tcpnv_decide(sk, ca, bytes_acked);
}

CCF_RENO_UNDO_CWND(ccf_nv_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops ccf_nv = {
	.init = (void *)ccf_nv_init,
	.ssthresh = (void *)ccf_nv_recalc_ssthresh,
	.cong_avoid = (void *)ccf_nv_cong_avoid,
	.set_state = (void *)ccf_nv_state,
	.undo_cwnd = (void *)ccf_nv_undo_cwnd,
	.pkts_acked = (void *)ccf_nv_acked,
	.name = CCF_NAME("nv"),
};
