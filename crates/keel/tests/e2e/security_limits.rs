//! End-to-end: the limits that keep one user from exhausting the server (issue rows 4 and 5).
//! Every size limit is refused with the field, its size and the limit, and saves nothing;
//! connections past the per-address cap are closed while another address is served; idle
//! connections are closed on the gRPC and the metrics listener. Limits are set small in
//! `keel.toml` so that each case stays a handful of connections and bytes.

use crate::common::{Client, Server, workspace_on, write};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// A server at `dir/server` with `config` as its `keel.toml`, and metrics on.
fn server_with(dir: &Path, config: &str) -> Server {
    let root = dir.join("server");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(root.join("keel.toml"), config).expect("keel.toml");
    Server::start_full(&root, &[], &["--metrics-listen", "127.0.0.1:0"]).expect("server starts")
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A refusal that names `what`, the size and the limit, and says nothing was saved.
fn assert_refused(message: &str, what: &str, size: &str, limit: &str) {
    for part in [what, size, limit, "nothing was saved"] {
        assert!(message.contains(part), "expected {part:?} in: {message}");
    }
}

const SIZES: &str = "[service]\nmax_description_bytes = 1000\nmax_form_field_bytes = 600\n\
                     max_form_bytes = 1500\nmax_view_lines = 5\nmax_table_lines = 5\n";

#[test]
fn every_size_limit_is_refused_with_its_numbers_and_saves_nothing() {
    let dir = tempfile::tempdir().expect("temp");
    let server = server_with(dir.path(), SIZES);
    let w = workspace_on(&server, dir.path(), "alice", "alice-ws");
    let long = "d".repeat(1001);

    // A change description: `change -d` and `submit -d`.
    let refused = w.fail(&["change", "-d", &long]);
    assert_refused(&refused, "change description", "1001 bytes", "1000 bytes");
    assert!(w.json(&["changes"]).is_empty(), "no change was created");
    write(&w.cwd, "a.txt", "a\n");
    w.ok(&["add", "a.txt"]);
    let refused = w.fail(&["submit", "-d", &long]);
    assert_refused(&refused, "change description", "1001 bytes", "1000 bytes");
    assert!(w.json(&["changes"]).is_empty(), "nothing was submitted");
    assert_eq!(w.json(&["opened"]).len(), 1, "the file is still open");
    w.ok(&["submit", "-d", &"d".repeat(1000)]);
    let long_listing = w.ok(&["changes", "-l"]);
    assert!(
        long_listing.contains(&format!("\t{}\n", "d".repeat(1000))),
        "changes -l prints the whole description: {long_listing}"
    );
    // `shelve --description` creates its change through the same check.
    w.ok(&["edit", "a.txt"]);
    let refused = w.fail(&["shelve", "--description", &long]);
    assert_refused(&refused, "change description", "1001 bytes", "1000 bytes");
    assert_eq!(
        w.json(&["changes"]).len(),
        1,
        "no pending change was created"
    );
    w.ok(&["revert", "a.txt"]);

    // A workspace: its Description, a View past its lines, a form past its whole size.
    let root = dir.path().join("big");
    let root = root.to_str().expect("utf-8");
    let refused = w.fail(&[
        "workspace",
        "create",
        "big",
        "--root",
        root,
        "--description",
        &long,
    ]);
    assert_refused(&refused, "workspace form's Description", "1001", "1000");
    let mut args = vec!["workspace", "create", "big", "--root", root];
    let view: Vec<String> = (0..6)
        .map(|i| format!("//depot/d{i}/... //big/d{i}/..."))
        .collect();
    for line in &view {
        args.extend(["--view", line.as_str()]);
    }
    let refused = w.fail(&args);
    assert_refused(&refused, "workspace form's View", "6 lines", "5 lines");
    let wide: Vec<String> = (0..4)
        .map(|i| format!("//depot/{}{i}/... //big/w{i}/...", "p".repeat(110)))
        .collect();
    let mut args = vec!["workspace", "create", "big", "--root", root];
    for line in &wide {
        args.extend(["--view", line.as_str()]);
    }
    let description = "d".repeat(990);
    args.extend(["--description", description.as_str()]);
    let refused = w.fail(&args);
    assert_refused(&refused, "workspace form is", "bytes", "1500 bytes");
    let names: Vec<String> = w
        .json(&["workspace", "list"])
        .iter()
        .map(|v| v["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(names, ["alice-ws"], "no workspace 'big' was saved");

    // A label, a branch, a depot: their Description.
    let refused = w.fail(&["label", "create", "rel", "-d", &long]);
    assert_refused(&refused, "label form's Description", "1001", "1000");
    assert!(w.json(&["labels"]).is_empty(), "no label was saved");
    let refused = w.fail(&[
        "branch",
        "create",
        "br",
        "--view",
        "//depot/a/... //depot/b/...",
        "-d",
        &long,
    ]);
    assert_refused(&refused, "branch form's Description", "1001", "1000");
    assert!(w.json(&["branches"]).is_empty(), "no branch was saved");
    let refused = w.fail(&["depot", "create", "big", "-d", &long]);
    assert_refused(&refused, "depot form's Description", "1001", "1000");
    assert_eq!(w.json(&["depots"]).len(), 1, "only //depot");

    // A user's and a group's fields.
    let form = format!(
        "User: bob\nEmail: b@example.com\nFullName: {}\n",
        "f".repeat(601)
    );
    let out = w.run_stdin(&["user", "-f", "-i"], &form);
    assert!(!out.status.success(), "a 601-byte FullName was accepted");
    assert_refused(&stderr(&out), "user form's FullName", "601", "600");
    let users: Vec<String> = (0..70).map(|i| format!("\tmember-number-{i:03}")).collect();
    let form = format!("Group:\tbig\nUsers:\n{}\n", users.join("\n"));
    let out = w.run_stdin(&["group", "-i", "big"], &form);
    assert!(!out.status.success(), "a group of 70 users was accepted");
    assert_refused(&stderr(&out), "group form's Users", "bytes", "600 bytes");
    assert!(w.json(&["groups"]).is_empty(), "no group was saved");

    // The protections and triggers tables: past their lines.
    let lines: Vec<String> = (0..6)
        .map(|i| format!("\twrite user u{i} * //depot/..."))
        .collect();
    let table = format!("Protections:\n{}\n", lines.join("\n"));
    let out = w.run_stdin(&["protect", "-i"], &table);
    assert!(!out.status.success(), "a 6-line table was accepted");
    assert_refused(&stderr(&out), "protections table", "6 lines", "5 lines");
    assert!(w.json(&["protects"]).len() <= 1, "the table is unchanged");
    let lines: Vec<String> = (0..6)
        .map(|i| format!("\tt{i} change-commit //depot/... /bin/true"))
        .collect();
    let table = format!("Triggers:\n{}\n", lines.join("\n"));
    let out = w.run_stdin(&["triggers", "-i"], &table);
    assert!(
        !out.status.success(),
        "a 6-line triggers table was accepted"
    );
    assert_refused(&stderr(&out), "triggers table", "6 lines", "5 lines");
    let shown = w.ok(&["triggers", "-o"]);
    assert!(!shown.contains("t0"), "no trigger was saved: {shown}");
}

/// The server's gRPC address.
fn grpc_addr(server: &Server) -> SocketAddr {
    server.addr.parse().expect("a plain HOST:PORT")
}

/// The metrics listener's address.
fn metrics_addr(server: &Server) -> SocketAddr {
    let url = server.metrics_url().expect("metrics on");
    let host = url
        .trim_start_matches("http://")
        .trim_end_matches("/metrics");
    host.parse().expect("HOST:PORT")
}

/// A TCP connection to `to` from the loopback address `from` (127.0.0.2 as a second client).
fn connect_from(from: [u8; 4], to: SocketAddr) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .bind(SocketAddr::from((from, 0)))
            .expect("bind the client address");
        socket.connect(to).await.expect("connect")
    });
    let stream = stream.into_std().expect("std stream");
    stream.set_nonblocking(false).expect("blocking");
    stream
}

/// Whether the server closed `stream` within `within` (end of input or a reset); `false`
/// when it stayed open and silent.
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        stream.set_read_timeout(Some(left)).expect("timeout");
        match stream.read(&mut buf) {
            Ok(0) => return true,
            // The server's HTTP/2 SETTINGS and the like: keep reading.
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// The value of the metric line starting with `name ` (0 when absent).
fn metric(server: &Server, name: &str) -> f64 {
    let mut tcp = connect_from([127, 0, 0, 1], metrics_addr(server));
    tcp.write_all(b"GET /metrics HTTP/1.1\r\nHost: keel\r\nConnection: close\r\n\r\n")
        .expect("ask");
    let mut text = String::new();
    tcp.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    tcp.read_to_string(&mut text).expect("read the scrape");
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

/// The HTTP/2 client preface and an empty SETTINGS frame: a client that then says nothing.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

#[test]
fn connections_past_the_per_address_cap_are_closed_while_another_address_is_served() {
    let dir = tempfile::tempdir().expect("temp");
    let server = server_with(dir.path(), "max_connections_per_address = 20\n");
    let w = workspace_on(&server, dir.path(), "alice", "alice-ws");
    write(&w.cwd, "a.txt", "a\n");
    w.ok(&["add", "a.txt"]);
    w.ok(&["submit", "-d", "one file"]);

    let addr = grpc_addr(&server);
    let mut held: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut tcp = connect_from([127, 0, 0, 2], addr);
            tcp.write_all(PREFACE).expect("preface");
            tcp
        })
        .collect();
    let mut extra: Vec<TcpStream> = (0..5).map(|_| connect_from([127, 0, 0, 2], addr)).collect();
    // Well within the TLS handshake time limit (10 s), which would also drop a silent client.
    for (i, tcp) in extra.iter_mut().enumerate() {
        assert!(
            closed_within(tcp, Duration::from_secs(3)),
            "connection {} from 127.0.0.2 past the cap of 20 stayed open",
            21 + i
        );
    }
    assert!(
        !closed_within(&mut held[0], Duration::from_millis(300)),
        "a connection within the cap was closed"
    );
    // Another address is served while 127.0.0.2 holds its 20.
    let files = w.json(&["files", "//depot/..."]);
    assert_eq!(files.len(), 1);
    assert!(
        metric(&server, "keel_grpc_connections_refused_per_address_total") >= 5.0,
        "the refusals are counted"
    );
    assert!(
        server
            .stderr()
            .contains("max_connections_per_address (20) reached"),
        "the refusal is logged"
    );
    drop(held);
}

#[test]
fn an_idle_connection_is_closed_after_the_idle_timeout_on_both_listeners() {
    let dir = tempfile::tempdir().expect("temp");
    let server = server_with(dir.path(), "idle_timeout_ms = 1000\n");
    let w: Client = workspace_on(&server, dir.path(), "alice", "alice-ws");

    // gRPC: a client that sends the preface and no request.
    let mut grpc = connect_from([127, 0, 0, 2], grpc_addr(&server));
    grpc.write_all(PREFACE).expect("preface");
    assert!(
        closed_within(&mut grpc, Duration::from_secs(5)),
        "an idle gRPC connection stayed open"
    );
    // Metrics: a connection that asks nothing, and one left open after a scrape.
    let mut silent = connect_from([127, 0, 0, 2], metrics_addr(&server));
    assert!(
        closed_within(&mut silent, Duration::from_secs(5)),
        "an idle metrics connection stayed open"
    );
    let mut kept = connect_from([127, 0, 0, 2], metrics_addr(&server));
    kept.write_all(b"GET /metrics HTTP/1.1\r\nHost: keel\r\n\r\n")
        .expect("scrape");
    assert!(
        closed_within(&mut kept, Duration::from_secs(5)),
        "a kept-alive metrics connection stayed open after its scrape"
    );
    assert!(metric(&server, "keel_grpc_connections_idle_closed_total") >= 1.0);
    assert!(metric(&server, "keel_metrics_connections_idle_closed_total") >= 2.0);
    // Commands still work: each has its request in flight while it runs.
    write(&w.cwd, "a.txt", "a\n");
    w.ok(&["add", "a.txt"]);
    w.ok(&["submit", "-d", "after the idle closes"]);
}
