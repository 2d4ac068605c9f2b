//! Secret keys kept in files under the server root (never in the metadata, checkpoints or
//! journal): 64 hex digits, made at random on first use, readable by the owner only.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a key file cannot be read or made (`what` names the key).
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("cannot read the {what} {path}: {source}")]
    Read {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the {what} {path}: {source}")]
    Write {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the {what} {path} is damaged (it must hold 64 hex digits)")]
    Damaged { what: &'static str, path: PathBuf },
    #[error("no random bytes for the {what}: {reason}")]
    Random { what: &'static str, reason: String },
}

/// The 32-byte key in `path`, made (random, mode 0600) when there is none; `what` names it in
/// errors. Two processes making it at once agree on the first one written.
pub fn load_or_create_key(path: &Path, what: &'static str) -> Result<[u8; 32], KeyFileError> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let mut bytes = [0u8; 32];
            hex::decode_to_slice(text.trim(), &mut bytes).map_err(|_| KeyFileError::Damaged {
                what,
                path: path.to_path_buf(),
            })?;
            Ok(bytes)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| KeyFileError::Random {
                what,
                reason: e.to_string(),
            })?;
            let write = |source| KeyFileError::Write {
                what,
                path: path.to_path_buf(),
                source,
            };
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(write)?;
            }
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(path) {
                Ok(mut file) => {
                    file.write_all(hex::encode(bytes).as_bytes())
                        .and_then(|()| file.sync_all())
                        .map_err(write)?;
                    Ok(bytes)
                }
                // Another process made it meanwhile: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    load_or_create_key(path, what)
                }
                Err(e) => Err(write(e)),
            }
        }
        Err(source) => Err(KeyFileError::Read {
            what,
            path: path.to_path_buf(),
            source,
        }),
    }
}
