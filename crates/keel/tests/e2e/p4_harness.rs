//! The P4 conformance suite's harness: a real `keel serve --p4-listen 127.0.0.1:0` and
//! P4Python (from PyPI, in the virtualenv `scripts/test.sh` makes) driven by
//! `tests/p4/drive.py`, which runs a list of steps and prints one JSON object per step.
//! Without P4Python the tests fail saying how to install it: they never pass silently.

use crate::common::Server;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Python interpreter that has P4Python: `KEEL_P4PYTHON`, else `target/p4venv`'s.
pub fn p4python() -> PathBuf {
    let python = std::env::var_os("KEEL_P4PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/p4venv/bin/python")
        });
    let works = Command::new(&python)
        .args(["-c", "import P4"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        works,
        "P4Python is missing ({} cannot import P4): install it with \
         `python3 -m venv target/p4venv && target/p4venv/bin/pip install p4python` \
         (scripts/test.sh does this) or point KEEL_P4PYTHON at an interpreter that has it",
        python.display()
    );
    python
}

/// A server with its P4 listener.
pub struct P4Server {
    pub server: Server,
    /// The P4 address (`127.0.0.1:PORT`, or `ssl:127.0.0.1:PORT`).
    pub port: String,
    /// The fingerprint P4 clients pin, for a TLS listener.
    pub fingerprint: Option<String>,
    /// Tickets, trust and enviro files of the suite's clients (never the user's).
    pub home: tempfile::TempDir,
    _dir: tempfile::TempDir,
}

impl P4Server {
    /// A fresh server listening for P4 clients on plain TCP.
    pub fn start() -> P4Server {
        P4Server::start_with("127.0.0.1:0", &[], &[])
    }

    /// A fresh server with the P4 listener at `listen`, extra arguments and `keel.toml` text.
    pub fn start_with(listen: &str, args: &[&str], toml: &[&str]) -> P4Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("server");
        std::fs::create_dir_all(&root).expect("root");
        if !toml.is_empty() {
            std::fs::write(root.join("keel.toml"), toml.join("\n")).expect("keel.toml");
        }
        let mut all = vec!["--p4-listen", listen];
        all.extend_from_slice(args);
        let server = Server::start_full(&root, &[], &all).expect("server starts");
        // `..., P4 clients on ADDR (p4 trust fingerprint FP))`.
        let line = server.ready_line().to_string();
        let after = |marker: &str| {
            line.split_once(marker).map(|(_, rest)| {
                rest.split([',', ')', ' '])
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
        };
        let port = after("P4 clients on ")
            .unwrap_or_else(|| panic!("no P4 address in the ready line: {line}"));
        let fingerprint = after("p4 trust fingerprint ");
        P4Server {
            server,
            port,
            fingerprint,
            home: tempfile::tempdir().expect("client home"),
            _dir: dir,
        }
    }

    /// Alice's workspace `ws` (root `HOME/ws`, the whole depot) made with the native CLI, and
    /// her native client in it: how tests set content up for the P4 clients to see.
    pub fn native_workspace(&self) -> (crate::common::Client, PathBuf) {
        let root = self.home.path().join("ws");
        std::fs::create_dir_all(&root).expect("workspace root");
        let a = self.server.client("alice", "ws", &root);
        a.ok(&[
            "workspace",
            "create",
            "ws",
            "--root",
            root.to_str().expect("utf-8 root"),
            "--view",
            "//depot/... //ws/...",
        ]);
        (a, root)
    }

    /// Runs `steps` through P4Python at this server's P4 port; one result per step.
    pub fn drive(&self, steps: &[Value]) -> Vec<Value> {
        drive(&self.port, self.home.path(), steps)
    }
}

/// Runs `steps` through P4Python against `port`, with the client files under `home`.
pub fn drive(port: &str, home: &Path, steps: &[Value]) -> Vec<Value> {
    use std::io::Write;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/p4/drive.py");
    let mut child = Command::new(p4python())
        .arg(&script)
        .current_dir(home)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("P4PORT", port)
        .env("P4TICKETS", home.join("tickets"))
        .env("P4TRUST", home.join("trust"))
        .env("P4ENVIRO", home.join("enviro"))
        .env("P4CONFIG", "")
        // A form sent to the editor (a spec command without -o/-i) never waits for a user.
        .env("P4EDITOR", "false")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start P4Python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(json!(steps).to_string().as_bytes())
        .expect("steps written");
    // The output is read while the driver runs (a large result would otherwise fill the pipe
    // and stall it). Bounded: a hang in the server fails the test instead of stalling the suite.
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = pipe.read_to_end(&mut out);
            out
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("P4Python did not finish its {} steps in 60 s", steps.len());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = stdout.join().expect("stdout reader");
    let stderr = stderr.join().expect("stderr reader");
    let stdout = String::from_utf8_lossy(&stdout);
    assert!(
        status.success(),
        "the P4Python driver failed ({status}):\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&stderr)
    );
    let results: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert_eq!(results.len(), steps.len(), "one result per step: {stdout}");
    results
}

/// The step's output, after checking it raised nothing.
pub fn ok(result: &Value) -> &Value {
    assert!(
        result.get("exception").is_none(),
        "the step raised: {result:#}"
    );
    &result["result"]
}

/// The step's exception text, after checking it raised one.
pub fn raised(result: &Value) -> String {
    result["exception"]
        .as_str()
        .unwrap_or_else(|| panic!("the step raised nothing: {result:#}"))
        .to_string()
}

/// alice's native workspace `w` (root `HOME/w`) with `files` (path, content) added and
/// submitted in one change: the depot a test's P4 clients then work on.
pub fn submitted(s: &P4Server, files: &[(&str, &str)]) -> crate::common::Client {
    let w = crate::common::workspace_on(&s.server, s.home.path(), "alice", "w");
    let mut add = vec!["add"];
    for (path, content) in files {
        crate::common::write(&w.cwd, path, content);
        add.push(path);
    }
    w.ok(&add);
    w.ok(&["submit", "-d", "first"]);
    w
}

/// The step saving alice's P4 workspace `alice_ws` rooted at `root`, mapping the whole depot.
pub fn save_workspace(root: &Path) -> Value {
    json!({"method": "save_client", "args": [{
        "Client": "alice_ws", "Owner": "alice", "Root": root.display().to_string(),
        "Options": "noallwrite noclobber nocompress unlocked nomodtime normdir",
        "View": ["//depot/... //alice_ws/..."]
    }]})
}

impl P4Server {
    /// alice's P4 workspace `alice_ws` at `HOME/p4ws`, saved and synced through P4Python;
    /// its root.
    pub fn p4_workspace(&self) -> PathBuf {
        let root = self.home.path().join("p4ws");
        std::fs::create_dir_all(&root).expect("workspace root");
        let r = self.drive(&[save_workspace(&root), json!({"cmd": ["sync"]})]);
        ok(&r[0]);
        ok(&r[1]);
        root
    }
}

/// Each element of a step's result made into a line by `line`, sorted.
pub fn sorted_by(result: &Value, line: impl Fn(&Value) -> String) -> Vec<String> {
    let mut out: Vec<String> = result
        .as_array()
        .unwrap_or_else(|| panic!("results: {result}"))
        .iter()
        .map(line)
        .collect();
    out.sort();
    out
}

/// The lines of an untagged step, sorted.
pub fn sorted_lines(result: &Value) -> Vec<String> {
    sorted_by(result, |l| {
        l.as_str()
            .unwrap_or_else(|| panic!("a line: {l}"))
            .to_string()
    })
}

/// `depotFile action` of each record of a tagged step, sorted.
pub fn actions(records: &Value) -> Vec<String> {
    use crate::common::str_field;
    sorted_by(records, |r| {
        format!("{} {}", str_field(r, "depotFile"), str_field(r, "action"))
    })
}
