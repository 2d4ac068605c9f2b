//! End-to-end: `keel serve` runs `keel-server`, the executable installed beside `keel`, in the
//! same process (`server_side.rs`); without it, the command says what is missing; and `keel`
//! itself carries none of the server's code.

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

/// The crates whose code only `keel-server` may carry.
const SERVER_CRATES: [&str; 6] = [
    "keel_server",
    "keel_service",
    "keel_store",
    "keel_p4",
    "keel_proxy",
    "keel_bench",
];

/// The server-only crates among `exe`'s defined symbols (`nm`; mangled names carry their
/// crate's name).
fn server_crates_in(exe: &str) -> Vec<&'static str> {
    let out = Command::new("nm")
        .args(["--defined-only", exe])
        .output()
        .expect("run nm (binutils)");
    assert!(
        out.status.success(),
        "nm {exe}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let symbols = String::from_utf8_lossy(&out.stdout);
    SERVER_CRATES
        .into_iter()
        .filter(|name| symbols.contains(name))
        .collect()
}

/// `keel` links none of the server-side crates (a short command starts a smaller image);
/// `keel-server`, read the same way, has them all.
#[test]
fn the_client_executable_carries_no_server_code() {
    assert_eq!(server_crates_in(KEEL), Vec::<&str>::new());
    assert_eq!(
        server_crates_in(env!("CARGO_BIN_EXE_keel-server")),
        SERVER_CRATES.to_vec()
    );
}
