//! Tests of rrmqs.rs (kept apart so the algorithm file reads as the algorithm).
use super::*;
use crate::packet::Kind;

fn cfg(limit: u64, cp: u64, cf: u32, p: f64, feedback: Feedback) -> RrmqsConfig {
    let mut c: RrmqsConfig = serde_json::from_str(&format!(r#"{{"limit_packets": {limit}}}"#)).unwrap();
    c.measure_limit_packets = cp;
    c.measure_flows = cf;
    c.p = p;
    c.feedback = feedback;
    c
}

fn pkt(flow: u32, class: u16) -> Packet {
    let mut p = Packet::new(flow, Kind::Data, 1500);
    p.set_cca_class(class);
    p
}

fn drain(q: &mut Rrmqs, now: TimeNs) -> Vec<u32> {
    let mut out = vec![];
    let mut d = vec![];
    while let Some(p) = q.dequeue(now, &mut d) {
        out.push(p.flow);
    }
    out
}

#[test]
fn first_cf_new_flows_of_a_class_are_pinned_others_go_to_main() {
    let mut q = Rrmqs::new(&cfg(100, 10, 2, 0.0, Feedback::Off), 1);
    q.set_classes(2);
    for f in 0..4 {
        q.enqueue(pkt(f, 0), 0).unwrap();
    }
    q.enqueue(pkt(9, 1), 0).unwrap(); // class 1 has its own slots
    assert_eq!(q.meas[0].iter().map(|p| p.flow).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(q.meas[1].len(), 1);
    assert_eq!(q.main_pkts, 2);
    // Pinned flows always go to their measuring queue; main flows stay in main.
    q.enqueue(pkt(1, 0), 1).unwrap();
    q.enqueue(pkt(3, 0), 1).unwrap();
    assert_eq!(q.meas[0].len(), 3);
    assert_eq!(q.main_pkts, 3);
    // A finished pinned flow frees its slot for the next *new* flow only.
    q.flow_finished(0, 2);
    q.enqueue(pkt(2, 0), 3).unwrap(); // seen before: main
    q.enqueue(pkt(5, 0), 3).unwrap(); // new: pinned
    assert_eq!(q.meas[0].back().unwrap().flow, 5);
    assert_eq!(q.main[0].back().unwrap().flow, 2);
    let m = q.take_meter(3).unwrap();
    assert_eq!(m.pinned_flow, vec![0, 1, 9, 5]);
    assert_eq!(m.released_ns, vec![2, u64::MAX, u64::MAX, u64::MAX]);
}

#[test]
fn idle_pins_are_released_after_the_timeout() {
    let mut c = cfg(100, 10, 1, 0.0, Feedback::Off);
    c.pin_timeout_ns = 600_000_000;
    let mut q = Rrmqs::new(&c, 1);
    q.enqueue(pkt(0, 0), 0).unwrap();
    q.enqueue(pkt(1, 0), 0).unwrap(); // no slot: main
    q.enqueue(pkt(2, 0), 1_000_000_000).unwrap(); // window 1 closed at 1 s: pin 0 released at 0.6 s
    assert_eq!(q.meas[0].back().unwrap().flow, 2);
    assert_eq!(q.log.released_ns[0], 600_000_000);
}

#[test]
fn capacity_limits_cp_and_main_limit_tail_drop() {
    let mut q = Rrmqs::new(&cfg(3, 2, 1, 0.0, Feedback::Off), 1);
    assert!(q.enqueue(pkt(0, 0), 0).is_ok());
    assert!(q.enqueue(pkt(0, 0), 0).is_ok());
    let e = q.enqueue(pkt(0, 0), 0).unwrap_err();
    assert_eq!(e.1, DropReason::Overflow);
    for _ in 0..3 {
        assert!(q.enqueue(pkt(1, 0), 0).is_ok());
    }
    assert_eq!(q.enqueue(pkt(1, 0), 0).unwrap_err().1, DropReason::Overflow);
    assert_eq!(q.len_packets(), 5);
    assert_eq!(q.len_bytes(), 5 * 1500);
}

#[test]
fn measuring_set_is_served_first_with_probability_p() {
    let p = 1.0 / 51.0;
    let mut q = Rrmqs::new(&cfg(1_000_000, 1_000_000, 1, p, Feedback::Off), 42);
    let n = 100_000u64;
    // Flow 0 is pinned (measuring set), flow 1 goes to main; keep both backlogged.
    for _ in 0..n + 10 {
        q.enqueue(pkt(0, 0), 0).unwrap();
        q.enqueue(pkt(1, 0), 0).unwrap();
    }
    let mut d = vec![];
    let meas = (0..n).filter(|_| q.dequeue(0, &mut d).unwrap().flow == 0).count() as f64;
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    assert!((meas - mean).abs() < 4.0 * sd, "{meas} measuring-first of {n}, expected {mean} +- {sd}");
}

#[test]
fn round_robin_over_measuring_queues_skips_empty_ones_and_falls_back_to_main() {
    let mut q = Rrmqs::new(&cfg(100, 10, 1, 1.0, Feedback::Off), 1);
    q.set_classes(4);
    // Classes 0 and 2 backlogged (flows 10, 12), classes 1 and 3 empty.
    for _ in 0..3 {
        q.enqueue(pkt(10, 0), 0).unwrap();
        q.enqueue(pkt(12, 2), 0).unwrap();
    }
    q.enqueue(pkt(20, 0), 0).unwrap(); // class 0's slot is taken: main
    assert_eq!(drain(&mut q, 0), vec![10, 12, 10, 12, 10, 12, 20]);
    // p = 0: main first, the measuring set only when main is empty.
    let mut q = Rrmqs::new(&cfg(100, 10, 1, 0.0, Feedback::Off), 1);
    q.enqueue(pkt(1, 0), 0).unwrap();
    q.enqueue(pkt(2, 0), 0).unwrap();
    q.enqueue(pkt(2, 0), 0).unwrap();
    assert_eq!(drain(&mut q, 0), vec![2, 2, 1]);
}

#[test]
fn bloom_filter_counts_distinct_flows_and_resets() {
    let mut b = Bloom::new(4096, 3, 7);
    for k in 0..200u64 {
        b.insert(k);
        b.insert(k); // duplicates never count
    }
    // A key is missed only if all 3 of its bits were set by earlier keys:
    // expected misses sum_i (1 - e^{-3i/4096})^3 ~ 0.02 for 200 keys.
    assert!(b.count() >= 198 && b.count() <= 200, "count {}", b.count());
    let mut big = Bloom::new(4096, 3, 7);
    for k in 0..2000u64 {
        big.insert(k * 7919);
    }
    // 2000 keys: expected count = 2000 - sum_i (1-e^{-3i/4096})^3 (standard deviation ~ 15).
    let expected: f64 = 2000.0 - (0..2000).map(|i| (1.0 - (-3.0 * i as f64 / 4096.0).exp()).powi(3)).sum::<f64>();
    assert!((big.count() as f64 - expected).abs() < 60.0, "count {} expected {expected}", big.count());
    b.reset();
    assert_eq!(b.count(), 0);
    assert!(b.insert(5));
    assert_eq!(b.count(), 1);
}

#[test]
fn meter_computes_per_flow_rates_and_s1_feedback_drops_or_prioritises() {
    // Class 0: 2 main flows x 50 pkts, 1 pinned flow x 10 pkts -> V = 50/0.5, V' = 10/0.5, I = 5 -> drop.
    // Class 1: 1 main flow x 5 pkts, 1 pinned flow x 50 pkts -> I = 0.1 -> priority.
    let mut q = Rrmqs::new(&cfg(10_000, 10_000, 1, 0.0, Feedback::S1), 1);
    q.set_classes(2);
    arrive(&mut q, 0, 0, 10, 0);
    for _ in 0..50 {
        q.enqueue(pkt(1, 0), 1).unwrap();
        q.enqueue(pkt(2, 0), 1).unwrap();
        q.enqueue(pkt(3, 1), 1).unwrap();
    }
    arrive(&mut q, 4, 1, 5, 2);
    drain(&mut q, 3);
    // Next window: class 0's main arrivals are dropped (AQM), its pinned flow is not.
    assert_eq!(q.enqueue(pkt(1, 0), 500_000_000).unwrap_err().1, DropReason::Aqm);
    assert!(q.enqueue(pkt(0, 0), 500_000_001).is_ok());
    // Class 1's main packets overtake class 0's.
    q.enqueue(pkt(4, 1), 500_000_002).unwrap();
    let m = &q.log;
    assert_eq!(m.window, vec![0, 0]);
    assert_eq!((m.main_pkts[0], m.main_flows[0], m.rrmqs_pkts[0], m.rrmqs_flows[0]), (100, 2, 10, 1));
    assert!((m.main_rate[0] - 100.0).abs() < 1e-9 && (m.rrmqs_rate[0] - 20.0).abs() < 1e-9);
    assert!((m.index[0] - 5.0).abs() < 1e-9 && (m.index[1] - 0.1).abs() < 1e-9);
    assert_eq!(m.action, vec!["drop", "priority"]);
    let mut q2 = Rrmqs::new(&cfg(10_000, 10_000, 1, 0.0, Feedback::S1), 1);
    q2.set_classes(2);
    q2.enqueue(pkt(0, 0), 0).unwrap(); // pinned
    q2.enqueue(pkt(1, 1), 0).unwrap(); // pinned
    arrive(&mut q2, 0, 0, 20, 0);
    q2.enqueue(pkt(5, 0), 0).unwrap(); // main, 1 pkt: I(0) = 1 / 21 < 0.8 -> priority
    q2.enqueue(pkt(6, 1), 0).unwrap(); // main, 1 pkt: I(1) = 2 / 2 = 1 -> none
    drain(&mut q2, 0);
    q2.enqueue(pkt(6, 1), 600_000_000).unwrap();
    q2.enqueue(pkt(5, 0), 600_000_000).unwrap();
    assert_eq!(q2.log.action, vec!["priority", "none"]);
    assert_eq!(drain(&mut q2, 600_000_000), vec![5, 6]);
}

#[test]
fn relative_s1_feedback_compares_with_the_geometric_mean_of_the_indices() {
    // I = (4, 1): absolute rule -> drop / none; relative (G = 2) -> 2 > 1.2 drop, 0.5 < 0.8 priority.
    for (relative, want) in [(false, ["drop", "none"]), (true, ["drop", "priority"])] {
        let mut c = cfg(10_000, 10_000, 1, 0.0, Feedback::S1);
        c.relative = relative;
        let mut q = Rrmqs::new(&c, 1);
        q.set_classes(2);
        indices_4_and_1(&mut q);
        q.roll(500_000_000);
        assert_eq!(q.log.action, want, "relative = {relative}");
    }
}

#[test]
fn flow_meter_averages_lifetime_rates_of_completed_flows() {
    let mut c = cfg(10_000, 10_000, 1, 0.0, Feedback::Off);
    c.meter = Meter::Flow;
    let mut q = Rrmqs::new(&c, 1);
    // Flow 0 pinned: 10 packets, completes 0.1 s after its first: 100 pkt/s.
    // Flows 1, 2 main: 10 packets over 0.1 s and 0.2 s: 100 and 50 pkt/s -> V = 75.
    for f in 0..3 {
        arrive(&mut q, f, 0, 10, 0);
    }
    q.flow_finished(0, 100_000_000);
    q.flow_finished(1, 100_000_000);
    q.flow_finished(2, 200_000_000);
    q.roll(500_000_000);
    let m = &q.log;
    assert_eq!((m.main_done[0], m.rrmqs_done[0]), (2, 1));
    assert!((m.main_flow_rate[0] - 75.0).abs() < 1e-9 && (m.rrmqs_flow_rate[0] - 100.0).abs() < 1e-9);
    assert!((m.index[0] - 0.75).abs() < 1e-9, "index from the flow meter: {}", m.index[0]);
}

#[test]
fn improved_feedback_raises_the_weight_of_the_slowed_down_class() {
    let mut c = cfg(10_000, 10_000, 1, 0.0, Feedback::Improved);
    c.gain = 1.0;
    c.ewma = 1.0;
    let mut q = Rrmqs::new(&c, 1);
    q.set_classes(2);
    // Class 0: I = 4; class 1: I = 1 -> geometric mean 2 -> w0 = 1/2, w1 = 2 (normalised: 0.5, 2).
    indices_4_and_1(&mut q);
    drain(&mut q, 0);
    q.roll(500_000_000);
    assert!((q.weight[0] - 0.5).abs() < 1e-9 && (q.weight[1] - 2.0).abs() < 1e-9, "{:?}", q.weight);
    // DRR: with quanta 757 and 3028 bytes, class 1 sends 4 packets per class-0 packet when both are backlogged.
    for _ in 0..40 {
        q.enqueue(pkt(2, 0), 500_000_001).unwrap();
        q.enqueue(pkt(3, 1), 500_000_001).unwrap();
    }
    let out = drain(&mut q, 500_000_002);
    let first: Vec<u32> = out[..25].to_vec();
    let c1 = first.iter().filter(|&&f| f == 3).count();
    assert!((19..=21).contains(&c1), "class 1 got {c1} of the first 25: {first:?}");
}

#[test]
fn improved_overflow_drops_from_the_longest_class() {
    let mut q = Rrmqs::new(&cfg(4, 10, 0, 0.0, Feedback::Improved), 1);
    q.set_classes(2);
    arrive(&mut q, 0, 0, 4, 0);
    assert!(q.enqueue(pkt(1, 1), 0).is_ok()); // class 0 is longest: its head goes
    let mut d = vec![];
    q.take_enqueue_drops(&mut d);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].0.flow, 0);
    assert_eq!(q.enqueue(pkt(0, 0), 0).unwrap_err().1, DropReason::Overflow);
    assert_eq!(q.len_packets(), 4);
}

/// RRMQS with allocate feedback (no pinning probability, no limits in the way), correction
/// gain `gain`, `classes` CCA classes.
fn allocating(gain: f64, classes: usize) -> Rrmqs {
    let mut c = cfg(10_000, 10_000, 1, 0.0, Feedback::Allocate);
    c.alloc_gain = gain;
    let mut q = Rrmqs::new(&c, 1);
    q.set_classes(classes);
    q
}

/// `n` packets of `flow` (CCA class `class`) arrive at `now`.
fn arrive(q: &mut Rrmqs, flow: u32, class: u16, n: usize, now: TimeNs) {
    for _ in 0..n {
        q.enqueue(pkt(flow, class), now).unwrap();
    }
}

/// The same, then the queue drains.
fn send(q: &mut Rrmqs, flow: u32, class: u16, n: usize, now: TimeNs) {
    arrive(q, flow, class, n, now);
    drain(q, now);
}

/// At time 0, one packet each of a pinned flow per class (flows 0, 1), then main flows: 4 packets
/// in class 0 (flow 2), 1 in class 1 (flow 3); the window's indices I = (4, 1).
fn indices_4_and_1(q: &mut Rrmqs) {
    q.enqueue(pkt(0, 0), 0).unwrap();
    q.enqueue(pkt(1, 1), 0).unwrap();
    arrive(q, 2, 0, 4, 0);
    q.enqueue(pkt(3, 1), 0).unwrap();
}

#[test]
fn allocate_weights_are_proportional_to_the_reference_rates() {
    let mut q = allocating(0.0, 3);
    // Pinned flows: class 0 at 5 pkts / 0.25 s = 20 pkt/s, class 1 at 20 pkts / 0.25 s = 80 pkt/s; class 2 none.
    send(&mut q, 0, 0, 5, 0);
    send(&mut q, 1, 1, 20, 0);
    q.flow_finished(0, 250_000_000);
    q.flow_finished(1, 250_000_000);
    q.roll(500_000_000);
    // ln w = ln(20, 80, prior 40) - ln 40: w = (0.5, 2, 1).
    let w = q.weight.clone();
    assert!((w[0] - 0.5).abs() < 1e-9 && (w[1] - 2.0).abs() < 1e-9 && (w[2] - 1.0).abs() < 1e-9, "{w:?}");
    // Equal flow counts: class 1's DRR quantum is 4 x class 0's (equal per-flow shares would need 1 x).
    assert_eq!(q.quantum(1), 4 * q.quantum(0));
    // Class 2's pinned flow, in progress: 30 packets since 0.6 s, seen at 1.5 s -> 30 / 0.9 s.
    send(&mut q, 2, 2, 30, 600_000_000);
    q.roll(650_000_000);
    assert!((q.weight[2] - 1.0).abs() < 1e-9, "pinned less than an interval ago: still the prior, {:?}", q.weight);
    // Updated every alloc_interval (100 ms), not every meter window: at 0.7 s it counts at 30 / 0.1 s.
    q.roll(750_000_000);
    assert!(q.weight[2] > 2.0, "{:?}", q.weight);
    // Packets still queued do not count: the rate is the delivered one.
    arrive(&mut q, 2, 2, 10, 1_400_000_000);
    q.roll(1_500_000_000);
    let r2: f64 = 30.0 / 0.9;
    let g = (20.0 * 80.0 * r2).powf(1.0 / 3.0);
    for (j, r) in [20.0, 80.0, r2].iter().enumerate() {
        assert!((q.weight[j] - r / g).abs() < 1e-9, "class {j}: {:?}", q.weight);
    }
}

#[test]
fn allocate_correction_lifts_the_class_whose_main_flows_are_slowed_down_more() {
    let mut q = allocating(1.0, 2);
    // Equal references (20 pkt/s); main flows: class 0 at 40 pkt/s (I = 2), class 1 at 10 pkt/s (I = 0.5).
    send(&mut q, 0, 0, 5, 0);
    send(&mut q, 1, 1, 5, 0);
    send(&mut q, 2, 0, 10, 0);
    send(&mut q, 3, 1, 2, 0);
    for f in 0..2 {
        q.flow_finished(f, 250_000_000);
    }
    q.flow_finished(2, 250_000_000);
    q.flow_finished(3, 200_000_000);
    q.roll(500_000_000);
    // G = 1: w0 = (G / 2)^1 = 0.5, w1 = (G / 0.5)^1 = 2.
    assert!((q.weight[0] - 0.5).abs() < 1e-9 && (q.weight[1] - 2.0).abs() < 1e-9, "{:?}", q.weight);
    // Nothing new: the run's indices, hence the weights, stay.
    q.roll(1_000_000_000);
    assert!((q.weight[0] - 0.5).abs() < 1e-9 && (q.weight[1] - 2.0).abs() < 1e-9, "{:?}", q.weight);
}
