//! End-to-end: `undo` through the real binary: an edit undone by an edit back, an add by a
//! delete, a delete by an add, ranges, `-n`, `-c`, the `undid` history record, and refusals
//! (files already opened, later changes, no rights, bad ranges) that leave nothing opened.

use crate::common::{Client, Fixture, read, str_field, write};

fn submit_edit(c: &Client, rel: &str, content: &str, desc: &str) {
    c.ok(&["edit", rel]);
    write(&c.cwd, rel, content);
    c.ok(&["submit", "-d", desc]);
}

/// f.txt: "one" (change 1), "two" (2), "three" (3); g.txt added in change 4.
fn history() -> (Fixture, Client) {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "f.txt", "one\n");
    a.ok(&["add", "f.txt"]);
    a.ok(&["submit", "-d", "add f"]);
    submit_edit(&a, "f.txt", "two\n", "two");
    submit_edit(&a, "f.txt", "three\n", "three");
    write(&a.cwd, "g.txt", "gee\n");
    a.ok(&["add", "g.txt"]);
    a.ok(&["submit", "-d", "add g"]);
    (fx, a)
}

fn text(c: &Client, rel: &str) -> String {
    String::from_utf8_lossy(&read(&c.cwd, rel)).into_owned()
}

fn opened(c: &Client) -> Vec<String> {
    c.json(&["opened"])
        .iter()
        .map(|r| format!("{} {}", str_field(r, "depotFile"), str_field(r, "action")))
        .collect()
}

#[test]
fn an_edit_is_undone_by_an_edit_back_and_history_says_so() {
    let (_fx, a) = history();
    let out = a.ok(&["undo", "//depot/f.txt#3"]);
    assert!(
        out.contains("//depot/f.txt - opened for edit (undo of #3,#3)"),
        "{out}"
    );
    assert_eq!(text(&a, "f.txt"), "two\n");
    assert_eq!(opened(&a), ["//depot/f.txt edit"]);
    a.ok(&["submit", "-d", "undo three"]);
    assert_eq!(a.ok(&["print", "-q", "//depot/f.txt"]), "two\n");
    let log = a.ok(&["filelog", "//depot/f.txt"]);
    assert!(log.contains("... ... undid //depot/f.txt#3,#3"), "{log}");
    let integrated = a.ok(&["integrated", "//depot/f.txt"]);
    assert!(
        integrated.contains("//depot/f.txt#4 - undid //depot/f.txt#3\n")
            && integrated.contains("//depot/f.txt#3 - undone by //depot/f.txt#4"),
        "{integrated}"
    );
    // annotate sees the restored line as the undo's.
    assert_eq!(a.ok(&["annotate", "-q", "-c", "f.txt"]), "5: two\n");

    // A range restores what the file held before its first revision.
    let out = a.ok(&["undo", "//depot/f.txt#2,#4"]);
    assert!(out.contains("(undo of #2,#4)"), "{out}");
    assert_eq!(text(&a, "f.txt"), "one\n");
    a.ok(&["submit", "-d", "back to one"]);
    assert_eq!(a.ok(&["print", "-q", "//depot/f.txt"]), "one\n");
}

#[test]
fn adds_and_deletes_invert() {
    let (_fx, a) = history();
    // Undoing change 4 (an add) deletes the file, from the workspace too.
    let out = a.ok(&["undo", "@4"]);
    assert!(out.contains("//depot/g.txt - opened for delete"), "{out}");
    assert!(!a.cwd.join("g.txt").exists());
    a.ok(&["submit", "-d", "undo 4"]);
    let files = a.json(&["files", "//depot/g.txt"]);
    assert_eq!(str_field(&files[0], "action"), "delete");
    // Undoing that delete adds the content back.
    let out = a.ok(&["undo", "//depot/g.txt@5"]);
    assert!(out.contains("//depot/g.txt - opened for add"), "{out}");
    assert_eq!(text(&a, "g.txt"), "gee\n");
    a.ok(&["submit", "-d", "undo 5"]);
    assert_eq!(a.ok(&["print", "-q", "//depot/g.txt"]), "gee\n");
}

#[test]
fn preview_and_a_pending_change() {
    let (_fx, a) = history();
    let out = a.ok(&["undo", "-n", "@3,@4"]);
    assert!(
        out.contains("//depot/f.txt - opened for edit (undo of #3,#3)")
            && out.contains("//depot/g.txt - opened for delete (undo of #1,#1)"),
        "{out}"
    );
    assert!(opened(&a).is_empty());
    assert_eq!(text(&a, "f.txt"), "three\n");

    let created = a.json(&["change", "-d", "roll back"]);
    let change = str_field(&created[0], "change");
    a.ok(&["undo", "-c", &change, "@3,@4"]);
    let records = a.json(&["opened"]);
    assert_eq!(records.len(), 2);
    assert!(
        records.iter().all(|r| str_field(r, "change") == change),
        "{records:?}"
    );
    a.ok(&["submit", "-c", &change]);
    assert_eq!(a.ok(&["print", "-q", "//depot/f.txt"]), "two\n");
}

#[test]
fn refusals_name_the_file_and_open_nothing() {
    let (fx, a) = history();
    // g.txt was added in #1 and changed by no later revision; f.txt#1 added the file and
    // later revisions changed it: a delete cannot be merged into them.
    let err = a.fail(&["undo", "//depot/f.txt#1"]);
    assert!(
        err.contains("//depot/f.txt - revision #3 (change 3) changed it after #1,#1")
            && err.contains("cannot be merged"),
        "{err}"
    );
    // One file already opened refuses the whole undo: g.txt is not opened either.
    a.ok(&["edit", "f.txt"]);
    let err = a.fail(&["undo", "@3,@4"]);
    assert!(err.contains("//depot/f.txt - already opened"), "{err}");
    assert_eq!(opened(&a), ["//depot/f.txt edit"]);
    a.ok(&["revert", "f.txt"]);

    for (arg, want) in [
        ("//depot/f.txt", "undo needs the revisions to undo"),
        ("//depot/f.txt#3,#2", "no revision(s) in that range"),
        ("//depot/f.txt#x,#2", "bad revision range"),
        ("//depot/nothing.txt#1", "no such file(s)"),
    ] {
        let err = a.fail(&["undo", arg]);
        assert!(err.contains(arg) && err.contains(want), "{arg}: {err}");
    }
    assert!(opened(&a).is_empty());

    let out = a.run_stdin(
        &["protect", "-i"],
        "Protections:\n\tread user bob * //...\n\twrite user carol * //...\n\
         \t=open user carol * -//depot/g.txt\n\tsuper user alice * //...\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // bob may read but open nothing: the command is refused outright.
    let bob = fx.workspace("bob", "b");
    let err = bob.fail(&["undo", "//depot/f.txt#3"]);
    assert!(
        err.contains("permission") || err.contains("Permission"),
        "{err}"
    );
    // carol may open f.txt but not g.txt: the change's undo names g.txt and opens nothing.
    let carol = fx.workspace("carol", "c");
    carol.ok(&["sync"]);
    let err = carol.fail(&["undo", "@3,@4"]);
    assert!(
        err.contains("//depot/g.txt") && err.contains("permission"),
        "{err}"
    );
    assert!(opened(&carol).is_empty());
}

#[test]
fn later_changes_are_merged_by_resolve() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "f.txt", "a\nb\nc\n");
    a.ok(&["add", "f.txt"]);
    a.ok(&["submit", "-d", "add"]);
    submit_edit(&a, "f.txt", "A\nb\nc\n", "upper a");
    submit_edit(&a, "f.txt", "A\nb\nC\n", "upper c");
    // Undo #2 though #3 came after: opened for edit, to resolve; the file keeps the head.
    let out = a.ok(&["undo", "//depot/f.txt#2"]);
    assert!(
        out.contains("//depot/f.txt - opened for edit (undo of #2,#2; later revisions changed it"),
        "{out}"
    );
    assert_eq!(text(&a, "f.txt"), "A\nb\nC\n");
    let err = a.fail(&["submit", "-d", "too early"]);
    assert!(err.contains("resolve"), "{err}");
    a.ok(&["resolve", "-am"]);
    assert_eq!(text(&a, "f.txt"), "a\nb\nC\n");
    a.ok(&["submit", "-d", "undo upper a"]);
    assert_eq!(a.ok(&["print", "-q", "//depot/f.txt"]), "a\nb\nC\n");
    let log = a.ok(&["filelog", "//depot/f.txt"]);
    assert!(log.contains("... ... undid //depot/f.txt#2,#2"), "{log}");

    // After #5 rewrites the line #3 changed, undoing #3 conflicts: resolve -am leaves it.
    submit_edit(&a, "f.txt", "a\nb\nsee\n", "see");
    a.ok(&["undo", "//depot/f.txt#3"]);
    let out = a.run(&["resolve", "-am"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("conflict") || said.contains("skipped"),
        "{said}"
    );
    assert_eq!(text(&a, "f.txt"), "a\nb\nsee\n");
    let err = a.fail(&["submit", "-d", "unresolved"]);
    assert!(err.contains("resolve"), "{err}");
}
