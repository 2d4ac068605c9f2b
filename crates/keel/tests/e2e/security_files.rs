//! Private server files: under a umask of 022, everything a TLS server with an audit log
//! creates under its root (metadata and its WAL, have lists, journal, checkpoint, content,
//! logs, TLS key, the lock) is 0700 / 0600; a root, a replica's root and a proxy cache left
//! 0755 / 0644 are tightened on start, with a line in the log saying what changed.

use crate::common::*;
use crate::replica::wait_for;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every path under `dir` (itself included) that group or others may use, with its mode.
fn readable_by_others(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).expect("stat");
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 && !meta.file_type().is_symlink() {
            found.push((path.clone(), mode));
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).expect("read dir") {
                pending.push(entry.expect("entry").path());
            }
        }
    }
    found
}

/// How many files and directories are under `dir`.
fn count_under(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let path = e.expect("entry").path();
            1 + if path.is_dir() { count_under(&path) } else { 0 }
        })
        .sum()
}

/// Makes everything under `dir` 0755 (directories) / 0644 (files), as an older Keel left it.
fn loosen(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            loosen(&path);
        } else {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        }
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Sets this test process's umask to the common 022, which servers started from it inherit
/// (the server must not depend on a careful umask).
fn usual_umask() {
    // SAFETY: umask(2) only sets the process's file mode creation mask.
    unsafe {
        libc::umask(0o022);
    }
}

#[test]
fn everything_a_server_creates_is_private_whatever_the_umask() {
    usual_umask();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("server");
    let mut server = Server::start_listening(
        &root,
        "ssl:127.0.0.1:0",
        &[],
        &["--audit-log", "logs/audit.jsonl"],
    )
    .expect("TLS server starts");
    let admin = server.client("admin", "", dir.path());
    admin.ok(&["trust", "-y"]);
    let a = workspace_on(&server, dir.path(), "alice", "ws");
    for i in 0..3 {
        write(&a.cwd, &format!("f{i}.txt"), format!("file {i}\n"));
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "three files"]);
    a.ok(&["print", "//depot/f0.txt"]);
    admin.ok(&["admin", "checkpoint"]);
    a.ok(&["sync", "-f"]);

    for part in [
        "metadata.db",
        "content",
        "tls/key.pem",
        "logs",
        "checkpoints",
    ] {
        assert!(root.join(part).exists(), "{part} under the root");
    }
    assert!(count_under(&root) > 10, "the root holds the server's files");
    assert_eq!(readable_by_others(&root), [], "under {}", root.display());
    server.kill9();
}

#[test]
fn loose_roots_and_caches_are_tightened_on_start_with_a_log_line() {
    usual_umask();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("server");
    let mut server = Server::start_at(&root).expect("server starts");
    let a = workspace_on(&server, dir.path(), "alice", "ws");
    write(&a.cwd, "a.txt", "a\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "one"]);
    let replica_root = dir.path().join("replica");
    let mut replica = Server::start_replica(&replica_root, &server.addr, &[]).expect("replica");
    let cache = dir.path().join("cache");
    let mut proxy = Proxy::start(&server.addr, &cache, &[]).expect("proxy");
    proxy
        .client("alice", "ws", &a.cwd)
        .ok(&["print", "//depot/a.txt"]);
    let ra = replica.client("alice", "ws", &a.cwd);
    wait_for(
        "the replica has the change",
        Duration::from_secs(30),
        || match ra.json(&["files", "//depot/..."]).len() {
            1 => Ok(()),
            n => Err(format!("{n} files")),
        },
    );
    replica.kill9();
    proxy.kill9();
    server.kill9();

    for dir in [&root, &replica_root, &cache] {
        loosen(dir);
        assert!(!readable_by_others(dir).is_empty());
    }
    server.restart_same_address();
    let replica =
        Server::start_replica(&replica_root, &server.addr, &[]).expect("replica restarts");
    let proxy = Proxy::start(&server.addr, &cache, &[]).expect("proxy restarts");
    tightened_and_logged(&root, || server.stderr());
    tightened_and_logged(&replica_root, || replica.stderr());
    tightened_and_logged(&cache, || proxy.stderr());
}

/// Waits (bounded) until `log` says it tightened something, then checks `dir` is private.
fn tightened_and_logged(dir: &Path, log: impl Fn() -> String) {
    wait_for("the tightening is logged", Duration::from_secs(30), || {
        let log = log();
        match log.contains("removed group and other access from") {
            true => Ok(()),
            false => Err(log),
        }
    });
    assert_eq!(readable_by_others(dir), [], "under {}", dir.display());
}
