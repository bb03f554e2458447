// SPDX-License-Identifier: GPL-2.0
/*
 * NewReno as a BPF struct_ops congestion control: the BPF twin of Linux's built-in "reno",
 * a port of Linux 6.18 net/ipv4/tcp_cong.c's tcp_reno_cong_avoid, tcp_reno_ssthresh and
 * tcp_reno_undo_cwnd (RFC 5681: slow start below ssthresh, one segment per window of ACKs
 * above it, halve on loss; RFC 6582's recovery is the kernel's, as for every module).
 * It exists to check ccfair's BPF path against the built-in module (docs/ccas.md).
 *
 * Deviations forced by BPF: tcp_slow_start() and tcp_cong_avoid_ai() are the kernel's own
 * functions, called as kfuncs (the module calls the same exported functions); tcp_reno_*
 * themselves are written here, so that the twin runs BPF code, not the built-in's.
 * No module parameters (tcp_cong.c has none).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

/* tcp_reno_cong_avoid */
SEC("struct_ops/reno_cong_avoid")
void BPF_PROG(reno_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	/* Not cwnd-limited: nothing; in "safe" area, increase (slow start). */
	if (!ccf_cong_avoid_open(sk, &acked))
		return;
	/* In dangerous area, increase slowly. */
	tcp_cong_avoid_ai(tp, tcp_snd_cwnd(tp), acked);
}

/* tcp_reno_ssthresh: slow start threshold is half the congestion window (min 2) */
SEC("struct_ops/reno_ssthresh")
u32 BPF_PROG(reno_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max(tcp_snd_cwnd(tp) >> 1U, 2U);
}

/* tcp_reno_undo_cwnd */
SEC("struct_ops/reno_undo_cwnd")
u32 BPF_PROG(reno_undo_cwnd, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max(tcp_snd_cwnd(tp), tp->prior_cwnd);
}

SEC(".struct_ops")
struct tcp_congestion_ops reno_ops = {
	.ssthresh = (void *)reno_ssthresh,
	.cong_avoid = (void *)reno_cong_avoid,
	.undo_cwnd = (void *)reno_undo_cwnd,
	.name = CCF_NAME("reno"),
};
