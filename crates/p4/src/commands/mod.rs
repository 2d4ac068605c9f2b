//! The commands, one file per group. Each file lists its commands (name, access, flags,
//! handler) for the table in `crate::dispatch`.

pub mod auth;
pub mod clients;
pub mod counters;
pub mod day;
pub mod depots;
pub mod forms;
pub mod info;
pub mod users;
