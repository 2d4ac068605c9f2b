//! A clean stop: SIGTERM to a primary that a replica follows and a proxy talks to ends the
//! replica's journal stream with a status it logs, and the primary exits 0 long before its
//! (deliberately huge) grace period; the replica catches up once the primary is back on the
//! same address, the proxy serves again, and both stop cleanly on SIGTERM too.

use crate::common::*;
use crate::replica::{info, replica_client, submit_one, wait_caught_up, wait_for};
use std::time::Duration;

/// Asks a process of ours to stop as a service manager does.
fn sigterm(pid: u32) {
    let pid = libc::pid_t::try_from(pid).expect("a pid fits pid_t");
    // SAFETY: kill(2) only sends a signal to the process we started.
    let sent = unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(sent, 0, "SIGTERM sent to {pid}");
}

/// Far past anything the test waits: the primary only gets out in time if its streams ended.
const GRACE_MS: &str = "600000";
/// How long a stop may take before the test fails (generous: a busy machine).
const BOUND: Duration = Duration::from_secs(60);

#[test]
fn sigterm_stops_a_followed_primary_and_the_replica_resumes_when_it_returns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("primary");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(
        root.join("keel.toml"),
        format!("shutdown_grace_ms = {GRACE_MS}\n"),
    )
    .expect("config");
    let mut primary = Server::start_at(&root).expect("primary starts");
    let a = workspace_on(&primary, dir.path(), "alice", "ws");
    submit_one(&a, 0);
    let mut replica = Server::start_replica(&dir.path().join("replica"), &primary.addr, &[])
        .expect("replica starts");
    let ra = replica_client(&replica, &a);
    wait_caught_up(&a, &ra);
    let mut proxy = Proxy::start(&primary.addr, &dir.path().join("cache"), &[]).expect("proxy");
    let pa = proxy.client("alice", "ws", &a.cwd);
    let through_proxy = pa.json(&["files", "//depot/..."]).len();
    assert_eq!(through_proxy, 3);

    sigterm(primary.pid());
    let status = primary.wait_exit(BOUND).expect("the primary exits");
    assert!(status.success(), "the primary exits 0: {status}");
    let log = primary.stderr();
    assert!(
        !log.contains("cancelled"),
        "nothing waited for the grace period: {log}"
    );
    // The replica was told why its stream ended, and serves reads meanwhile.
    wait_for("the replica notices", BOUND, || {
        let i = info(&ra);
        let log = replica.stderr();
        match (
            field(&i, "replicaConnected") == false,
            log.contains("the server is stopping"),
        ) {
            (true, true) => Ok(()),
            _ => Err(format!("{i}\n{log}")),
        }
    });
    assert_eq!(ra.json(&["files", "//depot/..."]).len(), 3);

    primary.restart_same_address();
    submit_one(&a, 1);
    wait_caught_up(&a, &ra);
    assert_eq!(field(&info(&ra), "replicaConnected"), true);
    wait_for("the proxy serves again", BOUND, || {
        let out = pa.run(&["--json", "files", "//depot/..."]);
        let n = String::from_utf8_lossy(&out.stdout).lines().count();
        if out.status.success() && n == 6 {
            Ok(())
        } else {
            Err(format!(
                "{n} files: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    });

    // The replica and the proxy stop cleanly too.
    sigterm(replica.pid());
    let status = replica.wait_exit(BOUND).expect("the replica exits");
    assert!(status.success(), "the replica exits 0: {status}");
    sigterm(proxy.pid());
    let status = proxy.wait_exit(BOUND).expect("the proxy exits");
    assert!(status.success(), "the proxy exits 0: {status}");
}
