//! End-to-end: shelve, unshelve into another user's workspace, describe -S, and the refusals
//! that protect shelves (submit / delete of a change with shelved files, unshelve over opens).

use crate::common::{Client, Fixture, bytes, read, str_field, write};

/// The shelved files of `change` as (depotFile, digest), from `describe -S -s --json`.
fn shelf(client: &Client, change: &str) -> Vec<(String, String)> {
    client
        .json(&["describe", "-S", "-s", change])
        .iter()
        .filter(|r| r.get("depotFile").is_some())
        .map(|r| {
            (
                str_field(r, "depotFile"),
                r.get("digest")
                    .and_then(|d| d.as_str())
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

fn opened(client: &Client) -> Vec<(String, String)> {
    client
        .json(&["opened"])
        .iter()
        .map(|o| (str_field(o, "depotFile"), str_field(o, "action")))
        .collect()
}

/// Alice: `base.txt` submitted in change 1, then edited and a new binary added, all shelved
/// from the default changelist (which becomes change 2).
fn alice_shelves(fx: &Fixture) -> (Client, Vec<u8>) {
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "base.txt", "one\n");
    a.ok(&["add", "base.txt"]);
    a.ok(&["submit", "-d", "base"]);
    a.ok(&["edit", "base.txt"]);
    write(&a.cwd, "base.txt", "one\ntwo\n");
    let blob = bytes(7, 70_000);
    write(&a.cwd, "new.bin", &blob);
    a.ok(&["add", "new.bin"]);
    let out = a.ok(&["shelve"]);
    assert!(out.contains("Change 2 created."), "{out}");
    assert!(out.contains("Shelving files for change 2."), "{out}");
    assert!(out.contains("//depot/base.txt#1 edit"), "{out}");
    assert!(out.contains("Change 2 files shelved."), "{out}");
    (a, blob)
}

#[test]
fn shelve_unshelve_elsewhere_and_submit_without_upload() {
    let fx = Fixture::new();
    let (a, blob) = alice_shelves(&fx);
    // Files stay opened in the shelving workspace, now in change 2.
    let mine = a.json(&["opened"]);
    assert_eq!(mine.len(), 2);
    assert!(
        mine.iter().all(|o| str_field(o, "change") == "2"),
        "{mine:?}"
    );

    let described = a.ok(&["describe", "-S", "2"]);
    assert!(described.contains("Shelved files ..."), "{described}");
    assert!(described.contains("//depot/base.txt#1 edit"), "{described}");
    assert!(described.contains("+two"), "{described}");
    let summary = a.ok(&["describe", "-S", "-s", "2"]);
    assert!(!summary.contains("+two"), "{summary}");
    let shelved = shelf(&a, "2");
    assert_eq!(shelved.len(), 2, "{shelved:?}");

    // Bob unshelves into his own workspace: content arrives, files are opened for him.
    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    let out = b.ok(&["unshelve", "-s", "2"]);
    assert!(out.contains("//depot/base.txt"), "{out}");
    assert_eq!(read(&b.cwd, "base.txt"), b"one\ntwo\n");
    assert_eq!(read(&b.cwd, "new.bin"), blob);
    let mut his = opened(&b);
    his.sort();
    assert_eq!(
        his,
        [
            ("//depot/base.txt".to_string(), "edit".to_string()),
            ("//depot/new.bin".to_string(), "add".to_string())
        ]
    );

    // Unchanged unshelved files are submitted from the shelved content.
    let out = b.ok(&["submit", "-d", "from alice's shelf"]);
    assert!(out.contains("Change 3 submitted."), "{out}");
    for (path, digest) in &shelved {
        let head = b.json(&["files", path]);
        assert_eq!(&str_field(&head[0], "digest"), digest, "{path}");
        assert_eq!(str_field(&head[0], "change"), "3");
    }
    let printed = b.json(&["print", "//depot/base.txt"]);
    assert_eq!(str_field(&printed[0], "content"), "one\ntwo\n");

    // A file changed after unshelving is uploaded: its new content is submitted.
    write(&a.cwd, "fresh.txt", "as shelved\n");
    a.ok(&["add", "-c", "2", "fresh.txt"]);
    a.ok(&["shelve", "-c", "2", "fresh.txt"]);
    b.ok(&["unshelve", "-s", "2", "//depot/fresh.txt"]);
    assert_eq!(read(&b.cwd, "fresh.txt"), b"as shelved\n");
    write(&b.cwd, "fresh.txt", "changed by bob\n");
    b.ok(&["submit", "-d", "changed after unshelve"]);
    let printed = b.json(&["print", "//depot/fresh.txt"]);
    assert_eq!(str_field(&printed[0], "content"), "changed by bob\n");
}

#[test]
fn shelved_changes_refuse_submit_and_delete_until_the_shelf_is_deleted() {
    let fx = Fixture::new();
    let (a, _) = alice_shelves(&fx);
    let err = a.fail(&["submit", "-c", "2", "-d", "too early"]);
    assert!(
        err.contains("shelved files must be deleted first: keel shelve -d -c 2"),
        "{err}"
    );
    let err = a.fail(&["change", "-D", "2"]);
    assert!(err.contains("shelved files must be deleted first"), "{err}");
    assert_eq!(opened(&a).len(), 2);

    let out = a.ok(&["shelve", "-d", "-c", "2"]);
    assert!(out.contains("Shelved change 2 deleted."), "{out}");
    assert!(shelf(&a, "2").is_empty());
    let out = a.ok(&["submit", "-c", "2"]);
    assert!(out.contains("submitted"), "{out}");
}

#[test]
fn reshelve_updates_listed_files_and_replace_and_delete() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let out = a.ok(&["change", "-d", "work in progress"]);
    assert!(out.contains("Change 1 created."), "{out}");
    write(&a.cwd, "x.txt", "x1\n");
    write(&a.cwd, "y.txt", "y1\n");
    a.ok(&["add", "-c", "1", "x.txt", "y.txt"]);
    a.ok(&["shelve", "-c", "1"]);
    let first = shelf(&a, "1");
    assert_eq!(first.len(), 2);

    // Re-shelving one file updates only that file.
    write(&a.cwd, "x.txt", "x2\n");
    write(&a.cwd, "y.txt", "y2\n");
    let out = a.ok(&["shelve", "-c", "1", "x.txt"]);
    assert!(out.contains("//depot/x.txt"), "{out}");
    assert!(!out.contains("//depot/y.txt"), "{out}");
    let second = shelf(&a, "1");
    assert_ne!(second[0].1, first[0].1, "x.txt was re-shelved");
    assert_eq!(second[1], first[1], "y.txt kept its shelved content");
    assert_eq!(
        a.ok(&["print", "-q", "//depot/x.txt@=1"]),
        "x2\n",
        "shelved content prints with @="
    );

    // -r: the shelf becomes exactly the opened files of the change.
    a.ok(&["revert", "y.txt"]);
    a.ok(&["shelve", "-r", "-c", "1"]);
    let replaced = shelf(&a, "1");
    assert_eq!(replaced.len(), 1, "{replaced:?}");
    assert_eq!(replaced[0].0, "//depot/x.txt");

    // -d of a file deletes just that shelved file; the file stays opened.
    let out = a.ok(&["shelve", "-d", "-c", "1", "x.txt"]);
    assert!(
        out.contains("//depot/x.txt - shelved file deleted"),
        "{out}"
    );
    assert!(shelf(&a, "1").is_empty());
    assert_eq!(opened(&a).len(), 1);
    let err = a.fail(&["shelve", "-d", "-c", "1"]);
    assert!(err.contains("No shelved files in change 1"), "{err}");
}

#[test]
fn unshelve_over_an_opened_file_is_refused_and_changes_nothing() {
    let fx = Fixture::new();
    let (_a, _) = alice_shelves(&fx);
    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    b.ok(&["edit", "base.txt"]);
    write(&b.cwd, "base.txt", "bob's own\n");
    let err = b.fail(&["unshelve", "-s", "2"]);
    assert!(err.contains("//depot/base.txt"), "{err}");
    assert!(err.contains("already opened for edit"), "{err}");
    assert_eq!(
        opened(&b),
        [("//depot/base.txt".to_string(), "edit".to_string())]
    );
    assert_eq!(read(&b.cwd, "base.txt"), b"bob's own\n");
    assert!(!b.cwd.join("new.bin").exists());
    let err = b.fail(&["unshelve", "-s", "99"]);
    assert!(err.contains("change 99"), "{err}");
}
