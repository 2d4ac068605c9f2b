//! Crash test: kill -9 the server at varied points of a submit, restart, and check that every
//! changelist is wholly submitted or wholly pending, with all content present and intact.

use crate::common::{Fixture, bytes, read, str_field, write};
use std::process::{Command, Stdio};
use std::time::Instant;

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
