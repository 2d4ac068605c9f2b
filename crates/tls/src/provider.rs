//! The one crypto provider both ends use: ring (see ARCHITECTURE.md for why), TLS 1.3 only —
//! both ends are Keel, so there is no older peer to serve.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;

/// The ALPN protocol gRPC runs on.
pub(crate) const ALPN_H2: &[u8] = b"h2";

pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

pub(crate) const VERSIONS: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
