//! rt-app's workload files (rt-app's JSON: tasks of phases of events), read
//! as rt-app reads them (`json`: comments, trailing commas, repeated keys
//! in order, bare keys; `parse`: the grammar; `events`: each event, its key
//! matched by prefix), the workloads shipped with feelbench (`shipped`),
//! and what a workload is (`model`). The executor that runs a workload's tasks on
//! threads and records each activation is `exec`.

pub mod events;
pub mod exec;
pub mod json;
pub mod model;
pub mod parse;
pub mod settings;
pub mod shipped;
