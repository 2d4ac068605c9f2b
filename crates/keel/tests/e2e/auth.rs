//! Users, passwords, tickets and security levels, through the real CLI: first-use creation
//! and its refusal at level 4, passwd + login + commands with the ticket, expiry, logout -a,
//! the failed-login limit, the tickets file's mode, no password in the log or the metadata,
//! every RPC refused without a ticket at level 3, and a replica and a proxy that authenticate
//! as a service user.

use crate::common::{Client, Fixture, Proxy, Server, blob_at, bytes, content_files, write};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// The admin's password in these tests: strong, and distinctive enough to grep for.
const ADMIN_PW: &str = "Adm1n-Pa55-xyzzy";

/// A user of the CLI with their own tickets file.
pub(crate) struct As {
    pub(crate) client: Client,
    pub(crate) tickets: PathBuf,
}

impl As {
    pub(crate) fn new(client: Client, dir: &Path) -> As {
        let tickets = dir.join(format!(
            "tickets-{}-{}",
            client.user,
            client.addr.replace(':', "_")
        ));
        As { client, tickets }
    }

    pub(crate) fn on(&self, addr: &str) -> As {
        let mut client = self.client.clone();
        client.addr = addr.to_string();
        As {
            client,
            tickets: self.tickets.clone(),
        }
    }

    pub(crate) fn run(&self, args: &[&str], stdin: &str) -> Output {
        let tickets = self.tickets.to_str().expect("utf-8 path");
        self.client
            .run_with(args, &[("KEEL_TICKETS", tickets)], stdin)
    }

    pub(crate) fn ok(&self, args: &[&str], stdin: &str) -> String {
        let out = self.run(args, stdin);
        assert!(
            out.status.success(),
            "keel {args:?} as {} failed ({}):\nstdout: {}\nstderr: {}",
            self.client.user,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn fail(&self, args: &[&str], stdin: &str) -> String {
        let out = self.run(args, stdin);
        assert!(
            !out.status.success(),
            "keel {args:?} as {} unexpectedly succeeded:\nstdout: {}",
            self.client.user,
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// `keel info` as this user.
    pub(crate) fn info(&self) -> serde_json::Value {
        serde_json::from_str(self.ok(&["--json", "info"], "").trim()).expect("info JSON")
    }

    /// The server's `contentBytesSent` counter, as `keel info` reports it to this user.
    pub(crate) fn content_bytes_sent(&self) -> u64 {
        self.info()["contentBytesSent"]
            .as_u64()
            .expect("contentBytesSent")
    }

    /// Sets the user's own first password (none set yet) and logs in.
    pub(crate) fn passwd_and_login(&self, password: &str) {
        self.ok(&["passwd"], &format!("{password}\n{password}\n"));
        self.ok(&["login"], &format!("{password}\n"));
    }
}

/// A server with an admin who has a password and a ticket, at `level`.
fn locked_server(fx: &Fixture, level: &str) -> As {
    let admin = As::new(fx.server.client("admin", "", fx.dir.path()), fx.dir.path());
    admin.passwd_and_login(ADMIN_PW);
    admin.ok(&["configure", "set", &format!("security={level}")], "");
    admin
}

/// The workspace `ws` at `<temp>/ws` (mapping `//depot/...`), created by and for `admin` with
/// `admin`'s tickets; returns it and its root.
fn workspace_ws(fx: &Fixture, admin: &As) -> (As, PathBuf) {
    let root = fx.dir.path().join("ws");
    let mut client = admin.client.clone();
    client.workspace = "ws".into();
    client.cwd = root.clone();
    let ws = As {
        client,
        tickets: admin.tickets.clone(),
    };
    std::fs::create_dir_all(&root).expect("root");
    let view = "//depot/... //ws/...";
    let root_text = root.to_str().expect("utf-8");
    ws.ok(
        &[
            "workspace",
            "create",
            "ws",
            "--root",
            root_text,
            "--view",
            view,
        ],
        "",
    );
    (ws, root)
}

fn users(a: &As) -> Vec<String> {
    a.ok(&["--json", "users"], "")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["User"].as_str().expect("User").to_string()
        })
        .collect()
}

#[test]
fn users_are_created_on_first_use_below_level_4_and_only_by_a_super_user_at_4() {
    let fx = Fixture::new();
    let bob = As::new(fx.server.client("bob", "", fx.dir.path()), fx.dir.path());
    bob.ok(&["depots"], "");
    let admin = locked_server(&fx, "4");
    assert_eq!(users(&admin), ["admin", "bob"]);
    assert!(admin.ok(&["info"], "").contains("Server security: 4"));

    // carol is unknown: refused, and neither `info` nor the refusal creates her.
    let carol = As::new(fx.server.client("carol", "", fx.dir.path()), fx.dir.path());
    carol.ok(&["info"], "");
    let refused = carol.fail(&["depots"], "");
    assert!(refused.contains("user carol is not logged in"), "{refused}");
    assert!(
        refused.contains(&fx.server.addr),
        "names the server: {refused}"
    );
    assert!(refused.contains("keel -u carol login"), "{refused}");
    let refused = carol.fail(&["login"], "whatever\n");
    assert!(refused.contains("carol"), "{refused}");
    assert_eq!(users(&admin), ["admin", "bob"]);

    // A user can't create another; the super user can, with -f.
    let form = "User: carol\nEmail: carol@example.com\nFullName: Carol C\nType: standard\n";
    let refused = admin.fail(&["user", "-i"], form);
    assert!(refused.contains("may not create user carol"), "{refused}");
    admin.ok(&["user", "-f", "-i"], form);
    admin.ok(&["passwd", "carol"], "Car0l-pass\nCar0l-pass\n");
    carol.ok(&["login"], "Car0l-pass\n");
    carol.ok(&["depots"], "");
    let spec = carol.ok(&["--json", "user", "-o"], "");
    let spec: serde_json::Value = serde_json::from_str(spec.trim()).expect("json");
    assert_eq!(spec["Email"], "carol@example.com");
    assert_eq!(spec["Password"], "enabled");
    assert_eq!(users(&admin), ["admin", "bob", "carol"]);

    // A user deletes only themselves (without -f); deleting ends their tickets.
    let refused = carol.fail(&["user", "-d", "bob"], "");
    assert!(refused.contains("may not delete user bob"), "{refused}");
    admin.ok(&["user", "-d", "-f", "carol"], "");
    assert!(carol.fail(&["depots"], "").contains("carol"));
    assert_eq!(users(&admin), ["admin", "bob"]);
}

#[test]
fn passwd_then_login_then_commands_with_the_ticket() {
    let fx = Fixture::new();
    let admin = As::new(fx.server.client("admin", "", fx.dir.path()), fx.dir.path());
    // At security 2 a weak password is refused and nothing changes.
    admin.ok(&["configure", "set", "security=2"], "");
    let refused = admin.fail(&["passwd"], "weakpass\nweakpass\n");
    assert!(refused.contains("not strong enough"), "{refused}");
    admin.ok(&["depots"], "");
    let refused = admin.fail(&["passwd"], "Str0ng-one\nStr0ng-two\n");
    assert!(refused.contains("differ"), "{refused}");
    admin.passwd_and_login(ADMIN_PW);

    // The tickets file is private and holds the ticket under this server and user.
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(&admin.tickets)
            .expect("tickets file")
            .permissions()
            .mode()
    };
    assert_eq!(mode & 0o777, 0o600);
    let text = std::fs::read_to_string(&admin.tickets).expect("tickets");
    assert!(
        text.starts_with(&format!("{}=admin:", fx.server.addr)),
        "{text}"
    );
    assert!(!text.contains(ADMIN_PW));

    admin.ok(&["configure", "set", "security=3"], "");
    let shown = admin.ok(&["--json", "configure", "show"], "");
    assert!(
        shown.contains(r#""name":"security""#) && shown.contains(r#""value":"3""#),
        "{shown}"
    );
    let status = admin.ok(&["login", "-s"], "");
    assert!(
        status.starts_with("User admin ticket expires in 11 hours 59 minutes")
            || status.starts_with("User admin ticket expires in 12 hours 0 minutes"),
        "{status}"
    );

    // With the ticket, a whole workflow; without it (another tickets file), a refusal that
    // names the user, the server and the fix, exits non-zero and changes nothing.
    let (ws, root) = workspace_ws(&fx, &admin);
    write(&root, "a.txt", "hello\n");
    ws.ok(&["add", "a.txt"], "");
    ws.ok(&["submit", "-d", "first"], "");
    let stranger = As::new(ws.client.clone(), &fx.dir.path().join("elsewhere"));
    std::fs::create_dir_all(fx.dir.path().join("elsewhere")).expect("dir");
    let refused = stranger.fail(&["changes"], "");
    assert!(
        refused.contains("user admin is not logged in to server"),
        "{refused}"
    );
    assert!(
        refused.contains(&fx.server.addr) && refused.contains("keel -u admin login"),
        "{refused}"
    );
    write(&root, "b.txt", "b\n");
    stranger.fail(&["add", "b.txt"], "");
    assert!(ws.ok(&["opened"], "").trim().is_empty() || !ws.ok(&["opened"], "").contains("b.txt"));
    assert!(ws.ok(&["changes"], "").contains("Change 1 "));

    // Another user's password needs the super user; the old password is checked.
    let refused = ws.fail(&["passwd"], "wrong-Old1\nN3w-pass-word\nN3w-pass-word\n");
    assert!(
        refused.contains("password invalid for user admin"),
        "{refused}"
    );
    ws.ok(
        &["passwd"],
        &format!("{ADMIN_PW}\nN3w-pass-word\nN3w-pass-word\n"),
    );
    // Changing the password ended the ticket.
    assert!(ws.fail(&["changes"], "").contains("not logged in"));
    ws.ok(&["login"], "N3w-pass-word\n");
    ws.ok(&["changes"], "");
}

#[test]
fn an_expired_ticket_is_refused() {
    let fx = Fixture::new();
    let root = fx.dir.path().join("short");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(
        root.join("keel.toml"),
        "[service]\nticket_lifetime_secs = 1\n",
    )
    .expect("toml");
    let server = Server::start_full(&root, &[], &["--security", "3"]).expect("starts");
    // At level 3 from the start nobody has a password: the bootstrap is done at 0 first.
    let admin = As::new(server.client("admin", "", fx.dir.path()), fx.dir.path());
    let refused = admin.fail(&["passwd"], "Str0ng-pass\nStr0ng-pass\n");
    assert!(refused.contains("not logged in"), "{refused}");
    admin.fail(&["configure", "set", "security=0"], "");
    drop(server);
    // Nothing below needs a ticket to live longer than its one second (a loaded machine may
    // take that long between two commands): the levels are set at start.
    let server = Server::start_full(&root, &[], &["--security", "0"]).expect("restarts");
    let admin = As::new(server.client("admin", "", fx.dir.path()), fx.dir.path());
    admin.ok(&["passwd"], &format!("{ADMIN_PW}\n{ADMIN_PW}\n"));
    drop(server);
    let server = Server::start_full(&root, &[], &["--security", "3"]).expect("restarts");
    let admin = As::new(server.client("admin", "", fx.dir.path()), fx.dir.path());
    assert!(admin.ok(&["info"], "").contains("Server security: 3"));
    admin.ok(&["login"], &format!("{ADMIN_PW}\n"));
    // One second of lifetime, whole seconds: certainly over after two.
    std::thread::sleep(Duration::from_millis(2100));
    let refused = admin.fail(&["depots"], "");
    assert!(
        refused.contains("user admin's ticket for server"),
        "{refused}"
    );
    assert!(refused.contains("expired at"), "{refused}");
    assert!(refused.contains("keel -u admin login"), "{refused}");
    let refused = admin.fail(&["login", "-s"], "");
    assert!(refused.contains("expired"), "{refused}");
}

#[test]
fn logout_ends_this_ticket_and_logout_a_every_ticket_of_the_user() {
    let fx = Fixture::new();
    let admin = locked_server(&fx, "3");
    let laptop = As::new(admin.client.clone(), &fx.dir.path().join("laptop"));
    std::fs::create_dir_all(fx.dir.path().join("laptop")).expect("dir");
    let desktop = As::new(admin.client.clone(), &fx.dir.path().join("desktop"));
    std::fs::create_dir_all(fx.dir.path().join("desktop")).expect("dir");
    laptop.ok(&["login"], &format!("{ADMIN_PW}\n"));
    desktop.ok(&["login"], &format!("{ADMIN_PW}\n"));
    for a in [&admin, &laptop, &desktop] {
        a.ok(&["depots"], "");
    }
    laptop.ok(&["logout"], "");
    assert!(laptop.fail(&["depots"], "").contains("not logged in"));
    desktop.ok(&["depots"], "");
    admin.ok(&["depots"], "");
    let out = desktop.ok(&["--json", "logout", "-a"], "");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(v["ended"], 2, "{out}");
    assert!(desktop.fail(&["depots"], "").contains("not logged in"));
    // The ticket the admin's own file still holds was ended on the server.
    let refused = admin.fail(&["depots"], "");
    assert!(refused.contains("invalid (logged out"), "{refused}");
}

#[test]
fn failed_logins_are_limited_per_user_and_say_when_to_retry() {
    let fx = Fixture::new();
    let admin = locked_server(&fx, "3");
    for _ in 0..5 {
        let refused = admin.fail(&["login"], "not-the-password\n");
        assert!(
            refused.contains("password invalid for user admin"),
            "{refused}"
        );
    }
    // The right password is refused too until the window ends.
    let refused = admin.fail(&["login"], &format!("{ADMIN_PW}\n"));
    assert!(
        refused.contains("too many failed logins for user admin"),
        "{refused}"
    );
    assert!(refused.contains("try again in "), "{refused}");
    // Another user from the same address is not limited by admin's failures (at level 3 a
    // user without a password is answered as a wrong password: no user enumeration).
    let bob = As::new(fx.server.client("bob", "", fx.dir.path()), fx.dir.path());
    let refused = bob.fail(&["login"], "x\n");
    assert!(
        refused.contains("password invalid for user bob"),
        "{refused}"
    );
}

/// Every regular file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_password_never_reaches_the_server_log_or_the_metadata() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("server");
    let server = Server::start_full(&root, &[("RUST_LOG", "debug")], &[]).expect("starts");
    let admin = As::new(server.client("admin", "", dir.path()), dir.path());
    admin.passwd_and_login(ADMIN_PW);
    admin.fail(&["login"], "Wr0ng-guess-xyzzy\n");
    admin.ok(&["admin", "checkpoint"], "");
    let ticket = std::fs::read_to_string(&admin.tickets).expect("tickets");
    let ticket = ticket
        .trim()
        .rsplit(':')
        .next()
        .expect("ticket")
        .to_string();
    assert_eq!(ticket.len(), 64);
    let log = server.stderr();
    assert!(log.contains("login"), "the log is captured: {log}");
    drop(server);
    for secret in [ADMIN_PW, "Wr0ng-guess-xyzzy", ticket.as_str()] {
        assert!(!log.contains(secret), "{secret} in the server log");
        for file in files_under(&root) {
            let bytes = std::fs::read(&file).expect("read");
            let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found, "{secret} in {}", file.display());
        }
    }
}

/// A service user `svc` logged in to `server` (its ticket in `svc.tickets`).
fn service_user(fx: &Fixture, admin: &As) -> As {
    admin.ok(
        &["user", "-f", "-i"],
        "User: svc\nEmail: svc@example.com\nFullName: Replicas\nType: service\n",
    );
    admin.ok(&["passwd", "svc"], "Serv1ce-pass\nServ1ce-pass\n");
    let svc = As::new(fx.server.client("svc", "", fx.dir.path()), fx.dir.path());
    svc.ok(&["login"], "Serv1ce-pass\n");
    svc
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_replica_and_a_proxy_authenticate_as_a_service_user_to_a_level_3_primary() {
    let fx = Fixture::new();
    let admin = locked_server(&fx, "3");
    let svc = service_user(&fx, &admin);
    let (ws, root) = workspace_ws(&fx, &admin);
    write(&root, "a.txt", "replicated\n");
    ws.ok(&["add", "a.txt"], "");
    ws.ok(&["submit", "-d", "first"], "");

    // Without the service user the replica's follower is refused by the primary.
    let svc_tickets = svc.tickets.to_str().expect("utf-8").to_string();
    let env = [("KEEL_TICKETS", svc_tickets.as_str())];
    let refused = Server::start_full(
        &fx.dir.path().join("replica-x"),
        &env,
        &["--replica-of", &fx.server.addr, "--service-user", "nobody"],
    );
    assert!(
        refused
            .err()
            .is_some_and(|e| e.contains("no ticket for service user nobody"))
    );
    let replica = Server::start_full(
        &fx.dir.path().join("replica"),
        &env,
        &[
            "--replica-of",
            &fx.server.addr,
            "--service-user",
            "svc",
            "--forward-writes",
        ],
    )
    .expect("replica starts");
    // Users log in through the replica (forwarded to the primary); the ticket reaches the
    // replica with the primary's journal.
    let on_replica = ws.on(&replica.addr);
    on_replica.ok(&["login"], &format!("{ADMIN_PW}\n"));
    wait_for("the replica applies the change and the ticket", || {
        on_replica
            .run(&["print", "//depot/a.txt"], "")
            .stdout
            .ends_with(b"replicated\n")
    });
    let stranger = As::new(on_replica.client.clone(), &fx.dir.path().join("elsewhere"));
    std::fs::create_dir_all(fx.dir.path().join("elsewhere")).expect("dir");
    assert!(
        stranger
            .fail(&["print", "//depot/a.txt"], "")
            .contains("not logged in")
    );

    // The proxy fetches content as svc; each client's own ticket passes through unchanged.
    let proxy = Proxy::start_with(
        &fx.server.addr,
        &fx.dir.path().join("cache"),
        &["--service-user", "svc"],
        &env,
    )
    .expect("proxy starts");
    let via_proxy = ws.on(&proxy.addr);
    assert!(via_proxy.fail(&["sync"], "").contains("not logged in"));
    via_proxy.ok(&["login"], &format!("{ADMIN_PW}\n"));
    std::fs::remove_file(root.join("a.txt")).ok();
    via_proxy.ok(&["sync", "-f"], "");
    assert_eq!(
        std::fs::read(root.join("a.txt")).expect("synced"),
        b"replicated\n"
    );
    let info = via_proxy.ok(&["--json", "info"], "");
    assert!(info.contains(r#""security":3"#), "{info}");
}

/// Stored content bytes the server at `a`'s address has sent since it started.

#[test]
fn an_on_demand_replica_fetches_content_as_its_service_user_from_a_level_3_primary() {
    let fx = Fixture::new();
    let admin = locked_server(&fx, "3");
    let svc = service_user(&fx, &admin);
    let (ws, root) = workspace_ws(&fx, &admin);
    write(&root, "a.txt", "fetched on demand\n");
    write(&root, "b.bin", bytes(7, 200_000));
    ws.ok(&["add", "a.txt", "b.bin"], "");
    ws.ok(&["submit", "-d", "first"], "");
    let digests: Vec<String> = ws
        .ok(&["--json", "fstat", "//depot/..."], "")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["digest"].as_str().expect("digest").to_string()
        })
        .collect();
    assert_eq!(digests.len(), 2);
    let needed: u64 = digests
        .iter()
        .map(|d| blob_at(&fx.server.root, d).len)
        .sum();

    let svc_tickets = svc.tickets.to_str().expect("utf-8").to_string();
    let replica_root = fx.dir.path().join("replica");
    let replica = Server::start_full(
        &replica_root,
        &[("KEEL_TICKETS", svc_tickets.as_str())],
        &[
            "--replica-of",
            &fx.server.addr,
            "--service-user",
            "svc",
            "--forward-writes",
            "--content",
            "on-demand",
        ],
    )
    .expect("replica starts");
    let on_replica = ws.on(&replica.addr);
    on_replica.ok(&["login"], &format!("{ADMIN_PW}\n"));
    wait_for("the replica applies the change and the ticket", || {
        let out = on_replica.run(&["files", "//depot/..."], "");
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("b.bin")
    });
    assert_eq!(content_files(&replica_root), 0, "metadata only so far");

    // The sync through the replica makes it fetch both blobs from the primary, as svc.
    let before = admin.content_bytes_sent();
    std::fs::remove_file(root.join("a.txt")).expect("remove");
    std::fs::remove_file(root.join("b.bin")).expect("remove");
    on_replica.ok(&["sync", "-f"], "");
    assert_eq!(
        std::fs::read(root.join("a.txt")).expect("synced"),
        b"fetched on demand\n"
    );
    assert_eq!(
        std::fs::read(root.join("b.bin")).expect("synced"),
        bytes(7, 200_000)
    );
    assert_eq!(
        admin.content_bytes_sent() - before,
        needed,
        "each blob sent once"
    );
    assert_eq!(content_files(&replica_root), 2);
}

#[test]
fn users_tickets_and_settings_survive_checkpoint_and_restore() {
    let fx = Fixture::new();
    let admin = locked_server(&fx, "3");
    admin.ok(&["admin", "checkpoint"], "");
    // After the checkpoint, in the journal only: a new ticket and a new user.
    admin.ok(&["login"], &format!("{ADMIN_PW}\n"));
    admin.ok(
        &["user", "-f", "-i"],
        "User: dora\nEmail: dora@example.com\n",
    );
    let root = &fx.server.root;
    let checkpoint = std::fs::read_dir(root.join("checkpoints"))
        .expect("checkpoints")
        .flatten()
        .map(|e| e.path())
        .find(|p| !p.to_string_lossy().ends_with(".tmp"))
        .expect("a checkpoint");
    let mut journals: Vec<PathBuf> = std::fs::read_dir(root.join("journal"))
        .expect("journal")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "journal.0"))
        .collect();
    journals.sort();
    let restored = fx.dir.path().join("restored");
    let mut args = vec![
        "admin".to_string(),
        "restore".into(),
        "--checkpoint".into(),
        checkpoint.display().to_string(),
    ];
    for j in &journals {
        args.extend(["--journal".to_string(), j.display().to_string()]);
    }
    args.extend(["--root".to_string(), restored.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    admin.ok(&args, "");
    let server = Server::start_at(&restored).expect("restored server starts");
    let again = admin.on(&server.addr);
    // The same ticket, keyed by the new address.
    let ticket = std::fs::read_to_string(&admin.tickets).expect("tickets");
    let ticket = ticket
        .lines()
        .find(|l| l.starts_with(&fx.server.addr))
        .and_then(|l| l.rsplit(':').next())
        .expect("ticket line")
        .to_string();
    std::fs::write(&again.tickets, format!("{}=admin:{ticket}\n", server.addr)).expect("write");
    assert!(again.ok(&["info"], "").contains("Server security: 3"));
    assert_eq!(users(&again), ["admin", "dora"]);
    let stranger = As::new(again.client.clone(), &fx.dir.path().join("elsewhere"));
    std::fs::create_dir_all(fx.dir.path().join("elsewhere")).expect("dir");
    assert!(stranger.fail(&["depots"], "").contains("not logged in"));
    stranger.ok(&["login"], &format!("{ADMIN_PW}\n"));
}
