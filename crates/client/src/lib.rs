//! Keel's client library: configuration, connection, workspace paths, file transfer and the
//! sync/submit drivers used by the `keel` command line.

pub mod actions;
pub mod add_walk;
pub mod clobber;
pub mod clone;
pub mod config;
pub mod connect;
pub mod content;
#[cfg(target_os = "linux")]
mod dir_read;
pub mod error;
pub mod have;
pub mod have_cache;
pub mod have_index;
pub mod ignore_rules;
pub mod keywords;
pub mod landing;
pub mod local_state;
pub mod ops;
pub mod path_order;
pub mod paths;
pub mod probe;
pub mod refusal;
pub mod setting_sources;
pub mod shelve;
mod state_file;
pub mod stream;
pub mod submit;
pub mod sync;
mod sync_dirs;
pub mod tickets;
pub mod transfer;
pub mod tuning;
pub mod upload;
pub mod workspace;
pub mod workspace_scan;
pub mod workspace_walk;
pub mod writers;

pub use config::{Overrides, Settings};
pub use connect::Connection;
pub use error::{Error, Result};
pub use refusal::Refusal;
pub use tickets::TicketFile;
pub use tuning::TransferConfig;
pub use workspace::WorkspaceCtx;
