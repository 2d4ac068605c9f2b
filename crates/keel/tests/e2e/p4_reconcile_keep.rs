//! `reconcile -k` through P4Python: files the workspace has and the depot has at head, but
//! the have list does not (copied in by hand), are recorded in the have list without being
//! opened or transferred; `-n` only lists them; files the depot lacks are left alone.

use crate::common::{workspace_on, write};
use crate::p4_harness::{P4Server, ok};
use serde_json::json;

#[test]
fn reconcile_k_records_files_the_workspace_already_has() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    write(&w.cwd, "a.txt", "one\n");
    write(&w.cwd, "sub/b.txt", "bee\n");
    write(&w.cwd, "gone.txt", "gone\n");
    w.ok(&["add", "a.txt", "sub/b.txt", "gone.txt"]);
    w.ok(&["submit", "-d", "first"]);
    write(&w.cwd, "a.txt", "two\n");
    w.ok(&["edit", "a.txt"]);
    w.ok(&["delete", "gone.txt"]);
    w.ok(&["submit", "-d", "second"]);

    // The P4 workspace gets the files by hand, not by sync; new.txt the depot does not have,
    // gone.txt is deleted at head.
    let root = s.home.path().join("p4ws");
    write(&root, "a.txt", "two\n");
    write(&root, "sub/b.txt", "bee\n");
    write(&root, "gone.txt", "gone\n");
    write(&root, "new.txt", "new\n");
    let cwd = root.display().to_string();
    let step = |cmd: &[&str], tagged: bool| json!({"cmd": cmd, "tagged": tagged, "cwd": cwd});
    let r = s.drive(&[
        json!({"method": "save_client", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": cwd,
            "Options": "noallwrite noclobber nocompress unlocked nomodtime normdir",
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        step(&["reconcile", "-k", "-n"], false),
        step(&["have"], true),
        step(&["reconcile", "-k"], true),
        step(&["have"], false),
        step(&["opened"], true),
        step(&["reconcile", "-k"], false),
    ]);
    ok(&r[0]);
    let mut preview: Vec<String> = ok(&r[1])
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().expect("line").to_string())
        .collect();
    preview.sort();
    assert_eq!(
        preview,
        [
            format!(
                "//depot/a.txt#2 - updating {}",
                root.join("a.txt").display()
            ),
            format!(
                "//depot/sub/b.txt#1 - updating {}",
                root.join("sub/b.txt").display()
            ),
        ]
    );
    // -n recorded nothing.
    assert_eq!(ok(&r[2]), &json!([]), "{}", r[2]);
    let kept = ok(&r[3]).as_array().expect("records").clone();
    let mut depots: Vec<String> = kept
        .iter()
        .map(|k| {
            format!(
                "{}#{}",
                k["depotFile"].as_str().expect("depotFile"),
                k["rev"].as_str().expect("rev")
            )
        })
        .collect();
    depots.sort();
    assert_eq!(
        depots,
        ["//depot/a.txt#2", "//depot/sub/b.txt#1"],
        "{kept:?}"
    );
    let mut have: Vec<String> = ok(&r[4])
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().expect("line").to_string())
        .collect();
    have.sort();
    assert_eq!(
        have,
        [
            format!("//depot/a.txt#2 - {}", root.join("a.txt").display()),
            format!("//depot/sub/b.txt#1 - {}", root.join("sub/b.txt").display()),
        ]
    );
    // Nothing opened, the workspace's files untouched, and nothing left to record.
    assert_eq!(ok(&r[5]), &json!([]));
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).expect("new"),
        "new\n"
    );
    assert_eq!(
        r[6]["warnings"],
        json!(["No file(s) to reconcile."]),
        "{}",
        r[6]
    );
}
