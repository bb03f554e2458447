//! TCP-NV and CDG closed loop (cc/nv.rs, cc/cdg.rs follow Linux tcp_nv.c and
//! tcp_cdg.c): alone on a deep drop-tail buffer (10 Mbit/s, 50 ms, 4 BDP =
//! 167 packets, 45 s, window 10-45 s) each holds the queue far below the
//! buffer that Reno fills, without giving up the link; NV's queue is set by
//! its pad over the window its minimum RTT asks for, and that minimum is
//! re-measured every few seconds.

use ccfair_sim::config::{FlowConfig, QdiscConfig, RunConfig};

const BUFFER_PKTS: u64 = 167;

fn alone(cca: &str) -> ccfair_sim::result::RunResult {
    alone_with(cca, serde_json::Map::new())
}

fn alone_with(cca: &str, params: serde_json::Map<String, serde_json::Value>) -> ccfair_sim::result::RunResult {
    let mut f = FlowConfig::bulk("A", cca, 50_000_000);
    f.cca_params = params;
    let cfg = RunConfig::dumbbell(10_000_000, QdiscConfig::droptail(Some(BUFFER_PKTS), None), vec![f], 45_000_000_000);
    ccfair_sim::run(&cfg)
}

/// (utilization of 10-45 s, mean queue in packets over the run's samples after 10 s).
fn util_and_queue(r: &ccfair_sim::result::RunResult) -> (f64, f64) {
    let bytes: u64 = r.flows[0].delivered_bytes[100..450].iter().sum();
    let util = bytes as f64 * 8.0 / 35.0 / 10e6 * (1500.0 / 1448.0);
    let q: Vec<f64> = r.queue_time_ns.iter().zip(&r.queue_packets).filter(|(t, _)| **t >= 10_000_000_000).map(|(_, p)| *p as f64).collect();
    (util, q.iter().sum::<f64>() / q.len().max(1) as f64)
}

#[test]
fn nv_alone_without_min_rtt_restarts_keeps_about_nv_pad_packets_queued() {
    // tcp_nv.c tcpnv_acked: cwnd > cwnd_by_slope + nv_pad (10) -> decrease, where cwnd_by_slope
    // is the window the measured rate needs at nv_min_rtt; with nv_min_rtt the path's own RTT
    // (no restart within the run) the standing queue is about nv_pad packets.
    let mut p = serde_json::Map::new();
    p.insert("reset_period_ns".into(), 3_600_000_000_000u64.into());
    let (util, queue) = util_and_queue(&alone_with("nv", p));
    assert!(util > 0.9, "utilization {util:.3}");
    assert!(queue < 2.0 * 10.0, "mean queue {queue:.1} packets");
}

#[test]
fn nv_min_rtt_restarts_measure_its_own_queue_so_the_standing_queue_grows() {
    // tcp_nv.c tcpnv_acked: every nv_reset_period (5 s) x [3/4, 5/4) nv_min_rtt becomes the
    // minimum (averaged) RTT of the last period, which under a standing queue includes it;
    // cwnd_by_slope then grows with the queue. Still no loss-driven filling of the buffer.
    let mut p = serde_json::Map::new();
    p.insert("reset_period_ns".into(), 3_600_000_000_000u64.into());
    let (_, queue_fixed) = util_and_queue(&alone_with("nv", p));
    let (util, queue) = util_and_queue(&alone("nv"));
    assert!(util > 0.9, "utilization {util:.3}");
    assert!(queue > queue_fixed, "mean queue {queue:.1} with restarts vs {queue_fixed:.1} without");
    assert!(queue < BUFFER_PKTS as f64 / 2.0, "mean queue {queue:.1} packets");
}

#[test]
fn cdg_alone_backs_off_on_rising_delay_before_the_buffer_fills() {
    // tcp_cdg.c tcp_cdg_backoff: a positive delay gradient backs off (CWR, x 0.7071) with
    // probability 1 - exp(-grad * 42 / 1e6); Reno (the comparison) backs off only on loss.
    let (util, queue) = util_and_queue(&alone("cdg"));
    let (_, reno_queue) = util_and_queue(&alone("reno"));
    assert!(util > 0.75, "utilization {util:.3}");
    assert!(queue < reno_queue / 2.0, "CDG mean queue {queue:.1} vs Reno {reno_queue:.1} packets");
}
