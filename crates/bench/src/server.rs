//! The server a bench or a test runs against: `keel serve` started as a child process on
//! loopback, or an address given with `--server`.
//!
//! This is the one place that starts `keel serve` children: the benchmarks use it, and so does
//! the end-to-end test suite (its `Server` wraps a [`Target`]).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use crate::error::{BenchError, Result};

/// How long a started server may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The most captured server stderr kept (the newest bytes).
const STDERR_KEEP: usize = 64 * 1024;

/// How to start a `keel serve` (or `keel proxy`) child.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The `keel` executable.
    pub exe: PathBuf,
    /// Server root; a fresh temporary directory when `None`.
    pub root: Option<PathBuf>,
    /// Extra environment (e.g. `KEEL_FAILPOINTS`); `RUST_LOG` defaults to `warn`. Nothing named
    /// `KEEL_FAILPOINTS` is inherited from this process.
    pub env: Vec<(String, String)>,
    /// Keep the server's stderr (reported when it fails to start, see [`Target::stderr`])
    /// instead of passing it through.
    pub capture_stderr: bool,
    /// Start `keel proxy --target ADDR` instead of a server; `root` is then its cache
    /// directory.
    pub proxy_target: Option<String>,
    /// `HOST:PORT` to listen on (default `127.0.0.1:0`, an ephemeral port).
    pub listen: Option<String>,
    /// More arguments after the command's own (e.g. `--cache-size N` for a proxy).
    pub args: Vec<String>,
}

impl Launch {
    pub fn new(exe: &Path) -> Launch {
        Launch {
            exe: exe.to_path_buf(),
            root: None,
            env: Vec::new(),
            capture_stderr: false,
            proxy_target: None,
            listen: None,
            args: Vec::new(),
        }
    }
}

/// The trust file holding the fingerprints of the TLS servers this process started (in a
/// temporary directory of its own: the user's trust file is never written).
static STARTED_TRUST: OnceLock<(tempfile::TempDir, Mutex<()>)> = OnceLock::new();

/// The trust file the benchmark's connections use: the one holding the TLS servers this
/// process started, else the user's (`KEEL_TRUST`, `~/.keel_trust`).
pub fn trust_file() -> Option<PathBuf> {
    match STARTED_TRUST.get() {
        Some((dir, _)) => Some(dir.path().join("trust")),
        None => keel_tls::TrustFile::default_path(&|name| std::env::var(name).ok()).ok(),
    }
}

/// Records `fingerprint` for the started TLS server at `addr` in this process's trust file.
fn trust_started(addr: &str, fingerprint: &str) -> Result<()> {
    let fp: keel_tls::Fingerprint = fingerprint
        .parse()
        .map_err(|e| BenchError::Server(format!("server printed a bad fingerprint: {e}")))?;
    let (dir, lock) = match STARTED_TRUST.get() {
        Some(entry) => entry,
        None => {
            let dir = tempfile::Builder::new()
                .prefix("keel-bench-trust-")
                .tempdir()
                .map_err(|e| BenchError::io("creating a temporary trust file", e))?;
            let _ = STARTED_TRUST.set((dir, Mutex::new(())));
            STARTED_TRUST.get().expect("just set")
        }
    };
    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    let path = dir.path().join("trust");
    let server = keel_tls::ServerAddr::parse(addr);
    let mut file =
        keel_tls::TrustFile::load(&path).map_err(|e| BenchError::Server(e.to_string()))?;
    file.set(&server.host_port, fp);
    file.save().map_err(|e| BenchError::Server(e.to_string()))
}

/// A server to benchmark or test; a started one is killed when this is dropped.
pub struct Target {
    /// The address clients use (`ssl:HOST:PORT` for a TLS server).
    pub addr: String,
    /// The TLS certificate's fingerprint, for a started TLS server.
    pub fingerprint: Option<String>,
    /// `http://HOST:PORT/metrics`, for a server started with `--metrics-listen`.
    pub metrics: Option<String>,
    /// The line a started server printed when ready (what else it listens on).
    pub ready_line: String,
    child: Option<Child>,
    /// The server root (None for an external server).
    pub root: Option<PathBuf>,
    stderr: Option<Captured>,
    _temp: Option<tempfile::TempDir>,
}

impl Target {
    /// An already running server.
    pub fn external(addr: &str) -> Target {
        Target {
            addr: addr.to_string(),
            fingerprint: None,
            metrics: None,
            ready_line: String::new(),
            child: None,
            root: None,
            stderr: None,
            _temp: None,
        }
    }

    /// Starts `exe serve` on 127.0.0.1:0 with `root` (a temporary directory when None) and waits
    /// for its `keel serve: listening on ADDR` line.
    pub fn start(exe: &Path, root: Option<PathBuf>) -> Result<Target> {
        Target::launch(Launch {
            root,
            ..Launch::new(exe)
        })
    }

    /// Starts a server as `launch` says and waits (bounded) until it listens. When it does not,
    /// the error carries its captured stderr.
    pub fn launch(launch: Launch) -> Result<Target> {
        let (root, temp) = match launch.root {
            Some(root) => (root, None),
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("keel-serve-")
                    .tempdir()
                    .map_err(|e| BenchError::io("creating a temporary server root", e))?;
                (temp.path().join("server"), Some(temp))
            }
        };
        let mut cmd = Command::new(&launch.exe);
        let prefix = match &launch.proxy_target {
            Some(target) => {
                cmd.args(["proxy", "--target", target, "--cache"]);
                "keel proxy: listening on "
            }
            None => {
                cmd.args(["serve", "--root"]);
                "keel serve: listening on "
            }
        };
        cmd.arg(&root)
            .args([
                "--listen",
                launch.listen.as_deref().unwrap_or("127.0.0.1:0"),
            ])
            .args(&launch.args)
            .env_remove("KEEL_FAILPOINTS")
            .env("RUST_LOG", "warn")
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if launch.capture_stderr {
                Stdio::piped()
            } else {
                Stdio::inherit()
            });
        let mut child = cmd
            .spawn()
            .map_err(|e| BenchError::Server(format!("{}: {e}", launch.exe.display())))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| BenchError::Server("no stdout pipe".into()))?;
        let stderr = child.stderr.take().map(drain);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(START_TIMEOUT).unwrap_or_default();
        let addr = line
            .strip_prefix(prefix)
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string);
        let fingerprint = line
            .split_once("TLS fingerprint ")
            .and_then(|(_, rest)| rest.split([',', ')', ' ']).next())
            .map(str::to_string);
        let metrics = line
            .split_once("metrics http://")
            .and_then(|(_, rest)| rest.split([',', ')', ' ']).next())
            .map(|rest| format!("http://{rest}"));
        if let (Some(addr), Some(fp)) = (&addr, &fingerprint) {
            trust_started(addr, fp)?;
        }
        let mut target = Target {
            addr: addr.clone().unwrap_or_default(),
            fingerprint,
            metrics,
            ready_line: line.trim_end().to_string(),
            child: Some(child),
            root: Some(root),
            stderr,
            _temp: temp,
        };
        if addr.is_some() {
            return Ok(target);
        }
        let status = target.wait_exit(Duration::from_secs(5));
        target.kill9();
        if let Some(captured) = target.stderr.as_mut()
            && let Some(reader) = captured.reader.take()
        {
            // The child is reaped, so its stderr is at end of file and the reader ends.
            let _ = reader.join();
        }
        Err(BenchError::Server(format!(
            "no listening line within {START_TIMEOUT:?} (got {line:?}, exit {status:?}){}",
            match target.stderr() {
                Some(err) if !err.is_empty() => format!("; stderr:\n{err}"),
                _ => String::new(),
            }
        )))
    }

    /// The started server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Peak resident memory of a started server in KiB (Linux `VmHWM`).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        peak_rss_kib(self.pid()?)
    }

    /// Kills a started server with SIGKILL (no shutdown path runs) and reaps it.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits up to `timeout` for a started server to exit by itself; its status if it did.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let child = self.child.as_mut()?;
        let deadline = Instant::now() + timeout;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => return None,
            }
        }
    }

    /// The captured stderr so far (its newest 64 KiB), when the launch captured it.
    pub fn stderr(&self) -> Option<String> {
        let captured = self.stderr.as_ref()?;
        let bytes = captured
            .kept
            .lock()
            .expect("stderr buffer is never poisoned");
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Clock ticks per second of `/proc/PID/stat` times (`USER_HZ`, 100 on Linux).
const USER_HZ: u64 = 100;

/// CPU time (user + system) process `pid` has used, in milliseconds (Linux `/proc/PID/stat`);
/// None where unavailable.
pub fn cpu_ms(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start at state, field 3.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 1000 / USER_HZ)
}

/// Peak resident memory of process `pid` in KiB (Linux `VmHWM`); None where unavailable.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Restarts process `pid`'s peak resident memory from its current resident memory (Linux:
/// `5` written to `/proc/PID/clear_refs`), so a later [`peak_rss_kib`] covers only what ran
/// after. False where unavailable.
pub fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// A child's stderr, read as it comes.
struct Captured {
    kept: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// Reads a child's stderr on a thread of its own (so the child never blocks on a full pipe),
/// keeping the newest `STDERR_KEEP` bytes.
fn drain(mut stderr: std::process::ChildStderr) -> Captured {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let sink = kept.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut kept = sink.lock().expect("stderr buffer is never poisoned");
            kept.extend_from_slice(&buf[..n]);
            let excess = kept.len().saturating_sub(STDERR_KEEP);
            kept.drain(..excess);
        }
    });
    Captured {
        kept,
        reader: Some(reader),
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.kill9();
    }
}
