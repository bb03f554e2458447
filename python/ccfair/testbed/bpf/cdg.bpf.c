// SPDX-License-Identifier: GPL-2.0
/* CAIA Delay-Gradient (CDG) as a BPF struct_ops congestion control:
 * Linux 6.18 net/ipv4/tcp_cdg.c ported function by function (nexp_u32,
 * tcp_cdg_hystart_update, tcp_cdg_grad, tcp_cdg_backoff,
 * tcp_cdg_cong_avoid, tcp_cdg_acked, tcp_cdg_ssthresh, tcp_cdg_cwnd_event,
 * tcp_cdg_init, tcp_cdg_release; undo_cwnd is the kernel's
 * tcp_reno_undo_cwnd).
 * Algorithm: D. A. Hayes, G. Armitage, "Revisiting TCP congestion control
 * using delay gradients", IFIP Networking 2011: per RTT the change of the
 * minimum and maximum RTT (gradients, summed over `window` RTTs); a positive
 * gradient backs off with probability 1 - exp(-grad * backoff_factor / 1e6
 * us), cwnd x 0.7071; a shadow window keeps the loss response of a
 * competing loss-based flow; Reno growth otherwise.
 * Deviations forced by BPF:
 *  - module parameters are read-only global data set at load (CCF_PARAM;
 *    window a power of two <= 256 is checked where ccfair validates the
 *    parameters, as the module's init checks it);
 *  - the gradient ring (kcalloc'ed in tcp_cdg_init, freed in release) is a
 *    socket-local storage map entry (created in init, freed with the
 *    socket); if it cannot be created the port runs as the module does when
 *    kcalloc fails (window 1 extrapolation);
 *  - get_random_u32 -> bpf_get_prandom_u32; the HyStart MIB counters are
 *    not counted;
 *  - tcp_enter_cwr() is not callable from struct_ops and icsk_ca_state is
 *    not writable: the backoff's CWR is emulated in the socket's Open state.
 *    Entering: ssthresh = tcp_cdg_ssthresh(), snd_cwnd_cnt = 0, the CWR end
 *    sequence (high_seq) = snd_nxt, prior_cwnd = cwnd. During it each ACK
 *    runs tcp_cwnd_reduction's proportional rate reduction (prr_out counted
 *    from tp->data_segs_out) instead of the rest of cong_avoid, as Linux
 *    does not call cong_avoid in CWR. An ACK beyond high_seq ends it as
 *    tcp_end_cwnd_reduction does (cwnd = ssthresh, then
 *    CA_EVENT_COMPLETE_CWR's actions) and goes on to cong_avoid. A loss or
 *    RTO during it hands over to the kernel's recovery; ssthresh then
 *    returns the current one, as tcp_enter_recovery keeps an ongoing
 *    reduction's ssthresh.
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

#define HYSTART_ACK_TRAIN 1
#define HYSTART_DELAY 2
#define U32_MAX 0xffffffffU
#define U16_MAX 0xffffU
#define CDG_WINDOW_MAX 256

/* module parameters */
CCF_PARAM(int, window, 8);
CCF_PARAM(u32, backoff_beta, 724); /* 0.7071 * 1024: sqrt 0.5 */
CCF_PARAM(u32, backoff_factor, 42);
CCF_PARAM(u32, hystart_detect, 3);
CCF_PARAM(u32, use_ineff, 5);
CCF_PARAM(bool, use_shadow, 1);
CCF_PARAM(bool, use_tolerance, 0);

struct cdg_minmax { /* tcp_cdg.c's struct minmax (the name is taken in vmlinux.h) */
	union {
		struct {
			__s32 min;
			__s32 max;
		};
		__u64 v64;
	};
};

enum cdg_state {
	CDG_UNKNOWN = 0,
	CDG_NONFULL = 1,
	CDG_FULL = 2,
	CDG_BACKOFF = 3,
};

struct cdg {
	struct cdg_minmax rtt;
	struct cdg_minmax rtt_prev;
	struct cdg_minmax gsum;
	bool gfilled;
	__u8 tail;
	__u8 state;
	__u8 delack;
	__u32 rtt_seq;
	__u32 shadow_wnd;
	__u16 backoff_cnt;
	__u16 sample_cnt;
	__s32 delay_min;
	__u32 last_ack;
	__u32 round_start;
	/* the module's gradients pointer: is there a ring in cdg_gradients */
	__u8 has_gradients;
	/* the emulated CWR (see the header) */
	__u8 cwr;
	__u32 cwr_high_seq;
	__u32 cwr_prior_cwnd;
	__u32 cwr_prr_delivered;
	__u32 cwr_segs_out;
};

struct cdg_ring {
	struct cdg_minmax g[CDG_WINDOW_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cdg_ring);
} cdg_gradients SEC(".maps");

/* exp(-x) * 65536 - 1 for x = 0, 0.000256, 0.000512, ... */
static const __u16 nexp_v[17] = {
	65535, 65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422,
	61378, 57484, 50423, 38795, 22965, 8047,  987,   14,
};

/* exp(ux * -1e-6) * U32_MAX, ux in micro */
static __always_inline __u32 nexp_u32(__u32 ux)
{
	__u32 msb = ux >> 8;
	__u32 res;
	int i;

	/* cut off when ux >= 2^24 (the result is <= 222/U32_MAX) */
	if (msb > U16_MAX)
		return 0;
	/* the first eight bits linearly */
	res = U32_MAX - (ux & 0xff) * (U32_MAX / 1000000);
	/* e^(x + y + ...) = e^x * e^y * ... */
	for (i = 1; i <= 16 && msb; i++, msb >>= 1) {
		__u32 y = nexp_v[(msb & 1) ? i : 0] + 1U;

		res = ((__u64)res * y) >> 16;
	}
	return res;
}

/* HyStart as in tcp_cubic, with Hayes's delayed-ACK filter, a us clock,
 * at any cwnd, only when cwnd < ssthresh */
static __always_inline void tcp_cdg_hystart_update(struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->delay_min = min_not_zero(ca->delay_min, ca->rtt.min);
	if (ca->delay_min == 0)
		return;

	if (param_hystart_detect & HYSTART_ACK_TRAIN) {
		__u32 now_us = tp->tcp_mstamp;

		if (ca->last_ack == 0 || !tcp_is_cwnd_limited(sk)) {
			ca->last_ack = now_us;
			ca->round_start = now_us;
		} else if (before(now_us, ca->last_ack + 3000)) {
			__u32 base_owd = max(ca->delay_min / 2U, 125U);

			ca->last_ack = now_us;
			if (after(now_us, ca->round_start + base_owd)) {
				tp->snd_ssthresh = tp->snd_cwnd;
				return;
			}
		}
	}

	if (param_hystart_detect & HYSTART_DELAY) {
		if (ca->sample_cnt < 8) {
			ca->sample_cnt++;
		} else {
			__s32 thresh = max(ca->delay_min + ca->delay_min / 8U, 125U);

			if (ca->rtt.min > thresh)
				tp->snd_ssthresh = tp->snd_cwnd;
		}
	}
}

/* DIV_ROUND_CLOSEST of a signed value by 64 */
static __always_inline __s32 div_round_closest_64(__s32 x)
{
	return sdiv32(x > 0 ? x + 32 : x - 32, 64);
}

static __always_inline __s32 tcp_cdg_grad(struct sock *sk, struct cdg *ca)
{
	__s32 gmin = ca->rtt.min - ca->rtt_prev.min;
	__s32 gmax = ca->rtt.max - ca->rtt_prev.max;
	__s32 grad;
	struct cdg_ring *ring = 0;

	if (ca->has_gradients)
		ring = bpf_sk_storage_get(&cdg_gradients, sk, 0, 0);
	if (ring) {
		__u32 t = ca->tail & (CDG_WINDOW_MAX - 1);

		ca->gsum.min += gmin - ring->g[t].min;
		ca->gsum.max += gmax - ring->g[t].max;
		ring->g[t].min = gmin;
		ring->g[t].max = gmax;
		ca->tail = (ca->tail + 1) & (param_window - 1);
		gmin = ca->gsum.min;
		gmax = ca->gsum.max;
	}

	/* sums, so that gradients during cwnd reductions are ignored; the
	 * paper's smoothed gradient without the division by window */
	grad = gmin > 0 ? gmin : gmax;

	/* extrapolate the missing values of a window not yet full */
	if (!ca->gfilled) {
		if (!ring && param_window > 1)
			grad *= param_window; /* no ring */
		else if (ca->tail == 0)
			ca->gfilled = true;
		else
			grad = sdiv32(grad * param_window, (int)ca->tail);
	}

	/* the backoff was effectual */
	if (gmin <= -32 || gmax <= -32)
		ca->backoff_cnt = 0;

	if (param_use_tolerance) {
		/* small variations to zero */
		gmin = div_round_closest_64(gmin);
		gmax = div_round_closest_64(gmax);
		if (gmin > 0 && gmax <= 0)
			ca->state = CDG_FULL;
		else if ((gmin > 0 && gmax > 0) || gmax < 0)
			ca->state = CDG_NONFULL;
	}
	return grad;
}

static __always_inline __u32 cdg_ssthresh(struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (ca->state == CDG_BACKOFF)
		return max(2U, (tp->snd_cwnd * min(1024U, param_backoff_beta)) >> 10);

	if (ca->state == CDG_NONFULL && param_use_tolerance)
		return tp->snd_cwnd;

	ca->shadow_wnd = min(ca->shadow_wnd >> 1, tp->snd_cwnd);
	if (param_use_shadow)
		return max(max(2U, ca->shadow_wnd), tp->snd_cwnd >> 1);
	return max(2U, tp->snd_cwnd >> 1);
}

/* tcp_enter_cwr -> tcp_init_cwnd_reduction, emulated (see the header) */
static __always_inline void cdg_enter_cwr(struct sock *sk, struct cdg *ca)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u8 state = inet_csk_ca_state(sk);

	if (state >= TCP_CA_CWR || ca->cwr)
		return;
	ca->cwr = 1;
	ca->cwr_high_seq = tp->snd_nxt;
	tp->snd_cwnd_cnt = 0;
	ca->cwr_prior_cwnd = tp->snd_cwnd;
	ca->cwr_prr_delivered = 0;
	ca->cwr_segs_out = tp->data_segs_out;
	tp->snd_ssthresh = cdg_ssthresh(sk);
}

/* tcp_cwnd_reduction for one ACK of the emulated CWR (no losses in CWR) */
static __always_inline void cdg_cwnd_reduction(struct sock *sk, struct cdg *ca, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 prr_out = tp->data_segs_out - ca->cwr_segs_out;
	int delta = tp->snd_ssthresh - tcp_packets_in_flight(tp);
	int sndcnt = 0;

	if ((int)acked <= 0 || !ca->cwr_prior_cwnd)
		return;
	ca->cwr_prr_delivered += acked;
	if (delta < 0) {
		__u64 dividend = (__u64)tp->snd_ssthresh * ca->cwr_prr_delivered + ca->cwr_prior_cwnd - 1;

		sndcnt = (__u32)(dividend / ca->cwr_prior_cwnd) - prr_out;
	} else {
		sndcnt = max((int)(ca->cwr_prr_delivered - prr_out), (int)acked);
		/* an ACK that advanced snd_una and marked nothing lost */
		sndcnt++;
		sndcnt = min(delta, sndcnt);
	}
	sndcnt = max(sndcnt, (prr_out ? 0 : 1));
	tp->snd_cwnd = tcp_packets_in_flight(tp) + sndcnt;
}

/* CA_EVENT_COMPLETE_CWR */
static __always_inline void cdg_complete_cwr(struct sock *sk, struct cdg *ca)
{
	ca->state = CDG_UNKNOWN;
	ca->rtt_seq = tcp_sk(sk)->snd_nxt;
	ca->rtt_prev = ca->rtt;
	ca->rtt.v64 = 0;
}

static __always_inline bool tcp_cdg_backoff(struct sock *sk, __u32 grad)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (bpf_get_prandom_u32() <= nexp_u32(grad * param_backoff_factor))
		return false;

	if (param_use_ineff) {
		ca->backoff_cnt++;
		if (ca->backoff_cnt > param_use_ineff)
			return false;
	}

	ca->shadow_wnd = max(ca->shadow_wnd, tp->snd_cwnd);
	ca->state = CDG_BACKOFF;
	cdg_enter_cwr(sk, ca);
	return true;
}

/* Linux calls it neither in CWR nor in Recovery */
SEC("struct_ops")
void BPF_PROG(ccf_cdg_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 prior_snd_cwnd;
	__u32 incr;

	if (ca->cwr) {
		if (!after(ack, ca->cwr_high_seq)) {
			cdg_cwnd_reduction(sk, ca, acked);
			return;
		}
		/* tcp_end_cwnd_reduction, then Open */
		ca->cwr = 0;
		if (tp->snd_ssthresh < TCP_INFINITE_SSTHRESH)
			tp->snd_cwnd = tp->snd_ssthresh;
		cdg_complete_cwr(sk, ca);
	}

	if (tcp_in_slow_start(tp) && param_hystart_detect)
		tcp_cdg_hystart_update(sk);

	if (after(ack, ca->rtt_seq) && ca->rtt.v64) {
		__s32 grad = 0;

		if (ca->rtt_prev.v64)
			grad = tcp_cdg_grad(sk, ca);
		ca->rtt_seq = tp->snd_nxt;
		ca->rtt_prev = ca->rtt;
		ca->rtt.v64 = 0;
		ca->last_ack = 0;
		ca->sample_cnt = 0;

		if (grad > 0 && tcp_cdg_backoff(sk, grad))
			return;
	}

	if (!tcp_is_cwnd_limited(sk)) {
		ca->shadow_wnd = min(ca->shadow_wnd, tp->snd_cwnd);
		return;
	}

	prior_snd_cwnd = tp->snd_cwnd;
	tcp_reno_cong_avoid(sk, ack, acked);

	incr = tp->snd_cwnd - prior_snd_cwnd;
	ca->shadow_wnd = max(ca->shadow_wnd, ca->shadow_wnd + incr);
}

SEC("struct_ops")
void BPF_PROG(ccf_cdg_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__s32 rtt_us = sample->rtt_us;

	if (rtt_us <= 0)
		return;

	/* delayed-ACK filter (D. A. Hayes, CAIA TR 100219A, 2010) */
	if (tp->sacked_out == 0) {
		if (sample->pkts_acked == 1 && ca->delack) {
			/* a delayed ACK counts for the minimum only if provably lower */
			ca->rtt.min = min(ca->rtt.min, rtt_us);
			ca->delack--;
			return;
		} else if (sample->pkts_acked > 1 && ca->delack < 5) {
			ca->delack++;
		}
	}

	ca->rtt.min = min_not_zero(ca->rtt.min, rtt_us);
	ca->rtt.max = max(ca->rtt.max, rtt_us);
}

SEC("struct_ops")
__u32 BPF_PROG(ccf_cdg_ssthresh, struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);

	if (ca->cwr) {
		/* a loss during the emulated CWR: keep its ssthresh */
		ca->cwr = 0;
		return tcp_sk(sk)->snd_ssthresh;
	}
	return cdg_ssthresh(sk);
}

CCF_RENO_UNDO_CWND(ccf_cdg_undo_cwnd)

SEC("struct_ops")
void BPF_PROG(ccf_cdg_set_state, struct sock *sk, __u8 new_state)
{
	struct cdg *ca = inet_csk_ca(sk);

	/* Recovery or Loss take over an emulated CWR */
	if (new_state >= TCP_CA_CWR)
		ca->cwr = 0;
}

SEC("struct_ops")
void BPF_PROG(ccf_cdg_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct cdg_ring *ring;
	__u8 has_gradients;
	int i;

	switch (ev) {
	case CA_EVENT_CWND_RESTART:
		has_gradients = ca->has_gradients;
		if (has_gradients) {
			ring = bpf_sk_storage_get(&cdg_gradients, sk, 0, 0);
			if (ring)
				for (i = 0; i < CDG_WINDOW_MAX && i < param_window; i++) {
					ring->g[i].v64 = 0;
					asm volatile("" ::: "memory"); /* no memset call */
				}
		}
		__builtin_memset(ca, 0, sizeof(*ca));
		ca->has_gradients = has_gradients;
		ca->rtt_seq = tp->snd_nxt;
		ca->shadow_wnd = tp->snd_cwnd;
		break;
	case CA_EVENT_COMPLETE_CWR:
		cdg_complete_cwr(sk, ca);
		break;
	default:
		break;
	}
}

SEC("struct_ops")
void BPF_PROG(ccf_cdg_init, struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	/* window 1 if the ring cannot be had */
	ca->has_gradients = 0;
	if (param_window > 1 && bpf_sk_storage_get(&cdg_gradients, sk, 0, BPF_SK_STORAGE_GET_F_CREATE))
		ca->has_gradients = 1;
	ca->rtt_seq = tp->snd_nxt;
	ca->shadow_wnd = tp->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops ccf_cdg = {
	.cong_avoid = (void *)ccf_cdg_cong_avoid,
	.cwnd_event = (void *)ccf_cdg_cwnd_event,
	.pkts_acked = (void *)ccf_cdg_acked,
	.undo_cwnd = (void *)ccf_cdg_undo_cwnd,
	.ssthresh = (void *)ccf_cdg_ssthresh,
	.set_state = (void *)ccf_cdg_set_state,
	.init = (void *)ccf_cdg_init,
	.name = CCF_NAME("cdg"),
};
