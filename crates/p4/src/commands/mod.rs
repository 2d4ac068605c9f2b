//! The commands, one file per group. Each file lists its commands (name, access, flags,
//! handler) for the table in `crate::dispatch`.

pub mod auth;
pub mod clients;
pub mod counters;
pub mod depots;
pub mod forms;
pub mod info;
pub mod users;
// p4submit
pub mod change;
pub mod diff;
pub mod open;
pub mod shelve;
pub mod submit;
pub mod workspace;
