//! The store against its in-memory model (`model/`) over seeded random operation sequences;
//! the `store_model` fuzz target runs the same comparison on fuzzer input.

mod model;

/// SplitMix64: a small, well-mixed PRNG, so every run replays the same sequences.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[test]
fn store_agrees_with_its_model_over_seeded_sequences() {
    const SEQUENCES: u64 = 300;
    let mut rng = SplitMix(0x6b65_656c);
    let mut finished = Vec::new();
    for seed in 0..SEQUENCES {
        let len = 40 + (rng.next() % 200) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let mut harness = model::Harness::new();
        if let Err(e) = harness.run(&bytes) {
            panic!("sequence {seed} ({} ops): {e}", harness.log.len());
        }
        finished.push(harness);
        if finished.len() == 50 {
            drop_together(std::mem::take(&mut finished));
        }
    }
    drop_together(finished);
}

/// Closes stores side by side: closing one waits for its checkpoint thread's pause (up to
/// 250 ms), which would otherwise dominate the test.
fn drop_together(harnesses: Vec<model::Harness>) {
    std::thread::scope(|s| {
        for h in harnesses {
            s.spawn(move || drop(h));
        }
    });
}
