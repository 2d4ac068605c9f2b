//! The audit log through the real binaries: one JSON line per content access (sync, print,
//! diff, unshelve, a proxy's content fetch) naming user, workspace, address, file and revision;
//! a log that cannot be written (`/dev/full`) never fails or holds up a sync; a log that cannot
//! be opened stops the server from starting, naming the file.

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// A server rooted at `<dir>/root` writing its audit log to `log`.
fn audited_server(dir: &Path, log: &Path) -> Server {
    let args = ["--audit-log", log.to_str().expect("utf-8")];
    Server::start_listening(&dir.join("root"), "127.0.0.1:0", &[], &args).expect("starts")
}

/// The audit records in `path`, waiting (bounded) until there are at least `want`.
fn records(path: &Path, want: usize) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        if lines.len() >= want {
            return lines;
        }
        assert!(
            Instant::now() < deadline,
            "{} audit records, want {want}:\n{text}",
            lines.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_content_access_is_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("audit.log");
    let server = audited_server(dir.path(), &log);
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    write(&a.cwd, "a.txt", "one\n");
    write(&a.cwd, "b.txt", "bee\n");
    a.ok(&["add", "a.txt", "b.txt"]);
    a.ok(&["submit", "-d", "first"]);
    a.ok(&["edit", "a.txt"]);
    write(&a.cwd, "a.txt", "two\n");
    a.ok(&["submit", "-d", "second"]);
    assert!(
        std::fs::read_to_string(&log).unwrap_or_default().is_empty(),
        "submits read no content"
    );

    let b = workspace_on(&server, dir.path(), "bob", "wb");
    b.ok(&["sync"]);
    let synced = records(&log, 2);
    let mut files: Vec<(String, u64)> = synced
        .iter()
        .map(|r| (str_field(r, "file"), field(r, "rev").as_u64().expect("rev")))
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            ("//depot/a.txt".to_string(), 2),
            ("//depot/b.txt".to_string(), 1)
        ]
    );
    for r in &synced {
        assert_eq!(str_field(r, "action"), "sync");
        assert_eq!(str_field(r, "user"), "bob");
        assert_eq!(str_field(r, "workspace"), "wb");
        assert_eq!(str_field(r, "address"), "127.0.0.1");
        assert_eq!(str_field(r, "digest").len(), 64);
        assert!(str_field(r, "time").ends_with('Z'));
    }

    b.ok(&["print", "//depot/a.txt#1"]);
    let printed = &records(&log, 3)[2];
    assert_eq!(str_field(printed, "action"), "print");
    assert_eq!(str_field(printed, "file"), "//depot/a.txt");
    assert_eq!(field(printed, "rev").as_u64(), Some(1));

    // A diff reads the have revision's content; the client says why it prints.
    b.ok(&["edit", "a.txt"]);
    write(&b.cwd, "a.txt", "three\n");
    b.ok(&["diff", "a.txt"]);
    let diffed = &records(&log, 4)[3];
    assert_eq!(str_field(diffed, "action"), "diff");
    assert_eq!(str_field(diffed, "file"), "//depot/a.txt");

    // Shelved content read by unshelve.
    b.ok(&["shelve", "--description", "wip", "a.txt"]);
    b.ok(&["revert", "a.txt"]);
    let before = records(&log, 5).len();
    let c = workspace_on(&server, dir.path(), "carol", "wc");
    c.ok(&["sync", "-k"]);
    let shelf = b.json(&["changes", "-s", "pending"]);
    let change = str_field(&shelf[0], "change");
    c.ok(&["unshelve", "-s", &change]);
    let all = records(&log, before + 1);
    let unshelved: Vec<_> = all
        .iter()
        .filter(|r| str_field(r, "action") == "unshelve")
        .collect();
    assert_eq!(unshelved.len(), 1, "{all:?}");
    assert_eq!(str_field(unshelved[0], "user"), "carol");
}

#[test]
fn an_unwritable_audit_log_never_fails_a_sync() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = audited_server(dir.path(), Path::new("/dev/full"));
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    for i in 0..50 {
        write(&a.cwd, &format!("f{i}.txt"), format!("file {i}\n"));
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "fifty"]);
    let b = workspace_on(&server, dir.path(), "bob", "wb");
    for _ in 0..3 {
        b.ok(&["sync", "-f"]);
        for i in 0..50 {
            assert_eq!(
                read(&b.cwd, &format!("f{i}.txt")),
                format!("file {i}\n").as_bytes()
            );
        }
    }
    assert!(b.ok(&["print", "-q", "//depot/f7.txt"]).contains("file 7"));
}

#[test]
fn an_audit_log_that_cannot_be_opened_stops_the_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A missing directory is created, but not under a regular file.
    std::fs::write(dir.path().join("a-file"), "").expect("write");
    let log = dir.path().join("a-file/audit.log");
    let args = ["--audit-log", log.to_str().expect("utf-8")];
    let err = Server::start_listening(&dir.path().join("root"), "127.0.0.1:0", &[], &args)
        .err()
        .expect("refuses to start");
    assert!(
        err.contains("cannot open the audit log") && err.contains("a-file/audit.log"),
        "{err}"
    );
}

#[test]
fn a_proxy_fetch_is_recorded_as_content_and_the_sync_as_sync() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("audit.log");
    let server = audited_server(dir.path(), &log);
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    write(&a.cwd, "a.txt", "proxied\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "first"]);

    let proxy = Proxy::start(&server.addr, &dir.path().join("cache"), &[]).expect("proxy");
    let root = dir.path().join("pw");
    let p = create_workspace(proxy.client("bob", "pw", &root), &root, "pw");
    p.ok(&["sync"]);
    assert_eq!(read(&root, "a.txt"), b"proxied\n");
    let all = records(&log, 2);
    let mut actions: Vec<String> = all.iter().map(|r| str_field(r, "action")).collect();
    actions.sort();
    assert_eq!(actions, ["content", "sync"], "{all:?}");
    for r in &all {
        assert_eq!(str_field(r, "user"), "bob");
    }
}
