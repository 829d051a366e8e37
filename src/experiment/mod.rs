//! A/B/n experiments (`feelbench ab`) as data: the arms as given (`arms`),
//! which arm runs when (`plan`), the experiment's document (`model`), its
//! statistics over rounds (`analysis`) and its answer (`ranking`). Reads
//! run documents; never runs anything and never renders: the running and
//! the renderings are `commands::ab`'s.

pub mod analysis;
pub mod arms;
pub mod model;
pub mod plan;
pub mod ranking;

#[cfg(test)]
pub mod fixture;
#[cfg(test)]
mod tests;
