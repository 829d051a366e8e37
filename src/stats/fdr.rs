//! False discoveries among many tests: Benjamini–Hochberg q-values, shared
//! by the change points of the store's series and the verdicts of an
//! experiment's arms, probes, loads and figures.

/// The Benjamini–Hochberg q-value of each of `p_values`: the smallest
/// false discovery rate at which it is a discovery, `min over j >= i of
/// p(j) m / j` by rank. Those with `q <= rate` are the discoveries of
/// the procedure at that rate (the largest rank `k` with `p(k) <= k rate /
/// m`, and every smaller p-value). The rate holds for independent or
/// positively dependent tests (figures of one scenario measured in the same
/// rounds move together, which is the positive kind).
pub fn benjamini_hochberg(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut q = vec![1.0; m];
    let mut smallest = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        smallest = smallest.min(p_values[i] * m as f64 / (rank + 1) as f64);
        q[i] = smallest;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benjamini_hochberg_keeps_the_ranks_under_the_line() {
        let discoveries = |p: &[f64], rate: f64| -> Vec<bool> {
            benjamini_hochberg(p).iter().map(|q| *q <= rate).collect()
        };
        // m = 5, q = 0.05: lines 0.01, 0.02, 0.03, 0.04, 0.05.
        let p = [0.04, 0.001, 0.9, 0.025, 0.011];
        assert_eq!(
            discoveries(&p, 0.05),
            [true, true, false, true, true],
            "rank 4 (0.04 <= 0.04) takes every smaller p with it"
        );
        assert_eq!(discoveries(&[0.2, 0.3], 0.05), [false, false]);
        assert!(benjamini_hochberg(&[]).is_empty());
        // By hand: p(k) 5 / k is 0.005, 0.0275, 0.0417, 0.05, 0.9.
        let q = benjamini_hochberg(&p);
        let expected = [0.05, 0.005, 0.9, 0.025 * 5.0 / 3.0, 0.0275];
        for (q, e) in q.iter().zip(expected) {
            assert!((q - e).abs() < 1e-12, "{q} {e}");
        }
        // A larger p-value whose p m / k is smaller lowers the q of those before it.
        let q = benjamini_hochberg(&[0.03, 0.031]);
        assert!((q[0] - 0.031).abs() < 1e-12 && (q[1] - 0.031).abs() < 1e-12);
    }
}
