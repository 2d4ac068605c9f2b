//! P4 clients' `istat` (a branch spec in a stream's place: its source side is the parent),
//! `prune [-y]`, `print -a` and `fstat -F` through P4Python, tagged and untagged, with the
//! refusals for bad usage, a filter that does not parse and a user without admin. Content is
//! set up with the native CLI.

use crate::common::write;
use crate::p4_harness::{P4Server, ok, raised};
use serde_json::json;

#[test]
fn istat_and_prune_through_p4python() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    write(&root, "main/a.c", "one\n");
    write(&root, "main/b.c", "bee\n");
    a.ok(&["add", "main/..."]);
    a.ok(&["submit", "-d", "first"]); // 1
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch rel"]); // 2
    a.ok(&[
        "branch",
        "create",
        "rel",
        "--view",
        "//depot/main/... //depot/rel/...",
    ]);
    a.ok(&["edit", "main/a.c"]);
    write(&root, "main/a.c", "two\n");
    a.ok(&["submit", "-d", "fix a"]); // 3
    a.ok(&["sync"]);
    a.ok(&["edit", "rel/a.c"]);
    write(&root, "rel/a.c", "rel\n");
    a.ok(&["submit", "-d", "rel work"]); // 4
    crate::access::protect(
        &a,
        &["super user alice * //...", "write user carol * //..."],
    );

    let r = s.drive(&[
        json!({"cmd": ["istat", "-a", "rel"]}),
        json!({"cmd": ["istat", "-r", "-b", "rel"], "tagged": false}),
        json!({"cmd": ["istat", "//depot/main/...", "//depot/rel/..."]}),
        json!({"cmd": ["istat"], "tagged": false}),
        json!({"cmd": ["prune", "//depot/rel/..."], "tagged": false}),
        json!({"cmd": ["prune", "//depot/rel/..."], "user": "carol", "client": ""}),
        json!({"cmd": ["prune", "-y", "//depot/rel/..."], "user": "alice", "client": "ws"}),
        json!({"cmd": ["files", "//depot/rel/..."]}),
    ]);
    let both = &ok(&r[0])[0];
    assert_eq!(both["stream"], "//depot/rel/...");
    assert_eq!(both["parent"], "//depot/main/...");
    assert_eq!(both["integToParent"], "true");
    assert_eq!(both["toParentChanges"], "1");
    assert_eq!(both["toResult"], "4");
    assert_eq!(both["integFromParent"], "true");
    assert_eq!(both["fromResult"], "3");
    let down = ok(&r[1])[0].as_str().expect("line").to_string();
    assert_eq!(
        down,
        "//depot/rel/... - needs 1 change(s) from //depot/main/... (merge; newest change 3)"
    );
    // Without -a or -r, only the way up to the parent, as p4 reports it.
    let up = &ok(&r[2])[0];
    assert_eq!(up["integToParent"], "true");
    assert!(up.get("integFromParent").is_none(), "{up}");
    assert!(raised(&r[3]).contains("Usage: istat"), "{:?}", r[3]);

    let preview = ok(&r[4]);
    assert_eq!(
        preview,
        &json!([
            "//depot/rel/b.c#1 - would be pruned",
            "This was report mode.  Use -y to remove files."
        ])
    );
    assert!(raised(&r[5]).contains("admin"), "{:?}", r[5]);
    let pruned = ok(&r[6]);
    assert_eq!(pruned[0]["depotFile"], "//depot/rel/b.c");
    assert_eq!(pruned[0]["action"], "pruned");
    assert_eq!(pruned[0]["fromFile"], "//depot/main/b.c");
    let left = ok(&r[7]).as_array().expect("records");
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["depotFile"], "//depot/rel/a.c");
}

/// `print -a` (every revision in range, newest first, each with its header) and `fstat -F`
/// (a filter over the fields, in the job expression language).
#[test]
fn print_all_and_fstat_filter_through_p4python() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    write(&root, "a.c", "one\n");
    write(&root, "b.bin", "bee\n");
    a.ok(&["add", "a.c"]);
    a.ok(&["add", "-t", "binary", "b.bin"]);
    a.ok(&["submit", "-d", "first"]); // 1
    for (n, text) in [(2, "two\n"), (3, "three\n")] {
        a.ok(&["edit", "a.c"]);
        write(&root, "a.c", text);
        a.ok(&["submit", "-d", &format!("a#{n}")]);
    }

    let r = s.drive(&[
        json!({"cmd": ["print", "-a", "//depot/a.c"]}),
        json!({"cmd": ["print", "-a", "//depot/a.c#1,#2"], "tagged": false}),
        json!({"cmd": ["print", "-a", "-q", "//depot/..."], "tagged": false}),
        json!({"cmd": ["print", "-a", "//depot/nosuch.c"]}),
        json!({"cmd": ["fstat", "-F", "headRev>=2", "//depot/..."]}),
        json!({"cmd": ["fstat", "-F", "headType=binary | depotFile=*a.c", "-T", "depotFile",
                       "//depot/..."]}),
        json!({"cmd": ["fstat", "-F", "^headType=text & headRev=1", "//depot/..."]}),
        json!({"cmd": ["fstat", "-F", "headRev>9", "//depot/..."]}),
        json!({"cmd": ["fstat", "-F", "(headRev=1", "//depot/..."]}),
    ]);
    let all = ok(&r[0]).as_array().expect("records");
    assert_eq!(all.len(), 6, "{all:?}");
    let revs: Vec<&str> = all
        .iter()
        .step_by(2)
        .map(|h| h["rev"].as_str().expect("rev"))
        .collect();
    assert_eq!(revs, ["3", "2", "1"]);
    assert_eq!(all[1], "three\n");
    assert_eq!(all[5], "one\n");
    let range = ok(&r[1]).as_array().expect("lines");
    assert_eq!(range.len(), 4, "{range:?}");
    assert!(
        range[0]
            .as_str()
            .expect("header")
            .starts_with("//depot/a.c#2 - edit change 2"),
        "{range:?}"
    );
    assert_eq!(range[3], "one\n");
    let quiet = ok(&r[2]).as_array().expect("contents");
    assert_eq!(quiet.len(), 4, "{quiet:?}");
    assert!(raised(&r[3]).contains("no such file"), "{:?}", r[3]);

    let files = |i: usize| -> Vec<String> {
        ok(&r[i])
            .as_array()
            .expect("records")
            .iter()
            .map(|f| f["depotFile"].as_str().expect("depotFile").to_string())
            .collect()
    };
    assert_eq!(files(4), ["//depot/a.c"]);
    assert_eq!(files(5), ["//depot/a.c", "//depot/b.bin"]);
    assert_eq!(ok(&r[5])[0].as_object().expect("record").len(), 1);
    assert_eq!(files(6), ["//depot/b.bin"]);
    assert!(files(7).is_empty());
    let err = raised(&r[8]);
    assert!(err.contains("-F (headRev=1"), "{err}");
    assert!(err.contains("missing ')'"), "{err}");
}
