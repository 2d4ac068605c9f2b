//! Transcripts as tests: the guide's examples (`docs/guide/*.md`) and the per-command cases
//! (`crates/keel/tests/transcripts/`) are `trycmd` transcripts — a command line, its expected
//! output, `? failed` for a non-zero exit — run against a real `keel serve`.
//!
//! Each transcript gets a server of its own on an ephemeral loopback port, user `alice`, and a
//! fresh working directory that is the root of workspace `alice-main` (view
//! `//depot/... //alice-main/...`), created before the transcript starts; `KEEL_SERVER`,
//! `KEEL_USER` and `KEEL_WORKSPACE` name them. A `NAME.in/` directory beside a case seeds its
//! working directory. Besides `keel`, a transcript may run `sh` (to write files and feed
//! forms), with `keel` first on its `PATH`. The server's root is `../server`. In expected output `[SERVER]` stands for the
//! server's address, `[CWD]` for the working directory, `[..]` for any text within a line and
//! `...` for any lines. `TRYCMD=overwrite` rewrites the transcripts with what the commands
//! printed (then put the wildcards back where output varies: times, dates, ids);
//! `KEEL_TRANSCRIPT=NAME` runs only the transcripts whose file name contains NAME.

use crate::common::{KEEL, Server};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The repository's root (this crate is `crates/keel`).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The transcript files directly in `dir` (`.md` and `.toml`), in name order.
fn cases_in(dir: &Path, skip: &[&str]) -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.is_file())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("md" | "toml")))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let only = std::env::var("KEEL_TRANSCRIPT").unwrap_or_default();
            !skip.contains(&name) && name.contains(only.as_str())
        })
        .collect();
    cases.sort();
    cases
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create seed copy");
    for entry in std::fs::read_dir(from).expect("read seed") {
        let entry = entry.expect("seed entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("seed file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy seed file");
        }
    }
}

/// Runs one transcript against a fresh server; panics with trycmd's report when it differs.
fn run(case: &Path) {
    eprintln!("transcript {}", case.display());
    let dir = tempfile::tempdir().expect("temp dir");
    // The server's root is `../server` from the working directory, so a transcript can name
    // its checkpoints and journals.
    let server = Server::start_at(&dir.path().join("server")).expect("server starts");
    let stem = case.file_stem().expect("case name").to_owned();
    let parent = case.parent().expect("case directory");
    // The case and its companions (`NAME.stdin`, `NAME.stdout`, ...) are copied, so the
    // working directory (`NAME.in/`, which trycmd takes as base and cwd) is a fresh one.
    for entry in std::fs::read_dir(parent).expect("read case directory") {
        let path = entry.expect("entry").path();
        if path.is_file() && path.file_stem() == Some(stem.as_os_str()) {
            std::fs::copy(&path, dir.path().join(path.file_name().expect("name")))
                .expect("copy case");
        }
    }
    let work = dir.path().join(Path::new(&stem).with_extension("in"));
    let seed = parent.join(Path::new(&stem).with_extension("in"));
    if seed.is_dir() {
        copy_dir(&seed, &work);
    } else {
        std::fs::create_dir_all(&work).expect("working directory");
    }
    let work = work.canonicalize().expect("canonical working directory");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");

    let alice = server.client("alice", "alice-main", &work);
    alice.ok(&[
        "workspace",
        "create",
        "alice-main",
        "--root",
        work.to_str().expect("utf-8 path"),
        "--view",
        "//depot/... //alice-main/...",
    ]);

    let bin_dir = Path::new(KEEL).parent().expect("keel's directory");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir.display());
    let copy = dir.path().join(case.file_name().expect("case file name"));
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("keel", Path::new(KEEL))
        .register_bin("sh", Path::new("/bin/sh"))
        .timeout(Duration::from_secs(60))
        .env("KEEL_SERVER", &server.addr)
        .env("KEEL_USER", "alice")
        .env("KEEL_WORKSPACE", "alice-main")
        .env("KEEL_TRUST", server.trust.to_str().expect("utf-8 path"))
        .env(
            "KEEL_TICKETS",
            home.join(".keel_tickets").to_str().expect("utf-8"),
        )
        .env("HOME", home.to_str().expect("utf-8 path"))
        .env("USER", "alice")
        .env("EDITOR", "false")
        .env("NO_COLOR", "1")
        .env("PATH", path)
        .insert_var("[SERVER]", server.addr.clone())
        .expect("a placeholder for the server's address")
        .case(&copy);
    cases.run();
    // `TRYCMD=overwrite` wrote what the commands printed into the copy: bring it back.
    if std::env::var("TRYCMD").is_ok_and(|v| v == "overwrite") {
        std::fs::copy(&copy, case).expect("write the transcript back");
    }
}

/// Every page of the guide, as a reader would type it. `security.md` is written by others and
/// holds no transcripts of its own yet.
#[test]
fn guide_pages() {
    for case in cases_in(&repo().join("docs/guide"), &["security.md"]) {
        run(&case);
    }
}

/// Per-command transcripts: each command's happy path, an error, and `--json`.
#[test]
fn command_transcripts() {
    for case in cases_in(&repo().join("crates/keel/tests/transcripts"), &[]) {
        run(&case);
    }
}
