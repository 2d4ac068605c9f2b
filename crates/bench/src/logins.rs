//! logins: a password-guessing storm against a fresh server at security level 3 (issue 28,
//! row 6). Phase one fires `attempts` wrong logins of one user from one address at once: the
//! limiter must let no more passwords be checked than its limit. Phase two fires as many wrong
//! logins of distinct users from `addresses` loopback addresses (127.0.1.N), so most pass the
//! limits and the hashing gate alone bounds the memory. Passwords checked are read from the
//! server's own metrics (`keel_password_checks_total`), never inferred from the replies.

use std::time::{Duration, Instant};

use keel_client::ops::{self, PasswordChange, UserSpec};
use keel_client::{Connection, Settings};
use keel_proto::v1::LoginRequest;
use tonic::Code;

use crate::error::{BenchError, Result};
use crate::report::Report;

/// The admin's and the victim's password (strong, so level 3 takes them).
const PASSWORD: &str = "Bench-Pa55-logins";
const ADMIN: &str = "bench-login-admin";
const VICTIM: &str = "bench-victim";

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Concurrent wrong logins per phase.
    pub attempts: u32,
    /// Connections (HTTP/2) the attempts of one address share.
    pub connections: u32,
    /// Loopback addresses of phase two.
    pub addresses: u32,
    /// The server's metrics URL (`--metrics-listen`), where passwords checked are counted.
    pub metrics: Option<String>,
}

/// The replies of one phase.
#[derive(Debug, Default)]
struct Tally {
    invalid: u64,
    limited: u64,
    busy: u64,
    other: u64,
}

/// Runs the workload against the server at `addr` (a fresh one: it sets the security level).
pub async fn run(addr: &str, config: &Config) -> Result<Report> {
    let metrics = config.metrics.as_deref().ok_or_else(|| {
        BenchError::Check(
            "logins needs the server's metrics (--metrics-listen) to count passwords checked"
                .into(),
        )
    })?;
    prepare(addr).await?;
    let mut report = Report::new("logins");
    report
        .set("attempts_per_phase", config.attempts)
        .set("addresses_phase_two", config.addresses);

    let before = password_checks(metrics).await?;
    let started = Instant::now();
    let one = storm(addr, config, |_| (VICTIM.to_string(), None)).await?;
    let elapsed = started.elapsed();
    let checked = password_checks(metrics).await? - before;
    report
        .set("one_address_passwords_checked", checked)
        .set("one_address_answered_invalid", one.invalid)
        .set("one_address_refused_limited", one.limited)
        .set("one_address_refused_busy", one.busy)
        .set("one_address_other_errors", one.other)
        .set("one_address_ms", crate::stats::ms(elapsed));

    let before = password_checks(metrics).await?;
    let started = Instant::now();
    let addresses = config.addresses.max(1);
    let many = storm(addr, config, |n| {
        let host = n % addresses + 1;
        let bind = format!("127.0.1.{}", host.min(254)).parse().ok();
        (format!("bench-user-{n}"), bind)
    })
    .await?;
    let elapsed = started.elapsed();
    let checked = password_checks(metrics).await? - before;
    report
        .set("many_addresses_passwords_checked", checked)
        .set("many_addresses_answered_invalid", many.invalid)
        .set("many_addresses_refused_limited", many.limited)
        .set("many_addresses_refused_busy", many.busy)
        .set("many_addresses_other_errors", many.other)
        .set("many_addresses_ms", crate::stats::ms(elapsed));
    Ok(report)
}

/// An admin with a password, the victim with one, and security level 3.
async fn prepare(addr: &str) -> Result<()> {
    let admin = connect(addr, ADMIN, None, None).await?;
    let op = |what: &'static str| move |e| BenchError::op(what, e);
    let own = PasswordChange {
        user: None,
        old_password: String::new(),
        new_password: PASSWORD.into(),
    };
    ops::set_password(&admin, own)
        .await
        .map_err(op("setting the admin's password (is the server fresh?)"))?;
    let ticket = ops::login(&admin, PASSWORD.into(), true)
        .await
        .map_err(op("the admin's login"))?
        .ticket;
    let admin = connect(addr, ADMIN, Some(&ticket), None).await?;
    let victim = UserSpec {
        name: VICTIM.into(),
        ..UserSpec::default()
    };
    ops::save_user(&admin, victim, true)
        .await
        .map_err(op("creating the victim"))?;
    let victims = PasswordChange {
        user: Some(VICTIM.into()),
        old_password: String::new(),
        new_password: PASSWORD.into(),
    };
    ops::set_password(&admin, victims)
        .await
        .map_err(op("setting the victim's password"))?;
    ops::set_setting(&admin, "security", "3")
        .await
        .map_err(op("setting security=3"))?;
    Ok(())
}

/// `config.attempts` wrong logins at once, the n-th as `who(n)` (user, address to connect
/// from), over `config.connections` connections per address.
async fn storm(
    addr: &str,
    config: &Config,
    who: impl Fn(u32) -> (String, Option<std::net::IpAddr>),
) -> Result<Tally> {
    let mut connections: std::collections::HashMap<(Option<std::net::IpAddr>, u32), Connection> =
        std::collections::HashMap::new();
    let mut calls = Vec::new();
    for n in 0..config.attempts {
        let (user, bind) = who(n);
        let slot = (bind, n % config.connections.max(1));
        let conn = match connections.entry(slot) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(connect(addr, &user, None, bind).await?)
            }
        };
        let mut client = conn.client();
        let mut caller = conn.caller();
        if let Some(c) = caller.as_mut() {
            c.user = user;
        }
        calls.push(tokio::spawn(async move {
            client
                .login(LoginRequest {
                    caller,
                    password: "not-the-password".into(),
                    all_hosts: false,
                })
                .await
        }));
    }
    let mut tally = Tally::default();
    for call in calls {
        let answer = tokio::time::timeout(Duration::from_secs(300), call)
            .await
            .map_err(|_| BenchError::Check("a login got no answer within 300 s".into()))?
            .map_err(|e| BenchError::Check(format!("login task failed: {e}")))?;
        match answer {
            Ok(_) => {
                return Err(BenchError::Check(
                    "a wrong password was accepted".to_string(),
                ));
            }
            Err(s) if s.code() == Code::Unauthenticated => tally.invalid += 1,
            Err(s) if s.message().contains("too many failed logins") => tally.limited += 1,
            Err(s) if s.message().contains("server busy") => tally.busy += 1,
            Err(s) => {
                if tally.other == 0 {
                    eprintln!("logins: a login failed otherwise: {s}");
                }
                tally.other += 1;
            }
        }
    }
    Ok(tally)
}

async fn connect(
    addr: &str,
    user: &str,
    ticket: Option<&str>,
    bind: Option<std::net::IpAddr>,
) -> Result<Connection> {
    let settings = Settings {
        ignore: None,
        server: addr.to_string(),
        user: user.to_string(),
        workspace: None,
        host: "bench".into(),
        config_file: None,
        tickets: None,
        ticket: ticket.map(str::to_string),
        trust_file: crate::server::trust_file(),
        bind,
    };
    Ok(Connection::connect(&settings).await?)
}

/// `keel_password_checks_total` at `url` now.
async fn password_checks(url: &str) -> Result<u64> {
    let body = scrape(url)
        .await
        .map_err(|e| BenchError::io(format!("scraping {url}"), e))?;
    body.lines()
        .find_map(|l| l.strip_prefix("keel_password_checks_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v as u64)
        .ok_or_else(|| BenchError::Check(format!("{url} reports no keel_password_checks_total")))
}

/// The body of `GET url` (plain HTTP/1.0, which the metrics endpoint answers), bounded in time.
async fn scrape(url: &str) -> std::io::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let bad = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not http://HOST:PORT/PATH",
        )
    };
    let rest = url.strip_prefix("http://").ok_or_else(bad)?;
    let (authority, path) = rest.split_once('/').ok_or_else(bad)?;
    let fetch = async {
        let mut stream = tokio::net::TcpStream::connect(authority).await?;
        let request = format!("GET /{path} HTTP/1.0\r\nHost: {authority}\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        let mut body = String::new();
        stream.read_to_string(&mut body).await?;
        Ok(body)
    };
    tokio::time::timeout(Duration::from_secs(30), fetch)
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer within 30 s"))?
}
