//! End-to-end: bad input gets a clear error and loses nothing.

use crate::common::{Client, Fixture, Server, bytes, str_field, workspace_on, write};
use std::process::Command;

#[test]
fn bad_paths_are_refused_with_their_name() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let err = a.fail(&["files", "//depot/../etc/passwd"]);
    assert!(err.contains("//depot/../etc/passwd"), "{err}");
    let err = a.fail(&["files", "//depot/a\u{7}b"]);
    assert!(err.contains("control"), "{err}");
    write(&a.cwd, "bad\u{1b}name.txt", "x");
    let err = a.fail(&["add", "bad\u{1b}name.txt"]);
    assert!(err.contains("name.txt"), "{err}");
    let outside = fx.dir.path().join("outside.txt");
    std::fs::write(&outside, "x").expect("write");
    let err = a.fail(&["add", outside.to_str().expect("utf-8")]);
    assert!(err.contains("outside.txt"), "{err}");
    assert!(a.json(&["opened"]).is_empty(), "nothing was opened");
}

#[test]
fn paths_outside_the_view_are_refused() {
    let fx = Fixture::new();
    let c = fx.workspace_with_view("carol", "narrow", &["//depot/src/... //narrow/src/..."]);
    let root = c.cwd.clone();
    write(&root, "other/x.txt", "x");
    let err = c.fail(&["add", "other/x.txt"]);
    assert!(err.contains("x.txt") && err.contains("view"), "{err}");
    let err = c.fail(&["edit", "//depot/elsewhere/y.txt"]);
    assert!(err.contains("//depot/elsewhere/y.txt"), "{err}");
}

#[test]
fn unknown_workspace_change_and_depot_are_named() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    let ghost = fx.server.client("alice", "ghost", &a.cwd);
    let err = ghost.fail(&["opened"]);
    assert!(err.contains("ghost"), "{err}");
    let err = a.fail(&["describe", "99"]);
    assert!(err.contains("99"), "{err}");
    let err = a.fail(&["submit", "-c", "42"]);
    assert!(err.contains("42"), "{err}");
    let err = a.fail(&["files", "//nowhere/..."]);
    assert!(err.contains("nowhere"), "{err}");
    // A relative root is taken from the current directory and saved absolute.
    a.ok(&["workspace", "create", "rel", "--root", "relative/dir"]);
    let spec = a.json(&["workspace", "show", "rel"]);
    let root = str_field(&spec[0], "Root");
    assert!(
        std::path::Path::new(&root).is_absolute() && root.ends_with("relative/dir"),
        "{root}"
    );
    let err = a.fail(&[
        "workspace",
        "create",
        "bad2",
        "--root",
        "/tmp/x",
        "--view",
        "//depot/... //other/...",
    ]);
    assert!(err.contains("//bad2/"), "{err}");
}

#[test]
fn server_not_running_names_the_address() {
    // Bind and drop a listener to find a port nobody is listening on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let dir = tempfile::tempdir().expect("dir");
    let client = Client {
        addr: addr.clone(),
        user: "alice".into(),
        workspace: String::new(),
        cwd: dir.path().into(),
        trust: dir.path().join("trust"),
    };
    let err = client.fail(&["info"]);
    assert!(err.contains(&addr), "{err}");
}

#[test]
fn second_server_on_the_same_root_refuses() {
    let server = Server::start();
    let err = match Server::start_at(&server.root) {
        Ok(_) => panic!("a second server started on {}", server.root.display()),
        Err(stderr) => stderr,
    };
    assert!(err.contains("already"), "{err}");
    // The first server is unharmed.
    let dir = tempfile::tempdir().expect("dir");
    server.client("alice", "", dir.path()).ok(&["info"]);
}

/// A small tmpfs, unmounted when dropped.
struct Tmpfs {
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(megabytes: u32) -> Tmpfs {
        let dir = tempfile::tempdir().expect("mount point");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("run mount");
        assert!(
            status.success(),
            "the full-disk test needs to mount a tmpfs (run as root)"
        );
        Tmpfs {
            path: dir.path().to_path_buf(),
            _dir: dir,
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

#[test]
fn full_disk_during_submit_fails_cleanly() {
    let disk = Tmpfs::mount(48);
    let root = disk.path.join("server");
    let server = Server::start_at(&root).expect("server on tmpfs");
    let dir = tempfile::tempdir().expect("dir");
    let a = workspace_on(&server, dir.path(), "alice", "a");
    let ws_root = a.cwd.clone();
    for i in 0..40 {
        write(&ws_root, &format!("big/{i}.bin"), bytes(i, 2 << 20));
    }
    a.ok(&["add", "big/..."]);
    let err = a.fail(&["submit", "-d", "too big for the disk"]);
    assert!(err.to_lowercase().contains("full"), "{err}");
    assert!(
        a.json(&["changes", "-s", "submitted"]).is_empty(),
        "nothing half-submitted"
    );
    assert_eq!(a.json(&["opened"]).len(), 40, "everything still opened");
    // The server still works: revert the big files and submit something small.
    a.ok(&["revert", "big/..."]);
    write(&ws_root, "small.txt", "fits\n");
    a.ok(&["add", "small.txt"]);
    let out = a.ok(&["submit", "-d", "small"]);
    assert!(out.contains("submitted"), "{out}");
    drop(server);
}

#[test]
fn full_disk_during_checkpoint_leaves_no_checkpoint_and_the_server_works() {
    let disk = Tmpfs::mount(16);
    let root = disk.path.join("server");
    let server = Server::start_at(&root).expect("server on tmpfs");
    let dir = tempfile::tempdir().expect("dir");
    let a = workspace_on(&server, dir.path(), "alice", "a");
    let ws_root = a.cwd.clone();
    // Enough rows that the checkpoint needs more than the few pages left free below.
    for i in 0..600 {
        write(
            &ws_root,
            &format!("src/{i:04}/file-with-a-long-name-{i}.txt"),
            format!("{i}\n"),
        );
    }
    a.ok(&["add", "src/..."]);
    a.ok(&["submit", "-d", "many files"]);
    // Fill the disk, then give back two pages: the journal's rotation fits, the file does not.
    let filler = disk.path.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).expect("filler");
        let block = vec![0u8; 1 << 16];
        while f.write_all(&block).is_ok() {}
        let mut small = vec![0u8; 4096];
        while f.write_all(&small).is_ok() {}
        small.truncate(1);
        while f.write_all(&small).is_ok() {}
        let len = f.metadata().expect("len").len();
        f.set_len(len.saturating_sub(8192)).expect("shrink filler");
    }
    let err = a.fail(&["admin", "checkpoint"]);
    assert!(err.contains("checkpoint"), "{err}");
    assert!(
        err.contains("No space left") || err.to_lowercase().contains("full"),
        "{err}"
    );
    let checkpoints = root.join("checkpoints");
    let left: Vec<String> = std::fs::read_dir(&checkpoints)
        .map(|d| {
            d.map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        left.is_empty(),
        "no checkpoint file, complete-looking or not: {left:?}"
    );
    // With space again the server goes on: a submit, then a checkpoint that completes.
    std::fs::remove_file(&filler).expect("remove filler");
    a.ok(&["edit", "src/0001/file-with-a-long-name-1.txt"]);
    write(
        &ws_root,
        "src/0001/file-with-a-long-name-1.txt",
        "changed\n",
    );
    a.ok(&["submit", "-d", "after the full disk"]);
    let ckpt = a.json(&["admin", "checkpoint"]);
    let path = str_field(&ckpt[0], "checkpoint");
    assert!(std::path::Path::new(&path).exists(), "{path}");
    drop(server);
}
