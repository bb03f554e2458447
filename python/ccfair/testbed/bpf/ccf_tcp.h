/* SPDX-License-Identifier: GPL-2.0 */
/* What the struct_ops ports need from Linux's include/net/tcp.h and
 * include/net/inet_connection_sock.h that vmlinux.h (BTF: types only) lacks:
 * the inline helpers and #defines, rewritten for BPF (Linux 6.18). The
 * kernel's own functions a struct_ops program may call (kfuncs of
 * net/ipv4/bpf_tcp_ca.c: tcp_slow_start, tcp_cong_avoid_ai,
 * tcp_reno_{cong_avoid,ssthresh,undo_cwnd}) are declared __ksym.
 * A struct_ops program may write only icsk_ca_priv, icsk_ack.pending and
 * tcp_sock's snd_cwnd, snd_cwnd_cnt, snd_ssthresh and ecn_flags
 * (bpf_tcp_ca_btf_struct_access); every port lists what that forces.
 */
#ifndef CCF_TCP_H
#define CCF_TCP_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define TCP_INFINITE_SSTHRESH 0x7fffffffU
#define TCP_CONG_NEEDS_ECN 0x2
/* include/net/tcp_ecn.h (values unchanged by AccECN in 6.18) */
#define TCP_ECN_OK 1
#define TCP_ECN_DEMAND_CWR 4
#define USEC_PER_SEC 1000000ULL
#define NSEC_PER_USEC 1000ULL

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min_not_zero(x, y) ((x) == 0 ? (y) : ((y) == 0 ? (x) : min((x), (y))))

extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

static __always_inline bool before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1) before(seq1, seq2)

static __always_inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* include/net/tcp.h tcp_is_cwnd_limited */
static __always_inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return true;
	if (tcp_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

static __always_inline __u8 ca_state(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
}

/* include/net/tcp.h tcp_current_ssthresh */
static __always_inline __u32 tcp_current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if ((1 << ca_state(sk)) & ((1 << TCP_CA_CWR) | (1 << TCP_CA_Recovery)))
		return tp->snd_ssthresh;
	return max(tp->snd_ssthresh, ((tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2)));
}

/* Unsigned division of signed values (clang < 18 emits no BPF signed
 * division): C's truncation toward zero. */
static __always_inline __s32 sdiv32(__s32 a, __s32 b)
{
	__u32 ua = a < 0 ? -(__u32)a : (__u32)a;
	__u32 ub = b < 0 ? -(__u32)b : (__u32)b;
	__u32 q = ua / ub;

	return (a < 0) != (b < 0) ? -(__s32)q : (__s32)q;
}

#endif
