//! P4 clients' admin commands and the front end's accounting, through P4Python: `counter`
//! and `counters` over the server's counters, spec `-o` answered by a read-only replica
//! (a read, not a write), and P4 commands' bytes and rows in the command log.

use crate::common::{Server, str_field, workspace_on, write};
use crate::p4_harness::{P4Server, drive, ok, raised};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[test]
fn counters_are_read_set_incremented_and_deleted() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"cmd": ["counter", "review", "41"], "tagged": false}),
        json!({"cmd": ["counter", "-i", "review"], "tagged": false}),
        json!({"cmd": ["counter", "review"]}),
        json!({"cmd": ["counters"], "tagged": false}),
        json!({"cmd": ["counters", "-e", "rev*"]}),
        json!({"cmd": ["counter", "-d", "review"], "tagged": false}),
        json!({"cmd": ["counter", "review"], "tagged": false}),
        json!({"cmd": ["counter", "change", "9"]}),
        json!({"cmd": ["counter", "-d", "-i", "x"]}),
        json!({"cmd": ["counter", "bad name!", "1"]}),
    ]);
    assert_eq!(ok(&r[0]), &json!(["Counter review set."]));
    assert_eq!(ok(&r[1]), &json!(["42"]));
    assert_eq!(ok(&r[2]), &json!([{"counter": "review", "value": "42"}]));
    assert_eq!(ok(&r[3]), &json!(["review = 42"]));
    assert_eq!(ok(&r[4]), &json!([{"counter": "review", "value": "42"}]));
    assert_eq!(ok(&r[5]), &json!(["Counter review deleted."]));
    assert_eq!(ok(&r[6]), &json!(["0"]));
    assert!(raised(&r[7]).contains("cannot be set"), "{:?}", r[7]);
    assert!(
        raised(&r[8]).contains("cannot be used together"),
        "{:?}",
        r[8]
    );
    assert!(raised(&r[9]).contains("bad name!"), "{:?}", r[9]);
}

#[test]
fn a_replica_answers_spec_output_and_refuses_spec_input() {
    let s = P4Server::start();
    let dir = tempfile::tempdir().expect("replica dir");
    let replica = Server::start_replica(
        &dir.path().join("replica"),
        &s.server.addr,
        &["--p4-listen", "127.0.0.1:0"],
    )
    .expect("replica starts");
    let line = replica.ready_line().to_string();
    let port = line
        .split_once("P4 clients on ")
        .and_then(|(_, rest)| rest.split([',', ')', ' ']).next())
        .unwrap_or_else(|| panic!("no P4 address in {line}"))
        .to_string();
    let home = tempfile::tempdir().expect("client home");
    let root = home.path().join("ws").display().to_string();
    let r = drive(
        &port,
        home.path(),
        &[
            json!({"cmd": ["user", "-o"]}),
            json!({"cmd": ["client", "-o"]}),
            json!({"cmd": ["counter", "change"], "tagged": false}),
            json!({"method": "save_client", "args": [{
                "Client": "alice_ws", "Owner": "alice", "Root": root,
                "View": ["//depot/... //alice_ws/..."]
            }]}),
            json!({"cmd": ["counter", "review", "1"]}),
        ],
    );
    assert_eq!(ok(&r[0])[0]["User"], "alice");
    assert_eq!(ok(&r[1])[0]["Client"], "alice_ws");
    assert_eq!(ok(&r[2]), &json!(["0"]));
    assert!(raised(&r[3]).contains("replica"), "{:?}", r[3]);
    assert!(raised(&r[4]).contains("replica"), "{:?}", r[4]);
}

/// The command log's records once one satisfies `want` (bounded wait).
fn log_until(s: &P4Server, want: impl Fn(&Value) -> bool) -> Vec<Value> {
    let path = s.server.root.join("logs/commands.jsonl");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if lines.iter().any(&want) {
            return lines;
        }
        assert!(Instant::now() < deadline, "no such record in:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn p4_commands_count_their_bytes_and_rows_in_the_command_log() {
    let s = P4Server::start();
    let ws = workspace_on(&s.server, s.home.path(), "alice", "alice_ws");
    write(&ws.cwd, "a.txt", "a\n");
    ws.ok(&["add", "a.txt"]);
    ws.ok(&["submit", "-d", "one"]);
    let r = s.drive(&[
        json!({"cmd": ["files", "//depot/..."]}),
        json!({"cmd": ["counter", "review", "7"]}),
    ]);
    ok(&r[0]);
    ok(&r[1]);
    let p4 = |l: &Value, command: &str| {
        str_field(l, "command") == command && str_field(l, "program").contains("keel-p4-suite")
    };
    let lines = log_until(&s, |l| p4(l, "UpdateCounter"));
    let files = lines
        .iter()
        .find(|l| p4(l, "Files"))
        .expect("the files record");
    let number = |l: &Value, k: &str| l[k].as_u64().unwrap_or_else(|| panic!("{k} in {l}"));
    assert!(number(files, "bytes_sent") > 0, "{files}");
    assert!(number(files, "bytes_received") > 0, "{files}");
    assert!(number(files, "rows_read") > 0, "{files}");
    let set = lines
        .iter()
        .find(|l| p4(l, "UpdateCounter"))
        .expect("the counter record");
    assert!(number(set, "rows_written") > 0, "{set}");
}

#[test]
fn label_and_branch_specs_fetch_save_list_and_delete() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"method": "fetch_label", "args": ["rel1"]}),
        json!({"method": "save_label", "args": [{
            "Label": "rel1", "Owner": "alice", "Description": "Release one\n",
            "Options": "unlocked", "View": ["//depot/main/..."]
        }]}),
        json!({"method": "fetch_label", "args": ["rel1"]}),
        json!({"cmd": ["labels"]}),
        json!({"cmd": ["labels"], "tagged": false}),
        json!({"cmd": ["label", "-o", "rel1"], "tagged": false}),
        json!({"cmd": ["label", "-d", "rel1"], "tagged": false}),
        json!({"method": "save_branch", "args": [{
            "Branch": "main-rel", "Owner": "alice", "Description": "Main to rel\n",
            "Options": "unlocked", "View": ["//depot/main/... //depot/rel/..."]
        }]}),
        json!({"method": "fetch_branch", "args": ["main-rel"]}),
        json!({"cmd": ["branches", "-e", "main*"]}),
        json!({"cmd": ["branches", "-u", "bob"]}),
        json!({"cmd": ["branch", "-d", "main-rel"], "tagged": false}),
        json!({"cmd": ["branch", "main-rel"]}),
        json!({"cmd": ["label", "-d", "nope"]}),
    ]);
    let fresh = ok(&r[0]);
    assert_eq!(fresh["spec_class"], "Spec", "{fresh}");
    assert_eq!(fresh["Label"], "rel1");
    assert_eq!(fresh["View"], json!(["//depot/..."]));
    assert_eq!(ok(&r[1]), &json!(["Label rel1 saved."]));
    let saved = ok(&r[2]);
    assert_eq!(saved["spec_class"], "Spec");
    assert_eq!(saved["View"], json!(["//depot/main/..."]));
    assert_eq!(saved["Description"], "Release one\n");
    let labels = ok(&r[3]).as_array().expect("labels").clone();
    assert_eq!(labels.len(), 1);
    assert_eq!(labels[0]["label"], "rel1");
    assert_eq!(labels[0]["Owner"], "alice");
    let line = ok(&r[4])[0].as_str().expect("line").to_string();
    assert!(
        line.starts_with("Label rel1 ") && line.ends_with(" 'Release one'"),
        "{line}"
    );
    let form = ok(&r[5])[0].as_str().expect("form").to_string();
    assert!(
        form.contains("Label:\trel1\n") && form.contains("\t//depot/main/..."),
        "{form}"
    );
    assert_eq!(ok(&r[6]), &json!(["Label rel1 deleted."]));
    assert_eq!(ok(&r[7]), &json!(["Branch main-rel saved."]));
    let b = ok(&r[8]);
    assert_eq!(b["spec_class"], "Spec");
    assert_eq!(b["View"], json!(["//depot/main/... //depot/rel/..."]));
    assert_eq!(ok(&r[9])[0]["branch"], "main-rel");
    assert_eq!(ok(&r[10]), &json!([]));
    assert_eq!(ok(&r[11]), &json!(["Branch main-rel deleted."]));
    // No -o or -i: the form goes to the editor, which fails here (the harness's P4EDITOR is
    // `false`), so nothing is saved.
    assert!(raised(&r[12]).contains("Execution Failed"), "{:?}", r[12]);
    assert!(raised(&r[13]).contains("nope"), "{:?}", r[13]);
}

#[test]
fn protects_lists_the_lines_that_apply_and_the_highest_level() {
    let s = P4Server::start();
    let alice = s.server.client("alice", "", s.home.path());
    crate::access::protect(
        &alice,
        &[
            "super user alice * //...",
            "write user bob * //depot/main/...",
            "write group devs * //depot/dev/...",
            "list user bob * -//depot/main/secret/...",
        ],
    );
    let r = s.drive(&[
        json!({"cmd": ["protects"], "user": "bob"}),
        json!({"cmd": ["protects", "-m"], "tagged": false}),
        json!({"cmd": ["protects", "-a"], "user": "alice"}),
        json!({"cmd": ["protects", "-u", "bob"], "tagged": false}),
        json!({"cmd": ["protects", "-a"], "user": "bob"}),
    ]);
    let bob = ok(&r[0]).as_array().expect("lines").clone();
    assert_eq!(bob.len(), 2, "{bob:?}");
    assert_eq!(bob[0]["perm"], "write");
    assert_eq!(bob[0]["user"], "bob");
    assert_eq!(bob[0]["host"], "*");
    assert_eq!(bob[0]["depotFile"], "//depot/main/...");
    assert_eq!(bob[1]["depotFile"], "//depot/main/secret/...");
    assert_eq!(bob[1]["unmap"], "");
    assert_eq!(ok(&r[1]), &json!(["write"]));
    let all = ok(&r[2]).as_array().expect("all").clone();
    assert_eq!(all.len(), 4);
    assert_eq!(all[2]["isgroup"], "");
    assert_eq!(
        ok(&r[3]),
        &json!([
            "write user bob * //depot/main/...",
            "list user bob * -//depot/main/secret/..."
        ])
    );
    assert!(raised(&r[4]).contains("super"), "{:?}", r[4]);
}

#[test]
fn tag_labelsync_protect_and_groups() {
    let s = P4Server::start();
    let ws = workspace_on(&s.server, s.home.path(), "alice", "alice_ws");
    write(&ws.cwd, "a.txt", "a\n");
    write(&ws.cwd, "b.txt", "b\n");
    ws.ok(&["add", "a.txt", "b.txt"]);
    ws.ok(&["submit", "-d", "two"]);
    let r = s.drive(&[
        json!({"method": "save_label", "args": [{"Label": "rel1", "Owner": "alice", "View": ["//depot/..."]}]}),
        json!({"cmd": ["tag", "-l", "rel1", "//depot/a.txt"], "tagged": false}),
        json!({"cmd": ["files", "//depot/...@rel1"]}),
        json!({"cmd": ["labelsync", "-n", "-l", "rel1"]}),
        json!({"cmd": ["labelsync", "-l", "rel1"], "tagged": false}),
        json!({"cmd": ["tag", "//depot/a.txt"]}),
        json!({"cmd": ["protect", "-o"]}),
        json!({"cmd": ["protect", "-i"], "input": {"Protections": [
            "super user alice * //...", "write group devs * //depot/..."
        ]}, "tagged": false}),
        json!({"cmd": ["protect", "-o"], "tagged": false}),
        json!({"cmd": ["protect", "-i"], "input": {"Protections": ["bogus line"]}}),
        json!({"cmd": ["groups"]}),
        json!({"cmd": ["protect", "-o"], "user": "bob"}),
    ]);
    ok(&r[0]);
    assert_eq!(ok(&r[1]), &json!(["//depot/a.txt#1 - added"]));
    let labelled = ok(&r[2]).as_array().expect("files").clone();
    assert_eq!(labelled.len(), 1);
    assert_eq!(labelled[0]["depotFile"], "//depot/a.txt");
    assert_eq!(
        ok(&r[3]),
        &json!([{"depotFile": "//depot/b.txt", "rev": "1", "action": "added"}])
    );
    assert_eq!(ok(&r[4]), &json!(["//depot/b.txt#1 - added"]));
    assert!(raised(&r[5]).contains("-l label"), "{:?}", r[5]);
    let form = &ok(&r[6])[0];
    assert!(form["Protections"].is_array(), "{form}");
    assert_eq!(ok(&r[7]), &json!(["Protections saved."]));
    let text = ok(&r[8])[0].as_str().expect("form").to_string();
    assert!(text.contains("\twrite group devs * //depot/..."), "{text}");
    assert!(raised(&r[9]).contains("bogus"), "{:?}", r[9]);
    assert_eq!(ok(&r[10]), &json!([]));
    assert!(raised(&r[11]).contains("super"), "{:?}", r[11]);
    let after = s.drive(&[json!({"cmd": ["protect", "-o"]})]);
    let lines = &ok(&after[0])[0]["Protections"];
    assert_eq!(
        lines.as_array().map(Vec::len),
        Some(2),
        "unchanged: {lines}"
    );
}

#[test]
fn verify_obliterate_and_triggers() {
    let s = P4Server::start();
    let ws = workspace_on(&s.server, s.home.path(), "alice", "alice_ws");
    write(&ws.cwd, "a.txt", "a\n");
    write(&ws.cwd, "gone.txt", "g\n");
    ws.ok(&["add", "a.txt", "gone.txt"]);
    ws.ok(&["submit", "-d", "two"]);
    crate::access::protect(&ws, &["super user alice * //...", "write user bob * //..."]);
    let r = s.drive(&[
        json!({"cmd": ["verify", "//depot/..."], "tagged": false}),
        json!({"cmd": ["verify", "-q", "//depot/..."]}),
        json!({"cmd": ["verify", "//depot/a.txt"]}),
        json!({"cmd": ["obliterate", "//depot/gone.txt"], "tagged": false}),
        json!({"cmd": ["files", "//depot/gone.txt"]}),
        json!({"cmd": ["obliterate", "-y", "//depot/gone.txt"], "tagged": false}),
        json!({"cmd": ["files", "//depot/gone.txt"]}),
        json!({"cmd": ["triggers", "-i"], "input": {"Triggers": [
            "check change-submit //depot/... \"true\""
        ]}, "tagged": false}),
        json!({"cmd": ["triggers", "-o"]}),
        json!({"cmd": ["triggers", "-i"], "input": {"Triggers": ["broken"]}}),
        json!({"cmd": ["obliterate", "-y", "//depot/a.txt"], "user": "bob", "client": ""}),
    ]);
    let lines = ok(&r[0]).as_array().expect("lines").clone();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0]
            .as_str()
            .unwrap()
            .starts_with("//depot/a.txt#1 - add change 1 (text) "),
        "{lines:?}"
    );
    assert_eq!(ok(&r[1]), &json!([]), "nothing damaged");
    let rec = &ok(&r[2])[0];
    assert_eq!(rec["depotFile"], "//depot/a.txt");
    assert_eq!(rec["fileSize"], "2");
    let report = ok(&r[3]).as_array().expect("report").clone();
    assert_eq!(report[0], "//depot/gone.txt#1 - purged");
    assert!(
        report
            .iter()
            .any(|l| l.as_str().unwrap().contains("report mode")),
        "{report:?}"
    );
    assert_eq!(
        ok(&r[4]).as_array().map(Vec::len),
        Some(1),
        "report mode keeps the file"
    );
    assert_eq!(ok(&r[5])[0], "//depot/gone.txt#1 - purged");
    assert_eq!(
        r[6]["warnings"],
        json!(["//depot/gone.txt - no such file(s)."])
    );
    assert_eq!(ok(&r[7]), &json!(["Triggers saved."]));
    let form = &ok(&r[8])[0];
    assert_eq!(
        form["Triggers"],
        json!(["check change-submit //depot/... \"true\""])
    );
    assert!(raised(&r[9]).contains("broken"), "{:?}", r[9]);
    assert!(raised(&r[10]).contains("admin"), "{:?}", r[10]);
}

#[test]
fn group_specs_fetch_save_list_and_delete() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"method": "fetch_group", "args": ["devs"]}),
        json!({"cmd": ["group", "-i"], "input": {
            "Group": "devs", "MaxResults": "5000", "Timeout": "unlimited",
            "Owners": ["alice"], "Users": ["bob", "carol"]
        }, "tagged": false}),
        json!({"method": "fetch_group", "args": ["devs"]}),
        json!({"cmd": ["groups"]}),
        json!({"cmd": ["groups", "-u", "carol"], "tagged": false}),
        json!({"cmd": ["group", "-i"], "input": {"Group": "devs", "MaxResults": "lots"}}),
        json!({"cmd": ["group", "-d", "devs"], "tagged": false}),
        json!({"cmd": ["groups"]}),
    ]);
    let fresh = ok(&r[0]);
    assert_eq!(fresh["spec_class"], "Spec", "{fresh}");
    assert_eq!(fresh["Group"], "devs");
    assert_eq!(ok(&r[1]), &json!(["Group devs saved."]));
    let saved = ok(&r[2]);
    assert_eq!(saved["MaxResults"], "5000");
    assert_eq!(saved["Timeout"], "unlimited");
    assert_eq!(saved["Users"], json!(["bob", "carol"]));
    assert_eq!(saved["Owners"], json!(["alice"]));
    let groups = ok(&r[3]).as_array().expect("groups").clone();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["group"], "devs");
    assert_eq!(ok(&r[4]), &json!(["devs"]));
    assert!(raised(&r[5]).contains("MaxResults 'lots'"), "{:?}", r[5]);
    assert_eq!(ok(&r[6]), &json!(["Group devs deleted."]));
    assert_eq!(ok(&r[7]), &json!([]));
}

/// `configure set/unset/show` reach the server settings Keel has, super users only; a bad
/// value or an unknown name is refused naming it, and `set` takes effect (security 1: a user
/// with a password must use it).
#[test]
fn configure_sets_shows_and_unsets_server_settings() {
    let s = P4Server::start();
    let (ws, _) = s.native_workspace();
    crate::access::protect(&ws, &["super user alice * //...", "write user bob * //..."]);
    let step =
        |args: &[&str], tagged: bool| json!({"cmd": args, "tagged": tagged, "user": "alice"});
    let r = s.drive(&[
        step(&["configure", "set", "any#keys.hide=1"], false),
        step(&["configure", "show"], false),
        step(&["configure", "show", "dm.keys.hide"], true),
        step(&["configure", "set", "security=9"], false),
        step(&["configure", "set", "no.such=1"], false),
        step(&["configure", "set", "other#security=1"], false),
        json!({"cmd": ["configure", "set", "security=1"], "user": "bob"}),
        step(&["configure", "unset", "keys.hide"], false),
        step(&["configure", "show", "dm.keys.hide"], false),
    ]);
    assert_eq!(
        ok(&r[0]),
        &json!(["For server 'any', configuration variable 'keys.hide' set to '1'"])
    );
    let shown = ok(&r[1]).to_string();
    assert!(shown.contains("keys.hide=1 (configure)"), "{shown}");
    assert!(shown.contains("security=0 (default)"), "{shown}");
    assert_eq!(
        ok(&r[2]),
        &json!([{"Type": "configure", "ServerName": "any", "Name": "keys.hide", "Value": "1"}])
    );
    assert!(raised(&r[3]).contains("security"), "{:?}", r[3]);
    assert!(raised(&r[4]).contains("no.such"), "{:?}", r[4]);
    assert!(raised(&r[5]).contains("other#"), "{:?}", r[5]);
    assert!(raised(&r[6]).contains("super"), "{:?}", r[6]);
    assert_eq!(
        ok(&r[7]),
        &json!(["For server 'any', configuration variable 'keys.hide' removed."])
    );
    assert_eq!(ok(&r[8]), &json!(["keys.hide=0 (default)"]));
    // What P4 set, the native CLI sees.
    let native = ws.json(&["configure", "show"]);
    let security = native
        .iter()
        .find(|v| str_field(v, "name") == "security")
        .expect("security listed");
    assert_eq!(str_field(security, "value"), "0");
}

/// `depot -o/-i/-d` through P4Python's `fetch_depot`/`save_depot`: a new local depot is
/// created from its form and listed; a form asking for another type or map, `-d`, and a user
/// without super access are refused, naming what was wrong.
#[test]
fn depot_forms_create_local_depots_and_refuse_what_keel_lacks() {
    let s = P4Server::start();
    let (ws, _) = s.native_workspace();
    crate::access::protect(&ws, &["super user alice * //...", "write user bob * //..."]);
    let alice = |step: Value| {
        let mut step = step;
        step["user"] = json!("alice");
        step
    };
    let r = s.drive(&[
        alice(json!({"method": "fetch_depot", "args": ["proj"]})),
        alice(json!({"method": "save_depot", "args": [{
            "Depot": "proj", "Type": "local", "Map": "proj/...",
            "Description": "Project files."
        }]})),
        alice(json!({"cmd": ["depots"], "tagged": false})),
        alice(json!({"method": "save_depot", "args": [{
            "Depot": "streams", "Type": "stream", "Map": "streams/..."
        }]})),
        alice(json!({"method": "save_depot", "args": [{
            "Depot": "elsewhere", "Type": "local", "Map": "/data/elsewhere/..."
        }]})),
        alice(json!({"cmd": ["depot", "-d", "proj"]})),
        alice(json!({"cmd": ["depot", "-o", "proj"], "tagged": false})),
        json!({"cmd": ["depot", "-o", "other"], "user": "bob"}),
    ]);
    let form = ok(&r[0]);
    assert_eq!(form["Depot"], "proj", "{form}");
    assert_eq!(form["Type"], "local");
    assert_eq!(form["Map"], "proj/...");
    assert_eq!(ok(&r[1]), &json!(["Depot proj saved."]));
    let listed = ok(&r[2]).to_string();
    assert!(
        listed.contains("Depot proj ") && listed.contains("Project files."),
        "{listed}"
    );
    assert!(raised(&r[3]).contains("Type: stream"), "{:?}", r[3]);
    assert!(
        raised(&r[4]).contains("Map: /data/elsewhere/..."),
        "{:?}",
        r[4]
    );
    assert!(raised(&r[5]).contains("obliterate"), "{:?}", r[5]);
    let text = ok(&r[6]).to_string();
    assert!(text.contains("Project files."), "{text}");
    assert!(raised(&r[7]).contains("super"), "{:?}", r[7]);
    // The native CLI lists the depot P4 made.
    let depots = ws.json(&["depots"]);
    assert!(
        depots.iter().any(|d| str_field(d, "name") == "proj"),
        "{depots:?}"
    );
}
