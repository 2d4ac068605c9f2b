//! Test harness: starts the real `keel serve` on an ephemeral loopback port (through the
//! benchmarks' launcher, `keel_bench::server`) and drives the real `keel` CLI against it.
//! Every wait is bounded.

use keel_bench::server::{Launch, Target};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::Duration;

pub const KEEL: &str = env!("CARGO_BIN_EXE_keel");

/// A running `keel serve` (the benchmarks' [`Target`], started on loopback), killed when dropped.
pub struct Server {
    target: Target,
    /// The address clients use (`ssl:HOST:PORT` for a TLS server).
    pub addr: String,
    pub root: PathBuf,
    /// The trust file this server's clients use (beside the root, never the user's).
    pub trust: PathBuf,
    /// The TLS certificate's fingerprint, as the server printed it.
    pub fingerprint: Option<String>,
    /// The environment the server was started with, kept for restarts.
    env: Vec<(String, String)>,
    /// Further `keel serve` arguments, kept for restarts.
    args: Vec<String>,
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    /// Starts a server on a fresh temporary root.
    pub fn start() -> Server {
        let dir = tempfile::tempdir().expect("temp root");
        let root = dir.path().join("server");
        let mut server = Server::start_at(&root).expect("server starts");
        server._dir = Some(dir);
        server
    }

    /// Starts a server on `root`; `Err` carries its stderr when it refuses to start.
    pub fn start_at(root: &Path) -> Result<Server, String> {
        Server::start_with(root, &[])
    }

    /// Starts a server on `root` with extra environment (e.g. `KEEL_FAILPOINTS`).
    pub fn start_with(root: &Path, env: &[(&str, &str)]) -> Result<Server, String> {
        Server::launch(root, env, "127.0.0.1:0", Vec::new())
    }

    /// Starts a server on `root` with extra environment and further `keel serve` arguments.
    pub fn start_full(root: &Path, env: &[(&str, &str)], args: &[&str]) -> Result<Server, String> {
        Server::launch(
            root,
            env,
            "127.0.0.1:0",
            args.iter().map(|a| a.to_string()).collect(),
        )
    }

    /// The line the server printed when ready (the P4 listener's address is in it).
    pub fn ready_line(&self) -> &str {
        &self.target.ready_line
    }

    /// What the server wrote to stderr so far (its log; the newest 64 KiB).
    pub fn stderr(&self) -> String {
        self.target.stderr().unwrap_or_default()
    }

    /// Starts a read-only replica of `primary` on `root` with further arguments.
    pub fn start_replica(root: &Path, primary: &str, args: &[&str]) -> Result<Server, String> {
        let mut all = vec!["--replica-of".to_string(), primary.to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        Server::launch(root, &[], "127.0.0.1:0", all)
    }

    /// Starts a server on `root` listening on `listen` (e.g. `ssl:127.0.0.1:0`) with extra
    /// environment and arguments.
    pub fn start_listening(
        root: &Path,
        listen: &str,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> Result<Server, String> {
        let args = args.iter().map(|a| a.to_string()).collect();
        Server::launch(root, env, listen, args)
    }

    /// Starts a TLS server (`--listen ssl:127.0.0.1:0`) on a fresh temporary root.
    pub fn start_tls() -> Server {
        let dir = tempfile::tempdir().expect("temp root");
        let root = dir.path().join("server");
        let mut server =
            Server::start_listening(&root, "ssl:127.0.0.1:0", &[], &[]).expect("TLS server starts");
        server._dir = Some(dir);
        server
    }

    fn launch(
        root: &Path,
        env: &[(&str, &str)],
        listen: &str,
        args: Vec<String>,
    ) -> Result<Server, String> {
        let launch = Launch {
            listen: Some(listen.to_string()),
            args: args.clone(),
            root: Some(root.to_path_buf()),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            capture_stderr: true,
            ..Launch::new(Path::new(KEEL))
        };
        let target = Target::launch(launch).map_err(|e| e.to_string())?;
        Ok(Server {
            addr: target.addr.clone(),
            fingerprint: target.fingerprint.clone(),
            target,
            root: root.to_path_buf(),
            trust: root.with_extension("trust"),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            args,
            _dir: None,
        })
    }

    /// Kills the server with SIGKILL (no shutdown path runs).
    pub fn kill9(&mut self) {
        self.target.kill9();
    }

    /// `http://HOST:PORT/metrics` when started with `--metrics-listen`.
    pub fn metrics_url(&self) -> Option<String> {
        self.target.metrics.clone()
    }

    /// Restarts on the same root after a kill.
    pub fn restart(&mut self) {
        self.restart_with(&[]);
    }

    /// Restarts on the same root, with extra environment, after a kill.
    pub fn restart_with(&mut self, env: &[(&str, &str)]) {
        self.kill9();
        let next = Server::launch(&self.root, env, "127.0.0.1:0", self.args.clone())
            .expect("server restarts");
        self.addr = next.addr.clone();
        self.fingerprint = next.fingerprint.clone();
        self.target = next.target;
    }

    /// Restarts on the same root and the same address after a kill (replicas and proxies find
    /// it again).
    pub fn restart_same_address(&mut self) {
        self.kill9();
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let next = Server::launch(&self.root, &env, &self.addr.clone(), self.args.clone())
            .expect("server restarts on its address");
        self.fingerprint = next.fingerprint.clone();
        self.target = next.target;
    }

    /// Waits (bounded) for the server to exit by itself; its status when it did.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.target.wait_exit(timeout)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.target.pid().expect("a started server has a process")
    }

    /// Peak resident memory of the server so far, in KiB (Linux `VmHWM`).
    pub fn peak_rss_kib(&self) -> u64 {
        self.target
            .peak_rss_kib()
            .expect("VmHWM of the running server")
    }

    pub fn client(&self, user: &str, workspace: &str, cwd: &Path) -> Client {
        Client {
            addr: self.addr.clone(),
            user: user.into(),
            workspace: workspace.into(),
            cwd: cwd.into(),
            trust: self.trust.clone(),
        }
    }
}

/// A running `keel proxy` in front of a server (the benchmarks' [`Target`]), killed when
/// dropped.
pub struct Proxy {
    target: Target,
    pub addr: String,
    pub cache: PathBuf,
    pub server_addr: String,
    /// The TLS certificate's fingerprint when it listens on `ssl:`.
    pub fingerprint: Option<String>,
    extra: Vec<String>,
    env: Vec<(String, String)>,
}

impl Proxy {
    /// Starts `keel proxy --target SERVER --cache CACHE EXTRA...` on an ephemeral port.
    pub fn start(server_addr: &str, cache: &Path, extra: &[&str]) -> Result<Proxy, String> {
        Proxy::start_with(server_addr, cache, extra, &[])
    }

    /// [`Proxy::start`] with extra environment (e.g. `KEEL_TICKETS`, `KEEL_TRUST`).
    pub fn start_with(
        server_addr: &str,
        cache: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Proxy, String> {
        Proxy::start_listening(server_addr, cache, extra, env, None)
    }

    /// [`Proxy::start_with`] listening on `listen` (`127.0.0.1:0` when `None`).
    pub fn start_listening(
        server_addr: &str,
        cache: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
        listen: Option<&str>,
    ) -> Result<Proxy, String> {
        let extra: Vec<String> = extra.iter().map(|a| a.to_string()).collect();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let launch = Launch {
            root: Some(cache.to_path_buf()),
            capture_stderr: true,
            proxy_target: Some(server_addr.to_string()),
            args: extra.clone(),
            env: env.clone(),
            listen: listen.map(str::to_string),
            ..Launch::new(Path::new(KEEL))
        };
        let target = Target::launch(launch).map_err(|e| e.to_string())?;
        Ok(Proxy {
            addr: target.addr.clone(),
            fingerprint: target.fingerprint.clone(),
            target,
            cache: cache.to_path_buf(),
            server_addr: server_addr.to_string(),
            extra,
            env,
        })
    }

    /// `http://HOST:PORT/metrics` when started with `--metrics-listen`.
    pub fn metrics_url(&self) -> Option<String> {
        self.target.metrics.clone()
    }

    /// The proxy's process id.
    pub fn pid(&self) -> u32 {
        self.target.pid().expect("a started proxy has a process")
    }

    /// Waits (bounded) for the proxy to exit by itself; its status when it did.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.target.wait_exit(timeout)
    }

    /// Kills the proxy with SIGKILL (no shutdown path runs).
    pub fn kill9(&mut self) {
        self.target.kill9();
    }

    /// What the proxy wrote to stderr so far (its log; the newest 64 KiB).
    pub fn stderr(&self) -> String {
        self.target.stderr().unwrap_or_default()
    }

    /// Kills the proxy (SIGKILL) and starts it again on the same cache.
    pub fn restart(&mut self) {
        self.target.kill9();
        let extra: Vec<&str> = self.extra.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        *self = Proxy::start_with(&self.server_addr, &self.cache, &extra, &env)
            .expect("proxy restarts");
    }

    pub fn client(&self, user: &str, workspace: &str, cwd: &Path) -> Client {
        Client {
            addr: self.addr.clone(),
            user: user.into(),
            workspace: workspace.into(),
            cwd: cwd.into(),
            trust: self.cache.with_extension("trust"),
        }
    }
}

/// The CLI as one user in one workspace, run from `cwd`.
#[derive(Clone)]
pub struct Client {
    pub addr: String,
    pub user: String,
    pub workspace: String,
    pub cwd: PathBuf,
    /// The trust file (`KEEL_TRUST`): the test's own, never the user's.
    pub trust: PathBuf,
}

impl Client {
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run keel")
    }

    /// Runs with `input` on stdin (`-i` forms).
    pub fn run_with_stdin(&self, args: &[&str], input: &str) -> Output {
        self.run_with(args, &[], input)
    }

    /// Runs with extra environment (e.g. `KEEL_TICKETS`) and `stdin` as standard input.
    pub fn run_with(&self, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
        use std::io::Write;
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn keel");
        let mut input = child.stdin.take().expect("piped stdin");
        // A command that exits before reading all of stdin is not an error here.
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        child.wait_with_output().expect("wait for keel")
    }

    /// Starts the command without waiting for it (output discarded).
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn keel")
    }

    fn command(&self, args: &[&str]) -> Command {
        self.command_of(Path::new(KEEL), args)
    }

    /// `program` (a keel executable) run as this user in this workspace, from `cwd`.
    pub fn command_of(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        for (key, _) in std::env::vars() {
            if key.starts_with("KEEL_") {
                cmd.env_remove(key);
            }
        }
        cmd.args(args)
            .current_dir(&self.cwd)
            .env("KEEL_SERVER", &self.addr)
            .env("KEEL_USER", &self.user)
            .env("KEEL_TRUST", &self.trust)
            .env("EDITOR", "false")
            .stdin(Stdio::null());
        if !self.workspace.is_empty() {
            cmd.env("KEEL_WORKSPACE", &self.workspace);
        }
        cmd
    }

    /// Runs with `input` on standard input (a form for `-i`); waits for the end.
    pub fn run_stdin(&self, args: &[&str], input: &str) -> Output {
        self.run_with(args, &[], input)
    }

    /// Runs and expects success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "keel {args:?} failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs and expects failure; returns stderr.
    pub fn fail(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            !out.status.success(),
            "keel {args:?} unexpectedly succeeded:\nstdout: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// Runs with `--json` and parses every stdout line.
    pub fn json(&self, args: &[&str]) -> Vec<serde_json::Value> {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.ok(&all)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }
}

/// A server and one workspace `ws` (view `//depot/... //ws/...`) for `user`, rooted in a temp dir.
pub struct Fixture {
    pub server: Server,
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture {
            server: Server::start(),
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// Creates a workspace named `name` for `user` mapping `//depot/...`, returns its client.
    pub fn workspace(&self, user: &str, name: &str) -> Client {
        self.workspace_with_view(user, name, &[&format!("//depot/... //{name}/...")])
    }

    /// Creates a workspace with the given view lines, rooted at `<temp>/<name>`.
    pub fn workspace_with_view(&self, user: &str, name: &str, view: &[&str]) -> Client {
        let root = self.dir.path().join(name);
        std::fs::create_dir_all(&root).expect("workspace root");
        let client = self.server.client(user, name, &root);
        let mut args = vec![
            "workspace",
            "create",
            name,
            "--root",
            root.to_str().expect("utf-8 root"),
        ];
        for line in view {
            args.extend(["--view", line]);
        }
        client.ok(&args);
        client
    }
}

/// Blobs in a server's content store (`ROOT/content`), read without touching it.
pub fn content_files(server_root: &Path) -> usize {
    keel_blob::stored_blobs(&server_root.join("content"))
        .expect("list the server's content store")
        .len()
}

/// Writes a file (creating parents) under `root`.
pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, content).expect("write file");
}

/// Submits a change writing `files` (opened for edit when they exist, else added), each
/// holding `description`; its number.
pub fn submit_files(ws: &Client, files: &[&str], description: &str) -> u64 {
    for file in files {
        if ws.cwd.join(file).exists() {
            ws.ok(&["edit", file]);
        } else {
            write(&ws.cwd, file, "x\n");
            ws.ok(&["add", file]);
        }
        write(&ws.cwd, file, format!("{description}\n"));
    }
    ws.ok(&["submit", "-d", description]);
    ws.json(&["changes", "-m", "1", "-s", "submitted"])[0]["change"]
        .as_u64()
        .expect("change")
}

pub fn read(root: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(root.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// Deterministic pseudo-random bytes (xorshift), so tests need no RNG crate.
pub fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

pub fn field<'a>(v: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    v.get(key).unwrap_or_else(|| panic!("no '{key}' in {v}"))
}

pub fn str_field(v: &serde_json::Value, key: &str) -> String {
    match field(v, key) {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A replica's `replicaLastError` from `keel info --json`, or "" while it has none (the field
/// is absent until the replica's first attempt to follow has failed).
pub fn replica_last_error(info: &serde_json::Value) -> String {
    info.get("replicaLastError")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

/// True (and says so on stderr) when the slow end-to-end cases are not asked for: they run
/// only with `KEEL_SLOW_TESTS=1`, which `scripts/test.sh` sets.
pub fn skip_slow(test: &str) -> bool {
    let run = std::env::var("KEEL_SLOW_TESTS").is_ok_and(|v| v == "1");
    if !run {
        eprintln!("{test}: slow test, skipped (set KEEL_SLOW_TESTS=1 to run it)");
    }
    !run
}

/// A workspace `name` for `user` on `server`, rooted at `<dir>/<name>` and mapping `//depot/...`,
/// created through the CLI.
pub fn workspace_on(server: &Server, dir: &Path, user: &str, name: &str) -> Client {
    let root = dir.join(name);
    create_workspace(server.client(user, name, &root), &root, name)
}

/// Creates the workspace `name` rooted at `root` (mapping `//depot/...`) through the client `c`,
/// which may talk to a server, a replica or a proxy; returns `c`.
pub fn create_workspace(c: Client, root: &Path, name: &str) -> Client {
    std::fs::create_dir_all(root).expect("workspace root");
    let view = format!("//depot/... //{name}/...");
    c.ok(&[
        "workspace",
        "create",
        name,
        "--root",
        root.to_str().expect("utf-8"),
        "--view",
        &view,
    ]);
    c
}

/// Where the server keeps the blob of `digest` (a pack record or a file of its own).
pub fn blob_at(root: &Path, digest: &str) -> keel_blob::StoredAt {
    let digest = keel_core::Digest::from_hex(digest).expect("digest");
    keel_blob::stored_blobs(&root.join("content"))
        .expect("list content")
        .remove(&digest)
        .unwrap_or_else(|| panic!("no blob for {digest:?} under {}", root.display()))
}

/// Makes the blobs of `digests` vanish: with the server stopped, each pack record is wiped
/// (header and data; the server drops it when it rescans the pack on start) or the blob's own
/// file removed; then the server starts again on the same address.
pub fn remove_blobs(fx: &mut Fixture, digests: &[String]) {
    remove_blobs_of(&mut fx.server, digests);
}

/// [`remove_blobs`] for any server.
pub fn remove_blobs_of(server: &mut Server, digests: &[String]) {
    let places: Vec<_> = digests.iter().map(|d| blob_at(&server.root, d)).collect();
    server.kill9();
    for at in places {
        if at.packed {
            let mut bytes = std::fs::read(&at.path).expect("read pack");
            let header = keel_blob::PACK_RECORD_HEADER_BYTES as usize;
            bytes[(at.offset as usize - header)..(at.offset + at.len) as usize].fill(0);
            std::fs::write(&at.path, bytes).expect("wipe record");
            // A sealed pack's index would still name it: drop it, the pack is rescanned.
            let _ = std::fs::remove_file(at.path.with_extension("idx"));
        } else {
            std::fs::remove_file(&at.path).expect("remove blob file");
        }
    }
    server.restart_same_address();
}
