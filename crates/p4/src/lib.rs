//! Keel's front end for P4 clients (the `p4` command line, P4Python, P4Java and the tools
//! built on them): the P4 RPC protocol over the same `Service` the gRPC front end serves.
//!
//! The wire's pure parts (framing, variables, the messages users read, spec definitions and
//! forms) are in [`wire`]; a connection ([`serve_connection`]) reads the client's `protocol`
//! and `user-*` messages and runs each command through the table in [`dispatch`], where every
//! command passes the same login, protections and monitoring checks. Nothing below this crate
//! knows a P4 wire type; this crate knows no gRPC type.

#![forbid(unsafe_code)]

pub mod client_ops;
pub mod cmd;
pub mod commands;
pub mod conn;
pub mod dates;
pub mod dispatch;
pub mod filespec;
pub mod flags;
pub mod server;
mod session;
pub mod tickets;
pub mod transfer;
pub mod upload;
pub mod version;
pub use keel_p4_wire as wire;

pub use server::{P4Options, P4Server, PeerInfo};
pub use session::serve_connection;
pub use tickets::{KeyError, TicketKey};
