//! `login`, `logout` and `passwd` as P4 clients run them. At a password prompt (no `digest`
//! or `mangle` variable, `noecho` set) a P4 client sends not what its user typed but its MD5
//! in hex; the service keeps passwords as argon2id of that MD5 (`PasswordInput::Md5`), so a
//! password set or checked here is the one `keel login` takes. That digest stands for the
//! password, so it is taken only where it does not travel in the clear to strangers: over
//! `ssl:`, from loopback, over stdio, or anywhere when `p4_plain_passwords` says so. A login
//! issues a Keel ticket and hands the client the P4 ticket derived from it (`crate::tickets`),
//! which the client keeps in its tickets file and later proves, never sends.

use crate::cmd::{Cmd, CmdError, CmdResult, login_required, number, usage};
use crate::dispatch::{self, Command};
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_service::command as rows;
use keel_service::{AuthError, PasswordInput, Service};

pub const COMMANDS: &[Command] = &[
    Command {
        name: "login",
        row: rows::LOGIN,
        login: false,
        flags: "a p s h:",
        usage: "login [ -a -p ] [ -h host ] | login -s",
        run: |c| Box::pin(login(c)),
    },
    Command {
        name: "logout",
        row: rows::LOGOUT,
        login: false,
        flags: "a",
        usage: "logout [ -a ]",
        run: |c| Box::pin(logout(c)),
    },
    Command {
        name: "passwd",
        row: rows::SET_PASSWORD,
        login: true,
        flags: "",
        usage: "passwd [ user ]",
        run: |c| Box::pin(passwd(c)),
    },
    // What P4Python's `run_password` sends.
    Command {
        name: "password",
        row: rows::SET_PASSWORD,
        login: true,
        flags: "",
        usage: "passwd [ user ]",
        run: |c| Box::pin(passwd(c)),
    },
];

/// The function names the client calls back with a typed answer: `login`'s and `passwd`'s.
/// They must be names every client knows: P4Java refuses to call back a function outside its
/// fixed table, and picks the answer (password, old or new) by the name and the prompt's text.
const LOGIN_REPLY: &str = "dm-Login";
const PASSWD_REPLY: &str = "dm-Passwd";

/// Asks the client to prompt its user (no echo) and returns what was typed; the client calls
/// back `reply`.
async fn prompt(cmd: &mut Cmd, text: &str, reply: &str) -> Result<String, CmdError> {
    let m = Message::new()
        .with("data", text)
        .with("noecho", "")
        .with("confirm", reply)
        .with("func", "client-Prompt");
    let reply = cmd.ask(&m, reply).await?;
    Ok(reply.text("data").unwrap_or_default())
}

/// A password prompt's answer: a P4 client answers with the MD5 of what was typed (32 hex
/// digits); anything else (an empty answer, a client that sends the text) is the text typed.
fn received(answer: &str) -> PasswordInput<'_> {
    if answer.len() == 32 && answer.bytes().all(|b| b.is_ascii_hexdigit()) {
        PasswordInput::Md5(answer)
    } else {
        PasswordInput::Typed(answer)
    }
}

/// A password prompt answered to a challenge: the client digests what was typed, then that
/// digest with `token` (and, when it names the address it reached, with that too).
struct ChallengeAnswer {
    token: String,
    answer: String,
    addresses: Vec<Option<String>>,
}

impl ChallengeAnswer {
    /// Whether the answer was made from a password whose MD5 is `md5`.
    fn made_from(&self, md5: &str) -> bool {
        let inner = crate::tickets::md5_hex(&[md5.as_bytes(), self.token.as_bytes()]);
        self.addresses.iter().any(|daddr| {
            let expected = match daddr {
                Some(a) => crate::tickets::md5_hex(&[inner.as_bytes(), a.as_bytes()]),
                None => inner.clone(),
            };
            crate::tickets::same_answer(&self.answer, &expected)
        })
    }
}

/// Asks for the password with a challenge (`digest`): the client answers with a digest of
/// the password's MD5 and the challenge, never the MD5 itself. Every client answers so, and
/// P4Java only so.
async fn challenged_password(cmd: &mut Cmd) -> Result<ChallengeAnswer, CmdError> {
    let token = crate::tickets::new_token().map_err(|e| {
        CmdError::Report(Report::failed(
            Generic::Fault,
            number::INTERNAL,
            format!("no random challenge: {e}"),
        ))
    })?;
    let m = Message::new()
        .with("data", "Enter password: ")
        .with("noecho", "")
        .with("digest", &token)
        .with("confirm", LOGIN_REPLY)
        .with("func", "client-Prompt");
    let reply = cmd.ask(&m, LOGIN_REPLY).await?;
    let mut addresses: Vec<Option<String>> = Vec::new();
    if let Some(local) = cmd.peer().local {
        addresses.push(Some(local.to_string()));
    }
    if let Some(named) = reply.text("daddr").filter(|d| !d.is_empty())
        && !addresses.contains(&Some(named.clone()))
    {
        addresses.push(Some(named));
    }
    addresses.push(None);
    Ok(ChallengeAnswer {
        token,
        answer: reply.text("data").unwrap_or_default(),
        addresses,
    })
}

/// Refuses a password that would travel in the clear to a stranger.
fn check_password_channel(cmd: &Cmd) -> CmdResult {
    if cmd.peer().password_safe(cmd.options()) {
        return Ok(());
    }
    Err(CmdError::Report(Report::failed(
        Generic::Config,
        number::PASSWORD_IN_CLEAR,
        "This server takes passwords only over ssl: ports or from the server's own machine; \
         connect with P4PORT=ssl:HOST:PORT (or ask the administrator to set \
         p4_plain_passwords).",
    )))
}

/// What stores (`login`) or drops (`logout`) the user's ticket in the client's tickets file,
/// under the key the client also finds it by (`P4Options::ticket_server_address`).
fn set_password_message(cmd: &Cmd, ticket: &str, what: &str, user: &str) -> Message {
    let mut m = Message::new()
        .with("data", ticket)
        .with("data2", what)
        .with("user", user);
    if let Some(key) = cmd.options().ticket_server_address() {
        m = m.with("serverAddress", &key);
    }
    m.with("func", "client-SetPassword")
}

/// `2 hours 5 minutes` for a number of seconds.
fn hours_minutes(secs: i64) -> String {
    let secs = secs.max(0);
    format!("{} hours {} minutes", secs / 3600, secs % 3600 / 60)
}

async fn login(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("login").expect("login is in the table");
    let flags = dispatch::flags(cmd, command)?;
    if let Some(other) = flags.rest.first()
        && *other != cmd.caller.user
    {
        return Err(usage(format!(
            "Logging in as another user ({other}) is not supported; log in as {} or set P4USER.",
            cmd.caller.user
        )));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let user = cmd.caller.user.clone();
    if flags.has('s') {
        // A caller the server lets in without a ticket (no password set, an open server)
        // has nothing to show: said as info, as scripts (git-p4) expect.
        let creds = cmd.credentials();
        let open = cmd
            .call(move |svc, caller| svc.authenticate(caller, &creds))
            .await?
            .is_ok();
        if open && cmd.proven.is_none() {
            cmd.info("'login' not necessary, no password set for this user.");
            return Ok(());
        }
        let ticket = cmd
            .prove_ticket(AuthError::TicketInvalid {
                user: user.clone(),
                server: cmd.options().address.clone(),
            })
            .await?;
        let left = ticket.expires.saturating_sub(now);
        if cmd.tagged {
            cmd.stat([
                ("User", user.clone()),
                ("TicketExpiration", left.to_string()),
            ]);
        } else {
            cmd.report(
                Report::new(Severity::Info, Generic::None, 0)
                    .text("User ")
                    .arg("user", &user)
                    .text(" ticket expires in ")
                    .arg("expires", hours_minutes(left))
                    .text("."),
            );
        }
        return Ok(());
    }
    check_password_channel(cmd)?;
    let all_hosts = flags.has('a');
    let lookup = user.clone();
    let challenge = cmd
        .call(move |svc, _| svc.p4_login_challenge_ready(&lookup))
        .await??;
    let issued = if challenge {
        let answer = challenged_password(cmd).await?;
        cmd.call(move |svc, caller| {
            svc.login_p4_challenge(caller, &mut |md5| answer.made_from(md5), all_hosts)
        })
        .await??
    } else {
        let password = prompt(cmd, "Enter password: ", LOGIN_REPLY).await?;
        cmd.call(move |svc, caller| svc.login_from(caller, received(&password), all_hosts))
            .await??
    };
    let ticket = cmd.server.key.ticket(&Service::ticket_id(&issued.ticket));
    if flags.has('p') {
        // The ticket is shown, not stored in the client's tickets file.
        cmd.info(&ticket);
        return Ok(());
    }
    let m = set_password_message(cmd, &ticket, "login", &user);
    cmd.conn.send(&m);
    let left = issued.expires.saturating_sub(now);
    if cmd.tagged {
        cmd.stat([
            ("User", user.clone()),
            ("TicketExpiration", left.to_string()),
        ]);
    } else {
        cmd.report(
            Report::new(Severity::Info, Generic::None, 0)
                .text("User ")
                .arg("user", &user)
                .text(" logged in."),
        );
    }
    Ok(())
}

async fn logout(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("logout").expect("logout is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let user = cmd.caller.user.clone();
    let ticket = cmd
        .prove_ticket(AuthError::TicketInvalid {
            user: user.clone(),
            server: cmd.options().address.clone(),
        })
        .await
        .map_err(|e| match e {
            CmdError::Report(_) => CmdError::Report(login_required(&user)),
            other => other,
        })?;
    let all = flags.has('a');
    cmd.call(move |svc, caller| svc.logout_proven(caller, &ticket, all))
        .await??;
    let m = set_password_message(cmd, "", "logout", &user);
    cmd.conn.send(&m);
    cmd.report(
        Report::new(Severity::Info, Generic::None, 0)
            .text("User ")
            .arg("user", &user)
            .text(" logged out."),
    );
    Ok(())
}

async fn passwd(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("passwd").expect("passwd is in the table");
    let flags = dispatch::flags(cmd, command)?;
    let target = flags.rest.first().cloned();
    if flags.rest.len() > 1 {
        return Err(usage(format!("Usage: {}", command.usage)));
    }
    check_password_channel(cmd)?;
    let own = target.as_deref().is_none_or(|t| t == cmd.caller.user);
    let name = target.clone().unwrap_or_else(|| cmd.caller.user.clone());
    let has_password = if own {
        let lookup = name.clone();
        cmd.call(move |svc, caller| svc.get_user(caller, &lookup))
            .await?
            .map(|u| u.has_password)
            .unwrap_or(false)
    } else {
        false
    };
    let old = if has_password {
        prompt(cmd, "Enter old password: ", PASSWD_REPLY).await?
    } else {
        String::new()
    };
    let new = prompt(cmd, "Enter new password: ", PASSWD_REPLY).await?;
    let again = prompt(cmd, "Re-enter new password: ", PASSWD_REPLY).await?;
    if new != again {
        return Err(CmdError::Report(Report::failed(
            Generic::Usage,
            number::USAGE,
            "Passwords don't match.",
        )));
    }
    cmd.call(move |svc, caller| {
        svc.set_password_from(caller, target.as_deref(), received(&old), received(&new))
    })
    .await??;
    cmd.info("Password updated.");
    Ok(())
}
