//! `--access secure`: the workload's clients authenticate like users. On the generated dataset
//! the server is put at security level 3, the benchmark's users get passwords and log in (a
//! real ticket, sent with every call as the command line sends it), and a realistic
//! protections table is installed, so every call pays authentication and every file the
//! protection check. `--access open` (the default) leaves the server as it is.

use std::collections::HashMap;
use std::path::PathBuf;

use keel_client::{Connection, Settings, TicketFile};
use keel_proto::v1::{
    ConfigureRequest, Group, LoginRequest, LoginStatusRequest, SaveGroupRequest,
    SaveProtectionsRequest, SaveUserRequest, SetPasswordRequest, User,
};

use crate::error::{BenchError, Result};

/// The super user that secures the server.
pub const ADMIN: &str = "bench-admin";

/// Every benchmark user's password (strong, as security 3 asks).
pub const PASSWORD: &str = "Bench-Access-2026";

/// The group holding the benchmark's users.
pub const GROUP: &str = "bench-dev";

/// How the workload's clients reach the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccessMode {
    /// As the server is: no ticket sent (a fresh server is at security 0 with no table).
    #[default]
    Open,
    /// Security 3, a ticket per user, the table of [`protections`].
    Secure,
}

impl AccessMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AccessMode::Open => "open",
            AccessMode::Secure => "secure",
        }
    }
}

/// The users' tickets (none in open mode).
#[derive(Debug, Clone, Default)]
pub struct Logins {
    tickets: HashMap<String, String>,
}

impl Logins {
    /// The ticket `user` sends (None in open mode).
    pub fn ticket(&self, user: &str) -> Option<&str> {
        self.tickets.get(user).map(String::as_str)
    }

    /// How many users logged in.
    pub fn len(&self) -> usize {
        self.tickets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tickets.is_empty()
    }
}

/// Prepares the server at `addr` for `mode` with `users` as the workload's users. Secure:
/// reuses the tickets in `tickets` when it holds a valid one for every user (no password is
/// checked, no row written: what a measurement that must not count the set-up wants);
/// otherwise secures the server, logs every user in and stores the tickets there.
pub async fn prepare(
    addr: &str,
    mode: AccessMode,
    users: &[String],
    tickets: Option<&PathBuf>,
) -> Result<Logins> {
    if mode == AccessMode::Open {
        return Ok(Logins::default());
    }
    let file = tickets.map(|p| TicketFile { path: p.clone() });
    if let Some(file) = &file
        && let Some(logins) = reuse(addr, users, file).await?
    {
        return Ok(logins);
    }
    let admin = admin_ticket(addr).await?;
    let conn = connect(addr, ADMIN, "", Some(&admin)).await?;
    let rpc = conn.client();
    for user in users {
        rpc.clone()
            .save_user(SaveUserRequest {
                caller: conn.caller(),
                user: Some(User {
                    name: user.clone(),
                    email: format!("{user}@bench"),
                    full_name: format!("Benchmark user {user}"),
                    r#type: "standard".into(),
                    ..User::default()
                }),
                force: true,
            })
            .await
            .map_err(|s| BenchError::rpc(format!("creating user {user}"), s))?;
        rpc.clone()
            .set_password(SetPasswordRequest {
                caller: conn.caller(),
                user: user.clone(),
                old_password: String::new(),
                new_password: PASSWORD.into(),
            })
            .await
            .map_err(|s| BenchError::rpc(format!("setting the password of {user}"), s))?;
    }
    rpc.clone()
        .save_group(SaveGroupRequest {
            caller: conn.caller(),
            group: Some(Group {
                name: GROUP.into(),
                users: users.to_vec(),
                owners: vec![ADMIN.into()],
                ..Group::default()
            }),
        })
        .await
        .map_err(|s| BenchError::rpc(format!("saving group {GROUP}"), s))?;
    // QA holds the developers as a subgroup; operations does not.
    for (name, member, subgroups) in [
        ("bench-qa", "qa1", vec![GROUP.to_string()]),
        ("bench-ops", "ops1", Vec::new()),
    ] {
        rpc.clone()
            .save_group(SaveGroupRequest {
                caller: conn.caller(),
                group: Some(Group {
                    name: name.into(),
                    users: vec![member.into()],
                    subgroups,
                    ..Group::default()
                }),
            })
            .await
            .map_err(|s| BenchError::rpc(format!("saving group {name}"), s))?;
    }
    rpc.clone()
        .save_protections(SaveProtectionsRequest {
            caller: conn.caller(),
            lines: protections(),
        })
        .await
        .map_err(|s| BenchError::rpc("saving the protections table", s))?;
    rpc.clone()
        .configure(ConfigureRequest {
            caller: conn.caller(),
            name: "security".into(),
            value: "3".into(),
            unset: false,
        })
        .await
        .map_err(|s| BenchError::rpc("setting security=3", s))?;
    let mut logins = Logins::default();
    for user in users {
        let ticket = login(addr, user).await?;
        if let Some(file) = &file {
            file.set(addr, user, &ticket)?;
        }
        logins.tickets.insert(user.clone(), ticket);
    }
    Ok(logins)
}

/// The table the secure mode installs: 34 lines, as a site's might read. The benchmark's
/// users (group `bench-dev`) may write `//depot/...` from anywhere and from loopback
/// (a CIDR line); the exclusions name sub-trees the workloads never touch, after the grants,
/// so each per-file check walks them all before the grant that decides.
pub fn protections() -> Vec<String> {
    let mut lines = vec![
        "## The benchmark's table (keel bench --access secure)".to_string(),
        format!("super user {ADMIN} * //..."),
        "admin group bench-ops * //...".into(),
        "list user * * //...".into(),
        "read group bench-qa * //depot/...".into(),
        format!("write group {GROUP} * //depot/..."),
        format!("write group {GROUP} 127.0.0.0/8 //depot/main/..."),
        format!("=write group {GROUP} * -//depot/release/..."),
        "open group bench-qa 10.0.0.0/8 //depot/qa/...".into(),
        "read user build* * //depot/...".into(),
    ];
    for n in 0..12 {
        lines.push(format!("list group {GROUP} * -//depot/secret{n:02}/..."));
    }
    for team in ["hr", "legal", "finance", "payroll", "keys", "vendor"] {
        lines.push(format!("read group {GROUP} * -//depot/{team}/..."));
    }
    lines.push(format!("list group {GROUP} * -//depot/main/.../*.key"));
    lines.push(format!(
        "list group {GROUP} * -//depot/sync/.../private/..."
    ));
    lines.push("read user * 192.168.0.0/16 -//depot/...".into());
    lines.push(format!("super user {ADMIN} * //..."));
    lines
}

/// The admin's ticket: its password set when it has none (security 0, no table: every user is
/// a super user), then a login.
async fn admin_ticket(addr: &str) -> Result<String> {
    if let Ok(ticket) = login(addr, ADMIN).await {
        return Ok(ticket);
    }
    let conn = connect(addr, ADMIN, "", None).await?;
    conn.client()
        .set_password(SetPasswordRequest {
            caller: conn.caller(),
            user: String::new(),
            old_password: String::new(),
            new_password: PASSWORD.into(),
        })
        .await
        .map_err(|s| BenchError::rpc(format!("setting the password of {ADMIN}"), s))?;
    login(addr, ADMIN).await
}

/// Logs `user` in with [`PASSWORD`]; the ticket.
async fn login(addr: &str, user: &str) -> Result<String> {
    let conn = connect(addr, user, "", None).await?;
    let reply = conn
        .client()
        .login(LoginRequest {
            caller: conn.caller(),
            password: PASSWORD.into(),
            all_hosts: false,
        })
        .await
        .map_err(|s| BenchError::rpc(format!("login of {user}"), s))?;
    Ok(reply.into_inner().ticket)
}

/// The tickets in `file` when every user has one the server still accepts.
async fn reuse(addr: &str, users: &[String], file: &TicketFile) -> Result<Option<Logins>> {
    let mut logins = Logins::default();
    for user in users {
        let Some(ticket) = file.get(addr, user)? else {
            return Ok(None);
        };
        let conn = connect(addr, user, "", Some(&ticket)).await?;
        let status = conn
            .client()
            .login_status(LoginStatusRequest {
                caller: conn.caller(),
            })
            .await;
        if status.is_err() {
            return Ok(None);
        }
        logins.tickets.insert(user.clone(), ticket);
    }
    Ok(Some(logins))
}

/// Connects to `addr` as `user` in `workspace` (empty = none) sending `ticket`, on its own TCP
/// connection.
pub async fn connect(
    addr: &str,
    user: &str,
    workspace: &str,
    ticket: Option<&str>,
) -> Result<Connection> {
    let settings = Settings {
        ignore: None,
        server: addr.to_string(),
        user: user.to_string(),
        workspace: (!workspace.is_empty()).then(|| workspace.to_string()),
        host: "bench".into(),
        config_file: None,
        tickets: None,
        ticket: ticket.map(str::to_string),
        trust_file: crate::server::trust_file(),
        bind: None,
    };
    Ok(Connection::connect(&settings).await?)
}
