//! End-to-end: the content store's on-disk layout. A root written in the earlier layout (one
//! file per blob, two directory levels) migrates when the server starts, verifies clean and
//! syncs identically; a kill -9 in the middle of obliterate's reclaim loses nothing else and
//! leaves no damaged content.

use crate::common::{Client, Fixture, bytes, content_files, read, write};
use std::path::Path;
use std::time::Duration;

/// Files of a small history: text (packed), random bytes (packed raw), one 3 MiB file (a file
/// of its own), over two changes and a shelf.
fn history(fx: &Fixture) -> (Client, Vec<(String, Vec<u8>)>) {
    let ws = fx.workspace("alice", "a");
    let mut files = Vec::new();
    for i in 0..40u64 {
        let text = format!("line {i}\n").repeat(200 + i as usize).into_bytes();
        files.push((format!("src/f{i}.txt"), text));
    }
    files.push(("bin/blob.bin".to_string(), bytes(9, 30_000)));
    files.push(("bin/big.bin".to_string(), bytes(10, 3 << 20)));
    for (name, data) in &files {
        write(&ws.cwd, name, data);
    }
    ws.ok(&["add", "src/...", "bin/..."]);
    ws.ok(&["submit", "-d", "first"]);
    ws.ok(&["edit", "src/f1.txt", "src/f2.txt"]);
    for i in [1, 2] {
        let text = format!("edited {i}\n").repeat(300).into_bytes();
        write(&ws.cwd, &format!("src/f{i}.txt"), &text);
        files[i].1 = text;
    }
    ws.ok(&["submit", "-d", "second"]);
    write(&ws.cwd, "src/shelved.txt", "on a shelf\n".repeat(50));
    ws.ok(&["add", "src/shelved.txt"]);
    ws.ok(&["shelve"]);
    (ws, files)
}

/// `verify -s` passes: every revision and shelved file reads back with its digest.
fn verifies_clean(ws: &Client) {
    let out = ws.run(&["verify", "-s", "-q"]);
    assert!(
        out.status.success(),
        "verify: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh workspace synced to head holds exactly `files`.
fn syncs_identically(fx: &Fixture, name: &str, files: &[(String, Vec<u8>)]) {
    let ws = fx.workspace("bob", name);
    ws.ok(&["sync"]);
    for (file, data) in files {
        assert_eq!(&read(&ws.cwd, file), data, "{file} after sync");
    }
}

/// Rewrites the content store under `root` in the earlier layout: each blob's stored bytes as
/// `content/ab/cd/<hex>.zst` or `.raw`, packs and the new file layout removed.
fn rewrite_in_earlier_layout(root: &Path) {
    let content = root.join("content");
    let blobs = keel_blob::stored_blobs(&content).expect("list content");
    assert!(blobs.values().any(|at| at.packed) && blobs.values().any(|at| !at.packed));
    for (digest, at) in &blobs {
        let file = std::fs::read(&at.path).expect("read stored bytes");
        let stored = &file[at.offset as usize..(at.offset + at.len) as usize];
        let hex = digest.to_hex();
        let dir = content.join(&hex[0..2]).join(&hex[2..4]);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let ext = match at.encoding {
            keel_blob::Encoding::Zstd => "zst",
            keel_blob::Encoding::Raw => "raw",
        };
        std::fs::write(dir.join(format!("{hex}.{ext}")), stored).expect("write legacy blob");
    }
    std::fs::remove_dir_all(content.join("packs")).expect("remove packs");
    std::fs::remove_dir_all(content.join("files")).expect("remove files");
}

#[test]
fn a_root_in_the_earlier_layout_migrates_on_start_and_verifies_and_syncs_the_same() {
    let mut fx = Fixture::new();
    let (ws, files) = history(&fx);
    verifies_clean(&ws);
    let blobs = content_files(&fx.server.root);
    fx.server.kill9();
    rewrite_in_earlier_layout(&fx.server.root);
    fx.server.restart_same_address();
    let mut left: Vec<String> = std::fs::read_dir(fx.server.root.join("content"))
        .expect("read content")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["files", "packs", "tmp"],
        "no directory of the earlier layout is left"
    );
    assert_eq!(content_files(&fx.server.root), blobs, "every blob migrated");
    verifies_clean(&ws);
    syncs_identically(&fx, "b", &files);
    // The migrated store takes new content as usual.
    ws.ok(&["edit", "src/f3.txt"]);
    write(&ws.cwd, "src/f3.txt", "after the migration\n");
    ws.ok(&["submit", "-d", "after"]);
    verifies_clean(&ws);
}

#[test]
fn kill_9_in_the_middle_of_obliterate_reclaim_loses_nothing_else() {
    let mut fx = Fixture::new();
    let (ws, files) = history(&fx);
    let gone = fx.workspace("alice", "g");
    for i in 0..30 {
        write(
            &gone.cwd,
            &format!("gone/g{i}.txt"),
            format!("unique {i}\n").repeat(100),
        );
    }
    gone.ok(&["add", "gone/..."]);
    gone.ok(&["submit", "-d", "to be obliterated"]);
    let before = content_files(&fx.server.root);

    // The server dies right after the first blob of the purge left the content store.
    fx.server
        .restart_with(&[("KEEL_FAILPOINTS", "obliterate.in-purge=abort")]);
    let gone = fx.server.client("alice", "g", &gone.cwd);
    gone.fail(&["obliterate", "-y", "//depot/gone/..."]);
    fx.server
        .wait_exit(Duration::from_secs(30))
        .expect("the server stopped at the failpoint");

    // On start the server finishes the purge the crash interrupted.
    fx.server.restart();
    let ws = fx.server.client("alice", "a", &ws.cwd);
    assert_eq!(
        content_files(&fx.server.root),
        before - 30,
        "all 30 reclaimed"
    );
    verifies_clean(&ws);
    syncs_identically(&fx, "c", &files);
    // The same content can come back and is whole.
    let again = fx.server.client("alice", "g", &gone.cwd);
    again.ok(&["add", "gone/g0.txt"]);
    again.ok(&["submit", "-d", "back"]);
    verifies_clean(&ws);
}
