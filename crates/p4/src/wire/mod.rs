//! The P4 RPC wire, pure: message framing, variables, the messages users read, spec
//! definitions and forms. No IO here; `crate::conn` moves these over a stream.

pub mod frame;
pub mod message;
pub mod report;
pub mod specdef;
