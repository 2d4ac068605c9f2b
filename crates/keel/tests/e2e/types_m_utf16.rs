//! End-to-end: `utf16` files are stored as UTF-8 (digest and MD5 of the UTF-8) and written to
//! workspaces as UTF-16LE with a byte order mark; an untouched synced file is no change; an
//! edited one is submitted as UTF-8; a file that is not valid UTF-16 is refused by name and
//! nothing is submitted.

use crate::common::{Client, Fixture, read, str_field, write};

const TEXT: &str = "caf\u{e9} \u{20ac} \u{1F600}\nsecond line\n";

fn utf16le_bom(text: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    for unit in text.encode_utf16() {
        out.extend_from_slice(&unit.to_le_bytes());
    }
    out
}

fn utf16be_bom(text: &str) -> Vec<u8> {
    let mut out = vec![0xFE, 0xFF];
    for unit in text.encode_utf16() {
        out.extend_from_slice(&unit.to_be_bytes());
    }
    out
}

fn fstat(c: &Client, file: &str) -> serde_json::Value {
    c.json(&["fstat", file]).remove(0)
}

fn md5_upper(data: &[u8]) -> String {
    use md5::{Digest, Md5};
    hex::encode_upper(Md5::digest(data))
}

#[test]
fn utf16_files_are_stored_as_utf8_and_synced_as_utf16() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    // Added big-endian: detected as utf16 by its byte order mark, stored as UTF-8.
    write(&a.cwd, "doc/notes.txt", utf16be_bom(TEXT));
    a.ok(&["add", "doc/notes.txt"]);
    a.ok(&["submit", "-d", "first"]);
    let st = fstat(&a, "//depot/doc/notes.txt");
    assert_eq!(str_field(&st, "headType"), "utf16");
    assert_eq!(
        str_field(&st, "digest"),
        blake3::hash(TEXT.as_bytes()).to_hex().to_string()
    );
    assert_eq!(
        str_field(&st, "md5").to_uppercase(),
        md5_upper(TEXT.as_bytes())
    );
    assert_eq!(str_field(&st, "fileSize"), TEXT.len().to_string());

    // Another workspace gets UTF-16LE with a byte order mark; print shows the text.
    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    assert_eq!(read(&b.cwd, "doc/notes.txt"), utf16le_bom(TEXT));
    assert_eq!(b.ok(&["print", "-q", "//depot/doc/notes.txt"]), TEXT);
    let out = b.cwd.join("printed.txt");
    b.ok(&[
        "print",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "//depot/doc/notes.txt",
    ]);
    assert_eq!(std::fs::read(&out).unwrap(), utf16le_bom(TEXT));
    std::fs::remove_file(&out).unwrap();

    // Untouched, it is no change to status, reconcile or diff.
    let status = b.json(&["status"]);
    assert!(
        status.is_empty(),
        "untouched utf16 file seen as changed: {status:?}"
    );
    assert!(b.json(&["reconcile", "-n"]).is_empty());
    b.ok(&["edit", "doc/notes.txt"]);
    assert!(b.json(&["diff"]).is_empty(), "no change before the edit");

    // Edited in the workspace form, it is compared and submitted as UTF-8.
    let edited = format!("{TEXT}third \u{e8}\n");
    write(&b.cwd, "doc/notes.txt", utf16le_bom(&edited));
    let diff = b.json(&["diff"]);
    assert_eq!(diff.len(), 1, "{diff:?}");
    let text = str_field(&diff[0], "diff");
    assert!(text.contains("+third \u{e8}"), "{text}");
    b.ok(&["submit", "-d", "second"]);
    let st = fstat(&b, "//depot/doc/notes.txt");
    assert_eq!(
        str_field(&st, "digest"),
        blake3::hash(edited.as_bytes()).to_hex().to_string()
    );
    assert_eq!(read(&b.cwd, "doc/notes.txt"), utf16le_bom(&edited));
    a.ok(&["sync"]);
    assert_eq!(read(&a.cwd, "doc/notes.txt"), utf16le_bom(&edited));
}

#[test]
fn invalid_utf16_is_refused_by_name_and_nothing_is_submitted() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "good.txt", utf16le_bom("fine\n"));
    write(&a.cwd, "plain.txt", "plain\n");
    a.ok(&["add", "good.txt"]);
    a.ok(&["add", "plain.txt"]);
    a.ok(&["submit", "-d", "first"]);

    // An unpaired surrogate, then an odd length: each submit is refused naming the file, and
    // the text file opened with it is not submitted either.
    a.ok(&["edit", "good.txt", "plain.txt"]);
    write(&a.cwd, "plain.txt", "ok\n");
    let mut broken = utf16le_bom("x");
    broken.extend_from_slice(&0xD800u16.to_le_bytes());
    broken.extend_from_slice(&utf16le_bom("y")[2..]);
    write(&a.cwd, "good.txt", &broken);
    let err = a.fail(&["submit", "-d", "broken"]);
    assert!(err.contains("good.txt"), "{err}");
    assert!(err.contains("not valid UTF-16"), "{err}");
    assert!(err.contains("0xD800"), "{err}");
    write(&a.cwd, "good.txt", b"\xFF\xFEa");
    let err = a.fail(&["submit", "-d", "broken"]);
    assert!(
        err.contains("good.txt") && err.contains("odd number of bytes"),
        "{err}"
    );

    // Nothing was submitted: both files are still at #1, still opened in the default change.
    for file in ["//depot/good.txt", "//depot/plain.txt"] {
        let st = fstat(&a, file);
        assert_eq!(str_field(&st, "headRev"), "1", "{file}");
    }
    assert_eq!(a.json(&["opened"]).len(), 2);
    let changes = a.json(&["changes"]);
    assert_eq!(
        changes.len(),
        1,
        "no pending change was left behind: {changes:?}"
    );

    // A new file typed utf16 that is not UTF-16 is refused too, naming it.
    write(&a.cwd, "odd.txt", b"abc");
    let err = a.fail(&["add", "-t", "utf16", "odd.txt"]);
    assert!(
        err.contains("odd.txt") && err.contains("not valid UTF-16"),
        "{err}"
    );
    assert_eq!(a.json(&["opened"]).len(), 2, "odd.txt was not opened");
}

#[test]
fn utf16_merges_take_a_side_and_stay_utf16() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "main/notes.txt", utf16le_bom("base\n"));
    a.ok(&["add", "main/notes.txt"]);
    a.ok(&["submit", "-d", "base"]);
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch"]);
    assert_eq!(read(&a.cwd, "rel/notes.txt"), utf16le_bom("base\n"));
    for (file, text) in [
        ("main/notes.txt", "main \u{e9}\n"),
        ("rel/notes.txt", "rel\n"),
    ] {
        a.ok(&["edit", file]);
        write(&a.cwd, file, utf16le_bom(text));
        a.ok(&["submit", "-d", text]);
    }
    a.ok(&["merge", "//depot/main/...", "//depot/rel/..."]);
    let err = a.fail(&["resolve", "-am"]);
    assert!(err.contains("skipped"), "{err}");
    a.ok(&["resolve", "-at"]);
    assert_eq!(read(&a.cwd, "rel/notes.txt"), utf16le_bom("main \u{e9}\n"));
    a.ok(&["submit", "-d", "take main"]);
    assert_eq!(
        str_field(&fstat(&a, "//depot/rel/notes.txt"), "digest"),
        blake3::hash("main \u{e9}\n".as_bytes())
            .to_hex()
            .to_string()
    );
}
