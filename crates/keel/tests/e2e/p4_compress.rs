//! Link compression for P4 clients whose workspace has the `compress` option: the server sends
//! `compress1` and deflates what follows, the client answers `compress2` and deflates too;
//! P4Python's commands work the same over the compressed link.

use crate::p4_harness::{P4Server, ok};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One framed message (header: XOR of the length bytes, then the length, little-endian).
fn frame(vars: &[(&str, &str)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in vars {
        body.extend_from_slice(name.as_bytes());
        body.push(0);
        body.extend_from_slice(&(value.len() as u32).to_le_bytes());
        body.extend_from_slice(value.as_bytes());
        body.push(0);
    }
    let len = (body.len() as u32).to_le_bytes();
    let mut out = vec![len[0] ^ len[1] ^ len[2] ^ len[3]];
    out.extend_from_slice(&len);
    out.extend(body);
    out
}

/// The `func` of the next plain message on `s`.
fn next_func(s: &mut TcpStream) -> String {
    let mut header = [0u8; 5];
    s.read_exact(&mut header).expect("header");
    let len = u32::from_le_bytes([header[1], header[2], header[3], header[4]]) as usize;
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).expect("body");
    let text = String::from_utf8_lossy(&body);
    let at = text.find("func\0").expect("a func variable");
    text[at + 9..].trim_end_matches('\0').to_string()
}

#[test]
fn a_compress_workspace_gets_a_compressed_link_and_commands_work_over_it() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"cmd": ["client", "-o"]}),
        json!({"method": "save_client", "args": [{
            "Client": "alice_ws",
            "Root": s.home.path().join("ws").display().to_string(),
            "Options": "noallwrite noclobber compress unlocked nomodtime normdir",
            "View": ["//depot/... //alice_ws/..."],
        }]}),
    ]);
    ok(&r[1]);
    // New connections in the workspace: every command over the compressed link.
    let r = s.drive(&[
        json!({"new": true, "cmd": ["client", "-o"]}),
        json!({"cmd": ["info"]}),
        json!({"cmd": ["clients"], "tagged": false}),
        json!({"cmd": ["users"]}),
        json!({"cmd": ["frobnicate"]}),
        json!({"cmd": ["depots"]}),
    ]);
    let spec = &ok(&r[0])[0];
    assert_eq!(
        spec["Options"],
        "noallwrite noclobber compress unlocked nomodtime normdir"
    );
    assert_eq!(ok(&r[1])[0]["clientName"], "alice_ws");
    let line = ok(&r[2])[0].as_str().expect("line").to_string();
    assert!(line.starts_with("Client alice_ws "), "{line}");
    assert_eq!(ok(&r[3])[0]["User"], "alice");
    assert!(
        r[4]["errors"].to_string().contains("Unknown command"),
        "{:?}",
        r[4]
    );
    assert_eq!(ok(&r[5])[0]["name"], "depot");

    // On the wire: the protocol answer, then `compress1` before the first command's output.
    let mut raw = TcpStream::connect(&s.port).expect("connect");
    raw.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    raw.write_all(&frame(&[("client", "100"), ("func", "protocol")]))
        .expect("protocol");
    raw.write_all(&frame(&[
        ("client", "alice_ws"),
        ("user", "alice"),
        ("cwd", "/"),
        ("func", "user-info"),
    ]))
    .expect("info");
    assert_eq!(next_func(&mut raw), "protocol");
    assert_eq!(next_func(&mut raw), "compress1");
    // What follows is deflated: no plain header of a message comes next.
    let mut after = [0u8; 5];
    raw.read_exact(&mut after).expect("deflated bytes");
    let len = u32::from_le_bytes([after[1], after[2], after[3], after[4]]);
    assert!(
        after[0] != after[1] ^ after[2] ^ after[3] ^ after[4] || len > 1 << 24,
        "a plain message after compress1: {after:?}"
    );
}
