// SPDX-License-Identifier: GPL-2.0
/*
 * Scalable TCP as a BPF struct_ops congestion control: a port of Linux 6.18
 * net/ipv4/tcp_scalable.c (tcp_scalable_cong_avoid, tcp_scalable_ssthresh).
 * Algorithm: Kelly, "Scalable TCP", CCR 2003. Above ssthresh cwnd grows by one segment per
 * min(cwnd, 100) segments ACKed (a = 0.01 per ACK once cwnd >= 100); a loss reduces cwnd by
 * 1/8 (b = 0.125).
 *
 * Deviations forced by BPF: none in the algorithm; tcp_slow_start(), tcp_cong_avoid_ai() and
 * tcp_reno_undo_cwnd() are the kernel's functions called as kfuncs (the module calls the same).
 * No module parameters (TCP_SCALABLE_AI_CNT and TCP_SCALABLE_MD_SCALE are constants in Linux).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

#define TCP_SCALABLE_AI_CNT 100U
#define TCP_SCALABLE_MD_SCALE 3

SEC("struct_ops/scalable_cong_avoid")
void BPF_PROG(scalable_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!ccf_cong_avoid_open(sk, &acked))
		return;
	tcp_cong_avoid_ai(tp, min(tcp_snd_cwnd(tp), TCP_SCALABLE_AI_CNT), acked);
}

SEC("struct_ops/scalable_ssthresh")
u32 BPF_PROG(scalable_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max(tcp_snd_cwnd(tp) - (tcp_snd_cwnd(tp) >> TCP_SCALABLE_MD_SCALE), 2U);
}

CCF_RENO_UNDO_CWND(scalable_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops scalable_ops = {
	.ssthresh = (void *)scalable_ssthresh,
	.undo_cwnd = (void *)scalable_undo_cwnd,
	.cong_avoid = (void *)scalable_cong_avoid,
	.name = CCF_NAME("scalable"),
};
