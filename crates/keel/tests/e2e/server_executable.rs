//! End-to-end: `keel` answers the quick reads itself and runs every other command line (`keel
//! serve` among them) as `keel-server`, the executable installed beside it, in the same process
//! (`quick_read.rs`, `server_side.rs`); without it, such a command says what is missing; and
//! `keel` carries neither the server's code nor the other verbs'.

use std::process::Command;

use crate::common::{Fixture, KEEL, Server, submit_files};

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

/// `keel` copied into a directory of its own, without `keel-server` beside it.
fn lonely_keel(dir: &std::path::Path) -> std::path::PathBuf {
    let lonely = dir.join("keel");
    std::fs::copy(KEEL, &lonely).expect("copy keel");
    lonely
}

/// A `keel` without `keel-server` beside it refuses `serve` with an error naming the missing
/// file, and creates nothing; `--version` still answers.
#[test]
fn keel_serve_without_keel_server_names_the_missing_executable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lonely = lonely_keel(dir.path());
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

/// The quick reads run in `keel` itself: a `keel` alone answers `fstat`, `files`, `filelog`,
/// `changes`, `describe`, `opened`, `have`, `where` and `info` exactly as the pair does, while
/// any other verb, and `--help`, name the missing `keel-server` (JSON with `--json`).
#[test]
fn keel_alone_answers_the_quick_reads_and_names_keel_server_for_the_rest() {
    let fx = Fixture::new();
    let ws = fx.workspace("alice", "ws");
    submit_files(&ws, &["src/a.c"], "first");
    ws.ok(&["edit", "src/a.c"]);

    let dir = tempfile::tempdir().expect("tempdir");
    let lonely = lonely_keel(dir.path());
    let run = |program: &std::path::Path, args: &[&str]| {
        ws.command_of(program, args).output().expect("run keel")
    };
    let reads: [&[&str]; 10] = [
        &["fstat", "//depot/src/a.c"],
        &["--json", "files", "//depot/..."],
        &["filelog", "-m", "5", "src/a.c"],
        &["changes", "-m", "1", "//depot/..."],
        &["describe", "-s", "1"],
        &["opened"],
        &["have", "//depot/..."],
        &["where", "src/a.c"],
        &["-s", &ws.addr, "dirs", "//depot/*"],
        &["info"],
    ];
    for args in reads {
        let alone = run(&lonely, args);
        let paired = run(std::path::Path::new(KEEL), args);
        assert!(
            alone.status.success(),
            "keel {args:?} alone: {}",
            String::from_utf8_lossy(&alone.stderr)
        );
        if args != ["info"] {
            // `info` prints the server's clock and uptime, which move between the two runs.
            assert_eq!(alone.stdout, paired.stdout, "keel {args:?}");
        }
        assert!(!alone.stdout.is_empty(), "keel {args:?} printed nothing");
    }

    let missing = dir.path().join("keel-server");
    for args in [
        &["edit", "src/a.c"][..],
        &["--help"],
        &["fstat", "--help"],
        &["status"],
    ] {
        let out = run(&lonely, args);
        assert!(!out.status.success(), "keel {args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("{} is missing", missing.display())),
            "keel {args:?}: {stderr}"
        );
    }
    let out = run(&lonely, &["--json", "revert", "src/a.c"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().last().unwrap_or_default();
    let error: serde_json::Value = serde_json::from_str(line).expect("a JSON error line");
    assert!(error["error"].to_string().contains("is missing"), "{error}");
    assert_eq!(
        ws.ok(&["opened"]).lines().count(),
        1,
        "the refused revert changed nothing"
    );
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

/// `exe`'s defined symbols as `nm` lists them (demangled with `demangle`).
fn defined_symbols(exe: &str, demangle: bool) -> String {
    let mut nm = Command::new("nm");
    nm.arg("--defined-only");
    if demangle {
        nm.arg("--demangle");
    }
    let out = nm.arg(exe).output().expect("run nm (binutils)");
    assert!(
        out.status.success(),
        "nm {exe}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The server-only crates among `exe`'s defined symbols (mangled names carry their crate's
/// name).
fn server_crates_in(exe: &str) -> Vec<&'static str> {
    let symbols = defined_symbols(exe, false);
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

/// The command modules of verbs `keel` hands on, which `keel` must not carry (demangled
/// module paths).
const HANDED_ON: [&str; 5] = [
    "keel_cli::commands::submit::",
    "keel_cli::commands::reconcile::",
    "keel_cli::commands::workspace_clone::",
    "keel_cli::commands::resolve::",
    "keel_cli::server_side::run",
];

/// `keel` carries the quick reads and not the other verbs' code: it starts as a small program
/// (its start is what a script's read costs); `keel-server` carries them all.
#[test]
fn the_client_executable_carries_only_the_quick_reads() {
    let keel = defined_symbols(KEEL, true);
    let server = defined_symbols(env!("CARGO_BIN_EXE_keel-server"), true);
    assert!(
        keel.contains("keel_cli::commands::browse::fstat"),
        "the quick reads are in keel"
    );
    for module in HANDED_ON {
        assert!(!keel.contains(module), "keel carries {module}");
        assert!(server.contains(module), "keel-server lacks {module}");
    }
}
