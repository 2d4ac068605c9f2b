//! A newcomer's first ten minutes: each trip of issue 32's list, pinned. A workspace root that
//! does not exist yet, no `$USER`, the Perforce address shorthands, a busy port, the server's
//! log in a file, and the help a user reads first.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Fixture, KEEL, Server};

/// `keel ARGS` from `cwd` with nothing of the test's environment that names a user or server,
/// and `env` added: what a fresh login shell would run.
fn bare(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(KEEL);
    for (key, _) in std::env::vars() {
        if key.starts_with("KEEL_") || key == "USER" || key == "USERNAME" {
            cmd.env_remove(key);
        }
    }
    cmd.args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run keel")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn workspace_create_makes_its_missing_root_and_says_so() {
    let fx = Fixture::new();
    let c = fx.server.client("alice", "main", fx.dir.path());
    let root = fx.dir.path().join("ws/main");
    let root_arg = root.to_str().expect("utf-8");
    let out = c.run(&["workspace", "create", "main", "--root", root_arg]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(root.is_dir(), "the root {root_arg} was not created");
    assert!(
        text(&out.stderr).contains(&format!("Created directory {root_arg}.")),
        "{}",
        text(&out.stderr)
    );
    // Created: the next step of the tour works from there.
    let inside = fx.server.client("alice", "main", &root);
    inside.ok(&["status"]);

    // A spec that is refused makes no directory.
    let refused = fx.dir.path().join("ws/bad");
    let err = c.fail(&[
        "workspace",
        "create",
        "bad",
        "--root",
        refused.to_str().expect("utf-8"),
        "--view",
        "//depot/... //other/...",
    ]);
    assert!(err.contains("must start with //bad/"), "{err}");
    assert!(
        !refused.exists(),
        "a refused workspace left its root behind"
    );
}

#[test]
fn without_user_the_os_login_name_is_the_user() {
    let fx = Fixture::new();
    let login = Command::new("id").arg("-un").output().expect("id -un");
    let login = text(&login.stdout).trim().to_string();
    assert!(!login.is_empty(), "id -un names this process's user");
    for env in [vec![], vec![("USER", "")]] {
        let mut env = env;
        env.push(("KEEL_SERVER", fx.server.addr.as_str()));
        let out = bare(fx.dir.path(), &["--json", "info"], &env);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let info: serde_json::Value =
            serde_json::from_str(text(&out.stdout).trim()).expect("one JSON object");
        assert_eq!(info["userName"], login.as_str(), "env {env:?}");
    }
}

#[test]
fn perforce_address_shorthands_connect_or_say_what_is_wrong() {
    let fx = Fixture::new();
    let port = fx.server.addr.rsplit_once(':').expect("HOST:PORT").1;
    // `-s PORT`, as P4PORT=1666: this machine's port.
    let out = bare(
        fx.dir.path(),
        &["-u", "alice", "-s", port, "--json", "info"],
        &[],
    );
    assert!(out.status.success(), "-s {port}: {}", text(&out.stderr));

    // A host without a port gets the default port 1666 (127.0.0.2: no Keel listens there).
    let out = bare(
        fx.dir.path(),
        &["-u", "alice", "-s", "127.0.0.2", "info"],
        &[],
    );
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot connect to Keel server at 127.0.0.2:1666"),
        "{err}"
    );
    assert!(!err.contains("invalid socket address"), "{err}");

    // A name that does not resolve is a DNS error, not a server that is not running.
    let out = bare(
        fx.dir.path(),
        &["-u", "alice", "-s", "no-such-host.invalid:1666", "info"],
        &[],
    );
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("cannot resolve the host"), "{err}");
    assert!(err.contains("no-such-host.invalid"), "{err}");
    assert!(!err.contains("keel serve"), "{err}");

    // Not an address at all: says how to write one.
    let out = bare(
        fx.dir.path(),
        &["-u", "alice", "-s", "host:port", "info"],
        &[],
    );
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("invalid Keel server address host:port"),
        "{err}"
    );
    assert!(err.contains("HOST:PORT"), "{err}");
}

#[test]
fn a_busy_port_says_so_once_names_listen_and_leaves_no_root() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("second");
    let mut child = Command::new(KEEL)
        .args(["serve", "--root", root.to_str().expect("utf-8")])
        .args(["--listen", &server.addr])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn keel serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("poll keel serve").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("keel serve on a busy port did not exit within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("keel serve output");
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.matches("in use").count(), 1, "the OS error once: {err}");
    assert!(
        err.contains(&format!("cannot listen on {}", server.addr)),
        "{err}"
    );
    assert!(err.contains("--listen"), "{err}");
    assert!(
        !root.exists(),
        "a server that never started created its root"
    );
}

#[test]
fn the_servers_log_in_a_file_has_no_colour_codes() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The harness keeps servers at `warn`; `info` is what a server writes by default.
    let server =
        Server::start_with(&dir.path().join("server"), &[("RUST_LOG", "info")]).expect("starts");
    server.client("alice", "", dir.path()).ok(&["info"]);
    let log = server.stderr();
    assert!(log.contains("keel server listening"), "{log}");
    assert!(!log.contains('\u{1b}'), "ANSI escapes in the log: {log:?}");
}

#[test]
fn help_describes_sync_arguments_admin_verbs_and_limit_topics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = bare(dir.path(), &["help", "sync"], &[]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for needle in [
        "//depot/...",
        "#head",
        "#3",
        "@42",
        "@LABEL",
        "#have",
        "#none",
    ] {
        assert!(
            help.contains(needle),
            "`keel help sync` lacks {needle}:\n{help}"
        );
    }

    let out = bare(dir.path(), &["--help"], &[]);
    let help = text(&out.stdout);
    let admin = help
        .lines()
        .find(|l| l.trim_start().starts_with("admin"))
        .unwrap_or_else(|| panic!("no admin line in:\n{help}"));
    assert!(admin.contains("log-report"), "{admin}");
    assert!(
        help.contains("$USER"),
        "--help names where the user comes from"
    );

    // A limit's topic is help, not a command.
    let out = bare(dir.path(), &["maxresults"], &[]);
    assert!(!out.status.success(), "`keel maxresults` ran as a command");
    assert!(
        text(&out.stderr).contains("run `keel help maxresults`"),
        "{}",
        text(&out.stderr)
    );
    let out = bare(dir.path(), &["help", "maxresults"], &[]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("MaxResults"));
}
