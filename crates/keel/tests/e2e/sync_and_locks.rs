//! End-to-end: sync flags, views, exclusive locks and out-of-date submits.

use crate::common::{Fixture, bytes, read, str_field, write};

fn seeded() -> (Fixture, crate::common::Client, crate::common::Client) {
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

/// Content of file `i` in the many-files tests: mostly small text, some random (stored raw),
/// one compressible file spanning several wire chunks.
fn many_content(i: usize) -> Vec<u8> {
    match i {
        0 => b"line of a large compressible file\n".repeat(40_000),
        1 => bytes(1, 700_000),
        i if i % 7 == 0 => bytes(i as u64, 100 + i * 13),
        i => format!("file {i}\n").repeat(i % 50 + 1).into_bytes(),
    }
}

#[test]
fn sync_of_many_files_into_an_empty_workspace_writes_and_records_each() {
    const FILES: usize = 300;
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let b = fx.workspace("bob", "b");
    let rel = |i: usize| format!("d{}/e{}/f{i:03}.txt", i % 4, i % 3);
    for i in 0..FILES {
        write(&a.cwd, &rel(i), many_content(i));
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "many"]);

    let synced = b.json(&["sync"]);
    assert_eq!(synced.len(), FILES, "every file reported once");
    let reported: Vec<String> = synced.iter().map(|r| str_field(r, "depotFile")).collect();
    let mut sorted = reported.clone();
    sorted.sort();
    assert_eq!(reported, sorted, "reported in the server's order");
    for i in 0..FILES {
        assert_eq!(read(&b.cwd, &rel(i)), many_content(i), "{}", rel(i));
    }
    let have = b.json(&["have"]);
    assert_eq!(have.len(), FILES, "every file in the have list");
    let leftovers = walk_names(&b.cwd)
        .into_iter()
        .filter(|n| n.starts_with(".keel-tmp"))
        .count();
    assert_eq!(leftovers, 0, "no temp files left");
    assert!(b.json(&["sync"]).is_empty(), "nothing left to sync");
}

/// Every file and directory name under `dir`.
fn walk_names(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("entry");
        out.push(entry.file_name().to_string_lossy().into_owned());
        if entry.file_type().expect("type").is_dir() {
            out.extend(walk_names(&entry.path()));
        }
    }
    out
}

#[test]
fn sync_never_writes_through_a_symlink_it_just_created() {
    // The server sends the link first, then a file whose local path runs through it.
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let outside = fx.dir.path().join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::create_dir_all(a.cwd.join("a")).expect("mkdir");
    std::os::unix::fs::symlink(&outside, a.cwd.join("a/link")).expect("symlink");
    for i in 0..20 {
        write(&a.cwd, &format!("b/x{i}"), "payload\n");
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "link and files"]);
    let b = fx.workspace_with_view(
        "bob",
        "b",
        &["//depot/a/link //b/link", "//depot/b/... //b/link/..."],
    );
    let err = b.fail(&["sync"]);
    assert!(err.contains("refusing"), "{err}");
    assert_eq!(
        std::fs::read_link(b.cwd.join("link")).expect("link"),
        outside
    );
    assert_eq!(
        std::fs::read_dir(&outside).expect("outside").count(),
        0,
        "nothing written outside the root"
    );
    let have = b.json(&["have"]);
    assert_eq!(have.len(), 1, "only the link is recorded: {have:?}");
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

#[test]
fn refusals_end_with_the_command_line_hint() {
    let (_fx, a, b) = seeded();
    // The server says what is wrong; the CLI adds what to do, from the refusal's reason.
    let err = b.fail(&["edit", "//depot/src/util.c"]);
    assert!(
        err.contains("//depot/src/util.c - file(s) not on client; sync first"),
        "{err}"
    );
    let err = a.fail(&["add", "src/util.c"]);
    assert!(
        err.contains("//depot/src/util.c - can't add existing file (head #1); use edit"),
        "{err}"
    );
    let err = a.fail(&["--json", "add", "src/util.c"]);
    assert!(
        err.contains(r#""error":"#) && err.contains("use edit"),
        "{err}"
    );
}
