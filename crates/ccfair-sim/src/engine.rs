//! Event queue: a binary min-heap ordered by (time, sequence number), so events
//! scheduled for the same nanosecond run in the order they were scheduled.
//! Scheduling into the past panics (a simulator bug, never user input).
//!
//! The heap is a plain `Vec` (children of `i` at `2i + 1`, `2i + 2`) rather
//! than `std::collections::BinaryHeap`, whose `push` and `peek_mut` write the
//! new entry into the slice and read it straight back to sift it: on x86 that
//! read stalls (store-to-load forwarding fails when an entry written field by
//! field is read back in wider words); `perf` put about 9 % of an S0 run's
//! samples on it. Here the sifts carry the moving entry in a local (inlined,
//! so it stays in registers) and write it once, at its final slot; the
//! choice between the two children in `sift_down` is branch-free (compare
//! 128-bit keys, add the result to the index; the stage of lines.rs, by
//! byte offsets, selects with a conditional move: `Keyed::SIFT_BY_OFFSET`),
//! because that branch is taken at random and mispredicted about half the
//! time (~7 % of an S0 run).
//! The pop order is the same: (time, seq) is a total order
//! (docs/benchmarks.md).
//!
//! Why still a binary heap (measured on this simulator; docs/benchmarks.md,
//! "Against htsim"): nearly every `schedule` puts a delay line's next head
//! in place of the root just popped (the line's own event), and that entry
//! moves down less than one level on average, so the heap's depth is not
//! where the queue's instructions go. The queue holds O(flows) entries
//! (delay lines put only their head in it, timers are lazy), ~9 on average
//! in the S0 base case, ~40 with 10 flows, ~5500 with 2000 flows on per-flow
//! lines (up to 4000 of them line heads, which lines.rs's shared lines keep
//! out of the heap altogether). A radix
//! heap (Ahuja, Mehlhorn, Orlin, Tarjan, J. ACM 37(2), 1990; O(1) insert,
//! exact here because time never goes back) was 5 % faster at 2000 flows
//! but 8 % slower at 10 flows and no faster on S0; an unordered array with
//! a cached minimum below 16-64 entries (heap above) was 15-20 % slower on
//! S0; a 4-ary heap (half the levels, three comparisons each) ran 3 % more
//! instructions at 10 flows and 1 % more at 2000 (the event queue and the
//! stage of lines.rs). A removed root is refilled bottom-up
//! (`remove_root`), a replaced one top-down (`sift_down`): each where its
//! new entry mostly belongs. The event that most often follows another immediately (a packet
//! reaching its receiver over a zero-delay bottleneck line right after its
//! transmission ends) bypasses the queue instead (sim.rs `tx_done`,
//! [`EventQueue::pending_at`]), and so do the periodic queue samples (sim.rs
//! `samples_before`: they take a sequence number with
//! [`EventQueue::take_seq`] and run before the first popped event that
//! follows them in (time, seq) order) and the end of the bottleneck's
//! current transmission (sim.rs `next_event`: its (time, seq) is compared
//! with the heap's root, [`EventQueue::peek_order_key`], and it runs through
//! [`EventQueue::advance_outside`] when it comes first).
//!
//! A shared delay line (lines.rs `SharedLines`) stands for many flows' lines
//! with one next event kept outside the heap: it takes each flow's sequence
//! number with [`EventQueue::take_seq`] where the flow's own line would have
//! scheduled, keys its head with that number, and runs through
//! [`EventQueue::advance_outside`] when it comes first, so that the pop
//! order is the per-flow lines' order.
//!
//! Timers use lazy cancellation ([`Timer`]): re-arming a timer later than its
//! pending heap entry costs nothing; the entry re-schedules itself when it
//! pops early. An RTO re-armed on every ACK thus costs one heap operation per
//! RTO interval, not per ACK.

/// Simulated time, integer nanoseconds since the start of the run.
pub type TimeNs = u64;

/// (time, seq) as one number with the same order ([`order_key`]), as the
/// event loop compares its candidates for the next event: one comparison
/// where a pair takes two and a select.
pub type OrderKey = u128;

/// The [`OrderKey`] of no event: after every event's.
pub const NO_EVENT: OrderKey = u128::MAX;

/// The [`OrderKey`] of (time, seq).
#[inline(always)]
pub const fn order_key(time: TimeNs, seq: u64) -> OrderKey {
    ((time as u128) << 64) | seq as u128
}

/// (time, seq) of an [`OrderKey`].
#[inline(always)]
pub const fn key_parts(k: OrderKey) -> (TimeNs, u64) {
    ((k >> 64) as TimeNs, k as u64)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry<E> {
    time: TimeNs,
    seq: u64,
    ev: E,
}

impl<E: Copy> Keyed for Entry<E> {
    type Key = u128;
    /// (time, seq) as one number with the same order: earlier time, or the
    /// same time and scheduled earlier.
    #[inline(always)]
    fn key(&self) -> u128 {
        order_key(self.time, self.seq)
    }
}

/// An entry of a binary min-heap in a slice (children of `i` at `2i + 1`,
/// `2i + 2`), ordered by one number. The event queue (keys of 128 bits,
/// (time, seq)) and lines.rs's stage of flow heads (64 bits, the arrival
/// time alone) share the sifts below.
pub(crate) trait Keyed: Copy {
    type Key: Ord + Copy;
    fn key(&self) -> Self::Key;
    /// Sift down by byte offsets (`get_at`: a `lea` per child where an
    /// index took a shift per access), for keys whose earlier child the
    /// compiler selects with a conditional move (lines.rs's stage, 64-bit
    /// keys). With the event queue's 128-bit keys it made that choice a
    /// branch, taken at random (9 % more mispredicted branches on the S0
    /// base case, `valgrind --tool=cachegrind --branch-sim=yes`): indices
    /// there, the comparison's bit added to the index.
    const SIFT_BY_OFFSET: bool = false;
}

/// `h[i]`, for an `i` the sifts below know to be in bounds (each checks
/// its start index once; every later index is a parent of an index in
/// bounds or a child below a length just compared): one bounds check per
/// sift instead of three per level, ~6 % of the event queue's
/// instructions (docs/benchmarks.md).
#[inline(always)]
fn get<T: Copy>(h: &[T], i: usize) -> T {
    debug_assert!(i < h.len());
    // SAFETY: `i < h.len()`, as the callers establish (see above).
    unsafe { *h.get_unchecked(i) }
}

/// `h[i] = v` for an `i` in bounds (as `get`).
#[inline(always)]
fn set<T>(h: &mut [T], i: usize, v: T) {
    debug_assert!(i < h.len());
    // SAFETY: `i < h.len()`, as the callers establish (see `get`).
    unsafe { *h.get_unchecked_mut(i) = v }
}

/// Put `e` into the hole at `i` of `h` and move it up to its place. (Inlined
/// so that `e` stays in registers: see the module comment.)
#[inline(always)]
pub(crate) fn sift_up<T: Keyed>(h: &mut [T], mut i: usize, e: T) {
    assert!(i < h.len(), "a hole in the heap");
    let k = e.key();
    while i > 0 {
        let parent = (i - 1) / 2;
        if k >= get(h, parent).key() {
            break;
        }
        set(h, i, get(h, parent));
        i = parent;
    }
    set(h, i, e);
}

/// `h`'s entry at byte offset `off`, for an `off` the sifts below know to
/// be an entry's (`i * size_of::<T>()` for an `i` in bounds, as `get`).
/// `sift_down` and `remove_root` walk byte offsets rather than indices:
/// the children of the entry at `off` are at `2 off + size` and `2 off + 2
/// size`, one `lea` each, where an index was scaled by a shift at every
/// access (three per level).
#[inline(always)]
fn get_at<T: Copy>(h: &[T], off: usize) -> T {
    debug_assert!(off % std::mem::size_of::<T>() == 0 && off / std::mem::size_of::<T>() < h.len());
    // SAFETY: `off` is `i * size_of::<T>()` for an `i < h.len()` (the
    // callers establish it as `get`'s): an aligned entry inside `h`.
    unsafe { h.as_ptr().byte_add(off).read() }
}

/// `h`'s entry at byte offset `off` set to `v` (as `get_at`).
#[inline(always)]
fn set_at<T>(h: &mut [T], off: usize, v: T) {
    debug_assert!(off % std::mem::size_of::<T>() == 0 && off / std::mem::size_of::<T>() < h.len());
    // SAFETY: as `get_at`.
    unsafe { h.as_mut_ptr().byte_add(off).write(v) }
}

/// How a sift walks the heap: by index (`get`) or by byte offset
/// (`get_at`), `Keyed::SIFT_BY_OFFSET`. The sifts are written once over a
/// walk (`sift_down_walk`, `remove_root_walk`); each walk gives positions,
/// children and the branch-free choice of the earlier child.
trait Walk<T: Keyed> {
    /// The position of the entry at index `i`.
    fn at(i: usize) -> usize;
    /// One past the last entry's position in `h`.
    fn end(h: &[T]) -> usize;
    /// The first child of the entry at `p` (the second is one entry on).
    fn left(p: usize) -> usize;
    /// The child at `right` if `right_earlier`, else the one at `left`.
    fn earlier(right_earlier: bool, left: usize, right: usize) -> usize;
    fn get(h: &[T], p: usize) -> T;
    fn set(h: &mut [T], p: usize, v: T);
    /// The index of the entry at `p`.
    fn index(p: usize) -> usize;
}

/// Indices: the earlier child by adding the comparison's bit to the left
/// child's index.
struct ByIndex;

impl<T: Keyed> Walk<T> for ByIndex {
    #[inline(always)]
    fn at(i: usize) -> usize {
        i
    }
    #[inline(always)]
    fn end(h: &[T]) -> usize {
        h.len()
    }
    #[inline(always)]
    fn left(p: usize) -> usize {
        2 * p + 1
    }
    #[inline(always)]
    fn earlier(right_earlier: bool, left: usize, _right: usize) -> usize {
        left + right_earlier as usize
    }
    #[inline(always)]
    fn get(h: &[T], p: usize) -> T {
        get(h, p)
    }
    #[inline(always)]
    fn set(h: &mut [T], p: usize, v: T) {
        set(h, p, v)
    }
    #[inline(always)]
    fn index(p: usize) -> usize {
        p
    }
}

/// Byte offsets (`get_at`): the children of the entry at `off` are at `2
/// off + size` and `2 off + 2 size`; the earlier one by a conditional move.
struct ByOffset;

impl<T: Keyed> Walk<T> for ByOffset {
    #[inline(always)]
    fn at(i: usize) -> usize {
        i * std::mem::size_of::<T>()
    }
    #[inline(always)]
    fn end(h: &[T]) -> usize {
        std::mem::size_of_val(h)
    }
    #[inline(always)]
    fn left(p: usize) -> usize {
        2 * p + std::mem::size_of::<T>()
    }
    #[inline(always)]
    fn earlier(right_earlier: bool, left: usize, right: usize) -> usize {
        std::hint::select_unpredictable(right_earlier, right, left)
    }
    #[inline(always)]
    fn get(h: &[T], p: usize) -> T {
        get_at(h, p)
    }
    #[inline(always)]
    fn set(h: &mut [T], p: usize, v: T) {
        set_at(h, p, v)
    }
    #[inline(always)]
    fn index(p: usize) -> usize {
        p / std::mem::size_of::<T>()
    }
}

/// Put `e` into the hole at `i` of `h` and move it down to its place.
/// (Bottom-up, down to a leaf and then up, ran more instructions here: a
/// root put back mostly belongs near the top; docs/benchmarks.md. A removed
/// root's place is another matter: `remove_root`.)
///
/// # Safety
/// `i < h.len()`: the callers replace the root of a heap that has one (a
/// check here, where the callers had just read the root, was loaded and
/// tested again on every replace; debug builds check).
#[inline(always)]
pub(crate) unsafe fn sift_down<T: Keyed>(h: &mut [T], i: usize, e: T) {
    debug_assert!(i < h.len(), "a hole in the heap");
    if T::SIFT_BY_OFFSET {
        sift_down_walk::<T, ByOffset>(h, i, e)
    } else {
        sift_down_walk::<T, ByIndex>(h, i, e)
    }
}

/// `sift_down` over the walk `W`.
#[inline(always)]
fn sift_down_walk<T: Keyed, W: Walk<T>>(h: &mut [T], i: usize, e: T) {
    let end = W::end(h);
    let k = e.key();
    let mut p = W::at(i);
    loop {
        let left = W::left(p);
        let right = left + W::at(1);
        if right >= end {
            // At most one child: the last level's edge.
            if left < end && W::get(h, left).key() < k {
                W::set(h, p, W::get(h, left));
                p = left;
            }
            break;
        }
        // Branch-free choice of the earlier child (an unpredictable
        // branch here cost more than the extra key computation); the
        // child, read whole for its move up, is compared once with `e`.
        let child = W::earlier(W::get(h, right).key() < W::get(h, left).key(), left, right);
        let c = W::get(h, child);
        if c.key() >= k {
            break;
        }
        W::set(h, p, c);
        p = child;
    }
    W::set(h, p, e);
}

/// Remove the root of the heap `h` (not empty): the hole left at the root
/// moves down to a leaf along the earlier children, and the last entry,
/// which mostly belongs near the bottom, fills it and moves up (Wegener,
/// "Bottom-up heapsort", TCS 118(1), 1993): one comparison per level
/// instead of two.
#[inline(always)]
pub(crate) fn remove_root<T: Keyed>(h: &mut Vec<T>) {
    let last = h.pop().expect("a root");
    let h = h.as_mut_slice();
    if T::SIFT_BY_OFFSET {
        remove_root_walk::<T, ByOffset>(h, last)
    } else {
        remove_root_walk::<T, ByIndex>(h, last)
    }
}

/// `remove_root` over the walk `W`: `h` without the last entry, `last`.
#[inline(always)]
fn remove_root_walk<T: Keyed, W: Walk<T>>(h: &mut [T], last: T) {
    let end = W::end(h);
    if end == 0 {
        return;
    }
    let mut p = W::at(0);
    loop {
        let left = W::left(p);
        let right = left + W::at(1);
        if right >= end {
            if left < end {
                W::set(h, p, W::get(h, left));
                p = left;
            }
            break;
        }
        let child = W::earlier(W::get(h, right).key() < W::get(h, left).key(), left, right);
        W::set(h, p, W::get(h, child));
        p = child;
    }
    sift_up(h, W::index(p), last);
}

/// The panic of an event scheduled before `now` (a simulator bug), out of
/// line: its message's formatting kept a stack frame and three more saved
/// registers in every `schedule` (docs/benchmarks.md).
#[cold]
#[inline(never)]
fn scheduled_in_the_past(time: TimeNs, now: TimeNs) -> ! {
    panic!("event scheduled in the past: {time} < {now}")
}

pub struct EventQueue<E> {
    /// Binary min-heap on (time, seq); `heap[0]` is the next event.
    heap: Vec<Entry<E>>,
    seq: u64,
    now: TimeNs,
    popped: u64,
    /// The root of the heap is the event being processed: it is removed
    /// lazily, so that the first event scheduled while processing it can
    /// replace the root in place (one sift instead of a pop and a push).
    root_consumed: bool,
}

impl<E: Eq + Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: Vec::with_capacity(1024), seq: 0, now: 0, popped: 0, root_consumed: false }
    }

    pub fn now(&self) -> TimeNs {
        self.now
    }

    /// Number of events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.heap.len() - self.root_consumed as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn schedule(&mut self, time: TimeNs, ev: E) {
        if time < self.now {
            scheduled_in_the_past(time, self.now);
        }
        self.seq += 1;
        #[cfg(feature = "event-counts")]
        crate::event_counts::count(crate::event_counts::Counted::Scheduled);
        self.insert(Entry { time, seq: self.seq, ev });
    }

    /// Put `entry` into the heap (into the consumed root's place if there is one).
    #[inline(always)]
    fn insert(&mut self, entry: Entry<E>) {
        if self.root_consumed {
            // Overwrite the consumed root.
            self.root_consumed = false;
            // SAFETY: the consumed root is still in the heap: it has a root.
            unsafe { sift_down(&mut self.heap, 0, entry) };
        } else {
            // Grow by one slot (a hole at the end) and sift the entry up from it.
            let hole = self.heap.len();
            if hole == self.heap.capacity() {
                return self.insert_growing(entry.time, entry.seq, entry.ev);
            }
            self.heap.push(entry);
            sift_up(&mut self.heap, hole, entry);
        }
    }

    /// `insert` into a full `Vec`: grow it, then push and sift up. (Out of
    /// line and called last, as the panic of `schedule`: no value of the
    /// caller lives across the call, so `schedule` saves no registers for it.)
    #[cold]
    #[inline(never)]
    fn insert_growing(&mut self, time: TimeNs, seq: u64, ev: E) {
        let entry = Entry { time, seq, ev };
        self.heap.reserve(1);
        let hole = self.heap.len();
        self.heap.push(entry);
        sift_up(&mut self.heap, hole, entry);
    }

    /// Remove the consumed root, if any. (The test inline, the removal out
    /// of line: `next_event` in sim.rs asks twice per event.)
    #[inline(always)]
    fn drop_consumed_root(&mut self) {
        if self.root_consumed {
            self.remove_consumed_root();
        }
    }

    #[inline(never)]
    fn remove_consumed_root(&mut self) {
        self.root_consumed = false;
        remove_root(&mut self.heap);
    }

    /// Pop the next event and advance the clock to its time.
    pub fn pop(&mut self) -> Option<(TimeNs, E)> {
        self.pop_keyed().map(|(t, _, ev)| (t, ev))
    }

    /// As [`EventQueue::pop`], with the event's sequence number.
    pub fn pop_keyed(&mut self) -> Option<(TimeNs, u64, E)> {
        self.drop_consumed_root();
        let root = self.heap.first()?;
        let (time, seq, ev) = (root.time, root.seq, root.ev);
        self.root_consumed = true;
        self.now = time;
        self.popped += 1;
        Some((time, seq, ev))
    }

    /// Pop the root right after [`EventQueue::peek_order_key`] returned its
    /// key `key`, with nothing changed in between: as
    /// [`EventQueue::pop_keyed`] without its second look for a consumed root
    /// and an empty heap, and with the (time, seq) already read (the event
    /// loop's common path; docs/benchmarks.md).
    ///
    /// # Safety
    /// `key` is what `peek_order_key` returned just before and not
    /// [`NO_EVENT`], so the heap has a root (an empty heap's key is `NO_EVENT`).
    #[inline(always)]
    pub(crate) unsafe fn pop_peeked(&mut self, key: OrderKey) -> (TimeNs, u64, E) {
        debug_assert!(!self.root_consumed && self.heap.first().is_some_and(|e| e.key() == key));
        // SAFETY: the heap has a root (the caller's contract above).
        let ev = unsafe { self.heap.get_unchecked(0) }.ev;
        let (time, seq) = key_parts(key);
        self.root_consumed = true;
        self.now = time;
        self.popped += 1;
        (time, seq, ev)
    }

    /// Take the sequence number the next scheduled event would get, for an
    /// event kept outside the queue (sim.rs: the queue samples) that must
    /// still run in (time, seq) order with the others.
    pub fn take_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Whether an event is pending for time `t` (the current time: nothing
    /// is pending earlier). Does not change the heap: when the root is the
    /// consumed current event, the next one is the earlier of its children.
    pub fn pending_at(&self, t: TimeNs) -> bool {
        let at = |i: usize| self.heap.get(i).is_some_and(|e| e.time == t);
        if self.root_consumed {
            at(1) || at(2)
        } else {
            at(0)
        }
    }

    /// Count an event that was handled without going through the queue
    /// because it would have been the next one popped (see sim.rs, `tx_done`).
    pub fn count_handled_inline(&mut self) {
        self.popped += 1;
    }

    pub fn peek_time(&mut self) -> Option<TimeNs> {
        self.peek_key().map(|(t, _)| t)
    }

    /// (time, seq) of the next event in the heap.
    pub fn peek_key(&mut self) -> Option<(TimeNs, u64)> {
        self.drop_consumed_root();
        self.heap.first().map(|e| (e.time, e.seq))
    }

    /// (time, seq) of the next event in the heap as one number
    /// ([`order_key`]; [`NO_EVENT`]: none).
    #[inline(always)]
    pub fn peek_order_key(&mut self) -> u128 {
        self.drop_consumed_root();
        self.heap.first().map_or(NO_EVENT, |e| e.key())
    }

    /// Advance the clock to `t` for an event kept outside the heap (with a
    /// sequence number from [`EventQueue::take_seq`]) that runs now because
    /// it comes before every event in the heap; it counts as processed.
    pub fn advance_outside(&mut self, t: TimeNs) {
        debug_assert!(t >= self.now);
        self.now = t;
        self.popped += 1;
    }
}

impl<E: Eq + Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// A one-shot timer with lazy cancellation.
///
/// Its two times are plain numbers with [`NO_TIME`] for none, where
/// `Option`s took a tag test each: the test of `sync`, run for every timer
/// after every sender's and receiver's packet, is then one comparison
/// (`deadline < pending`: armed, and no entry pending at or before the
/// deadline), and every timer of the run is armed at a time before
/// `NO_TIME` (now plus a delay).
#[derive(Debug, Clone, Copy)]
pub struct Timer {
    /// When the timer should fire (`NO_TIME` = disarmed).
    deadline: TimeNs,
    /// Time of the heap entry that represents this timer (`NO_TIME` = none).
    pending: TimeNs,
}

/// A [`Timer`]'s time of none: after every time it is armed at.
const NO_TIME: TimeNs = TimeNs::MAX;

impl Default for Timer {
    fn default() -> Self {
        Timer { deadline: NO_TIME, pending: NO_TIME }
    }
}

/// What to do with a popped timer entry.
#[derive(Debug, PartialEq, Eq)]
pub enum TimerPop {
    /// Stale or disarmed: ignore.
    Ignore,
    /// The deadline moved later: the entry was re-scheduled.
    Rescheduled,
    /// The timer fires now (it is disarmed).
    Fire,
}

impl Timer {
    pub fn arm(&mut self, at: TimeNs) {
        debug_assert!(at != NO_TIME, "a timer armed at its time of none");
        self.deadline = at;
    }

    pub fn disarm(&mut self) {
        self.deadline = NO_TIME;
    }

    pub fn is_armed(&self) -> bool {
        self.deadline != NO_TIME
    }

    /// When the timer fires (None: disarmed).
    pub fn deadline(&self) -> Option<TimeNs> {
        self.is_armed().then_some(self.deadline)
    }

    /// Whether `sync` would schedule an entry: armed, and no entry pending
    /// at or before the deadline.
    #[inline(always)]
    pub fn needs_sync(&self) -> bool {
        self.deadline < self.pending
    }

    /// Make sure a heap entry exists no later than the deadline.
    pub fn sync<E: Eq + Copy>(&mut self, q: &mut EventQueue<E>, ev: E) {
        if self.needs_sync() {
            let at = self.deadline.max(q.now());
            q.schedule(at, ev);
            self.pending = at;
        }
    }

    /// Handle a popped entry for this timer at time `now`.
    pub fn on_pop<E: Eq + Copy>(&mut self, now: TimeNs, q: &mut EventQueue<E>, ev: E) -> TimerPop {
        let pop = self.pop_outcome(now, q, ev);
        #[cfg(feature = "event-counts")]
        crate::event_counts::count(match pop {
            TimerPop::Ignore => crate::event_counts::Counted::TimerIgnored,
            TimerPop::Rescheduled => crate::event_counts::Counted::TimerRescheduled,
            TimerPop::Fire => crate::event_counts::Counted::TimerFired,
        });
        pop
    }

    #[inline(always)]
    fn pop_outcome<E: Eq + Copy>(&mut self, now: TimeNs, q: &mut EventQueue<E>, ev: E) -> TimerPop {
        if self.pending != now {
            return TimerPop::Ignore; // superseded by an earlier entry
        }
        self.pending = NO_TIME;
        if !self.is_armed() {
            TimerPop::Ignore
        } else if self.deadline > now {
            q.schedule(self.deadline, ev);
            self.pending = self.deadline;
            TimerPop::Rescheduled
        } else {
            self.deadline = NO_TIME;
            TimerPop::Fire
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_run_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule(10, 'a');
        q.schedule(5, 'b');
        q.schedule(10, 'c');
        q.schedule(10, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'a', 'c', 'd']);
    }

    #[test]
    #[should_panic(expected = "past")]
    fn scheduling_into_the_past_panics() {
        let mut q = EventQueue::new();
        q.schedule(10, 1u8);
        q.pop();
        q.schedule(5, 2u8);
    }

    #[test]
    fn root_replacement_keeps_order() {
        // Events scheduled while processing another must interleave correctly.
        let mut q = EventQueue::new();
        for t in [30u64, 10, 20] {
            q.schedule(t, t);
        }
        let mut seen = vec![];
        while let Some((now, ev)) = q.pop() {
            seen.push(ev);
            if ev == 10 {
                q.schedule(25, 25); // replaces the consumed root
                q.schedule(15, 15); // ordinary push
            }
            let _ = now;
        }
        assert_eq!(seen, vec![10, 15, 20, 25, 30]);
        assert!(q.is_empty());
    }

    #[test]
    fn pops_in_time_then_scheduling_order_under_random_interleaving() {
        // Random schedules (many ties) interleaved with pops, checked against
        // a sorted reference of (time, scheduling order).
        let mut q: EventQueue<u64> = EventQueue::new();
        let mut x: u64 = 7;
        let mut pending: Vec<(u64, u64)> = vec![];
        let mut id = 0u64;
        for _ in 0..20_000 {
            x = crate::rng::splitmix64(x);
            if x % 5 < 3 || pending.is_empty() {
                let t = q.now() + x % 7;
                id += 1;
                q.schedule(t, id);
                pending.push((t, id));
            } else {
                pending.sort();
                let want = pending.remove(0);
                assert_eq!(q.pop().unwrap(), want);
            }
            assert_eq!(q.len(), pending.len());
        }
    }

    #[test]
    fn pending_at_sees_the_next_event_also_while_the_root_is_consumed() {
        let mut q: EventQueue<u8> = EventQueue::new();
        for (t, e) in [(10, 1), (20, 2), (10, 3), (30, 4)] {
            q.schedule(t, e);
        }
        assert!(q.pending_at(10));
        assert_eq!(q.pop(), Some((10, 1))); // root consumed, (10, 3) still pending
        assert!(q.pending_at(10));
        assert_eq!(q.pop(), Some((10, 3)));
        assert!(!q.pending_at(10), "only 20 and 30 left");
        q.schedule(10, 5); // replaces the consumed root
        assert!(q.pending_at(10));
        assert_eq!(q.pop(), Some((10, 5)));
        assert_eq!(q.pop(), Some((20, 2)));
        assert!(!q.pending_at(20));
        assert!(q.pending_at(30) || q.peek_time() == Some(30));
    }

    #[test]
    fn lazy_timer_fires_once_at_latest_deadline() {
        let mut q: EventQueue<u8> = EventQueue::new();
        let mut t = Timer::default();
        t.arm(100);
        t.sync(&mut q, 0);
        t.arm(150); // re-armed later: no new entry
        t.sync(&mut q, 0);
        assert_eq!(q.len(), 1);
        let (now, _) = q.pop().unwrap();
        assert_eq!(t.on_pop(now, &mut q, 0), TimerPop::Rescheduled);
        let (now, _) = q.pop().unwrap();
        assert_eq!(now, 150);
        assert_eq!(t.on_pop(now, &mut q, 0), TimerPop::Fire);
        assert!(q.is_empty());
    }

    #[test]
    fn lazy_timer_earlier_rearm_supersedes() {
        let mut q: EventQueue<u8> = EventQueue::new();
        let mut t = Timer::default();
        t.arm(100);
        t.sync(&mut q, 0);
        t.arm(50);
        t.sync(&mut q, 0);
        let (now, _) = q.pop().unwrap();
        assert_eq!((now, t.on_pop(now, &mut q, 0)), (50, TimerPop::Fire));
        let (now, _) = q.pop().unwrap();
        assert_eq!((now, t.on_pop(now, &mut q, 0)), (100, TimerPop::Ignore));
    }

    #[test]
    fn disarmed_timer_is_ignored() {
        let mut q: EventQueue<u8> = EventQueue::new();
        let mut t = Timer::default();
        t.arm(10);
        t.sync(&mut q, 0);
        t.disarm();
        let (now, _) = q.pop().unwrap();
        assert_eq!(t.on_pop(now, &mut q, 0), TimerPop::Ignore);
    }
}
