//! A FIFO ring buffer whose capacity is a power of two, for the per-packet
//! queues: delay lines (lines.rs), the single-queue disciplines' FIFO
//! (qdisc/fifo.rs) and the queues of CoDel, PIE, PI2, FQ-CoDel, DRR and
//! DualPI2, the TCP sender's scoreboard and retransmission queue. (RRMQS
//! keeps `VecDeque`: it rotates its active list; the packet queues left there
//! measured the same either way.)
//!
//! Why not `std::collections::VecDeque`: its capacity is any number, so every
//! index wraps with a compare and a conditional subtract (`wrap_add`); here
//! it is one `and` with `capacity - 1`. The per-packet queue operations
//! (about eight per data packet and its ACK) were ~6 % of an S0 run's
//! instructions through `VecDeque` (docs/benchmarks.md). Same FIFO
//! semantics; a full ring doubles, keeping the order. Elements are `Copy`,
//! and the storage is a plain initialised slice. An element is read and
//! written without a bounds check (`cell`, `cell_mut`: the one `unsafe`
//! here): its index is masked by the capacity minus one, in bounds whenever
//! the ring holds an element or has room for the one pushed; the checks cost
//! ~1 % of a run's instructions (docs/benchmarks.md).

use std::ops::{Index, IndexMut};

pub(crate) struct Ring<T: Copy> {
    /// Storage; its length is 0 or a power of two.
    buf: Box<[T]>,
    /// Physical index of the front element.
    head: usize,
    len: usize,
    /// Capacity of the first allocation (at the first push).
    first_capacity: usize,
}

/// Capacity of the first allocation of [`Ring::new`].
const FIRST_CAPACITY: usize = 8;

impl<T: Copy> Ring<T> {
    pub(crate) fn new() -> Ring<T> {
        Ring::with_capacity(FIRST_CAPACITY)
    }

    /// A ring that holds `n` elements before it grows (allocated at the first push).
    pub(crate) fn with_capacity(n: usize) -> Ring<T> {
        Ring { buf: Box::new([]), head: 0, len: 0, first_capacity: n.max(1).next_power_of_two() }
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        (self.head + i) & self.mask()
    }

    /// The element in physical slot `s`, a `slot(i)` or `head` of a ring
    /// with an allocation (`buf` not empty): below `buf.len()`.
    #[inline(always)]
    fn cell(&self, s: usize) -> &T {
        debug_assert!(s < self.buf.len());
        // SAFETY: `s` is masked by `buf.len() - 1` (`slot`) or is `head`,
        // kept masked, and `buf` is not empty (the callers hold an element
        // or just grew): `s < buf.len()`.
        unsafe { self.buf.get_unchecked(s) }
    }

    /// `cell`, mutable.
    #[inline(always)]
    fn cell_mut(&mut self, s: usize) -> &mut T {
        debug_assert!(s < self.buf.len());
        // SAFETY: as `cell`.
        unsafe { self.buf.get_unchecked_mut(s) }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub(crate) fn push_back(&mut self, v: T) {
        if self.len == self.buf.len() {
            self.grow(v);
        }
        let i = self.slot(self.len);
        *self.cell_mut(i) = v;
        self.len += 1;
    }

    /// `push_back`, and the element pushed, to finish in place (one slot
    /// computation where a `push_back` and a write to its back take two).
    #[inline]
    pub(crate) fn push_back_mut(&mut self, v: T) -> &mut T {
        if self.len == self.buf.len() {
            self.grow(v);
        }
        let i = self.slot(self.len);
        self.len += 1;
        let cell = self.cell_mut(i);
        *cell = v;
        cell
    }

    /// Whether the next push grows the buffer.
    /// `push_back` of `f(0)`, ..., `f(n - 1)` in turn: the room made once
    /// (the same doublings as one by one, and the same layout: a ring that
    /// grows is laid out from slot 0 either way), then one store per
    /// element without a test of room.
    #[inline(always)]
    pub(crate) fn push_back_n(&mut self, n: usize, mut f: impl FnMut(usize) -> T) {
        if n == 0 {
            return;
        }
        while self.room() < n {
            self.grow(f(0));
        }
        let mask = self.mask();
        let mut s = (self.head + self.len) & mask;
        for i in 0..n {
            *self.cell_mut(s) = f(i);
            s = (s + 1) & mask;
        }
        self.len += n;
    }

    /// How many more elements fit without growing.
    #[inline(always)]
    pub(crate) fn room(&self) -> usize {
        self.buf.len() - self.len
    }

    #[inline(always)]
    pub(crate) fn is_full(&self) -> bool {
        self.len == self.buf.len()
    }

    /// `push_back_mut` into a ring that is not full ([`Ring::is_full`]): no
    /// growth, so no call on the caller's path (a full ring panics).
    #[inline(always)]
    pub(crate) fn push_back_mut_with_room(&mut self, v: T) -> &mut T {
        assert!(!self.is_full(), "a push with room into a full ring");
        let i = self.slot(self.len);
        self.len += 1;
        let cell = self.cell_mut(i);
        *cell = v;
        cell
    }

    /// Make room for one more element (`fill` as in `grow`).
    #[inline]
    pub(crate) fn make_room(&mut self, fill: T) {
        if self.is_full() {
            self.grow(fill);
        }
    }

    #[inline]
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = *self.cell(self.head);
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(v)
    }

    /// Drop the first `n` elements (all of them if fewer).
    pub(crate) fn discard_front(&mut self, n: usize) {
        let n = n.min(self.len);
        self.head = self.slot(n);
        self.len -= n;
    }

    pub(crate) fn clear(&mut self) {
        self.discard_front(self.len);
    }

    pub(crate) fn front(&self) -> Option<&T> {
        self.get(0)
    }

    pub(crate) fn back(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| self.cell(self.slot(i)))
    }

    /// The elements front to back, as two slices (the second is empty
    /// unless the ring wraps).
    pub(crate) fn as_slices(&self) -> (&[T], &[T]) {
        let first = self.len.min(self.buf.len() - self.head);
        (&self.buf[self.head..self.head + first], &self.buf[..self.len - first])
    }

    /// The first `n` elements if they are contiguous in the storage (None
    /// if the ring holds fewer or they wrap): `as_slices().0.get(..n)`
    /// without the second slice's bounds.
    #[inline(always)]
    pub(crate) fn front_run(&self, n: usize) -> Option<&[T]> {
        (n <= self.len && self.head + n <= self.buf.len()).then(|| &self.buf[self.head..self.head + n])
    }

    pub(crate) fn as_mut_slices(&mut self) -> (&mut [T], &mut [T]) {
        let first = self.len.min(self.buf.len() - self.head);
        let (low, high) = self.buf.split_at_mut(self.head);
        (&mut high[..first], &mut low[..self.len - first])
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + Clone {
        let (a, b) = self.as_slices();
        a.iter().chain(b.iter())
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        let (a, b) = self.as_mut_slices();
        a.iter_mut().chain(b.iter_mut())
    }

    /// Shrink a ring that uses at most a quarter of its capacity (above the
    /// first capacity) to twice its length (not below the first capacity).
    /// A FIFO's free slots are the ones it writes next: a sender's scoreboard
    /// that grew to thousands of segments in slow start and then holds a few
    /// dozen would cycle through all of them, each store to a line last used
    /// many round trips ago (2000 flows). Content and order are kept.
    #[inline]
    pub(crate) fn shrink_if_sparse(&mut self) {
        if self.buf.len() > self.first_capacity && self.len * 4 <= self.buf.len() {
            self.shrink();
        }
    }

    #[cold]
    #[inline(never)]
    fn shrink(&mut self) {
        let cap = (self.len * 2).next_power_of_two().max(self.first_capacity);
        let fill = self.buf[self.head];
        let mut buf = Vec::with_capacity(cap);
        buf.extend(self.iter().copied());
        buf.resize(cap, fill);
        self.buf = buf.into_boxed_slice();
        self.head = 0;
    }

    /// Double the capacity (or allocate the first), front at index 0; the
    /// free slots hold copies of `fill` (the element about to be pushed: no
    /// `Default` needed, no uninitialised memory).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: T) {
        let cap = (self.buf.len() * 2).max(self.first_capacity);
        let mut buf = Vec::with_capacity(cap);
        buf.extend(self.iter().copied());
        buf.resize(cap, fill);
        self.buf = buf.into_boxed_slice();
        self.head = 0;
    }
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Ring::new()
    }
}

impl<T: Copy> Index<usize> for Ring<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        self.get(i).expect("ring index out of range")
    }
}

impl<T: Copy> IndexMut<usize> for Ring<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len, "ring index out of range");
        let s = self.slot(i);
        self.cell_mut(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn a_run_pushed_at_once_is_laid_out_as_pushed_one_by_one() {
        // push_back_n against n push_backs on a twin ring: the same elements
        // in the same slots (as_slices) and the same capacity, across wraps
        // and growths, runs of 0 to 20 between pops.
        let (mut a, mut b) = (Ring::<u64>::new(), Ring::<u64>::new());
        let mut x: u64 = 5;
        for k in 0..20_000u64 {
            x = crate::rng::splitmix64(x);
            let n = (x % 21) as usize;
            a.push_back_n(n, |i| k * 100 + i as u64);
            for i in 0..n {
                b.push_back(k * 100 + i as u64);
            }
            for _ in 0..(x >> 32) % 23 {
                assert_eq!(a.pop_front(), b.pop_front());
            }
            assert_eq!(a.as_slices(), b.as_slices());
            assert_eq!(a.buf.len(), b.buf.len());
        }
    }

    #[test]
    fn behaves_as_a_fifo_under_random_pushes_and_pops() {
        // Against std's VecDeque as the reference FIFO: every pop, front,
        // back, indexed read and iteration agree, across wraps and growths.
        let (mut r, mut v) = (Ring::<u64>::new(), VecDeque::new());
        let mut x: u64 = 11;
        for n in 0..50_000u64 {
            x = crate::rng::splitmix64(x);
            // Phases of net growth and net shrinking, so the ring wraps at many sizes.
            let push_bias = if (n / 5_000) % 2 == 0 { 6 } else { 3 };
            if x % 10 < push_bias {
                r.push_back(n);
                v.push_back(n);
            } else if x % 97 == 0 {
                // Now and then several at once from the front.
                let k = (x >> 40) as usize % 4;
                r.discard_front(k);
                v.drain(..k.min(v.len()));
            } else {
                assert_eq!(r.pop_front(), v.pop_front());
            }
            assert_eq!(r.len(), v.len());
            assert_eq!(r.front(), v.front());
            assert_eq!(r.back(), v.back());
            if !v.is_empty() {
                let i = (x >> 32) as usize % v.len();
                assert_eq!(r[i], v[i]);
                r[i] += 1;
                v[i] += 1;
            }
            if n % 997 == 0 {
                assert!(r.iter().eq(v.iter()));
            }
            // The front's contiguous run: the first k elements unless they wrap.
            let k = (x >> 48) as usize % 6;
            assert_eq!(r.front_run(k), r.as_slices().0.get(..k));
            assert!(r.front_run(k).is_none_or(|run| run.iter().eq(v.iter().take(k))));
            if n % 61 == 0 {
                r.shrink_if_sparse();
            }
        }
    }

    #[test]
    fn capacity_is_a_power_of_two_and_growth_keeps_the_order() {
        let mut r = Ring::<u32>::with_capacity(5);
        assert_eq!(r.buf.len(), 0, "allocated at the first push");
        for i in 0..6 {
            r.push_back(i);
        }
        assert_eq!(r.buf.len(), 8);
        for _ in 0..4 {
            r.pop_front();
        }
        // Wrap, then fill past the capacity: the ring doubles in order.
        for i in 6..15 {
            r.push_back(i);
        }
        assert_eq!(r.buf.len(), 16);
        assert!(r.iter().copied().eq(4..15));
        let last = r.len() - 1;
        r[last] = 99;
        for x in r.iter_mut() {
            *x += 1;
        }
        assert!(r.iter().copied().eq((5..15).chain([100])));
    }

    #[test]
    fn push_back_mut_gives_the_element_just_pushed_through_wraps_and_growth() {
        // Each push is changed in place through the returned reference, at
        // the first allocation, after wrapping and across a doubling; the
        // ring then holds exactly the changed values, in order.
        let mut r = Ring::<(u32, u32)>::with_capacity(4);
        let mut want = std::collections::VecDeque::new();
        for i in 0..40u32 {
            r.push_back_mut((i, 0)).1 = 7 * i;
            want.push_back((i, 7 * i));
            if i % 3 == 2 {
                assert_eq!(r.pop_front(), want.pop_front());
            }
            assert!(r.iter().eq(want.iter()), "after pushing {i}");
        }
        assert!(r.buf.len() > 4, "the ring grew");
    }

    #[test]
    fn a_sparse_ring_shrinks_to_twice_its_length_and_keeps_its_content() {
        let mut r = Ring::<u32>::with_capacity(8);
        for i in 0..1000 {
            r.push_back(i);
        }
        assert_eq!(r.buf.len(), 1024);
        r.discard_front(990); // 10 left, wrapped position
        r.shrink_if_sparse();
        assert_eq!(r.buf.len(), 32, "twice the length, rounded up to a power of two");
        assert!(r.iter().copied().eq(990..1000));
        r.discard_front(8);
        r.shrink_if_sparse();
        assert_eq!(r.buf.len(), 8, "not below the first capacity");
        assert!(r.iter().copied().eq(998..1000));
        // More than a quarter full: kept.
        let mut r = Ring::<u32>::with_capacity(8);
        for i in 0..16 {
            r.push_back(i);
        }
        r.discard_front(11);
        r.shrink_if_sparse();
        assert_eq!(r.buf.len(), 16);
    }
}
