//! Loads: the background work a probe is measured under. Each load is a file
//! here plus one line in [`LOADS`]; the engine only sees [`Load`]. A load runs
//! in one or more worker processes, each repeating [`Load::step`] until it is
//! told to stop, and counts the work it gets done.

pub mod burn;
pub mod none;
pub mod sim;

use crate::probe::SimParams;

/// Background work, done in short slices.
pub trait Load {
    /// Does one short slice of work (a few ms, or one period of a simulation)
    /// and returns the units of work it got done.
    fn step(&mut self) -> f64;
}

/// A load's entry in the registry.
pub struct LoadDef {
    pub name: &'static str,
    /// One line for `feelbench list`.
    pub summary: &'static str,
    /// The unit of the work it reports.
    pub unit: &'static str,
    /// How many worker processes run it (0: nothing to start).
    pub processes: fn(&SimParams) -> usize,
    /// Builds one process's share of the load; fails (with a message for the
    /// user) when a needed parameter is missing.
    pub build: fn(&SimParams) -> Result<Box<dyn Load>, String>,
    /// Whether `feelbench run` includes it without being asked.
    pub default: fn(&SimParams) -> bool,
}

/// Every load, in the order they are run and listed.
pub static LOADS: &[LoadDef] = &[none::DEF, burn::DEF, sim::VIDEO, sim::X, sim::CUSTOM];

/// The load called `name`.
pub fn find(name: &str) -> Option<&'static LoadDef> {
    LOADS.iter().find(|l| l.name == name)
}
