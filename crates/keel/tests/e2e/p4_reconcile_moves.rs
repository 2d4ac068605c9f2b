//! Moves found by `reconcile` and `status` through P4Python: a have file missing from the
//! workspace and a new file with its content (the client compares them, `client-ExactMatch`)
//! are opened as a move/delete and a move/add, which submit as a move; a missing file with no
//! such twin stays a delete, a new file an add.

use crate::common::write;
use crate::p4_harness::{P4Server, actions, ok, raised, sorted_lines, submitted};
use serde_json::json;

#[test]
fn a_renamed_file_is_opened_as_a_move_and_submits_as_one() {
    let s = P4Server::start();
    submitted(
        &s,
        &[("a.txt", "alpha\nwith more lines\n"), ("b.txt", "bee\n")],
    );
    let root = s.p4_workspace();
    let cwd = root.display().to_string();
    let step = |cmd: &[&str], tagged: bool| json!({"cmd": cmd, "tagged": tagged, "cwd": cwd});
    // Outside Keel: a.txt renamed into a new directory, b.txt removed, c.txt created.
    std::fs::create_dir_all(root.join("moved")).expect("dir");
    std::fs::rename(root.join("a.txt"), root.join("moved/a2.txt")).expect("rename");
    std::fs::remove_file(root.join("b.txt")).expect("remove");
    write(&root, "c.txt", "sea\n");

    let r = s.drive(&[
        step(&["reconcile", "-n"], true),
        // Into a change that does not exist: refused, the move with the rest, nothing opened.
        step(&["reconcile", "-c", "99"], true),
        step(&["opened"], true),
        step(&["reconcile"], false),
        step(&["opened"], true),
        step(&["submit", "-d", "moved"], true),
        step(&["files", "//..."], true),
    ]);
    let expected = [
        "//depot/a.txt move/delete",
        "//depot/b.txt delete",
        "//depot/c.txt add",
        "//depot/moved/a2.txt move/add",
    ];
    // -n: the move previewed, nothing opened.
    assert_eq!(actions(ok(&r[0])), expected);
    assert!(raised(&r[1]).contains("99"), "{}", r[1]);
    let r = &r[1..];
    assert_eq!(ok(&r[1]), &json!([]));
    assert_eq!(
        sorted_lines(ok(&r[2])),
        [
            "//depot/a.txt#1 - opened for move/delete",
            "//depot/b.txt#1 - opened for delete",
            "//depot/c.txt#1 - opened for add",
            "//depot/moved/a2.txt#1 - opened for move/add",
        ]
    );
    let opened = ok(&r[3]);
    assert_eq!(actions(opened), expected);
    let target = opened
        .as_array()
        .expect("records")
        .iter()
        .find(|o| o["depotFile"] == "//depot/moved/a2.txt")
        .expect("the move's target");
    assert_eq!(target["movedFile"], "//depot/a.txt", "{target}");
    ok(&r[4]);
    let files = ok(&r[5]);
    assert_eq!(actions(files), expected, "{files}");
}
