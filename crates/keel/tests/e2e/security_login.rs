//! A fair login limiter among hostile clients (issue 28, rows 6 and 11), through the real CLI
//! on loopback, clients on 127.0.0.1, .2 and .3 (`KEEL_BIND`): concurrent wrong logins check
//! no more passwords than the limit (counted by the server's own metrics), a user brute-forced
//! from one address still logs in from another, an unknown or password-less user costs and
//! answers the same as a wrong password, tickets are bound to their address (`login -a` for
//! every address), and behind `keel proxy` the server sees each client's own address, while a
//! client naming an address itself is ignored.

use crate::auth::As;
use crate::common::{Proxy, Server};
use keel_proto::v1 as pb;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

const ADMIN_PW: &str = "Adm1n-Pa55-login";
const ALICE_PW: &str = "Al1ce-Pa55-login";

/// A server at security level 3 with metrics, its metrics URL, and its admin (logged in).
fn level3_server(dir: &Path) -> (Server, String, As) {
    let server = Server::start_full(
        &dir.join("server"),
        &[],
        &["--metrics-listen", "127.0.0.1:0"],
    )
    .expect("server starts");
    let url = server.metrics_url().expect("metrics address");
    let admin = As::new(server.client("admin", "", dir), dir);
    admin.passwd_and_login(ADMIN_PW);
    admin.ok(&["configure", "set", "security=3"], "");
    (server, url, admin)
}

/// Creates `user` (a standard user, or `Type` `kind`) and, when `password` is given, sets it.
fn create_user(admin: &As, user: &str, kind: &str, password: Option<&str>) {
    admin.ok(
        &["user", "-f", "-i"],
        &format!("User: {user}\nEmail: {user}@example.com\nFullName: {user}\nType: {kind}\n"),
    );
    if let Some(pw) = password {
        admin.ok(&["passwd", user], &format!("{pw}\n{pw}\n"));
    }
}

/// `keel ARGS` as `who`, connecting from `from` (`KEEL_BIND`), with `stdin`.
fn run_from(who: &As, from: &str, args: &[&str], stdin: &str) -> Output {
    let tickets = who.tickets.to_str().expect("utf-8 path");
    who.client.run_with(
        args,
        &[("KEEL_TICKETS", tickets), ("KEEL_BIND", from)],
        stdin,
    )
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok_from(who: &As, from: &str, args: &[&str], stdin: &str) -> String {
    let out = run_from(who, from, args, stdin);
    assert!(
        out.status.success(),
        "keel {args:?} from {from} failed: {}",
        stderr(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fail_from(who: &As, from: &str, args: &[&str], stdin: &str) -> String {
    let out = run_from(who, from, args, stdin);
    assert!(
        !out.status.success(),
        "keel {args:?} from {from} unexpectedly succeeded"
    );
    stderr(&out)
}

/// The value of the counter `keel_NAME_total` the server's metrics report now.
fn counter(url: &str, name: &str) -> u64 {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (authority, path) = rest.split_once('/').expect("host/path");
    let mut stream = std::net::TcpStream::connect(authority).expect("metrics endpoint");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    write!(
        stream,
        "GET /{path} HTTP/1.0\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut body = String::new();
    stream.read_to_string(&mut body).expect("response");
    let line = format!("keel_{name}_total ");
    body.lines()
        .find_map(|l| l.strip_prefix(&line))
        .unwrap_or_else(|| panic!("no {line} in:\n{body}"))
        .trim()
        .parse::<f64>()
        .expect("a number") as u64
}

/// The address the server's command log recorded for the `n`-th (from 1, in the order they
/// ended) `command` run by `user` (waiting, bounded, for the log's writer).
fn logged_address(server: &Server, user: &str, command: &str, n: usize) -> String {
    let path = server.root.join("logs/commands.jsonl");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let found = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|r| r["user"] == user && r["command"] == command)
            .nth(n - 1);
        if let Some(record) = found {
            return record["address"].as_str().unwrap_or("").to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no {n}th {command} of {user} in the command log:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn forty_concurrent_wrong_logins_check_no_more_passwords_than_the_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, url, admin) = level3_server(dir.path());
    create_user(&admin, "alice", "standard", Some(ALICE_PW));
    let alice = As::new(server.client("alice", "", dir.path()), dir.path());
    let before = counter(&url, "password_checks");
    let answers: Vec<String> = std::thread::scope(|s| {
        let running: Vec<_> = (0..40)
            .map(|_| s.spawn(|| stderr(&run_from(&alice, "127.0.0.2", &["login"], "guess\n"))))
            .collect();
        running
            .into_iter()
            .map(|t| t.join().expect("login thread"))
            .collect()
    });
    let checked = counter(&url, "password_checks") - before;
    let invalid = answers
        .iter()
        .filter(|a| a.contains("password invalid for user alice"))
        .count();
    let limited = answers
        .iter()
        .filter(|a| a.contains("too many failed logins for user alice from 127.0.0.2"))
        .count();
    assert_eq!(invalid + limited, 40, "{answers:#?}");
    // The default limit is 5 attempts of one user from one address; every one checked was
    // answered as invalid, every other refused before any hash.
    assert!((1..=5).contains(&invalid), "{invalid} checked");
    assert_eq!(checked, invalid as u64);
    assert_eq!(
        counter(&url, "password_checks_limited"),
        limited as u64,
        "every refusal counted"
    );

    // The right password is refused from the guessing address (backing off)...
    let refused = fail_from(&alice, "127.0.0.2", &["login"], &format!("{ALICE_PW}\n"));
    assert!(refused.contains("try again in "), "{refused}");
    // ... but not from another: the guesses locked no one else out.
    let out = ok_from(&alice, "127.0.0.1", &["login"], &format!("{ALICE_PW}\n"));
    assert!(out.contains("User alice logged in"), "{out}");
    assert!(ok_from(&alice, "127.0.0.1", &["login", "-s"], "").contains("expires"));
}

#[test]
fn an_unknown_or_password_less_user_costs_and_answers_as_a_wrong_password() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, url, admin) = level3_server(dir.path());
    create_user(&admin, "bob", "standard", None);
    create_user(&admin, "alice", "standard", Some(ALICE_PW));
    for (user, from) in [
        ("ghost", "127.0.0.3"),
        ("bob", "127.0.0.2"),
        ("alice", "127.0.0.1"),
    ] {
        let who = As::new(server.client(user, "", dir.path()), dir.path());
        let before = counter(&url, "password_checks");
        for _ in 0..5 {
            let refused = fail_from(&who, from, &["login"], "guess\n");
            assert!(
                refused.contains(&format!("password invalid for user {user}")),
                "{user}: {refused}"
            );
        }
        // Each attempt cost one hash, whether or not the user exists or has a password.
        assert_eq!(counter(&url, "password_checks") - before, 5, "{user}");
        let refused = fail_from(&who, from, &["login"], "guess\n");
        assert!(
            refused.contains(&format!(
                "too many failed logins for user {user} from {from}"
            )),
            "{user}: {refused}"
        );
    }
    // Below level 3 (where anyone may list users) a password-less user is told so, and the
    // attempt still counts against the limits.
    admin.ok(&["configure", "set", "security=2"], "");
    let carol = As::new(server.client("carol", "", dir.path()), dir.path());
    for _ in 0..5 {
        let refused = fail_from(&carol, "127.0.0.4", &["login"], "guess\n");
        assert!(refused.contains("carol has no password"), "{refused}");
    }
    let refused = fail_from(&carol, "127.0.0.4", &["login"], "guess\n");
    assert!(refused.contains("too many failed logins"), "{refused}");
}

#[test]
fn a_ticket_is_bound_to_its_address_unless_login_a() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, _url, admin) = level3_server(dir.path());
    create_user(&admin, "alice", "standard", Some(ALICE_PW));
    let alice = As::new(server.client("alice", "", dir.path()), dir.path());
    let out = ok_from(&alice, "127.0.0.1", &["login"], &format!("{ALICE_PW}\n"));
    assert!(out.contains("ticket valid only from 127.0.0.1"), "{out}");
    ok_from(&alice, "127.0.0.1", &["users"], "");
    let refused = fail_from(&alice, "127.0.0.2", &["users"], "");
    assert!(
        refused.contains("is valid only from 127.0.0.1, not from 127.0.0.2")
            && refused.contains("keel login -a"),
        "{refused}"
    );
    // `login -a`: one ticket for every address.
    let out = ok_from(
        &alice,
        "127.0.0.1",
        &["login", "-a"],
        &format!("{ALICE_PW}\n"),
    );
    assert!(!out.contains("valid only"), "{out}");
    ok_from(&alice, "127.0.0.2", &["users"], "");
    ok_from(&alice, "127.0.0.1", &["users"], "");

    // The setting: off binds no ticket; a bad value is refused and changes nothing.
    let bad = admin.fail(&["configure", "set", "auth.tickets.bind=maybe"], "");
    assert!(bad.contains("auto, on or off"), "{bad}");
    let shown = admin.ok(&["configure", "show"], "");
    assert!(shown.contains("auth.tickets.bind"), "{shown}");
    admin.ok(&["configure", "set", "auth.tickets.bind=off"], "");
    ok_from(&alice, "127.0.0.1", &["login"], &format!("{ALICE_PW}\n"));
    ok_from(&alice, "127.0.0.2", &["users"], "");
}

/// A `Login` sent straight to `addr` with the forwarding metadata a proxy would add, naming
/// `named` as the client's address and `ticket` as the forwarder's.
fn login_naming(addr: &str, user: &str, named: &str, ticket: &str) -> tonic::Status {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .expect("endpoint")
            .connect_timeout(Duration::from_secs(10))
            .connect()
            .await
            .expect("connect");
        let mut client = pb::keel_client::KeelClient::new(channel);
        let mut req = tonic::Request::new(pb::LoginRequest {
            caller: Some(pb::Caller {
                user: user.to_string(),
                workspace: String::new(),
                host: "raw".to_string(),
                force: false,
            }),
            password: "guess".to_string(),
            all_hosts: false,
        });
        let metadata = req.metadata_mut();
        metadata.insert("keel-client-address", named.parse().expect("ascii"));
        metadata.insert("keel-forwarder-ticket", ticket.parse().expect("ascii"));
        tokio::time::timeout(Duration::from_secs(20), client.login(req))
            .await
            .expect("answer within 20 s")
            .expect_err("a wrong password")
    })
}

/// The ticket the tickets file of `who` holds (its one line's last field).
fn ticket_of(who: &As) -> String {
    let text = std::fs::read_to_string(&who.tickets).expect("tickets file");
    let line = text.lines().next().expect("one ticket");
    line.rsplit(['=', ':', ' '])
        .next()
        .expect("ticket")
        .to_string()
}

#[test]
fn behind_a_proxy_the_server_sees_each_clients_own_address() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, _url, admin) = level3_server(dir.path());
    create_user(&admin, "svc", "service", Some("Serv1ce-pass"));
    create_user(&admin, "alice", "standard", Some(ALICE_PW));
    create_user(&admin, "mallory", "standard", Some("Mall0ry-pass"));
    let svc = As::new(server.client("svc", "", dir.path()), dir.path());
    ok_from(&svc, "127.0.0.1", &["login"], "Serv1ce-pass\n");
    let svc_tickets = svc.tickets.to_str().expect("utf-8").to_string();
    let proxy = Proxy::start_with(
        &server.addr,
        &dir.path().join("cache"),
        &["--service-user", "svc"],
        &[("KEEL_TICKETS", svc_tickets.as_str())],
    )
    .expect("proxy starts");

    // Mallory guesses through the proxy from 127.0.0.2 until refused...
    let mallory = As::new(proxy.client("mallory", "", dir.path()), dir.path());
    let mut logins = 0;
    loop {
        let refused = fail_from(&mallory, "127.0.0.2", &["login"], "guess\n");
        logins += 1;
        if refused.contains("too many failed logins for user mallory from 127.0.0.2") {
            break;
        }
        assert!(refused.contains("password invalid"), "{refused}");
        assert!(logins <= 5, "not refused after {logins} guesses");
    }
    for n in 1..=logins {
        assert_eq!(logged_address(&server, "mallory", "Login", n), "127.0.0.2");
    }
    // ... which locks out neither another user of the proxy nor mallory from elsewhere.
    let alice = As::new(proxy.client("alice", "", dir.path()), dir.path());
    let out = ok_from(&alice, "127.0.0.3", &["login"], &format!("{ALICE_PW}\n"));
    assert!(out.contains("ticket valid only from 127.0.0.3"), "{out}");
    assert_eq!(logged_address(&server, "alice", "Login", 1), "127.0.0.3");
    ok_from(&alice, "127.0.0.3", &["users"], "");
    ok_from(&mallory, "127.0.0.1", &["login"], "Mall0ry-pass\n");
    assert_eq!(
        logged_address(&server, "mallory", "Login", logins + 1),
        "127.0.0.1"
    );

    // A client that names an address itself, vouched for by its own (non-service) ticket,
    // is seen at its real address.
    let ticket = ticket_of(&mallory);
    let status = login_naming(&server.addr, "mallory", "10.9.8.7", &ticket);
    assert!(
        status.message().contains("password invalid"),
        "{}",
        status.message()
    );
    assert_eq!(
        logged_address(&server, "mallory", "Login", logins + 2),
        "127.0.0.1"
    );
    assert!(
        server
            .stderr()
            .contains("ignored a client address named without a service user's ticket"),
        "{}",
        server.stderr()
    );
    // The same with the service user's ticket is believed (what the proxy does).
    let svc_ticket = ticket_of(&svc);
    login_naming(&server.addr, "mallory", "10.9.8.7", &svc_ticket);
    assert_eq!(
        logged_address(&server, "mallory", "Login", logins + 3),
        "10.9.8.7"
    );
}
