/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by ccfair's BPF struct_ops ports of Linux's TCP congestion-control modules
 * (one <cca>.bpf.c per module in this directory; ccfair.testbed.bpfcc builds and loads them).
 *
 * What lives here: the pieces of include/net/tcp.h, include/net/inet_connection_sock.h and
 * include/linux/jiffies.h that the modules use and that a BPF program cannot call (inline
 * functions and macros of Linux 6.18), written again for BPF; the kfuncs the kernel exports
 * to struct_ops congestion controls (net/ipv4/bpf_tcp_ca.c: tcp_reno_*, tcp_slow_start,
 * tcp_cong_avoid_ai); and the two conventions of the ports:
 *
 *   CCF_NAME(n)            the ops' name: "c????_" n. The loader writes the run's kernel name
 *                          over it (c<run id>_<cca>, at most 15 characters), so that runs never
 *                          clash with each other or with a built-in module of the same name.
 *   CCF_PARAM(type, n, v)  a module parameter (module_param() in Linux) as read-only global data,
 *                          `param_<n>`, default v; the loader sets it before the program is
 *                          loaded (the verifier then sees a constant).
 *
 * Each port's private state (icsk_ca_priv, at most ICSK_CA_PRIV_SIZE = 104 bytes) is its
 * module's struct with a ccf_ prefix (struct ccf_bictcp for tcp_cubic.c's struct bictcp):
 * vmlinux.h already defines the structs of the modules built into the running kernel.
 *
 * BPF restrictions every port lives with: no floating point (the modules have none either),
 * no signed division (clang 14 emits none for BPF: divide magnitudes), bounded loops, writes
 * to tcp_sock only to snd_cwnd, snd_cwnd_cnt, snd_ssthresh, ecn_flags and the private area
 * icsk_ca_priv (bpf_tcp_ca_btf_struct_access), jiffies through bpf_jiffies64().
 */
#ifndef CCFAIR_TCP_H
#define CCFAIR_TCP_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define CCF_NAME(n) "c????_" n
#define CCF_PARAM(type, n, v) const volatile type param_##n = (v)

/* include/linux/jiffies.h, include/vdso/time64.h */
extern const int CONFIG_HZ __kconfig;
#define HZ ((u32)CONFIG_HZ)
#define MSEC_PER_SEC 1000UL
#define USEC_PER_MSEC 1000UL
#define USEC_PER_SEC 1000000UL
#define NSEC_PER_USEC 1000UL
#define USEC_PER_JIFFY (USEC_PER_SEC / HZ)
#define tcp_jiffies32 ((u32)bpf_jiffies64())
#define jiffies ((unsigned long)bpf_jiffies64())

static __always_inline u32 msecs_to_jiffies(u32 m)
{
	/* HZ divides 1000 on every kernel ccfair meets (100, 250, 1000): round up as Linux. */
	return (m + (MSEC_PER_SEC / HZ) - 1) / (MSEC_PER_SEC / HZ);
}

static __always_inline u32 usecs_to_jiffies(u32 u)
{
	return (u + USEC_PER_JIFFY - 1) / USEC_PER_JIFFY;
}

static __always_inline u32 jiffies_to_usecs(u32 j) { return j * USEC_PER_JIFFY; }
static __always_inline u32 jiffies_to_msecs(u32 j) { return j * (MSEC_PER_SEC / HZ); }

/* include/linux/minmax.h (as statement expressions: each argument evaluated once) */
#ifndef min
#define min(a, b) ({ typeof(a) _a = (a); typeof(b) _b = (b); _a < _b ? _a : _b; })
#endif
#ifndef max
#define max(a, b) ({ typeof(a) _a = (a); typeof(b) _b = (b); _a > _b ? _a : _b; })
#endif
#define min_t(t, a, b) min((t)(a), (t)(b))
#define max_t(t, a, b) max((t)(a), (t)(b))
#define clamp(v, lo, hi) min((typeof(v))max(v, lo), hi)

/* include/net/tcp.h */
#define TCP_INFINITE_SSTHRESH 0x7fffffff
#define TCP_CA_NAME_MAX 16
#define TCP_CONG_NEEDS_ECN 0x2
#define TCP_ECN_OK 1
#define TCP_ECN_QUEUE_CWR 2
#define TCP_ECN_DEMAND_CWR 4
#define TCP_ECN_SEEN 8
#define TCP_TS_HZ 1000
#define FLAG_ECE 0x40

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk) { return (struct tcp_sock *)sk; }
static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}
static __always_inline void *inet_csk_ca(const struct sock *sk) { return (void *)inet_csk(sk)->icsk_ca_priv; }

static __always_inline u32 tcp_snd_cwnd(const struct tcp_sock *tp) { return tp->snd_cwnd; }
static __always_inline void tcp_snd_cwnd_set(struct tcp_sock *tp, u32 val) { tp->snd_cwnd = val; }

/* include/uapi/linux/tcp.h: the ca states as bits */
#define TCPF_CA_Open (1 << TCP_CA_Open)
#define TCPF_CA_Disorder (1 << TCP_CA_Disorder)
#define TCPF_CA_CWR (1 << TCP_CA_CWR)
#define TCPF_CA_Recovery (1 << TCP_CA_Recovery)
#define TCPF_CA_Loss (1 << TCP_CA_Loss)

/* is s2 <= s1 <= s3 ? */
static __always_inline bool between(u32 seq1, u32 seq2, u32 seq3) { return seq3 - seq2 >= seq1 - seq2; }

static __always_inline bool before(u32 seq1, u32 seq2) { return (s32)(seq1 - seq2) < 0; }
#define after(seq2, seq1) before(seq1, seq2)

static __always_inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tcp_snd_cwnd(tp) < tp->snd_ssthresh;
}

static __always_inline bool tcp_in_initial_slowstart(const struct tcp_sock *tp)
{
	return tp->snd_ssthresh >= TCP_INFINITE_SSTHRESH;
}

static __always_inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tp->is_cwnd_limited)
		return true;
	/* If in slow start, ensure cwnd grows to twice what was ACKed. */
	if (tcp_in_slow_start(tp))
		return tcp_snd_cwnd(tp) < 2 * tp->max_packets_out;
	return false;
}

static __always_inline u32 tcp_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* tcp_time_stamp_ms(): tcp_mstamp is the connection's clock in microseconds */
static __always_inline u32 tcp_time_stamp_ms(const struct tcp_sock *tp) { return (u32)(tp->tcp_mstamp / USEC_PER_MSEC); }

static __always_inline u32 tcp_min_rtt(const struct tcp_sock *tp) { return tp->rtt_min.s[0].v; }

/* include/linux/math64.h; BPF divides 64-bit unsigned values natively */
static __always_inline u64 div64_u64(u64 dividend, u64 divisor) { return dividend / divisor; }
static __always_inline u64 div_u64(u64 dividend, u32 divisor) { return dividend / divisor; }

/* include/asm-generic/bitops/fls64.h: the position of the most significant set bit (1..64), 0 for 0 */
static __always_inline int fls64(u64 x)
{
	int n = 64;

	if (!x)
		return 0;
	if (!(x & 0xffffffff00000000ULL)) { x <<= 32; n -= 32; }
	if (!(x & 0xffff000000000000ULL)) { x <<= 16; n -= 16; }
	if (!(x & 0xff00000000000000ULL)) { x <<= 8; n -= 8; }
	if (!(x & 0xf000000000000000ULL)) { x <<= 4; n -= 4; }
	if (!(x & 0xc000000000000000ULL)) { x <<= 2; n -= 2; }
	if (!(x & 0x8000000000000000ULL)) { n -= 1; }
	return n;
}

/* include/linux/minmax.h min_not_zero */
#define min_not_zero(x, y) ({ typeof(x) __x = (x); typeof(y) __y = (y); __x == 0 ? __y : ((__y == 0) ? __x : min(__x, __y)); })

/* icsk_ca_state, a bitfield of inet_connection_sock */
static __always_inline u8 inet_csk_ca_state(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
}

/* include/net/tcp.h tcp_current_ssthresh */
static __always_inline u32 tcp_current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if ((1 << inet_csk_ca_state(sk)) & ((1 << TCP_CA_CWR) | (1 << TCP_CA_Recovery)))
		return tp->snd_ssthresh;
	return max(tp->snd_ssthresh, ((tcp_snd_cwnd(tp) >> 1) + (tcp_snd_cwnd(tp) >> 2)));
}

/* C's signed division (truncation toward zero) through unsigned division of the magnitudes */
static __always_inline s32 sdiv32(s32 a, s32 b)
{
	u32 ua = a < 0 ? -(u32)a : (u32)a;
	u32 ub = b < 0 ? -(u32)b : (u32)b;
	u32 q = ua / ub;

	return (a < 0) != (b < 0) ? -(s32)q : (s32)q;
}

/* Kernel functions a BPF congestion control may call (net/ipv4/bpf_tcp_ca.c, kfunc set). */
extern u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, u32 ack, u32 acked) __ksym;
extern u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern u32 tcp_slow_start(struct tcp_sock *tp, u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, u32 w, u32 acked) __ksym;

/*
 * The two pieces most ports repeat from their module line by line, written once:
 *
 *   CCF_RENO_UNDO_CWND(fn)   a program fn that is the module's `.undo_cwnd = tcp_reno_undo_cwnd`
 *                            (a struct_ops member must be a BPF program, not the kfunc itself).
 *   ccf_cong_avoid_open()    the opening of tcp_reno_cong_avoid that a module's cong_avoid
 *                            starts with: nothing while cwnd is not the limit; in slow start,
 *                            tcp_slow_start() first. False when nothing is left to do (not
 *                            cwnd-limited, or slow start took every ACKed segment); otherwise
 *                            *acked is what is left for congestion avoidance.
 */
#define CCF_RENO_UNDO_CWND(fn)                                                                     \
	SEC("struct_ops/" #fn)                                                                     \
	u32 BPF_PROG(fn, struct sock *sk) { return tcp_reno_undo_cwnd(sk); }

static __always_inline bool ccf_cong_avoid_open(struct sock *sk, u32 *acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!tcp_is_cwnd_limited(sk))
		return false;
	if (tcp_in_slow_start(tp)) {
		*acked = tcp_slow_start(tp, *acked);
		if (!*acked)
			return false;
	}
	return true;
}

#endif /* CCFAIR_TCP_H */
