//! P4 clients' sessions through P4Python: the protocol exchange, `info` tagged and untagged,
//! and the errors a session meets (an unknown command, a message over the size limit).

use crate::p4_harness::{P4Server, ok, raised};
use serde_json::json;

#[test]
fn info_tagged_names_the_server_as_tools_parse_it() {
    let s = P4Server::start();
    let r = s.drive(&[json!({"cmd": ["info"]})]);
    assert_eq!(r[0]["server_level"], 59, "{r:?}");
    let info = &ok(&r[0])[0];
    let root = s.server.root.canonicalize().expect("root");
    assert_eq!(info["serverRoot"], root.display().to_string());
    assert_eq!(info["serverAddress"], s.port);
    assert_eq!(info["caseHandling"], "sensitive");
    assert_eq!(info["serverLicense"], "none");
    assert_eq!(info["clientName"], "alice_ws");
    assert_eq!(info["clientHost"], "p4host");
    // No user is on record yet, and `info` records none.
    assert_eq!(info["userName"], "*unknown*");
    let version = info["serverVersion"].as_str().expect("version");
    let parts: Vec<&str> = version.split('/').collect();
    assert_eq!(parts[0], "Keel", "{version}");
    assert!(parts[2].replace('.', "").parse::<u32>().expect("YYYYN") >= 20052);
    assert!(
        parts[3]
            .split(' ')
            .next()
            .expect("change")
            .parse::<u32>()
            .is_ok()
            && version.ends_with(')'),
        "{version}"
    );
    assert!(
        info["serverDate"]
            .as_str()
            .expect("date")
            .ends_with("+0000 UTC")
    );
}

#[test]
fn info_untagged_is_the_lines_a_user_reads() {
    let s = P4Server::start();
    let r = s.drive(&[json!({"cmd": ["info"], "tagged": false})]);
    let lines: Vec<String> = ok(&r[0])
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().expect("text").to_string())
        .collect();
    assert_eq!(lines[0], "User name: *unknown*");
    assert_eq!(lines[1], "Client name: alice_ws");
    assert_eq!(lines[2], "Client host: p4host");
    assert_eq!(lines[3], "Client unknown.");
    assert!(lines.contains(&format!("Server address: {}", s.port)));
    assert!(lines.contains(&"Case Handling: sensitive".to_string()));
    assert!(lines.iter().any(|l| l.starts_with("Server version: Keel/")));
    // `-s` leaves the license out.
    let r = s.drive(&[json!({"cmd": ["info", "-s"], "tagged": false})]);
    assert!(
        !ok(&r[0])
            .as_array()
            .expect("lines")
            .iter()
            .any(|l| l.as_str().is_some_and(|l| l.starts_with("Server license")))
    );
}

#[test]
fn an_unknown_command_or_flag_is_an_error_not_a_hang() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"cmd": ["frobnicate", "x"]}),
        json!({"cmd": ["info", "-z"]}),
        json!({"cmd": ["info"]}),
    ]);
    let e = raised(&r[0]);
    assert!(
        e.contains("Unknown command") && e.contains("frobnicate"),
        "{e}"
    );
    assert_eq!(r[0]["messages"][0]["severity"], 3, "{r:?}");
    assert_eq!(r[0]["messages"][0]["generic"], 2, "{r:?}");
    let e = raised(&r[1]);
    assert!(
        e.contains("Invalid option: -z.") && e.contains("Usage: info"),
        "{e}"
    );
    // The connection still serves the next command.
    assert_eq!(ok(&r[2])[0]["caseHandling"], "sensitive");
}

#[test]
fn a_message_over_the_size_limit_is_refused_and_the_server_stays_up() {
    let s = P4Server::start_with("127.0.0.1:0", &[], &["p4_max_message_bytes = 4096"]);
    let big = "x".repeat(20_000);
    let r = s.drive(&[
        json!({"cmd": ["info", big]}),
        json!({"new": true, "cmd": ["info"]}),
    ]);
    raised(&r[0]);
    assert!(
        s.server.stderr().contains("P4 message over the size limit"),
        "{}",
        s.server.stderr()
    );
    assert_eq!(ok(&r[1])[0]["caseHandling"], "sensitive");
}

#[test]
fn info_over_stdio_through_an_rsh_port() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("server");
    let port = format!(
        "rsh:{} serve --p4-stdio --root {}",
        crate::common::KEEL,
        root.display()
    );
    // Each connection starts its own process on the root, one after the other.
    let r = crate::p4_harness::drive(
        &port,
        dir.path(),
        &[
            json!({"cmd": ["info"]}),
            json!({"new": true, "cmd": ["info"], "tagged": false}),
            json!({"new": true, "cmd": ["nosuchcommand"]}),
        ],
    );
    let info = &ok(&r[0])[0];
    assert_eq!(
        info["serverRoot"],
        root.canonicalize().expect("root").display().to_string()
    );
    assert!(
        ok(&r[1])
            .as_array()
            .expect("lines")
            .contains(&json!("Case Handling: sensitive"))
    );
    assert!(raised(&r[2]).contains("Unknown command"));
}

#[test]
fn commands_the_protections_table_refuses_are_refused_but_info_is_not() {
    let s = P4Server::start();
    let admin = s.server.client("admin", "", s.home.path());
    crate::access::protect(
        &admin,
        &["super user admin * //...", "read user alice * //depot/..."],
    );
    let r = s.drive(&[
        json!({"user": "bob", "cmd": ["users"]}),
        json!({"user": "bob", "cmd": ["clients"]}),
        json!({"user": "bob", "cmd": ["info"]}),
        json!({"user": "alice", "cmd": ["users"]}),
    ]);
    for refused in &r[..2] {
        let e = raised(refused);
        assert!(
            e.contains("You don't have permission") && e.contains("list"),
            "{e}"
        );
        assert_eq!(refused["messages"][0]["generic"], 6, "{refused:?}");
    }
    assert_eq!(ok(&r[2])[0]["caseHandling"], "sensitive");
    // Read access includes list.
    assert!(ok(&r[3]).as_array().is_some());
    // The refusals reached the command log like any command's, under the row `users` runs.
    // The log is written after the reply, so wait for the line (bounded).
    let path = s.server.root.join("logs/commands.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let log = std::fs::read_to_string(&path).unwrap_or_default();
        if log.lines().any(|l| {
            l.contains("\"command\":\"ListUsers\"")
                && l.contains("\"user\":\"bob\"")
                && l.contains("\"code\":\"PERMISSION_DENIED\"")
        }) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no refused ListUsers record for bob in:\n{log}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn ssl_with_trust_shows_the_fingerprint_the_server_printed() {
    let s = P4Server::start_with("ssl:127.0.0.1:0", &[], &[]);
    assert!(s.port.starts_with("ssl:"), "{}", s.port);
    let fingerprint = s
        .fingerprint
        .clone()
        .expect("a TLS listener prints its fingerprint");
    // A client that has not trusted the server is stopped, shown the fingerprint.
    let stranger = tempfile::tempdir().expect("another client home");
    let r = crate::p4_harness::drive(&s.port, stranger.path(), &[json!({"cmd": ["info"]})]);
    let refused = r[0]["errors"].to_string();
    assert!(
        refused.contains("p4 trust") && refused.contains(&fingerprint),
        "{refused}"
    );
    let r = s.drive(&[
        json!({"method": "run_trust", "args": ["-y"]}),
        json!({"new": true, "cmd": ["info"]}),
    ]);
    // The client names the fingerprint it computed itself: the one the server printed.
    let said = ok(&r[0]).to_string();
    assert!(
        said.contains("is not known") && said.contains(&fingerprint),
        "{said}"
    );
    let trusted = std::fs::read_to_string(s.home.path().join("trust")).expect("trust file");
    assert!(trusted.contains(&fingerprint), "{trusted}");
    assert_eq!(ok(&r[1])[0]["serverCertFingerprint"], fingerprint.as_str());
}

/// An `rsh:` connection whose root another `--p4-stdio` process still holds (the previous
/// connection exiting) waits for it; with `p4_stdio_lock_wait_ms = 0` it is refused at once,
/// naming the holder.
#[test]
fn an_rsh_connection_waits_for_the_previous_one_to_leave_the_root() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("server");
    let port = format!(
        "rsh:{} serve --p4-stdio --root {}",
        crate::common::KEEL,
        root.display()
    );
    // First connection: creates the root and leaves.
    let r = crate::p4_harness::drive(&port, dir.path(), &[json!({"cmd": ["info"]})]);
    ok(&r[0]);
    // A process serving a connection that has not ended holds the root for a second.
    let mut holder = Command::new(crate::common::KEEL)
        .args(["serve", "--p4-stdio", "--root"])
        .arg(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("holder starts");
    let lock = root.join("server.lock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(&lock)
        .unwrap_or_default()
        .contains(&holder.id().to_string())
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the holder never took the root"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let stdin = holder.stdin.take().expect("stdin");
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(1));
        drop(stdin);
    });
    let r = crate::p4_harness::drive(&port, dir.path(), &[json!({"cmd": ["info"]})]);
    assert!(ok(&r[0])[0]["serverRoot"].as_str().is_some());
    release.join().expect("released");
    holder.wait().expect("holder exits");

    // Without waiting, a held root is refused at once.
    std::fs::write(root.join("keel.toml"), "p4_stdio_lock_wait_ms = 0\n").expect("toml");
    let mut holder = Command::new(crate::common::KEEL)
        .args(["serve", "--p4-stdio", "--root"])
        .arg(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("holder starts");
    while !std::fs::read_to_string(&lock)
        .unwrap_or_default()
        .contains(&holder.id().to_string())
    {
        assert!(std::time::Instant::now() < deadline + std::time::Duration::from_secs(10));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = Command::new(crate::common::KEEL)
        .args(["serve", "--p4-stdio", "--root"])
        .arg(&root)
        .stdin(Stdio::null())
        .output()
        .expect("second process");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already using") && err.contains(&format!("pid {}", holder.id())),
        "{err}"
    );
    drop(holder.stdin.take());
    holder.wait().expect("holder exits");
}

#[test]
fn monitor_show_lists_the_running_commands_and_details_need_super() {
    let s = P4Server::start();
    // No protections table yet: everyone is a super user and sees the details.
    let r = s.drive(&[
        json!({"cmd": ["monitor", "show"]}),
        json!({"cmd": ["monitor", "show", "-a", "-l", "-e"]}),
        json!({"cmd": ["monitor", "show", "-a"], "tagged": false}),
    ]);
    // The monitor's own command is running while it lists.
    let own = |rows: &serde_json::Value| {
        rows.as_array()
            .expect("rows")
            .iter()
            .find(|r| r["command"] == "MonitorShow" && r["owner"] == "alice")
            .cloned()
            .unwrap_or_else(|| panic!("no MonitorShow of alice in {rows}"))
    };
    let plain = own(ok(&r[0]));
    assert_eq!(plain["status"], "R", "{plain}");
    assert!(
        plain["id"].as_str().expect("id").parse::<u64>().is_ok(),
        "{plain}"
    );
    assert!(
        plain["time"].as_str().expect("time").starts_with("00:00:"),
        "{plain}"
    );
    assert!(plain.get("args").is_none(), "{plain}");
    let detailed = own(ok(&r[1]));
    assert_eq!(detailed["args"], "show -a -l -e", "{detailed}");
    assert_eq!(detailed["client"], "alice_ws", "{detailed}");
    assert!(
        detailed["prog"].as_str().expect("prog").contains("P4PY"),
        "{detailed}"
    );
    let lines = ok(&r[2]).to_string();
    assert!(
        lines.contains(" R alice    00:00:0") && lines.contains("MonitorShow show -a"),
        "{lines}"
    );

    // With a protections table, a user without super lists but sees no details.
    let admin = s.server.client("admin", "", s.home.path());
    crate::access::protect(
        &admin,
        &["super user admin * //...", "write user alice * //..."],
    );
    let r = s.drive(&[
        json!({"cmd": ["monitor", "show"]}),
        json!({"cmd": ["monitor", "show", "-a"]}),
        json!({"cmd": ["monitor", "terminate", "1"]}),
        json!({"cmd": ["monitor"]}),
        json!({"cmd": ["monitor", "show", "-x"]}),
    ]);
    assert_eq!(own(ok(&r[0]))["status"], "R");
    let e = raised(&r[1]);
    assert!(
        e.contains("user alice") && e.contains("monitor show -a/-l needs super"),
        "{e}"
    );
    let e = raised(&r[2]);
    assert!(e.contains("monitor terminate needs super"), "{e}");
    assert!(raised(&r[3]).contains("Missing subcommand"), "{:?}", r[3]);
    assert!(raised(&r[4]).contains("Usage: monitor show"), "{:?}", r[4]);
}
