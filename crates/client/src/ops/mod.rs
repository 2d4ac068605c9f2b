//! One typed function per server operation, for programs (a CI server, the `keel` command
//! line) that ask Keel questions: typed arguments, typed records read as the server streams
//! them, and an error type per family. Nothing here exposes a wire type.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use keel_client::{Connection, Overrides, Settings};
//! use keel_client::ops::{self, SincePath};
//!
//! let settings = Settings::resolve(&Overrides::default(), &std::env::current_dir()?)?;
//! let conn = Connection::connect(&settings).await?;
//! // What each build plan has not seen yet, in one round trip.
//! let plans = [
//!     SincePath::new("//depot/app/...", 120),
//!     SincePath::new("//depot/lib/...", 97),
//! ];
//! let mut found = ops::changes_since(&conn, &plans, 0).await?;
//! while let Some(hit) = found.next().await? {
//!     println!("{} changed in {}", plans[hit.path].path, hit.change.number);
//! }
//! # Ok(())
//! # }
//! ```

mod changes;
mod clone;
mod counters;
mod describe;
mod files;
mod records;
mod watch;

pub use changes::{ChangeSince, ChangesQuery, SincePath, changes, changes_since};
pub use clone::{CloneError, CloneQuery, Cloned, clone_workspace};
pub use counters::{
    Counter, CounterOp, CounterUpdate, CounterUpdated, Space, counter, counters, update_counter,
};
pub use describe::{DescribeItem, DescribeQuery, describe};
pub use files::{FilesQuery, files};
pub use records::{ChangeSummary, QueryError, Records, Revision};
pub use watch::{Watch, WatchError, WatchEvent, WatchQuery, WatchedChange};
