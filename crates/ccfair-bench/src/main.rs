//! Simulator benchmark (wall time per run and simulated data packets per wall
//! second), and a tiny driver for ad-hoc runs.
//!
//!   cargo run --release -p ccfair-bench -- table [--reps N]
//!   cargo run --release -p ccfair-bench -- one CCA_A CCA_B RATE_MBPS RTT_MS BUF_BDP [SEED]
//!   cargo run --release -p ccfair-bench -- json FILE.json
//!   cargo run --release -p ccfair-bench -- repeat N [FILE.json]  (median wall of N runs; default: S0 base)
//!   cargo run --release -p ccfair-bench -- aqm          (CoDel/PIE sojourn table)
//!   cargo run --release -p ccfair-bench -- qdisc-cost [--reps N]  (paired AQM / drop-tail wall time)
//!   cargo run --release -p ccfair-bench -- fq-fairness  (FQ-CoDel CUBIC vs BBR, 10 seeds)
//!
//! `table` prints the S0 base case (CUBIC vs BBR, 10 Mbit/s, 50 ms, 0.5 BDP,
//! 45 s) and the scaling table (rates at 2 CUBIC flows, flow counts at
//! 100 Mbit/s ... see docs/benchmarks.md) as medians over N repetitions.

use ccfair_sim::config::{FlowConfig, QdiscConfig, RunConfig};
use std::time::Instant;

fn flow(name: &str, cca: &str, rtt_ms: u64, start_ms: u64) -> FlowConfig {
    let mut f = FlowConfig::bulk(name, cca, rtt_ms * 1_000_000);
    f.start_ns = start_ms * 1_000_000;
    f
}

fn cfg(rate_bps: u64, rtt_ms: u64, buf_bdp: f64, flows: Vec<FlowConfig>, duration_s: u64, seed: u64) -> RunConfig {
    let bdp_pkts = rate_bps as f64 / 8.0 * (rtt_ms as f64 / 1000.0) / 1500.0;
    let limit = ((bdp_pkts * buf_bdp).round() as u64).max(1);
    RunConfig { seed, ..RunConfig::dumbbell(rate_bps, QdiscConfig::droptail(Some(limit), None), flows, duration_s * 1_000_000_000) }
}

/// `c` with an AQM in place of drop-tail; the AQM's limit is the drop-tail limit.
fn with_qdisc(mut c: RunConfig, kind: &str) -> RunConfig {
    let (lp, _) = c.bottleneck.as_ref().expect("a dumbbell").qdisc.limits();
    let json = format!(r#"{{"kind":"{kind}","limit_packets":{}}}"#, lp.unwrap());
    c.bottleneck.as_mut().expect("a dumbbell").qdisc = serde_json::from_str(&json).expect("qdisc json");
    c
}

/// Mean sojourn (ms) and utilization over bins [b0, b1).
fn sojourn_util(r: &ccfair_sim::result::RunResult, rate_bps: u64, b0: usize, b1: usize) -> (f64, f64) {
    let s: u64 = r.sojourn_sum_ns_per_bin[b0..b1].iter().sum();
    let n: u64 = r.sojourn_pkts_per_bin[b0..b1].iter().sum();
    let tx: u64 = r.link_tx_bytes[b0..b1].iter().sum();
    let secs = (b1 - b0) as f64 * r.bin_ns as f64 / 1e9;
    (s as f64 / n.max(1) as f64 / 1e6, tx as f64 * 8.0 / (rate_bps as f64 * secs))
}

/// AQM acceptance: mean sojourn and utilization of CoDel and PIE
/// with N long-lived CUBIC flows, 50 ms, 2 BDP; window 10-30 s of a 30 s run.
fn aqm_table() {
    println!("| qdisc | rate | flows | mean sojourn (ms) | target (ms) | ratio | utilization |");
    println!("|---|---|---|---|---|---|---|");
    for kind in ["codel", "pie"] {
        let target = if kind == "codel" { 5.0 } else { 15.0 };
        for rate in [10_000_000u64, 100_000_000] {
            for n in [1usize, 4, 16] {
                let flows = (0..n).map(|i| flow(&format!("f{i}"), "cubic", 50, i as u64 * 13)).collect();
                let c = with_qdisc(cfg(rate, 50, 2.0, flows, 30, 1), kind);
                let r = ccfair_sim::run(&c);
                let (soj, util) = sojourn_util(&r, rate, 100, 300);
                println!("| {kind} | {} Mbit/s | {n} | {soj:.2} | {target} | {:.2} | {:.3} |", rate / 1_000_000, soj / target, util);
            }
        }
    }
}

/// FQ-CoDel acceptance: CUBIC vs BBR, 10 Mbit/s, 50 ms, 2 BDP, S0
/// timing (B starts at 5 s, window 10-45 s), fness(A, B) mean over 10 seeds,
/// both start orders, FQ-CoDel vs drop-tail.
fn fq_fairness_table() {
    let fness = |a: f64, b: f64| if b >= a { 1.0 - a / b } else { b / a - 1.0 };
    println!("| qdisc | A first | B second | mean fness(cubic, bbr) | min | max |");
    println!("|---|---|---|---|---|---|");
    for kind in ["droptail", "fq_codel", "fq_drr"] {
        for (a, b) in [("cubic", "bbr"), ("bbr", "cubic")] {
            let mut v = vec![];
            for seed in 1..=10u64 {
                let mut fa = flow("A", a, 50, 0);
                fa.start_jitter_ns = 100_000_000; // seeds differ by the start times (S0: repeated runs)
                let mut fb = flow("B", b, 50, 5000);
                fb.start_jitter_ns = 100_000_000;
                let mut c = cfg(10_000_000, 50, 2.0, vec![fa, fb], 45, seed);
                if kind != "droptail" {
                    c = with_qdisc(c, kind);
                }
                let r = ccfair_sim::run(&c);
                let bytes = |i: usize| r.flows[i].delivered_bytes[100..450].iter().sum::<u64>() as f64;
                // fness of the (cubic, bbr) pair whichever starts first
                let (cu, bb) = if a == "cubic" { (bytes(0), bytes(1)) } else { (bytes(1), bytes(0)) };
                v.push(fness(cu, bb));
            }
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            println!("| {kind} | {a} | {b} | {mean:+.3} | {min:+.3} | {max:+.3} |");
        }
    }
}

/// Paired cost of an AQM against drop-tail on the S0 base case (0.5 and 2
/// BDP): runs alternate (drop-tail, AQM, drop-tail, ...) so that load
/// drifts on a shared machine hit both alike; prints the median of the
/// per-pair wall-time ratios.
fn qdisc_cost(reps: usize) {
    println!("| scenario | median drop-tail wall (ms) | median AQM wall (ms) | median paired ratio AQM / drop-tail |");
    println!("|---|---|---|---|");
    for kind in ["fq_codel", "codel", "pie", "fq_drr"] {
        for (label, buf) in [("0.5BDP", 0.5), ("2BDP", 2.0)] {
            let dt = cfg(10_000_000, 50, buf, vec![flow("A", "cubic", 50, 0), flow("B", "bbr", 50, 5000)], 45, 1);
            let aqm = with_qdisc(dt.clone(), kind);
            let _ = (ccfair_sim::run(&dt), ccfair_sim::run(&aqm)); // warm-up
            let (mut wd, mut wa, mut ratio) = (vec![], vec![], vec![]);
            for _ in 0..reps {
                let t = Instant::now();
                let _ = ccfair_sim::run(&dt);
                let a = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let _ = ccfair_sim::run(&aqm);
                let b = t.elapsed().as_secs_f64();
                wd.push(a);
                wa.push(b);
                ratio.push(b / a);
            }
            let med = |v: &mut Vec<f64>| {
                v.sort_by(|x, y| x.partial_cmp(y).unwrap());
                v[v.len() / 2]
            };
            println!("| S0 {label} {kind} | {:.2} | {:.2} | {:.2} |", med(&mut wd) * 1e3, med(&mut wa) * 1e3, med(&mut ratio));
        }
    }
}

fn s0(seed: u64) -> RunConfig {
    cfg(10_000_000, 50, 0.5, vec![flow("A", "cubic", 50, 0), flow("B", "bbr", 50, 5000)], 45, seed)
}

struct Measure {
    wall_ms: f64,
    pkts_per_s: f64,
    pkts: u64,
    events: u64,
}

fn measure(c: &RunConfig, reps: usize) -> Measure {
    let mut walls = Vec::new();
    // Warm-up run; then enough repetitions for ~1 s of measurement (at least `reps`).
    let t = Instant::now();
    let _ = ccfair_sim::run(c);
    let one = t.elapsed().as_secs_f64();
    let reps = reps.max((1.0 / one.max(1e-6)).ceil() as usize).min(201);
    let mut pkts = 0;
    let mut events = 0;
    for _ in 0..reps {
        let t = Instant::now();
        let r = ccfair_sim::run(c);
        walls.push(t.elapsed().as_secs_f64());
        pkts = r.data_packets;
        events = r.events;
    }
    walls.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let med = walls[walls.len() / 2];
    Measure { wall_ms: med * 1e3, pkts_per_s: pkts as f64 / med, pkts, events }
}

fn print_row(label: &str, m: &Measure, base: f64) {
    println!(
        "| {label:<38} | {:>9.2} | {:>11} | {:>10.2} M | {:>5.2} | {:>11} |",
        m.wall_ms,
        m.pkts,
        m.pkts_per_s / 1e6,
        m.pkts_per_s / base,
        m.events
    );
}

fn table(reps: usize) {
    println!("median of at least {reps} runs (more for short runs: ~1 s of runs per row, after one warm-up run);");
    println!("ratio = data packets per wall second relative to the S0 base case\n");
    println!("| scenario                               | wall (ms) | data pkts   | pkts/wall-s  | ratio | events      |");
    println!("|----------------------------------------|-----------|-------------|--------------|-------|-------------|");
    let base = measure(&s0(1), reps);
    print_row("S0 base: cubic vs bbr 10M 50ms 0.5BDP 45s", &base, base.pkts_per_s);
    let b = base.pkts_per_s;
    let s0_2bdp = cfg(10_000_000, 50, 2.0, vec![flow("A", "cubic", 50, 0), flow("B", "bbr", 50, 5000)], 45, 1);
    let dt = measure(&s0_2bdp, reps);
    print_row("S0 at 2 BDP, drop-tail", &dt, b);
    for kind in ["fq_codel", "codel", "pie", "fq_drr"] {
        for (label, c) in [("0.5BDP", s0(1)), ("2BDP", s0_2bdp.clone())] {
            let m = measure(&with_qdisc(c, kind), reps);
            let base_wall = if label == "2BDP" { dt.wall_ms } else { base.wall_ms };
            print_row(&format!("S0 {label} {kind} (x{:.2} drop-tail wall)", m.wall_ms / base_wall), &m, b);
        }
    }
    for (rate, label, dur) in [
        (10_000_000u64, "10 Mbit/s", 45u64),
        (100_000_000, "100 Mbit/s", 45),
        (1_000_000_000, "1 Gbit/s", 10),
        (10_000_000_000, "10 Gbit/s", 3),
    ] {
        let c = cfg(rate, 50, 1.0, vec![flow("A", "cubic", 50, 0), flow("B", "cubic", 50, 0)], dur, 1);
        let m = measure(&c, reps);
        print_row(&format!("2 cubic, {label}, 50ms, 1BDP, {dur}s"), &m, b);
    }
    for (n, rate, dur) in [(2usize, 100_000_000u64, 20u64), (20, 100_000_000, 20), (200, 1_000_000_000, 5), (2000, 10_000_000_000, 2)] {
        let flows = (0..n).map(|i| flow(&format!("f{i}"), "cubic", 50, (i as u64 * 7) % 1000)).collect();
        let c = cfg(rate, 50, 1.0, flows, dur, 1);
        let m = measure(&c, reps);
        print_row(&format!("{n} cubic, {} Mbit/s, 50ms, 1BDP, {dur}s", rate / 1_000_000), &m, b);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("table") => {
            let reps = args.iter().position(|a| a == "--reps").and_then(|i| args.get(i + 1)).and_then(|s| s.parse().ok()).unwrap_or(5);
            table(reps);
        }
        Some("one") => {
            let a = &args[2];
            let b = &args[3];
            let rate: u64 = args[4].parse().unwrap();
            let rtt: u64 = args[5].parse().unwrap();
            let buf: f64 = args[6].parse().unwrap();
            let seed: u64 = args.get(7).and_then(|s| s.parse().ok()).unwrap_or(1);
            let c = cfg(rate * 1_000_000, rtt, buf, vec![flow("A", a, rtt, 0), flow("B", b, rtt, 5000)], 45, seed);
            let r = ccfair_sim::run(&c);
            let bins = |v: &Vec<u64>| v[100..450].iter().sum::<u64>();
            let (ba, bb) = (bins(&r.flows[0].delivered_bytes), bins(&r.flows[1].delivered_bytes));
            let link: u64 = r.link_tx_bytes[100..450].iter().sum();
            println!(
                "A {a}: {:.2} Mbit/s rtx {} rto {} | B {b}: {:.2} Mbit/s rtx {} rto {} | util {:.3} | share B {:.3} | wall {:.1} ms pkts {}",
                ba as f64 * 8.0 / 35e6,
                r.flows[0].retransmissions,
                r.flows[0].rto_count,
                bb as f64 * 8.0 / 35e6,
                r.flows[1].retransmissions,
                r.flows[1].rto_count,
                link as f64 * 8.0 / (rate as f64 * 1e6 * 35.0),
                bb as f64 / (ba + bb) as f64,
                r.wall_ns as f64 / 1e6,
                r.data_packets
            );
        }
        Some("aqm") => aqm_table(),
        Some("qdisc-cost") => {
            let reps = args.iter().position(|a| a == "--reps").and_then(|i| args.get(i + 1)).and_then(|s| s.parse().ok()).unwrap_or(31);
            qdisc_cost(reps);
        }
        Some("fq-fairness") => fq_fairness_table(),
        Some("repeat") => {
            // For A/B timing and profiling (perf record): N runs of one config
            // (the S0 base case unless a RunConfig JSON file is given).
            let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
            let c = match args.get(3) {
                Some(path) => RunConfig::from_json(&std::fs::read_to_string(path).expect("read file")).unwrap_or_else(|e| {
                    eprintln!("error: {e}");
                    std::process::exit(2)
                }),
                None => s0(1),
            };
            let mut walls = Vec::with_capacity(n);
            let mut pkts = 0;
            for _ in 0..n {
                let t = Instant::now();
                let r = ccfair_sim::run(&c);
                walls.push(t.elapsed().as_secs_f64());
                pkts = r.data_packets;
            }
            walls.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let med = walls[walls.len() / 2];
            println!(
                "runs {n} median {:.3} ms min {:.3} ms data pkts {pkts} {:.2} M pkts/s",
                med * 1e3,
                walls[0] * 1e3,
                pkts as f64 / med / 1e6
            );
            #[cfg(feature = "event-counts")]
            print_event_counts(n as u64 * pkts);
        }
        Some("json") => {
            let s = std::fs::read_to_string(&args[2]).expect("read file");
            let c = RunConfig::from_json(&s).unwrap_or_else(|e| {
                eprintln!("error: {e}");
                std::process::exit(2)
            });
            let r = ccfair_sim::run(&c);
            #[cfg(feature = "slot-log")]
            if let Ok(path) = std::env::var("CCFAIR_SLOT_LOG") {
                ccfair_sim::slot_log::write_csv(&path).expect("write the slot log");
            }
            println!("{}", serde_json::to_string(&r).unwrap());
        }
        _ => {
            eprintln!("usage: ccfair-bench table [--reps N] | aqm | fq-fairness | qdisc-cost [--reps N] | one CCA_A CCA_B RATE_MBPS RTT_MS BUF_BDP [SEED] | json FILE | repeat N [FILE]");
            std::process::exit(2);
        }
    }
}

/// The events of the runs by kind, per data packet (`data_packets`: of all
/// the runs), with the feature `event-counts`.
#[cfg(feature = "event-counts")]
fn print_event_counts(data_packets: u64) {
    println!("| event | count | per data packet |\n|---|---|---|");
    for (name, n) in ccfair_sim::event_counts::take() {
        println!("| {name} | {n} | {:.3} |", n as f64 / data_packets as f64);
    }
}
