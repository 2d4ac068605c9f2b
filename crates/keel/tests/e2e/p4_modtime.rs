//! P4 clients and `+m` through P4Python: the client's file modification time sent at submit is
//! recorded (`fstat`'s `headModTime`, the native CLI's too); a sync of the `+m` file into
//! another P4 workspace sets it, a plain file gets the time of the sync, and a `modtime`
//! workspace gives every file its recorded time.

use crate::p4_harness::{P4Server, ok};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

/// 2001-09-09 and 2004-11-09: the files' own times before they are submitted.
const KEPT: u64 = 1_000_000_000;
const PLAIN: u64 = 1_100_000_000;

fn save_client(name: &str, root: &Path, options: &str) -> Value {
    json!({"method": "save_client", "client": name, "args": [{
        "Client": name, "Owner": "alice", "Root": root.display().to_string(),
        "Options": options, "View": [format!("//depot/... //{name}/...")]
    }]})
}

fn set_mtime(path: &Path, secs: u64) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open")
        .set_modified(UNIX_EPOCH + Duration::from_secs(secs))
        .expect("set mtime");
}

fn mtime(path: &Path) -> u64 {
    std::fs::metadata(path)
        .expect("stat")
        .modified()
        .expect("mtime")
        .duration_since(UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs()
}

#[test]
fn a_p4_client_submits_the_modification_time_and_plus_m_syncs_to_it() {
    let s = P4Server::start();
    let root = s.home.path().join("ws");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(root.join("keep.bin"), [0u8, 1, 2, 3]).expect("keep");
    std::fs::write(root.join("plain.txt"), "plain\n").expect("plain");
    set_mtime(&root.join("keep.bin"), KEPT);
    set_mtime(&root.join("plain.txt"), PLAIN);
    let default = "noallwrite noclobber nocompress unlocked nomodtime normdir";
    let cwd = root.display().to_string();
    let r = s.drive(&[
        save_client("alice_ws", &root, default),
        json!({"cwd": cwd, "cmd": ["add", "-t", "binary+m", "keep.bin"]}),
        json!({"cwd": cwd, "cmd": ["add", "plain.txt"]}),
        json!({"cmd": ["submit", "-d", "kept times"]}),
        json!({"cmd": ["fstat", "//depot/..."]}),
    ]);
    for step in &r[..4] {
        ok(step);
    }
    let stats = ok(&r[4]).as_array().expect("fstat records").clone();
    let stat = |p: &str| {
        stats
            .iter()
            .find(|f| f["depotFile"] == p)
            .unwrap_or_else(|| panic!("{p} in {stats:?}"))
            .clone()
    };
    assert_eq!(stat("//depot/keep.bin")["headModTime"], KEPT.to_string());
    assert_eq!(stat("//depot/plain.txt")["headModTime"], PLAIN.to_string());
    let submitted: u64 = stat("//depot/plain.txt")["headTime"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("headTime");
    // The native CLI reads the same record.
    let native = s.server.client("alice", "alice_ws", s.home.path());
    let st = native.json(&["fstat", "//depot/keep.bin"]);
    assert_eq!(st[0]["headModTime"], KEPT, "{st:?}");

    let other = s.home.path().join("other");
    let kept = s.home.path().join("kept");
    std::fs::create_dir_all(&other).expect("other");
    std::fs::create_dir_all(&kept).expect("kept");
    let r = s.drive(&[
        save_client("other_ws", &other, default),
        json!({"client": "other_ws", "cmd": ["sync"]}),
        save_client(
            "kept_ws",
            &kept,
            "noallwrite noclobber nocompress unlocked modtime normdir",
        ),
        json!({"client": "kept_ws", "cmd": ["sync"]}),
    ]);
    for step in &r {
        ok(step);
    }
    assert_eq!(
        mtime(&other.join("keep.bin")),
        KEPT,
        "+m: the recorded time"
    );
    assert!(
        mtime(&other.join("plain.txt")) >= submitted,
        "a plain file gets the time of the sync"
    );
    assert_eq!(mtime(&kept.join("keep.bin")), KEPT);
    assert_eq!(mtime(&kept.join("plain.txt")), PLAIN, "modtime: every file");
}
