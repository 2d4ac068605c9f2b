//! End-to-end: the everyday workflow through the real CLI against a real server.

use crate::common::{Fixture, bytes, read, str_field, write};
use std::path::Path;

#[test]
fn info_depots_and_workspaces() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    let info = ws.json(&["info"]);
    assert_eq!(str_field(&info[0], "userName"), "alice");
    assert_eq!(str_field(&info[0], "clientName"), "alice-ws");
    assert_eq!(str_field(&info[0], "serverAddress"), fx.server.addr);

    let depots: Vec<String> = ws
        .json(&["depots"])
        .iter()
        .map(|d| str_field(d, "name"))
        .collect();
    assert_eq!(depots, ["depot"]);
    ws.ok(&["depot", "create", "assets"]);
    let depots: Vec<String> = ws
        .json(&["depots"])
        .iter()
        .map(|d| str_field(d, "name"))
        .collect();
    assert_eq!(depots, ["assets", "depot"]);
    assert!(
        ws.fail(&["depot", "create", "assets"])
            .contains("already exists")
    );

    let listed: Vec<String> = ws
        .json(&["workspace", "list"])
        .iter()
        .map(|w| str_field(w, "name"))
        .collect();
    assert_eq!(listed, ["alice-ws"]);
    let shown = ws.ok(&["workspace", "show", "alice-ws"]);
    assert!(shown.contains("//depot/... //alice-ws/..."), "{shown}");
    assert!(ws.fail(&["workspace", "show", "nobody"]).contains("nobody"));
}

#[test]
fn thousand_files_round_trip_between_workspaces() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    for i in 0..1000 {
        let content = if i % 10 == 0 {
            bytes(i, 3000)
        } else {
            format!("file {i}\n")
                .repeat(i as usize % 50 + 1)
                .into_bytes()
        };
        write(&a.cwd, &format!("src/d{}/f{i}.txt", i % 17), content);
    }
    a.ok(&["add", "..."]);
    assert_eq!(a.json(&["opened"]).len(), 1000);
    let out = a.ok(&["submit", "-d", "a thousand files"]);
    assert!(out.contains("Change 1 submitted."), "{out}");
    assert!(a.json(&["opened"]).is_empty());

    b.ok(&["sync", "-q"]);
    for i in 0..1000u64 {
        let rel = format!("src/d{}/f{i}.txt", i % 17);
        assert_eq!(read(&a.cwd, &rel), read(&b.cwd, &rel), "{rel}");
    }
    let have = b.json(&["have"]);
    assert_eq!(have.len(), 1000);
    assert!(have.iter().all(|h| str_field(h, "haveRev") == "1"));
    // A second sync has nothing to do.
    assert!(b.json(&["sync"]).is_empty());
}

#[test]
fn edit_delete_move_round_trip() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    write(&a.cwd, "keep.txt", "one\n");
    write(&a.cwd, "gone.txt", "bye\n");
    write(&a.cwd, "old/name.txt", "moving\n");
    a.ok(&["add", "keep.txt", "gone.txt", "old/name.txt"]);
    a.ok(&["submit", "-d", "initial"]);

    // Synced files are read-only until opened.
    assert!(
        std::fs::metadata(a.cwd.join("keep.txt"))
            .expect("stat")
            .permissions()
            .readonly()
    );
    a.ok(&["edit", "keep.txt"]);
    assert!(
        !std::fs::metadata(a.cwd.join("keep.txt"))
            .expect("stat")
            .permissions()
            .readonly()
    );
    write(&a.cwd, "keep.txt", "one\ntwo\n");
    let diff = a.ok(&["diff", "keep.txt"]);
    assert!(diff.contains("+two"), "{diff}");
    a.ok(&["delete", "gone.txt"]);
    assert!(!a.cwd.join("gone.txt").exists());
    a.ok(&["edit", "old/name.txt"]);
    a.ok(&["move", "old/name.txt", "new/name.txt"]);
    assert!(a.cwd.join("new/name.txt").exists() && !a.cwd.join("old/name.txt").exists());
    let actions: Vec<String> = a
        .json(&["opened"])
        .iter()
        .map(|o| str_field(o, "action"))
        .collect();
    assert_eq!(actions.len(), 4, "{actions:?}");
    let out = a.ok(&["submit", "-d", "edit, delete, move"]);
    assert!(out.contains("Change 2 submitted."), "{out}");

    b.ok(&["sync"]);
    assert_eq!(read(&b.cwd, "keep.txt"), b"one\ntwo\n");
    assert!(!b.cwd.join("gone.txt").exists());
    assert!(!b.cwd.join("old/name.txt").exists());
    assert_eq!(read(&b.cwd, "new/name.txt"), b"moving\n");

    let described = a.ok(&["describe", "2"]);
    assert!(described.contains("//depot/keep.txt#2 edit"), "{described}");
    assert!(described.contains("+two"), "{described}");
    let log = a.json(&["filelog", "//depot/keep.txt"]);
    assert_eq!(log.len(), 2);
    let heads = a.json(&["fstat", "//depot/new/name.txt"]);
    assert_eq!(str_field(&heads[0], "headAction"), "move/add");

    // Back in time and forward again.
    b.ok(&["sync", "@1"]);
    assert_eq!(read(&b.cwd, "keep.txt"), b"one\n");
    assert!(b.cwd.join("gone.txt").exists() && !b.cwd.join("new/name.txt").exists());
    b.ok(&["sync", "//depot/...#none"]);
    assert!(!b.cwd.join("keep.txt").exists());
    b.ok(&["sync"]);
    assert_eq!(read(&b.cwd, "keep.txt"), b"one\ntwo\n");
}

#[test]
fn revert_restores_and_abandons() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "f.txt", "original\n");
    a.ok(&["add", "f.txt"]);
    a.ok(&["submit", "-d", "add"]);
    a.ok(&["edit", "f.txt"]);
    write(&a.cwd, "f.txt", "scribbles\n");
    a.ok(&["revert", "f.txt"]);
    assert_eq!(read(&a.cwd, "f.txt"), b"original\n");
    assert!(a.json(&["opened"]).is_empty());

    a.ok(&["edit", "f.txt"]);
    a.ok(&["revert", "-a"]);
    assert!(
        a.json(&["opened"]).is_empty(),
        "unchanged file reverted by -a"
    );

    write(&a.cwd, "new.txt", "new\n");
    a.ok(&["add", "new.txt"]);
    a.ok(&["revert", "new.txt"]);
    assert!(
        a.cwd.join("new.txt").exists(),
        "revert of an add keeps the file"
    );
    assert!(a.json(&["opened"]).is_empty());
}

#[test]
fn numbered_changes_reopen_and_history() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "x.txt", "x\n");
    write(&a.cwd, "y.bin", [0u8, 1, 2, 3, 0, 255]);
    a.ok(&["add", "x.txt", "y.bin"]);
    let types: Vec<String> = a
        .json(&["opened"])
        .iter()
        .map(|o| str_field(o, "type"))
        .collect();
    assert_eq!(types, ["text", "binary"]);
    let created = a.ok(&["change", "-d", "numbered"]);
    assert!(created.contains("Change 1 created"), "{created}");
    a.ok(&["reopen", "-c", "1", "x.txt"]);
    let pending = a.json(&["changes", "-s", "pending"]);
    assert_eq!(pending.len(), 1);
    let out = a.ok(&["submit", "-c", "1"]);
    assert!(out.contains("submitted"), "{out}");
    assert_eq!(
        a.json(&["opened"]).len(),
        1,
        "y.bin stays in the default changelist"
    );
    a.ok(&["submit", "-d", "the binary"]);
    let changes = a.json(&["changes"]);
    assert_eq!(changes.len(), 2);
    let files = a.json(&["files", "//depot/..."]);
    assert_eq!(files.len(), 2);
    let printed = a.ok(&["print", "-q", "//depot/x.txt"]);
    assert_eq!(printed, "x\n");
    let err = a.fail(&["dirs", "//depot/*"]);
    assert!(err.contains("//depot/* - no such file(s)"), "{err}");
    write(&a.cwd, "sub/dir/z.txt", "z\n");
    write(&a.cwd, "other/w.txt", "w\n");
    a.ok(&["add", "sub/dir/z.txt", "other/w.txt"]);
    a.ok(&["submit", "-d", "dirs"]);
    let dirs: Vec<String> = a
        .json(&["dirs", "//depot/*"])
        .iter()
        .map(|d| str_field(d, "dir"))
        .collect();
    assert_eq!(dirs, ["//depot/other", "//depot/sub"]);
    // Files sorting before, between and after the subdirectories are stepped over; a
    // subdirectory holding several files is listed once.
    for (path, text) in [
        ("a.txt", "a\n"),
        ("sub.txt", "s\n"),
        ("sub/more/q.txt", "q\n"),
        ("sub/more/r.txt", "r\n"),
        ("sub/top.txt", "t\n"),
    ] {
        write(&a.cwd, path, text);
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "more dirs"]);
    let list = |pattern: &str| -> Vec<String> {
        a.json(&["dirs", pattern])
            .iter()
            .map(|d| str_field(d, "dir"))
            .collect()
    };
    assert_eq!(list("//depot/*"), ["//depot/other", "//depot/sub"]);
    assert_eq!(
        list("//depot/sub/*"),
        ["//depot/sub/dir", "//depot/sub/more"]
    );
    let err = a.fail(&["dirs", "//depot/sub/more/*"]);
    assert!(err.contains("no such file(s)"), "{err}");
}

#[test]
fn status_and_reconcile_find_unopened_work() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "edited.txt", "v1\n");
    write(&a.cwd, "removed.txt", "bye\n");
    a.ok(&["add", "edited.txt", "removed.txt"]);
    a.ok(&["submit", "-d", "base"]);
    make_writable(&a.cwd.join("edited.txt"));
    write(&a.cwd, "edited.txt", "v2\n");
    std::fs::remove_file(a.cwd.join("removed.txt")).expect("remove");
    write(&a.cwd, "added.txt", "new\n");
    let status = a.ok(&["status"]);
    for expected in ["edited.txt", "removed.txt", "added.txt"] {
        assert!(status.contains(expected), "{status}");
    }
    a.ok(&["reconcile"]);
    let mut opened: Vec<(String, String)> = a
        .json(&["opened"])
        .iter()
        .map(|o| (str_field(o, "depotFile"), str_field(o, "action")))
        .collect();
    opened.sort();
    assert_eq!(
        opened,
        [
            ("//depot/added.txt".to_string(), "add".to_string()),
            ("//depot/edited.txt".to_string(), "edit".to_string()),
            ("//depot/removed.txt".to_string(), "delete".to_string()),
        ]
    );
}

fn make_writable(path: &Path) {
    let mut perms = std::fs::metadata(path).expect("stat").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(path, perms).expect("chmod");
}

/// `-q` prints no informational text (errors still print, `--json` is unchanged), and a
/// per-file listing longer than a screenful prints as one summary line unless `-v`.
#[test]
fn quiet_flag_and_summaries_of_long_listings() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    for i in 0..150 {
        write(&a.cwd, &format!("many/f{i:03}.txt"), format!("{i}\n"));
    }
    assert_eq!(a.ok(&["-q", "add", "many"]), "");
    assert_eq!(a.json(&["opened"]).len(), 150);
    assert_eq!(a.ok(&["revert", "many/..."]), "150 files abandoned.\n");
    assert_eq!(a.ok(&["add", "many"]), "150 files opened for add.\n");
    assert_eq!(a.ok(&["-v", "revert", "many/..."]).lines().count(), 150);
    assert_eq!(a.json(&["add", "many"]).len(), 150);
    assert_eq!(
        a.ok(&["submit", "-d", "many"]),
        "Submitting change 1.\n150 files submitted.\nChange 1 submitted.\n"
    );

    let b = fx.workspace("bob", "b");
    assert_eq!(b.ok(&["sync", "-n"]), "150 files would be added.\n");
    assert_eq!(b.ok(&["-q", "sync"]), "");
    assert_eq!(b.json(&["have"]).len(), 150);
    assert_eq!(b.ok(&["sync", "#none"]), "150 files deleted.\n");
    assert_eq!(b.json(&["sync"]).len(), 150);
    assert_eq!(
        b.ok(&["integrate", "//depot/many/...", "//depot/copy/..."]),
        "150 files opened for branch.\n"
    );

    // A short listing prints every line; -q still lets errors through with a failing exit.
    write(&a.cwd, "few/x.txt", "x\n");
    write(&a.cwd, "few/y.txt", "y\n");
    let added = a.ok(&["add", "few"]);
    assert_eq!(added.lines().count(), 2, "{added}");
    assert!(
        added.contains("//depot/few/x.txt#1 - opened for add"),
        "{added}"
    );
    let out = a.run(&["-q", "edit", "nosuch.txt"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nosuch.txt"), "{err}");
}

/// After a submit its files are read-only (`+w` ones stay writable), whether the submit listed
/// them or printed a summary, for adds and for edits.
#[test]
fn submitted_files_become_read_only_after_short_and_long_submits() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let read_only = |path: &Path| {
        std::fs::metadata(path)
            .expect("stat")
            .permissions()
            .readonly()
    };
    for (count, change) in [(3, 1), (150, 3)] {
        let top = format!("t{count}");
        for i in 0..count {
            write(&a.cwd, &format!("{top}/f{i:03}.txt"), "x\n");
        }
        write(&a.cwd, &format!("{top}w/always.cfg"), "w\n");
        a.ok(&["-q", "add", &top]);
        a.ok(&["add", "-t", "+w", &format!("{top}w/always.cfg")]);
        let added = a.ok(&["submit", "-d", "add"]);
        a.ok(&["-q", "edit", &format!("{top}/...")]);
        for i in 0..count {
            write(&a.cwd, &format!("{top}/f{i:03}.txt"), "y\n");
        }
        let edited = a.ok(&["submit", "-d", "edit"]);
        if count > 100 {
            let summary = |n: u64, files: usize| {
                format!("Submitting change {n}.\n{files} files submitted.\nChange {n} submitted.\n")
            };
            assert_eq!(added, summary(change, count + 1));
            assert_eq!(edited, summary(change + 1, count));
        } else {
            assert!(
                added.contains(&format!("add //depot/{top}/f000.txt#1")),
                "{added}"
            );
            assert_eq!(added.lines().count(), count + 3, "{added}");
            assert!(
                edited.contains(&format!("edit //depot/{top}/f000.txt#2")),
                "{edited}"
            );
        }
        for i in 0..count {
            let path = a.cwd.join(format!("{top}/f{i:03}.txt"));
            assert!(read_only(&path), "{} is read-only", path.display());
        }
        let always = a.cwd.join(format!("{top}w/always.cfg"));
        assert!(!read_only(&always), "+w stays writable");
    }
}
