/* SPDX-License-Identifier: GPL-2.0 */
/* Vegas's RTT bookkeeping, shared by the vegas and yeah ports as Linux shares
 * it (net/ipv4/tcp_vegas.h, and tcp_vegas.c's exported tcp_vegas_init,
 * tcp_vegas_pkts_acked, tcp_vegas_state, tcp_vegas_cwnd_event; Linux 6.18).
 * Rewritten for BPF from the kernel source; same fields, types and order.
 */
#ifndef CCFAIR_VEGAS_H
#define CCFAIR_VEGAS_H

#include "ccfair_tcp.h"

struct vegas {
	__u32 beg_snd_nxt;   /* right edge during last RTT */
	__u32 beg_snd_una;   /* left edge during last RTT */
	__u32 beg_snd_cwnd;  /* cwnd at the start of the last RTT */
	__u8 doing_vegas_now;
	__u16 cntRTT;        /* RTT samples within the last RTT */
	__u32 minRTT;        /* min RTT sample within the last RTT, us */
	__u32 baseRTT;       /* min of all RTT samples, us */
};

/* vegas_enable: start a fresh round at the next send. */
static __always_inline void vegas_enable(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct vegas *vegas = inet_csk_ca(sk);

	vegas->doing_vegas_now = 1;
	vegas->beg_snd_nxt = tp->snd_nxt;
	vegas->cntRTT = 0;
	vegas->minRTT = 0x7fffffff;
}

static __always_inline void vegas_disable(struct sock *sk)
{
	struct vegas *vegas = inet_csk_ca(sk);

	vegas->doing_vegas_now = 0;
}

static __always_inline void vegas_init_(struct sock *sk)
{
	struct vegas *vegas = inet_csk_ca(sk);

	vegas->baseRTT = 0x7fffffff;
	vegas_enable(sk);
}

static __always_inline void vegas_pkts_acked_(struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *vegas = inet_csk_ca(sk);
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	/* never a zero RTT or baseRTT */
	vrtt = sample->rtt_us + 1;
	if (vrtt < vegas->baseRTT)
		vegas->baseRTT = vrtt;
	vegas->minRTT = min(vegas->minRTT, vrtt);
	vegas->cntRTT++;
}

static __always_inline void vegas_state_(struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Open)
		vegas_enable(sk);
	else
		vegas_disable(sk);
}

static __always_inline void vegas_cwnd_event_(struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		vegas_init_(sk);
}

/* The programs ccf_<name>_pkts_acked, ccf_<name>_state and ccf_<name>_cwnd_event of a
 * port whose Linux module registers tcp_vegas_pkts_acked, tcp_vegas_state and
 * tcp_vegas_cwnd_event as its own hooks (tcp_vegas.c, tcp_yeah.c). */
#define CCF_VEGAS_HOOKS(name)								\
	SEC("struct_ops")								\
	void BPF_PROG(ccf_##name##_pkts_acked, struct sock *sk, const struct ack_sample *sample) \
	{										\
		vegas_pkts_acked_(sk, sample);						\
	}										\
											\
	SEC("struct_ops")								\
	void BPF_PROG(ccf_##name##_state, struct sock *sk, __u8 new_state)		\
	{										\
		vegas_state_(sk, new_state);						\
	}										\
											\
	SEC("struct_ops")								\
	void BPF_PROG(ccf_##name##_cwnd_event, struct sock *sk, enum tcp_ca_event event) \
	{										\
		vegas_cwnd_event_(sk, event);						\
	}

#endif
