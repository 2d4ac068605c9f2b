//! End-to-end: `+S2` keeps only the two newest revisions' content. Older revisions stay in
//! the history without content (print refuses them, saying why), their blobs are reclaimed,
//! while a branch made from an old revision keeps its own content; `+S` keeps only the head.

use crate::common::{Fixture, content_files, str_field, write};

#[test]
fn plus_s2_keeps_two_revisions_and_a_branch_keeps_its_own() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let version = |n: u32| format!("build output {n}\n");
    write(&a.cwd, "out/app.bin", version(1));
    a.ok(&["add", "-t", "binary+S2", "out/app.bin"]);
    a.ok(&["submit", "-d", "r1"]);
    // A branch of revision 1: a lazy copy of its content.
    a.ok(&["integrate", "//depot/out/app.bin", "//depot/keep/app.bin"]);
    a.ok(&["submit", "-d", "branch"]);
    for n in 2..=4 {
        a.ok(&["edit", "out/app.bin"]);
        write(&a.cwd, "out/app.bin", version(n));
        a.ok(&["submit", "-d", &format!("r{n}")]);
    }
    // Revisions 3 and 4 keep their content; 1 and 2 are purged but listed.
    let log = a.json(&["filelog", "//depot/out/app.bin"]);
    assert_eq!(log.len(), 4, "{log:?}");
    for rev in [3, 4] {
        let printed = a.ok(&["print", "-q", &format!("//depot/out/app.bin#{rev}")]);
        assert_eq!(printed, version(rev));
    }
    for rev in [1, 2] {
        let err = a.fail(&["print", "-q", &format!("//depot/out/app.bin#{rev}")]);
        assert!(err.contains("purged"), "#{rev}: {err}");
        let fstat = a.json(&["fstat", &format!("//depot/out/app.bin#{rev}")]);
        assert_eq!(str_field(&fstat[0], "headType"), "binary+S2");
    }
    // The branch still has revision 1's content, and syncs it.
    assert_eq!(a.ok(&["print", "-q", "//depot/keep/app.bin"]), version(1));
    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    assert_eq!(
        std::fs::read_to_string(b.cwd.join("keep/app.bin")).expect("read"),
        version(1)
    );
    assert_eq!(
        std::fs::read_to_string(b.cwd.join("out/app.bin")).expect("read"),
        version(4)
    );
    // Stored: revision 1's content (the branch owns it now), 3 and 4; 2's is gone.
    assert_eq!(content_files(&fx.server.root), 3);
}

#[test]
fn plus_s_keeps_only_the_head() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    write(&a.cwd, "tmp.obj", "one\n");
    a.ok(&["add", "-t", "tempobj", "tmp.obj"]);
    a.ok(&["submit", "-d", "r1"]);
    a.ok(&["edit", "tmp.obj"]);
    write(&a.cwd, "tmp.obj", "two\n");
    a.ok(&["submit", "-d", "r2"]);
    let fstat = a.json(&["fstat", "//depot/tmp.obj"]);
    assert_eq!(str_field(&fstat[0], "headType"), "binary+wS");
    assert_eq!(a.ok(&["print", "-q", "//depot/tmp.obj"]), "two\n");
    let err = a.fail(&["print", "-q", "//depot/tmp.obj#1"]);
    assert!(err.contains("purged"), "{err}");
    assert_eq!(content_files(&fx.server.root), 1);
    // A sync to the purged revision is refused for that file, naming it.
    let b = fx.workspace("bob", "b");
    let out = b.run(&["sync", "//depot/tmp.obj#1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "synced a purged revision");
    assert!(err.contains("//depot/tmp.obj#1"), "{err}");
}
