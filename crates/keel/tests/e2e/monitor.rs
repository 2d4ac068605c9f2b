//! `monitor show` and `monitor terminate` and the command log through the real binaries: a
//! long read held open by a slow client is listed (with its arguments under `-a`) and stops
//! when terminated; a submit waiting for its content is abandoned with nothing committed; every
//! command leaves one line in `logs/commands.jsonl`; a log on a full disk (`/dev/full`) fails
//! no command; the log rotates by size, keeping a bounded number of files; slow commands
//! also go to the server's log.

use crate::common::*;
use keel_proto::v1 as pb;
use keel_proto::v1::keel_client::KeelClient;
use std::path::Path;
use std::time::{Duration, Instant};
use tonic::transport::Channel;

/// The command log's records in `path`, waiting (bounded) until one satisfies `want`.
fn log_until(path: &Path, want: impl Fn(&serde_json::Value) -> bool) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        if lines.iter().any(&want) {
            return lines;
        }
        assert!(Instant::now() < deadline, "no such record in:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The running commands as `monitor show -a --json` lists them, waiting (bounded) until one
/// satisfies `want`; returns that one.
fn running_until(c: &Client, want: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let shown = c.json(&["monitor", "show", "-a", "-l"]);
        if let Some(found) = shown.iter().find(|r| want(r)) {
            return found.clone();
        }
        assert!(Instant::now() < deadline, "not running: {shown:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads a print stream after its command was terminated (bounded): the content bytes still
/// received, and the error the stream ended with (it must not end completely).
async fn read_to_termination(
    stream: &mut tonic::Streaming<pb::ContentMessage>,
) -> (usize, tonic::Status) {
    let mut received = 0;
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match stream.message().await {
                Ok(Some(m)) => received += chunk_len(m),
                Ok(None) => return None,
                Err(status) => return Some(status),
            }
        }
    })
    .await
    .expect("the stream ends after terminate");
    let status = ended.expect("the stream ends with an error, not completely");
    (received, status)
}

/// A client whose receive windows are small, so a big answer waits for it to read.
async fn slow_client(addr: &str) -> KeelClient<Channel> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("endpoint")
        .initial_stream_window_size(65_535)
        .initial_connection_window_size(65_535)
        .connect()
        .await
        .expect("connects");
    KeelClient::new(channel)
}

/// Bytes of content a print message carries.
fn chunk_len(m: pb::ContentMessage) -> usize {
    match m.body {
        Some(pb::content_message::Body::Chunk(c)) => c.len(),
        _ => 0,
    }
}

fn caller(user: &str, workspace: &str) -> Option<pb::Caller> {
    Some(pb::Caller {
        user: user.into(),
        workspace: workspace.into(),
        host: "test".into(),
        force: false,
    })
}

/// A server whose streams hand over little at a time.
fn small_stream_server(dir: &Path) -> Server {
    let root = dir.join("root");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(
        root.join("keel.toml"),
        "content_chunk_bytes = 8192\nhandover_max_records = 2\nhandover_max_bytes = 16384\n",
    )
    .expect("keel.toml");
    Server::start_at(&root).expect("server starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminated_long_read_stops_and_is_logged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = small_stream_server(dir.path());
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    let size = 4 << 20;
    write(&a.cwd, "big.bin", bytes(7, size));
    a.ok(&["add", "big.bin"]);
    a.ok(&["submit", "-d", "big"]);

    // Print the file, read one message, then stop reading: the server waits on the client.
    let mut client = slow_client(&server.addr).await;
    let mut stream = client
        .print(pb::FilesRequest {
            caller: caller("alice", "wa"),
            files: vec!["//depot/big.bin".into()],
            ..Default::default()
        })
        .await
        .expect("print starts")
        .into_inner();
    let first = stream.message().await.expect("first message");
    assert!(first.is_some());

    let c = a.clone();
    let print = tokio::task::spawn_blocking(move || {
        running_until(&c, |r| str_field(r, "command") == "Print")
    })
    .await
    .expect("monitor show");
    assert_eq!(str_field(&print, "user"), "alice");
    assert_eq!(str_field(&print, "workspace"), "wa");
    assert!(
        str_field(&print, "args").contains("//depot/big.bin"),
        "{print}"
    );
    assert_eq!(str_field(&print, "address"), "127.0.0.1");
    let id = field(&print, "id").as_u64().expect("id");

    // The plain list shows the command but not its arguments.
    let plain = a.json(&["monitor", "show"]);
    let listed = plain
        .iter()
        .find(|r| field(r, "id").as_u64() == Some(id))
        .expect("listed without -a");
    assert!(listed.get("args").is_none(), "{listed}");

    let out = a.json(&["monitor", "terminate", &id.to_string()]);
    assert_eq!(str_field(&out[0], "command"), "Print");

    // The client now reads what was buffered, then the termination.
    let (rest, status) = read_to_termination(&mut stream).await;
    let received = first.map_or(0, chunk_len) + rest;
    assert_eq!(status.code(), tonic::Code::Cancelled, "{status:?}");
    assert!(
        status.message().contains("terminated by alice"),
        "{status:?}"
    );
    assert!(received < size, "all {received} bytes arrived");

    let log = server.root.join("logs/commands.jsonl");
    let lines = log_until(&log, |r| {
        field(r, "id").as_u64() == Some(id) && str_field(r, "result") == "terminated"
    });
    let record = lines
        .iter()
        .find(|r| field(r, "id").as_u64() == Some(id))
        .expect("record");
    assert_eq!(str_field(record, "terminated_by"), "alice");
    assert_eq!(str_field(record, "code"), "CANCELLED");
    assert!(field(record, "bytes_sent").as_u64().expect("bytes") > 0);
    assert_eq!(field(record, "files_sent").as_u64(), Some(1));
    // The submit before it committed rows and waited for, then held, the writer.
    let submit = lines
        .iter()
        .find(|r| str_field(r, "command") == "Submit" && str_field(r, "result") == "ok")
        .expect("submit record");
    assert!(
        field(submit, "rows_written").as_u64().expect("rows") > 0,
        "{submit}"
    );
    assert!(
        field(submit, "writer_hold_ms").as_f64().expect("hold") > 0.0,
        "{submit}"
    );
    assert_eq!(
        field(submit, "files_received").as_u64(),
        Some(1),
        "{submit}"
    );
    assert_eq!(str_field(submit, "user"), "alice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminated_submit_commits_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = small_stream_server(dir.path());
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    write(&a.cwd, "a.txt", "one\n");
    a.ok(&["add", "a.txt"]);

    // Begin a submit and name the file, then send nothing more: it waits for the content.
    let mut client = slow_client(&server.addr).await;
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let msg = |body| pb::SubmitMessage { body: Some(body) };
    use pb::submit_message::Body;
    tx.send(msg(Body::Begin(pb::SubmitBegin {
        caller: caller("alice", "wa"),
        change: 0,
        description: "never".into(),
        ..Default::default()
    })))
    .await
    .expect("send begin");
    tx.send(msg(Body::File(pb::FileBegin {
        depot_file: "//depot/a.txt".into(),
    })))
    .await
    .expect("send file");
    let call = tokio::spawn(async move {
        client
            .submit(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
    });

    let c = a.clone();
    let submit = tokio::task::spawn_blocking(move || {
        running_until(&c, |r| str_field(r, "command") == "Submit")
    })
    .await
    .expect("monitor show");
    let id = field(&submit, "id").as_u64().expect("id");
    a.ok(&["monitor", "terminate", &id.to_string()]);

    let answer = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("the submit ends after terminate")
        .expect("task");
    let status = match answer {
        Err(status) => status,
        Ok(response) => match response.into_inner().message().await {
            Ok(Some(reply)) => panic!("a terminated submit replied {reply:?}"),
            Ok(None) => panic!("a terminated submit ended without an error"),
            Err(status) => status,
        },
    };
    assert_eq!(status.code(), tonic::Code::Cancelled, "{status:?}");
    drop(tx);

    // Nothing was committed: no submitted change, the file still opened; a submit then works.
    let changes = a.json(&["changes", "-s", "submitted"]);
    assert!(changes.is_empty(), "{changes:?}");
    let opened = a.json(&["opened"]);
    assert_eq!(opened.len(), 1, "{opened:?}");
    a.ok(&["submit", "-d", "after"]);
    let log = server.root.join("logs/commands.jsonl");
    log_until(&log, |r| {
        field(r, "id").as_u64() == Some(id) && str_field(r, "result") == "terminated"
    });
}

#[test]
fn every_command_is_logged_and_errors_are_told() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_at(&dir.path().join("root")).expect("starts");
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    a.fail(&["fstat", "//depot/none"]);
    let log = server.root.join("logs/commands.jsonl");
    let lines = log_until(&log, |r| str_field(r, "command") == "Fstat");
    let fstat = lines
        .iter()
        .find(|r| str_field(r, "command") == "Fstat")
        .expect("fstat");
    assert_eq!(str_field(fstat, "result"), "error");
    assert_eq!(str_field(fstat, "code"), "NOT_FOUND");
    assert!(
        str_field(fstat, "error").contains("//depot/none"),
        "{fstat}"
    );
    assert!(str_field(fstat, "args").contains("//depot/none"), "{fstat}");
    assert_eq!(str_field(fstat, "workspace"), "wa");
    assert!(str_field(fstat, "time").ends_with('Z'), "{fstat}");
    let save = lines
        .iter()
        .find(|r| str_field(r, "command") == "SaveWorkspace")
        .expect("workspace save");
    assert_eq!(str_field(save, "result"), "ok");
    assert!(str_field(save, "program").starts_with("keel/"), "{save}");
    assert!(field(save, "lapse_ms").as_f64().expect("lapse") > 0.0);
    // Failed commands also go to the server's own log.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !server.stderr().contains("command failed") {
        assert!(Instant::now() < deadline, "{}", server.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `files` and `fstat` of N files read at least N rows, `changes -m 1` one, `files -m 2` its
/// two and one per argument after them, and the record says so.
#[test]
fn files_fstat_and_changes_records_count_the_rows_they_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_at(&dir.path().join("root")).expect("starts");
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    const N: u64 = 30;
    for i in 0..N {
        write(&a.cwd, &format!("r/f{i}.txt"), format!("{i}\n"));
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "thirty files"]);
    for i in 0..3 {
        a.ok(&["edit", &format!("r/f{i}.txt")]);
        a.ok(&["submit", "-d", "one more change"]);
    }
    a.ok(&["files", "//depot/r/..."]);
    a.ok(&["fstat", "//depot/r/..."]);
    a.ok(&["changes", "-m", "1"]);
    let first = a.json(&["files", "-m", "2", "//depot/r/...", "//depot/r/f7.txt"]);
    assert_eq!(first.len(), 2, "{first:?}");
    a.fail(&["files", "-m", "1", "//depot/r/...", "//depot/none"]);
    let log = server.root.join("logs/commands.jsonl");
    let lines = log_until(&log, |r| {
        str_field(r, "command") == "Files" && str_field(r, "result") == "error"
    });
    // `files -m 2` reads its two files and the first match of the argument after them.
    let limited = lines
        .iter()
        .find(|r| str_field(r, "command") == "Files" && str_field(r, "args").contains("max: 2"))
        .expect("a Files -m 2 record");
    assert_eq!(field(limited, "rows_read").as_u64(), Some(3), "{limited}");
    // `changes -m 1` reads the newest change alone, not a page of them.
    let changes = lines
        .iter()
        .find(|r| str_field(r, "command") == "Changes")
        .expect("a Changes record");
    assert_eq!(field(changes, "rows_read").as_u64(), Some(1), "{changes}");
    for command in ["Files", "Fstat"] {
        let record = lines
            .iter()
            .find(|r| str_field(r, "command") == command)
            .unwrap_or_else(|| panic!("no {command} record"));
        let read = field(record, "rows_read").as_u64().expect("rows_read");
        assert!(
            read >= N,
            "{command} read {read} rows of {N} files: {record}"
        );
        assert_eq!(field(record, "rows_written").as_u64(), Some(0), "{record}");
    }
}

#[test]
fn a_full_disk_under_the_command_log_fails_no_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_full(
        &dir.path().join("root"),
        &[],
        &["--command-log", "/dev/full"],
    )
    .expect("starts");
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    for i in 0..20 {
        write(&a.cwd, &format!("f{i}.txt"), format!("{i}\n"));
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "on a full disk"]);
    let b = workspace_on(&server, dir.path(), "bob", "wb");
    b.ok(&["sync"]);
    assert_eq!(read(&b.cwd, "f7.txt"), b"7\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !server.stderr().contains("command log: records lost") {
        assert!(Instant::now() < deadline, "{}", server.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_command_log_rotates_by_size_and_keeps_few_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(
        root.join("keel.toml"),
        "command_log_rotate_bytes = 2000\ncommand_log_keep = 2\nslow_command_ms = 0\n",
    )
    .expect("keel.toml");
    let server = Server::start_at(&root).expect("starts");
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    for _ in 0..40 {
        a.ok(&["info"]);
    }
    // With a threshold of 0 every command is slow, so each goes to the server's log too.
    assert!(
        server.stderr().contains("slow command"),
        "{}",
        server.stderr()
    );
    let logs = root.join("logs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !logs.join("commands.jsonl.2").exists() {
        assert!(Instant::now() < deadline, "never rotated twice");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut names: Vec<String> = std::fs::read_dir(&logs)
        .expect("logs dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["commands.jsonl", "commands.jsonl.1", "commands.jsonl.2"]
    );
    for name in &names[1..] {
        let text = std::fs::read_to_string(logs.join(name)).expect("rotated log");
        assert!(text.len() <= 2000, "{name} is {} bytes", text.len());
        for line in text.lines() {
            let r: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            assert!(!str_field(&r, "command").is_empty());
        }
    }
}

/// An update of an `allwrite` workspace (every synced file writable) checks each updated file
/// against the have revision's digest the sync record carries: the command log shows the sync
/// and no read of the whole have list, and a file edited in place is still not clobbered.
#[test]
fn an_allwrite_update_reads_no_whole_have_list() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_at(&dir.path().join("root")).expect("starts");
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    let b = workspace_on(&server, dir.path(), "bob", "wb");
    for i in 0..5 {
        crate::common::write(&a.cwd, &format!("f{i}.txt"), format!("{i}\n"));
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "five"]);
    let root = b.cwd.to_str().expect("utf-8").to_string();
    b.ok(&[
        "workspace",
        "create",
        "wb",
        "--root",
        &root,
        "--options",
        "allwrite",
    ]);
    b.ok(&["sync"]);
    crate::common::write(&b.cwd, "f4.txt", "bob's own\n");
    a.ok(&["edit", "f0.txt", "f1.txt", "f4.txt"]);
    for i in [0, 1, 4] {
        crate::common::write(&a.cwd, &format!("f{i}.txt"), format!("{i} again\n"));
    }
    a.ok(&["submit", "-d", "three"]);
    let out = b.run(&["sync"]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(text.contains("Can't clobber writable file"), "{text}");
    assert_eq!(crate::common::read(&b.cwd, "f0.txt"), b"0 again\n");
    assert_eq!(crate::common::read(&b.cwd, "f4.txt"), b"bob's own\n");
    // Both syncs of wb are logged (the first and the update); neither read a whole have list.
    let log = server.root.join("logs/commands.jsonl");
    let wb_syncs = |lines: &[serde_json::Value]| {
        lines
            .iter()
            .filter(|r| str_field(r, "command") == "Sync" && str_field(r, "workspace") == "wb")
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut lines = log_until(&log, |_| true);
    while wb_syncs(&lines) < 2 {
        assert!(Instant::now() < deadline, "the update is not logged");
        std::thread::sleep(Duration::from_millis(20));
        lines = log_until(&log, |_| true);
    }
    let have_reads: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|r| str_field(r, "command") == "Have" && str_field(r, "workspace") == "wb")
        .collect();
    assert!(have_reads.is_empty(), "{have_reads:?}");
}

/// A submit moves the submitting workspace's sync mark past its change when nothing else in
/// its view changed since the mark: the command log shows the next sync reading no row (not
/// even the submitted files), where a change by someone else since is read file by file and a
/// forced sync reads the whole have list.
#[test]
fn the_sync_after_an_own_submit_reads_no_have_list() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start_at(&dir.path().join("root")).expect("starts");
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    let b = workspace_on(&server, dir.path(), "bob", "wb");
    for i in 0..20 {
        crate::common::write(&a.cwd, &format!("f{i}.txt"), format!("{i}\n"));
    }
    a.ok(&["add", "..."]);
    a.ok(&["submit", "-d", "twenty"]);
    b.ok(&["sync"]);
    b.ok(&["edit", "f1.txt", "f2.txt", "f3.txt"]);
    for i in 1..4 {
        crate::common::write(&b.cwd, &format!("f{i}.txt"), format!("{i} by bob\n"));
    }
    b.ok(&["submit", "-d", "bob's three"]);
    b.ok(&["sync"]);
    // Someone else's change in the view: the next sync looks at its file, and bob's own
    // submit after it leaves the mark where it was.
    a.ok(&["sync"]);
    a.ok(&["edit", "f9.txt"]);
    crate::common::write(&a.cwd, "f9.txt", "9 by alice\n");
    a.ok(&["submit", "-d", "alice's one"]);
    b.ok(&["edit", "f4.txt"]);
    crate::common::write(&b.cwd, "f4.txt", "4 by bob\n");
    b.ok(&["submit", "-d", "bob's one"]);
    b.ok(&["sync"]);
    b.ok(&["sync", "-f"]);
    assert_eq!(crate::common::read(&b.cwd, "f9.txt"), b"9 by alice\n");
    let log = server.root.join("logs/commands.jsonl");
    let wb_syncs = |lines: &[serde_json::Value]| -> Vec<u64> {
        lines
            .iter()
            .filter(|r| str_field(r, "command") == "Sync" && str_field(r, "workspace") == "wb")
            .map(|r| field(r, "rows_read").as_u64().expect("rows_read"))
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut lines = log_until(&log, |_| true);
    while wb_syncs(&lines).len() < 4 {
        assert!(Instant::now() < deadline, "bob's syncs are not all logged");
        std::thread::sleep(Duration::from_millis(20));
        lines = log_until(&log, |_| true);
    }
    let rows = wb_syncs(&lines);
    // The first sync and the forced one read every file; after bob's own submit, nothing;
    // after alice's change and bob's, their two files.
    assert!(rows[0] >= 20, "{rows:?}");
    assert_eq!(rows[1], 0, "{rows:?}");
    assert_eq!(rows[2], 2, "{rows:?}");
    assert!(rows[3] >= 20, "{rows:?}");
}

/// A P4 client's `monitor terminate ID` stops a command as `keel monitor terminate` does:
/// the long read ends as terminated by the P4 user; an unknown id and a user without super
/// access are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_p4_client_terminates_a_running_command() {
    let s = tokio::task::spawn_blocking(|| {
        crate::p4_harness::P4Server::start_with(
            "127.0.0.1:0",
            &[],
            &[
                "content_chunk_bytes = 8192",
                "handover_max_records = 2",
                "handover_max_bytes = 16384",
            ],
        )
    })
    .await
    .expect("server");
    let a = workspace_on(&s.server, s.home.path(), "alice", "wa");
    write(&a.cwd, "big.bin", bytes(7, 4 << 20));
    a.ok(&["add", "big.bin"]);
    a.ok(&["submit", "-d", "big"]);
    crate::access::protect(&a, &["super user alice * //...", "write user bob * //..."]);
    let mut client = slow_client(&s.server.addr).await;
    let mut stream = client
        .print(pb::FilesRequest {
            caller: caller("alice", "wa"),
            files: vec!["//depot/big.bin".into()],
            ..Default::default()
        })
        .await
        .expect("print starts")
        .into_inner();
    assert!(stream.message().await.expect("first message").is_some());
    let c = a.clone();
    let print = tokio::task::spawn_blocking(move || {
        running_until(&c, |r| str_field(r, "command") == "Print")
    })
    .await
    .expect("monitor show");
    let id = field(&print, "id").as_u64().expect("id").to_string();
    let steps = [
        serde_json::json!({"cmd": ["monitor", "terminate", id], "user": "bob", "tagged": false}),
        serde_json::json!({"cmd": ["monitor", "terminate", "999999"], "user": "alice", "tagged": false}),
        serde_json::json!({"cmd": ["monitor", "terminate", id], "user": "alice", "tagged": false}),
    ];
    // The server must outlive the drive: it is handed back.
    let (_s, r) = tokio::task::spawn_blocking(move || {
        let r = s.drive(&steps);
        (s, r)
    })
    .await
    .expect("drive");
    assert!(
        crate::p4_harness::raised(&r[0]).contains("super"),
        "{:?}",
        r[0]
    );
    assert!(
        crate::p4_harness::raised(&r[1]).contains("no command 999999 is running"),
        "{:?}",
        r[1]
    );
    assert_eq!(
        crate::p4_harness::ok(&r[2]),
        &serde_json::json!([format!("** process '{id}' marked for termination **")])
    );
    let (_, status) = read_to_termination(&mut stream).await;
    assert_eq!(status.code(), tonic::Code::Cancelled, "{status:?}");
    assert!(
        status.message().contains("terminated by alice"),
        "{status:?}"
    );
}
