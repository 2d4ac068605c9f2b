//! End-to-end: `annotate` (blame) through the real binary: revisions and changes per line,
//! `-a` ranges, `-q`, `-u`, revision ranges, `-i`/`-I` into branch and merge sources, binary
//! files, refusals by the protections table and bad ranges.

use crate::common::{Client, Fixture, str_field, write};

fn submit_edit(c: &Client, rel: &str, content: &str, desc: &str) {
    c.ok(&["edit", rel]);
    write(&c.cwd, rel, content);
    c.ok(&["submit", "-d", desc]);
}

/// `//depot/main/f.txt` in three changes (1, 2, 3): one line added, one changed.
fn three_revisions() -> (Fixture, Client) {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/f.txt", "one\ntwo\nthree\n");
    a.ok(&["add", "main/f.txt"]);
    a.ok(&["submit", "-d", "add"]);
    submit_edit(&a, "main/f.txt", "one\ntwo\nthree\nfour\n", "append");
    submit_edit(&a, "main/f.txt", "one\nTWO\nthree\nfour\n", "change two");
    (fx, a)
}

#[test]
fn lines_carry_the_revision_that_added_them() {
    let (_fx, a) = three_revisions();
    let out = a.ok(&["annotate", "//depot/main/f.txt"]);
    assert_eq!(
        out,
        "//depot/main/f.txt#3 - edit change 3 (text)\n1: one\n3: TWO\n1: three\n2: four\n"
    );
    // -q drops the header; a revision annotates that revision; the blame alias is the same.
    let out = a.ok(&["blame", "-q", "//depot/main/f.txt#2"]);
    assert_eq!(out, "1: one\n1: two\n1: three\n2: four\n");
    // -a: every line ever, with the revisions holding it, where it stood.
    let out = a.ok(&["annotate", "-a", "-q", "//depot/main/f.txt"]);
    assert_eq!(out, "1-3: one\n1-2: two\n3-3: TWO\n1-3: three\n2-3: four\n");
    // -u: user and date of the change.
    let out = a.ok(&["annotate", "-u", "-q", "-c", "main/f.txt"]);
    let first = out.lines().next().expect("a line");
    let parts: Vec<&str> = first.splitn(4, ' ').collect();
    assert_eq!(
        (parts[0], parts[1], parts[3]),
        ("1:", "alice", "one"),
        "{out}"
    );
    assert_eq!(parts[2].len(), 10, "a YYYY/MM/DD date: {out}");

    // --json: the header, then one object per line.
    let records = a.json(&["annotate", "//depot/main/f.txt"]);
    assert_eq!(records.len(), 5);
    assert_eq!(str_field(&records[0], "depotFile"), "//depot/main/f.txt");
    assert_eq!(str_field(&records[0], "rev"), "3");
    let lines: Vec<(String, String, String)> = records[1..]
        .iter()
        .map(|r| {
            (
                str_field(r, "lowerRev"),
                str_field(r, "lowerChange"),
                str_field(r, "data"),
            )
        })
        .collect();
    let want = [
        ("1", "1", "one"),
        ("3", "3", "TWO"),
        ("1", "1", "three"),
        ("2", "2", "four"),
    ];
    assert_eq!(
        lines,
        want.map(|(r, c, d)| (r.to_string(), c.to_string(), d.to_string()))
    );
}

#[test]
fn ranges_start_the_history_late_and_bad_ones_are_named() {
    let (_fx, a) = three_revisions();
    // Lines older than the range belong to its first revision.
    let out = a.ok(&["annotate", "-q", "//depot/main/f.txt#2,#3"]);
    assert_eq!(out, "2: one\n3: TWO\n2: three\n2: four\n");
    let out = a.ok(&["annotate", "-q", "-c", "//depot/main/f.txt@2,@3"]);
    assert_eq!(out, "2: one\n3: TWO\n2: three\n2: four\n");
    let out = a.ok(&["annotate", "-q", "//depot/main/f.txt#1,2"]);
    assert_eq!(out, "1: one\n1: two\n1: three\n2: four\n");

    for (arg, want) in [
        ("//depot/main/f.txt#3,#2", "no revision(s) in that range"),
        ("//depot/main/f.txt#x,#2", "bad revision range"),
        ("//depot/main/f.txt#1,#", "bad revision range"),
        ("//depot/main/f.txt@9,@12", "no revision(s) in that range"),
    ] {
        let err = a.fail(&["annotate", arg]);
        assert!(err.contains(arg) && err.contains(want), "{arg}: {err}");
    }
    let err = a.fail(&["annotate", "//depot/main/nothing.txt"]);
    assert!(
        err.contains("//depot/main/nothing.txt - no such file(s)"),
        "{err}"
    );
    let err = a.fail(&["annotate", "-a", "-I", "//depot/main/f.txt"]);
    assert!(err.contains("-I") && err.contains("-a"), "{err}");
}

/// main: f.txt added (1) and edited (2); branched to rel (3); rel edited (4); main edited (5)
/// and merged into rel (6).
fn branched() -> (Fixture, Client) {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/f.txt", "base\n");
    a.ok(&["add", "main/f.txt"]);
    a.ok(&["submit", "-d", "add"]);
    submit_edit(&a, "main/f.txt", "base\nmain two\n", "main two");
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch rel"]);
    submit_edit(&a, "rel/f.txt", "base\nmain two\nrel line\n", "rel line");
    submit_edit(&a, "main/f.txt", "main top\nbase\nmain two\n", "main top");
    a.ok(&["merge", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["resolve", "-am"]);
    a.ok(&["submit", "-d", "merge main"]);
    (fx, a)
}

#[test]
fn follow_branches_and_integrations_into_their_sources() {
    let (_fx, a) = branched();
    let rel = "//depot/rel/f.txt";
    assert_eq!(
        a.ok(&["annotate", "-q", "-c", rel]),
        "6: main top\n3: base\n3: main two\n4: rel line\n"
    );
    // -i: the branch's lines come from main's changes; the merged line is the merge's.
    assert_eq!(
        a.ok(&["annotate", "-q", "-i", rel]),
        "6: main top\n1: base\n2: main two\n4: rel line\n"
    );
    // -I: the merged line too comes from the change on main that wrote it.
    assert_eq!(
        a.ok(&["annotate", "-q", "-I", rel]),
        "5: main top\n1: base\n2: main two\n4: rel line\n"
    );
    let records = a.json(&["annotate", "-q", "-I", rel]);
    assert_eq!(str_field(&records[0], "lowerFile"), "//depot/main/f.txt");
    assert!(records[3].get("lowerFile").is_none(), "{:?}", records[3]);
}

#[test]
fn protections_refuse_unreadable_files_and_hide_unreadable_sources() {
    let (fx, a) = branched();
    let out = a.run_stdin(
        &["protect", "-i"],
        "Protections:\n\twrite user * * //...\n\tlist user bob * -//depot/main/...\n\
         \tlist user carol * -//depot/rel/...\n\t=read user dave * -//depot/main/...\n\
         \tsuper user alice * //...\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bob = fx.server.client("bob", "", &a.cwd);
    // bob reads rel but not main: -I does not follow into main, and never names it.
    assert_eq!(
        bob.ok(&["annotate", "-q", "-I", "//depot/rel/f.txt"]),
        "6: main top\n3: base\n3: main two\n4: rel line\n"
    );
    let records = bob.json(&["annotate", "-I", "//depot/rel/f.txt"]);
    assert!(
        records
            .iter()
            .all(|r| !r.to_string().contains("//depot/main")),
        "{records:?}"
    );
    // dave may list main but not read it: refused, by name.
    let dave = fx.server.client("dave", "", &a.cwd);
    let err = dave.fail(&["annotate", "//depot/main/f.txt"]);
    assert!(
        err.contains("//depot/main/f.txt") && err.contains("permission"),
        "{err}"
    );
    // carol may not even list rel: it does not exist for her.
    let carol = fx.server.client("carol", "", &a.cwd);
    let err = carol.fail(&["annotate", "//depot/rel/f.txt"]);
    assert!(err.contains("//depot/rel/f.txt - no such file(s)"), "{err}");
}

#[test]
fn binary_files_need_t() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "b.bin", "x\0y\nz\n");
    a.ok(&["add", "-t", "binary", "b.bin"]);
    a.ok(&["submit", "-d", "binary"]);
    assert_eq!(
        a.ok(&["annotate", "//depot/b.bin"]),
        "//depot/b.bin#1 - add change 1 (binary)\n"
    );
    assert_eq!(
        a.ok(&["annotate", "-q", "-t", "//depot/b.bin"]),
        "1: x\0y\n1: z\n"
    );
}

#[test]
fn many_long_lines_arrive_whole_and_in_order() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    // 1,500 lines of 1 KiB: several reply messages, split by line count and by size.
    let lines: Vec<String> = (0..1500)
        .map(|i| format!("{i:04}{}", "x".repeat(1020)))
        .collect();
    write(&a.cwd, "long.txt", lines.join("\n") + "\n");
    a.ok(&["add", "long.txt"]);
    a.ok(&["submit", "-d", "long"]);
    let out = a.ok(&["annotate", "-q", "long.txt"]);
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), 1500);
    for (i, line) in got.iter().enumerate() {
        assert_eq!(*line, format!("1: {}", lines[i]), "line {i}");
    }
}
