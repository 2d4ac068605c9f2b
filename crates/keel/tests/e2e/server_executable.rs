//! End-to-end: `keel serve` runs `keel-server`, the executable installed beside `keel`, in the
//! same process (`server_side.rs`); without it, the command says what is missing.

use std::process::Command;

use crate::common::{KEEL, Server};

/// The server started as `keel serve` is the keel-server executable, with the command line it
/// was given (so a service manager, `ps` and a kill by PID see the process they started).
#[test]
fn keel_serve_becomes_keel_server_in_the_same_process() {
    let server = Server::start();
    let pid = server.pid();
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).expect("comm");
    assert_eq!(comm.trim(), "keel-server");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).expect("cmdline");
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    assert_eq!(args[0], KEEL.as_bytes(), "argv[0] is what was started");
    assert_eq!(args[1], b"serve");
}

/// A `keel` without `keel-server` beside it refuses `serve` with an error naming the missing
/// file, and creates nothing; client commands still work.
#[test]
fn keel_serve_without_keel_server_names_the_missing_executable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lonely = dir.path().join("keel");
    std::fs::copy(KEEL, &lonely).expect("copy keel");
    let root = dir.path().join("root");
    let out = Command::new(&lonely)
        .args(["serve", "--listen", "127.0.0.1:0", "--root"])
        .arg(&root)
        .output()
        .expect("run keel serve");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let missing = dir.path().join("keel-server");
    assert!(
        stderr.contains(&format!("{} is missing", missing.display())),
        "{stderr}"
    );
    assert!(!root.exists(), "nothing was created");

    let version = Command::new(&lonely)
        .arg("--version")
        .output()
        .expect("keel --version");
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("keel "));
}
