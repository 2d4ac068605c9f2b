//! End-to-end: branch specs, labels, `tag`, `labelsync` and `@label` revision specifiers.

use crate::common::{Client, Fixture, read, str_field, write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Runs `keel ARGS` as `client` with `script` (a shell snippet editing "$1") as $EDITOR.
fn with_editor(client: &Client, dir: &Path, script: &str, args: &[&str]) -> std::process::Output {
    let editor = dir.join(format!("editor-{}.sh", args.join("-")));
    std::fs::write(&editor, format!("#!/bin/sh\n{script}\n")).expect("editor");
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::process::Command::new(crate::common::KEEL)
        .args(args)
        .current_dir(&client.cwd)
        .env("KEEL_SERVER", &client.addr)
        .env("KEEL_USER", &client.user)
        .env("EDITOR", &editor)
        .output()
        .expect("run keel with an editor")
}

/// Runs `args` with `script` as the editor, which must succeed.
fn edit_ok(client: &Client, dir: &Path, script: &str, args: &[&str]) {
    let out = with_editor(client, dir, script, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `args` with `script` as the editor, which must fail; its stderr.
fn edit_fails(client: &Client, dir: &Path, script: &str, args: &[&str]) -> String {
    let out = with_editor(client, dir, script, args);
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `(depotFile, rev)` of each record.
fn revs(records: &[serde_json::Value]) -> Vec<(String, String)> {
    records
        .iter()
        .map(|r| (str_field(r, "depotFile"), str_field(r, "rev")))
        .collect()
}

/// `(depotFile, action)` of each tag/labelsync record.
fn actions(records: &[serde_json::Value]) -> Vec<(String, String)> {
    records
        .iter()
        .map(|r| (str_field(r, "depotFile"), str_field(r, "action")))
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn branch_specs_crud_and_validation() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let view = "//depot/main/... //depot/rel/...";
    a.ok(&["branch", "create", "rel", "--view", view, "-d", "Release"]);
    let shown = a.json(&["branch", "show", "rel"]);
    assert_eq!(str_field(&shown[0], "branch"), "rel");
    assert_eq!(str_field(&shown[0], "Owner"), "alice");
    assert_eq!(str_field(&shown[0], "Options"), "unlocked");
    assert_eq!(str_field(&shown[0], "Description"), "Release");
    assert_eq!(str_field(&shown[0], "View0"), view);
    assert!(a.ok(&["branch", "show", "rel"]).contains("Branch:\trel"));

    let err = a.fail(&["branch", "create", "rel", "--view", view]);
    assert!(
        err.contains("rel") && err.contains("already exists"),
        "{err}"
    );
    // A bad view line is refused, naming what is wrong with it.
    for (line, words) in [
        (
            "//depot/main/... //depot/rel/*",
            &["//depot/rel/*", "wildcards"][..],
        ),
        ("+//depot/main/... //depot/rel/...", &["overlay"][..]),
        (
            "//nodepot/main/... //depot/rel/...",
            &["nodepot", "does not exist"][..],
        ),
    ] {
        let err = a.fail(&["branch", "create", "bad", "--view", line]);
        assert!(words.iter().all(|w| err.contains(w)), "{line}: {err}");
    }
    let err = a.fail(&["branch", "create", "bad@name", "--view", view]);
    assert!(err.contains("bad@name"), "{err}");

    // Edit through $EDITOR: add a line; a broken line is refused and changes nothing.
    edit_ok(
        &a,
        fx.dir.path(),
        r#"printf '\t-//depot/main/tmp/... //depot/rel/tmp/...\n' >> "$1""#,
        &["branch", "edit", "rel"],
    );
    let shown = a.json(&["branch", "show", "rel"]);
    assert_eq!(
        str_field(&shown[0], "View1"),
        "-//depot/main/tmp/... //depot/rel/tmp/..."
    );
    let err = edit_fails(
        &a,
        fx.dir.path(),
        r#"printf '\t//depot/a/... //depot/b/*\n' >> "$1""#,
        &["branch", "edit", "rel"],
    );
    assert!(err.contains("//depot/b/*"), "{err}");

    a.ok(&[
        "branch",
        "create",
        "dev",
        "--view",
        "//depot/main/... //depot/dev/...",
    ]);
    let names: Vec<String> = a
        .json(&["branches"])
        .iter()
        .map(|b| str_field(b, "branch"))
        .collect();
    assert_eq!(names, ["dev", "rel"]);
    assert_eq!(a.json(&["branch", "list"]).len(), 2);
    a.ok(&["branch", "delete", "dev"]);
    let err = a.fail(&["branch", "show", "dev"]);
    assert!(err.contains("branch 'dev' does not exist"), "{err}");
    let err = a.fail(&["branch", "delete", "dev"]);
    assert!(err.contains("dev"), "{err}");
}

#[test]
fn label_crud_and_locking() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    write(&a.cwd, "x.txt", "x\n");
    a.ok(&["add", "x.txt"]);
    a.ok(&["submit", "-d", "x"]);

    a.ok(&["label", "create", "rel1", "-d", "First release"]);
    let shown = a.json(&["label", "show", "rel1"]);
    assert_eq!(str_field(&shown[0], "label"), "rel1");
    assert_eq!(str_field(&shown[0], "Owner"), "alice");
    assert_eq!(str_field(&shown[0], "Options"), "unlocked");
    assert_eq!(str_field(&shown[0], "View0"), "//depot/...");
    let text = a.ok(&["label", "show", "rel1"]);
    assert!(
        text.contains("Label:\trel1") && text.contains("Revision:"),
        "{text}"
    );
    let err = a.fail(&["label", "create", "rel1"]);
    assert!(
        err.contains("rel1") && err.contains("already exists"),
        "{err}"
    );
    let err = a.fail(&["label", "create", "bad", "--view", "+//depot/..."]);
    assert!(err.contains("overlay"), "{err}");
    let err = a.fail(&["label", "create", "bad", "--view", "//nodepot/..."]);
    assert!(err.contains("nodepot"), "{err}");

    a.ok(&["label", "create", "rel0", "--view", "//depot/x.txt"]);
    let names: Vec<String> = a
        .json(&["labels"])
        .iter()
        .map(|l| str_field(l, "label"))
        .collect();
    assert_eq!(names, ["rel0", "rel1"]);

    // Lock it through the form; then tag, labelsync, edit and delete are refused.
    edit_ok(
        &a,
        fx.dir.path(),
        r#"sed -i 's/^Options:.*/Options:\tlocked/' "$1""#,
        &["label", "edit", "rel1"],
    );
    assert_eq!(
        str_field(&a.json(&["label", "show", "rel1"])[0], "Options"),
        "locked"
    );
    for args in [
        &["tag", "-l", "rel1", "//depot/..."][..],
        &["labelsync", "-l", "rel1"][..],
        &["label", "delete", "rel1"][..],
    ] {
        let err = a.fail(args);
        assert!(
            err.contains("rel1") && err.contains("locked"),
            "{args:?}: {err}"
        );
    }
    let err = edit_fails(
        &a,
        fx.dir.path(),
        r#"sed -i 's/^Description:.*/Description:\tchanged/' "$1""#,
        &["label", "edit", "rel1"],
    );
    assert!(err.contains("locked"), "{err}");
    // Only the owner unlocks it.
    let unlock = r#"sed -i 's/^Options:.*/Options:\tunlocked/' "$1""#;
    let err = edit_fails(&b, fx.dir.path(), unlock, &["label", "edit", "rel1"]);
    assert!(err.contains("alice"), "{err}");
    edit_ok(&a, fx.dir.path(), unlock, &["label", "edit", "rel1"]);
    a.ok(&["tag", "-l", "rel1", "//depot/..."]);
    a.ok(&["label", "delete", "rel1"]);
    let err = a.fail(&["label", "show", "rel1"]);
    assert!(err.contains("label 'rel1' does not exist"), "{err}");
    let err = a.fail(&["files", "//depot/...@rel1"]);
    assert!(err.contains("rel1"), "{err}");

    // --locked at creation.
    a.ok(&["label", "create", "frozen", "--locked"]);
    let err = a.fail(&["tag", "-l", "frozen", "//depot/x.txt"]);
    assert!(err.contains("frozen") && err.contains("locked"), "{err}");
}

#[test]
fn tag_and_sync_at_label() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    write(&a.cwd, "a.txt", "a1\n");
    write(&a.cwd, "b.txt", "b1\n");
    a.ok(&["add", "a.txt", "b.txt"]);
    a.ok(&["submit", "-d", "one"]);
    a.ok(&["label", "create", "rel"]);
    let tagged = a.json(&["tag", "-l", "rel", "//depot/..."]);
    assert_eq!(
        actions(&tagged),
        pairs(&[("//depot/a.txt", "added"), ("//depot/b.txt", "added")])
    );
    assert_eq!(str_field(&tagged[0], "label"), "rel");
    // Tagging the same revisions again changes nothing.
    assert!(a.json(&["tag", "-l", "rel", "//depot/..."]).is_empty());

    a.ok(&["edit", "a.txt"]);
    write(&a.cwd, "a.txt", "a2\n");
    a.ok(&["submit", "-d", "two"]);
    a.ok(&["delete", "b.txt"]);
    a.ok(&["submit", "-d", "three"]);
    write(&a.cwd, "c.txt", "c4\n");
    a.ok(&["add", "c.txt"]);
    a.ok(&["submit", "-d", "four"]);

    b.ok(&["sync"]);
    assert_eq!(read(&b.cwd, "a.txt"), b"a2\n");
    assert!(b.cwd.join("c.txt").exists());
    b.ok(&["sync", "@rel"]);
    assert_eq!(read(&b.cwd, "a.txt"), b"a1\n");
    assert_eq!(read(&b.cwd, "b.txt"), b"b1\n");
    assert!(
        !b.cwd.join("c.txt").exists(),
        "files the label lacks are removed"
    );
    let have: Vec<(String, String)> = b
        .json(&["have"])
        .iter()
        .map(|r| (str_field(r, "depotFile"), str_field(r, "haveRev")))
        .collect();
    assert_eq!(
        have,
        pairs(&[("//depot/a.txt", "1"), ("//depot/b.txt", "1")])
    );
    b.ok(&["sync"]);
    assert_eq!(read(&b.cwd, "a.txt"), b"a2\n");
    assert!(!b.cwd.join("b.txt").exists());

    let files = a.json(&["files", "//depot/...@rel"]);
    assert_eq!(
        revs(&files),
        pairs(&[("//depot/a.txt", "1"), ("//depot/b.txt", "1")])
    );
    let fstat = a.json(&["fstat", "//depot/a.txt@rel"]);
    assert_eq!(str_field(&fstat[0], "headRev"), "1");
    let printed = fx.dir.path().join("a-at-rel.txt");
    a.ok(&[
        "print",
        "-o",
        printed.to_str().expect("utf-8"),
        "//depot/a.txt@rel",
    ]);
    assert_eq!(std::fs::read(&printed).expect("printed"), b"a1\n");
    assert_eq!(a.json(&["changes", "//depot/...@rel"]).len(), 1);
    let log = a.json(&["filelog", "//depot/a.txt@rel"]);
    assert_eq!(log.len(), 1);
    let d = a.json(&["diff2", "//depot/a.txt@rel", "//depot/a.txt"]);
    assert!(str_field(&d[0], "diff").contains("+a2"), "{d:?}");
    assert!(
        a.fail(&["files", "//depot/c.txt@rel"])
            .contains("no such file")
    );

    // #rev and @change select what is tagged; deleted revisions are not tagged.
    let tagged = a.json(&["tag", "-l", "rel", "//depot/a.txt#2"]);
    assert_eq!(actions(&tagged), pairs(&[("//depot/a.txt", "updated")]));
    let tagged = a.json(&["tag", "-l", "rel", "//depot/...@4"]);
    assert_eq!(actions(&tagged), pairs(&[("//depot/c.txt", "added")]));
    assert_eq!(
        revs(&a.json(&["files", "//depot/...@rel"])),
        pairs(&[
            ("//depot/a.txt", "2"),
            ("//depot/b.txt", "1"),
            ("//depot/c.txt", "1")
        ])
    );
    let untagged = a.json(&["tag", "-d", "-l", "rel", "//depot/b.txt"]);
    assert_eq!(revs(&untagged), pairs(&[("//depot/b.txt", "1")]));
    assert_eq!(a.json(&["files", "//depot/...@rel"]).len(), 2);
    // A preview changes nothing.
    let preview = a.json(&["tag", "-n", "-l", "rel", "//depot/a.txt#1"]);
    assert_eq!(actions(&preview), pairs(&[("//depot/a.txt", "updated")]));
    assert_eq!(
        str_field(&a.json(&["files", "//depot/a.txt@rel"])[0], "rev"),
        "2"
    );
    // Text output.
    assert_eq!(
        a.ok(&["tag", "-l", "rel", "//depot/a.txt#1"]).trim(),
        "//depot/a.txt#1 - updated"
    );

    // tag creates a missing label.
    a.ok(&["tag", "-l", "fresh", "//depot/a.txt"]);
    assert_eq!(
        str_field(&a.json(&["label", "show", "fresh"])[0], "Owner"),
        "alice"
    );

    // Unknown labels are named.
    for args in [
        &["files", "//depot/...@nosuch"][..],
        &["sync", "@nosuch"][..],
        &["changes", "//depot/...@nosuch"][..],
        &["labelsync", "-l", "nosuch"][..],
    ] {
        let err = b.fail(args);
        assert!(
            err.contains("nosuch") && err.contains("does not exist"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn labelsync_adds_updates_and_deletes() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/a.txt", "a1\n");
    write(&a.cwd, "main/b.txt", "b1\n");
    write(&a.cwd, "other/x.txt", "x1\n");
    a.ok(&["add", "main/a.txt", "main/b.txt", "other/x.txt"]);
    a.ok(&["submit", "-d", "one"]);
    a.ok(&["label", "create", "ls", "--view", "//depot/main/..."]);
    let synced = a.json(&["labelsync", "-l", "ls"]);
    assert_eq!(
        actions(&synced),
        pairs(&[
            ("//depot/main/a.txt", "added"),
            ("//depot/main/b.txt", "added")
        ])
    );

    a.ok(&["edit", "main/a.txt"]);
    write(&a.cwd, "main/a.txt", "a2\n");
    a.ok(&["submit", "-d", "two"]);
    a.ok(&["delete", "main/b.txt"]);
    a.ok(&["submit", "-d", "three"]);
    write(&a.cwd, "main/c.txt", "c1\n");
    a.ok(&["add", "main/c.txt"]);
    a.ok(&["submit", "-d", "four"]);

    let want = pairs(&[
        ("//depot/main/a.txt", "updated"),
        ("//depot/main/b.txt", "deleted"),
        ("//depot/main/c.txt", "added"),
    ]);
    let preview = a.json(&["labelsync", "-n", "-l", "ls"]);
    assert_eq!(actions(&preview), want);
    assert_eq!(
        revs(&a.json(&["files", "//depot/...@ls"])),
        pairs(&[("//depot/main/a.txt", "1"), ("//depot/main/b.txt", "1")]),
        "-n changes nothing"
    );
    let text = a.ok(&["labelsync", "-l", "ls"]);
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "//depot/main/a.txt#2 - updated",
            "//depot/main/b.txt#1 - deleted",
            "//depot/main/c.txt#1 - added"
        ]
    );
    assert_eq!(
        revs(&a.json(&["files", "//depot/...@ls"])),
        pairs(&[("//depot/main/a.txt", "2"), ("//depot/main/c.txt", "1")])
    );
    assert!(a.json(&["labelsync", "-l", "ls"]).is_empty(), "in sync");

    // tag ignores the View; labelsync removes what lies outside it.
    let tagged = a.json(&["tag", "-l", "ls", "//depot/other/x.txt"]);
    assert_eq!(actions(&tagged), pairs(&[("//depot/other/x.txt", "added")]));
    let synced = a.json(&["labelsync", "-l", "ls"]);
    assert_eq!(
        actions(&synced),
        pairs(&[("//depot/other/x.txt", "deleted")])
    );

    // File arguments limit labelsync, and select revisions; files outside the View are never
    // tagged by it.
    let synced = a.json(&["labelsync", "-l", "ls", "//depot/main/a.txt#1"]);
    assert_eq!(
        actions(&synced),
        pairs(&[("//depot/main/a.txt", "updated")])
    );
    assert!(
        a.json(&["labelsync", "-l", "ls", "//depot/other/..."])
            .is_empty()
    );
    let synced = a.json(&["labelsync", "-l", "ls", "//depot/...@1"]);
    assert_eq!(
        actions(&synced),
        pairs(&[
            ("//depot/main/b.txt", "added"),
            ("//depot/main/c.txt", "deleted"),
        ])
    );
    assert_eq!(
        revs(&a.json(&["files", "//depot/...@ls"])),
        pairs(&[("//depot/main/a.txt", "1"), ("//depot/main/b.txt", "1")])
    );
}

#[test]
fn automatic_labels_select_their_change_within_their_view() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/a.txt", "a1\n");
    write(&a.cwd, "other/x.txt", "x1\n");
    a.ok(&["add", "main/a.txt", "other/x.txt"]);
    a.ok(&["submit", "-d", "one"]);
    a.ok(&["edit", "main/a.txt"]);
    write(&a.cwd, "main/a.txt", "a2\n");
    a.ok(&["submit", "-d", "two"]);
    a.ok(&[
        "label",
        "create",
        "auto",
        "--revision",
        "@1",
        "--view",
        "//depot/main/...",
    ]);
    assert_eq!(
        str_field(&a.json(&["label", "show", "auto"])[0], "Revision"),
        "@1"
    );
    assert_eq!(
        revs(&a.json(&["files", "//depot/...@auto"])),
        pairs(&[("//depot/main/a.txt", "1")])
    );
    a.ok(&["sync", "@auto"]);
    assert_eq!(read(&a.cwd, "main/a.txt"), b"a1\n");
    assert!(!a.cwd.join("other/x.txt").exists());
    let err = a.fail(&["tag", "-l", "auto", "//depot/..."]);
    assert!(err.contains("auto") && err.contains("automatic"), "{err}");
    let err = a.fail(&["label", "create", "bad", "--revision", "42"]);
    assert!(err.contains("42"), "{err}");
}

#[test]
fn large_labels_cross_page_and_batch_boundaries() {
    // More files than one store page (1,000) and one label write batch (1,000 entries).
    const FILES: usize = 1_100;
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    let names: Vec<String> = (0..FILES).map(|i| format!("big/f{i:05}.txt")).collect();
    for name in &names {
        write(&a.cwd, name, format!("{name}\n"));
    }
    let mut add = vec!["add"];
    add.extend(names.iter().map(String::as_str));
    a.ok(&add);
    a.ok(&["submit", "-d", "many"]);
    a.ok(&["label", "create", "big", "--view", "//depot/big/..."]);
    assert_eq!(a.json(&["tag", "-l", "big", "//depot/..."]).len(), FILES);
    let labelled = a.json(&["files", "//depot/...@big"]);
    assert_eq!(labelled.len(), FILES);
    assert!(labelled.iter().all(|r| str_field(r, "rev") == "1"));

    // Change one file and drop one; labelsync touches only those two.
    a.ok(&["edit", &names[1050]]);
    write(&a.cwd, &names[1050], "changed\n");
    a.ok(&["delete", &names[7]]);
    a.ok(&["submit", "-d", "two"]);
    let synced = a.json(&["labelsync", "-l", "big"]);
    assert_eq!(
        actions(&synced),
        pairs(&[
            ("//depot/big/f00007.txt", "deleted"),
            ("//depot/big/f01050.txt", "updated"),
        ])
    );
    b.ok(&["sync", "-q", "@big"]);
    assert_eq!(b.json(&["have"]).len(), FILES - 1);
    assert_eq!(read(&b.cwd, &names[1050]), b"changed\n");
    assert_eq!(
        a.json(&["tag", "-d", "-l", "big", "//depot/big/..."]).len(),
        FILES - 1
    );
    assert!(
        a.fail(&["files", "//depot/...@big"])
            .contains("no such file")
    );
}
