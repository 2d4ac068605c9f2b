//! What the server is doing and did: the registry of running commands (`monitor show`,
//! `monitor terminate`), the layer that observes every RPC's start and end, and the command
//! log each ended command is written to.

pub(crate) mod args;
pub(crate) mod log;
pub(crate) mod observe;
pub(crate) mod record;
pub(crate) mod registry;

pub(crate) use observe::{Observe, current_counters};
pub(crate) use registry::{Registry, Running, Who};
