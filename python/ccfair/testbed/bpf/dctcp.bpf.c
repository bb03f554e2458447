// SPDX-License-Identifier: GPL-2.0
/* DCTCP as a BPF struct_ops congestion control: Linux 6.18
 * net/ipv4/tcp_dctcp.c and tcp_dctcp.h ported function by function
 * (dctcp_reset, dctcp_init, dctcp_ssthresh, dctcp_update_alpha,
 * dctcp_react_to_loss, dctcp_state, dctcp_ece_ack_cwr, dctcp_ece_ack_update,
 * dctcp_cwnd_event, dctcp_cwnd_undo; cong_avoid is the kernel's
 * tcp_reno_cong_avoid), with the struct_ops patterns of Linux's
 * tools/testing/selftests/bpf/progs/bpf_dctcp.c (the receiver's delayed ACK
 * through bpf_tcp_send_ack, the fallback through bpf_setsockopt).
 * Algorithm: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010;
 * RFC 8257. TCP_CONG_NEEDS_ECN, so a connection
 * using it asks for ECN whatever net.ipv4.tcp_ecn says.
 * Both ends must run it: the receiver's CE state machine
 * (dctcp_ece_ack_update) is what makes the ECE echo per packet.
 * Deviations forced by BPF: the module parameters dctcp_shift_g and
 * dctcp_alpha_on_init are read-only global data set at load (CCF_PARAM);
 * without ECN the module switches the socket to its internal "dctcp-reno"
 * ops (Reno with the same get_info), this port to the kernel's "reno"
 * through bpf_setsockopt(TCP_CONGESTION), whose
 * tcp_reinit_congestion_control also clears ECT (the module's
 * INET_ECN_dontxmit); no get_info.
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

#define DCTCP_MAX_ALPHA 1024U
#define SOL_TCP 6
#define TCP_CONGESTION 13
#define TCP_LISTEN 10
#define TCP_CLOSE 7

/* module parameters */
CCF_PARAM(u32, dctcp_shift_g, 4); /* g = 1/2^4 */
CCF_PARAM(u32, dctcp_alpha_on_init, 1024);
char fallback_cc[TCP_CA_NAME_MAX] = "reno";

struct dctcp {
	__u32 old_delivered;
	__u32 old_delivered_ce;
	__u32 prior_rcv_nxt;
	__u32 dctcp_alpha;
	__u32 next_seq;
	__u32 ce_state;
	__u32 loss_cwnd;
};

static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops")
void BPF_PROG(ccf_dctcp_init, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if ((tp->ecn_flags & TCP_ECN_OK) || sk->__sk_common.skc_state == TCP_LISTEN ||
	    sk->__sk_common.skc_state == TCP_CLOSE) {
		struct dctcp *ca = inet_csk_ca(sk);

		ca->prior_rcv_nxt = tp->rcv_nxt;
		ca->dctcp_alpha = min(param_dctcp_alpha_on_init, DCTCP_MAX_ALPHA);
		ca->loss_cwnd = 0;
		ca->ce_state = 0;
		dctcp_reset(tp, ca);
		return;
	}
	/* no ECN: fall back to Reno */
	bpf_setsockopt(sk, SOL_TCP, TCP_CONGESTION, fallback_cc, sizeof(fallback_cc));
}

SEC("struct_ops")
__u32 BPF_PROG(ccf_dctcp_ssthresh, struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	return max(tp->snd_cwnd - ((tp->snd_cwnd * ca->dctcp_alpha) >> 11U), 2U);
}

SEC("struct_ops")
void BPF_PROG(ccf_dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);

	/* a window of data has been acknowledged */
	if (!before(tp->snd_una, ca->next_seq)) {
		__u32 delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
		__u32 alpha = ca->dctcp_alpha;
		__u32 shift_g = min(param_dctcp_shift_g, 10U); /* the module's setter allows 0..10 */

		/* alpha = (1 - g) * alpha + g * F */
		alpha -= min_not_zero(alpha, alpha >> shift_g);
		if (delivered_ce) {
			__u32 delivered = tp->delivered - ca->old_delivered;

			delivered_ce <<= (10 - shift_g);
			delivered_ce /= max(1U, delivered);
			alpha = min(alpha + delivered_ce, DCTCP_MAX_ALPHA);
		}
		ca->dctcp_alpha = alpha;
		dctcp_reset(tp, ca);
	}
}

static __always_inline void dctcp_react_to_loss(struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = max(tp->snd_cwnd >> 1U, 2U);
}

SEC("struct_ops")
void BPF_PROG(ccf_dctcp_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Recovery && new_state != inet_csk_ca_state(sk))
		dctcp_react_to_loss(sk);
	/* an RTO is handled in cwnd_event (CA_EVENT_LOSS): one reduction per RTT */
}

static __always_inline void dctcp_ece_ack_cwr(struct sock *sk, __u32 ce_state)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (ce_state == 1)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/* The receiver's CE state machine: 0 = last packet non-CE, 1 = CE. */
static __always_inline void dctcp_ece_ack_update(struct sock *sk, enum tcp_ca_event evt, __u32 *prior_rcv_nxt,
						 __u32 *ce_state)
{
	__u32 new_ce_state = (evt == CA_EVENT_ECN_IS_CE) ? 1 : 0;

	if (*ce_state != new_ce_state) {
		/* CE state changed: ACK at once; a delayed ACK goes first with the old state */
		if (inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER) {
			dctcp_ece_ack_cwr(sk, *ce_state);
			bpf_tcp_send_ack(sk, *prior_rcv_nxt);
		}
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	*prior_rcv_nxt = tcp_sk(sk)->rcv_nxt;
	*ce_state = new_ce_state;
	dctcp_ece_ack_cwr(sk, new_ce_state);
}

SEC("struct_ops")
void BPF_PROG(ccf_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct dctcp *ca = inet_csk_ca(sk);

	switch (ev) {
	case CA_EVENT_ECN_IS_CE:
	case CA_EVENT_ECN_NO_CE:
		dctcp_ece_ack_update(sk, ev, &ca->prior_rcv_nxt, &ca->ce_state);
		break;
	case CA_EVENT_LOSS:
		dctcp_react_to_loss(sk);
		break;
	default:
		break;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(ccf_dctcp_cwnd_undo, struct sock *sk)
{
	const struct dctcp *ca = inet_csk_ca(sk);

	return max(tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC("struct_ops")
void BPF_PROG(ccf_dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccf_dctcp = {
	.init = (void *)ccf_dctcp_init,
	.in_ack_event = (void *)ccf_dctcp_update_alpha,
	.cwnd_event = (void *)ccf_dctcp_cwnd_event,
	.ssthresh = (void *)ccf_dctcp_ssthresh,
	.cong_avoid = (void *)ccf_dctcp_cong_avoid,
	.undo_cwnd = (void *)ccf_dctcp_cwnd_undo,
	.set_state = (void *)ccf_dctcp_state,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = CCF_NAME("dctcp"),
};
