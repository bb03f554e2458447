//! Stalls of the bottleneck's link, as the testbed's userspace bottleneck has them: a
//! measurement tool to test what they do to the comparison with the kernel (bench/fidelity_link_stalls.py,
//! docs/linux-ports.md "Veno against CUBIC"), compiled only with the cargo feature `link-stalls`
//! (`cargo build --release -p ccfair-bench --features link-stalls`; `ccfair-bench json CONFIG.json`
//! then reads `CCFAIR_LINK_STALLS="RATE_PER_S,MEAN_MS,SEED"`, or `"file:PATH"`: a testbed run's
//! recorded stalls, `Stalls::recorded`). Without the feature none of this
//! exists and the simulator's code is unchanged; without the variable nothing stalls.
//!
//! The testbed's bottleneck (ccfair-bottleneck) is a process on the hosts' CPUs; now and then it
//! does not run for ms (its poll reads frames late: `testbed.bottleneck.late_max_ns`; docs/testbed.md
//! "Stalls"). Its link sends nothing meanwhile; afterwards its one-frame token bucket sends at the
//! rate again. Modelled: stalls begin as a Poisson process of `RATE_PER_S` per second, each
//! exponentially long with mean `MEAN_MS`, from a xorshift64 stream seeded with `SEED` (so a run is
//! repeatable); a frame whose release falls inside a stall leaves when the stall ends. Every
//! token bucket of the run stalls at the same times (one bottleneck process).

use std::sync::OnceLock;

/// The environment variable with `RATE_PER_S,MEAN_MS,SEED`.
pub const ENV: &str = "CCFAIR_LINK_STALLS";
/// Stalls are drawn over this span of simulated time, s (longer than any fidelity run).
const SPAN_S: f64 = 400.0;

/// The stalls of a run: `[start_ns, end_ns)`, in time order (overlaps allowed).
#[derive(Debug)]
pub struct Stalls {
    starts_ns: Vec<u64>,
    ends_ns: Vec<u64>,
}

impl Stalls {
    /// Stalls beginning at `rate_per_s` per second, exponential lengths of mean `mean_ms`.
    pub fn draw(rate_per_s: f64, mean_ms: f64, seed: u64) -> Stalls {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (mut starts_ns, mut ends_ns) = (Vec::new(), Vec::new());
        let mut t_s = 0.0;
        while rate_per_s > 0.0 && t_s < SPAN_S {
            t_s += -uniform().ln() / rate_per_s;
            let len_s = -uniform().ln() * mean_ms / 1e3;
            starts_ns.push((t_s * 1e9) as u64);
            ends_ns.push(((t_s + len_s) * 1e9) as u64);
        }
        Stalls { starts_ns, ends_ns }
    }

    /// A testbed run's stalls as its bottleneck recorded them (`testbed.bottleneck.stalls`, a JSON
    /// list of `[end, lost]`: a transmission ended at `end` ns after t0 and the link then lost
    /// `lost` ns of service), read from `path`: the link stops over `[end, end + lost)` (a frame
    /// released in it leaves at its end and the next one a frame time later, so it loses `lost`).
    fn recorded(path: &str) -> Stalls {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{ENV}=file:{path}: {e}"));
        let pairs: Vec<[u64; 2]> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{ENV}=file:{path}: want [[end_ns, lost_ns], ...]: {e}"));
        Stalls { starts_ns: pairs.iter().map(|p| p[0]).collect(), ends_ns: pairs.iter().map(|p| p[0] + p[1]).collect() }
    }

    /// When the link may send a frame it would release at `t_ns`: `t_ns`, or the end of the
    /// stall it falls in (the latest-starting stall that began at or before it).
    pub fn resume_ns(&self, t_ns: u64) -> u64 {
        let i = self.starts_ns.partition_point(|&s| s <= t_ns);
        match i.checked_sub(1) {
            Some(k) if t_ns < self.ends_ns[k] => self.ends_ns[k],
            _ => t_ns,
        }
    }
}

/// The run's stalls from [`ENV`], read once per process; `None` without it. A malformed value panics
/// naming the variable (a measurement tool's misuse, not input to the simulator).
pub fn from_env() -> Option<&'static Stalls> {
    static STALLS: OnceLock<Option<Stalls>> = OnceLock::new();
    STALLS.get_or_init(|| std::env::var(ENV).ok().map(|v| parse(&v))).as_ref()
}

fn parse(v: &str) -> Stalls {
    if let Some(path) = v.strip_prefix("file:") {
        return Stalls::recorded(path);
    }
    let f: Vec<f64> = v.split(',').map(|x| x.trim().parse().unwrap_or(f64::NAN)).collect();
    match f[..] {
        [rate, mean, seed] if rate >= 0.0 && mean >= 0.0 && seed >= 0.0 => Stalls::draw(rate, mean, seed as u64),
        _ => panic!("{ENV}={v:?}: want RATE_PER_S,MEAN_MS,SEED (non-negative numbers)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_released_inside_a_stall_leaves_when_it_ends_and_others_at_once() {
        let s = Stalls { starts_ns: vec![1_000, 5_000], ends_ns: vec![3_000, 6_000] };
        assert_eq!(s.resume_ns(500), 500);
        assert_eq!(s.resume_ns(1_000), 3_000);
        assert_eq!(s.resume_ns(2_999), 3_000);
        assert_eq!(s.resume_ns(3_000), 3_000);
        assert_eq!(s.resume_ns(5_500), 6_000);
    }

    #[test]
    fn a_recorded_stall_stops_the_link_for_the_service_it_lost_from_the_end_of_the_transmission_before_it() {
        let path = std::env::temp_dir().join(format!("ccfair-stalls-{}.json", std::process::id()));
        std::fs::write(&path, "[[100800000, 8000000], [200000000, 50000]]").unwrap();
        let s = Stalls::recorded(path.to_str().unwrap());
        std::fs::remove_file(&path).unwrap();
        assert_eq!((s.starts_ns, s.ends_ns), (vec![100_800_000, 200_000_000], vec![108_800_000, 200_050_000]));
    }

    #[test]
    fn stalls_begin_at_the_poisson_rate_with_the_mean_length() {
        // A Poisson process of rate r over T has about r T events; exponential lengths average the mean.
        let s = Stalls::draw(2.0, 3.0, 7);
        let n = s.starts_ns.len() as f64;
        assert!((n - 2.0 * SPAN_S).abs() < 4.0 * (2.0 * SPAN_S).sqrt(), "{n} stalls");
        let mean_ms = s.starts_ns.iter().zip(&s.ends_ns).map(|(a, b)| (b - a) as f64 / 1e6).sum::<f64>() / n;
        assert!((mean_ms - 3.0).abs() < 0.3, "mean {mean_ms} ms");
    }
}
