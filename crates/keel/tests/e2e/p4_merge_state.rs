//! P4 clients' `istat` (a branch spec in a stream's place: its source side is the parent) and
//! `prune [-y]` through P4Python, tagged and untagged, with the refusals for bad usage and a
//! user without admin. Content is set up with the native CLI.

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
