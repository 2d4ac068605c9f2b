//! P4 commands meet the same command gate as gRPC calls: each runs its row of the command
//! table, so the command log records it under the row's name with the P4 client as its program.

use crate::common::str_field;
use crate::p4_harness::{P4Server, ok};
use serde_json::json;
use std::time::{Duration, Instant};

/// The command log's records, waiting (bounded) until one satisfies `want`.
fn log_until(s: &P4Server, want: impl Fn(&serde_json::Value) -> bool) -> Vec<serde_json::Value> {
    let path = s.server.root.join("logs/commands.jsonl");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
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

#[test]
fn a_p4_command_is_logged_under_its_row_with_the_client_program() {
    let s = P4Server::start();
    let r = s.drive(&[json!({"cmd": ["info"]})]);
    ok(&r[0]);
    // The script's `info` (the connection's `discover` also runs Info, as the client library).
    let is_p4_info = |l: &serde_json::Value| {
        str_field(l, "command") == "Info" && str_field(l, "program").contains("P4PY")
    };
    let lines = log_until(&s, is_p4_info);
    let info = lines
        .iter()
        .find(|l| is_p4_info(l))
        .expect("the info record");
    assert_eq!(str_field(info, "result"), "ok", "{info}");
    assert_eq!(str_field(info, "workspace"), "alice_ws", "{info}");
    assert_eq!(str_field(info, "user"), "alice", "{info}");
    assert_eq!(str_field(info, "address"), "127.0.0.1", "{info}");
    // No record names a P4 verb (`info`, `discover`): every P4 command ran a row of the
    // table, whose names are the RPCs' (`Info`).
    for l in &lines {
        let command = str_field(l, "command");
        assert!(command.starts_with(char::is_uppercase), "{l}");
    }
}
