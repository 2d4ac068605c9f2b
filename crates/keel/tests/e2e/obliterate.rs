//! End-to-end: obliterate reports without -y, removes history with -y, and reclaims content
//! only when nothing else refers to it.

use crate::common::{Client, Fixture, bytes, content_files, str_field, write};

fn summary(records: &[serde_json::Value]) -> &serde_json::Value {
    records
        .iter()
        .find(|r| r.get("reportOnly").is_some())
        .unwrap_or_else(|| panic!("no summary in {records:?}"))
}

fn revisions(client: &Client, path: &str) -> usize {
    client.json(&["filelog", path]).len()
}

/// `a.txt` with two revisions and `b.txt` with one, all distinct content.
fn two_files(fx: &Fixture) -> Client {
    let ws = fx.workspace("alice", "a");
    write(&ws.cwd, "a.txt", bytes(1, 5000));
    write(&ws.cwd, "b.txt", "bee\n");
    ws.ok(&["add", "a.txt", "b.txt"]);
    ws.ok(&["submit", "-d", "two files"]);
    ws.ok(&["edit", "a.txt"]);
    write(&ws.cwd, "a.txt", bytes(2, 5000));
    ws.ok(&["submit", "-d", "a again"]);
    ws
}

#[test]
fn report_mode_changes_nothing() {
    let fx = Fixture::new();
    let ws = two_files(&fx);
    let before = content_files(&fx.server.root);
    let out = ws.ok(&["obliterate", "//depot/a.txt"]);
    assert!(
        out.contains("This was report mode. Use -y to perform the operation."),
        "{out}"
    );
    assert!(out.contains("//depot/a.txt#2 - would be purged"), "{out}");
    let report = ws.json(&["obliterate", "//depot/..."]);
    assert_eq!(str_field(summary(&report), "revisionRecDeleted"), "3");
    assert_eq!(str_field(summary(&report), "reportOnly"), "true");
    assert_eq!(revisions(&ws, "//depot/a.txt"), 2);
    assert_eq!(content_files(&fx.server.root), before);
}

#[test]
fn obliterate_removes_history_and_reclaims_unique_content() {
    let fx = Fixture::new();
    let ws = two_files(&fx);
    let before = content_files(&fx.server.root);
    assert_eq!(before, 3);
    let records = ws.json(&["obliterate", "-y", "//depot/a.txt"]);
    let sum = summary(&records);
    assert_eq!(str_field(sum, "revisionRecDeleted"), "2");
    assert_eq!(str_field(sum, "purgedFiles"), "2");
    assert!(
        sum["purgedBytes"].as_u64().expect("purgedBytes") > 0,
        "{sum}"
    );
    assert_eq!(content_files(&fx.server.root), before - 2);
    assert!(
        ws.fail(&["filelog", "//depot/a.txt"])
            .contains("no such file")
    );
    assert!(
        ws.fail(&["files", "//depot/a.txt"])
            .contains("no such file")
    );
    // The other file's history is intact and readable.
    assert_eq!(revisions(&ws, "//depot/b.txt"), 1);
    let printed = ws.json(&["print", "//depot/b.txt"]);
    assert_eq!(str_field(&printed[0], "content"), "bee\n");
    // Changes that touched it still list it.
    let described = ws.ok(&["describe", "-s", "1"]);
    assert!(described.contains("//depot/b.txt#1"), "{described}");
    assert!(!described.contains("//depot/a.txt"), "{described}");
}

#[test]
fn shared_content_survives_obliterate_of_one_copy() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "a");
    let same = bytes(9, 40_000);
    write(&ws.cwd, "one.bin", &same);
    write(&ws.cwd, "two.bin", &same);
    ws.ok(&["add", "one.bin", "two.bin"]);
    ws.ok(&["submit", "-d", "same bytes twice"]);
    let before = content_files(&fx.server.root);
    assert_eq!(before, 1);
    let records = ws.json(&["obliterate", "-y", "//depot/one.bin"]);
    let sum = summary(&records);
    assert_eq!(str_field(sum, "revisionRecDeleted"), "1");
    assert_eq!(str_field(sum, "purgedBytes"), "0");
    assert_eq!(content_files(&fx.server.root), before);
    // The other path still reads and verifies (the client checks the digest).
    let out = fx.dir.path().join("two.out");
    ws.ok(&[
        "print",
        "-o",
        out.to_str().expect("utf-8"),
        "//depot/two.bin",
    ]);
    assert_eq!(std::fs::read(&out).expect("printed"), same);
    let fresh = fx.workspace("bob", "b");
    fresh.ok(&["sync"]);
    assert_eq!(crate::common::read(&fresh.cwd, "two.bin"), same);
    assert!(!fresh.cwd.join("one.bin").exists());
}

#[test]
fn shelved_copies_keep_content_alive() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "a");
    write(&ws.cwd, "f.txt", "shelved and submitted\n");
    ws.ok(&["add", "f.txt"]);
    ws.ok(&["submit", "-d", "f"]);
    write(&ws.cwd, "g.txt", "shelved and submitted\n");
    ws.ok(&["change", "-d", "shelf"]);
    ws.ok(&["add", "-c", "2", "g.txt"]);
    ws.ok(&["shelve", "-c", "2"]);
    let records = ws.json(&["obliterate", "-y", "//depot/f.txt"]);
    assert_eq!(str_field(summary(&records), "purgedBytes"), "0");
    assert_eq!(
        ws.ok(&["print", "-q", "//depot/g.txt@=2"]),
        "shelved and submitted\n"
    );
}
