// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Hybla as a BPF struct_ops congestion control: a function-by-function port of Linux 6.18
 * net/ipv4/tcp_hybla.c (hybla_recalc_param, hybla_init, hybla_state, hybla_fraction,
 * hybla_cong_avoid).
 * Algorithm: Caini & Firrincieli, "TCP Hybla", IJSCN 2004. rho = srtt / rtt0 (rtt0 = 25 ms,
 * at least 1); slow start grows cwnd by 2^rho - 1 per ACK, congestion avoidance by rho^2/cwnd,
 * in 1/128 fixed point (snd_cwnd_cents); Reno outside the Open state.
 *
 * Module parameters (CCF_PARAM, name and default of module_param()): rtt0 (ms).
 * Deviations forced by BPF: hybla_init's snd_cwnd_clamp = 65535 is not written (BPF may not
 * write snd_cwnd_clamp): the socket's clamp stays (~0 by default), which differs only for
 * windows above 65535 segments; the "while (snd_cwnd_cents >= 128)" loop runs at most twice
 * (cents < 128 + 127 after one addition) and is bounded so; tcp_reno_cong_avoid() and
 * tcp_reno_undo_cwnd()/tcp_reno_ssthresh() are the kernel's functions called as kfuncs;
 * hybla_fraction()'s table is a switch (clang 14 puts a small constant array in a section
 * its BTF does not describe, which the kernel refuses).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

/* Tcp Hybla structure. */
struct ccf_hybla {
	bool hybla_en;
	u32 snd_cwnd_cents; /* Keeps increment values when it is <1, <<7 */
	u32 rho;            /* Rho parameter, integer part  */
	u32 rho2;           /* Rho * Rho, integer part */
	u32 rho_3ls;        /* Rho parameter, <<3 */
	u32 rho2_7ls;       /* Rho^2, <<7	*/
	u32 minrtt_us;      /* Minimum smoothed round trip time value seen */
};

/* Hybla reference round trip time (default= 1/40 sec = 25 ms), in ms */
CCF_PARAM(int, rtt0, 25);

/* This is called to refresh values for hybla parameters */
static __always_inline void hybla_recalc_param(struct sock *sk)
{
	struct ccf_hybla *ca = inet_csk_ca(sk);

	ca->rho_3ls = max_t(u32, tcp_sk(sk)->srtt_us / ((u32)param_rtt0 * USEC_PER_MSEC), 8U);
	ca->rho = ca->rho_3ls >> 3;
	ca->rho2_7ls = (ca->rho_3ls * ca->rho_3ls) << 1;
	ca->rho2 = ca->rho2_7ls >> 7;
}

SEC("struct_ops/hybla_init")
void BPF_PROG(hybla_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_hybla *ca = inet_csk_ca(sk);

	ca->rho = 0;
	ca->rho2 = 0;
	ca->rho_3ls = 0;
	ca->rho2_7ls = 0;
	ca->snd_cwnd_cents = 0;
	ca->hybla_en = true;
	tcp_snd_cwnd_set(tp, 2);

	/* 1st Rho measurement based on initial srtt */
	hybla_recalc_param(sk);

	/* set minimum rtt as this is the 1st ever seen */
	ca->minrtt_us = tp->srtt_us;
	tcp_snd_cwnd_set(tp, ca->rho);
}

SEC("struct_ops/hybla_state")
void BPF_PROG(hybla_state, struct sock *sk, u8 ca_state)
{
	struct ccf_hybla *ca = inet_csk_ca(sk);

	ca->hybla_en = (ca_state == TCP_CA_Open);
}

/* 2^(odds/8) << 7, for odds in [0, 8) (Linux's fractions[] table) */
static __always_inline u32 hybla_fraction(u32 odds)
{
	switch (odds) {
	case 0: return 128;
	case 1: return 139;
	case 2: return 152;
	case 3: return 165;
	case 4: return 181;
	case 5: return 197;
	case 6: return 215;
	case 7: return 234;
	default: return 128;
	}
}

/* TCP Hybla main routine: increments by 2^rho - 1 in slow start and rho^2 / cwnd in
 * congestion avoidance, with the fractions kept in snd_cwnd_cents (<<7). */
SEC("struct_ops/hybla_cong_avoid")
void BPF_PROG(hybla_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_hybla *ca = inet_csk_ca(sk);
	u32 increment, odd, rho_fractions;
	int is_slowstart = 0;
	int i;

	/*  Recalculate rho only if this srtt is the lowest */
	if (tp->srtt_us < ca->minrtt_us) {
		hybla_recalc_param(sk);
		ca->minrtt_us = tp->srtt_us;
	}

	if (!tcp_is_cwnd_limited(sk))
		return;

	if (!ca->hybla_en) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}

	if (ca->rho == 0)
		hybla_recalc_param(sk);

	rho_fractions = ca->rho_3ls - (ca->rho << 3);

	if (tcp_in_slow_start(tp)) {
		/* slow start: INC = 2^RHO - 1, as (2^int) * [(2^fract) << 7] */
		is_slowstart = 1;
		increment = ((1 << min(ca->rho, 16U)) * hybla_fraction(rho_fractions)) - 128;
	} else {
		/* congestion avoidance: INC = RHO^2 / W, already << 7 */
		increment = ca->rho2_7ls / tcp_snd_cwnd(tp);
		if (increment < 128)
			tp->snd_cwnd_cnt++;
	}

	odd = increment % 128;
	tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + (increment >> 7));
	ca->snd_cwnd_cents += odd;

	/* check when fractions goes >=128 and increase cwnd by 1. */
	for (i = 0; i < 2 && ca->snd_cwnd_cents >= 128; i++) {
		tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + 1);
		ca->snd_cwnd_cents -= 128;
		tp->snd_cwnd_cnt = 0;
	}
	/* check when cwnd has not been incremented for a while */
	if (increment == 0 && odd == 0 && tp->snd_cwnd_cnt >= tcp_snd_cwnd(tp)) {
		tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + 1);
		tp->snd_cwnd_cnt = 0;
	}
	/* clamp down slowstart cwnd to ssthresh value. */
	if (is_slowstart)
		tcp_snd_cwnd_set(tp, min(tcp_snd_cwnd(tp), tp->snd_ssthresh));

	tcp_snd_cwnd_set(tp, min(tcp_snd_cwnd(tp), tp->snd_cwnd_clamp));
}

SEC("struct_ops/hybla_ssthresh")
u32 BPF_PROG(hybla_ssthresh, struct sock *sk) { return tcp_reno_ssthresh(sk); }

CCF_RENO_UNDO_CWND(hybla_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops hybla_ops = {
	.init = (void *)hybla_init,
	.ssthresh = (void *)hybla_ssthresh,
	.undo_cwnd = (void *)hybla_undo_cwnd,
	.cong_avoid = (void *)hybla_cong_avoid,
	.set_state = (void *)hybla_state,
	.name = CCF_NAME("hybla"),
};
