//! P4 clients' issue-30 commands through P4Python: `grep`, tagged and untagged, with its
//! usage refusals and a bad pattern named. Content is set up with the native CLI.

use crate::common::write;
use crate::p4_harness::{P4Server, ok};
use serde_json::json;

#[test]
fn grep_through_p4python() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    write(&root, "src/a.c", "int main() {\n  helper();\n}\n");
    write(&root, "src/b.c", "void helper();\n// TODO\n");
    a.ok(&["add", "src/a.c", "src/b.c"]);
    a.ok(&["submit", "-d", "code"]);

    let r = s.drive(&[
        json!({"cmd": ["grep", "-n", "-e", "helper", "//depot/src/..."], "tagged": false}),
        json!({"cmd": ["grep", "-e", "helper", "//depot/src/..."]}),
        json!({"cmd": ["grep", "-l", "-e", "TODO", "//depot/src/..."]}),
        json!({"cmd": ["grep", "-A", "1", "-e", "main", "//depot/src/a.c"], "tagged": false}),
        json!({"cmd": ["grep", "//depot/src/..."], "tagged": false}),
        json!({"cmd": ["grep", "-e", "he(lper", "//depot/src/..."], "tagged": false}),
    ]);
    assert_eq!(
        ok(&r[0]),
        &json!([
            "//depot/src/a.c#1:2:  helper();",
            "//depot/src/b.c#1:1:void helper();"
        ])
    );
    let tagged = ok(&r[1]).as_array().expect("records").clone();
    assert_eq!(tagged.len(), 2, "{tagged:?}");
    assert_eq!(tagged[0]["depotFile"], "//depot/src/a.c");
    assert_eq!(tagged[0]["rev"], "1");
    assert_eq!(tagged[0]["line"], "2");
    assert_eq!(tagged[0]["matchedLine"], "  helper();");
    let listed = ok(&r[2]).as_array().expect("records").clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["depotFile"], "//depot/src/b.c");
    assert_eq!(
        ok(&r[3]),
        &json!([
            "//depot/src/a.c#1:int main() {",
            "//depot/src/a.c#1-  helper();"
        ])
    );
    assert!(
        r[4]["errors"].to_string().contains("Usage: grep"),
        "{:?}",
        r[4]
    );
    assert!(r[5]["errors"].to_string().contains("he(lper"), "{:?}", r[5]);
}

#[test]
fn sizes_through_p4python() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    write(&root, "main/a.txt", "x".repeat(100));
    a.ok(&["add", "main/a.txt"]);
    a.ok(&["submit", "-d", "a"]);
    a.ok(&["populate", "//depot/main/...", "//depot/rel/..."]);

    let r = s.drive(&[
        json!({"client": "ws", "cmd": ["sizes", "//depot/..."], "tagged": false}),
        json!({"client": "ws", "cmd": ["sizes", "-s", "-z", "//depot/..."]}),
        json!({"client": "ws", "cmd": ["sizes", "-s", "-b", "64", "//depot/..."], "tagged": false}),
        json!({"client": "ws", "cmd": ["sizes", "-b", "0", "//depot/..."], "tagged": false}),
    ]);
    assert_eq!(
        ok(&r[0]),
        &json!([
            "//depot/main/a.txt#1 100 bytes",
            "//depot/rel/a.txt#1 100 bytes"
        ])
    );
    let once = ok(&r[1]).as_array().expect("records").clone();
    assert_eq!(once.len(), 1, "{once:?}");
    assert_eq!(once[0]["path"], "//depot/...");
    assert_eq!(once[0]["fileCount"], "1");
    assert_eq!(once[0]["fileSize"], "100");
    assert_eq!(
        ok(&r[2]),
        &json!(["//depot/... 2 files 200 bytes 4 blocks"])
    );
    assert!(r[3]["errors"].to_string().contains("-b 0"), "{:?}", r[3]);
}

#[test]
fn annotate_through_p4python() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    write(&root, "a.txt", "one\ntwo\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "first"]);
    a.ok(&["edit", "a.txt"]);
    write(&root, "a.txt", "one\n  two\nthree\n");
    a.ok(&["submit", "-d", "second"]);

    let r = s.drive(&[
        json!({"cmd": ["annotate", "//depot/a.txt"], "tagged": false}),
        json!({"cmd": ["annotate", "//depot/a.txt"]}),
        json!({"cmd": ["annotate", "-q", "-dw", "//depot/a.txt"], "tagged": false}),
        json!({"cmd": ["annotate", "-dx", "//depot/a.txt"], "tagged": false}),
        json!({"cmd": ["annotate", "//depot/nothing.txt"], "tagged": false}),
    ]);
    assert_eq!(
        ok(&r[0]),
        &json!([
            "//depot/a.txt#2 - edit change 2 (text)",
            "1: one",
            "2:   two",
            "2: three"
        ])
    );
    let tagged = ok(&r[1]).as_array().expect("records").clone();
    assert_eq!(tagged.len(), 4, "{tagged:?}");
    assert_eq!(tagged[0]["depotFile"], "//depot/a.txt");
    assert_eq!(tagged[0]["rev"], "2");
    assert_eq!(tagged[0]["change"], "2");
    assert_eq!(tagged[1]["lower"], "1");
    assert_eq!(tagged[1]["upper"], "2");
    assert_eq!(tagged[1]["data"], "one\n");
    assert_eq!(ok(&r[2]), &json!(["1: one", "1:   two", "2: three"]));
    assert!(r[3]["errors"].to_string().contains("-dx"), "{:?}", r[3]);
    assert!(
        r[4]["errors"].to_string().contains("//depot/nothing.txt"),
        "{:?}",
        r[4]
    );
}

/// `fixes` (which P4Java runs when it refreshes or submits a change), tagged and untagged, and
/// nothing at all for a change that fixes no job.
#[test]
fn fixes_through_p4python() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    let out = a.run_stdin(
        &["job", "-i"],
        "Job:\tnew\nDescription:\n\tCrash on start.\n",
    );
    assert!(out.status.success(), "job -i");
    write(&root, "main.c", "int main() { return 0; }\n");
    a.ok(&["add", "main.c"]);
    a.ok(&["submit", "-d", "no job"]);
    a.ok(&["change", "-d", "fix the crash"]);
    a.ok(&["edit", "-c", "2", "main.c"]);
    a.ok(&["fix", "-c", "2", "job000001"]);

    let r = s.drive(&[
        json!({"cmd": ["fixes", "-c", "2"]}),
        json!({"cmd": ["fixes", "-j", "job000001"], "tagged": false}),
        json!({"cmd": ["fixes", "-c", "1"]}),
        json!({"cmd": ["fixes", "-c", "two"], "tagged": false}),
    ]);
    let fix = &ok(&r[0])[0];
    assert_eq!(fix["Job"], "job000001");
    assert_eq!(fix["Change"], "2");
    assert_eq!(fix["User"], "alice");
    assert_eq!(fix["Client"], "ws");
    assert_eq!(fix["Status"], "closed");
    let line = ok(&r[1])[0].as_str().expect("line").to_string();
    assert!(
        line.starts_with("job000001 fixed by change 2 on ")
            && line.ends_with(" by alice@ws (closed)"),
        "{line}"
    );
    assert_eq!(ok(&r[2]), &json!([]));
    assert!(r[3]["errors"].to_string().contains("'two'"), "{:?}", r[3]);
}
