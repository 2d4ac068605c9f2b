//! End-to-end: `keel changes --since N PATH...` and `--since-file`: for each path, the
//! submitted changes after its number that touch it, newest first, in one call.

use crate::access::protect;
use crate::common::{Client, Fixture, str_field, submit_files};

/// (path, change) pairs of a `changes --since` answer, in order.
fn answer(ws: &Client, args: &[&str]) -> Vec<(String, u64)> {
    let mut all = vec!["changes"];
    all.extend_from_slice(args);
    ws.json(&all)
        .iter()
        .map(|r| (str_field(r, "path"), r["change"].as_u64().expect("change")))
        .collect()
}

#[test]
fn per_path_changes_after_n_newest_first_in_one_call() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    let c1 = submit_files(&ws, &["a/f", "b/f"], "one");
    let c2 = submit_files(&ws, &["a/f"], "two");
    let c3 = submit_files(&ws, &["b/f", "c/f"], "three");
    let c4 = submit_files(&ws, &["a/f"], "four");
    let (a, b, c) = ("//depot/a/...", "//depot/b/...", "//depot/c/...");
    assert_eq!(
        answer(&ws, &["--since", &c1.to_string(), a, b, c]),
        vec![
            (a.to_string(), c4),
            (a.to_string(), c2),
            (b.to_string(), c3),
            (c.to_string(), c3)
        ]
    );
    // -m limits each path.
    assert_eq!(
        answer(&ws, &["--since", "0", "-m", "1", a, b]),
        vec![(a.to_string(), c4), (b.to_string(), c3)]
    );
    // Nothing newer: nothing listed.
    assert!(answer(&ws, &["--since", &c4.to_string(), a, b, c]).is_empty());
    // Each path its own N.
    let list = ws.cwd.join("plans.txt");
    std::fs::write(
        &list,
        format!("# plan paths\n{a} {c2}\n\n{b} 0\n{c} {c3}\n"),
    )
    .expect("write plans");
    let records = ws.json(&["changes", "--since-file", list.to_str().expect("utf-8")]);
    let got: Vec<(String, u64, u64)> = records
        .iter()
        .map(|r| {
            (
                str_field(r, "path"),
                r["change"].as_u64().expect("change"),
                r["since"].as_u64().expect("since"),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (a.to_string(), c4, c2),
            (b.to_string(), c3, 0),
            (b.to_string(), c1, 0)
        ]
    );
    // The text form names the path on each line.
    let text = ws.ok(&["changes", "--since", &c3.to_string(), a]);
    assert!(text.starts_with(&format!("{a} Change {c4} on ")), "{text}");
    assert!(text.contains("by alice@alice-ws 'four'"), "{text}");
}

#[test]
fn paths_a_user_may_not_list_have_no_changes_for_them() {
    let fx = Fixture::new();
    let alice = fx.workspace("alice", "alice-ws");
    let c1 = submit_files(&alice, &["pub/a", "secret/s"], "both");
    let c2 = submit_files(&alice, &["secret/s"], "secret");
    protect(
        &alice,
        &[
            "write user * * //...",
            "list user bob * -//depot/secret/...",
            "super user alice * //...",
        ],
    );
    let bob = fx.workspace("bob", "bob-ws");
    let got = answer(&bob, &["--since", "0", "//depot/secret/...", "//depot/..."]);
    assert_eq!(got, vec![("//depot/...".to_string(), c1)], "not {c2}");
    assert_eq!(
        answer(&alice, &["--since", "0", "//depot/secret/..."]),
        vec![
            ("//depot/secret/...".to_string(), c2),
            ("//depot/secret/...".to_string(), c1)
        ]
    );
}

#[test]
fn bad_input_names_the_line_or_the_path_and_lists_nothing() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "alice-ws");
    submit_files(&ws, &["a/f"], "one");
    let list = ws.cwd.join("plans.txt");
    std::fs::write(&list, "//depot/a/... 0\n//depot/b/... seven\n").expect("write");
    let out = ws.run(&["changes", "--since-file", list.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "nothing listed before the refusal");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2") && err.contains("seven"), "{err}");
    std::fs::write(&list, "//depot/a/...\n").expect("write");
    let err = ws.fail(&["changes", "--since-file", list.to_str().expect("utf-8")]);
    assert!(
        err.contains("line 1") && err.contains("FILESPEC N"),
        "{err}"
    );
    // A path with a revision, or an unknown depot, refuses the whole call.
    let out = ws.run(&[
        "changes",
        "--since",
        "0",
        "//depot/a/...",
        "//depot/a/...@1",
    ]);
    assert!(!out.status.success() && out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("//depot/a/...@1"));
    let err = ws.fail(&["changes", "--since", "0", "//depot/a/...", "//nosuch/..."]);
    assert!(err.contains("nosuch"), "{err}");
    let err = ws.fail(&["changes", "--since", "0"]);
    assert!(err.contains("needs one or more paths"), "{err}");
    let err = ws.fail(&["changes", "--since", "0", "-u", "alice", "//depot/..."]);
    assert!(err.contains("--since") && err.contains("-u"), "{err}");
}
