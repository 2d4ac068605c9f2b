//! End-to-end: `keel watch`, a subscription to the changes touching some paths. Each submitted
//! change is delivered once, in change order, with only the files the watcher selected and may
//! list; a watcher resumes after the last change it printed when the server restarts.

use crate::access::protect;
use crate::common::{Client, Fixture, KEEL, str_field, write};
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `keel --json watch ARGS` as `client`, its output piped.
fn watcher(client: &Client, args: &[&str]) -> Child {
    let mut cmd = Command::new(KEEL);
    for (key, _) in std::env::vars() {
        if key.starts_with("KEEL_") {
            cmd.env_remove(key);
        }
    }
    cmd.arg("--json")
        .arg("watch")
        .args(args)
        .current_dir(&client.cwd)
        .env("KEEL_SERVER", &client.addr)
        .env("KEEL_USER", &client.user)
        .env("KEEL_WORKSPACE", &client.workspace)
        .env("KEEL_TRUST", &client.trust)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn keel watch")
}

/// Waits (at most 30 s) for the watcher to exit; its JSON lines and stderr.
fn finish(mut child: Child) -> (Vec<serde_json::Value>, String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if child.try_wait().expect("poll watcher").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let mut err = String::new();
            let _ = child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut err);
            panic!("keel watch did not finish in 30 s; stderr: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    let mut err = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read stdout");
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read stderr");
    let status = child.wait().expect("status");
    assert!(status.success(), "keel watch failed ({status}): {err}");
    let records = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (records, err)
}

/// Adds or edits `files` (relative to the workspace root) and submits them; the change number.
fn submit(ws: &Client, files: &[&str], description: &str) -> u64 {
    for file in files {
        let path = ws.cwd.join(file);
        if path.exists() {
            ws.ok(&["edit", file]);
        } else {
            write(&ws.cwd, file, format!("{file}\n"));
            ws.ok(&["add", file]);
        }
        write(&ws.cwd, file, format!("{file} {description}\n"));
    }
    ws.ok(&["submit", "-d", description]);
    let head = ws.json(&["changes", "-m", "1", "-s", "submitted"]);
    head[0]["change"].as_u64().expect("change number")
}

fn numbers(records: &[serde_json::Value]) -> Vec<u64> {
    records
        .iter()
        .map(|r| r["change"].as_u64().expect("change"))
        .collect()
}

fn files_of(record: &serde_json::Value) -> Vec<String> {
    record["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| str_field(f, "depotFile"))
        .collect()
}

#[test]
fn delivers_each_matching_change_in_order_with_its_matching_files() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    let first = submit(&ws, &["a/one"], "first");
    // Catching up: what was submitted before the watcher started comes at once.
    let (caught_up, _) = finish(watcher(
        &ws,
        &["--since", "0", "--count", "1", "//depot/a/..."],
    ));
    assert_eq!(numbers(&caught_up), vec![first]);
    assert_eq!(files_of(&caught_up[0]), vec!["//depot/a/one"]);
    assert_eq!(str_field(&caught_up[0], "desc"), "first");

    let child = watcher(
        &ws,
        &[
            "--since",
            &first.to_string(),
            "--count",
            "2",
            "//depot/a/...",
        ],
    );
    let other = submit(&ws, &["b/two"], "elsewhere");
    let second = submit(&ws, &["a/one", "a/three"], "second");
    let third = submit(&ws, &["a/one", "b/two"], "third");
    let (records, _) = finish(child);
    assert_eq!(
        numbers(&records),
        vec![second, third],
        "not {other}, which touches only b/"
    );
    assert_eq!(
        files_of(&records[0]),
        vec!["//depot/a/one", "//depot/a/three"]
    );
    assert_eq!(
        files_of(&records[1]),
        vec!["//depot/a/one"],
        "b/two is not watched"
    );
    assert_eq!(str_field(&records[1], "user"), "alice");
    assert_eq!(str_field(&records[1], "client"), "alice-ws");
    assert_eq!(records[1]["files"][0]["action"], "edit");

    // Several paths in one subscription, each change once.
    let (both, _) = finish(watcher(
        &ws,
        &[
            "--since",
            &first.to_string(),
            "--count",
            "3",
            "//depot/a/...",
            "//depot/b/...",
        ],
    ));
    assert_eq!(numbers(&both), vec![other, second, third]);
}

#[test]
fn a_watcher_sees_only_changes_and_files_it_may_list() {
    let fx = Fixture::new();
    let alice = fx.workspace("alice", "alice-ws");
    let start = submit(&alice, &["pub/a"], "public");
    protect(
        &alice,
        &[
            "write user * * //...",
            "list user bob * -//depot/secret/...",
            "super user alice * //...",
        ],
    );
    let bob = fx.workspace("bob", "bob-ws");
    let child = watcher(
        &bob,
        &["--since", &start.to_string(), "--count", "1", "//depot/..."],
    );
    let secret_only = submit(&alice, &["secret/s"], "secret only");
    let mixed = submit(&alice, &["secret/s", "pub/a"], "mixed");
    let (records, _) = finish(child);
    assert_eq!(
        numbers(&records),
        vec![mixed],
        "{secret_only} touches only what bob may not list"
    );
    assert_eq!(files_of(&records[0]), vec!["//depot/pub/a"]);
    // A watch of the hidden path alone delivers nothing (alice's shows it is there).
    let (for_alice, _) = finish(watcher(
        &alice,
        &[
            "--since",
            &start.to_string(),
            "--count",
            "2",
            "//depot/secret/...",
        ],
    ));
    assert_eq!(numbers(&for_alice), vec![secret_only, mixed]);
    let hidden = watcher(&bob, &["--since", &start.to_string(), "//depot/secret/..."]);
    let after = submit(&alice, &["pub/a"], "after");
    // bob's watcher of both paths gets `after` next, so the secret one had nothing for him.
    let (next, _) = finish(watcher(
        &bob,
        &[
            "--since",
            &mixed.to_string(),
            "--count",
            "1",
            "//depot/secret/...",
            "//depot/pub/...",
        ],
    ));
    assert_eq!(numbers(&next), vec![after]);
    let mut hidden = hidden;
    assert!(
        hidden.try_wait().expect("poll").is_none(),
        "still waiting, nothing delivered"
    );
    hidden.kill().expect("stop the hidden watcher");
    let mut out = String::new();
    hidden
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    let _ = hidden.wait();
    assert!(
        out.trim().is_empty(),
        "bob saw something of //depot/secret/: {out}"
    );

    // Without list rights anywhere, the subscription is refused.
    protect(
        &alice,
        &["write user alice * //...", "super user alice * //..."],
    );
    let carol = fx.server.client("carol", "", fx.dir.path());
    let err = carol.fail(&["watch", "--since", "0", "//depot/..."]);
    assert!(err.contains("Watch") || err.contains("list"), "{err}");
}

#[test]
fn a_watcher_resumes_after_a_restart_without_a_gap() {
    let mut fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    let start = submit(&ws, &["a/f"], "start");
    let child = watcher(
        &ws,
        &[
            "--since",
            &start.to_string(),
            "--count",
            "3",
            "//depot/a/...",
        ],
    );
    let one = submit(&ws, &["a/f"], "one");
    // Bounded wait until the watcher has the first one (its output is read only at the end,
    // so ask the server instead: a second watcher returns as soon as change `one` exists).
    let (seen, _) = finish(watcher(
        &ws,
        &[
            "--since",
            &start.to_string(),
            "--count",
            "1",
            "//depot/a/...",
        ],
    ));
    assert_eq!(numbers(&seen), vec![one]);
    fx.server.restart_same_address();
    let two = submit(&ws, &["a/f"], "two");
    let three = submit(&ws, &["a/f", "a/g"], "three");
    let (records, stderr) = finish(child);
    assert_eq!(numbers(&records), vec![one, two, three], "stderr: {stderr}");
}

#[test]
fn bad_arguments_are_refused_with_what_was_wrong() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    submit(&ws, &["a/f"], "start");
    let err = ws.fail(&["watch", "//depot/a/...@1"]);
    assert!(
        err.contains("//depot/a/...@1") && err.contains("without a revision"),
        "{err}"
    );
    let err = ws.fail(&["watch", "//nosuch/..."]);
    assert!(err.contains("nosuch"), "{err}");
    let err = ws.fail(&["watch"]);
    assert!(err.contains("FILES"), "{err}");
}

#[test]
fn a_watcher_on_a_replica_hears_of_changes_submitted_on_the_primary() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    let start = submit(&ws, &["a/f"], "start");
    let replica =
        crate::common::Server::start_replica(&fx.dir.path().join("replica"), &fx.server.addr, &[])
            .expect("replica starts");
    let on_replica = crate::replica::replica_client(&replica, &ws);
    crate::replica::wait_caught_up(&ws, &on_replica);
    let child = watcher(
        &on_replica,
        &[
            "--since",
            &start.to_string(),
            "--count",
            "2",
            "//depot/a/...",
        ],
    );
    let one = submit(&ws, &["a/f"], "one");
    let two = submit(&ws, &["a/g"], "two");
    let (records, _) = finish(child);
    assert_eq!(numbers(&records), vec![one, two]);
}
