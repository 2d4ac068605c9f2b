//! End-to-end: `keel serve` configuration — `ROOT/keel.toml`, flags over the file,
//! `--print-config`, and refusals that name the file and the key.

use crate::common::{Fixture, KEEL, Server, bytes, read, write};
use std::path::Path;
use std::process::Command;

/// Runs `keel serve --root ROOT --print-config` (plus `extra`) and returns the JSON form.
fn printed_config(root: &Path, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(KEEL)
        .args(["serve", "--print-config", "--json", "--root"])
        .arg(root)
        .args(extra)
        .output()
        .expect("run keel serve --print-config");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// A root holding `keel.toml` with `text`.
fn root_with(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("server");
    std::fs::create_dir_all(&root).expect("server root");
    std::fs::write(root.join("keel.toml"), text).expect("write keel.toml");
    (dir, root)
}

#[test]
fn a_config_file_changes_knobs_and_leaves_the_rest() {
    let (_dir, root) = root_with("long_read_threads = 3\n[store]\nreader_pool_size = 5\n");
    let config = printed_config(&root, &[]);
    assert_eq!(config["long_read_threads"], 3);
    assert_eq!(config["store"]["reader_pool_size"], 5);
    // Untouched knobs keep their defaults (what an empty root prints).
    let empty = tempfile::tempdir().expect("temp dir");
    let defaults = printed_config(empty.path(), &[]);
    assert_eq!(config["service"], defaults["service"]);
    assert_eq!(config["store"]["page_size"], defaults["store"]["page_size"]);
    assert_eq!(defaults["store"]["reader_mmap_bytes"], 1 << 30);

    // The text form is itself a keel.toml: every knob documented, the file's values in it.
    let out = Command::new(KEEL)
        .args(["serve", "--print-config", "--root"])
        .arg(&root)
        .output()
        .expect("run keel serve --print-config");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("\n[store]\n"), "{text}");
    assert!(text.contains("\nreader_pool_size = 5\n"), "{text}");
    assert!(
        text.contains("# Idle reader connections kept open"),
        "{text}"
    );
}

#[test]
fn flags_override_the_file() {
    let (_dir, root) = root_with("workers = 3\n[store]\nreader_pool_size = 5\n");
    let config = printed_config(&root, &["--workers", "6", "--reader-mmap-bytes", "4096"]);
    assert_eq!(config["workers"], 6);
    assert_eq!(config["store"]["reader_mmap_bytes"], 4096);
    assert_eq!(config["store"]["reader_pool_size"], 5);
    let config = printed_config(&root, &["--readers", "2"]);
    assert_eq!(config["workers"], 3);
    assert_eq!(config["store"]["reader_pool_size"], 2);
}

#[test]
fn an_unknown_key_refuses_to_start_naming_file_and_key() {
    let (_dir, root) = root_with("[store]\nreader_pool_sise = 5\n");
    let err = Server::start_at(&root).err().expect("the server refuses");
    assert!(err.contains("keel.toml"), "{err}");
    assert!(err.contains("reader_pool_sise"), "{err}");
    assert!(err.contains("unknown field"), "{err}");
}

#[test]
fn a_bad_value_refuses_to_start_naming_file_key_and_value() {
    let (_dir, root) = root_with("[store]\nreader_pool_size = \"many\"\n");
    let err = Server::start_at(&root).err().expect("the server refuses");
    assert!(err.contains("keel.toml"), "{err}");
    assert!(err.contains("reader_pool_size"), "{err}");
    assert!(err.contains("\"many\""), "{err}");

    let (_dir, root) = root_with("[store]\npage_size = 1000\n");
    let err = Server::start_at(&root).err().expect("the server refuses");
    assert!(
        err.contains(&root.join("keel.toml").display().to_string()),
        "{err}"
    );
    assert!(err.contains("store.page_size = 1000"), "{err}");

    let empty = tempfile::tempdir().expect("temp dir");
    let out = Command::new(KEEL)
        .args(["serve", "--print-config", "--workers", "0", "--root"])
        .arg(empty.path())
        .output()
        .expect("run keel serve");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("workers = 0"));
}

/// A server tuned to its smallest queues, chunks and batches (and reading through a memory
/// mapping) still moves every file intact.
#[test]
fn a_tuned_server_serves_intact_content() {
    let (dir, root) = root_with(
        "handover_max_records = 1\nhandover_max_bytes = 1\ncontent_chunk_bytes = 1000\n\
         inline_max_records = 1\nlong_read_threads = 1\n\
         [store]\nreader_pool_size = 1\nreader_mmap_bytes = 1048576\n\
         [service]\npage_size = 2\nlabel_batch = 2\n",
    );
    let fx = Fixture {
        server: Server::start_at(&root).expect("server starts"),
        dir,
    };
    let a = fx.workspace("alice", "a");
    for i in 0..7 {
        write(&a.cwd, &format!("d/f{i}.bin"), bytes(i, 5_000 + i as usize));
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "seven files"]);
    assert_eq!(a.json(&["fstat", "//depot/..."]).len(), 7);
    // One directory starts inline, outgrows the one-record budget and is read again.
    assert_eq!(a.json(&["files", "//depot/d/*"]).len(), 7);
    assert_eq!(a.json(&["fstat", "//depot/d/*.bin"]).len(), 7);
    a.ok(&["label", "create", "rel"]);
    assert_eq!(a.json(&["tag", "-l", "rel", "//depot/..."]).len(), 7);

    let b = fx.workspace("bob", "b");
    b.ok(&["sync"]);
    for i in 0..7 {
        assert_eq!(
            read(&b.cwd, &format!("d/f{i}.bin")),
            bytes(i, 5_000 + i as usize)
        );
    }
}

/// `changes FILES` reads its scope a page at a time; a change whose paths straddle a page
/// boundary (or fill a whole page) is still found by a path on the far side of it.
#[test]
fn changes_of_files_find_a_change_across_page_boundaries() {
    let (dir, root) = root_with("[service]\npage_size = 2\n");
    let fx = Fixture {
        server: Server::start_at(&root).expect("server starts"),
        dir,
    };
    let a = fx.workspace("alice", "a");
    for name in ["a.txt", "b.txt", "c.txt", "z.c"] {
        write(&a.cwd, name, name.as_bytes());
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "one wide change"]);
    write(&a.cwd, "d.txt", b"d");
    a.ok(&["add", "d.txt"]);
    a.ok(&["submit", "-d", "a text file"]);
    write(&a.cwd, "y.c", b"y");
    a.ok(&["add", "y.c"]);
    a.ok(&["submit", "-d", "a c file"]);

    let changes = |spec: &str| -> Vec<u64> {
        a.json(&["changes", spec])
            .iter()
            .map(|c| c["change"].as_u64().expect("change number"))
            .collect()
    };
    // Change 1's paths are a.txt, b.txt, c.txt, z.c: only its last one is a .c file.
    assert_eq!(changes("//depot/*.c"), [3, 1]);
    assert_eq!(changes("//depot/....txt"), [2, 1]);
    assert_eq!(changes("//depot/z.c"), [1]);
}
