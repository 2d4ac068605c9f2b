//! End-to-end: `clean` brings a workspace back to its have list (new files deleted, edited
//! and missing ones restored, opened and ignored files left alone, `-a -d -e -I -n`), and
//! `flush` records revisions as synced without transferring them.

use std::path::Path;

use crate::access::protect;
use crate::common::{Client, Fixture, read, str_field, write};

fn make_writable(path: &Path) {
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(path, perms).unwrap();
}

/// A workspace with `a`, `b`, `c` and a `.p4ignore` (`*.o`) submitted, then `a` edited, `b`
/// deleted, `n` and `j.o` new, all without opening anything.
fn messy(fx: &Fixture) -> Client {
    let ws = fx.workspace("alice", "ws");
    write(&ws.cwd, ".p4ignore", "*.o\n");
    for rel in ["a", "b", "dir/c"] {
        write(&ws.cwd, rel, format!("{rel} v1\n"));
    }
    ws.ok(&["add", "..."]);
    ws.ok(&["submit", "-d", "first"]);
    make_writable(&ws.cwd.join("a"));
    write(&ws.cwd, "a", "a edited\n");
    std::fs::remove_file(ws.cwd.join("b")).unwrap();
    write(&ws.cwd, "dir/n", "new\n");
    write(&ws.cwd, "j.o", "object\n");
    ws
}

fn actions(records: &[serde_json::Value]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = records
        .iter()
        .map(|r| (str_field(r, "depotFile"), str_field(r, "action")))
        .collect();
    out.sort();
    out
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn clean_restores_the_have_list_and_leaves_opened_and_ignored_files_alone() {
    let fx = Fixture::new();
    let ws = messy(&fx);
    // An opened file keeps its work.
    ws.ok(&["edit", "dir/c"]);
    write(&ws.cwd, "dir/c", "c in progress\n");

    let preview = ws.json(&["clean", "-n"]);
    assert_eq!(
        actions(&preview),
        pairs(&[
            ("//depot/a", "restored"),
            ("//depot/b", "restored"),
            ("//depot/dir/n", "deleted"),
        ])
    );
    // A preview changes nothing.
    assert_eq!(read(&ws.cwd, "a"), b"a edited\n");
    assert!(!ws.cwd.join("b").exists() && ws.cwd.join("dir/n").exists());

    let done = ws.json(&["clean"]);
    assert_eq!(actions(&done), actions(&preview));
    assert_eq!(read(&ws.cwd, "a"), b"a v1\n");
    assert_eq!(read(&ws.cwd, "b"), b"b v1\n");
    assert!(!ws.cwd.join("dir/n").exists());
    assert_eq!(read(&ws.cwd, "j.o"), b"object\n", "ignored files stay");
    assert_eq!(
        read(&ws.cwd, "dir/c"),
        b"c in progress\n",
        "opened files stay"
    );
    assert!(ws.json(&["status"]).is_empty());
    let second = ws.ok(&["clean"]);
    assert!(second.is_empty(), "{second}");

    // -I: new files the ignore rules cover go too.
    let ignored = ws.json(&["clean", "-I"]);
    assert_eq!(actions(&ignored), pairs(&[("//depot/j.o", "deleted")]));
    assert!(!ws.cwd.join("j.o").exists());
}

#[test]
fn clean_a_d_and_e_each_do_one_part() {
    let fx = Fixture::new();
    let ws = messy(&fx);
    assert_eq!(
        actions(&ws.json(&["clean", "-e"])),
        pairs(&[("//depot/a", "restored")])
    );
    assert_eq!(read(&ws.cwd, "a"), b"a v1\n");
    assert!(!ws.cwd.join("b").exists() && ws.cwd.join("dir/n").exists());
    assert_eq!(
        actions(&ws.json(&["clean", "-a"])),
        pairs(&[("//depot/dir/n", "deleted")])
    );
    assert!(!ws.cwd.join("b").exists() && !ws.cwd.join("dir/n").exists());
    assert_eq!(
        actions(&ws.json(&["clean", "-d"])),
        pairs(&[("//depot/b", "restored")])
    );
    assert_eq!(read(&ws.cwd, "b"), b"b v1\n");
    // A file argument limits the clean to it.
    write(&ws.cwd, "x1", "1\n");
    write(&ws.cwd, "x2", "2\n");
    assert_eq!(
        actions(&ws.json(&["clean", "x1"])),
        pairs(&[("//depot/x1", "deleted")])
    );
    assert!(ws.cwd.join("x2").exists());
}

#[test]
fn clean_by_a_user_who_may_not_read_a_file_is_refused_for_it() {
    let fx = Fixture::new();
    let alice = messy(&fx);
    protect(
        &alice,
        &["write user * * //...", "super user alice * //..."],
    );
    let bob = fx.workspace("bob", "bob-ws");
    bob.ok(&["sync"]);
    make_writable(&bob.cwd.join("dir/c"));
    write(&bob.cwd, "dir/c", "bob's edit\n");
    protect(
        &alice,
        &[
            "write user * * //...",
            "read user bob * -//depot/dir/...",
            "super user alice * //...",
        ],
    );
    let err = bob.fail(&["clean", "-e"]);
    assert!(err.contains("dir/c"), "{err}");
    assert_eq!(read(&bob.cwd, "dir/c"), b"bob's edit\n", "nothing restored");
}

#[test]
fn flush_records_revisions_as_synced_without_transferring_them() {
    let fx = Fixture::new();
    let alice = messy(&fx);
    let _ = alice;
    let bob = fx.workspace("bob", "bob-ws");
    let out = bob.json(&["flush", "-n"]);
    assert_eq!(out.len(), 4, "{out:?}");
    assert!(bob.json(&["have"]).is_empty(), "a preview records nothing");
    bob.json(&["flush"]);
    let have: Vec<String> = bob
        .json(&["have"])
        .iter()
        .map(|r| str_field(r, "depotFile"))
        .collect();
    assert_eq!(
        have,
        [
            "//depot/.p4ignore",
            "//depot/a",
            "//depot/b",
            "//depot/dir/c"
        ]
    );
    assert!(!bob.cwd.join("a").exists(), "no file transferred");
    // Now the workspace lacks what it has: clean -d brings it.
    bob.ok(&["clean", "-d"]);
    assert_eq!(read(&bob.cwd, "a"), b"a v1\n");
}
