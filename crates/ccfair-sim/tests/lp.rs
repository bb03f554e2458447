//! TCP-LP closed loop (Kuzmanovic & Knightly, INFOCOM 2003: TCP-LP uses only
//! the capacity TCP leaves unused; cc/lp.rs follows Linux tcp_lp.c): it
//! yields to Reno through a shared drop-tail bottleneck; alone it does not
//! take the idle link, as Linux's module does not (measured with a BPF port
//! of tcp_lp.c on Linux 6.18 TCP, docs/fidelity.md "TCP-LP").
//! 10 Mbit/s, 50 ms, 1 BDP (42 packets), 45 s, window 10-45 s; TCP
//! timestamps without offsets (tcp_timestamps = 2, as the BPF port's runs)
//! unless a test says otherwise.

use ccfair_sim::config::{FlowConfig, QdiscConfig, RunConfig};

fn flow(name: &str, cca: &str, start_s: u64) -> FlowConfig {
    let mut f = FlowConfig::bulk(name, cca, 50_000_000);
    f.start_ns = start_s * 1_000_000_000;
    f
}

fn cfg(flows: Vec<FlowConfig>) -> RunConfig {
    let c = RunConfig::dumbbell(10_000_000, QdiscConfig::droptail(Some(42), None), flows, 45_000_000_000);
    RunConfig { tcp_timestamp_offsets: false, ..c }
}

/// Payload bytes per flow in 10-45 s (bins of 100 ms).
fn window_bytes(r: &ccfair_sim::result::RunResult) -> Vec<u64> {
    r.flows.iter().map(|f| f.delivered_bytes[100..450].iter().sum()).collect()
}

/// TCP-LP yields on average, not in every run: Linux's module now and then
/// "escapes" into Reno for seconds (its remote-HZ estimate above TCP_TS_HZ,
/// docs/linux-ports.md "TCP-LP"): on the testbed's Linux 6.18 LP took 0.01
/// of the link against Reno once in each order, and 0.01-0.36 against CUBIC
/// at this point (21 runs, 16 above 0.1; data/fidelity/kernel). So the
/// paper's claim is checked on LP's mean share over ten seeds.
const SEEDS: u64 = 10;

#[test]
fn tcp_lp_yields_to_reno_at_one_bdp_on_average_over_seeds() {
    // LP first, Reno joins at 5 s; and the other order.
    for (a, b, lp_idx) in [("lp", "reno", 0), ("reno", "lp", 1)] {
        let mut shares = 0.0;
        for seed in 1..=SEEDS {
            let r = ccfair_sim::run(&RunConfig { seed, ..cfg(vec![flow("A", a, 0), flow("B", b, 5)]) });
            let w = window_bytes(&r);
            shares += w[lp_idx] as f64 / w.iter().sum::<u64>() as f64;
            let util = w.iter().sum::<u64>() as f64 * 8.0 / 35.0 / 10e6 * (1500.0 / 1448.0);
            assert!(util > 0.9, "{a} then {b}, seed {seed}: utilization {util:.3}");
        }
        let share = shares / SEEDS as f64;
        assert!(share < 0.2, "{a} then {b}: TCP-LP's mean share {share:.3}");
    }
}

/// With Linux's default tcp_timestamps = 1 each end adds its own random offset
/// (Documentation/networking/ip-sysctl.rst; secure_tcp_ts_off): the owd sample
/// TSval - TSecr carries the receiver's offset (the sender's own is taken off
/// the TSecr it reads, tcp_fast_parse_options). Where that is above
/// 2^29 ms (with 2^29 ms to spare below 2^32), owd << 3 overflows sowd and
/// tcp_lp.c never indicates: LP runs as Reno (docs/linux-ports.md: CUBIC 0.467
/// and 0.514 of the link against the kernel's LP with offsets).
#[test]
fn tcp_lp_with_random_timestamp_offsets_runs_as_reno_when_their_difference_overflows_sowd() {
    let overflows = |seed: u64| {
        let mut t = ccfair_sim::cc::TcpCc::new(1448, 1500, 10);
        t.draw_ts_clocks(seed, 0, true, ccfair_sim::cc::host_clock_epoch_ns(seed, None, true));
        let d = t.peer_ts_offset_ms;
        (1 << 29..=u32::MAX - (1 << 29)).contains(&d)
    };
    let seeds: Vec<u64> = (1..).filter(|&s| overflows(s)).take(2).collect();
    for seed in seeds {
        let c = RunConfig { seed, tcp_timestamp_offsets: true, ..cfg(vec![flow("A", "lp", 0), flow("B", "reno", 5)]) };
        let w = window_bytes(&ccfair_sim::run(&c));
        let share = w[0] as f64 / w.iter().sum::<u64>() as f64;
        assert!(share > 0.3, "seed {seed}: TCP-LP share {share:.3}");
    }
}

/// Not reproduced, because Linux's module does not do it either
/// (docs/fidelity.md "TCP-LP"): alone, TCP-LP reaches 0.019 of the link here,
/// and a BPF port of tcp_lp.c on the testbed's Linux 6.18 TCP (testbed,
/// same path, tcp_timestamps = 2) 0.017. Its first owd sample is an
/// indication (tcp_lp_pkts_acked: owd_min = owd_max), its slow start's own
/// queue a second within the inference time (cwnd 1); at cwnd 1 every owd
/// sample carries the receiver's 40 ms delayed-ACK wait, and after each
/// indication the owd range restarts at [sowd, 2 sowd], so cwnd stays at 1-3.
/// Criterion (ToN 2006 abstract): "both single and aggregate TCP-LP flows are
/// able to successfully utilize excess network bandwidth".
#[test]
#[ignore = "fails as Linux's tcp_lp does: utilization 0.019 (kernel, BPF port: 0.017); docs/fidelity.md TCP-LP"]
fn tcp_lp_alone_takes_the_idle_link() {
    let util = alone_utilization(true);
    // AIMD halving from a full pipe without a standing queue averages 3/4 of the link.
    assert!(util > 0.75, "utilization {util:.3}");
}

fn alone_utilization(delayed_ack: bool) -> f64 {
    let mut f = flow("A", "lp", 0);
    f.delayed_ack = delayed_ack;
    let r = ccfair_sim::run(&cfg(vec![f]));
    window_bytes(&r)[0] as f64 * 8.0 / 35.0 / 10e6 * (1500.0 / 1448.0)
}

/// Linux `tcp_lp_pkts_acked` with delayed ACKs: a lone segment's ACK leaves
/// the receiver 40 ms after it arrived, and its TSval (the ACK's send time)
/// makes that wait part of the owd sample (66 ms on a 26 ms forward path).
/// At cwnd 1 (after two indications within the inference time) these
/// samples keep sowd above the owd range restarted around the lower ones,
/// so LP alone stays near one segment per RTT: 0.019 of the link here,
/// 0.017 for the BPF port of tcp_lp.c on Linux 6.18 TCP (docs/fidelity.md).
#[test]
fn tcp_lp_alone_is_held_near_one_segment_per_rtt_by_delayed_ack_owd_samples() {
    let util = alone_utilization(true);
    assert!(util < 0.05, "utilization {util:.3}");
}
