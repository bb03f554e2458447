// SPDX-License-Identifier: GPL-2.0
/*
 * TCP-LP (low priority) as a BPF struct_ops congestion control: a function-by-function port
 * of Linux 6.18 net/ipv4/tcp_lp.c (tcp_lp_init, tcp_lp_cong_avoid,
 * tcp_lp_remote_hz_estimator, tcp_lp_owd_calculator, tcp_lp_rtt_sample, tcp_lp_pkts_acked;
 * TCP_TS_HZ = LP_RESOL = 1000), with the module's integer types and arithmetic.
 * Algorithm: Kuzmanovic & Knightly, INFOCOM 2003. One-way delay from the TCP timestamps
 * (remote clock rate estimated), smoothed (7/8); an "early congestion indication" when the
 * smoothed delay exceeds min + 15 % of (max - min): cwnd halves, or drops to 1 when it
 * happens within 3 RTTs ("inference") of the previous one; Reno otherwise.
 *
 * Deviations forced by BPF: the local timestamp clock tcp_time_stamp_ts(tp) is read as
 * tcp_mstamp / 1000 (ms; ccfair's connections do not negotiate usec timestamps, so that is
 * the clock their TSecr echoes); ssthresh and undo are the kernel's Reno functions called as
 * kfuncs, as the module's ops table points at them. No module parameters.
 * Built with -DLP_TRACE it also bpf_printk's each ACK's state (bench/lp_bpf/run.py reads it).
 */
#include "ccfair_tcp.h"

char _license[] SEC("license") = "GPL";

#define LP_RESOL TCP_TS_HZ
#define LP_VALID_RHZ (1U << 0)
#define LP_VALID_OWD (1U << 1)
#define LP_WITHIN_THR (1U << 3)
#define LP_WITHIN_INF (1U << 4)

struct ccf_lp {
	u32 flag, sowd, owd_min, owd_max, owd_max_rsv, remote_hz, remote_ref_time, local_ref_time, last_drop, inference;
};

static __always_inline struct ccf_lp *ca(struct sock *sk) { return (struct ccf_lp *)inet_csk_ca(sk); }

SEC("struct_ops/lp_init")
void BPF_PROG(lp_init, struct sock *sk)
{
	struct ccf_lp *lp = ca(sk);
	lp->flag = 0; lp->sowd = 0; lp->owd_min = 0xffffffff; lp->owd_max = 0; lp->owd_max_rsv = 0;
	lp->remote_hz = 0; lp->remote_ref_time = 0; lp->local_ref_time = 0; lp->last_drop = 0; lp->inference = 0;
}

SEC("struct_ops/lp_ssthresh")
__u32 BPF_PROG(lp_ssthresh, struct sock *sk) { return tcp_reno_ssthresh(sk); }

CCF_RENO_UNDO_CWND(lp_undo_cwnd)

SEC("struct_ops/lp_cong_avoid")
void BPF_PROG(lp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	if (!(ca(sk)->flag & LP_WITHIN_INF))
		tcp_reno_cong_avoid(sk, ack, acked);
}

static __always_inline u32 remote_hz_estimator(struct sock *sk, struct ccf_lp *lp, u32 tsval, u32 tsecr)
{
	s64 rhz = (s64)(u32)(lp->remote_hz << 6);
	s64 m = 0;
	if (lp->remote_ref_time == 0 || lp->local_ref_time == 0)
		goto out;
	if (tsval == lp->remote_ref_time || tsecr == lp->local_ref_time)
		goto out;
	m = (u32)(TCP_TS_HZ * (u32)(tsval - lp->remote_ref_time)) / (u32)(tsecr - lp->local_ref_time);
	if (rhz > 0) {
		m -= rhz >> 6;
		rhz += m;
	} else
		rhz = m << 6;
out:
	if ((rhz >> 6) > 0)
		lp->flag |= LP_VALID_RHZ;
	else
		lp->flag &= ~LP_VALID_RHZ;
	lp->remote_ref_time = tsval;
	lp->local_ref_time = tsecr;
	return (u32)(rhz >> 6);
}

static __always_inline u32 owd_calculator(struct sock *sk, struct ccf_lp *lp, u32 tsval, u32 tsecr)
{
	s64 owd = 0;
	lp->remote_hz = remote_hz_estimator(sk, lp, tsval, tsecr);
	if ((lp->flag & LP_VALID_RHZ) && lp->remote_hz) {
		owd = (u32)(tsval * (u32)(LP_RESOL / lp->remote_hz) - tsecr * (u32)(LP_RESOL / TCP_TS_HZ));
		if (owd < 0)
			owd = -owd;
	}
	if (owd > 0)
		lp->flag |= LP_VALID_OWD;
	else
		lp->flag &= ~LP_VALID_OWD;
	return (u32)owd;
}

static __always_inline void rtt_sample(struct sock *sk, struct ccf_lp *lp, u32 tsval, u32 tsecr)
{
	s64 mowd = owd_calculator(sk, lp, tsval, tsecr);
	if (!(lp->flag & LP_VALID_RHZ) || !(lp->flag & LP_VALID_OWD))
		return;
	if (mowd < lp->owd_min)
		lp->owd_min = mowd;
	if (mowd > lp->owd_max) {
		if (mowd > lp->owd_max_rsv) {
			if (lp->owd_max_rsv == 0)
				lp->owd_max = mowd;
			else
				lp->owd_max = lp->owd_max_rsv;
			lp->owd_max_rsv = mowd;
		} else
			lp->owd_max = mowd;
	}
	if (lp->sowd != 0) {
		mowd -= lp->sowd >> 3;
		lp->sowd += mowd;
	} else
		lp->sowd = mowd << 3;
}

SEC("struct_ops/lp_pkts_acked")
void BPF_PROG(lp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ccf_lp *lp = ca(sk);
	u32 now = tcp_time_stamp_ms(tp);
	u32 tsval = tp->rx_opt.rcv_tsval, tsecr = tp->rx_opt.rcv_tsecr;
	u32 delta;

	if (sample->rtt_us > 0)
		rtt_sample(sk, lp, tsval, tsecr);
	delta = now - tsecr;
	if ((s32)delta > 0)
		lp->inference = 3 * delta;
	if (lp->last_drop && (now - lp->last_drop < lp->inference))
		lp->flag |= LP_WITHIN_INF;
	else
		lp->flag &= ~LP_WITHIN_INF;
	if (lp->sowd >> 3 < lp->owd_min + 15 * (lp->owd_max - lp->owd_min) / 100)
		lp->flag |= LP_WITHIN_THR;
	else
		lp->flag &= ~LP_WITHIN_THR;
#ifdef LP_TRACE
	bpf_printk("lp %u %u %u", now, tp->snd_cwnd, lp->flag);
	bpf_printk("lp2 %u %u %u", tsval, tsecr, lp->remote_hz);
	bpf_printk("lp3 %u %u %u", lp->sowd >> 3, lp->owd_min, lp->owd_max);
	bpf_printk("lp4 %u %u %u", sk->__sk_common.skc_num, lp->inference, sample->rtt_us);
#endif
	if (lp->flag & LP_WITHIN_THR)
		return;
	lp->owd_min = lp->sowd >> 3;
	lp->owd_max = lp->sowd >> 2;
	lp->owd_max_rsv = lp->sowd >> 2;
	if (lp->flag & LP_WITHIN_INF)
		tp->snd_cwnd = 1U;
	else
		tp->snd_cwnd = (tp->snd_cwnd >> 1) > 1U ? (tp->snd_cwnd >> 1) : 1U;
	lp->last_drop = now;
}

SEC(".struct_ops")
struct tcp_congestion_ops lp_ops = {
	.init = (void *)lp_init,
	.ssthresh = (void *)lp_ssthresh,
	.undo_cwnd = (void *)lp_undo_cwnd,
	.cong_avoid = (void *)lp_cong_avoid,
	.pkts_acked = (void *)lp_pkts_acked,
	.name = CCF_NAME("lp"),
};
