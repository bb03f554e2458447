//! Events of the dumbbell's loop (sim.rs) counted by kind, and what the
//! popped timer entries did (engine.rs `Timer::on_pop`): a measurement
//! tool, compiled only with the cargo feature `event-counts`
//! (`cargo build --release -p ccfair-bench --features event-counts`;
//! `ccfair-bench repeat 1 CONFIG.json` then prints them per data packet,
//! docs/benchmarks.md). Without the feature none of this exists and the
//! simulator's code is unchanged. Counts are process-wide and only read
//! once runs are over; they change no result.

use std::sync::atomic::{AtomicU64, Ordering};

/// What is counted, in the order printed.
#[derive(Clone, Copy)]
pub enum Counted {
    /// A packet of a flow's own access line reaches the bottleneck.
    Access,
    /// A packet of a shared access line reaches the bottleneck.
    AccessShared,
    /// A packet of the bottleneck's output line reaches its receiver
    /// through the queue.
    Delivered,
    /// A packet reaches its receiver at the end of its transmission without
    /// the queue (sim.rs `tx_done`, a zero-delay output line).
    DeliveredInline,
    /// An ACK of a flow's own reverse line reaches its sender.
    Reverse,
    /// An ACK of a shared reverse line reaches its sender.
    ReverseShared,
    /// The bottleneck's head packet leaves (kept out of the heap).
    TxDone,
    Rto,
    Pace,
    Reo,
    Delack,
    Gro,
    Start,
    /// A popped timer entry superseded by an earlier one, or its timer disarmed.
    TimerIgnored,
    /// A popped timer entry whose deadline moved later: scheduled again.
    TimerRescheduled,
    /// A popped timer entry that fires.
    TimerFired,
    /// An event put into the heap (`EventQueue::schedule`).
    Scheduled,
}

const NAMES: [&str; 17] = [
    "Access",
    "AccessShared",
    "Delivered",
    "DeliveredInline",
    "Reverse",
    "ReverseShared",
    "TxDone",
    "Rto",
    "Pace",
    "Reo",
    "Delack",
    "Gro",
    "Start",
    "timer entry ignored",
    "timer entry rescheduled",
    "timer fired",
    "heap insertions",
];

static COUNTS: [AtomicU64; NAMES.len()] = [const { AtomicU64::new(0) }; NAMES.len()];

/// Count one `c`.
#[inline(always)]
pub fn count(c: Counted) {
    COUNTS[c as usize].fetch_add(1, Ordering::Relaxed);
}

/// Every count as (name, count), and set them to zero.
pub fn take() -> Vec<(&'static str, u64)> {
    NAMES.iter().zip(&COUNTS).map(|(&n, c)| (n, c.swap(0, Ordering::Relaxed))).collect()
}
