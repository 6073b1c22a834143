//! A small deterministic PRNG (SplitMix64) so loss patterns are reproducible from a
//! seed; statistical quality is ample for drop decisions.

pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn draws_are_spread_over_the_range() {
        let mut rng = SplitMix64::new(42);
        let high = (0..10_000)
            .filter(|_| rng.next_u64() > u64::MAX / 2)
            .count();
        assert!(
            (4_800..5_200).contains(&high),
            "{high} of 10000 above the middle"
        );
    }
}
