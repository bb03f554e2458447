// SPDX-License-Identifier: GPL-2.0
/* TCP Vegas as a BPF struct_ops congestion control: Linux 6.18
 * net/ipv4/tcp_vegas.c ported function by function (tcp_vegas_init,
 * tcp_vegas_pkts_acked, tcp_vegas_state, tcp_vegas_cwnd_event,
 * tcp_vegas_ssthresh, tcp_vegas_cong_avoid; ssthresh and undo_cwnd are the
 * kernel's tcp_reno_ssthresh / tcp_reno_undo_cwnd, as in the module).
 * Algorithm: Brakmo & Peterson, IEEE JSAC 13(8), 1995.
 * Deviations forced by BPF: the module parameters alpha, beta, gamma are
 * read-only global data set at load (CCF_PARAM); get_info (inet_diag) is not
 * available to struct_ops and is left out.
 */
#include "ccfair_vegas.h"

char _license[] SEC("license") = "GPL";

/* module parameters (packets) */
CCF_PARAM(int, alpha, 2);
CCF_PARAM(int, beta, 4);
CCF_PARAM(int, gamma, 1);

static __always_inline __u32 tcp_vegas_ssthresh(struct tcp_sock *tp)
{
	return min(tp->snd_ssthresh, tp->snd_cwnd);
}

SEC("struct_ops")
void BPF_PROG(ccf_vegas_init, struct sock *sk)
{
	vegas_init_(sk);
}

CCF_VEGAS_HOOKS(vegas)

SEC("struct_ops")
void BPF_PROG(ccf_vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct vegas *vegas = inet_csk_ca(sk);

	if (!vegas->doing_vegas_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}

	if (after(ack, vegas->beg_snd_nxt)) {
		/* once per RTT */
		vegas->beg_snd_nxt = tp->snd_nxt;

		/* <= 2 samples: probably only delayed ACKs; behave like Reno */
		if (vegas->cntRTT <= 2) {
			tcp_reno_cong_avoid(sk, ack, acked);
		} else {
			__u32 rtt, diff;
			__u64 target_cwnd;

			rtt = vegas->minRTT;
			target_cwnd = (__u64)tp->snd_cwnd * vegas->baseRTT;
			target_cwnd /= rtt;
			/* packets this flow keeps queued */
			diff = tp->snd_cwnd * (rtt - vegas->baseRTT) / vegas->baseRTT;

			if (diff > param_gamma && tcp_in_slow_start(tp)) {
				tp->snd_cwnd = min(tp->snd_cwnd, (__u32)target_cwnd + 1);
				tp->snd_ssthresh = tcp_vegas_ssthresh(tp);
			} else if (tcp_in_slow_start(tp)) {
				tcp_slow_start(tp, acked);
			} else {
				if (diff > param_beta) {
					tp->snd_cwnd = tp->snd_cwnd - 1;
					tp->snd_ssthresh = tcp_vegas_ssthresh(tp);
				} else if (diff < param_alpha) {
					tp->snd_cwnd = tp->snd_cwnd + 1;
				}
			}

			if (tp->snd_cwnd < 2)
				tp->snd_cwnd = 2;
			else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
				tp->snd_cwnd = tp->snd_cwnd_clamp;

			tp->snd_ssthresh = tcp_current_ssthresh(sk);
		}

		vegas->cntRTT = 0;
		vegas->minRTT = 0x7fffffff;
	} else if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(ccf_vegas_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

CCF_RENO_UNDO_CWND(ccf_vegas_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops ccf_vegas = {
	.init = (void *)ccf_vegas_init,
	.ssthresh = (void *)ccf_vegas_ssthresh,
	.undo_cwnd = (void *)ccf_vegas_undo_cwnd,
	.cong_avoid = (void *)ccf_vegas_cong_avoid,
	.pkts_acked = (void *)ccf_vegas_pkts_acked,
	.set_state = (void *)ccf_vegas_state,
	.cwnd_event = (void *)ccf_vegas_cwnd_event,
	.name = CCF_NAME("vegas"),
};
