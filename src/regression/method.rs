//! Where the method versions change within a series: runs whose series
//! keys differ only in their method versions (`store::fingerprint::base_of`)
//! are one series of a figure, cut at each run whose versions differ from
//! the run before it, as an annotation cuts; values are never compared
//! across the cut, so a new method is never called a regression.

use crate::store::fingerprint::{base_of, methods_of};
use crate::store::query::Point;

/// The series `point` is in, its method versions aside.
pub fn series_of(point: &Point) -> &str {
    base_of(&point.series)
}

/// The positions in `points` (one series of a figure, or every series
/// under `--any-series`, in run order) of the runs whose method versions
/// differ from the run's before.
pub fn changes(points: &[&Point]) -> Vec<usize> {
    (1..points.len())
        .filter(|&i| methods_of(&points[i].series) != methods_of(&points[i - 1].series))
        .collect()
}
