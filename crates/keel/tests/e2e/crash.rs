//! Crash tests: stop the server inside a submit, restart, and check that every changelist is
//! wholly submitted or wholly pending, with all content present and intact.
//!
//! First line: named failpoints (`KEEL_FAILPOINTS`, see `keel_service::failpoints`) stop the
//! server at each step of a submit deterministically. Second line: kill -9 at varied moments.

use crate::common::{Fixture, bytes, content_files, read, str_field, write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Files in each failpoint round's change.
const POINT_FILES: u64 = 6;

/// How a failpoint round ends, for each submit step.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// Nothing of the change is committed: it is still pending, and submits again.
    Pending,
    /// The change is committed whole, though the client never heard so.
    Submitted,
}

/// One armed point and action: the submit stops there; after a restart the change is whole or
/// absent as `expect` says, and its content reads back exactly.
fn stop_submit_at(point: &str, action: &str, expect: Expect) {
    let case = format!("{point}={action}");
    let mut fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    let file = |f: u64| format!("data/{f}.txt");
    for f in 0..POINT_FILES {
        write(&a.cwd, &file(f), content(0, f));
    }
    a.ok(&["add", "data/..."]);
    a.ok(&["submit", "-d", "base"]);
    a.ok(&["edit", "data/..."]);
    for f in 0..POINT_FILES {
        write(&a.cwd, &file(f), content(1, f));
    }
    let blobs_before = content_files(&fx.server.root);

    fx.server.restart_with(&[("KEEL_FAILPOINTS", &case)]);
    let a = fx.server.client("alice", "a", &a.cwd);
    let err = a.fail(&["submit", "-d", "stopped"]);
    match action {
        "panic" => {
            // Only the request failed: the same server goes on serving.
            assert!(!err.trim().is_empty(), "{case}: the failure is reported");
            a.ok(&["info"]);
        }
        _ => {
            let status = fx
                .server
                .wait_exit(Duration::from_secs(30))
                .unwrap_or_else(|| panic!("{case}: the server did not stop at the failpoint"));
            match action {
                "abort" => assert_eq!(status.signal(), Some(libc_sigabrt()), "{case}: {status}"),
                _ => assert_eq!(status.code(), Some(86), "{case}: {status}"),
            }
        }
    }
    assert_eq!(
        content_files(&fx.server.root),
        blobs_before + POINT_FILES as usize,
        "{case}: every step stops after the content is published"
    );

    fx.server.restart();
    let a = fx.server.client("alice", "a", &a.cwd);
    let b = fx.server.client("bob", "b", &b.cwd);
    let submitted = a.json(&["changes", "-s", "submitted"]).len();
    let opened = a.json(&["opened"]).len() as u64;
    match expect {
        Expect::Pending => {
            assert_eq!(
                (submitted, opened),
                (1, POINT_FILES),
                "{case}: wholly pending"
            );
            a.ok(&["submit", "-d", "again"]);
        }
        Expect::Submitted => {
            assert_eq!((submitted, opened), (2, 0), "{case}: wholly submitted");
            let files = a.json(&["describe", "-s", "2"]);
            let rows = files
                .iter()
                .filter(|r| r.get("depotFile").is_some())
                .count();
            assert_eq!(rows as u64, POINT_FILES, "{case}: change 2 is whole");
        }
    }
    b.ok(&["sync", "-f", "-q", "//depot/...@2"]);
    for f in 0..POINT_FILES {
        assert_eq!(read(&b.cwd, &file(f)), content(1, f), "{case}: {}", file(f));
    }
}

/// SIGABRT, the signal `abort` ends a process with.
fn libc_sigabrt() -> i32 {
    6
}

#[test]
fn submit_stopped_at_each_failpoint_is_whole_or_absent() {
    let points = [
        ("submit.after-publish", Expect::Pending),
        ("submit.in-commit", Expect::Pending),
        ("submit.after-commit", Expect::Submitted),
    ];
    for (point, expect) in points {
        for action in ["abort", "exit", "panic"] {
            stop_submit_at(point, action, expect);
        }
    }
}

const ROUNDS: u64 = 20;
const FILES: u64 = 150;
const FILE_SIZE: usize = 48 * 1024;

fn content(round: u64, file: u64) -> Vec<u8> {
    bytes(round * 10_000 + file + 1, FILE_SIZE)
}

#[test]
fn kill_nine_during_submit_never_half_submits() {
    if crate::common::skip_slow("kill_nine_during_submit_never_half_submits") {
        return;
    }
    let mut fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    for f in 0..FILES {
        write(&a.cwd, &format!("data/{f}.bin"), content(0, f));
    }
    a.ok(&["add", "data/..."]);

    // Calibration: one uninterrupted submit of the same size measures how long a submit takes
    // on this machine now, so the kill points below cover it whatever the load.
    let started = Instant::now();
    a.ok(&["submit", "-d", "calibration"]);
    let full = started.elapsed();
    let mut submitted: Vec<(u64, u64)> = vec![(1, 0)]; // (change, round whose content it holds)
    let mut round_content = 1u64;
    a.ok(&["edit", "data/..."]);
    for f in 0..FILES {
        write(&a.cwd, &format!("data/{f}.bin"), content(round_content, f));
    }
    let mut killed = 0;
    for round in 1..=ROUNDS {
        // Kill points spread from "before the first byte" to past the commit (0-120%).
        let delay = full.mul_f64(((round * 53) % 100) as f64 * 0.012);
        let mut submit = Command::new(crate::common::KEEL)
            .args(["submit", "-d", &format!("round {round}")])
            .current_dir(&a.cwd)
            .env("KEEL_SERVER", &fx.server.addr)
            .env("KEEL_USER", "alice")
            .env("KEEL_WORKSPACE", "a")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn submit");
        std::thread::sleep(delay);
        fx.server.kill9();
        let _ = submit.wait();
        fx.server.restart();
        let a = fx.server.client("alice", "a", &a.cwd);
        let b = fx.server.client("bob", "b", &b.cwd);

        let changes = a.json(&["changes", "-s", "submitted"]);
        let opened = a.json(&["opened"]).len() as u64;
        if changes.len() > submitted.len() {
            assert_eq!(
                changes.len(),
                submitted.len() + 1,
                "round {round}: one submit at most"
            );
            let change: u64 = str_field(&changes[0], "change")
                .parse()
                .expect("change number");
            let files = a.json(&["describe", "-s", &change.to_string()]);
            let file_rows = files
                .iter()
                .filter(|r| r.get("depotFile").is_some())
                .count() as u64;
            assert_eq!(file_rows, FILES, "round {round}: change {change} is whole");
            assert_eq!(
                opened, 0,
                "round {round}: submitted files are no longer opened"
            );
            submitted.push((change, round_content));
            // The client may have died before recording its have list: record it now.
            a.ok(&["sync", "-k"]);
            // Next round: edit everything with new content.
            round_content = round + 1;
            a.ok(&["edit", "data/..."]);
            for f in 0..FILES {
                write(&a.cwd, &format!("data/{f}.bin"), content(round_content, f));
            }
        } else {
            assert_eq!(opened, FILES, "round {round}: the change is wholly pending");
            killed += 1;
        }
        // Every submitted change reads back exactly, digests verified by the client.
        let (change, holds) = *submitted.last().unwrap_or(&(0, 0));
        if change != 0 {
            b.ok(&["sync", "-f", "-q", &format!("//depot/...@{change}")]);
            for f in (0..FILES).step_by(7) {
                assert_eq!(
                    read(&b.cwd, &format!("data/{f}.bin")),
                    content(holds, f),
                    "round {round} file {f}"
                );
            }
        }
    }
    assert!(
        killed > 0,
        "at least one round was killed before its commit"
    );
    let b = fx.server.client("bob", "b", &fx.dir.path().join("b"));
    for (change, holds) in &submitted {
        b.ok(&["sync", "-f", "-q", &format!("//depot/...@{change}")]);
        for f in 0..FILES {
            assert_eq!(
                read(&b.cwd, &format!("data/{f}.bin")),
                content(*holds, f),
                "change {change} file {f}"
            );
        }
    }
}

#[test]
fn a_bad_failpoint_spec_stops_the_server_naming_it() {
    let dir = tempfile::tempdir().expect("temp root");
    let root = dir.path().join("server");
    for (spec, named) in [
        ("submit.nowhere=abort", "unknown failpoint 'submit.nowhere'"),
        (
            "submit.in-commit=explode",
            "unknown failpoint action 'explode'",
        ),
        ("submit.in-commit", "is not NAME=ACTION"),
    ] {
        let err = match crate::common::Server::start_with(&root, &[("KEEL_FAILPOINTS", spec)]) {
            Ok(_) => panic!("a server started with KEEL_FAILPOINTS={spec}"),
            Err(err) => err,
        };
        assert!(
            err.contains("KEEL_FAILPOINTS") && err.contains(named),
            "{spec}: {err}"
        );
    }
}
