//! The commands, one file per group. Each file lists its commands (name, access, flags,
//! handler) for the table in `crate::dispatch`.

pub mod access;
pub mod admin;
pub mod auth;
pub mod changes;
pub mod clients;
pub mod configure;
pub mod counters;
pub mod day;
pub mod depots;
pub mod fileargs;
pub mod files;
pub mod fixes;
pub mod forms;
pub mod history;
pub mod info;
pub mod integrate;
pub mod labels;
pub mod maintenance;
pub mod merge_state;
pub mod populate;
pub mod print;
pub mod resolve;
pub mod resolve_interactive;
pub mod revert;
pub mod sync;
pub mod unshelve;
pub mod users;
pub mod workspace_files;
// p4submit
pub mod change;
pub mod diff;
pub mod open;
pub mod shelve;
pub mod submit;
pub mod workspace;
// p4merge
pub mod monitor;
// p4jobs
pub mod glue;
pub mod jobs;
// p4gaps
pub mod reconcile;
pub mod undo;
pub mod workspace_scan;
