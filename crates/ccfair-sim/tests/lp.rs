//! TCP-LP closed loop (Kuzmanovic & Knightly, INFOCOM 2003: TCP-LP uses only
//! the capacity TCP leaves unused): it yields to Reno through a shared
//! drop-tail bottleneck, and takes the whole link when alone.
//! 10 Mbit/s, 50 ms, 1 BDP (42 packets), 45 s, window 10-45 s.

use ccfair_sim::config::{FlowConfig, QdiscConfig, RunConfig};

fn flow(name: &str, cca: &str, start_s: u64) -> FlowConfig {
    let mut f = FlowConfig::bulk(name, cca, 50_000_000);
    f.start_ns = start_s * 1_000_000_000;
    f
}

fn cfg(flows: Vec<FlowConfig>) -> RunConfig {
    RunConfig::dumbbell(10_000_000, QdiscConfig::Droptail { limit_packets: Some(42), limit_bytes: None }, flows, 45_000_000_000)
}

/// Payload bytes per flow in 10-45 s (bins of 100 ms).
fn window_bytes(r: &ccfair_sim::result::RunResult) -> Vec<u64> {
    r.flows.iter().map(|f| f.delivered_bytes[100..450].iter().sum()).collect()
}

#[test]
fn tcp_lp_yields_to_reno_at_one_bdp() {
    // LP first (it holds the link), Reno joins at 5 s; and the other order.
    for (a, b, lp_idx) in [("lp", "reno", 0), ("reno", "lp", 1)] {
        let r = ccfair_sim::run(&cfg(vec![flow("A", a, 0), flow("B", b, 5)]));
        let w = window_bytes(&r);
        let share = w[lp_idx] as f64 / w.iter().sum::<u64>() as f64;
        assert!(share < 0.2, "{a} then {b}: TCP-LP share {share:.3}");
        let util = w.iter().sum::<u64>() as f64 * 8.0 / 35.0 / 10e6 * (1500.0 / 1448.0);
        assert!(util > 0.9, "{a} then {b}: utilization {util:.3}");
    }
}

/// Known failure (docs/fidelity.md, "TCP-LP"): alone, TCP-LP reaches 0.013
/// of the link here. Its first slow-start bursts queue at the bottleneck and
/// give two indications within the inference time (cwnd 12 -> 7 -> 1); at
/// cwnd 1 every one-way delay sample includes the receiver's 40 ms delayed-ACK
/// wait, so the smoothed delay settles above the threshold and every ACK is a
/// new indication: cwnd stays 1. Criterion (ToN 2006 abstract): "both single
/// and aggregate TCP-LP flows are able to successfully utilize excess network
/// bandwidth".
#[test]
#[ignore = "fails: utilization 0.013 (issue 13, docs/fidelity.md TCP-LP)"]
fn tcp_lp_alone_takes_the_idle_link() {
    let r = ccfair_sim::run(&cfg(vec![flow("A", "lp", 0)]));
    let util = window_bytes(&r)[0] as f64 * 8.0 / 35.0 / 10e6 * (1500.0 / 1448.0);
    // AIMD halving from a full pipe without a standing queue averages 3/4 of the link.
    assert!(util > 0.75, "utilization {util:.3}");
}
