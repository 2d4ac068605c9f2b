//! End-to-end: `grep` searches stored revisions on the server: matching lines as P4 prints
//! them (`//depot/a#3:12:line`), context, `-v`, `-l`/`-L`, `-a` over a range, binary files
//! skipped unless `-t`, and its refusals (a bad pattern, no pattern, no such files, a user
//! without read access).

use crate::access::protect;
use crate::common::{Fixture, str_field, write};

#[test]
fn grep_prints_matching_lines_with_context_and_revisions() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "src/a.c", "int main() {\n  return 0;\n}\n");
    write(
        &a.cwd,
        "src/b.c",
        "void helper();\n// TODO: fix\nint x;\nint y;\n",
    );
    write(&a.cwd, "src/blob.bin", "main\0main\n");
    a.ok(&["add", "src/a.c", "src/b.c"]);
    a.ok(&["add", "-t", "binary", "src/blob.bin"]);
    a.ok(&["submit", "-d", "first"]); // 1
    a.ok(&["edit", "src/a.c"]);
    write(
        &a.cwd,
        "src/a.c",
        "int main() {\n  helper();\n  return 1;\n}\n",
    );
    a.ok(&["submit", "-d", "second"]); // 2

    assert_eq!(
        a.ok(&["grep", "-s", "-n", "-e", "main", "//depot/src/..."]),
        "//depot/src/a.c#2:1:int main() {\n"
    );
    assert_eq!(
        a.ok(&["grep", "-e", "HELPER", "-i", "//depot/src/..."]),
        "//depot/src/a.c#2:  helper();\n//depot/src/b.c#1:void helper();\n"
    );
    // Context lines use `-`, separate groups are split by `--`.
    assert_eq!(
        a.ok(&[
            "grep",
            "-n",
            "-C",
            "1",
            "-e",
            "TODO",
            "-e",
            "^int y",
            "//depot/src/b.c"
        ]),
        "//depot/src/b.c#1-1-void helper();\n//depot/src/b.c#1:2:// TODO: fix\n\
         //depot/src/b.c#1-3-int x;\n//depot/src/b.c#1:4:int y;\n"
    );
    assert_eq!(
        a.ok(&["grep", "-n", "-A", "1", "-e", "^int", "//depot/src/a.c#1"]),
        "//depot/src/a.c#1:1:int main() {\n//depot/src/a.c#1-2-  return 0;\n"
    );
    assert_eq!(
        a.ok(&["grep", "-v", "-e", "[{}]", "//depot/src/a.c"]),
        "//depot/src/a.c#2:  helper();\n//depot/src/a.c#2:  return 1;\n"
    );
    // -a: every revision in the range, newest first; without it only the highest.
    assert_eq!(
        a.ok(&["grep", "-a", "-e", "return", "//depot/src/a.c"]),
        "//depot/src/a.c#2:  return 1;\n//depot/src/a.c#1:  return 0;\n"
    );
    assert_eq!(
        a.ok(&["grep", "-e", "return", "//depot/src/a.c#1,#1"]),
        "//depot/src/a.c#1:  return 0;\n"
    );
    assert_eq!(
        a.ok(&["grep", "-l", "-e", "helper", "//depot/src/....c"]),
        "//depot/src/a.c#2\n//depot/src/b.c#1\n"
    );
    assert_eq!(
        a.ok(&["grep", "-L", "-e", "TODO", "//depot/src/....c"]),
        "//depot/src/a.c#2\n"
    );
    // Binary files are skipped, with a warning unless -s; -t searches them.
    let out = a.run(&["grep", "-e", "main", "//depot/src/blob.bin"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).is_empty());
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(
        warning.contains("//depot/src/blob.bin#1 - binary file skipped"),
        "{warning}"
    );
    let found = a.json(&["grep", "-t", "-n", "-e", "main", "//depot/src/blob.bin"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(str_field(&found[0], "depotFile"), "//depot/src/blob.bin");
    assert_eq!(str_field(&found[0], "rev"), "1");
    assert_eq!(str_field(&found[0], "line"), "1");
    assert_eq!(str_field(&found[0], "type"), "match");
    // A workspace path works as a file argument too.
    assert_eq!(
        a.ok(&["grep", "-e", "TODO", "src/b.c"]),
        "//depot/src/b.c#1:// TODO: fix\n"
    );
}

#[test]
fn grep_refuses_bad_patterns_missing_files_and_users_without_read() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "open/a.txt", "secret sauce\n");
    write(&a.cwd, "hidden/b.txt", "secret plan\n");
    a.ok(&["add", "open/a.txt", "hidden/b.txt"]);
    a.ok(&["submit", "-d", "files"]);

    let err = a.fail(&["grep", "-e", "ok", "-e", "sec(ret", "//depot/..."]);
    assert!(err.contains("bad pattern 'sec(ret'"), "{err}");
    let err = a.fail(&["grep", "-e", "", "//depot/..."]);
    assert!(err.contains("empty pattern"), "{err}");
    let err = a.fail(&["grep", "//depot/..."]);
    assert!(err.contains("-e"), "{err}");
    let err = a.fail(&["grep", "-e", "x", "//depot/nothing/..."]);
    assert!(err.contains("//depot/nothing/..."), "{err}");
    let err = a.fail(&["grep", "-e", "x", "//depot/open/a.txt#3,#1"]);
    assert!(err.contains("//depot/open/a.txt"), "{err}");

    // Bob may list the hidden file but not read it: his grep is refused; with only the
    // open tree readable he finds what he may read.
    protect(
        &a,
        &[
            "read user bob * //depot/open/...",
            "list user bob * //depot/hidden/...",
            "super user alice * //...",
        ],
    );
    let bob = fx.server.client("bob", "", fx.dir.path());
    assert_eq!(
        bob.ok(&["grep", "-e", "secret", "//depot/open/..."]),
        "//depot/open/a.txt#1:secret sauce\n"
    );
    let err = bob.fail(&["grep", "-e", "secret", "//depot/hidden/..."]);
    assert!(err.contains("//depot/hidden/b.txt"), "{err}");
    // A user with no access at all is refused before anything is read.
    protect(
        &a,
        &[
            "read user bob * //depot/open/...",
            "super user alice * //...",
        ],
    );
    let carol = fx.server.client("carol", "", fx.dir.path());
    let err = carol.fail(&["grep", "-e", "secret", "//depot/..."]);
    assert!(
        err.contains("protect") || err.contains("permission"),
        "{err}"
    );
}
