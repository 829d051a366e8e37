//! The integration tests, in one binary so the harness runs them side by
//! side (most wait on short real runs, not on a CPU): the built binary on
//! 1–3 s scenarios (its JSON, cleanup and exit codes), the layering of the
//! source tree, the README's generated tables and old run documents.

mod ab;
mod architecture;
mod bandwidth_loads;
mod cleanup;
mod cli;
mod cmd_load;
mod common;
mod compare;
mod delay_accounting;
mod disk_loads;
mod docs;
mod environment;
mod explain;
mod fileio;
mod fragment;
mod game;
mod history;
mod html;
mod job;
mod late_context;
mod late_report;
mod late_split;
mod memory_loads;
mod metadata_loads;
mod methods;
mod micro;
mod placement;
mod pm_qos;
mod postgres;
mod precision;
mod process_loads;
mod regressions;
mod repeat;
mod response;
mod rtapp;
mod rtapp_check;
mod run;
mod series;
mod store;
mod suites;
mod telemetry;
mod trace;
mod v1_documents;
mod watch;
mod watch_live;
mod watch_trace;
