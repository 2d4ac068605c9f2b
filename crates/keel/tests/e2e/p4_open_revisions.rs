//! The revisions P4 clients read in the records of opened files, through P4Python: `add`,
//! `edit`, `delete`, `opened`, `fstat` and `reconcile`, tagged and untagged. An add works
//! on the revision after the depot's head (`#1` for a new file, `#3` for a file deleted at
//! `#2`); an edit or a delete on the revision the workspace has.

use crate::common::{str_field, write};
use crate::p4_harness::{P4Server, ok, sorted_by, sorted_lines, submitted};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;

/// The record of `depot` among `records`.
fn record<'a>(records: &'a Value, depot: &str) -> &'a Value {
    records
        .as_array()
        .unwrap_or_else(|| panic!("records: {records}"))
        .iter()
        .find(|r| r["depotFile"] == depot)
        .unwrap_or_else(|| panic!("no {depot} in {records}"))
}

/// `depotFile workRev action` of each record, sorted.
fn work_revs(records: &Value) -> Vec<String> {
    sorted_by(records, |r| {
        format!(
            "{}#{} {}",
            str_field(r, "depotFile"),
            str_field(r, "workRev"),
            str_field(r, "action")
        )
    })
}

#[test]
fn opened_files_carry_the_revision_they_work_on_in_every_record() {
    let s = P4Server::start();
    // The depot: a.txt and b.txt at #1, gone.txt deleted at #2.
    let w = submitted(
        &s,
        &[
            ("a.txt", "one\n"),
            ("b.txt", "bee\n"),
            ("gone.txt", "gone\n"),
        ],
    );
    w.ok(&["delete", "gone.txt"]);
    w.ok(&["submit", "-d", "gone"]);
    let root = s.p4_workspace();
    let cwd = root.display().to_string();
    let step = |cmd: &[&str], tagged: bool| json!({"cmd": cmd, "tagged": tagged, "cwd": cwd});
    write(&root, "gone.txt", "back\n");
    write(&root, "new.txt", "new\n");

    let r = s.drive(&[
        step(&["edit", "a.txt"], true),
        step(&["delete", "b.txt"], false),
        step(&["add", "gone.txt", "new.txt"], true),
        step(&["opened"], true),
        step(&["opened"], false),
        step(&["fstat", "//alice_ws/..."], true),
        step(&["revert", "//alice_ws/..."], true),
    ]);
    assert_eq!(work_revs(ok(&r[0])), ["//depot/a.txt#1 edit"]);
    assert_eq!(
        sorted_lines(ok(&r[1])),
        ["//depot/b.txt#1 - opened for delete"]
    );
    assert_eq!(
        work_revs(ok(&r[2])),
        ["//depot/gone.txt#3 add", "//depot/new.txt#1 add"]
    );
    // opened: `rev` is the revision worked on, `haveRev` the workspace's (none for an add).
    let opened = ok(&r[3]);
    for (depot, rev, have) in [
        ("//depot/a.txt", "1", "1"),
        ("//depot/b.txt", "1", "1"),
        ("//depot/gone.txt", "3", "none"),
        ("//depot/new.txt", "1", "none"),
    ] {
        let rec = record(opened, depot);
        assert_eq!(
            (str_field(rec, "rev"), str_field(rec, "haveRev")),
            (rev.into(), have.into()),
            "{rec}"
        );
    }
    assert_eq!(
        sorted_lines(ok(&r[4])),
        [
            "//depot/a.txt#1 - edit default change (text)",
            "//depot/b.txt#1 - delete default change (text)",
            "//depot/gone.txt#3 - add default change (text)",
            "//depot/new.txt#1 - add default change (text)",
        ]
    );
    // fstat: `workRev` beside the open action; a new file has no head or have revision.
    let fstat = ok(&r[5]);
    assert_eq!(
        work_revs(fstat),
        [
            "//depot/a.txt#1 edit",
            "//depot/b.txt#1 delete",
            "//depot/gone.txt#3 add",
            "//depot/new.txt#1 add",
        ]
    );
    let new = record(fstat, "//depot/new.txt");
    assert!(
        new.get("headRev").is_none() && new.get("haveRev").is_none(),
        "{new}"
    );
    assert_eq!(str_field(record(fstat, "//depot/gone.txt"), "headRev"), "2");
    assert_eq!(str_field(record(fstat, "//depot/a.txt"), "haveRev"), "1");
    ok(&r[6]);

    // The same work found by reconcile: a.txt edited, b.txt removed, the two adds.
    let a = root.join("a.txt");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::write(&a, "one\nmore\n").expect("edit");
    std::fs::remove_file(root.join("b.txt")).expect("remove");
    let r = s.drive(&[
        step(&["reconcile", "-n"], false),
        step(&["reconcile"], true),
    ]);
    assert_eq!(
        sorted_lines(ok(&r[0])),
        [
            "//depot/a.txt#1 - opened for edit",
            "//depot/b.txt#1 - opened for delete",
            "//depot/gone.txt#3 - opened for add",
            "//depot/new.txt#1 - opened for add",
        ]
    );
    assert_eq!(
        work_revs(ok(&r[1])),
        [
            "//depot/a.txt#1 edit",
            "//depot/b.txt#1 delete",
            "//depot/gone.txt#3 add",
            "//depot/new.txt#1 add",
        ]
    );
}
