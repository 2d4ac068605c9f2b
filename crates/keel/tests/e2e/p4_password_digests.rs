//! `p4_password_digests`: a P4 client whose `P4PASSWD` holds the password itself (P4Python's
//! `p4.password`, no login) is let in once the server keeps the password's sealed MD5
//! verifier; refused naming the setting while it is off; a wrong password refused; the
//! verifier recorded by a login, kept sealed in the database and through checkpoint/restore.

use crate::common::Server;
use crate::p4_harness::{P4Server, drive, ok, raised};
use serde_json::json;
use std::path::{Path, PathBuf};

const ON: &str = "p4_password_digests = true";

/// The P4 address in `server`'s ready line.
fn p4_port(server: &Server) -> String {
    let line = server.ready_line().to_string();
    line.split_once("P4 clients on ")
        .and_then(|(_, rest)| rest.split([',', ')', ' ']).next())
        .unwrap_or_else(|| panic!("no P4 address in the ready line: {line}"))
        .to_string()
}

/// Every byte of the SQLite files under `root`.
fn database_bytes(root: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = vec![root.to_path_buf()];
    for _ in 0..64 {
        let Some(dir) = dirs.pop() else { break };
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let p = entry.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().contains(".db"))
            {
                out.extend(std::fs::read(&p).expect("read database"));
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    let upper = needle.to_uppercase();
    let lower = needle.to_lowercase();
    haystack
        .windows(needle.len())
        .any(|w| w == upper.as_bytes() || w == lower.as_bytes())
}

/// MD5 of the password as P4 clients digest it (the value that must never lie in clear).
fn md5_hex(password: &str) -> String {
    use md5::{Digest, Md5};
    hex::encode_upper(Md5::digest(password.as_bytes()))
}

#[test]
fn off_refuses_naming_the_setting_and_a_login_after_turning_it_on_records_the_verifier() {
    let mut s = P4Server::start();
    let r = s.drive(&[
        json!({"method": "run_password", "args": ["", "Secret-1"]}),
        json!({"new": true, "password": "Secret-1", "cmd": ["changes"]}),
    ]);
    assert_eq!(ok(&r[0]), &json!(["Password updated."]));
    let e = raised(&r[1]);
    assert!(
        e.contains("p4_password_digests") && e.contains("P4PASSWD"),
        "{e}"
    );
    // Turned on: no verifier yet (the password was set while off) until a login with it.
    std::fs::write(s.server.root.join("keel.toml"), ON).expect("keel.toml");
    s.server.restart();
    let port = p4_port(&s.server);
    let r = drive(
        &port,
        s.home.path(),
        &[json!({"password": "Secret-1", "cmd": ["changes"]})],
    );
    let e = raised(&r[0]);
    assert!(
        e.contains("P4PASSWD") && !e.contains("p4_password_digests"),
        "{e}"
    );
    // A P4 login with the password (`login -p`: the ticket is shown, not kept) records it.
    let r = drive(
        &port,
        s.home.path(),
        &[
            json!({"input": "Secret-1", "cmd": ["login", "-p"], "tagged": false}),
            json!({"password": "Secret-1", "cmd": ["changes"]}),
            json!({"new": true, "password": "Secret-1", "cmd": ["info"]}),
            json!({"new": true, "password": "Wrong-2", "cmd": ["changes"]}),
        ],
    );
    assert_eq!(ok(&r[0])[0].as_str().map(str::len), Some(32));
    assert_eq!(ok(&r[1]), &json!([]));
    assert_eq!(ok(&r[2])[0]["userName"], "alice");
    assert!(raised(&r[3]).contains("P4PASSWD"), "{:?}", r[3]);
    assert!(!contains(
        &database_bytes(&s.server.root),
        &md5_hex("Secret-1")
    ));
    // Turned off again: the stored verifier is dropped, and the password is refused.
    std::fs::write(s.server.root.join("keel.toml"), "").expect("keel.toml");
    s.server.restart();
    std::fs::write(s.server.root.join("keel.toml"), ON).expect("keel.toml");
    s.server.restart();
    let r = drive(
        &p4_port(&s.server),
        s.home.path(),
        &[json!({"password": "Secret-1", "cmd": ["changes"]})],
    );
    assert!(raised(&r[0]).contains("P4PASSWD"), "{:?}", r[0]);
}

#[test]
fn on_a_password_set_or_changed_works_as_p4passwd_and_survives_checkpoint_and_restore() {
    let s = P4Server::start_with("127.0.0.1:0", &[], &[ON]);
    // Set natively: the verifier is recorded with the password.
    let tickets = s.home.path().join("native-tickets");
    let tickets = tickets.to_str().expect("utf-8");
    let native = s.server.client("alice", "", s.home.path());
    let keel = |args: &[&str], stdin: &str| {
        let out = native.run_with(args, &[("KEEL_TICKETS", tickets)], stdin);
        assert!(out.status.success(), "keel {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    keel(&["passwd"], "Secret-1\nSecret-1\n");
    let r = s.drive(&[json!({"password": "Secret-1", "cmd": ["changes"]})]);
    assert_eq!(ok(&r[0]), &json!([]));
    // Changed: the new password replaces the verifier.
    keel(&["login"], "Secret-1\n");
    keel(&["passwd"], "Secret-1\nOther-3\nOther-3\n");
    let r = s.drive(&[
        json!({"new": true, "password": "Secret-1", "cmd": ["changes"]}),
        json!({"new": true, "password": "Other-3", "cmd": ["changes"]}),
    ]);
    assert!(raised(&r[0]).contains("P4PASSWD"), "{:?}", r[0]);
    assert_eq!(ok(&r[1]), &json!([]));
    let key = s.server.root.join("p4/password.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key)
            .expect("key file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // A checkpoint, restored into a new root holding the same key: the verifier still works,
    // and neither database holds the MD5 in clear.
    keel(&["login"], "Other-3\n");
    let ckpt = keel(&["--json", "admin", "checkpoint"], "");
    let ckpt: serde_json::Value =
        serde_json::from_str(ckpt.lines().next().expect("a line")).expect("JSON");
    let checkpoint = ckpt["checkpoint"].as_str().expect("checkpoint").to_string();
    let restored = s.home.path().join("restored");
    keel(
        &[
            "admin",
            "restore",
            "--checkpoint",
            &checkpoint,
            "--root",
            restored.to_str().expect("utf-8"),
        ],
        "",
    );
    for root in [&s.server.root, &restored] {
        let bytes = database_bytes(root);
        assert!(!bytes.is_empty(), "no database under {}", root.display());
        assert!(!contains(&bytes, &md5_hex("Other-3")), "{}", root.display());
    }
    std::fs::create_dir_all(restored.join("p4")).expect("p4 dir");
    std::fs::copy(&key, restored.join("p4/password.key")).expect("key copied");
    std::fs::write(restored.join("keel.toml"), ON).expect("keel.toml");
    let again = Server::start_full(&restored, &[], &["--p4-listen", "127.0.0.1:0"])
        .expect("restored server starts");
    let home = tempfile::tempdir().expect("home");
    let r = drive(
        &p4_port(&again),
        home.path(),
        &[
            json!({"password": "Other-3", "cmd": ["changes"]}),
            json!({"new": true, "password": "Secret-1", "cmd": ["changes"]}),
        ],
    );
    assert_eq!(ok(&r[0]), &json!([]));
    assert!(raised(&r[1]).contains("P4PASSWD"), "{:?}", r[1]);
}
