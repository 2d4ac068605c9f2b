//! P4 clients' spec commands through P4Python: `user -o/-i/-d`, `users`, `client -o/-i/-d`,
//! `clients -e -u -m`, tagged (P4.Spec objects, dicts saved back) and untagged (form text).

use crate::p4_harness::{P4Server, ok};
use serde_json::json;

#[test]
fn user_specs_fetch_save_list_and_delete() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"method": "fetch_user"}),
        json!({"method": "save_user", "args": [{"User": "alice", "Email": "alice@example.com", "FullName": "Alice Liddell"}]}),
        json!({"method": "fetch_user"}),
        json!({"cmd": ["user", "-o"], "tagged": false}),
        json!({"cmd": ["users"]}),
        json!({"cmd": ["users"], "tagged": false}),
        json!({"cmd": ["users", "-m", "0"]}),
        json!({"cmd": ["user", "-o", "-i"]}),
        json!({"cmd": ["user", "-d", "alice"], "tagged": false}),
    ]);
    let fresh = &ok(&r[0]);
    assert_eq!(fresh["spec_class"], "Spec", "{fresh}");
    assert_eq!(fresh["User"], "alice");
    assert_eq!(fresh["Email"], "alice@p4host");
    assert_eq!(ok(&r[1]), &json!(["User alice saved."]));
    let saved = &ok(&r[2]);
    assert_eq!(saved["spec_class"], "Spec");
    assert_eq!(saved["Email"], "alice@example.com");
    assert_eq!(saved["FullName"], "Alice Liddell");
    assert!(
        saved["Update"].is_string() && saved["Access"].is_string(),
        "{saved}"
    );
    let form = ok(&r[3])[0].as_str().expect("form").to_string();
    assert!(
        form.contains("User:\talice\n") && form.contains("FullName:\tAlice Liddell\n"),
        "{form}"
    );
    let users = ok(&r[4]).as_array().expect("users").clone();
    assert_eq!(users.len(), 1);
    assert_eq!(users[0]["User"], "alice");
    assert_eq!(users[0]["Email"], "alice@example.com");
    let line = ok(&r[5])[0].as_str().expect("line").to_string();
    assert!(
        line.starts_with("alice <alice@example.com> (Alice Liddell) accessed "),
        "{line}"
    );
    assert_eq!(ok(&r[6]), &json!([]));
    assert!(
        r[7]["errors"].to_string().contains("Usage: user"),
        "{:?}",
        r[7]
    );
    assert_eq!(ok(&r[8]), &json!(["User alice deleted."]));
}

#[test]
fn client_specs_fetch_save_list_and_delete() {
    let s = P4Server::start();
    let root = s.home.path().join("ws").display().to_string();
    let r = s.drive(&[
        json!({"method": "fetch_client"}),
        json!({"method": "save_client", "args": [{
            "Client": "alice_ws", "Owner": "alice", "Root": root,
            "Description": "Alice's workspace\n",
            "Options": "noallwrite clobber nocompress unlocked nomodtime normdir",
            "SubmitOptions": "submitunchanged", "LineEnd": "local",
            "View": ["//depot/... //alice_ws/..."]
        }]}),
        json!({"method": "fetch_client"}),
        json!({"cmd": ["client", "-o"], "tagged": false}),
        json!({"cmd": ["clients"]}),
        json!({"cmd": ["clients", "-e", "alice*"], "tagged": false}),
        json!({"cmd": ["clients", "-e", "bob*"]}),
        json!({"cmd": ["clients", "-u", "bob"]}),
        json!({"cmd": ["clients", "-E", "ALICE_*", "-m", "1"]}),
        json!({"cmd": ["client", "-d", "alice_ws"], "tagged": false}),
        json!({"cmd": ["clients"]}),
    ]);
    let fresh = &ok(&r[0]);
    assert_eq!(fresh["spec_class"], "Spec", "{fresh}");
    assert_eq!(fresh["Client"], "alice_ws");
    // A client not saved yet has no Update field (tools tell new clients by it).
    assert!(fresh.get("Update").is_none(), "{fresh}");
    assert_eq!(fresh["View"], json!(["//depot/... //alice_ws/..."]));
    assert_eq!(ok(&r[1]), &json!(["Client alice_ws saved."]));
    let saved = &ok(&r[2]);
    assert!(saved["Update"].is_string(), "{saved}");
    assert_eq!(saved["Root"], root.as_str());
    assert_eq!(saved["Description"], "Alice's workspace\n");
    assert_eq!(
        saved["Options"],
        "noallwrite clobber nocompress unlocked nomodtime normdir"
    );
    let form = ok(&r[3])[0].as_str().expect("form").to_string();
    assert!(
        form.contains("Client:\talice_ws\n")
            && form.contains("View:\n\t//depot/... //alice_ws/...\n"),
        "{form}"
    );
    let listed = ok(&r[4]).as_array().expect("clients").clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["client"], "alice_ws");
    assert_eq!(listed[0]["Owner"], "alice");
    let line = ok(&r[5])[0].as_str().expect("line").to_string();
    assert!(
        line.starts_with("Client alice_ws ") && line.contains(&format!(" root {root} ")),
        "{line}"
    );
    assert_eq!(ok(&r[6]), &json!([]));
    assert_eq!(ok(&r[7]), &json!([]));
    assert_eq!(ok(&r[8]).as_array().expect("clients").len(), 1);
    assert_eq!(ok(&r[9]), &json!(["Client alice_ws deleted."]));
    assert_eq!(ok(&r[10]), &json!([]));
}

#[test]
fn client_forms_keel_cannot_honour_are_refused_naming_the_field() {
    let s = P4Server::start();
    let root = s.home.path().join("ws").display().to_string();
    let base = json!({
        "Client": "alice_ws", "Owner": "alice", "Root": root,
        "View": ["//depot/... //alice_ws/..."]
    });
    let with = |k: &str, v: &str| {
        let mut f = base.clone();
        f[k] = json!(v);
        f
    };
    let r = s.drive(&[
        json!({"method": "save_client", "args": [with("SubmitOptions", "revertunchanged")]}),
        json!({"method": "save_client", "args": [with("LineEnd", "crlf")]}),
        json!({"input": "Client:\talice_ws\nColour:\tred\n", "cmd": ["client", "-i"]}),
        json!({"cmd": ["clients"]}),
    ]);
    assert!(
        r[0]["errors"]
            .to_string()
            .contains("SubmitOptions 'revertunchanged'"),
        "{:?}",
        r[0]
    );
    assert!(
        r[1]["errors"].to_string().contains("LineEnd 'crlf'"),
        "{:?}",
        r[1]
    );
    assert!(r[2]["errors"].to_string().contains("Colour"), "{:?}", r[2]);
    // Nothing was saved.
    assert_eq!(ok(&r[3]), &json!([]));
}

#[test]
fn depots_and_counters() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"cmd": ["depots"]}),
        json!({"cmd": ["depots"], "tagged": false}),
        json!({"cmd": ["counters"]}),
        json!({"cmd": ["counter", "change"], "tagged": false}),
        json!({"cmd": ["counter", "change"]}),
        json!({"cmd": ["counter", "unset"], "tagged": false}),
        json!({"cmd": ["counter", "change", "5"]}),
    ]);
    let depots = ok(&r[0]).as_array().expect("depots").clone();
    assert_eq!(depots.len(), 1);
    assert_eq!(depots[0]["name"], "depot");
    assert_eq!(depots[0]["type"], "local");
    assert_eq!(depots[0]["map"], "depot/...");
    let line = ok(&r[1])[0].as_str().expect("line").to_string();
    assert!(
        line.starts_with("Depot depot ") && line.contains(" local depot/... '"),
        "{line}"
    );
    // No change yet: no counters to list, and `change` reads 0.
    assert_eq!(ok(&r[2]), &json!([]));
    assert_eq!(ok(&r[3]), &json!(["0"]));
    assert_eq!(ok(&r[4])[0]["counter"], "change");
    assert_eq!(ok(&r[4])[0]["value"], "0");
    assert_eq!(ok(&r[5]), &json!(["0"]));
    assert!(
        r[6]["errors"].to_string().contains("cannot be set"),
        "{:?}",
        r[6]
    );
}
