//! End-to-end: `populate` branches files into the depot as one submitted change without a
//! workspace: lazy copies (no content written), `branch from` records, `-b` branch specs,
//! `-n` preview, `-f` for deleted sources, and its refusals (an existing target, no such
//! files, bad arguments, a user without write on the targets), each leaving nothing behind.

use crate::access::protect;
use crate::common::{Fixture, content_files, str_field, write};

#[test]
fn populate_branches_into_the_depot_as_one_change() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/a.txt", "alpha\n");
    write(&a.cwd, "main/b/c.txt", "gamma\n");
    write(&a.cwd, "main/gone.txt", "old\n");
    a.ok(&["add", "main/..."]);
    a.ok(&["submit", "-d", "main line"]); // 1
    a.ok(&["delete", "main/gone.txt"]);
    a.ok(&["submit", "-d", "gone"]); // 2
    let blobs = content_files(&fx.server.root);

    // A preview writes nothing.
    let preview = a.ok(&["populate", "-n", "//depot/main/...", "//depot/rel/..."]);
    assert!(
        preview.contains("//depot/rel/a.txt#1 - branch from //depot/main/a.txt#1"),
        "{preview}"
    );
    assert!(preview.contains("2 files would be branched"), "{preview}");
    let err = a.fail(&["files", "//depot/rel/..."]);
    assert!(err.contains("no such file"), "{err}");

    // Bob, without a workspace, populates: one submitted change, lazy copies, history.
    let bob = fx.server.client("bob", "", fx.dir.path());
    assert_eq!(
        bob.ok(&[
            "populate",
            "-d",
            "release 1",
            "//depot/main/...",
            "//depot/rel/..."
        ]),
        "2 files branched (change 3).\n"
    );
    assert_eq!(
        content_files(&fx.server.root),
        blobs,
        "a populate writes no content"
    );
    let change = a.json(&["describe", "-s", "3"]);
    assert_eq!(str_field(&change[0], "user"), "bob");
    assert_eq!(str_field(&change[0], "status"), "submitted");
    assert!(
        str_field(&change[0], "desc").starts_with("release 1"),
        "{change:?}"
    );
    let fstat = a.json(&["fstat", "//depot/rel/a.txt"]);
    assert_eq!(str_field(&fstat[0], "headAction"), "branch");
    assert_eq!(str_field(&fstat[0], "headChange"), "3");
    let integ = a.json(&["integrated", "//depot/rel/b/c.txt"]);
    assert_eq!(str_field(&integ[0], "how"), "branch from");
    assert_eq!(str_field(&integ[0], "fromFile"), "//depot/main/b/c.txt");
    let back = a.json(&["integrated", "//depot/main/a.txt"]);
    assert_eq!(str_field(&back[0], "how"), "branch into");
    assert_eq!(a.ok(&["print", "-q", "//depot/rel/b/c.txt"]), "gamma\n");
    // Already integrated, as integrate + submit would have left it.
    let err = a.fail(&["integrate", "-n", "//depot/main/...", "//depot/rel/..."]);
    assert!(err.contains("already integrated"), "{err}");

    // An existing target refuses the whole populate and creates no change.
    let err = bob.fail(&["populate", "//depot/main/...", "//depot/rel/..."]);
    assert!(err.contains("//depot/rel/a.txt - can't populate"), "{err}");
    assert_eq!(a.json(&["changes"]).len(), 3);

    // -b with a branch spec, -o lists the files, -f branches the deleted file too.
    a.ok(&[
        "branch",
        "create",
        "br",
        "--view",
        "//depot/main/... //depot/dev/...",
    ]);
    let listed = a.ok(&["populate", "-o", "-f", "-b", "br"]);
    assert!(
        listed.contains("//depot/dev/gone.txt#1 - delete from //depot/main/gone.txt#2"),
        "{listed}"
    );
    assert!(listed.contains("3 files branched (change 4)."), "{listed}");
    let gone = a.json(&["fstat", "//depot/dev/gone.txt"]);
    assert_eq!(str_field(&gone[0], "headAction"), "delete");
    // -r branches the other way, limited to target files.
    a.ok(&[
        "branch",
        "create",
        "back",
        "--view",
        "//depot/hot/... //depot/main/...",
    ]);
    let out = a.ok(&["populate", "-r", "-b", "back", "//depot/hot/a.txt"]);
    assert_eq!(out, "1 files branched (change 5).\n");
    assert_eq!(a.ok(&["print", "-q", "//depot/hot/a.txt"]), "alpha\n");
}

#[test]
fn populate_refuses_bad_input_and_users_without_write() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/a.txt", "alpha\n");
    a.ok(&["add", "main/a.txt"]);
    a.ok(&["submit", "-d", "main"]);

    let err = a.fail(&["populate", "//depot/main/..."]);
    assert!(err.contains("FROMFILE TOFILE"), "{err}");
    let err = a.fail(&["populate", "//depot/nothing/...", "//depot/rel/..."]);
    assert!(err.contains("//depot/nothing/... - no such file"), "{err}");
    let err = a.fail(&["populate", "//depot/main/...", "//depot/rel/*"]);
    assert!(err.contains("//depot/main/..."), "{err}");
    let err = a.fail(&["populate", "//depot/main/...", "//depot/rel/...#3"]);
    assert!(err.contains("can't carry a revision"), "{err}");
    let err = a.fail(&["populate", "-b", "nosuch"]);
    assert!(err.contains("branch 'nosuch' does not exist"), "{err}");
    let err = a.fail(&["populate", "-d", " ", "//depot/main/...", "//depot/rel/..."]);
    assert!(err.contains("-d"), "{err}");

    // Bob may read main but only open (not submit) under rel: refused, nothing written.
    protect(
        &a,
        &[
            "read user bob * //depot/main/...",
            "list user bob * //depot/listed/...",
            "open user bob * //depot/rel/...",
            "write user bob * //depot/ok/...",
            "super user alice * //...",
        ],
    );
    let bob = fx.server.client("bob", "", fx.dir.path());
    let err = bob.fail(&["populate", "//depot/main/...", "//depot/rel/..."]);
    assert!(err.contains("//depot/rel/a.txt"), "{err}");
    assert_eq!(a.json(&["changes"]).len(), 1);
    // List is not read: bob cannot branch from what he may only list.
    a.ok(&["populate", "//depot/main/...", "//depot/listed/..."]); // 2
    let err = bob.fail(&["populate", "//depot/listed/...", "//depot/ok/..."]);
    assert!(err.contains("//depot/listed/a.txt"), "{err}");
    assert_eq!(a.json(&["changes"]).len(), 2);
    // With read on the source and write on the target he may.
    assert_eq!(
        bob.ok(&["populate", "//depot/main/...", "//depot/ok/..."]),
        "1 files branched (change 3).\n"
    );
}

/// `sizes -z` counts each stored content once: a populated (lazy-copied) branch adds nothing.
#[test]
fn sizes_z_counts_lazy_copies_once() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/a.txt", "x".repeat(100));
    write(&a.cwd, "main/b.txt", "y".repeat(40));
    a.ok(&["add", "main/..."]);
    a.ok(&["submit", "-d", "main"]);
    a.ok(&["populate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["sync"]);
    a.ok(&["edit", "rel/b.txt"]);
    write(&a.cwd, "rel/b.txt", "z".repeat(7));
    a.ok(&["submit", "-d", "change rel"]);

    assert_eq!(
        a.ok(&["sizes", "-s", "//depot/..."]),
        "//depot/... 4 files 247 bytes\n"
    );
    // The copies of a.txt and b.txt#1 share their sources' content.
    assert_eq!(
        a.ok(&["sizes", "-s", "-z", "//depot/..."]),
        "//depot/... 3 files 147 bytes\n"
    );
    assert_eq!(
        a.ok(&["sizes", "-s", "-a", "-z", "//depot/..."]),
        "//depot/... 3 files 147 bytes\n"
    );
    assert_eq!(
        a.ok(&["sizes", "-s", "-a", "//depot/..."]),
        "//depot/... 5 files 287 bytes\n"
    );
    let per_file = a.json(&["sizes", "-z", "//depot/..."]);
    let listed: Vec<String> = per_file.iter().map(|r| str_field(r, "depotFile")).collect();
    assert_eq!(
        listed,
        [
            "//depot/main/a.txt",
            "//depot/main/b.txt",
            "//depot/rel/b.txt"
        ]
    );
}
