//! P4 clients' passwords and tickets through P4Python: `passwd`, `login` (bad password, the
//! ticket in the tickets file, `-s`, `-p`), the ticket proved on a new connection, `logout`.

use crate::p4_harness::{P4Server, ok, raised};
use serde_json::json;

#[test]
fn login_issues_a_ticket_the_next_connection_proves_and_logout_ends() {
    let s = P4Server::start();
    let r = s.drive(&[
        // A first password (the user has none yet): P4Python's run_password.
        json!({"method": "run_password", "args": ["", "Secret-1"]}),
        // Now the user has a password: commands need a ticket.
        json!({"new": true, "cmd": ["login", "-s"]}),
        json!({"password": "wrong", "method": "run_login"}),
        json!({"password": "Secret-1", "method": "run_login"}),
    ]);
    let tickets = std::fs::read_to_string(s.home.path().join("tickets")).expect("tickets file");
    let r2 = s.drive(&[
        // A new connection with no password: the ticket from the tickets file is proved.
        json!({"cmd": ["login", "-s"]}),
        json!({"cmd": ["login", "-s"], "tagged": false}),
        json!({"new": true, "cmd": ["info"]}),
        json!({"cmd": ["logout"], "tagged": false}),
        json!({"new": true, "cmd": ["login", "-s"]}),
    ]);
    assert_eq!(ok(&r[0]), &json!(["Password updated."]));
    let e = raised(&r[1]);
    assert!(e.contains("P4PASSWD") && e.contains("alice"), "{e}");
    assert!(raised(&r[2]).contains("password invalid"), "{:?}", r[2]);
    let login = &ok(&r[3])[0];
    assert_eq!(login["User"], "alice");
    let line = tickets.lines().next().expect("a ticket line");
    // `ADDRESS=alice:TICKET` with a 32-hex-digit ticket.
    let ticket = line.rsplit(':').next().expect("ticket");
    assert!(line.contains("=alice:"), "{line}");
    assert_eq!(ticket.len(), 32, "{line}");
    assert!(ticket.chars().all(|c| c.is_ascii_hexdigit()), "{line}");
    let r = [&r[..], &r2[..]].concat();
    let status = &ok(&r[4])[0];
    assert_eq!(status["User"], "alice");
    let left: u64 = status["TicketExpiration"]
        .as_str()
        .expect("seconds")
        .parse()
        .expect("number");
    assert!(left > 3600, "{status}");
    let line = ok(&r[5])[0].as_str().expect("line").to_string();
    assert!(line.starts_with("User alice ticket expires in "), "{line}");
    assert_eq!(ok(&r[6])[0]["userName"], "alice");
    assert_eq!(ok(&r[7]), &json!(["User alice logged out."]));
    assert!(raised(&r[8]).contains("P4PASSWD"));
    // The tickets file no longer holds it.
    let tickets = std::fs::read_to_string(s.home.path().join("tickets")).unwrap_or_default();
    assert!(!tickets.contains(ticket), "{tickets}");
}

#[test]
fn login_p_shows_the_ticket_without_storing_it_and_it_works_as_a_password() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"method": "run_password", "args": ["", "Secret-2"]}),
        json!({"new": true, "input": "Secret-2", "cmd": ["login", "-p"], "tagged": false}),
    ]);
    let ticket = ok(&r[1])[0].as_str().expect("ticket").to_string();
    assert_eq!(ticket.len(), 32, "{ticket}");
    assert!(
        std::fs::read_to_string(s.home.path().join("tickets"))
            .unwrap_or_default()
            .is_empty()
    );
    // The ticket given as P4PASSWD is proved like a stored one.
    let r = s.drive(&[json!({"password": ticket, "cmd": ["login", "-s"]})]);
    assert_eq!(ok(&r[0])[0]["User"], "alice");
}

#[test]
fn passwd_changes_need_the_old_password_and_matching_new_ones() {
    let s = P4Server::start();
    let r = s.drive(&[
        json!({"method": "run_password", "args": ["", "Secret-3"]}),
        json!({"password": "Secret-3", "new": true, "method": "run_login"}),
        // Wrong old password: refused, the old one still works.
        json!({"password": "", "new": true, "method": "run_password", "args": ["nope", "Other-4"]}),
        json!({"input": ["Secret-3", "Other-4", "Different-5"], "cmd": ["passwd"]}),
        json!({"method": "run_password", "args": ["Secret-3", "Other-4"]}),
        // Changing the password ends the tickets: log in with the new one.
        json!({"new": true, "cmd": ["login", "-s"]}),
        json!({"password": "Other-4", "new": true, "method": "run_login"}),
    ]);
    assert!(
        r[2]["errors"].to_string().contains("password invalid") || r[2].get("exception").is_some(),
        "{:?}",
        r[2]
    );
    assert!(
        r[3]["errors"]
            .to_string()
            .contains("Passwords don't match."),
        "{:?}",
        r[3]
    );
    assert_eq!(ok(&r[4]), &json!(["Password updated."]));
    raised(&r[5]);
    assert_eq!(ok(&r[6])[0]["User"], "alice");
}

/// Runs the native `keel` as alice with her own tickets file; stdout, or stderr when it fails.
fn keel_as_alice(s: &P4Server, args: &[&str], stdin: &str) -> Result<String, String> {
    let tickets = s.home.path().join("native-tickets");
    let tickets = tickets.to_str().expect("utf-8");
    let out = s.server.client("alice", "", s.home.path()).run_with(
        args,
        &[("KEEL_TICKETS", tickets)],
        stdin,
    );
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn a_password_set_through_either_front_end_is_the_one_the_other_takes() {
    let s = P4Server::start();
    // Set through P4Python (which sends the password's MD5): Keel's own login takes it.
    let r = s.drive(&[json!({"method": "run_password", "args": ["", "Secret-1"]})]);
    assert_eq!(ok(&r[0]), &json!(["Password updated."]));
    let refused = keel_as_alice(&s, &["login"], "secret-1\n").expect_err("wrong password");
    assert!(refused.contains("password invalid"), "{refused}");
    keel_as_alice(&s, &["login"], "Secret-1\n").expect("keel login with the P4 password");
    // Changed natively: P4Python logs in with the new one, not the old.
    keel_as_alice(&s, &["passwd"], "Secret-1\nOther-2\nOther-2\n").expect("keel passwd");
    let r = s.drive(&[
        json!({"password": "Secret-1", "new": true, "method": "run_login"}),
        json!({"password": "Other-2", "new": true, "method": "run_login"}),
        // Changed through P4Python, the old password given as P4 clients send it.
        json!({"password": "", "new": true, "method": "run_password", "args": ["Other-2", "Third-3"]}),
    ]);
    assert!(raised(&r[0]).contains("password invalid"), "{:?}", r[0]);
    assert_eq!(ok(&r[1])[0]["User"], "alice");
    assert_eq!(ok(&r[2]), &json!(["Password updated."]));
    keel_as_alice(&s, &["login"], "Other-2\n").expect_err("the old password is gone");
    let out = keel_as_alice(&s, &["login"], "Third-3\n").expect("keel login, P4-set password");
    assert!(!out.is_empty(), "{out}");
}

#[test]
fn where_strong_passwords_are_required_a_p4_passwd_is_refused_naming_keel_passwd() {
    let s = P4Server::start();
    keel_as_alice(&s, &["passwd"], "Strong-pass1\nStrong-pass1\n").expect("keel passwd");
    keel_as_alice(&s, &["login"], "Strong-pass1\n").expect("keel login");
    keel_as_alice(&s, &["configure", "set", "security=2"], "").expect("security 2");
    let r = s.drive(&[
        json!({"password": "Strong-pass1", "method": "run_login"}),
        json!({"method": "run_password", "args": ["Strong-pass1", "Other-pass2"]}),
        json!({"password": "Strong-pass1", "new": true, "method": "run_login"}),
    ]);
    assert_eq!(ok(&r[0])[0]["User"], "alice");
    let e = r[1].to_string();
    assert!(
        e.contains("strength cannot be checked") && e.contains("keel passwd"),
        "{e}"
    );
    // Nothing changed: the password is still the old one, for both front ends.
    assert_eq!(ok(&r[2])[0]["User"], "alice");
    keel_as_alice(&s, &["login"], "Strong-pass1\n").expect("the old password still works");
}
