//! The P4 RPC wire, pure: message framing, variables, the messages users read, spec
//! definitions and forms. No IO here; `keel-p4`'s connection moves these over a stream, and the
//! fuzz smoke decodes them without building the front end.

pub mod frame;
pub mod message;
pub mod report;
pub mod specdef;
