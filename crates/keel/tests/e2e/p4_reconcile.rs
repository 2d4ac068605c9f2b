//! `reconcile`, `status` and `clean` through P4Python: the client scans its workspace through
//! the server's callbacks; edited, deleted and new files (in a new directory too) found,
//! ignored files left alone, `-n` opening nothing, a user without write rights refused, and
//! the same files opened as `keel reconcile` opens in a native workspace with the same work.
//! Also `sync -q` for a tagged client: the totals record and the progress indicator.

use crate::common::{Client, str_field, workspace_on};
use crate::p4_harness::{P4Server, actions, ok, raised, submitted};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// alice's native workspace `w` that submitted `a.txt`, `b.txt` and `sub/c.txt`.
fn depot(s: &P4Server) -> Client {
    submitted(
        s,
        &[
            ("a.txt", "one\n"),
            ("b.txt", "bee\n"),
            ("sub/c.txt", "sea\n"),
        ],
    )
}

/// The work done outside Keel: `a.txt` edited, `b.txt` removed, `new.txt` and
/// `newdir/deep/d.txt` created, `build.log` (ignored by `.p4ignore`) created.
fn outside_work(root: &Path) {
    let a = root.join("a.txt");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::write(&a, "one\nmore\n").expect("edit");
    std::fs::remove_file(root.join("b.txt")).expect("remove");
    std::fs::write(root.join("new.txt"), "new\n").expect("new");
    std::fs::create_dir_all(root.join("newdir/deep")).expect("dir");
    std::fs::write(root.join("newdir/deep/d.txt"), "deep\n").expect("deep");
    std::fs::write(root.join(".p4ignore"), "*.log\n").expect("ignore");
    std::fs::write(root.join("build.log"), "noise\n").expect("log");
}

const EXPECTED: [&str; 5] = [
    "//depot/.p4ignore add",
    "//depot/a.txt edit",
    "//depot/b.txt delete",
    "//depot/new.txt add",
    "//depot/newdir/deep/d.txt add",
];

#[test]
fn reconcile_opens_edits_deletes_and_adds_and_status_previews_them() {
    let s = P4Server::start();
    depot(&s);
    let root = s.p4_workspace();
    outside_work(&root);
    let cwd = root.display().to_string();
    let step = |cmd: &[&str], tagged: bool| json!({"cmd": cmd, "tagged": tagged, "cwd": cwd, "ignore_file": ".p4ignore"});
    let r = s.drive(&[
        step(&["status"], false),
        step(&["reconcile", "-n"], true),
        step(&["opened"], true),
        step(&["reconcile", "-e", "-d"], false),
        step(&["reconcile"], true),
        step(&["opened"], true),
        step(&["reconcile"], false),
    ]);
    let local = |p: &str| root.join(p).display().to_string();
    let mut status: Vec<String> = ok(&r[0])
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().expect("line").to_string())
        .collect();
    status.sort();
    assert_eq!(
        status,
        vec![
            format!(
                "{} - reconcile to add //depot/.p4ignore#1",
                local(".p4ignore")
            ),
            format!("{} - reconcile to edit //depot/a.txt#1", local("a.txt")),
            format!("{} - reconcile to delete //depot/b.txt#1", local("b.txt")),
            format!("{} - reconcile to add //depot/new.txt#1", local("new.txt")),
            format!(
                "{} - reconcile to add //depot/newdir/deep/d.txt#1",
                local("newdir/deep/d.txt")
            ),
        ]
    );
    // -n: the records of what would be opened, and nothing opened.
    assert_eq!(actions(ok(&r[1])), EXPECTED);
    assert_eq!(ok(&r[2]), &json!([]));
    // -e -d: only the edit and the delete, worded as P4 clients print them.
    let mut lines: Vec<String> = ok(&r[3])
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().expect("line").to_string())
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        vec![
            "//depot/a.txt#1 - opened for edit",
            "//depot/b.txt#1 - opened for delete"
        ]
    );
    // The rest: the adds only (the edit and the delete are open already).
    let added = ok(&r[4]);
    assert_eq!(
        actions(added),
        vec![
            "//depot/.p4ignore add",
            "//depot/new.txt add",
            "//depot/newdir/deep/d.txt add"
        ]
    );
    let deep = added
        .as_array()
        .expect("records")
        .iter()
        .find(|a| a["depotFile"] == "//depot/newdir/deep/d.txt")
        .expect("deep file");
    assert_eq!(deep["clientFile"], local("newdir/deep/d.txt"));
    assert_eq!(deep["type"], "text");
    assert_eq!(actions(ok(&r[5])), EXPECTED);
    // Nothing left: the warning P4 clients show.
    assert_eq!(ok(&r[6]), &json!([]));
    assert_eq!(r[6]["warnings"], json!(["No file(s) to reconcile."]));
}

#[test]
fn reconcile_leaves_the_state_keel_reconcile_leaves() {
    let s = P4Server::start();
    depot(&s);
    let root = s.p4_workspace();
    outside_work(&root);
    // The same work in a native workspace, reconciled by `keel reconcile`.
    let native = workspace_on(&s.server, s.home.path(), "alice", "n");
    native.ok(&["sync"]);
    outside_work(&native.cwd);
    native.ok(&["reconcile"]);
    let mut native_opened: Vec<String> = native
        .json(&["opened"])
        .iter()
        .map(|r| format!("{} {}", str_field(r, "depotFile"), str_field(r, "action")))
        .collect();
    native_opened.sort();
    let r = s.drive(&[
        json!({"cmd": ["reconcile", "//..."], "cwd": root.display().to_string(),
               "ignore_file": ".p4ignore"}),
        json!({"cmd": ["opened"]}),
    ]);
    ok(&r[0]);
    assert_eq!(actions(ok(&r[1])), native_opened);
    assert_eq!(native_opened, EXPECTED);
}

#[test]
fn reconcile_honours_arguments_ignore_flags_and_protections() {
    let s = P4Server::start();
    let w = depot(&s);
    let root = s.p4_workspace();
    outside_work(&root);
    crate::access::protect(&w, &["super user alice * //...", "read user bob * //..."]);
    let cwd = root.display().to_string();
    let r = s.drive(&[
        // Only the new directory.
        json!({"cmd": ["reconcile", "-n", "newdir/..."], "cwd": cwd, "ignore_file": ".p4ignore"}),
        // -I: the ignored file is found too.
        json!({"cmd": ["reconcile", "-n", "-a", "-I"], "cwd": cwd, "ignore_file": ".p4ignore"}),
        // A flag Keel does not take: the usage error.
        json!({"cmd": ["reconcile", "-m"], "cwd": cwd}),
        // Bob may read only: refused before anything is scanned.
        json!({"cmd": ["reconcile"], "user": "bob", "client": "alice_ws", "cwd": cwd}),
        // A change that does not exist: refused, nothing opened.
        json!({"cmd": ["reconcile", "-c", "99"], "user": "alice", "cwd": cwd,
               "ignore_file": ".p4ignore"}),
        json!({"cmd": ["opened"], "user": "alice"}),
    ]);
    assert_eq!(actions(ok(&r[0])), vec!["//depot/newdir/deep/d.txt add"]);
    assert_eq!(
        actions(ok(&r[1])),
        vec![
            "//depot/.p4ignore add",
            "//depot/build.log add",
            "//depot/new.txt add",
            "//depot/newdir/deep/d.txt add"
        ]
    );
    assert!(raised(&r[2]).contains("Invalid option: -m"), "{}", r[2]);
    let refused = raised(&r[3]);
    assert!(
        refused.contains("reconcile") || refused.contains("Open"),
        "{refused}"
    );
    assert!(refused.to_lowercase().contains("permission"), "{refused}");
    assert!(raised(&r[4]).contains("99"), "{}", r[4]);
    assert_eq!(ok(&r[5]), &json!([]));
}

#[test]
fn clean_brings_the_workspace_back_to_its_have_list() {
    let s = P4Server::start();
    depot(&s);
    let root = s.p4_workspace();
    outside_work(&root);
    // The ignore file ignores itself: clean leaves it, and it goes on ignoring `build.log`.
    std::fs::write(root.join(".p4ignore"), "*.log\n.p4ignore\n").expect("ignore");
    let cwd = root.display().to_string();
    let r = s.drive(&[
        json!({"cmd": ["clean", "-n"], "cwd": cwd, "ignore_file": ".p4ignore", "tagged": false}),
        json!({"cmd": ["clean"], "cwd": cwd, "ignore_file": ".p4ignore", "tagged": false}),
        json!({"cmd": ["status"], "cwd": cwd, "ignore_file": ".p4ignore"}),
        json!({"cmd": ["opened"]}),
    ]);
    let preview = ok(&r[0]).as_array().expect("lines").clone();
    assert_eq!(preview.len(), 4, "{preview:?}");
    assert!(
        preview.contains(&json!(format!(
            "//depot/b.txt#1 - refreshing {}",
            root.join("b.txt").display()
        ))),
        "{preview:?}"
    );
    assert!(
        preview.contains(&json!(format!(
            "//depot/new.txt#none - deleted as {}",
            root.join("new.txt").display()
        ))),
        "{preview:?}"
    );
    ok(&r[1]);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).expect("a"),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).expect("b"),
        "bee\n"
    );
    assert!(!root.join("new.txt").exists());
    assert!(!root.join("newdir/deep/d.txt").exists());
    // The ignored file is not the workspace's business.
    assert!(root.join("build.log").exists());
    assert_eq!(r[2]["warnings"], json!(["No file(s) to reconcile."]));
    assert_eq!(ok(&r[3]), &json!([]));
}

#[test]
fn quiet_sync_gives_its_totals_and_progress_to_a_tagged_client() {
    let s = P4Server::start();
    depot(&s);
    s.p4_workspace();
    let r = s.drive(&[
        json!({"cmd": ["sync", "-f", "-q", "//..."], "progress": true}),
        json!({"cmd": ["sync", "-f", "-q", "//..."], "tagged": false}),
        json!({"cmd": ["sync", "-q"]}),
        json!({"cmd": ["sync", "-f", "-q", "//..."]}),
    ]);
    // One record: the totals, and no record per file.
    assert_eq!(
        ok(&r[0]),
        &json!([{"totalFileSize": "12", "totalFileCount": "3"}])
    );
    assert_eq!(
        r[0]["progress"],
        json!([
            ["init", 3],
            ["setDescription", "sync", 2],
            ["setTotal", 3],
            ["update", 1],
            ["update", 2],
            ["update", 3],
            // The client's code for done without a failure (2 is a failed one).
            ["done", 1]
        ])
    );
    // Untagged -q prints nothing; nothing to do is still said.
    assert_eq!(ok(&r[1]), &json!([]));
    assert_eq!(r[2]["warnings"], json!(["File(s) up-to-date."]));
    // Tagged without a progress indicator: no record at all.
    assert_eq!(ok(&r[3]), &json!([]));
}
