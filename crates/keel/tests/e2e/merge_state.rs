//! End-to-end: `istat` (what needs merging, both ways, under a branch spec or two paths),
//! `interchanges` and `integrate` no longer taking the change that created a branch as owed
//! back to its source, and `prune` (preview, -y, refusals for an opened file and a non-admin, edited
//! branch files kept, content that survives an obliterate of the source).

use crate::access::protect;
use crate::common::{Client, Fixture, str_field, write};

fn edit(c: &Client, rel: &str, content: &str, desc: &str) {
    c.ok(&["edit", rel]);
    write(&c.cwd, rel, content);
    c.ok(&["submit", "-d", desc]);
}

/// `main/a.txt`, `main/b.txt` (change 1), branched to `rel` (change 2), and the `rel` spec.
fn main_and_rel(fx: &Fixture) -> Client {
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/a.txt", "a1\n");
    write(&a.cwd, "main/b.txt", "b1\n");
    a.ok(&["add", "main/..."]);
    a.ok(&["submit", "-d", "main line"]); // 1
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch rel"]); // 2
    a.ok(&[
        "branch",
        "create",
        "rel",
        "--view",
        "//depot/main/... //depot/rel/...",
    ]);
    a
}

/// (merge from source: changes, newest; copy to source: changes, newest)
fn flows(c: &Client, args: &[&str]) -> ((String, String), (String, String)) {
    let mut all = vec!["istat"];
    all.extend_from_slice(args);
    let records = c.json(&all);
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!(
        str_field(r, "needs_merge_from_source"),
        (str_field(r, "merge_from_source_changes") != "0").to_string()
    );
    assert_eq!(
        str_field(r, "needs_copy_to_source"),
        (str_field(r, "copy_to_source_changes") != "0").to_string()
    );
    let newest = |k: &str| r.get(k).map_or(String::new(), |v| v.to_string());
    (
        (
            str_field(r, "merge_from_source_changes"),
            newest("newest_from_source"),
        ),
        (
            str_field(r, "copy_to_source_changes"),
            newest("newest_to_source"),
        ),
    )
}

fn none() -> (String, String) {
    ("0".to_string(), String::new())
}

fn pending(count: &str, newest: &str) -> (String, String) {
    (count.to_string(), newest.to_string())
}

#[test]
fn interchanges_does_not_owe_the_branching_change_back() {
    let fx = Fixture::new();
    let a = main_and_rel(&fx);
    let changes = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["interchanges"];
        all.extend_from_slice(args);
        a.json(&all)
            .iter()
            .map(|r| str_field(r, "change"))
            .collect()
    };
    assert!(changes(&["-b", "rel", "-r"]).is_empty(), "branching change");
    assert!(changes(&["//depot/rel/...", "//depot/main/..."]).is_empty());
    // integrate agrees: nothing to bring back.
    a.ok(&["sync"]);
    let err = a.fail(&["integrate", "-n", "-b", "rel", "-r"]);
    assert!(err.contains("already integrated"), "{err}");
    // rel's own work is still owed back, and a copy from main is not.
    edit(&a, "rel/a.txt", "a-rel\n", "rel work"); // 3
    assert_eq!(changes(&["-b", "rel", "-r"]), ["3"]);
    edit(&a, "main/b.txt", "b2\n", "main work"); // 4
    a.ok(&["copy", "//depot/main/b.txt", "//depot/rel/b.txt"]);
    a.ok(&["submit", "-d", "copy b down"]); // 5
    assert_eq!(changes(&["-b", "rel", "-r"]), ["3"]);
    assert!(changes(&["-b", "rel"]).is_empty());
}

#[test]
fn istat_reports_both_directions() {
    let fx = Fixture::new();
    let a = main_and_rel(&fx);
    assert_eq!(flows(&a, &["-b", "rel"]), (none(), none()));

    edit(&a, "main/a.txt", "a2\n", "main fix"); // 3
    edit(&a, "main/a.txt", "a3\n", "main fix 2"); // 4
    edit(&a, "rel/b.txt", "b-rel\n", "rel work"); // 5
    assert_eq!(
        flows(&a, &["-b", "rel"]),
        (pending("2", "4"), pending("1", "5"))
    );
    // -r swaps the sides; two paths ask the same question.
    assert_eq!(
        flows(&a, &["-b", "rel", "-r"]),
        (pending("1", "5"), pending("2", "4"))
    );
    assert_eq!(
        flows(&a, &["//depot/main/...", "//depot/rel/..."]),
        (pending("2", "4"), pending("1", "5"))
    );
    let text = a.ok(&["istat", "-b", "rel"]);
    assert!(
        text.contains("//depot/main/... -> //depot/rel/...: 2 changes (newest 4) to merge"),
        "{text}"
    );
    assert!(
        text.contains("//depot/rel/... -> //depot/main/...: 1 change (change 5) to copy back"),
        "{text}"
    );

    // Merging main down (rel/a had no work of its own: resolve copies main's) leaves only
    // rel's change to copy back.
    a.ok(&["integrate", "-b", "rel"]);
    a.ok(&["resolve", "-am"]);
    a.ok(&["submit", "-d", "merge down"]); // 6
    assert_eq!(flows(&a, &["-b", "rel"]), (none(), pending("1", "5")));

    // Refusals name what is wrong.
    let err = a.fail(&["istat", "-b", "nosuch"]);
    assert!(err.contains("nosuch"), "{err}");
    let err = a.fail(&["istat", "//depot/main/..."]);
    assert!(err.contains("SOURCE TARGET"), "{err}");
    let err = a.fail(&["istat", "//depot/main/...@3", "//depot/rel/..."]);
    assert!(err.contains("//depot/main/...@3"), "{err}");

    // A user who may not list rel sees nothing owed either way.
    protect(
        &a,
        &[
            "write user * * //...",
            "list user bob * -//depot/rel/...",
            "super user alice * //...",
        ],
    );
    let bob = fx.server.client("bob", "", fx.dir.path());
    assert_eq!(flows(&bob, &["-b", "rel"]), (none(), none()));
}

fn pruned(c: &Client, args: &[&str]) -> (Vec<String>, serde_json::Value) {
    let mut all = vec!["prune"];
    all.extend_from_slice(args);
    let records = c.json(&all);
    let (summary, files): (Vec<_>, Vec<_>) =
        records.into_iter().partition(|r| r.get("files").is_some());
    let files = files.iter().map(|r| str_field(r, "depotFile")).collect();
    (files, summary.into_iter().next().expect("a summary"))
}

#[test]
fn prune_removes_only_unmodified_branched_files() {
    let fx = Fixture::new();
    let a = main_and_rel(&fx);
    write(&a.cwd, "main/c.txt", "c1\n");
    a.ok(&["add", "main/c.txt"]);
    a.ok(&["submit", "-d", "add c"]); // 3
    a.ok(&["populate", "//depot/main/c.txt", "//depot/rel/c.txt"]); // 4
    edit(&a, "rel/a.txt", "a-rel\n", "rel work"); // 5

    // The preview lists b and c (a has its own revision) and changes nothing.
    let (files, summary) = pruned(&a, &["//depot/rel/..."]);
    assert_eq!(files, ["//depot/rel/b.txt", "//depot/rel/c.txt"]);
    assert_eq!(str_field(&summary, "reportOnly"), "true");
    let text = a.ok(&["prune", "//depot/rel/..."]);
    assert!(
        text.contains(
            "//depot/rel/b.txt#1 - would be pruned (unmodified copy of //depot/main/b.txt#1)"
        ),
        "{text}"
    );
    assert!(text.contains("Use -y"), "{text}");
    assert_eq!(a.json(&["files", "//depot/rel/..."]).len(), 3);
    // Main's own files are nobody's copies.
    let (files, _) = pruned(&a, &["//depot/main/..."]);
    assert!(files.is_empty(), "{files:?}");

    // An opened candidate refuses the whole prune, naming it.
    a.ok(&["sync"]);
    a.ok(&["edit", "rel/c.txt"]);
    let err = a.fail(&["prune", "-y", "//depot/rel/..."]);
    assert!(err.contains("//depot/rel/c.txt"), "{err}");
    assert!(err.contains("alice@a"), "{err}");
    assert_eq!(a.json(&["files", "//depot/rel/..."]).len(), 3);
    a.ok(&["revert", "rel/c.txt"]);

    // A user without admin is refused; nothing goes.
    protect(&a, &["write user * * //...", "super user alice * //..."]);
    let bob = fx.server.client("bob", "", fx.dir.path());
    let err = bob.fail(&["prune", "-y", "//depot/rel/..."]);
    assert!(err.contains("Prune needs admin access"), "{err}");
    assert_eq!(a.json(&["files", "//depot/rel/..."]).len(), 3);

    // Bad arguments name themselves.
    let err = a.fail(&["prune", "//depot/rel/...#1"]);
    assert!(err.contains("//depot/rel/...#1"), "{err}");
    let err = a.fail(&["prune", "//depot/nowhere/..."]);
    assert!(err.contains("//depot/nowhere/..."), "{err}");

    let (files, summary) = pruned(&a, &["-y", "//depot/rel/..."]);
    assert_eq!(files, ["//depot/rel/b.txt", "//depot/rel/c.txt"]);
    assert_eq!(str_field(&summary, "reportOnly"), "false");
    assert_eq!(str_field(&summary, "revisionRecDeleted"), "2");
    let left: Vec<String> = a
        .json(&["files", "//depot/rel/..."])
        .iter()
        .map(|r| str_field(r, "depotFile"))
        .collect();
    assert_eq!(left, ["//depot/rel/a.txt"]);
    // Lazy copies shared no content of their own: main's files are whole.
    assert_eq!(a.ok(&["print", "-q", "//depot/main/b.txt"]), "b1\n");
    assert_eq!(a.ok(&["print", "-q", "//depot/main/c.txt"]), "c1\n");

    // Obliterating the source afterwards keeps the branch's content, lazy copy included.
    a.ok(&["obliterate", "-y", "//depot/main/..."]);
    assert_eq!(a.ok(&["print", "-q", "//depot/rel/a.txt#1"]), "a1\n");
    assert_eq!(a.ok(&["print", "-q", "//depot/rel/a.txt"]), "a-rel\n");
    a.ok(&["verify", "-q", "//depot/..."]);
}
