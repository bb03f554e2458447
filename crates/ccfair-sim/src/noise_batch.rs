//! Other shapes of the host noise, a measurement tool to test them against the kernel
//! (bench/data/spread-what-ifs.md), compiled only with the cargo feature `noise-batch`
//! (`cargo build --release -p ccfair-bench --features noise-batch`; `ccfair-bench json
//! CONFIG.json` then reads `CCFAIR_NOISE_BATCH` = `line` | `host` | `clamp`). Without the
//! feature none of this exists and the simulator's code is unchanged; without the variable
//! the lines draw the model's noise (lines.rs `HostJitter`).
//!
//! The model gives every skb of a flow's line its own exponential delay (mean `m`), never
//! before the line's previous packet. The shapes here keep each packet's delay exponential
//! of mean `m` or keep FIFO order across flows:
//! - `line`: the line's host releases packets at the epochs of a Poisson process of rate
//!   1 / m, a packet pushed at `now` at the first epoch after it (memoryless: that wait is
//!   exponential of mean m, drawn lazily when `now` passes the last epoch), so packets
//!   pushed within one wait leave together, in order.
//! - `host`: one such process per direction and mean (the senders' data lines, the
//!   receivers' ACK lines), shared by every flow: FIFO across flows, as one shared line
//!   needs (docs/benchmarks.md "Shared delay lines").
//! - `clamp`: each packet its own draw, never before the last arrival of any line of its
//!   direction and mean: FIFO across flows too (with equal delays only is it a FIFO).
//!
//! The shared state lives in the thread (one run per process, as `ccfair-bench json`).

use crate::engine::TimeNs;
use crate::rng::{stream, stream_rng};
use rand_pcg::Pcg64Mcg;
use std::cell::RefCell;
use std::collections::HashMap;

/// The environment variable naming the shape.
pub const ENV: &str = "CCFAIR_NOISE_BATCH";

/// A shape of the host noise (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Line,
    Host,
    Clamp,
}

thread_local! {
    static SHAPE: Option<Shape> = match std::env::var(ENV).as_deref() {
        Ok("line") => Some(Shape::Line),
        Ok("host") => Some(Shape::Host),
        Ok("clamp") => Some(Shape::Clamp),
        _ => None,
    };
    /// Per (direction, mean): the shared process's next epoch and stream (`host`), or the
    /// last arrival (`clamp`).
    static SHARED: RefCell<HashMap<(u64, u64), (TimeNs, Pcg64Mcg)>> = RefCell::new(HashMap::new());
}

/// The shape `CCFAIR_NOISE_BATCH` names, if any.
pub fn mode() -> Option<Shape> {
    SHAPE.with(|s| *s)
}

/// One line's state: its own process's next epoch and the key of its direction's.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineState {
    epoch_ns: TimeNs,
    seed: u64,
    /// (the host-noise stream's kind, `HOST_SEND` or `HOST_ACK`; the mean, ns).
    key: (u64, u64),
}

impl LineState {
    /// The state of a line whose noise (mean `mean_ns`) draws from stream `stream_id` of `seed`.
    pub fn new(seed: u64, stream_id: u64, mean_ns: u64) -> LineState {
        LineState { epoch_ns: 0, seed, key: (stream_id >> 40, mean_ns) }
    }

    /// The arrival of a packet pushed at `now` onto a line of delay `delay_ns` (before the
    /// line's own FIFO order), `draw` giving the line's next exponential delay and `exp_ns` an
    /// exponential draw of a mean from a stream (the host noise's, for the shared processes).
    pub fn arrival(&mut self, now: TimeNs, delay_ns: u64, draw: &mut dyn FnMut() -> u64, exp_ns: fn(&mut Pcg64Mcg, u64) -> u64) -> TimeNs {
        match mode() {
            Some(Shape::Line) => {
                if now >= self.epoch_ns {
                    self.epoch_ns = now + draw();
                }
                self.epoch_ns + delay_ns
            }
            Some(Shape::Host) => self.shared(|e, rng, mean| {
                if now >= *e {
                    *e = now + exp_ns(rng, mean);
                }
                *e + delay_ns
            }),
            Some(Shape::Clamp) => {
                let at = now + delay_ns + draw();
                self.shared(|e, _, _| {
                    *e = at.max(*e);
                    *e
                })
            }
            None => unreachable!("a shape is set"),
        }
    }

    fn shared(&self, f: impl FnOnce(&mut TimeNs, &mut Pcg64Mcg, u64) -> TimeNs) -> TimeNs {
        let (seed, key) = (self.seed, self.key);
        SHARED.with(|m| {
            let mut m = m.borrow_mut();
            let (e, rng) = m.entry(key).or_insert_with(|| (0, stream_rng(seed, stream::NOISE_BATCH_HOST + key.0)));
            f(e, rng, key.1)
        })
    }
}
