//! What scripts that read records from the `p4` command line (`p4 -G`, as git-p4 runs every
//! command) rely on, driven by a client of the test's own: `tag` in the protocol message makes
//! every command of the connection tagged, `opened` with nothing opened answers no record and
//! no warning, and `login -s` for a user the server lets in without a ticket says so as info.

use crate::p4_harness::P4Server;
use crate::p4_open_submit::{frame, read_message};
use std::io::Write;

/// Runs `command` with `args` on a fresh connection whose protocol message carries `tag`;
/// the messages the server sent up to its `release`, as (func, vars).
fn run_tagged(port: &str, command: &str, args: &[&str]) -> Vec<(String, Vec<(String, String)>)> {
    let mut stream = std::net::TcpStream::connect(port).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("timeout");
    stream
        .write_all(&frame(&[
            ("client", b"100"),
            ("tag", b""),
            ("func", b"protocol"),
        ]))
        .expect("protocol");
    let mut vars: Vec<(&str, &[u8])> = args.iter().map(|a| ("", a.as_bytes())).collect();
    let func = format!("user-{command}");
    vars.extend_from_slice(&[
        ("prog", b"raw-test"),
        ("client", b"ws"),
        ("user", b"alice"),
        ("host", b"p4host"),
        ("cwd", b"/"),
        ("func", func.as_bytes()),
    ]);
    stream.write_all(&frame(&vars)).expect("command");
    let mut out = Vec::new();
    for _ in 0..100 {
        let m: Vec<(String, String)> = read_message(&mut stream)
            .into_iter()
            .map(|(k, v)| (k, String::from_utf8_lossy(&v).into_owned()))
            .collect();
        let func = m
            .iter()
            .find(|(k, _)| k == "func")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        if func == "release" {
            return out;
        }
        if func != "protocol" {
            out.push((func, m));
        }
    }
    panic!("no release within 100 messages: {out:?}");
}

#[test]
fn a_connection_tagged_in_its_protocol_message_answers_records_as_git_p4_reads_them() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    crate::common::write(&root, "a.txt", "a\n");
    a.ok(&["add", "a.txt"]);
    a.ok(&["submit", "-d", "first"]);

    // changes: a record, not a line of text.
    let got = run_tagged(&s.port, "changes", &["-m", "1"]);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, "client-FstatInfo", "{got:?}");
    assert!(
        got[0].1.iter().any(|(k, v)| k == "change" && v == "1"),
        "{got:?}"
    );

    // opened with nothing opened: nothing at all (git-p4 counts the records it gets).
    let got = run_tagged(&s.port, "opened", &["//depot/..."]);
    assert!(got.is_empty(), "{got:?}");

    // login -s for a user with no password on an open server: info, not an error.
    let got = run_tagged(&s.port, "login", &["-s"]);
    assert_eq!(got.len(), 1, "{got:?}");
    let text = got[0]
        .1
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(text.contains("'login' not necessary"), "{text}");
    // The message's code carries its severity in its top four bits: 1 is info.
    let code: u32 = got[0]
        .1
        .iter()
        .find(|(k, _)| k == "code0")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| panic!("no code0: {text}"));
    assert_eq!(code >> 28, 1, "{text}");
}
