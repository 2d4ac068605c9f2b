//! Keel's gRPC wire types and service stubs; only the front end and the client see them.

#![forbid(unsafe_code)]
#![allow(clippy::all)]

/// Version 1 of the Keel wire protocol.
pub mod v1 {
    tonic::include_proto!("keel.v1");
}
