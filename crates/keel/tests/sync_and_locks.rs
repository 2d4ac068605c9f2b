//! End-to-end: sync flags, views, exclusive locks and out-of-date submits.

mod common;

use common::{Fixture, read, str_field, write};

fn seeded() -> (Fixture, common::Client, common::Client) {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    write(&a.cwd, "src/main.c", "int main;\n");
    write(&a.cwd, "src/util.c", "int util;\n");
    write(&a.cwd, "docs/readme.md", "# hi\n");
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "seed"]);
    (fx, a, b)
}

#[test]
fn sync_preview_have_only_and_populate() {
    let (_fx, _a, b) = seeded();
    let preview = b.json(&["sync", "-n"]);
    assert_eq!(preview.len(), 3);
    assert!(!b.cwd.join("src/main.c").exists(), "-n writes nothing");
    assert!(b.json(&["have"]).is_empty(), "-n records nothing");

    b.ok(&["sync", "-k", "//depot/docs/..."]);
    assert!(!b.cwd.join("docs/readme.md").exists(), "-k writes nothing");
    assert_eq!(b.json(&["have"]).len(), 1, "-k records the have list");

    b.ok(&["sync", "-p", "//depot/src/..."]);
    assert_eq!(read(&b.cwd, "src/main.c"), b"int main;\n");
    assert_eq!(b.json(&["have"]).len(), 1, "-p records no have list");

    b.ok(&["sync", "-f", "//depot/docs/..."]);
    assert_eq!(read(&b.cwd, "docs/readme.md"), b"# hi\n");
}

#[test]
fn sync_refuses_to_clobber_writable_files_unless_told() {
    let (_fx, a, b) = seeded();
    b.ok(&["sync"]);
    a.ok(&["edit", "src/main.c"]);
    write(&a.cwd, "src/main.c", "int main2;\n");
    a.ok(&["submit", "-d", "v2"]);
    // Bob makes his copy writable without opening it and scribbles on it.
    let path = b.cwd.join("src/main.c");
    let mut perms = std::fs::metadata(&path).expect("stat").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).expect("chmod");
    write(&b.cwd, "src/main.c", "local scribbles\n");
    let err = b.fail(&["sync"]);
    assert!(err.contains("clobber"), "{err}");
    assert_eq!(
        read(&b.cwd, "src/main.c"),
        b"local scribbles\n",
        "nothing lost"
    );
    b.ok(&["sync", "-f"]);
    assert_eq!(read(&b.cwd, "src/main.c"), b"int main2;\n");
}

#[test]
fn views_exclude_and_remap() {
    let (fx, _a, _b) = seeded();
    let root = fx.dir.path().join("narrow");
    std::fs::create_dir_all(&root).expect("root");
    let c = fx.server.client("carol", "narrow", &root);
    c.ok(&[
        "workspace",
        "create",
        "narrow",
        "--root",
        root.to_str().expect("utf-8"),
        "--view",
        "//depot/src/... //narrow/code/...",
        "--view",
        "-//depot/src/util.c //narrow/code/util.c",
    ]);
    c.ok(&["sync"]);
    assert_eq!(read(&root, "code/main.c"), b"int main;\n");
    assert!(!root.join("code/util.c").exists());
    assert!(!root.join("docs").exists());
    let wh = c.ok(&["where", "//depot/src/main.c"]);
    assert!(wh.contains("//narrow/code/main.c"), "{wh}");
    // Leaving the view removes files on the next sync.
    c.ok(&[
        "workspace",
        "create",
        "narrow",
        "--root",
        root.to_str().expect("utf-8"),
        "--view",
        "//depot/docs/... //narrow/docs/...",
    ]);
    c.ok(&["sync"]);
    assert!(!root.join("code/main.c").exists());
    assert_eq!(read(&root, "docs/readme.md"), b"# hi\n");
}

#[test]
fn exclusive_open_names_the_holder() {
    let (_fx, a, b) = seeded();
    write(&a.cwd, "art/hero.psd", [0u8, 159, 146, 150]);
    a.ok(&["add", "-t", "binary+l", "art/hero.psd"]);
    a.ok(&["submit", "-d", "art"]);
    b.ok(&["sync"]);
    a.ok(&["edit", "art/hero.psd"]);
    let err = b.fail(&["edit", "art/hero.psd"]);
    assert!(err.contains("alice@a"), "{err}");
    assert!(b.json(&["opened"]).is_empty(), "nothing opened");
    a.ok(&["revert", "art/hero.psd"]);
    b.ok(&["edit", "art/hero.psd"]);
}

#[test]
fn out_of_date_submit_is_refused_and_nothing_changes() {
    let (_fx, a, b) = seeded();
    b.ok(&["sync"]);
    a.ok(&["edit", "src/util.c"]);
    b.ok(&["edit", "src/util.c"]);
    write(&a.cwd, "src/util.c", "alice\n");
    a.ok(&["submit", "-d", "alice wins"]);
    write(&b.cwd, "src/util.c", "bob\n");
    let err = b.fail(&["submit", "-d", "bob loses"]);
    assert!(
        err.contains("//depot/util.c") || err.contains("//depot/src/util.c"),
        "{err}"
    );
    assert!(err.contains("sync"), "{err}");
    assert_eq!(b.json(&["opened"]).len(), 1, "still opened");
    assert_eq!(a.json(&["changes"]).len(), 2);
    let heads = a.json(&["fstat", "//depot/src/util.c"]);
    assert_eq!(str_field(&heads[0], "headRev"), "2");
}

#[test]
fn empty_submit_is_refused() {
    let (_fx, a, _b) = seeded();
    let err = a.fail(&["submit", "-d", "nothing"]);
    assert!(err.contains("No files to submit"), "{err}");
}
