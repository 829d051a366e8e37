//! Which arm runs when: the slots of a round (each arm once, and the
//! baseline a second time as the A/A control) and each round's order of
//! them, balanced over positions by Williams' design from the seed, or
//! fixed (for measuring what a fixed order costs under drift).

use serde::{Deserialize, Serialize};

/// How the rounds order the slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderKind {
    /// Each slot takes each position equally often (and follows each other
    /// equally often), the rounds' orders drawn from the seed.
    Balanced,
    /// Every round in the slots' own order.
    Fixed,
}

/// One run of a round: an arm, or the baseline again as the A/A control.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    /// The arm's index (0: the baseline).
    pub arm: usize,
    /// The baseline's second run of the round.
    pub aa: bool,
    /// How the slot is shown and its files are named: the arm's name, and
    /// `NAME-aa` for the control.
    pub name: String,
}

/// The slots of a round over arms named `names`: each arm, then, with
/// `aa`, the baseline again.
pub fn slots(names: &[String], aa: bool) -> Vec<Slot> {
    let arms = names.iter().enumerate().map(|(arm, name)| Slot {
        arm,
        aa: false,
        name: name.clone(),
    });
    let control = aa.then(|| Slot {
        arm: 0,
        aa: true,
        name: format!("{}-aa", names[0]),
    });
    arms.chain(control).collect()
}

/// The order of `slots` slots in each of `rounds` rounds.
pub fn orders(kind: OrderKind, slots: usize, rounds: u32, seed: u64) -> Vec<Vec<usize>> {
    match kind {
        OrderKind::Balanced => crate::stats::order::round_orders(slots, rounds as usize, seed),
        OrderKind::Fixed => vec![(0..slots).collect(); rounds as usize],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_is_the_baseline_again() {
        let names = ["base".to_string(), "n19".to_string()];
        let with = slots(&names, true);
        assert_eq!(with.len(), 3);
        assert_eq!(
            (with[2].arm, with[2].aa, with[2].name.as_str()),
            (0, true, "base-aa")
        );
        assert_eq!(slots(&names, false).len(), 2);
    }

    #[test]
    fn every_order_is_a_permutation() {
        for kind in [OrderKind::Balanced, OrderKind::Fixed] {
            let orders = orders(kind, 3, 6, 42);
            assert_eq!(orders.len(), 6);
            for order in orders {
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(sorted, [0, 1, 2]);
            }
        }
    }
}
