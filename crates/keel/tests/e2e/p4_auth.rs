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
