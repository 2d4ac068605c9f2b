//! The server a bench runs against: `keel serve` started as a child process on loopback, or an
//! address given with `--server`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::error::{BenchError, Result};

/// How long a started server may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A server to benchmark; a started one is killed when this is dropped.
pub struct Target {
    pub addr: String,
    child: Option<Child>,
    /// The server root (None for an external server).
    pub root: Option<PathBuf>,
    _temp: Option<tempfile::TempDir>,
}

impl Target {
    /// An already running server.
    pub fn external(addr: &str) -> Target {
        Target {
            addr: addr.to_string(),
            child: None,
            root: None,
            _temp: None,
        }
    }

    /// Starts `exe serve` on 127.0.0.1:0 with `root` (a temporary directory when None) and waits
    /// for its `keel serve: listening on ADDR` line.
    pub fn start(exe: &Path, root: Option<PathBuf>) -> Result<Target> {
        let (root, temp) = match root {
            Some(root) => (root, None),
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("keel-bench-")
                    .tempdir()
                    .map_err(|e| BenchError::io("creating a temporary server root", e))?;
                (temp.path().join("server"), Some(temp))
            }
        };
        let mut child = Command::new(exe)
            .args(["serve", "--root"])
            .arg(&root)
            .args(["--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| BenchError::Server(format!("{}: {e}", exe.display())))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| BenchError::Server("no stdout pipe".into()))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(START_TIMEOUT).unwrap_or_default();
        let addr = line
            .strip_prefix("keel serve: listening on ")
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string);
        match addr {
            Some(addr) => Ok(Target {
                addr,
                child: Some(child),
                root: Some(root),
                _temp: temp,
            }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(BenchError::Server(format!(
                    "no listening line within {START_TIMEOUT:?} (got {line:?})"
                )))
            }
        }
    }

    /// The started server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Peak resident memory of a started server in KiB (Linux `VmHWM`).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
