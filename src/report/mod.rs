//! The run document (the one source of every output), reading and writing it,
//! and the renderers that turn it into tables, CSV and Markdown.

pub mod csv;
pub mod file;
pub mod markdown;
pub mod schema;
pub mod table;
