// SPDX-License-Identifier: GPL-2.0
/*
 * HighSpeed TCP as a BPF struct_ops congestion control: a port of Linux 6.18
 * net/ipv4/tcp_highspeed.c (hstcp_init, hstcp_cong_avoid, hstcp_ssthresh) with its AIMD table.
 * Algorithm: RFC 3649 (Floyd). Above ssthresh, cwnd grows by a(w) segments per RTT and a
 * loss multiplies it by 1 - b(w), a(w) and b(w) read from RFC 3649 appendix B's table
 * (72 rows as in Linux: the cwnd up to which the row applies, b(w) << 8; a(w) is the row index ai + 1).
 *
 * Deviations forced by BPF: hstcp_init's clamp of snd_cwnd_clamp to 0xffffffff/128 is not
 * written (BPF may not write snd_cwnd_clamp); it only matters above 33 million segments.
 * hstcp_cong_avoid's two table walks (ai up while cwnd > vals[ai].cwnd, down while
 * cwnd <= vals[ai - 1].cwnd) are replaced by what both end at, the number of rows below cwnd
 * (at most 71), counted by a fixed loop the verifier accepts; the table is sized 128 and
 * hstcp_ssthresh indexes it with ai & 127 (the verifier's bound; ai <= 71).
 * tcp_slow_start() and tcp_reno_undo_cwnd() are the kernel's functions called as kfuncs (the
 * module calls them). No module parameters (Linux has none).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

/* From AIMD tables from RFC 3649 appendix B, with fixed-point MD scaled <<8. */
struct hstcp_aimd_val {
	u32 cwnd;
	u32 md;
};

/* 72 rows as in Linux; the array is sized 128 so that an index masked with 127 is in bounds
 * for the verifier (ai never exceeds 71) */
static const struct hstcp_aimd_val hstcp_aimd_vals[128] = {
	{     38,  128 },
	{    118,  112 },
	{    221,  104 },
	{    347,   98 },
	{    495,   93 },
	{    663,   89 },
	{    851,   86 },
	{   1058,   83 },
	{   1284,   81 },
	{   1529,   78 },
	{   1793,   76 },
	{   2076,   74 },
	{   2378,   72 },
	{   2699,   71 },
	{   3039,   69 },
	{   3399,   68 },
	{   3778,   66 },
	{   4177,   65 },
	{   4596,   64 },
	{   5036,   62 },
	{   5497,   61 },
	{   5979,   60 },
	{   6483,   59 },
	{   7009,   58 },
	{   7558,   57 },
	{   8130,   56 },
	{   8726,   55 },
	{   9346,   54 },
	{   9991,   53 },
	{  10661,   52 },
	{  11358,   52 },
	{  12082,   51 },
	{  12834,   50 },
	{  13614,   49 },
	{  14424,   48 },
	{  15265,   48 },
	{  16137,   47 },
	{  17042,   46 },
	{  17981,   45 },
	{  18955,   45 },
	{  19965,   44 },
	{  21013,   43 },
	{  22101,   43 },
	{  23230,   42 },
	{  24402,   41 },
	{  25618,   41 },
	{  26881,   40 },
	{  28193,   39 },
	{  29557,   39 },
	{  30975,   38 },
	{  32450,   38 },
	{  33986,   37 },
	{  35586,   36 },
	{  37253,   36 },
	{  38992,   35 },
	{  40808,   35 },
	{  42707,   34 },
	{  44694,   33 },
	{  46776,   33 },
	{  48961,   32 },
	{  51258,   32 },
	{  53677,   31 },
	{  56230,   30 },
	{  58932,   30 },
	{  61799,   29 },
	{  64851,   28 },
	{  68113,   28 },
	{  71617,   27 },
	{  75401,   26 },
	{  79517,   26 },
	{  84035,   25 },
	{  89053,   24 },
};

#define HSTCP_AIMD_MAX 72U

struct ccf_hstcp {
	u32 ai;
};

SEC("struct_ops/hstcp_init")
void BPF_PROG(hstcp_init, struct sock *sk)
{
	struct ccf_hstcp *ca = inet_csk_ca(sk);

	ca->ai = 0;
}

SEC("struct_ops/hstcp_cong_avoid")
void BPF_PROG(hstcp_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_hstcp *ca = inet_csk_ca(sk);
	u32 ai, i;

	if (!tcp_is_cwnd_limited(sk))
		return;

	if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* Update AIMD parameters.
	 *
	 * We want to guarantee that:
	 *     hstcp_aimd_vals[ca->ai-1].cwnd <
	 *     snd_cwnd <=
	 *     hstcp_aimd_vals[ca->ai].cwnd
	 */
	/* Linux walks ai up (while cwnd > vals[ai].cwnd and ai < MAX - 1) or down (while ai and
	 * cwnd <= vals[ai - 1].cwnd); both end at the number of rows below cwnd, at most MAX - 1,
	 * which is counted here (a fixed loop the verifier accepts). */
	ai = 0;
	for (i = 0; i < HSTCP_AIMD_MAX - 1; i++)
		ai += tcp_snd_cwnd(tp) > hstcp_aimd_vals[i].cwnd;
	ca->ai = ai;

	/* Do additive increase */
	if (tcp_snd_cwnd(tp) < tp->snd_cwnd_clamp) {
		/* cwnd = cwnd + a(w) / cwnd */
		tp->snd_cwnd_cnt += ca->ai + 1;
		if (tp->snd_cwnd_cnt >= tcp_snd_cwnd(tp)) {
			tp->snd_cwnd_cnt -= tcp_snd_cwnd(tp);
			tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + 1);
		}
	}
}

SEC("struct_ops/hstcp_ssthresh")
u32 BPF_PROG(hstcp_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_hstcp *ca = inet_csk_ca(sk);
	u32 md = hstcp_aimd_vals[ca->ai & 127].md;

	/* Do multiplicative decrease */
	return max(tcp_snd_cwnd(tp) - ((tcp_snd_cwnd(tp) * md) >> 8), 2U);
}

CCF_RENO_UNDO_CWND(hstcp_undo_cwnd)

SEC(".struct_ops")
struct tcp_congestion_ops highspeed_ops = {
	.init = (void *)hstcp_init,
	.ssthresh = (void *)hstcp_ssthresh,
	.undo_cwnd = (void *)hstcp_undo_cwnd,
	.cong_avoid = (void *)hstcp_cong_avoid,
	.name = CCF_NAME("highspeed"),
};
