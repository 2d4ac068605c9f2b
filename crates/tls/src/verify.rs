//! Certificate verification by fingerprint (trust on first use), not by a CA chain: the
//! server's certificate is accepted when its SHA-256 is the one trusted for the address, and
//! the handshake's signature is still checked against that certificate's key, so only the
//! holder of the trusted key can answer.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::connect::{Observed, TrustMode};
use crate::error::ConnectError;
use crate::fingerprint::Fingerprint;

#[derive(Debug)]
pub(crate) struct FingerprintVerifier {
    pub(crate) addr: String,
    pub(crate) trust: TrustMode,
    pub(crate) observed: Arc<Observed>,
    pub(crate) algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for FingerprintVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let presented = Fingerprint::of_der(end_entity);
        self.observed.presented(presented);
        let refusal = match &self.trust {
            TrustMode::Any => None,
            TrustMode::Pinned(trusted) if *trusted == presented => None,
            TrustMode::Pinned(trusted) => Some(ConnectError::Changed {
                addr: self.addr.clone(),
                trusted: *trusted,
                presented,
            }),
            TrustMode::Unknown => Some(ConnectError::Untrusted {
                addr: self.addr.clone(),
                presented,
            }),
        };
        match refusal {
            None => Ok(ServerCertVerified::assertion()),
            Some(error) => {
                self.observed.fail(error.clone());
                Err(rustls::Error::Other(rustls::OtherError(Arc::new(error))))
            }
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
