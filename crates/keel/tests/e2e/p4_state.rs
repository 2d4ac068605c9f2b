//! The same workflow (add, edit, delete, submit, a change form, shelve) run once through the
//! native CLI and once through P4Python, on two fresh servers, leaves the same server state:
//! compared through the native CLI's `--json` output (changes, described changes and shelves,
//! revisions with their digests, have lists, opened files), dates and the workspace and user
//! names aside.

use crate::common::Client;
use crate::p4_harness::{P4Server, ok};
use serde_json::{Value, json};
use std::path::Path;

const A1: &str = "one\n";
const A2: &str = "one\ntwo\n";
const C1: &str = "see\n";

fn binary() -> Vec<u8> {
    (0..5000u32).map(|i| (i * 13 % 256) as u8).collect()
}

/// The workflow through the native CLI, as `alice` in workspace `ws` rooted at `root`.
fn native(s: &P4Server, root: &Path) -> Client {
    let ws = s.server.client("alice", "ws", root);
    ws.ok(&[
        "workspace",
        "create",
        "ws",
        "--root",
        root.to_str().expect("utf-8"),
    ]);
    std::fs::write(root.join("a.txt"), A1).expect("a");
    std::fs::write(root.join("b.bin"), binary()).expect("b");
    ws.ok(&["add", "a.txt", "b.bin"]);
    ws.ok(&["submit", "-d", "first"]);
    ws.ok(&["edit", "a.txt"]);
    std::fs::write(root.join("a.txt"), A2).expect("a2");
    ws.ok(&["delete", "b.bin"]);
    ws.ok(&["submit", "-d", "second"]);
    std::fs::write(root.join("c.txt"), C1).expect("c");
    ws.ok(&["add", "c.txt"]);
    ws.ok(&["change", "-d", "pending work"]);
    ws.ok(&["reopen", "-c", "3", "c.txt"]);
    ws.ok(&["shelve", "-c", "3"]);
    ws.ok(&["edit", "a.txt"]);
    ws
}

/// The same workflow through P4Python.
fn p4python(s: &P4Server, root: &Path) {
    let r = s.drive(&[json!({"client": "ws", "method": "save_client", "args": [{
        "Client": "ws", "Owner": "alice", "Root": root.display().to_string(),
        "View": ["//depot/... //ws/..."]
    }]})]);
    ok(&r[0]);
    std::fs::write(root.join("a.txt"), A1).expect("a");
    std::fs::write(root.join("b.bin"), binary()).expect("b");
    let cwd = root.display().to_string();
    let step = |v: Value| {
        let mut v = v;
        v["client"] = json!("ws");
        v["cwd"] = json!(cwd);
        v
    };
    let r = s.drive(&[
        step(json!({"cmd": ["add", "a.txt", "b.bin"]})),
        step(json!({"cmd": ["submit", "-d", "first"]})),
        step(json!({"cmd": ["edit", "a.txt"]})),
    ]);
    r.iter().for_each(|x| {
        ok(x);
    });
    std::fs::write(root.join("a.txt"), A2).expect("a2");
    let r = s.drive(&[
        step(json!({"cmd": ["delete", "b.bin"]})),
        step(json!({"cmd": ["submit", "-d", "second"]})),
    ]);
    r.iter().for_each(|x| {
        ok(x);
    });
    std::fs::write(root.join("c.txt"), C1).expect("c");
    let r = s.drive(&[
        step(json!({"cmd": ["add", "c.txt"]})),
        step(json!({"method": "save_change", "args": [{
            "Change": "new", "Description": "pending work\n"
        }]})),
        step(json!({"cmd": ["reopen", "-c", "3", "c.txt"]})),
        step(json!({"cmd": ["shelve", "-c", "3"]})),
        step(json!({"cmd": ["edit", "a.txt"]})),
    ]);
    r.iter().for_each(|x| {
        ok(x);
    });
}

/// `v` without the fields that may differ (dates and times, workspace and user names, local
/// paths).
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| {
                    let k = k.to_lowercase();
                    !(k.contains("time")
                        || k.contains("date")
                        || k.contains("user")
                        || k.contains("client")
                        || k.contains("workspace")
                        || k.contains("path")
                        || k == "update"
                        || k == "access")
                })
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// The server state as the native CLI reports it.
fn state(ws: &Client) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut q = |name: &str, args: &[&str]| {
        out.push((name.to_string(), strip(&json!(ws.json(args)))));
    };
    q("changes", &["changes", "-l"]);
    for n in ["1", "2", "3"] {
        q(&format!("describe {n}"), &["describe", "-s", n]);
    }
    q("shelf 3", &["describe", "-S", "-s", "3"]);
    q("fstat", &["fstat", "//depot/..."]);
    q("have", &["have"]);
    q("opened", &["opened"]);
    out
}

#[test]
fn the_native_cli_and_p4python_leave_the_same_server_state() {
    let (one, two) = (P4Server::start(), P4Server::start());
    let native_root = one.home.path().join("ws");
    let p4_root = two.home.path().join("ws");
    std::fs::create_dir_all(&native_root).expect("root");
    std::fs::create_dir_all(&p4_root).expect("root");
    let ws = native(&one, &native_root);
    p4python(&two, &p4_root);
    let reader = two.server.client("alice", "ws", &p4_root);
    let (mine, theirs) = (state(&ws), state(&reader));
    for ((name, a), (_, b)) in mine.iter().zip(&theirs) {
        assert_eq!(a, b, "{name}: native vs P4Python");
    }
    // And the state compared is not empty: three changes, files with their digests,
    // one file had, two opened (one in the shelved change).
    let of = |name: &str| {
        mine.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_array().expect("records").clone())
            .expect("queried")
    };
    assert_eq!(of("changes").len(), 3);
    let fstat = of("fstat");
    // The two files with revisions, and the file opened for add the depot has no revision of.
    assert_eq!(fstat.len(), 3, "{fstat:?}");
    assert!(
        fstat
            .iter()
            .any(|f| f["md5"].as_str().is_some_and(|m| m.len() == 32)),
        "{fstat:?}"
    );
    assert_eq!(of("have").len(), 1);
    assert_eq!(of("opened").len(), 2);
}
