//! The client's trust file (like P4TRUST): one `HOST:PORT FINGERPRINT` line per trusted
//! server, in `~/.keel_trust` or the file `KEEL_TRUST` names, kept 0600 and rewritten whole
//! (temporary file, sync, rename), so a crash leaves the old or the new file, never half.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::connect::TrustMode;
use crate::error::TrustFileError;
use crate::fingerprint::Fingerprint;

/// The environment variable naming the trust file.
pub const TRUST_ENV: &str = "KEEL_TRUST";
/// The trust file's name in the home directory.
pub const TRUST_FILE_NAME: &str = ".keel_trust";

/// The trusted fingerprints, by server address (`HOST:PORT`, as written after `ssl:`).
#[derive(Debug, Clone)]
pub struct TrustFile {
    path: PathBuf,
    entries: BTreeMap<String, Fingerprint>,
}

impl TrustFile {
    /// `KEEL_TRUST`, else `$HOME/.keel_trust`; `env` looks variables up.
    pub fn default_path(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, TrustFileError> {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if let Some(path) = set(TRUST_ENV) {
            return Ok(PathBuf::from(path));
        }
        set("HOME")
            .map(|home| Path::new(&home).join(TRUST_FILE_NAME))
            .ok_or(TrustFileError::NoHome)
    }

    /// Reads the file at `path`; a missing file trusts nothing.
    pub fn load(path: &Path) -> Result<TrustFile, TrustFileError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(TrustFileError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut entries = BTreeMap::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let parse = |reason: String| TrustFileError::Parse {
                path: path.to_path_buf(),
                line: index + 1,
                reason,
            };
            let mut words = line.split_whitespace();
            let (Some(addr), Some(fp), None) = (words.next(), words.next(), words.next()) else {
                return Err(parse(format!(
                    "expected HOST:PORT FINGERPRINT, found {line:?}"
                )));
            };
            let fp: Fingerprint = fp.parse().map_err(|e| parse(format!("{e}")))?;
            entries.insert(addr.to_string(), fp);
        }
        Ok(TrustFile {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// The file this was read from and is saved to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The fingerprint trusted for `host_port`.
    pub fn get(&self, host_port: &str) -> Option<Fingerprint> {
        self.entries.get(host_port).copied()
    }

    /// What a TLS connection to `host_port` accepts.
    pub fn mode(&self, host_port: &str) -> TrustMode {
        match self.get(host_port) {
            Some(fp) => TrustMode::Pinned(fp),
            None => TrustMode::Unknown,
        }
    }

    /// Every entry, in address order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, Fingerprint)> {
        self.entries.iter().map(|(a, f)| (a.as_str(), *f))
    }

    /// Trusts `fp` for `host_port` (replacing any earlier entry).
    pub fn set(&mut self, host_port: &str, fp: Fingerprint) {
        self.entries.insert(host_port.to_string(), fp);
    }

    /// Forgets `host_port`; what was trusted for it.
    pub fn remove(&mut self, host_port: &str) -> Option<Fingerprint> {
        self.entries.remove(host_port)
    }

    /// Writes the file (0600), replacing it whole.
    pub fn save(&self) -> Result<(), TrustFileError> {
        let mut text = String::from("# Keel trusted servers: HOST:PORT SHA-256-FINGERPRINT\n");
        for (addr, fp) in &self.entries {
            text.push_str(&format!("{addr} {fp}\n"));
        }
        crate::cert::write_private_io(&self.path, text.as_bytes()).map_err(|source| {
            TrustFileError::Write {
                path: self.path.clone(),
                source,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::TrustFile;
    use crate::connect::TrustMode;
    use crate::fingerprint::Fingerprint;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn entries_round_trip_in_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trust");
        let mut trust = TrustFile::load(&path).unwrap();
        assert_eq!(trust.mode("h:1"), TrustMode::Unknown);
        let a = Fingerprint::of_der(b"a");
        let b = Fingerprint::of_der(b"b");
        trust.set("h:1", a);
        trust.set("h:2", b);
        trust.save().unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let mut back = TrustFile::load(&path).unwrap();
        assert_eq!(back.mode("h:1"), TrustMode::Pinned(a));
        assert_eq!(back.entries().count(), 2);
        assert_eq!(back.remove("h:1"), Some(a));
        back.save().unwrap();
        assert_eq!(TrustFile::load(&path).unwrap().get("h:1"), None);
    }

    #[test]
    fn a_bad_line_is_refused_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trust");
        std::fs::write(&path, "# comment\n\nh:1 NOTHEX\n").unwrap();
        let err = TrustFile::load(&path).unwrap_err().to_string();
        assert!(err.contains(&format!("{}:3", path.display())), "{err}");
    }

    #[test]
    fn keel_trust_wins_over_home() {
        let env = |name: &str| match name {
            "KEEL_TRUST" => Some("/tmp/t".to_string()),
            "HOME" => Some("/home/u".to_string()),
            _ => None,
        };
        assert_eq!(
            TrustFile::default_path(&env).unwrap().to_str(),
            Some("/tmp/t")
        );
        let home_only = |name: &str| (name == "HOME").then(|| "/home/u".to_string());
        assert_eq!(
            TrustFile::default_path(&home_only).unwrap().to_str(),
            Some("/home/u/.keel_trust")
        );
        assert!(TrustFile::default_path(&|_| None).is_err());
    }
}
