// SPDX-License-Identifier: GPL-2.0
/* Linux BBR's long-term (policer) sampling as it runs (Linux 6.18, CO-RE). At each segment a BBR socket receives
 * (tracepoint tcp:tcp_probe, which tcp_rcv_established fires before it processes the segment,
 * so it reads the state the previous ACK left): struct bbr (net/ipv4/tcp_bbr.c: lt_is_sampling,
 * lt_rtt_cnt, lt_use_bw, lt_bw, lt_last_delivered / lost / stamp, round_start, rtt_cnt),
 * tp->lost, tp->delivered, tp->delivered_mstamp and the SACK scoreboard counts; one event when
 * any long-term field or tp->lost changed since the socket's last segment, or round_start is set
 * (built with -DEVERY_SEGMENT: one event at every segment).
 * Read by bench/bbr_lt_probe/run.py. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

struct ev {
	u64 kind; /* 1: tcp_probe */
	u64 t_ns, sk, netns, ports; /* ports: local << 16 | remote */
	s64 losses, app_limited, rs_delivered, interval_us, acked_sacked; /* 0: no rate sample here */
	u64 tp_lost, tp_delivered, delivered_mstamp, ca_state;
	u64 lost_out, sacked_out, retrans_out, packets_out, snd_cwnd;
	u64 pre_word, post_word, pre_lt_bw, post_lt_bw;
	u64 pre_last_delivered, post_last_delivered, pre_last_lost, post_last_lost;
	u64 pre_last_stamp, post_last_stamp, rtt_cnt, gains_word;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} events SEC(".maps");

struct last {
	struct bbr b;
	u32 lost;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u64);
	__type(value, struct last);
} pre SEC(".maps");

static __always_inline void read_bbr(struct sock *sk, struct bbr *b)
{
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	bpf_probe_read_kernel(b, sizeof(*b), &icsk->icsk_ca_priv);
}

/* The u32 of struct bbr's bitfields after cycle_mstamp: mode (bits 0-2), round_start (7),
 * lt_is_sampling (23), lt_rtt_cnt (24-30), lt_use_bw (31); and the one after lt_last_lost
 * (pacing_gain, cwnd_gain, ...). */
static __always_inline u32 word(struct bbr *b) { return *(u32 *)((char *)b + offsetof(struct bbr, cycle_mstamp) + 8); }
static __always_inline u32 gains(struct bbr *b) { return *(u32 *)((char *)&b->lt_last_lost + 4); }

static __always_inline void fill_tp(struct ev *e, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	e->t_ns = bpf_ktime_get_ns();
	e->sk = (u64)sk;
	e->netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	e->ports = ((u64)BPF_CORE_READ(sk, __sk_common.skc_num) << 16) | bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	e->tp_lost = BPF_CORE_READ(tp, lost);
	e->tp_delivered = BPF_CORE_READ(tp, delivered);
	e->delivered_mstamp = BPF_CORE_READ(tp, delivered_mstamp);
	e->lost_out = BPF_CORE_READ(tp, lost_out);
	e->sacked_out = BPF_CORE_READ(tp, sacked_out);
	e->retrans_out = BPF_CORE_READ(tp, retrans_out);
	e->packets_out = BPF_CORE_READ(tp, packets_out);
	e->snd_cwnd = BPF_CORE_READ(tp, snd_cwnd);
	e->ca_state = BPF_CORE_READ_BITFIELD_PROBED((struct inet_connection_sock *)sk, icsk_ca_state);
}


SEC("tp_btf/tcp_probe")
int BPF_PROG(probe, struct sock *sk, struct sk_buff *skb)
{
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	const struct tcp_congestion_ops *ops = BPF_CORE_READ(icsk, icsk_ca_ops);
	char name[4] = {};
	u64 key = (u64)sk;
	struct last now = {}, *p;
	struct ev *e;

	bpf_probe_read_kernel(name, sizeof(name), &ops->name);
	if (name[0] != 'b' || name[1] != 'b' || name[2] != 'r' || name[3] != 0)
		return 0;
	read_bbr(sk, &now.b);
	now.lost = BPF_CORE_READ((struct tcp_sock *)sk, lost);
	p = bpf_map_lookup_elem(&pre, &key);
#ifndef EVERY_SEGMENT
	if (p) {
		u32 pw = word(&p->b), qw = word(&now.b);
		if (!(qw & (1u << 7)) && (pw >> 23) == (qw >> 23) && p->b.lt_bw == now.b.lt_bw &&
		    p->b.lt_last_delivered == now.b.lt_last_delivered && p->lost == now.lost)
			goto store;
	}
#endif
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		goto store;
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = 1;
	fill_tp(e, sk);
	if (p) {
		e->pre_word = word(&p->b);
		e->pre_lt_bw = p->b.lt_bw;
		e->pre_last_delivered = p->b.lt_last_delivered;
		e->pre_last_lost = p->b.lt_last_lost;
		e->pre_last_stamp = p->b.lt_last_stamp;
	}
	e->post_word = word(&now.b);
	e->post_lt_bw = now.b.lt_bw;
	e->post_last_delivered = now.b.lt_last_delivered;
	e->post_last_lost = now.b.lt_last_lost;
	e->post_last_stamp = now.b.lt_last_stamp;
	e->rtt_cnt = now.b.rtt_cnt;
	e->gains_word = gains(&now.b);
	bpf_ringbuf_submit(e, 0);
store:
	bpf_map_update_elem(&pre, &key, &now, BPF_ANY);
	return 0;
}
