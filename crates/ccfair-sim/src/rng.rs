//! Deterministic random streams. One master seed per run; each component gets
//! its own independent stream derived with SplitMix64 from (seed, stream id),
//! so adding a consumer to one component never shifts another's draws.

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// SplitMix64 finalizer (Steele, Lea, Flood, OOPSLA 2014): a bijective mixer.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stream identifiers: a component kind in the high bits, an index below.
pub mod stream {
    pub const FLOW_START: u64 = 1 << 40;
    pub const FLOW_CCA: u64 = 2 << 40;
    pub const LINK_LOSS: u64 = 3 << 40;
    pub const QDISC: u64 = 4 << 40;
    /// Host noise on a flow's data packets (sender host) and ACKs (receiver host).
    pub const HOST_SEND: u64 = 5 << 40;
    pub const HOST_ACK: u64 = 6 << 40;
    /// A topology's link `k` (topology.rs): its random loss and its queue discipline.
    pub const TOPO_LINK_LOSS: u64 = 7 << 40;
    pub const TOPO_LINK_QDISC: u64 = 8 << 40;
    /// A TCP flow's receiver timestamp offset (its `tp->tsoffset`, cc/mod.rs), and the
    /// hosts' clock at time 0: their tick clocks' phase and TSvals (one per run, unless a run
    /// gives it; cc/mod.rs `host_clock_epoch_ns`).
    pub const TCP_TS_OFFSET: u64 = 9 << 40;
    pub const TCP_TS_EPOCH: u64 = 10 << 40;
    /// The host noise's heavy tail on a flow's ACKs, lines.rs `TailLaw`.
    pub const HOST_TAIL_ACK: u64 = 11 << 40;
    /// The `noise-batch` measurement tool's release process shared by a direction's lines
    /// (noise_batch.rs), its host-noise stream's kind (`HOST_SEND`, `HOST_ACK`) below.
    pub const NOISE_BATCH_HOST: u64 = 12 << 40;
}

/// Seed for stream `id` of a run with master `seed`.
pub fn derive_seed(seed: u64, id: u64) -> u64 {
    splitmix64(splitmix64(seed) ^ splitmix64(id.wrapping_add(0x5EED)))
}

pub fn stream_rng(seed: u64, id: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(derive_seed(seed, id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let a: Vec<u64> = (0..4).map(|_| 0).scan(stream_rng(7, 1), |r, _: u64| Some(r.gen())).collect();
        let b: Vec<u64> = (0..4).map(|_| 0).scan(stream_rng(7, 1), |r, _: u64| Some(r.gen())).collect();
        let c: Vec<u64> = (0..4).map(|_| 0).scan(stream_rng(7, 2), |r, _: u64| Some(r.gen())).collect();
        let d: Vec<u64> = (0..4).map(|_| 0).scan(stream_rng(8, 1), |r, _: u64| Some(r.gen())).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
