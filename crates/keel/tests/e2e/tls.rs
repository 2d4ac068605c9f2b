//! TLS with trust on first use, through the real binaries: `keel serve --listen ssl:` with a
//! generated (0600) or given certificate, the `keel trust` flow (-y, -l, -d, -f), an untrusted
//! and a changed certificate refused, the two wrong-protocol errors, a submit/sync round over
//! TLS, replicas (following and forwarding writes) and proxies speaking TLS with the trust file
//! of the user running them, and a trigger calling its TLS server back.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn trust_flow_then_a_submit_and_sync_round_over_tls() {
    let server = Server::start_tls();
    let fp = server
        .fingerprint
        .clone()
        .expect("a TLS server prints its fingerprint");
    assert!(server.addr.starts_with("ssl:127.0.0.1:"), "{}", server.addr);
    for file in ["tls/cert.pem", "tls/key.pem"] {
        assert_eq!(mode(&server.root.join(file)), 0o600, "{file}");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let c = server.client("alice", "", dir.path());

    // Untrusted: refused, naming the fingerprint and `keel trust`; nothing is stored.
    let err = c.fail(&["info"]);
    assert!(
        err.contains("is not trusted") && err.contains(&fp) && err.contains("keel trust"),
        "{err}"
    );
    assert!(c.json(&["trust", "-l"]).is_empty());
    let err = c.fail(&["trust"]);
    assert!(
        err.contains("was not trusted") && err.contains("-y"),
        "{err}"
    );
    assert!(!server.trust.exists(), "declining writes no trust file");

    // -y trusts it, in a 0600 file; -l lists it; trusting again changes nothing.
    let added = c.json(&["trust", "-y"]);
    assert_eq!(str_field(&added[0], "action"), "added");
    assert_eq!(str_field(&added[0], "fingerprint"), fp);
    assert_eq!(mode(&server.trust), 0o600);
    let listed = c.json(&["trust", "-l"]);
    assert_eq!(listed.len(), 1);
    assert_eq!(str_field(&listed[0], "server"), server.addr);
    assert_eq!(str_field(&listed[0], "fingerprint"), fp);
    assert!(c.ok(&["trust"]).contains("Trust already established."));
    let info = &c.json(&["info"])[0];
    assert_eq!(str_field(info, "serverTlsFingerprint"), fp);
    assert_eq!(str_field(info, "serverAddress"), server.addr);

    // A submit and a sync round over TLS.
    let a = workspace_on(&server, dir.path(), "alice", "wa");
    write(&a.cwd, "src/a.txt", "alpha\n");
    write(&a.cwd, "src/b.bin", bytes(3, 200_000));
    a.ok(&["add", "src/..."]);
    a.ok(&["submit", "-d", "over TLS"]);
    let b = workspace_on(&server, dir.path(), "bob", "wb");
    b.ok(&["sync"]);
    assert_eq!(read(&b.cwd, "src/a.txt"), b"alpha\n");
    assert_eq!(read(&b.cwd, "src/b.bin"), bytes(3, 200_000));
    assert_eq!(b.ok(&["print", "-q", "//depot/src/a.txt"]), "alpha\n");

    // -d forgets it: refused again.
    let removed = c.json(&["trust", "-d"]);
    assert_eq!(str_field(&removed[0], "action"), "removed");
    assert!(c.fail(&["info"]).contains("is not trusted"));
}

#[test]
fn a_changed_certificate_is_refused_until_forced() {
    let mut server = Server::start_tls();
    let old = server.fingerprint.clone().expect("fingerprint");
    let dir = tempfile::tempdir().expect("temp dir");
    let c = server.client("alice", "", dir.path());
    c.ok(&["trust", "-y"]);
    c.ok(&["info"]);

    // The server comes back on the same address with a new key.
    server.kill9();
    std::fs::remove_dir_all(server.root.join("tls")).expect("remove the key");
    server.restart_same_address();
    let new = server.fingerprint.clone().expect("fingerprint");
    assert_ne!(old, new);

    let err = c.fail(&["info"]);
    assert!(
        err.contains("HAS CHANGED") && err.contains(&old) && err.contains(&new),
        "{err}"
    );
    assert!(err.contains("keel trust -f"), "{err}");
    // Trusting without -f keeps refusing and keeps the old entry.
    let err = c.fail(&["trust", "-y"]);
    assert!(err.contains(&old) && err.contains(&new), "{err}");
    assert_eq!(str_field(&c.json(&["trust", "-l"])[0], "fingerprint"), old);

    let replaced = c.json(&["trust", "-f", "-y"]);
    assert_eq!(str_field(&replaced[0], "action"), "replaced");
    assert_eq!(
        str_field(&c.json(&["info"])[0], "serverTlsFingerprint"),
        new
    );
}

#[test]
fn plain_to_a_tls_port_and_tls_to_a_plain_port_say_what_is_wrong() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tls = Server::start_tls();
    let host_port = tls.addr.trim_start_matches("ssl:").to_string();
    let plain_client = Client {
        addr: host_port.clone(),
        ..tls.client("alice", "", dir.path())
    };
    let err = plain_client.fail(&["info"]);
    assert!(
        err.contains(&format!(
            "the server at {host_port} speaks TLS: use ssl:{host_port}"
        )),
        "{err}"
    );

    let plain = Server::start();
    let tls_client = Client {
        addr: format!("ssl:{}", plain.addr),
        ..plain.client("alice", "", dir.path())
    };
    for args in [&["info"][..], &["trust", "-y"]] {
        let err = tls_client.fail(args);
        assert!(
            err.contains(&format!(
                "the server at ssl:{0} does not speak TLS: use {0} (without ssl:)",
                plain.addr
            )),
            "keel {args:?}: {err}"
        );
    }
}

#[test]
fn a_given_certificate_is_served_and_a_missing_one_refused() {
    let first = Server::start_tls();
    let fp = first.fingerprint.clone().expect("fingerprint");
    let dir = tempfile::tempdir().expect("temp dir");
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    std::fs::copy(first.root.join("tls/cert.pem"), &cert).expect("copy cert");
    std::fs::copy(first.root.join("tls/key.pem"), &key).expect("copy key");
    drop(first);

    let (cert_arg, key_arg) = (cert.to_str().expect("utf-8"), key.to_str().expect("utf-8"));
    let args = ["--tls-cert", cert_arg, "--tls-key", key_arg];
    let given = Server::start_listening(&dir.path().join("root"), "ssl:127.0.0.1:0", &[], &args)
        .expect("starts with the given pair");
    assert_eq!(given.fingerprint.as_deref(), Some(fp.as_str()));
    assert!(!given.root.join("tls").exists(), "nothing generated");

    let missing = dir.path().join("nope.pem");
    let args = [
        "--tls-cert",
        missing.to_str().expect("utf-8"),
        "--tls-key",
        key_arg,
    ];
    let err = Server::start_listening(&dir.path().join("root2"), "ssl:127.0.0.1:0", &[], &args)
        .err()
        .expect("refuses a missing certificate");
    assert!(err.contains("nope.pem"), "{err}");
}

/// Waits (bounded) until `done` holds.
fn wait_for(what: &str, mut done: impl FnMut() -> Result<(), String>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match done() {
            Ok(()) => return,
            Err(last) if Instant::now() > deadline => panic!("{what}: not within 30 s: {last}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

#[test]
fn a_replica_follows_a_tls_primary_it_trusts_and_names_one_it_does_not() {
    let primary = Server::start_tls();
    let dir = tempfile::tempdir().expect("temp dir");
    let admin = primary.client("alice", "", dir.path());
    admin.ok(&["trust", "-y"]);
    let a = workspace_on(&primary, dir.path(), "alice", "wa");
    write(&a.cwd, "a.txt", "one\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "first"]);

    // The replica runs with the admin's trust file, serves TLS itself, and follows.
    let trust = primary.trust.to_str().expect("utf-8").to_string();
    let env = [("KEEL_TRUST", trust.as_str())];
    let replica = Server::start_listening(
        &dir.path().join("replica"),
        "ssl:127.0.0.1:0",
        &env,
        &["--replica-of", &primary.addr, "--forward-writes"],
    )
    .expect("replica starts");
    let r = Client {
        addr: replica.addr.clone(),
        ..a.clone()
    };
    r.ok(&["trust", "-y"]);
    wait_for("the replica has change 1", || {
        let out = r.run(&["print", "-q", "//depot/a.txt"]);
        out.status
            .success()
            .then_some(())
            .ok_or(String::from_utf8_lossy(&out.stderr).into_owned())
    });
    assert_eq!(r.ok(&["print", "-q", "//depot/a.txt"]), "one\n");

    // A write sent to the replica is forwarded to the primary over TLS.
    r.ok(&["edit", "a.txt"]);
    write(&a.cwd, "a.txt", "two\n");
    r.ok(&["submit", "-d", "through the replica"]);
    assert_eq!(a.ok(&["print", "-q", "//depot/a.txt"]), "two\n");

    // A replica whose user trusts nothing says so in `keel info`.
    let empty = dir.path().join("empty.trust");
    let env = [("KEEL_TRUST", empty.to_str().expect("utf-8"))];
    let untrusting = Server::start_listening(
        &dir.path().join("replica2"),
        "127.0.0.1:0",
        &env,
        &["--replica-of", &primary.addr],
    )
    .expect("replica starts");
    let u = Client {
        addr: untrusting.addr.clone(),
        ..a.clone()
    };
    wait_for("the replica reports the untrusted primary", || {
        let info = &u.json(&["info"])[0];
        let last = crate::common::replica_last_error(info);
        (last.contains("is not trusted") && last.contains("keel trust"))
            .then_some(())
            .ok_or(last)
    });
}

#[test]
fn a_proxy_speaks_tls_to_its_target_and_to_its_clients() {
    let server = Server::start_tls();
    let dir = tempfile::tempdir().expect("temp dir");
    let a = workspace_after_trust(&server, dir.path());
    write(&a.cwd, "a.txt", "proxied\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "first"]);

    let trust = server.trust.to_str().expect("utf-8").to_string();
    let cache = dir.path().join("cache");
    let proxy = Proxy::start_listening(
        &server.addr,
        &cache,
        &[],
        &[("KEEL_TRUST", trust.as_str())],
        Some("ssl:127.0.0.1:0"),
    )
    .expect("proxy starts");
    assert!(proxy.addr.starts_with("ssl:"), "{}", proxy.addr);
    let proxy_fp = proxy
        .fingerprint
        .clone()
        .expect("the proxy prints its fingerprint");
    assert_eq!(mode(&cache.join("tls/key.pem")), 0o600);
    let root = dir.path().join("pw");
    std::fs::create_dir_all(&root).expect("root");
    let p = Client {
        addr: proxy.addr.clone(),
        cwd: root.clone(),
        workspace: "pw".into(),
        ..a.clone()
    };
    assert!(p.fail(&["info"]).contains("is not trusted"));
    let added = p.json(&["trust", "-y"]);
    assert_eq!(str_field(&added[0], "fingerprint"), proxy_fp);
    let p = create_workspace(p, &root, "pw");
    p.ok(&["sync"]);
    assert_eq!(read(&root, "a.txt"), b"proxied\n");

    // A proxy whose user does not trust the target refuses to start, saying why.
    let empty = dir.path().join("empty.trust");
    let err = Proxy::start_listening(
        &server.addr,
        &dir.path().join("cache2"),
        &[],
        &[("KEEL_TRUST", empty.to_str().expect("utf-8"))],
        None,
    )
    .err()
    .expect("refuses an untrusted target");
    assert!(err.contains("is not trusted"), "{err}");
}

fn workspace_after_trust(server: &Server, dir: &Path) -> Client {
    server.client("alice", "", dir).ok(&["trust", "-y"]);
    workspace_on(server, dir, "alice", "wa")
}

#[test]
fn a_trigger_of_a_tls_server_calls_back_over_tls() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("server");
    // The server's user trusts its own server in the same file as the test's clients.
    let trust = root.with_extension("trust");
    let trust_env = trust.to_str().expect("utf-8").to_string();
    let server =
        Server::start_listening(&root, "ssl:127.0.0.1:0", &[("KEEL_TRUST", &trust_env)], &[])
            .expect("TLS server starts");
    assert_eq!(server.trust, trust);
    let a = workspace_after_trust(&server, dir.path());
    let printed = dir.path().join("printed");
    let check = dir.path().join("content.sh");
    std::fs::write(
        &check,
        format!(
            "#!/bin/sh\necho \"$KEEL_SERVER\" > {out}.addr\n{KEEL} print -q //depot/...@=$1 > {out} || exit 2\n",
            out = printed.display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let form = format!(
        "Triggers:\n\tscan change-content //depot/... \"{} %change%\"\n",
        check.display()
    );
    let out = a.run_with_stdin(&["triggers", "-i"], &form);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    write(&a.cwd, "a.txt", "over tls\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "checked"]);
    assert_eq!(
        std::fs::read_to_string(&printed).expect("printed"),
        "over tls\n"
    );
    let called = std::fs::read_to_string(dir.path().join("printed.addr")).expect("address");
    assert!(called.trim().starts_with("ssl:127.0.0.1:"), "{called}");
}
