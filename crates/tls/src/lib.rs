//! Keel's transport below gRPC: `ssl:HOST:PORT` addresses, the server's certificate (generated
//! on first start or provided by the admin) and its SHA-256 fingerprint, the client's trust
//! file, and the connections both ends hand to tonic — TLS pinned to a trusted fingerprint (no
//! CA chain), or plain TCP — with the two wrong-protocol cases (plain to a TLS port, TLS to a
//! plain port) told apart from other failures; and the limits every listener keeps
//! (connection caps, idle timeout, accept back-off, the open-file limit).
//!
//! **API Boundary:** no wording for people beyond the errors' `Display`; the `keel` binary
//! decides what to print.

#![forbid(unsafe_code)]

mod accept;
mod addr;
mod cert;
mod connect;
mod error;
mod fingerprint;
mod idle;
mod in_flight;
mod limits;
mod nofile;
mod p4_fingerprint;
mod provider;
mod sniff;
mod trust;
mod verify;

pub use accept::{ServerConn, incoming, incoming_http1, incoming_with};
pub use addr::ServerAddr;
pub use cert::{CertPaths, ServerTls, for_raw_tcp};
pub use connect::{ClientConn, DialError, Dialer, Observed, TrustMode};
pub use error::{CertError, ConnectError, TrustFileError};
pub use fingerprint::{Fingerprint, ParseFingerprintError};
pub use idle::Limited;
pub use in_flight::{InFlight, InFlightLayer};
pub use limits::{
    Activity, ConnGuard, ConnLimits, ConnStats, ConnTracker, REFUSAL_LOG_EVERY, Refusal,
    RequestGuard,
};
pub use nofile::{OpenFiles, RESERVED_DESCRIPTORS, fit_connection_limits, raise_open_files_limit};
pub use p4_fingerprint::{p4_fingerprint, subject_public_key_info};
pub use trust::{TRUST_ENV, TRUST_FILE_NAME, TrustFile};
