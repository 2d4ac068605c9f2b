//! `reconcile` and `status` of `+k` (keyword-expanding) files through P4Python: a synced file
//! holds its keywords expanded (`$Id: //depot/k.txt#1 $`), so the digest the server gives
//! the client to compare with is of the expanded text. Unmodified, such a file is not
//! reported; edited, it is.

use crate::common::{workspace_on, write};
use crate::p4_harness::{P4Server, ok};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[test]
fn keyword_files_are_edited_only_when_their_content_changed() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    let text = "$Id$\n$Change$ $Revision$ $Author$\n$DateTime$\nbody\n";
    write(&w.cwd, "k.txt", text);
    write(&w.cwd, "ko.txt", text);
    write(&w.cwd, "plain.txt", "plain\n");
    w.ok(&["add", "-t", "text+k", "k.txt"]);
    w.ok(&["add", "-t", "text+ko", "ko.txt"]);
    w.ok(&["add", "plain.txt"]);
    w.ok(&["submit", "-d", "first"]);

    let root = s.p4_workspace();
    let cwd = root.display().to_string();
    let step = |cmd: &[&str], tagged: bool| json!({"cmd": cmd, "tagged": tagged, "cwd": cwd});
    let r = s.drive(&[step(&["status"], false), step(&["reconcile", "-n"], true)]);
    // The workspace has the keywords expanded.
    let synced = std::fs::read_to_string(root.join("k.txt")).expect("k.txt");
    assert!(
        synced
            .starts_with("$Id: //depot/k.txt#1 $\n$Change: 1 $ $Revision: #1 $ $Author: alice $\n"),
        "{synced}"
    );
    let only_id = std::fs::read_to_string(root.join("ko.txt")).expect("ko.txt");
    assert!(
        only_id.starts_with("$Id: //depot/ko.txt#1 $\n$Change$"),
        "{only_id}"
    );
    // Unmodified: nothing to reconcile.
    assert_eq!(ok(&r[0]), &json!([]), "{}", r[0]);
    assert_eq!(
        r[0]["warnings"],
        json!(["No file(s) to reconcile."]),
        "{}",
        r[0]
    );
    assert_eq!(ok(&r[1]), &json!([]), "{}", r[1]);

    // Edited: reported and opened for edit; the untouched one still not.
    let k = root.join("k.txt");
    std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::write(&k, format!("{synced}more\n")).expect("edit");
    let r = s.drive(&[
        step(&["status"], false),
        step(&["reconcile"], true),
        step(&["opened"], false),
    ]);
    assert_eq!(
        ok(&r[0]),
        &json!([format!(
            "{} - reconcile to edit //depot/k.txt#1",
            k.display()
        )])
    );
    let opened = ok(&r[1]).as_array().expect("records").clone();
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0]["depotFile"], "//depot/k.txt");
    assert_eq!(opened[0]["action"], "edit");
    assert_eq!(
        ok(&r[2]),
        &json!(["//depot/k.txt#1 - edit default change (text+k)"])
    );
}

#[test]
fn a_reverted_keyword_file_names_its_revisions_author() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    write(&w.cwd, "k.txt", "$Id$ $Author$\nbody\n");
    w.ok(&["add", "-t", "text+k", "k.txt"]);
    w.ok(&["submit", "-d", "first"]);

    let root = s.p4_workspace();
    let cwd = root.display().to_string();
    let step = |cmd: &[&str]| json!({"cmd": cmd, "tagged": true, "cwd": cwd});
    let synced = std::fs::read_to_string(root.join("k.txt")).expect("k.txt");
    assert_eq!(synced, "$Id: //depot/k.txt#1 $ $Author: alice $\nbody\n");

    // Opened, changed, reverted: the file is the have revision again, keywords and all.
    let r = s.drive(&[step(&["edit", "k.txt"])]);
    ok(&r[0]);
    std::fs::write(root.join("k.txt"), "scribbled over\n").expect("edit");
    let r = s.drive(&[step(&["revert", "k.txt"]), step(&["opened"])]);
    ok(&r[0]);
    assert_eq!(ok(&r[1]), &json!([]), "{}", r[1]);
    let reverted = std::fs::read_to_string(root.join("k.txt")).expect("k.txt");
    assert_eq!(reverted, synced, "as the sync wrote it");
}
