//! What P4Python's own test suite (`p4test.py`, run by `scripts/p4-client-suites`) found Keel
//! answering wrong, each checked through P4Python: tickets on an `rsh:` port replaced, not
//! added, at each login; `run_opened()` in a workspace with nothing open; the unique id of
//! `File(s) up-to-date.`; `client -t TEMPLATE`; `//...` naming every depot.

use crate::p4_harness::{P4Server, drive, ok, raised};
use serde_json::json;

#[test]
fn on_an_rsh_port_each_login_replaces_the_ticket_and_the_next_connection_proves_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("server");
    // An `=` in the port (P4Python's suite has `-vserver=3`), which a tickets-file key cannot
    // hold: keyed by the port, each login would add a line.
    let port = format!(
        "rsh:{} serve --p4-stdio --root={}",
        crate::common::KEEL,
        root.display()
    );
    let steps = [
        json!({"method": "run_password", "args": ["", "Secret-1"]}),
        json!({"new": true, "input": "Secret-1", "cmd": ["login"]}),
        json!({"new": true, "input": "Secret-1", "cmd": ["login"]}),
        json!({"new": true, "cmd": ["login", "-s"]}),
        json!({"method": "run_tickets"}),
        json!({"new": true, "cmd": ["logout"], "tagged": false}),
        json!({"new": true, "cmd": ["login", "-s"]}),
    ];
    let r = drive(&port, dir.path(), &steps);
    assert_eq!(ok(&r[0]), &json!(["Password updated."]));
    assert_eq!(ok(&r[3])[0]["User"], "alice");
    let tickets = ok(&r[4]).as_array().expect("tickets").clone();
    assert_eq!(tickets.len(), 1, "{tickets:?}");
    let key = format!("stdio:{}", root.canonicalize().expect("root").display());
    assert_eq!(tickets[0]["Host"], key.as_str(), "{tickets:?}");
    assert_eq!(ok(&r[5]), &json!(["User alice logged out."]));
    assert!(raised(&r[6]).contains("P4PASSWD"), "{:?}", r[6]);
}

#[test]
fn opened_in_a_clean_workspace_is_empty_and_sync_up_to_date_has_its_known_id() {
    let s = P4Server::start();
    let root = s.home.path().join("ws");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(root.join("a.txt"), "a\n").expect("a");
    let cwd = root.display().to_string();
    let r = s.drive(&[
        json!({"method": "save_client", "client": "alice_ws", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": cwd,
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        json!({"cmd": ["opened"]}),
        json!({"cmd": ["opened"], "tagged": false}),
        json!({"cwd": cwd, "cmd": ["add", "a.txt"]}),
        json!({"cmd": ["submit", "-d", "first"]}),
        json!({"cmd": ["sync"]}),
        // With file arguments an empty result is still said, as a warning.
        json!({"cmd": ["opened", "//depot/a.txt"]}),
    ]);
    assert_eq!(ok(&r[1]), &json!([]));
    assert!(
        r[2]["warnings"]
            .to_string()
            .contains("File(s) not opened on this client."),
        "{:?}",
        r[2]
    );
    ok(&r[4]);
    let up_to_date = &r[5]["messages"][0];
    assert_eq!(up_to_date["text"], "File(s) up-to-date.", "{:?}", r[5]);
    assert_eq!(up_to_date["msgid"], 6532, "{up_to_date}");
    assert_eq!(up_to_date["severity"], 2, "{up_to_date}");
    let not_opened = &r[6]["messages"][0];
    assert_eq!(not_opened["msgid"], 6526, "{:?}", r[6]);
}

#[test]
fn client_t_copies_a_templates_view_and_options_into_a_new_client_only() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"method": "save_client", "args": [{
            "Client": "base", "Owner": "alice", "Root": "/tmp/base",
            "Options": "allwrite noclobber nocompress locked nomodtime normdir",
            "View": ["//depot/main/... //base/main/...", "-//depot/main/gen/... //base/main/gen/..."]
        }]}),
        json!({"cmd": ["client", "-o", "-t", "base", "copy"]}),
        json!({"cmd": ["client", "-o", "-t", "base", "base"]}),
        json!({"cmd": ["client", "-o", "-t", "nosuch", "other"]}),
        json!({"cmd": ["clients"]}),
    ]);
    let copy = &ok(&r[1])[0];
    assert_eq!(copy["Client"], "copy");
    assert_eq!(
        copy["View"],
        json!([
            "//depot/main/... //copy/main/...",
            "-//depot/main/gen/... //copy/main/gen/..."
        ])
    );
    assert_eq!(
        copy["Options"],
        "allwrite noclobber nocompress locked nomodtime normdir"
    );
    let e = raised(&r[2]);
    assert!(e.contains("base already exists"), "{e}");
    let e = raised(&r[3]);
    assert!(e.contains("template nosuch doesn't exist"), "{e}");
    // `-o` saves nothing: only the template is a client.
    let names: Vec<_> = ok(&r[4])
        .as_array()
        .expect("clients")
        .iter()
        .map(|c| c["client"].clone())
        .collect();
    assert_eq!(names, vec![json!("base")]);
}

#[test]
fn every_depot_is_named_by_a_leading_wildcard() {
    let s = P4Server::start();
    let (native, root) = s.native_workspace();
    std::fs::write(root.join("a.txt"), "a\n").expect("a");
    native.ok(&["add", "a.txt"]);
    native.ok(&["submit", "-d", "first"]);
    native.ok(&["depot", "create", "other"]);
    let r = s.drive(&[
        json!({"cmd": ["files", "//..."]}),
        json!({"cmd": ["files", "//*/a.txt"]}),
        json!({"cmd": ["files", "//nosuch/..."]}),
    ]);
    let depot_files = |i: usize| -> Vec<String> {
        ok(&r[i])
            .as_array()
            .expect("files")
            .iter()
            .map(|f| f["depotFile"].as_str().expect("path").to_string())
            .collect()
    };
    assert_eq!(depot_files(0), vec!["//depot/a.txt"]);
    assert_eq!(depot_files(1), vec!["//depot/a.txt"]);
    assert!(
        raised(&r[2]).contains("neither a depot nor a workspace"),
        "{:?}",
        r[2]
    );
}

/// Found by p4-stack (scripts/p4-pypi-tools): a file unshelved into a change and edited in
/// the workspace was shelved and submitted with the shelved content, losing the edit.
#[test]
fn an_unshelved_file_edited_in_the_workspace_is_shelved_and_submitted_as_edited() {
    let s = P4Server::start();
    let root = s.home.path().join("ws");
    std::fs::create_dir_all(&root).expect("root");
    let a = root.join("a.txt");
    let b = root.join("b.txt");
    std::fs::write(&a, "one\n").expect("a");
    std::fs::write(&b, "bee\n").expect("b");
    let path = |p: &std::path::Path| p.display().to_string();
    let change =
        |d: &str| json!({"method": "save_change", "args": [{"Change": "new", "Description": d}]});
    let r = s.drive(&[
        json!({"method": "save_client", "client": "alice_ws", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": path(&root),
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        json!({"cmd": ["add", path(&a), path(&b)]}),
        json!({"cmd": ["submit", "-d", "first"]}),
        change("base\n"),
        json!({"cmd": ["edit", "-c", "2", path(&a), path(&b)]}),
    ]);
    for step in &r {
        ok(step);
    }
    std::fs::write(&a, "base\n").expect("a");
    std::fs::write(&b, "bee base\n").expect("b");
    let r = s.drive(&[
        json!({"cmd": ["shelve", "-c", "2"]}),
        json!({"cmd": ["revert", "//..."]}),
        change("child\n"),
        json!({"cmd": ["unshelve", "-s", "2", "-c", "3"]}),
    ]);
    for step in &r {
        ok(step);
    }
    // a.txt edited after the unshelve; b.txt left as unshelved.
    std::fs::write(&a, "child\n").expect("a");
    let r = s.drive(&[
        json!({"cmd": ["shelve", "-f", "-c", "3"]}),
        json!({"cmd": ["print", "-q", "//depot/a.txt@=3"]}),
        json!({"cmd": ["print", "-q", "//depot/b.txt@=3"]}),
        json!({"cmd": ["shelve", "-d", "-c", "3"]}),
    ]);
    assert_eq!(
        ok(&r[1]).as_array().expect("print").last(),
        Some(&json!("child\n"))
    );
    assert_eq!(
        ok(&r[2]).as_array().expect("print").last(),
        Some(&json!("bee base\n"))
    );
    ok(&r[3]);
    std::fs::write(&a, "child, again\n").expect("a");
    let r = s.drive(&[
        json!({"cmd": ["submit", "-c", "3"]}),
        json!({"cmd": ["print", "-q", "//depot/a.txt"]}),
        json!({"cmd": ["print", "-q", "//depot/b.txt"]}),
    ]);
    ok(&r[0]);
    assert_eq!(
        ok(&r[1]).as_array().expect("print").last(),
        Some(&json!("child, again\n"))
    );
    assert_eq!(
        ok(&r[2]).as_array().expect("print").last(),
        Some(&json!("bee base\n"))
    );
}

#[test]
fn integ_takes_workspace_syntax_and_a_submit_with_merges_pending_says_so_in_one_error() {
    let s = P4Server::start();
    let root = s.home.path().join("ws");
    std::fs::create_dir_all(root.join("src")).expect("root");
    std::fs::write(root.join("src/a.txt"), "one\n").expect("a");
    let cwd = root.display().to_string();
    let r = s.drive(&[
        json!({"method": "save_client", "client": "alice_ws", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": cwd,
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        json!({"cwd": cwd, "cmd": ["add", "src/a.txt"]}),
        json!({"cmd": ["submit", "-d", "first"]}),
        // P4Python's `run_integ` with both sides in the workspace's syntax.
        json!({"method": "run_integ", "args": ["//alice_ws/src/...", "//alice_ws/dst/..."]}),
        json!({"cmd": ["submit", "-d", "branched"]}),
        json!({"cwd": cwd, "cmd": ["edit", "src/a.txt"]}),
    ]);
    for step in &r {
        ok(step);
    }
    assert_eq!(ok(&r[3])[0]["depotFile"], "//depot/dst/a.txt", "{:?}", r[3]);
    std::fs::write(root.join("src/a.txt"), "one\ntwo\n").expect("a");
    let r = s.drive(&[
        json!({"cwd": cwd, "cmd": ["submit", "-d", "source edit", "src/a.txt"]}),
        json!({"cwd": cwd, "cmd": ["integ", "src/...", "dst/..."]}),
        json!({"cmd": ["submit", "-d", "unresolved"]}),
    ]);
    ok(&r[0]);
    ok(&r[1]);
    let e = raised(&r[2]);
    assert!(
        e.starts_with("Merges still pending -- use 'resolve' to merge files.\nSubmit failed"),
        "{e}"
    );
    assert!(
        r[2]["messages"]
            .to_string()
            .contains("//depot/dst/a.txt - must resolve"),
        "{:?}",
        r[2]
    );
}
