//! End-to-end: keyword expansion (`+k`, `+ko`). The stored revision holds the unexpanded text
//! (its digest is of that text); `sync` writes the workspace file expanded and `print` shows it
//! expanded; `status` and `reconcile` see no change in an untouched expanded file; an edited
//! file is submitted un-expanded; `+m` gives a synced file its revision's submit time.

use crate::common::{Client, Fixture, read, str_field, write};

const SOURCE: &str = "/* $Id$ */\n\
                      /* $Header$ $Change$ $Revision$ $Author$ $File$ */\n\
                      /* $Date$ $DateTime$ */\n\
                      int main() { return 0; }\n";

fn fstat(c: &Client, file: &str) -> serde_json::Value {
    c.json(&["fstat", file]).remove(0)
}

fn head_digest(c: &Client, file: &str) -> String {
    str_field(&fstat(c, file), "digest")
}

fn blake3_hex(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// `$Date: YYYY/MM/DD $` and `$DateTime: YYYY/MM/DD hh:mm:ss $` of a local expanded file are
/// well formed; returns the text with them replaced by fixed markers.
fn without_dates(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("/* $Date: ") {
            let (date, rest) = rest.split_once(" $ $DateTime: ").expect("DateTime");
            let (datetime, rest) = rest.split_once(" $").expect("end");
            assert_eq!(date.len(), 10, "{line}");
            assert_eq!(&date[4..5], "/", "{line}");
            assert!(datetime.starts_with(date), "{line}");
            assert_eq!(datetime.len(), 19, "{line}");
            out.push_str(&format!("/* DATE DATETIME{rest}\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn keyword_files_are_stored_unexpanded_and_seen_expanded() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "src/main.c", SOURCE);
    write(&a.cwd, "src/only_id.c", "// $Id$ $Author$\n");
    a.ok(&["add", "-t", "ktext", "src/main.c"]);
    a.ok(&["add", "-t", "text+ko", "src/only_id.c"]);
    a.ok(&["submit", "-d", "first"]);
    // The stored revision is the text as written (unexpanded): its digest says so.
    assert_eq!(head_digest(&a, "//depot/src/main.c"), blake3_hex(SOURCE));
    assert_eq!(
        str_field(&fstat(&a, "//depot/src/main.c"), "headType"),
        "text+k"
    );

    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    let synced = String::from_utf8(read(&b.cwd, "src/main.c")).expect("utf-8");
    let want = "/* $Id: //depot/src/main.c#1 $ */\n\
                /* $Header: //depot/src/main.c#1 $ $Change: 1 $ $Revision: #1 $ $Author: alice $ \
                $File: //depot/src/main.c $ */\n\
                /* DATE DATETIME */\n\
                int main() { return 0; }\n";
    assert_eq!(without_dates(&synced), want);
    assert_eq!(
        String::from_utf8(read(&b.cwd, "src/only_id.c")).expect("utf-8"),
        "// $Id: //depot/src/only_id.c#1 $ $Author$\n",
        "+ko expands only $Id$ and $Header$"
    );
    // print shows it expanded too, as the workspace has it.
    let printed = b.ok(&["print", "-q", "//depot/src/main.c"]);
    assert_eq!(printed, synced);
    let printed = b.json(&["print", "//depot/src/main.c"]);
    assert_eq!(str_field(&printed[0], "content"), synced);

    // Untouched expanded files are not changes, for status, reconcile and diff.
    assert!(b.json(&["status"]).is_empty(), "status sees no change");
    assert!(b.json(&["status"]).is_empty(), "nor from its local state");
    b.ok(&["reconcile"]);
    assert!(b.json(&["opened"]).is_empty(), "reconcile opened nothing");

    // An edit keeps the expanded keywords in the file; submit stores it un-expanded.
    b.ok(&["edit", "src/main.c"]);
    assert!(b.ok(&["diff"]).trim().is_empty(), "unchanged edit");
    let edited = synced.replace("return 0;", "return 1;");
    std::fs::write(b.cwd.join("src/main.c"), &edited).expect("write");
    b.ok(&["submit", "-d", "second"]);
    let stored = SOURCE.replace("return 0;", "return 1;");
    assert_eq!(head_digest(&b, "//depot/src/main.c"), blake3_hex(&stored));
    // The submitting workspace shows the new revision's values.
    let after = String::from_utf8(read(&b.cwd, "src/main.c")).expect("utf-8");
    assert!(after.contains("$Id: //depot/src/main.c#2 $"), "{after}");
    assert!(
        after.contains("$Change: 2 $ $Revision: #2 $ $Author: bob $"),
        "{after}"
    );
    assert!(b.json(&["status"]).is_empty(), "clean after submit");

    a.ok(&["sync"]);
    let in_a = String::from_utf8(read(&a.cwd, "src/main.c")).expect("utf-8");
    assert!(in_a.contains("$Id: //depot/src/main.c#2 $"), "{in_a}");
    assert!(in_a.contains("return 1;"), "{in_a}");
    assert!(a.json(&["status"]).is_empty(), "status after sync");
    // An old revision prints with its own values.
    let old = a.ok(&["print", "-q", "//depot/src/main.c#1"]);
    assert!(old.contains("$Id: //depot/src/main.c#1 $"), "{old}");
    assert!(old.contains("$Author: alice $"), "{old}");
}

#[test]
fn a_plus_m_file_gets_its_own_modification_time() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "m.txt", "kept time\n");
    write(&a.cwd, "plain.txt", "no kept time\n");
    // The file's own time, an hour before now, is what `+m` keeps (`modtime.rs` has more).
    let own = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(a.cwd.join("m.txt"))
        .expect("open")
        .set_modified(own)
        .expect("set mtime");
    let own = own
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after epoch")
        .as_secs();
    a.ok(&["add", "-t", "text+m", "m.txt"]);
    a.ok(&["add", "plain.txt"]);
    a.ok(&["submit", "-d", "m"]);
    let time = fstat(&a, "//depot/m.txt")["headTime"]
        .as_u64()
        .expect("headTime");
    // Some time passes between the submit and the sync.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    let mtime = |rel: &str| {
        std::fs::metadata(b.cwd.join(rel))
            .expect("stat")
            .modified()
            .expect("mtime")
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after epoch")
            .as_secs()
    };
    assert_eq!(
        mtime("m.txt"),
        own,
        "+m: the file's own time, recorded at submit"
    );
    assert!(mtime("plain.txt") > time, "others: the time of the sync");
    assert!(b.json(&["status"]).is_empty());
}
