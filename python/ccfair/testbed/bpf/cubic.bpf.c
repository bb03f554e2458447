// SPDX-License-Identifier: GPL-2.0
/*
 * CUBIC with HyStart as a BPF struct_ops congestion control: the BPF twin of Linux's built-in
 * "cubic", a function-by-function port of net/ipv4/tcp_cubic.c as of Linux 6.18 (the module
 * as it stands since the 6.x kfunc set; checked against the tree at commit 617e407cef5b):
 * bictcp_reset, bictcp_clock_us, bictcp_hystart_reset, cubictcp_init, cubictcp_cwnd_event,
 * cubic_root, bictcp_update, cubictcp_cong_avoid, cubictcp_recalc_ssthresh, cubictcp_state,
 * hystart_ack_delay, hystart_update, cubictcp_acked, and cubictcp_register's precomputed
 * scale factors, with HyStart's rounds tracked at every cwnd and its detectors acting from
 * hystart_low_window on (commit 25c1a9ca53db, Linux 6.14, in the 5.15+ stable trees).
 * Algorithm: Ha, Rhee, Xu, "CUBIC", OSR 2008 (RFC 9438); HyStart: Ha & Rhee 2011.
 * W(t) = C (t - K)^3 + W_max in fixed point (BICTCP_HZ = 2^10 per second, C = bic_scale/1024 * 10
 * per 100 ms of srtt), beta = 717/1024, fast convergence, the Reno-friendly region
 * (tcp_friendliness), HyStart's ACK-train and delay exits.
 *
 * Module parameters (CCF_PARAM; the same names and defaults as module_param()): beta,
 * bic_scale, fast_convergence, tcp_friendliness, hystart, hystart_detect,
 * hystart_low_window, hystart_ack_delta_us, initial_ssthresh. cubictcp_register's scale
 * factors (beta_scale, cube_rtt_scale, cube_factor) are computed from them where used (the
 * verifier folds them: the parameters are read-only data).
 *
 * Deviations forced by BPF:
 *  - the Reno-emulation loop "while (ack_cnt > delta) { ack_cnt -= delta; tcp_cwnd++; }" is
 *    the equal closed form n = (ack_cnt - 1) / delta (no unbounded loops);
 *  - cubic_root's table index is masked with 63 (the verifier's bound; the index is < 64);
 *  - the LINUX_MIB_TCPHYSTART* counters are not incremented (no access to the MIBs);
 *  - tcp_slow_start(), tcp_cong_avoid_ai(), tcp_reno_undo_cwnd() are the kernel's functions,
 *    called as kfuncs (the module calls the same exported functions).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

#define BICTCP_BETA_SCALE 1024 /* Scale factor beta calculation: max_cwnd = snd_cwnd * beta */
#define BICTCP_HZ 10           /* BIC HZ 2^10 = 1024 */

/* Two methods of hybrid slow start */
#define HYSTART_ACK_TRAIN 0x1
#define HYSTART_DELAY 0x2

/* Number of delay samples for detecting the increase of delay */
#define HYSTART_MIN_SAMPLES 8
#define HYSTART_DELAY_MIN (4000U)  /* 4 ms */
#define HYSTART_DELAY_MAX (16000U) /* 16 ms */
#define HYSTART_DELAY_THRESH(x) clamp(x, HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)

CCF_PARAM(int, fast_convergence, 1);
CCF_PARAM(int, beta, 717); /* = 717/1024 (BICTCP_BETA_SCALE) */
CCF_PARAM(int, initial_ssthresh, 0);
CCF_PARAM(int, bic_scale, 41);
CCF_PARAM(int, tcp_friendliness, 1);
CCF_PARAM(int, hystart, 1);
CCF_PARAM(int, hystart_detect, 3); /* HYSTART_ACK_TRAIN | HYSTART_DELAY */
CCF_PARAM(int, hystart_low_window, 16);
CCF_PARAM(int, hystart_ack_delta_us, 2000);

/* cubictcp_register(): scaling factors precomputed from the parameters (srtt of 100 ms) */
/* (the parameters are positive: their int arithmetic is done unsigned, BPF has no signed division) */
#define beta_scale ((u32)(8 * (BICTCP_BETA_SCALE + (u32)param_beta)) / 3 / (BICTCP_BETA_SCALE - (u32)param_beta))
#define cube_rtt_scale ((u32)param_bic_scale * 10) /* 1024*c/rtt */
/* 1/c * 2^2*bictcp_HZ * srtt, divided by bic_scale and by the constant srtt (100 ms) */
#define cube_factor ((u64)(1ull << (10 + 3 * BICTCP_HZ)) / (u64)((u32)param_bic_scale * 10))

/* BIC TCP Parameters (struct ccf_bictcp) */
struct ccf_bictcp {
	u32 cnt;              /* increase cwnd by 1 after ACKs */
	u32 last_max_cwnd;    /* last maximum snd_cwnd */
	u32 last_cwnd;        /* the last snd_cwnd */
	u32 last_time;        /* time when updated last_cwnd */
	u32 bic_origin_point; /* origin point of bic function */
	u32 bic_K;            /* time to origin point from the beginning of the current epoch */
	u32 delay_min;        /* min delay (usec) */
	u32 epoch_start;      /* beginning of an epoch */
	u32 ack_cnt;          /* number of acks */
	u32 tcp_cwnd;         /* estimated tcp cwnd */
	u16 unused;
	u8 sample_cnt; /* number of samples to decide curr_rtt */
	u8 found;      /* the exit point is found? */
	u32 round_start; /* beginning of each round */
	u32 end_seq;     /* end_seq of the round */
	u32 last_ack;    /* last time when the ACK spacing is close */
	u32 curr_rtt;    /* the minimum rtt of current round */
};

/* memset(ca, 0, offsetof(struct ccf_bictcp, unused)); ca->found = 0; */
static __always_inline void bictcp_reset(struct ccf_bictcp *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->bic_origin_point = 0;
	ca->bic_K = 0;
	ca->delay_min = 0;
	ca->epoch_start = 0;
	ca->ack_cnt = 0;
	ca->tcp_cwnd = 0;
	ca->found = 0;
}

static __always_inline u32 bictcp_clock_us(const struct sock *sk) { return (u32)tcp_sk(sk)->tcp_mstamp; }

static __always_inline void bictcp_hystart_reset(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_bictcp *ca = inet_csk_ca(sk);

	ca->round_start = ca->last_ack = bictcp_clock_us(sk);
	ca->end_seq = tp->snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

SEC("struct_ops/cubictcp_init")
void BPF_PROG(cubictcp_init, struct sock *sk)
{
	struct ccf_bictcp *ca = inet_csk_ca(sk);

	bictcp_reset(ca);
	if (param_hystart)
		bictcp_hystart_reset(sk);
	if (!param_hystart && param_initial_ssthresh)
		tcp_sk(sk)->snd_ssthresh = param_initial_ssthresh;
}

SEC("struct_ops/cubictcp_cwnd_event")
void BPF_PROG(cubictcp_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_TX_START) {
		struct ccf_bictcp *ca = inet_csk_ca(sk);
		u32 now = tcp_jiffies32;
		s32 delta;

		delta = now - tcp_sk(sk)->lsndtime;
		/* We were application limited (idle) for a while.
		 * Shift epoch_start to keep cwnd growth to cubic curve.
		 */
		if (ca->epoch_start && delta > 0) {
			ca->epoch_start += delta;
			if (after(ca->epoch_start, now))
				ca->epoch_start = now;
		}
		return;
	}
}

/*
 * cbrt(x) MSB values for x MSB values in [0..63] (Linux's table, Willy Tarreau):
 * v = cbrt(x << 18) - 1, cbrt(x) = (v[x] + 10) >> 6.
 */
static const u8 cbrt_v[] = {
	/* 0x00 */ 0,   54,  54,  54,  118, 118, 118, 118,
	/* 0x08 */ 123, 129, 134, 138, 143, 147, 151, 156,
	/* 0x10 */ 157, 161, 164, 168, 170, 173, 176, 179,
	/* 0x18 */ 181, 185, 187, 190, 192, 194, 197, 199,
	/* 0x20 */ 200, 202, 204, 206, 209, 211, 213, 215,
	/* 0x28 */ 217, 219, 221, 222, 224, 225, 227, 229,
	/* 0x30 */ 231, 232, 234, 236, 237, 239, 240, 242,
	/* 0x38 */ 244, 245, 246, 248, 250, 251, 252, 254,
};

/* cube root by table lookup and one Newton-Raphson iteration (avg err ~0.195 %) */
static __always_inline u32 cubic_root(u64 a)
{
	u32 x, b, shift;

	b = fls64(a);
	if (b < 7) {
		/* a in [0..63] */
		return ((u32)cbrt_v[(u32)a & 63] + 35) >> 6;
	}
	b = ((b * 84) >> 8) - 1;
	shift = (a >> (b * 3));
	x = ((u32)(((u32)cbrt_v[shift & 63] + 10) << b)) >> 6;
	/* Newton-Raphson: x_{k+1} = (2 x_k + a / x_k^2) / 3 */
	x = (2 * x + (u32)div64_u64(a, (u64)x * (u64)(x - 1)));
	x = ((x * 341) >> 10);
	return x;
}

/* Compute congestion window to use. */
static __always_inline void bictcp_update(struct ccf_bictcp *ca, u32 cwnd, u32 acked)
{
	u32 delta, bic_target, max_cnt;
	u64 offs, t;

	ca->ack_cnt += acked; /* count the number of ACKed packets */

	if (ca->last_cwnd == cwnd && (s32)(tcp_jiffies32 - ca->last_time) <= HZ / 32)
		return;

	/* The CUBIC function can update ca->cnt at most once per jiffy.
	 * On all cwnd reduction events, ca->epoch_start is set to 0,
	 * which will force a recalculation of ca->cnt.
	 */
	if (ca->epoch_start && tcp_jiffies32 == ca->last_time)
		goto tcp_friendliness;

	ca->last_cwnd = cwnd;
	ca->last_time = tcp_jiffies32;

	if (ca->epoch_start == 0) {
		ca->epoch_start = tcp_jiffies32; /* record beginning */
		ca->ack_cnt = acked;             /* start counting */
		ca->tcp_cwnd = cwnd;             /* syn with cubic */

		if (ca->last_max_cwnd <= cwnd) {
			ca->bic_K = 0;
			ca->bic_origin_point = cwnd;
		} else {
			/* Compute new K based on
			 * (wmax-cwnd) * (srtt>>3 / HZ) / c * 2^(3*bictcp_HZ)
			 */
			ca->bic_K = cubic_root(cube_factor * (ca->last_max_cwnd - cwnd));
			ca->bic_origin_point = ca->last_max_cwnd;
		}
	}

	/* cubic function - calc: c * time^3 / rtt, time = (t - K) / 2^bictcp_HZ */
	t = (s32)(tcp_jiffies32 - ca->epoch_start);
	t += usecs_to_jiffies(ca->delay_min);
	/* change the unit from HZ to bictcp_HZ */
	t <<= BICTCP_HZ;
	t /= HZ;

	if (t < ca->bic_K) /* t - K */
		offs = ca->bic_K - t;
	else
		offs = t - ca->bic_K;

	/* c/rtt * (t-K)^3 */
	delta = (cube_rtt_scale * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
	if (t < ca->bic_K) /* below origin*/
		bic_target = ca->bic_origin_point - delta;
	else /* above origin*/
		bic_target = ca->bic_origin_point + delta;

	/* cubic function - calc bictcp_cnt*/
	if (bic_target > cwnd)
		ca->cnt = cwnd / (bic_target - cwnd);
	else
		ca->cnt = 100 * cwnd; /* very small increment*/

	/* The initial growth of cubic function may be too conservative
	 * when the available bandwidth is still unknown.
	 */
	if (ca->last_max_cwnd == 0 && ca->cnt > 20)
		ca->cnt = 20; /* increase cwnd 5% per RTT */

tcp_friendliness:
	/* TCP Friendly */
	if (param_tcp_friendliness) {
		u32 scale = beta_scale;

		delta = (cwnd * scale) >> 3;
		/* Linux: while (ca->ack_cnt > delta) { ca->ack_cnt -= delta; ca->tcp_cwnd++; } */
		if (delta && ca->ack_cnt > delta) {
			u32 n = (ca->ack_cnt - 1) / delta;

			ca->ack_cnt -= n * delta;
			ca->tcp_cwnd += n;
		}
		if (ca->tcp_cwnd > cwnd) { /* if bic is slower than tcp */
			delta = ca->tcp_cwnd - cwnd;
			max_cnt = cwnd / delta;
			if (ca->cnt > max_cnt)
				ca->cnt = max_cnt;
		}
	}

	/* The maximum rate of cwnd increase CUBIC allows is 1 packet per
	 * 2 packets ACKed, meaning cwnd grows at 1.5x per RTT.
	 */
	ca->cnt = max(ca->cnt, 2U);
}

SEC("struct_ops/cubictcp_cong_avoid")
void BPF_PROG(cubictcp_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_bictcp *ca = inet_csk_ca(sk);

	if (!ccf_cong_avoid_open(sk, &acked))
		return;
	bictcp_update(ca, tcp_snd_cwnd(tp), acked);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

SEC("struct_ops/cubictcp_recalc_ssthresh")
u32 BPF_PROG(cubictcp_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_bictcp *ca = inet_csk_ca(sk);

	ca->epoch_start = 0; /* end of epoch */

	/* Wmax and fast convergence */
	if (tcp_snd_cwnd(tp) < ca->last_max_cwnd && param_fast_convergence)
		ca->last_max_cwnd = (tcp_snd_cwnd(tp) * (BICTCP_BETA_SCALE + (u32)param_beta)) / (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = tcp_snd_cwnd(tp);

	return max((tcp_snd_cwnd(tp) * (u32)param_beta) / BICTCP_BETA_SCALE, 2U);
}

SEC("struct_ops/cubictcp_state")
void BPF_PROG(cubictcp_state, struct sock *sk, u8 new_state)
{
	if (new_state == TCP_CA_Loss) {
		bictcp_reset(inet_csk_ca(sk));
		bictcp_hystart_reset(sk);
	}
}

/* Account for TSO/GRO delays (the cushion, capped at 1 ms; @rate is doubled at this point). */
static __always_inline u32 hystart_ack_delay(const struct sock *sk)
{
	unsigned long rate;

	rate = sk->sk_pacing_rate;
	if (!rate)
		return 0;
	return min_t(u64, USEC_PER_MSEC, div64_u64((u64)sk->sk_gso_max_size * 4 * USEC_PER_SEC, rate));
}

static __always_inline void hystart_update(struct sock *sk, u32 delay)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_bictcp *ca = inet_csk_ca(sk);
	u32 threshold;

	if (after(tp->snd_una, ca->end_seq))
		bictcp_hystart_reset(sk);

	/* rounds are tracked at every cwnd; the detectors act from hystart_low_window on */
	if (tcp_snd_cwnd(tp) < (u32)param_hystart_low_window)
		return;

	if (param_hystart_detect & HYSTART_ACK_TRAIN) {
		u32 now = bictcp_clock_us(sk);

		/* first detection parameter - ack-train detection */
		if ((s32)(now - ca->last_ack) <= param_hystart_ack_delta_us) {
			ca->last_ack = now;

			threshold = ca->delay_min + hystart_ack_delay(sk);

			/* Hystart ack train triggers if we get ack past
			 * ca->delay_min/2.
			 * Pacing might have delayed packets up to RTT/2
			 * during slow start.
			 */
			if (sk->sk_pacing_status == SK_PACING_NONE)
				threshold >>= 1;

			if ((s32)(now - ca->round_start) > threshold) {
				ca->found = 1;
				tp->snd_ssthresh = tcp_snd_cwnd(tp);
			}
		}
	}

	if (param_hystart_detect & HYSTART_DELAY) {
		/* obtain the minimum delay of more than sampling packets */
		if (ca->curr_rtt > delay)
			ca->curr_rtt = delay;
		if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
			ca->sample_cnt++;
		} else {
			if (ca->curr_rtt > ca->delay_min + HYSTART_DELAY_THRESH(ca->delay_min >> 3)) {
				ca->found = 1;
				tp->snd_ssthresh = tcp_snd_cwnd(tp);
			}
		}
	}
}

SEC("struct_ops/cubictcp_acked")
void BPF_PROG(cubictcp_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_bictcp *ca = inet_csk_ca(sk);
	u32 delay;

	/* Some calls are for duplicates without timetamps */
	if (sample->rtt_us < 0)
		return;

	/* Discard delay samples right after fast recovery */
	if (ca->epoch_start && (s32)(tcp_jiffies32 - ca->epoch_start) < HZ)
		return;

	delay = sample->rtt_us;
	if (delay == 0)
		delay = 1;

	/* first time call or link delay decreases */
	if (ca->delay_min == 0 || ca->delay_min > delay)
		ca->delay_min = delay;

	/* hystart triggers when cwnd is larger than some threshold */
	if (!ca->found && tcp_in_slow_start(tp) && param_hystart)
		hystart_update(sk, delay);
}

CCF_RENO_UNDO_CWND(cubictcp_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops cubic_ops = {
	.init = (void *)cubictcp_init,
	.ssthresh = (void *)cubictcp_recalc_ssthresh,
	.cong_avoid = (void *)cubictcp_cong_avoid,
	.set_state = (void *)cubictcp_state,
	.undo_cwnd = (void *)cubictcp_undo_cwnd,
	.cwnd_event = (void *)cubictcp_cwnd_event,
	.pkts_acked = (void *)cubictcp_acked,
	.name = CCF_NAME("cubic"),
};
