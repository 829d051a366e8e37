//! The engine: runs scenarios in worker processes (re-executions of this
//! binary), supervises them, and always stops and reaps them.

mod context;
pub mod explain;
pub mod interrupt;
pub mod protocol;
pub mod scenario;
pub mod supervise;
pub mod worker;
pub mod workspace;
