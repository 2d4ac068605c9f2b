//! A bounded histogram of lapses, for the per-minute p99: buckets 1/128 of a power of two
//! wide (a value's exponent and top 7 mantissa bits), so a quantile read from it is within
//! 0.4% of the true value; the largest value is kept exactly, so a quantile that falls in the
//! top bucket (as the p99 of a minute with fewer than 100 commands does) is exact. A minute's
//! histogram holds only the buckets it saw: at most a few thousand, whatever its count.

/// Mantissa bits kept in a bucket's key.
const MANTISSA_BITS: u32 = 7;
const SHIFT: u32 = 52 - MANTISSA_BITS;

/// Counts of values per bucket, sorted by bucket.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    buckets: Vec<(u32, u64)>,
    count: u64,
    max: f64,
}

/// The bucket of `v` (zero, negative and NaN share bucket 0).
fn key(v: f64) -> u32 {
    if v > 0.0 && v.is_finite() {
        (v.to_bits() >> SHIFT) as u32
    } else {
        0
    }
}

/// The middle of bucket `k`.
fn middle(k: u32) -> f64 {
    if k == 0 {
        return 0.0;
    }
    let low = f64::from_bits(u64::from(k) << SHIFT);
    let high = f64::from_bits(u64::from(k + 1) << SHIFT);
    (low + high) / 2.0
}

impl Histogram {
    pub fn add(&mut self, v: f64) {
        let k = key(v);
        match self.buckets.binary_search_by_key(&k, |b| b.0) {
            Ok(i) => self.buckets[i].1 += 1,
            Err(i) => self.buckets.insert(i, (k, 1)),
        }
        if self.count == 0 || v > self.max {
            self.max = v;
        }
        self.count += 1;
    }

    /// The `q` quantile (0..=1), nearest rank: the middle of the bucket holding that rank,
    /// or the largest value when the rank falls in the largest value's bucket.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for &(k, n) in &self.buckets {
            seen += n;
            if seen >= rank {
                return if k == key(self.max) {
                    self.max
                } else {
                    middle(k)
                };
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact nearest-rank quantile of `values`.
    fn exact(values: &mut [f64], q: f64) -> f64 {
        values.sort_by(f64::total_cmp);
        let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
        values[rank - 1]
    }

    #[test]
    fn quantiles_are_within_the_buckets_precision() {
        // A spread of lapses from microseconds to minutes (a fixed generator, no randomness).
        let mut values: Vec<f64> = (1..=20_000u64)
            .map(|i| ((i * 7919) % 20_011) as f64 * 0.37 + (i % 13) as f64 * 0.001)
            .collect();
        let mut h = Histogram::default();
        for &v in &values {
            h.add(v);
        }
        for q in [0.5, 0.9, 0.99, 0.999] {
            let want = exact(&mut values, q);
            let got = h.quantile(q);
            assert!((got - want).abs() <= want * 0.004, "q{q}: {got} vs {want}");
        }
        assert_eq!(h.quantile(1.0), exact(&mut values, 1.0));
        assert!(h.buckets.len() < 2_000, "{} buckets", h.buckets.len());
    }

    #[test]
    fn small_minutes_and_edge_values_are_exact() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.99), 0.0);
        h.add(900.0);
        h.add(5.0);
        assert_eq!(h.quantile(0.99), 900.0);
        let mut z = Histogram::default();
        z.add(0.0);
        z.add(-1.0);
        assert_eq!(z.quantile(0.99), 0.0);
    }
}
