//! The transport's typed errors: each names the address, file or fingerprints concerned.

use std::path::PathBuf;

use crate::fingerprint::Fingerprint;

/// Why a connection to a server was refused before any request was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The server's certificate is not in the trust file for this address.
    #[error("the server at ssl:{addr} is not trusted: its certificate fingerprint is {presented}")]
    Untrusted {
        addr: String,
        presented: Fingerprint,
    },
    /// The server presented another certificate than the one trusted for this address.
    #[error(
        "THE FINGERPRINT OF THE SERVER AT ssl:{addr} HAS CHANGED: trusted {trusted}, presented \
         {presented}; someone may be intercepting the connection, or the server's certificate \
         was replaced"
    )]
    Changed {
        addr: String,
        trusted: Fingerprint,
        presented: Fingerprint,
    },
    /// A plain connection reached a server that answered with TLS.
    #[error("the server at {addr} speaks TLS")]
    SpeaksTls { addr: String },
    /// A TLS connection reached a server that answered without TLS.
    #[error("the server at ssl:{addr} does not speak TLS")]
    SpeaksPlain { addr: String },
}

/// The server's certificate and key could not be loaded or generated.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {reason}", path.display())]
    Parse { path: PathBuf, reason: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} exists but {} does not: give both files or neither", present.display(), missing.display())]
    HalfPair { present: PathBuf, missing: PathBuf },
    #[error("cannot generate a certificate: {0}")]
    Generate(String),
    #[error("the certificate {} and key {} cannot be used together: {reason}", cert.display(), key.display())]
    Unusable {
        cert: PathBuf,
        key: PathBuf,
        reason: String,
    },
}

/// The trust file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustFileError {
    #[error("cannot read the trust file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the trust file {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {reason}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("no trust file: set KEEL_TRUST or HOME")]
    NoHome,
}
