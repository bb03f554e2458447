//! A bottleneck's outages (`bottleneck.outages_ns`, src/outages.rs) in whole runs: the link
//! sends nothing over each, its frames wait, its service clock stops. Checked against
//! conservation (a backlogged link loses exactly the outage's length of service), against the
//! same run without outages (an outage with nothing to send changes no bit), and for the
//! run's determinism.

use ccfair_sim::config::{FlowConfig, QdiscConfig, RunConfig};
use ccfair_sim::error::SimError;
use ccfair_sim::result::RunResult;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
/// 1500-byte frames (no L2 overhead) at 10 Mbit/s.
const RATE_BPS: u64 = 10_000_000;
const FRAME_NS: u64 = 1_200_000;

fn run(cfg: &RunConfig) -> serde_json::Value {
    cfg.validate().unwrap();
    let mut r: RunResult = ccfair_sim::run(cfg);
    r.wall_ns = 0;
    serde_json::to_value(&r).unwrap()
}

fn with_outages(mut cfg: RunConfig, outages_ns: &[[u64; 2]]) -> RunConfig {
    cfg.bottleneck.as_mut().unwrap().outages_ns = outages_ns.to_vec();
    cfg
}

fn sum(v: &serde_json::Value) -> u64 {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum()
}

/// One CUBIC flow into a drop-tail queue of 5 000 packets at 10 Mbit/s, 20 ms: once slow start has
/// filled it the queue never empties (its halved window is still far above the BDP of 17 packets).
fn backlogged(duration_ns: u64) -> RunConfig {
    let mut f = FlowConfig::bulk("a", "cubic", 20 * MS);
    f.rwnd_max_pkts = Some(100_000);
    RunConfig { seed: 3, ..RunConfig::dumbbell(RATE_BPS, QdiscConfig::droptail(Some(5_000), None), vec![f], duration_ns) }
}

#[test]
fn a_backlogged_bottleneck_sends_an_outages_length_times_its_rate_fewer_bytes() {
    // Conservation: with the queue never empty, departures are one frame time apart but for the
    // outage, which shifts every later one by its length L. Over the run the link then sends
    // exactly L x rate / 8 fewer bytes when L is a whole number of frame times (25 here), at
    // any phase of the outage against the departures.
    let plain = run(&backlogged(6 * S));
    for start_ns in [2 * S, 2 * S + FRAME_NS / 3, 4 * S + 777_777] {
        let l_ns = 25 * FRAME_NS;
        let out = run(&with_outages(backlogged(6 * S), &[[start_ns, l_ns]]));
        for r in [&plain, &out] {
            let q = r["queue_packets"].as_array().unwrap();
            assert!(q[100..].iter().all(|x| x.as_u64().unwrap() > 0), "the queue stays backlogged from 1 s on");
        }
        let lost = sum(&plain["link_tx_bytes"]) - sum(&out["link_tx_bytes"]);
        assert_eq!(lost, l_ns * RATE_BPS / 8 / S, "outage at {start_ns} ns");
    }
}

#[test]
fn an_outage_while_nothing_is_sent_changes_no_result_bit() {
    // The flow starts at 1 s; the link is idle, its bucket full, over the outages before.
    let mut f = FlowConfig::bulk("a", "cubic", 20 * MS);
    f.start_ns = S;
    f.host_jitter_ns = 100_000;
    let base = RunConfig { seed: 5, ..RunConfig::dumbbell(RATE_BPS, QdiscConfig::droptail(Some(30), None), vec![f], 4 * S) };
    let out = with_outages(base.clone(), &[[100 * MS, 300 * MS], [600 * MS, 5 * MS]]);
    assert_eq!(run(&out), run(&base));
}

#[test]
fn frames_waiting_out_an_outage_are_held_not_dropped() {
    // A window-limited flow (64 packets) into a queue of 1 000: an outage of 150 ms drops nothing,
    // and the packets it held waited at least its length in the queue.
    let mut f = FlowConfig::bulk("a", "reno", 20 * MS);
    f.rwnd_init_pkts = 64;
    f.rwnd_max_pkts = Some(64);
    let base = RunConfig { seed: 2, ..RunConfig::dumbbell(RATE_BPS, QdiscConfig::droptail(Some(1_000), None), vec![f], 3 * S) };
    let out = run(&with_outages(base, &[[S, 150 * MS]]));
    assert_eq!(out["flows"][0]["drops"].as_u64(), Some(0));
    let longest_ns =
        out["sojourn_bin"].as_array().unwrap().iter().map(|b| b.as_u64().unwrap()).max().unwrap() * out["sojourn_bin_ns"].as_u64().unwrap();
    assert!(longest_ns + out["sojourn_bin_ns"].as_u64().unwrap() > 150 * MS, "longest sojourn {longest_ns} ns");
}

#[test]
fn the_same_seed_and_outages_give_the_same_bits() {
    let mut f = FlowConfig::bulk("a", "cubic", 30 * MS);
    f.host_jitter_ns = 100_000;
    let g = FlowConfig { name: "b".into(), host_jitter_ns: 100_000, ..FlowConfig::bulk("b", "bbr", 30 * MS) };
    let cfg = RunConfig { seed: 9, ..RunConfig::dumbbell(RATE_BPS, QdiscConfig::droptail(Some(40), None), vec![f, g], 5 * S) };
    let cfg = with_outages(cfg, &[[S, 3 * MS], [2 * S, 20 * MS], [2 * S + 20 * MS, 7 * MS]]);
    assert_eq!(run(&cfg), run(&cfg));
}

#[test]
fn outages_out_of_order_overlapping_or_empty_are_refused_naming_the_entry() {
    let base = RunConfig::dumbbell(RATE_BPS, QdiscConfig::droptail(Some(40), None), vec![FlowConfig::bulk("a", "cubic", 30 * MS)], S);
    for (outages, field) in [
        (vec![[2 * MS, MS], [MS, MS]], "bottleneck.outages.1"),
        (vec![[2 * MS, 5 * MS], [4 * MS, MS]], "bottleneck.outages.1"),
        (vec![[2 * MS, 0]], "bottleneck.outages.0"),
    ] {
        let json = serde_json::to_string(&with_outages(base.clone(), &outages)).unwrap();
        match RunConfig::from_json(&json) {
            Err(SimError::Invalid { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{outages:?}: expected a refusal naming {field}, got {other:?}"),
        }
    }
}
