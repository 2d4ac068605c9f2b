//! `## comments` in the protections table through P4Python: kept on their own lines and after
//! rules (`protect -o` gives back what `protect -i` saved), ignored by the access checks, and
//! the same table through Keel's own `keel protect -o`.

use crate::p4_harness::{P4Server, ok, raised};
use serde_json::json;

#[test]
fn protect_keeps_comments_and_they_change_no_right() {
    let s = P4Server::start();
    let table = [
        "## First line",
        "read user * * //... ## standard",
        "write user bob * //depot/secret/... ## bob writes here## twice",
        "super user alice * //... ## standard super user",
    ];
    let r = s.drive(&[
        json!({"cmd": ["protect", "-i"], "input": {"Protections": table}}),
        json!({"cmd": ["protect", "-o"]}),
        json!({"cmd": ["protects", "-m", "//depot/secret/x"], "user": "bob", "tagged": false}),
        json!({"cmd": ["protects", "-m", "//depot/other/x"], "user": "bob", "tagged": false}),
        json!({"cmd": ["protect", "-i"], "user": "alice",
               "input": {"Protections": ["## only a comment", "bogus line ## a comment"]}}),
        json!({"cmd": ["protect", "-o"]}),
    ]);
    ok(&r[0]);
    assert_eq!(ok(&r[1])[0]["Protections"], json!(table));
    assert_eq!(ok(&r[2]), &json!(["write"]));
    assert_eq!(ok(&r[3]), &json!(["read"]));
    // A bad rule is refused, naming it; nothing changes.
    assert!(raised(&r[4]).contains("bogus"), "{}", r[4]);
    assert_eq!(ok(&r[5])[0]["Protections"], json!(table));
    // Keel's own client shows the same lines.
    let alice = s.server.client("alice", "", s.home.path());
    let out = alice.ok(&["protect", "-o"]);
    for line in table {
        assert!(out.contains(line), "{line} in {out}");
    }
}
