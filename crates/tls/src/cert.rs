//! The server's certificate and key: loaded from PEM files, or generated (self-signed, ECDSA
//! P-256) on first start when the admin gave none. Generated files are written 0600 as a
//! temporary file, synced and renamed, key first: a crash leaves either nothing or a key
//! without its certificate, which the next start replaces.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::CertError;
use crate::fingerprint::Fingerprint;
use crate::provider::{ALPN_H2, VERSIONS, provider};

/// Where the server's certificate and key live.
#[derive(Clone, Debug)]
pub struct CertPaths {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// Generate a self-signed pair when neither file exists (the default locations); with
    /// paths the admin named, missing files are an error instead.
    pub generate: bool,
}

/// A server's TLS identity, ready to accept connections.
pub struct ServerTls {
    pub config: Arc<rustls::ServerConfig>,
    /// SHA-256 of the certificate the server presents.
    pub fingerprint: Fingerprint,
    /// Whether this start generated the pair.
    pub generated: bool,
    /// The certificate's fingerprint as P4 clients pin it (`p4 trust`: SHA-1 of its public
    /// key); `None` when the certificate cannot be read that far.
    pub p4_fingerprint: Option<String>,
}

impl ServerTls {
    /// Loads the pair at `paths`, generating it first when allowed and absent.
    pub fn load_or_generate(paths: &CertPaths) -> Result<ServerTls, CertError> {
        let (cert_exists, key_exists) = (paths.cert.exists(), paths.key.exists());
        let generated = match (cert_exists, key_exists) {
            (true, true) => false,
            (false, _) if paths.generate => {
                generate(paths)?;
                true
            }
            (true, false) => {
                return Err(CertError::HalfPair {
                    present: paths.cert.clone(),
                    missing: paths.key.clone(),
                });
            }
            (false, _) => {
                return Err(CertError::Read {
                    path: paths.cert.clone(),
                    source: std::io::ErrorKind::NotFound.into(),
                });
            }
        };
        let (certs, key) = load(paths)?;
        let fingerprint = Fingerprint::of_der(&certs[0]);
        let p4_fingerprint = crate::p4_fingerprint::p4_fingerprint(&certs[0]);
        let unusable = |e: rustls::Error| CertError::Unusable {
            cert: paths.cert.clone(),
            key: paths.key.clone(),
            reason: e.to_string(),
        };
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(VERSIONS)
            .map_err(unusable)?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(unusable)?;
        config.alpn_protocols = vec![ALPN_H2.to_vec()];
        Ok(ServerTls {
            config: Arc::new(config),
            fingerprint,
            generated,
            p4_fingerprint,
        })
    }
}

fn load(
    paths: &CertPaths,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), CertError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| CertError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let parse = |path: &Path, reason: String| CertError::Parse {
        path: path.to_path_buf(),
        reason,
    };
    let cert_pem = read(&paths.cert)?;
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| parse(&paths.cert, format!("not a PEM certificate: {e}")))?;
    if certs.is_empty() {
        return Err(parse(&paths.cert, "holds no PEM certificate".into()));
    }
    let key_pem = read(&paths.key)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| parse(&paths.key, format!("not a PEM private key: {e}")))?;
    Ok((certs, key))
}

fn generate(paths: &CertPaths) -> Result<(), CertError> {
    let pair = rcgen::generate_simple_self_signed(vec!["keel".to_string()])
        .map_err(|e| CertError::Generate(e.to_string()))?;
    write_private(&paths.key, pair.signing_key.serialize_pem().as_bytes())?;
    write_private(&paths.cert, pair.cert.pem().as_bytes())?;
    Ok(())
}

/// Writes `bytes` to `path` as a new 0600 file: a synced temporary file renamed into place,
/// the directory synced after.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<(), CertError> {
    let failed = |source| CertError::Write {
        path: path.to_path_buf(),
        source,
    };
    write_private_io(path, bytes).map_err(failed)
}

pub(crate) fn write_private_io(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if !dir.as_os_str().is_empty() && !dir.exists() {
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        // An existing file keeps its mode under `mode()`; make sure.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })?
        .sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The server's TLS configuration for a protocol of its own over TLS (the P4 listener): no
/// HTTP/2 ALPN, and no TLS 1.3 session tickets after the handshake, which clients that never
/// resume (P4 clients) would have to read before the server's first answer.
pub fn for_raw_tcp(config: &Arc<rustls::ServerConfig>) -> Arc<rustls::ServerConfig> {
    let mut c = (**config).clone();
    c.alpn_protocols.clear();
    c.send_tls13_tickets = 0;
    Arc::new(c)
}

#[cfg(test)]
mod tests {
    use super::{CertPaths, ServerTls};
    use crate::error::CertError;
    use std::os::unix::fs::PermissionsExt;

    fn paths(dir: &std::path::Path, generate: bool) -> CertPaths {
        CertPaths {
            cert: dir.join("tls/cert.pem"),
            key: dir.join("tls/key.pem"),
            generate,
        }
    }

    #[test]
    fn generated_once_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = ServerTls::load_or_generate(&paths(dir.path(), true)).unwrap();
        assert!(first.generated);
        for file in ["tls/cert.pem", "tls/key.pem"] {
            let mode = std::fs::metadata(dir.path().join(file))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{file}");
        }
        let again = ServerTls::load_or_generate(&paths(dir.path(), true)).unwrap();
        assert!(!again.generated);
        assert_eq!(again.fingerprint, first.fingerprint);
    }

    #[test]
    fn a_key_without_its_certificate_is_replaced_but_named_files_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tls")).unwrap();
        std::fs::write(dir.path().join("tls/key.pem"), "left by a crash").unwrap();
        let made = ServerTls::load_or_generate(&paths(dir.path(), true)).unwrap();
        assert!(made.generated);

        let other = tempfile::tempdir().unwrap();
        let err = ServerTls::load_or_generate(&paths(other.path(), false))
            .err()
            .unwrap();
        assert!(matches!(err, CertError::Read { .. }), "{err}");
        assert!(err.to_string().contains("cert.pem"), "{err}");

        std::fs::create_dir_all(other.path().join("tls")).unwrap();
        std::fs::write(other.path().join("tls/cert.pem"), "x").unwrap();
        let err = ServerTls::load_or_generate(&paths(other.path(), true))
            .err()
            .unwrap();
        assert!(matches!(err, CertError::HalfPair { .. }), "{err}");
    }

    #[test]
    fn garbage_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = paths(dir.path(), false);
        std::fs::create_dir_all(dir.path().join("tls")).unwrap();
        std::fs::write(&p.cert, "not pem").unwrap();
        std::fs::write(&p.key, "not pem").unwrap();
        let err = ServerTls::load_or_generate(&p).err().unwrap();
        assert!(err.to_string().contains("cert.pem"), "{err}");
    }
}
