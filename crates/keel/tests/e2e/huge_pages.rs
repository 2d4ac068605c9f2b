//! End-to-end: which `keel` processes run with transparent huge pages (Linux `THP_enabled`).

use crate::common::Server;

/// The `THP_enabled` field of `/proc/PID/status` ("1" allowed, "0" turned off), or None on a
/// kernel that has no such field.
fn thp_enabled(pid: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("THP_enabled:"))
        .map(|value| value.trim().to_string())
}

/// The server gets back the huge pages every `keel` process starts without: it runs with the
/// setting it inherited from the process that started it.
#[test]
fn the_server_runs_with_the_huge_pages_it_inherited() {
    let inherited = thp_enabled("self");
    let server = Server::start();
    assert_eq!(thp_enabled(&server.pid().to_string()), inherited);
}
