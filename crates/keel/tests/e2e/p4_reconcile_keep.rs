//! `reconcile -k` through P4Python: files the workspace has and the depot has at head, but
//! the have list does not (copied in by hand), are recorded in the have list without being
//! opened or transferred; `-n` only lists them; files the depot lacks are left alone.

use crate::common::write;
use crate::p4_harness::{P4Server, ok, save_workspace, sorted_lines, submitted};
use serde_json::json;

#[test]
fn reconcile_k_records_files_the_workspace_already_has() {
    let s = P4Server::start();
    let w = submitted(
        &s,
        &[
            ("a.txt", "one\n"),
            ("sub/b.txt", "bee\n"),
            ("gone.txt", "gone\n"),
        ],
    );
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
        save_workspace(&root),
        step(&["reconcile", "-k", "-n"], false),
        step(&["have"], true),
        step(&["reconcile", "-k"], true),
        step(&["have"], false),
        step(&["opened"], true),
        step(&["reconcile", "-k"], false),
    ]);
    ok(&r[0]);
    assert_eq!(
        sorted_lines(ok(&r[1])),
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
    assert_eq!(
        sorted_lines(ok(&r[4])),
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
