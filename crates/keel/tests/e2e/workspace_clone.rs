//! End-to-end: `workspace clone` makes a synced workspace's twin without copying bytes (issue
//! 31): the server copies view, options and have list in one call; the client shares the
//! source's read-only files (reflinks where the file system has them, else hard links), copies
//! writable ones, and takes files opened or changed in the source from the server at their have
//! revision. Editing and submitting in the clone never changes the source's files, and a clone
//! holds only files its user may read.

use crate::common::{Client, Fixture, field, read, str_field, write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The inode of a file (two names of one file share it).
fn inode(path: &Path) -> u64 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .ino()
}

/// Whether `a` and `b` share their blocks without one being written: the same inode (a hard
/// link), or, on a file system with reflinks, separate inodes with equal content.
fn shared_or_reflinked(a: &Path, b: &Path, record: &serde_json::Value) -> bool {
    if field(record, "reflinked").as_u64().unwrap_or(0) > 0 {
        inode(a) != inode(b) && std::fs::read(a).ok() == std::fs::read(b).ok()
    } else {
        inode(a) == inode(b)
    }
}

/// A source workspace with three tracked files, a symlink, one opened and edited file and a
/// build output the depot does not track.
fn source(fx: &Fixture) -> Client {
    let src = fx.workspace("alice", "src");
    write(&src.cwd, "a.txt", "a\n");
    write(&src.cwd, "dir/b.txt", "b\n");
    write(&src.cwd, "c.txt", "c\n");
    std::os::unix::fs::symlink("a.txt", src.cwd.join("link")).expect("symlink");
    src.ok(&["add", "a.txt", "dir/b.txt", "c.txt", "link"]);
    src.ok(&["submit", "-d", "first"]);
    src.ok(&["edit", "c.txt"]);
    write(&src.cwd, "c.txt", "alice's edit\n");
    write(&src.cwd, "out/app.o", "built\n");
    src
}

/// The clone's client: the same user, acting through the new workspace in its root.
fn clone_client(src: &Client, name: &str, root: &Path) -> Client {
    Client {
        workspace: name.to_string(),
        cwd: root.to_path_buf(),
        ..src.clone()
    }
}

#[test]
fn a_clone_shares_read_only_files_and_never_takes_the_sources_edits() {
    let fx = Fixture::new();
    let src = source(&fx);
    let root = fx.dir.path().join("clone");
    let made = src.json(&[
        "workspace",
        "clone",
        "src",
        "ci-1",
        "--root",
        root.to_str().unwrap(),
    ]);
    let record = &made[0];
    assert_eq!(field(record, "files").as_u64(), Some(4), "{record}");
    // The edited, opened file comes from the server; the symlink is made anew.
    assert_eq!(field(record, "fetched").as_u64(), Some(1), "{record}");
    assert_eq!(field(record, "symlinks").as_u64(), Some(1), "{record}");
    assert_eq!(read(&root, "c.txt"), b"c\n");
    assert_eq!(
        std::fs::read_link(root.join("link")).unwrap(),
        Path::new("a.txt")
    );
    for rel in ["a.txt", "dir/b.txt"] {
        assert!(
            shared_or_reflinked(&src.cwd.join(rel), &root.join(rel), record),
            "{rel}: {record}"
        );
        assert!(
            std::fs::metadata(root.join(rel))
                .unwrap()
                .permissions()
                .readonly()
        );
    }
    // Untracked files stay behind unless asked for.
    assert!(!root.join("out/app.o").exists());

    // The clone is a workspace of its own, with the source's have list and view.
    let ci = clone_client(&src, "ci-1", &root);
    let spec = ci.json(&["workspace", "show", "ci-1"]);
    assert_eq!(str_field(&spec[0], "View0"), "//depot/... //ci-1/...");
    assert_eq!(str_field(&spec[0], "Owner"), "alice");
    let have: Vec<String> = ci
        .json(&["have"])
        .iter()
        .map(|r| format!("{}#{}", str_field(r, "depotFile"), field(r, "haveRev")))
        .collect();
    assert_eq!(have.len(), 4, "{have:?}");
    assert!(ci.json(&["status"]).is_empty(), "a fresh clone is clean");

    // An edit and a submit in the clone leave the source's file as it was.
    let before = inode(&src.cwd.join("a.txt"));
    ci.ok(&["edit", "a.txt"]);
    write(&root, "a.txt", "changed in the clone\n");
    ci.ok(&["submit", "-d", "from the clone"]);
    assert_eq!(read(&src.cwd, "a.txt"), b"a\n");
    assert_eq!(inode(&src.cwd.join("a.txt")), before);
    assert!(
        std::fs::metadata(src.cwd.join("a.txt"))
            .unwrap()
            .permissions()
            .readonly()
    );
    assert_eq!(read(&src.cwd, "c.txt"), b"alice's edit\n");

    // Deleting the clone (spec and files) touches nothing of the source.
    ci.ok(&["workspace", "delete", "ci-1"]);
    std::fs::remove_dir_all(&root).expect("remove the clone");
    assert_eq!(read(&src.cwd, "a.txt"), b"a\n");
    assert_eq!(read(&src.cwd, "dir/b.txt"), b"b\n");
}

#[test]
fn untracked_files_come_along_when_asked_and_are_never_linked() {
    let fx = Fixture::new();
    let src = source(&fx);
    let root = fx.dir.path().join("built");
    let made = src.json(&[
        "workspace",
        "clone",
        "src",
        "ci-2",
        "--root",
        root.to_str().unwrap(),
        "--with-untracked",
    ]);
    assert_eq!(
        field(&made[0], "untracked").as_u64(),
        Some(1),
        "{}",
        made[0]
    );
    assert_eq!(read(&root, "out/app.o"), b"built\n");
    // A build output is written in place by the tools that make it: a private copy (or reflink).
    assert_ne!(
        inode(&src.cwd.join("out/app.o")),
        inode(&root.join("out/app.o"))
    );
    write(&root, "out/app.o", "rebuilt\n");
    assert_eq!(read(&src.cwd, "out/app.o"), b"built\n");
}

#[test]
fn an_allwrite_workspace_is_cloned_by_copy_and_checked_against_its_have_list() {
    let fx = Fixture::new();
    let src = fx.workspace("alice", "src");
    write(&src.cwd, "a.txt", "a\n");
    write(&src.cwd, "b.txt", "b\n");
    src.ok(&["add", "a.txt", "b.txt"]);
    src.ok(&["submit", "-d", "first"]);
    let root = src.cwd.to_str().unwrap().to_string();
    src.ok(&[
        "workspace",
        "create",
        "src",
        "--root",
        &root,
        "--options",
        "allwrite noclobber",
    ]);
    src.ok(&["sync", "-f"]);
    // Edited without `edit`, as an allwrite workspace allows: never taken into the clone.
    write(&src.cwd, "b.txt", "edited in place\n");
    let clone_root = fx.dir.path().join("aw");
    let made = src.json(&[
        "workspace",
        "clone",
        "src",
        "aw",
        "--root",
        clone_root.to_str().unwrap(),
    ]);
    let record = &made[0];
    assert_eq!(field(record, "hardLinked").as_u64(), Some(0), "{record}");
    assert_eq!(field(record, "fetched").as_u64(), Some(1), "{record}");
    assert_eq!(read(&clone_root, "b.txt"), b"b\n");
    for rel in ["a.txt", "b.txt"] {
        assert_ne!(inode(&src.cwd.join(rel)), inode(&clone_root.join(rel)));
        assert!(
            !std::fs::metadata(clone_root.join(rel))
                .unwrap()
                .permissions()
                .readonly()
        );
    }
    write(&clone_root, "a.txt", "clone's own\n");
    assert_eq!(read(&src.cwd, "a.txt"), b"a\n");
}

#[test]
fn bad_clones_are_refused_and_leave_nothing() {
    let fx = Fixture::new();
    let src = source(&fx);
    let dir = fx.dir.path();
    // An existing workspace name.
    let taken = dir.join("taken");
    let err = src.fail(&[
        "workspace",
        "clone",
        "src",
        "src",
        "--root",
        taken.to_str().unwrap(),
    ]);
    assert!(err.contains("src"), "{err}");
    // A root that holds files.
    let full = dir.join("full");
    write(&full, "mine.txt", "keep\n");
    let err = src.fail(&[
        "workspace",
        "clone",
        "src",
        "ci-x",
        "--root",
        full.to_str().unwrap(),
    ]);
    assert!(err.contains("is not empty"), "{err}");
    assert_eq!(read(&full, "mine.txt"), b"keep\n");
    // A root inside the source's root.
    let inside = src.cwd.join("nested");
    let err = src.fail(&[
        "workspace",
        "clone",
        "src",
        "ci-y",
        "--root",
        inside.to_str().unwrap(),
    ]);
    assert!(err.contains("must not contain one another"), "{err}");
    // A source that does not exist.
    let err = src.fail(&[
        "workspace",
        "clone",
        "nosuch",
        "ci-z",
        "--root",
        taken.to_str().unwrap(),
    ]);
    assert!(err.contains("nosuch"), "{err}");
    let names: Vec<String> = src
        .json(&["workspace", "list"])
        .iter()
        .map(|w| str_field(w, "name"))
        .collect();
    assert_eq!(names, vec!["src"], "no workspace was left behind");
}

#[test]
fn a_clone_holds_only_files_its_user_may_read() {
    let fx = Fixture::new();
    let admin = fx.server.client("admin", "", fx.dir.path());
    let src = fx.workspace("alice", "src");
    write(&src.cwd, "pub/a.txt", "a\n");
    write(&src.cwd, "secret/s.txt", "s\n");
    src.ok(&["add", "pub/a.txt", "secret/s.txt"]);
    src.ok(&["submit", "-d", "first"]);
    let form = "Protections:\n\tsuper user admin * //...\n\twrite user alice * //...\n\twrite user carol * //depot/pub/...\n";
    let out = admin.run_stdin(&["protect", "-i"], form);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let carol = Client {
        user: "carol".into(),
        workspace: String::new(),
        ..src.clone()
    };
    let root = fx.dir.path().join("carols");
    let made = carol.json(&[
        "workspace",
        "clone",
        "src",
        "carol-ci",
        "--root",
        root.to_str().unwrap(),
    ]);
    assert_eq!(field(&made[0], "files").as_u64(), Some(1), "{}", made[0]);
    assert!(root.join("pub/a.txt").exists());
    assert!(!root.join("secret").exists());
}
