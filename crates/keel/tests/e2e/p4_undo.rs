//! `undo` through P4Python: the inverse of a submitted change opened (an edit back to the
//! content before it, a delete of the file it added), the client's files made to match,
//! `-n` opening nothing, and the refusals (no arguments, a user who may only read).

use crate::common::{str_field, workspace_on, write};
use crate::p4_harness::{P4Server, ok, raised};
use serde_json::json;

#[test]
fn undo_opens_the_inverse_of_a_change_and_writes_the_earlier_content() {
    let s = P4Server::start();
    let w = workspace_on(&s.server, s.home.path(), "alice", "w");
    write(&w.cwd, "a.txt", "one\n");
    w.ok(&["add", "a.txt"]);
    w.ok(&["submit", "-d", "first"]);
    w.ok(&["edit", "a.txt"]);
    write(&w.cwd, "a.txt", "two\n");
    write(&w.cwd, "c.txt", "sea\n");
    w.ok(&["add", "c.txt"]);
    w.ok(&["submit", "-d", "second"]);
    crate::access::protect(&w, &["super user alice * //...", "read user bob * //..."]);
    let root = s.home.path().join("p4ws");
    std::fs::create_dir_all(&root).expect("root");
    let r = s.drive(&[
        json!({"method": "save_client", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": root.display().to_string(),
            "Options": "noallwrite noclobber nocompress unlocked nomodtime normdir",
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        json!({"cmd": ["sync"]}),
        json!({"cmd": ["undo", "-n", "//depot/a.txt#2"]}),
        json!({"cmd": ["opened"]}),
        json!({"cmd": ["undo"]}),
        json!({"cmd": ["undo", "@2"], "user": "bob"}),
        json!({"cmd": ["undo", "@2"], "user": "alice", "tagged": false}),
        json!({"cmd": ["opened"]}),
    ]);
    ok(&r[1]);
    let preview = ok(&r[2]).as_array().expect("records").clone();
    assert_eq!(preview.len(), 1, "{preview:?}");
    assert_eq!(preview[0]["depotFile"], "//depot/a.txt");
    assert_eq!(preview[0]["action"], "edit");
    assert_eq!(preview[0]["startFromRev"], "2");
    assert_eq!(preview[0]["endFromRev"], "2");
    assert_eq!(ok(&r[3]), &json!([]));
    assert!(raised(&r[4]).contains("Missing file arguments"), "{}", r[4]);
    assert!(
        raised(&r[5]).to_lowercase().contains("permission"),
        "{}",
        r[5]
    );
    let mut lines: Vec<String> = ok(&r[6])
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().expect("line").to_string())
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        vec![
            "//depot/a.txt#2 - opened for edit (undo of #2,#2)",
            "//depot/c.txt#1 - opened for delete (undo of #1,#1)"
        ]
    );
    let mut opened: Vec<String> = ok(&r[7])
        .as_array()
        .expect("opened")
        .iter()
        .map(|o| format!("{} {}", str_field(o, "depotFile"), str_field(o, "action")))
        .collect();
    opened.sort();
    assert_eq!(opened, vec!["//depot/a.txt edit", "//depot/c.txt delete"]);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).expect("a"),
        "one\n"
    );
    assert!(!root.join("c.txt").exists());
}
