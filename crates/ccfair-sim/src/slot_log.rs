//! The dumbbell bottleneck's arrivals, one record each, for the phase at which frames meet a
//! full queue (bench/fidelity_slots.py): a measurement tool, compiled only with the cargo feature
//! `slot-log` (`cargo build --release -p ccfair-bench --features slot-log`; `ccfair-bench json
//! CONFIG.json` then writes them to the file named by `CCFAIR_SLOT_LOG`). Without the feature
//! none of this exists and the simulator's code is unchanged. The testbed's bottleneck writes
//! the same records (ccfair-bottleneck, `CCFAIR_BOTTLENECK_SLOT_LOG`).

use std::io::Write;
use std::sync::Mutex;

/// One arrival: its time, flow, the queue before it (packets, the one on the link included),
/// whether it was admitted, and the last time a frame's transmission ended (a place freed).
#[derive(Clone, Copy)]
pub struct Arrival {
    pub t_ns: u64,
    pub flow: u32,
    pub queue_before: u32,
    pub admitted: bool,
    pub last_free_ns: u64,
}

struct Log {
    arrivals: Vec<Arrival>,
    last_free_ns: u64,
}

static LOG: Mutex<Log> = Mutex::new(Log { arrivals: Vec::new(), last_free_ns: 0 });

/// A frame's transmission ended at `t_ns`: the queue has one more place.
pub fn freed(t_ns: u64) {
    LOG.lock().unwrap().last_free_ns = t_ns;
}

/// A data frame of `flow` reached the bottleneck at `t_ns`.
pub fn arrive(t_ns: u64, flow: u32, queue_before: u32, admitted: bool) {
    let mut l = LOG.lock().unwrap();
    let last_free_ns = l.last_free_ns;
    l.arrivals.push(Arrival { t_ns, flow, queue_before, admitted, last_free_ns });
}

/// Write the records so far as CSV (`t_ns,flow,queue_before,admitted,last_free_ns`) and clear them.
pub fn write_csv(path: &str) -> std::io::Result<()> {
    let mut l = LOG.lock().unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "t_ns,flow,queue_before,admitted,last_free_ns")?;
    for a in l.arrivals.drain(..) {
        writeln!(f, "{},{},{},{},{}", a.t_ns, a.flow, a.queue_before, a.admitted as u8, a.last_free_ns)?;
    }
    f.flush()
}
