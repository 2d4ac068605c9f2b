//! `login [-s] [USER]`, `logout [-a]` and `passwd [USER]`: tickets and passwords. Passwords
//! are read from the terminal without echo, or a line at a time from stdin when it is not a
//! terminal; they are never printed.

use std::io::{BufRead, IsTerminal};

use anyhow::{Context, Result, bail};
use clap::Args;
use keel_client::ops::{self, PasswordChange};
use keel_client::{Connection, TicketFile};

use super::spec_form::is_not_found;
use crate::output::{Record, date_time};
use crate::session::Session;

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// Show whether you are logged in and when the ticket expires, instead of logging in.
    #[arg(short = 's')]
    pub status: bool,
    /// Ask for a ticket valid from every client address, where the server binds tickets to
    /// the address they were issued to (`auth.tickets.bind`).
    #[arg(short = 'a')]
    pub all_hosts: bool,
    /// Log in as this user instead of the configured one.
    pub user: Option<String>,
}

#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// End every ticket of the user, on every host, not just this one.
    #[arg(short = 'a')]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct PasswdArgs {
    /// Set this user's password (super users) instead of your own.
    pub user: Option<String>,
}

/// Reads a password: from the terminal without echo, else one line of stdin (without its
/// line ending).
fn read_password(prompt: &str) -> Result<String> {
    if std::io::stdin().is_terminal() {
        return rpassword::prompt_password(prompt)
            .context("cannot read a password from the terminal");
    }
    let mut line = String::new();
    let n = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("cannot read a password from stdin")?;
    if n == 0 {
        bail!("no password given (stdin ended; give one line per password asked)");
    }
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// The tickets file, which login needs to keep the ticket in.
fn tickets(s: &Session) -> Result<&TicketFile> {
    s.settings
        .tickets
        .as_ref()
        .context("no tickets file: set KEEL_TICKETS or HOME")
}

/// Reconnects as `user` (with that user's stored ticket).
async fn become_user(s: &mut Session, user: &str) -> Result<()> {
    if s.settings.user == user {
        return Ok(());
    }
    let mut settings = s.settings.clone();
    settings.user = user.to_string();
    settings.ticket = match &settings.tickets {
        Some(file) => file.get(&settings.server, user)?,
        None => None,
    };
    s.conn = Connection::connect(&settings).await?;
    s.settings = settings;
    Ok(())
}

/// Where a ticket is valid from, for the sentence about it: nothing when from everywhere.
fn from_where(address: &str) -> String {
    if address.is_empty() {
        String::new()
    } else {
        format!(" (ticket valid only from {address})")
    }
}

/// "11 hours 59 minutes" from seconds.
fn duration_words(secs: i64) -> String {
    let secs = secs.max(0);
    let (h, m, sec) = (secs / 3600, secs % 3600 / 60, secs % 60);
    if h > 0 {
        format!("{h} hours {m} minutes")
    } else if m > 0 {
        format!("{m} minutes {sec} seconds")
    } else {
        format!("{sec} seconds")
    }
}

/// When a ticket expires: a date, or `unlimited` (a group's Timeout is `unlimited`).
fn expiry(expires: i64) -> String {
    if expires == i64::MAX {
        "unlimited".to_string()
    } else {
        date_time(expires.max(0) as u64)
    }
}

pub async fn login(s: &mut Session, args: LoginArgs) -> Result<()> {
    if let Some(user) = &args.user {
        become_user(s, user).await?;
    }
    let user = s.settings.user.clone();
    if args.status {
        let reply = ops::login_status(&s.conn).await?;
        if reply.unlimited() {
            // A group's Timeout is `unlimited`.
            s.out.emit(
                Record::new()
                    .s("user", &reply.user)
                    .s("expires", expiry(reply.expires)),
                format!("User {user} ticket does not expire."),
            );
            return Ok(());
        }
        let left = reply.expires - now();
        s.out.emit(
            Record::new()
                .s("user", &reply.user)
                .s("expires", date_time(reply.expires.max(0) as u64))
                .n("expiresIn", left.max(0) as u64)
                .s("address", &reply.address),
            format!(
                "User {user} ticket expires in {}{}.",
                duration_words(left),
                from_where(&reply.address)
            ),
        );
        return Ok(());
    }
    let file = tickets(s)?.clone();
    let password = read_password(&format!("Enter password for {user}: "))?;
    let reply = ops::login(&s.conn, password, args.all_hosts).await?;
    file.set(&s.settings.server, &user, &reply.ticket)?;
    s.out.emit(
        Record::new()
            .s("user", &user)
            .s("action", "login")
            .s("expires", expiry(reply.expires))
            .s("address", &reply.address),
        format!("User {user} logged in{}.", from_where(&reply.address)),
    );
    Ok(())
}

pub async fn logout(s: &mut Session, args: LogoutArgs) -> Result<()> {
    let user = s.settings.user.clone();
    let ended = ops::logout(&s.conn, args.all).await?;
    if let Some(file) = &s.settings.tickets {
        file.remove(&s.settings.server, &user)?;
    }
    let text = if args.all {
        format!("User {user} logged out ({} tickets ended).", ended)
    } else {
        format!("User {user} logged out.")
    };
    s.out.emit(
        Record::new()
            .s("user", &user)
            .s("action", "logout")
            .n("ended", ended),
        text,
    );
    Ok(())
}

pub async fn passwd(s: &mut Session, args: PasswdArgs) -> Result<()> {
    let own = s.settings.user.clone();
    let target = args.user.clone().unwrap_or_else(|| own.clone());
    let needs_old = target == own && {
        match ops::user(&s.conn, &own).await {
            Ok(user) => user.has_password,
            Err(e) => {
                let e = anyhow::Error::from(e);
                if is_not_found(&e) {
                    false
                } else {
                    return Err(e);
                }
            }
        }
    };
    let old = if needs_old {
        read_password("Enter old password: ")?
    } else {
        String::new()
    };
    let new = read_password(&format!("Enter new password for {target}: "))?;
    let again = read_password("Re-enter new password: ")?;
    if new != again {
        bail!("the two new passwords differ; password not changed");
    }
    let change = PasswordChange {
        user: (target != own).then(|| target.clone()),
        old_password: old,
        new_password: new,
    };
    ops::set_password(&s.conn, change).await?;
    // The server ended every ticket of the user.
    if let Some(file) = &s.settings.tickets {
        file.remove(&s.settings.server, &target)?;
    }
    s.out.emit(
        Record::new().s("user", &target).s("action", "updated"),
        format!("Password of user {target} updated; log in again."),
    );
    Ok(())
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `tickets`: the tickets file's lines as `SERVER (USER) TICKET`, read locally.
pub fn list_tickets(cli: &crate::cli::Cli) -> Result<()> {
    let out = crate::output::Out {
        quiet: cli.globals.quiet,
        ..crate::output::Out::new(cli.globals.json)
    };
    let file = keel_client::tickets::TicketFile::locate(&|name| std::env::var(name).ok())
        .context("no tickets file: set KEEL_TICKETS or HOME")?;
    for (server, user, ticket) in file.list()? {
        out.emit(
            crate::output::Record::new()
                .s("server", &server)
                .s("user", &user)
                .s("ticket", &ticket),
            format!("{server} ({user}) {ticket}"),
        );
    }
    Ok(())
}

/// `set`: the client settings in effect and where each came from, read locally.
pub fn list_settings(cli: &crate::cli::Cli) -> Result<()> {
    let out = crate::output::Out {
        quiet: cli.globals.quiet,
        ..crate::output::Out::new(cli.globals.json)
    };
    let cwd = std::env::current_dir().context("cannot determine the current directory")?;
    let overrides = keel_client::Overrides {
        server: cli.globals.server.clone(),
        user: cli.globals.user.clone(),
        workspace: cli.globals.workspace.clone(),
    };
    let sources = keel_client::setting_sources::setting_sources(&overrides, &cwd, &|name| {
        std::env::var(name).ok()
    })?;
    for s in sources {
        out.emit(
            crate::output::Record::new()
                .s("name", s.name)
                .s("value", &s.value)
                .s("source", &s.source),
            format!("{}={} ({})", s.name, s.value, s.source),
        );
    }
    Ok(())
}
