//! Software prefetch of a flow's state, for runs with thousands of flows.
//!
//! With a few flows every sender, receiver and CCA stays in the L1/L2
//! caches. From a few hundred TCP flows (~2-4 KB of endpoint state each)
//! they no longer fit this CPU's 1 MB L2, and an ACK spends much of its time
//! waiting for the sender's cache lines from L3. The simulator often knows
//! one event ahead whose state comes next (the flow at the front of a shared
//! delay line, the receiver of the packet put on the link), so sim.rs asks
//! for those lines early (`_mm_prefetch` with the T0 hint: into all levels).
//! A prefetch is only a hint: it never faults and changes no result; the
//! gains and the cost below the threshold are measured in docs/benchmarks.md.

/// Prefetch the cache lines at `x`'s start and every 64 bytes after it, up
/// to its size: all of `x` when it starts a line, else all but its last few
/// bytes' line (a hint either way; no-op off x86-64).
#[inline(always)]
pub(crate) fn prefetch<T: ?Sized>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        const LINE_BYTES: usize = 64;
        let base = x as *const T as *const i8;
        let mut off = 0;
        while off < std::mem::size_of_val(x) {
            // SAFETY: a prefetch reads nothing architecturally and never
            // faults, whatever the address (Intel SDM, PREFETCHh); the
            // addresses are inside `x` anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(off)) };
            off += LINE_BYTES;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// `prefetch` of the `T` at `p`, which may point anywhere (as
/// `prefetch_at`: an element of a slice by `as_ptr().wrapping_add(i)`,
/// without the bounds check of forming a reference).
#[inline(always)]
pub(crate) fn prefetch_obj_at<T>(p: *const T) {
    let base = p as *const u8;
    let mut off = 0;
    while off < std::mem::size_of::<T>() {
        prefetch_at(base.wrapping_add(off));
        off += 64;
    }
}

/// Prefetch the cache line at `p`, which may point anywhere (a hint: no
/// read, no fault, so no bounds check is needed to form `p`; no-op off
/// x86-64).
#[inline(always)]
pub(crate) fn prefetch_at<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing architecturally and never
        // faults, whatever the address (Intel SDM, PREFETCHh).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
