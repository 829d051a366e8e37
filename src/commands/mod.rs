//! The subcommands: each turns validated settings into work and output.

pub mod calibrate;
pub mod compare;
pub mod list;
pub mod merge;
pub mod report;
pub mod run;
