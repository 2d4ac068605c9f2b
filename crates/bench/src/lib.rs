//! Keel's benchmark workloads, modelled on the published Perforce benchmarks (browse,
//! branchsubmit, sync, deltas) plus the lock-jam scenario, `ping`, the per-call floor, and
//! `verify`, content verification beside the disk's raw read rate, `loop`, the everyday
//! status / edit + submit / update loop timed through the real command line, and `replica`,
//! replication lag and sync from a read-only replica, and `log-report`, the command log
//! report's throughput (no server), `limits`, the server's connection and size limits
//! against one hostile address, and `logins`, a password-guessing storm against the login
//! limits and the hashing gate. Everything goes through the
//! gRPC API over loopback, like a user: this crate knows no store, blob or service type (the
//! verify workload's raw read only reads the files under the server's `content/` directory).

pub mod access;
pub mod branchsubmit;
pub mod browse;
pub mod checkpoint;
pub mod ci;
pub mod dataset;
pub mod deltas;
pub mod dev_loop;
pub mod error;
pub mod limits;
pub mod lockjam;
pub mod log_report;
pub mod logins;
pub mod p4_browse;
pub mod p4_client;
pub mod ping;
pub mod proxy;
pub mod replica;
pub mod report;
pub mod rng;
pub mod rpc;
pub mod server;
pub mod stats;
pub mod sync;
pub mod verify;

pub use error::{BenchError, Result};
pub use report::Report;
