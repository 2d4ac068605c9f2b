//! Triggers cannot be injected: workspace and user names full of `; $ ( ) | & < > ' "`,
//! backquotes and backslashes (every such character the name rules allow) reach a `sh -c`
//! script, a `bash -c` script and a plain program as exact bytes, and run nothing. And a
//! trigger calls the server back at security 3 with the ticket of its run, which ends with it.

use crate::auth::As;
use crate::common::{KEEL, Server, write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// An injected command would create this file in the server's `HOME`.
const MARK: &str = "pwned";

/// A workspace name an attacker would pick: it closes quotes, ends commands, substitutes
/// commands three ways and redirects (no whitespace or control characters: names refuse
/// them, so `${IFS}` stands for the space).
const WORKSPACE: &str =
    "w;cd;touch${IFS}pwned;$(cd;touch${IFS}pwned)`cd;touch${IFS}pwned`|&<>'\"\\x";
/// The user's name, as hostile.
const USER: &str = "u';cd;touch${IFS}pwned;'\"$(cd;touch${IFS}pwned)\"&|<>";

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

fn set_triggers(client: &As, lines: &[String]) {
    let form = format!(
        "Triggers:\n{}\n",
        lines.iter().map(|l| format!("\t{l}\n")).collect::<String>()
    );
    client.ok(&["triggers", "-i"], &form);
}

/// The lines a trigger appended to `file`.
fn lines(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn hostile_names_reach_triggers_as_exact_bytes_and_run_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let server = Server::start_with(
        &dir.path().join("server"),
        &[("HOME", home.to_str().expect("utf-8"))],
    )
    .expect("server starts");
    let out = |name: &str| dir.path().join(name);
    let argv = script(
        dir.path(),
        "argv.sh",
        &format!(
            "for a in \"$@\"; do printf '<%s>' \"$a\"; done >> {o}; echo >> {o}",
            o = out("words").display()
        ),
    );
    let ws_root = dir.path().join("ws");
    std::fs::create_dir_all(&ws_root).expect("root");
    let user = As::new(server.client(USER, WORKSPACE, &ws_root), dir.path());
    set_triggers(
        &user,
        &[
            format!(
                "shell form-save workspace sh -c 'printf \"<%s>\" %formname% \"%user%\" >> {o}; echo >> {o}'",
                o = out("form").display()
            ),
            format!(
                "words form-save workspace {} --name=%formname% %user%",
                argv.display()
            ),
            format!(
                "submit change-submit //depot/... bash -c 'printf \"<%s>\" %client% '\"'%user%'\"' %change% >> {o}; echo >> {o}'",
                o = out("submit").display()
            ),
        ],
    );
    user.ok(
        &[
            "workspace",
            "create",
            WORKSPACE,
            "--root",
            ws_root.to_str().expect("utf-8"),
            "--view",
            &format!("//depot/... //{WORKSPACE}/..."),
        ],
        "",
    );
    write(&ws_root, "a.txt", "a\n");
    user.ok(&["add", "a.txt"], "");
    user.ok(&["submit", "-d", "one"], "");

    let form = lines(&out("form"));
    assert!(!form.is_empty());
    for line in &form {
        assert_eq!(line, &format!("<{WORKSPACE}><{USER}>"));
    }
    for line in &lines(&out("words")) {
        assert_eq!(line, &format!("<--name={WORKSPACE}><{USER}>"));
    }
    assert_eq!(lines(&out("submit")), [format!("<{WORKSPACE}><{USER}><1>")]);
    assert!(!home.join(MARK).exists(), "an injected command ran");
    assert_eq!(std::fs::read_dir(&home).expect("home").count(), 0);
}

#[test]
fn a_trigger_calls_back_at_security_3_with_the_ticket_of_its_run_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    // The server's account has no tickets file: the run's ticket is all a trigger has.
    let server = Server::start_with(
        &dir.path().join("server"),
        &[("HOME", home.to_str().expect("utf-8"))],
    )
    .expect("server starts");
    let ws_root = dir.path().join("ws");
    std::fs::create_dir_all(&ws_root).expect("root");
    let alice = As::new(server.client("alice", "ws", &ws_root), dir.path());
    alice.passwd_and_login("Al1ce-Pa55-word");
    alice.ok(&["configure", "set", "security=3"], "");
    alice.ok(
        &[
            "workspace",
            "create",
            "ws",
            "--root",
            ws_root.to_str().expect("utf-8"),
            "--view",
            "//depot/... //ws/...",
        ],
        "",
    );
    let at = |name: &str| dir.path().join(name);
    let check = script(
        dir.path(),
        "content.sh",
        &format!(
            "printf %s \"$KEEL_TICKET\" > {ticket}\n\
             {keel} print -q \"//depot/...@=$1\" > {printed} || exit 2\n\
             if env -u KEEL_TICKET {keel} print -q \"//depot/...@=$1\" 2> {refused}; then exit 3; fi",
            keel = KEEL,
            ticket = at("ticket").display(),
            printed = at("printed").display(),
            refused = at("refused").display(),
        ),
    );
    set_triggers(
        &alice,
        &[format!(
            "scan change-content //depot/... \"{} %change%\"",
            check.display()
        )],
    );
    write(&ws_root, "a.txt", "from the change\n");
    alice.ok(&["add", "a.txt"], "");
    alice.ok(&["submit", "-d", "checked"], "");
    assert_eq!(
        std::fs::read_to_string(at("printed")).expect("printed"),
        "from the change\n"
    );
    let refused = std::fs::read_to_string(at("refused")).expect("refused");
    assert!(refused.contains("keel -u alice login"), "{refused}");

    // The run's ticket ended with the run.
    let ticket = std::fs::read_to_string(at("ticket")).expect("ticket");
    assert_eq!(ticket.len(), 64, "{ticket}");
    let after = alice.client.run_with(
        &["files", "//depot/..."],
        &[
            ("KEEL_TICKET", ticket.as_str()),
            ("KEEL_TICKETS", "/nonexistent/tickets"),
        ],
        "",
    );
    assert!(!after.status.success());
    let said = String::from_utf8_lossy(&after.stderr);
    assert!(said.contains("alice"), "{said}");
}
