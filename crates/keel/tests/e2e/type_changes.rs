//! End-to-end: a change of a file's executable bit or kind (file ↔ symlink) made outside Keel is
//! found by `status`/`reconcile`, opened for edit with the new type, submitted, and reproduced
//! by `sync` in another workspace — with and without a content change at the same time.

use crate::common::{Client, Fixture, bytes, str_field, write};
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// What a test file is in the workspace.
#[derive(Clone, Debug)]
enum Local {
    File { content: Vec<u8>, exec: bool },
    Link(&'static str),
}

fn file(content: impl AsRef<[u8]>, exec: bool) -> Local {
    Local::File {
        content: content.as_ref().to_vec(),
        exec,
    }
}

/// Binary content (has NUL bytes), distinct per seed.
fn binary(seed: u64) -> Vec<u8> {
    let mut content = bytes(seed, 300);
    content[0] = 0;
    content
}

struct Case {
    name: &'static str,
    /// `add -t` for the first revision (detected when None).
    add_type: Option<&'static str>,
    before: Local,
    after: Local,
    type_before: &'static str,
    type_after: &'static str,
}

fn cases() -> Vec<Case> {
    let case = |name, before, after, type_before, type_after| Case {
        name,
        add_type: None,
        before,
        after,
        type_before,
        type_after,
    };
    vec![
        case(
            "text_made_executable",
            file("echo a\n", false),
            file("echo a\n", true),
            "text",
            "text+x",
        ),
        case(
            "text_made_executable_and_edited",
            file("echo a\n", false),
            file("echo b\n", true),
            "text",
            "text+x",
        ),
        case(
            "executable_bit_removed",
            file("echo c\n", true),
            file("echo c\n", false),
            "text+x",
            "text",
        ),
        case(
            "executable_bit_removed_and_edited",
            file("echo c\n", true),
            file("echo d\n", false),
            "text+x",
            "text",
        ),
        case(
            "binary_made_executable",
            file(binary(1), false),
            file(binary(1), true),
            "binary",
            "binary+x",
        ),
        case(
            "binary_executable_bit_removed_and_edited",
            file(binary(2), true),
            file(binary(3), false),
            "binary+x",
            "binary",
        ),
        Case {
            add_type: Some("binary+lw"),
            ..case(
                "lock_and_writable_modifiers_kept",
                file(binary(4), false),
                file(binary(4), true),
                "binary+lw",
                "binary+lwx",
            )
        },
        case(
            // The link's target text is the file's old content: only the kind differs.
            "file_replaced_by_symlink_same_bytes",
            file("v1.7/manual.yml", false),
            Local::Link("v1.7/manual.yml"),
            "text",
            "symlink",
        ),
        case(
            "file_replaced_by_symlink",
            file("old\n", false),
            Local::Link("elsewhere.txt"),
            "text",
            "symlink",
        ),
        case(
            "executable_replaced_by_symlink",
            file("#!/bin/sh\n", true),
            Local::Link("elsewhere.sh"),
            "text+x",
            "symlink",
        ),
        case(
            "symlink_replaced_by_file_same_bytes",
            Local::Link("target.txt"),
            file("target.txt", false),
            "symlink",
            "text",
        ),
        case(
            "symlink_replaced_by_executable",
            Local::Link("target.sh"),
            file("#!/bin/sh\necho hi\n", true),
            "symlink",
            "text+x",
        ),
        case(
            "symlink_replaced_by_binary",
            Local::Link("target.bin"),
            file(binary(5), false),
            "symlink",
            "binary",
        ),
    ]
}

fn depot(case: &Case) -> String {
    format!("//depot/t/{}", case.name)
}

/// Makes `path` be `local`, replacing whatever is there.
fn place(path: &Path, local: &Local) {
    if std::fs::symlink_metadata(path).is_ok() {
        std::fs::remove_file(path).expect("remove old file");
    }
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    match local {
        Local::File { content, exec } => {
            std::fs::write(path, content).expect("write");
            let mode = if *exec { 0o755 } else { 0o644 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        }
        Local::Link(target) => std::os::unix::fs::symlink(target, path).expect("symlink"),
    }
}

/// Changes `path` from `before` to `after` the way a user would: a mode change alone is a
/// chmod, anything else replaces the file.
fn change(path: &Path, before: &Local, after: &Local) {
    match (before, after) {
        (Local::File { content: old, .. }, Local::File { content, exec }) if old == content => {
            let mode = std::fs::metadata(path).expect("stat").permissions().mode();
            let mode = if *exec { mode | 0o111 } else { mode & !0o111 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        }
        _ => place(path, after),
    }
}

/// Asserts the workspace file at `path` is `want`.
fn assert_local(path: &Path, want: &Local, what: &str) {
    let meta = std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{what}: {e}"));
    match want {
        Local::File { content, exec } => {
            assert!(meta.is_file(), "{what}: a regular file");
            assert_eq!(&std::fs::read(path).expect("read"), content, "{what}");
            let mode = meta.permissions().mode();
            assert_eq!(mode & 0o111 != 0, *exec, "{what}: mode {mode:o}");
        }
        Local::Link(target) => {
            assert!(meta.file_type().is_symlink(), "{what}: a symlink");
            let got = std::fs::read_link(path).expect("read link");
            assert_eq!(got.to_str(), Some(*target), "{what}");
        }
    }
}

/// `fstat` headType per depot file.
fn head_types(c: &Client) -> HashMap<String, String> {
    c.json(&["fstat", "//depot/t/..."])
        .iter()
        .map(|r| (str_field(r, "depotFile"), str_field(r, "headType")))
        .collect()
}

#[test]
fn type_changes_are_reconciled_submitted_and_synced() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    let cases = cases();
    for case in &cases {
        let rel = format!("t/{}", case.name);
        place(&a.cwd.join(&rel), &case.before);
        match case.add_type {
            Some(t) => a.ok(&["add", "-t", t, &rel]),
            None => a.ok(&["add", &rel]),
        };
    }
    a.ok(&["submit", "-d", "before"]);
    let types = head_types(&a);
    for case in &cases {
        assert_eq!(types[&depot(case)], case.type_before, "{}", case.name);
    }
    b.ok(&["sync"]);
    for case in &cases {
        assert_local(&b.cwd.join("t").join(case.name), &case.before, case.name);
    }

    for case in &cases {
        change(&a.cwd.join("t").join(case.name), &case.before, &case.after);
    }
    let status = a.json(&["status"]);
    assert_eq!(status.len(), cases.len(), "{status:?}");
    let by_file: HashMap<String, &serde_json::Value> = status
        .iter()
        .map(|r| (str_field(r, "depotFile"), r))
        .collect();
    for case in &cases {
        let record = by_file[&depot(case)];
        assert_eq!(str_field(record, "action"), "edit", "{}", case.name);
        assert_eq!(str_field(record, "type"), case.type_after, "{}", case.name);
        assert_eq!(
            str_field(record, "haveType"),
            case.type_before,
            "{}",
            case.name
        );
    }
    let text = a.ok(&["status", "t/text_made_executable"]);
    assert!(
        text.contains("reconcile to edit //depot/t/text_made_executable#1 (type text -> text+x)"),
        "{text}"
    );

    a.ok(&["reconcile"]);
    let opened: HashMap<String, (String, String)> = a
        .json(&["opened"])
        .iter()
        .map(|o| {
            (
                str_field(o, "depotFile"),
                (str_field(o, "action"), str_field(o, "type")),
            )
        })
        .collect();
    assert_eq!(opened.len(), cases.len(), "{opened:?}");
    for case in &cases {
        let want = ("edit".to_string(), case.type_after.to_string());
        assert_eq!(opened[&depot(case)], want, "{}", case.name);
    }
    a.ok(&["submit", "-d", "after"]);
    let types = head_types(&a);
    for case in &cases {
        assert_eq!(types[&depot(case)], case.type_after, "{}", case.name);
    }
    assert!(a.json(&["status"]).is_empty(), "the submitter is clean");

    // Every file has a new revision, even where the content digest did not change.
    let synced = b.json(&["sync"]);
    assert_eq!(synced.len(), cases.len(), "{synced:?}");
    for record in &synced {
        assert_eq!(str_field(record, "action"), "updated", "{record}");
    }
    for case in &cases {
        assert_local(&b.cwd.join("t").join(case.name), &case.after, case.name);
    }
    assert!(
        b.json(&["status"]).is_empty(),
        "the synced workspace is clean"
    );

    // And back again: syncing to the first revisions restores the old kinds and modes.
    b.ok(&["sync", "//depot/t/...#1"]);
    for case in &cases {
        assert_local(&b.cwd.join("t").join(case.name), &case.before, case.name);
    }
    assert!(b.json(&["status"]).is_empty(), "clean at the old revisions");
}

#[test]
fn a_type_change_in_an_unselected_file_is_not_reported() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "one.sh", "echo 1\n");
    write(&a.cwd, "two.sh", "echo 2\n");
    a.ok(&["add", "one.sh", "two.sh"]);
    a.ok(&["submit", "-d", "scripts"]);
    for name in ["one.sh", "two.sh"] {
        let path = a.cwd.join(name);
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode | 0o111))
            .expect("chmod");
    }
    a.ok(&["reconcile", "one.sh"]);
    let opened = a.json(&["opened"]);
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(str_field(&opened[0], "depotFile"), "//depot/one.sh");
    assert_eq!(str_field(&opened[0], "type"), "text+x");
    let status = a.json(&["status"]);
    assert_eq!(status.len(), 1, "{status:?}");
    assert_eq!(str_field(&status[0], "depotFile"), "//depot/two.sh");
}
