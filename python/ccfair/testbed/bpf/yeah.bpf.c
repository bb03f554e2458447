// SPDX-License-Identifier: GPL-2.0
/* YeAH-TCP as a BPF struct_ops congestion control: Linux 6.18
 * net/ipv4/tcp_yeah.c ported function by function (tcp_yeah_init,
 * tcp_yeah_cong_avoid, tcp_yeah_ssthresh) on Vegas's RTT bookkeeping
 * (ccfair_vegas.h: tcp_vegas_pkts_acked, tcp_vegas_state,
 * tcp_vegas_cwnd_event, as the module uses them; undo_cwnd is the kernel's
 * tcp_reno_undo_cwnd).
 * Algorithm: Baiocchi, Castellani, Vacirca, "YeAH-TCP: Yet Another Highspeed
 * TCP", PFLDnet 2007. The module has no parameters (its constants are #defines).
 * Deviations forced by BPF: tcp_yeah_init's clamp of snd_cwnd_clamp to
 * 0xffffffff/128 is left out (the field is not writable from struct_ops; it
 * matters only above 33 M packets); no get_info.
 */
#include "ccfair_vegas.h"

char _license[] SEC("license") = "GPL";

#define TCP_YEAH_ALPHA 80   /* packets queued at the bottleneck */
#define TCP_YEAH_GAMMA 1    /* fraction of the queue removed per RTT */
#define TCP_YEAH_DELTA 3    /* log2: least fraction of cwnd removed on loss */
#define TCP_YEAH_EPSILON 1  /* log2: most fraction removed on decongestion */
#define TCP_YEAH_PHY 8      /* most delay above base, as a fraction */
#define TCP_YEAH_RHO 16     /* slow RTTs before a loss means competition */
#define TCP_YEAH_ZETA 50    /* fast RTTs before reno_count resets */
#define TCP_SCALABLE_AI_CNT 100U

struct yeah {
	struct vegas vegas; /* must be first */
	__u32 lastQ;
	__u32 doing_reno_now;
	__u32 reno_count;
	__u32 fast_count;
};

SEC("struct_ops")
void BPF_PROG(ccf_yeah_init, struct sock *sk)
{
	struct yeah *yeah = inet_csk_ca(sk);

	vegas_init_(sk);
	yeah->doing_reno_now = 0;
	yeah->lastQ = 0;
	yeah->reno_count = 2;
}

CCF_VEGAS_HOOKS(yeah)

/* the per-RTT mode choice and precautionary decongestion */
static __always_inline void yeah_round(struct sock *sk, __u32 ack)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct yeah *yeah = inet_csk_ca(sk);

	if (!after(ack, yeah->vegas.beg_snd_nxt))
		return;
	if (yeah->vegas.cntRTT > 2) {
		__u32 rtt, queue;
		__u64 bw;

		rtt = yeah->vegas.minRTT;
		/* packets queued */
		bw = tp->snd_cwnd;
		bw *= rtt - yeah->vegas.baseRTT;
		bw /= rtt;
		queue = bw;

		if (queue > TCP_YEAH_ALPHA || rtt - yeah->vegas.baseRTT > (yeah->vegas.baseRTT / TCP_YEAH_PHY)) {
			if (queue > TCP_YEAH_ALPHA && tp->snd_cwnd > yeah->reno_count) {
				__u32 reduction = min(queue / TCP_YEAH_GAMMA, tp->snd_cwnd >> TCP_YEAH_EPSILON);

				tp->snd_cwnd = tp->snd_cwnd - reduction;
				tp->snd_cwnd = max(tp->snd_cwnd, yeah->reno_count);
				tp->snd_ssthresh = tp->snd_cwnd;
			}
			if (yeah->reno_count <= 2)
				yeah->reno_count = max(tp->snd_cwnd >> 1, 2U);
			else
				yeah->reno_count++;
			yeah->doing_reno_now = min(yeah->doing_reno_now + 1, 0xffffffU);
		} else {
			yeah->fast_count++;
			if (yeah->fast_count > TCP_YEAH_ZETA) {
				yeah->reno_count = 2;
				yeah->fast_count = 0;
			}
			yeah->doing_reno_now = 0;
		}
		yeah->lastQ = queue;
	}
	yeah->vegas.beg_snd_una = yeah->vegas.beg_snd_nxt;
	yeah->vegas.beg_snd_nxt = tp->snd_nxt;
	yeah->vegas.beg_snd_cwnd = tp->snd_cwnd;
	yeah->vegas.cntRTT = 0;
	yeah->vegas.minRTT = 0x7fffffff;
}

SEC("struct_ops")
void BPF_PROG(ccf_yeah_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct yeah *yeah = inet_csk_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;

	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			goto do_vegas;
	}

	if (!yeah->doing_reno_now) {
		/* Scalable */
		tcp_cong_avoid_ai(tp, min(tp->snd_cwnd, TCP_SCALABLE_AI_CNT), acked);
	} else {
		/* Reno */
		tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
	}
do_vegas:
	yeah_round(sk, ack);
}

SEC("struct_ops")
__u32 BPF_PROG(ccf_yeah_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct yeah *yeah = inet_csk_ca(sk);
	__u32 reduction;

	if (yeah->doing_reno_now < TCP_YEAH_RHO) {
		reduction = yeah->lastQ;
		reduction = min(reduction, max(tp->snd_cwnd >> 1, 2U));
		reduction = max(reduction, tp->snd_cwnd >> TCP_YEAH_DELTA);
	} else {
		reduction = max(tp->snd_cwnd >> 1, 2U);
	}
	yeah->fast_count = 0;
	yeah->reno_count = max(yeah->reno_count >> 1, 2U);
	return max((int)(tp->snd_cwnd - reduction), 2);
}

CCF_RENO_UNDO_CWND(ccf_yeah_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops ccf_yeah = {
	.init = (void *)ccf_yeah_init,
	.ssthresh = (void *)ccf_yeah_ssthresh,
	.undo_cwnd = (void *)ccf_yeah_undo_cwnd,
	.cong_avoid = (void *)ccf_yeah_cong_avoid,
	.set_state = (void *)ccf_yeah_state,
	.cwnd_event = (void *)ccf_yeah_cwnd_event,
	.pkts_acked = (void *)ccf_yeah_pkts_acked,
	.name = CCF_NAME("yeah"),
};
