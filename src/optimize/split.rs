//! Train and holdout: trigger queries split by what they expect, so both halves hold queries
//! that should fire and queries that should not, in the same proportion.

use rand::SeedableRng;
use rand::seq::SliceRandom;

use super::Query;

/// Splits `queries` into (train, holdout), `train_fraction` of each kind in train (at least
/// one of each kind in each half when there are two or more of it), shuffled by `seed`.
pub fn stratified(queries: &[Query], train_fraction: f64, seed: u64) -> (Vec<Query>, Vec<Query>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let (mut train, mut holdout) = (Vec::new(), Vec::new());
    for kind in [true, false] {
        let mut group: Vec<Query> = queries
            .iter()
            .filter(|q| q.should_trigger == kind)
            .cloned()
            .collect();
        group.shuffle(&mut rng);
        let n = group.len();
        let mut k = (n as f64 * train_fraction).round() as usize;
        if n >= 2 {
            k = k.clamp(1, n - 1);
        }
        holdout.extend(group.split_off(k.min(n)));
        train.extend(group);
    }
    train.sort_by(|a, b| a.id.cmp(&b.id));
    holdout.sort_by(|a, b| a.id.cmp(&b.id));
    (train, holdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queries(pos: usize, neg: usize) -> Vec<Query> {
        (0..pos + neg)
            .map(|i| Query {
                id: format!("q{i:03}"),
                query: format!("query {i}"),
                should_trigger: i < pos,
            })
            .collect()
    }

    #[test]
    fn both_halves_hold_both_kinds_in_proportion_and_the_seed_decides() {
        let q = queries(5, 5);
        let (train, holdout) = stratified(&q, 0.6, 7);
        assert_eq!(train.len(), 6);
        assert_eq!(holdout.len(), 4);
        for half in [&train, &holdout] {
            assert!(half.iter().any(|q| q.should_trigger));
            assert!(half.iter().any(|q| !q.should_trigger));
        }
        assert_eq!(stratified(&q, 0.6, 7), (train.clone(), holdout.clone()));
        let other = (1..50)
            .map(|s| stratified(&q, 0.6, s))
            .any(|(t, _)| t != train);
        assert!(other, "another seed, another split");
        // Two of a kind: one each side, whatever the fraction.
        let (t, h) = stratified(&queries(2, 2), 0.9, 1);
        assert_eq!((t.len(), h.len()), (2, 2));
    }
}
