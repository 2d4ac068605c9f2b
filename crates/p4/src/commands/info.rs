//! `info`: who the client is, where the server is, and what it is, tagged (the fields tools
//! read: `serverVersion`, `serverRoot`, `userName`, `caseHandling`...) or as the lines a user
//! reads. It needs no login and records no user: an unknown user shows as `*unknown*`.

use crate::cmd::{Cmd, CmdResult};
use crate::dates;
use crate::dispatch::{self, Command};
use crate::version;
use keel_service::command as rows;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "info",
        row: rows::INFO,
        login: false,
        flags: "s",
        usage: "info [ -s ]",
        run: |c| Box::pin(info(c)),
    },
    // The client asks this at connect time (charset, extensions); nothing to tell.
    Command {
        name: "discover",
        row: rows::INFO,
        login: false,
        flags: "",
        usage: "discover",
        run: |_| Box::pin(async { Ok(()) }),
    },
];

async fn info(cmd: &mut Cmd) -> CmdResult {
    let command = dispatch::find("info").expect("info is in the table");
    let short = dispatch::flags(cmd, command)?.has('s');
    let user = cmd.caller.user.clone();
    let (facts, known) = cmd
        .call(move |svc, caller| {
            let known = svc.user_on_record(&user)?;
            Ok::<_, keel_service::ServiceError>((svc.server_info(caller)?, known))
        })
        .await??;
    let peer = cmd.peer();
    let user_name = if known && !cmd.caller.user.is_empty() {
        cmd.caller.user.clone()
    } else {
        "*unknown*".to_string()
    };
    let client_root = (!facts.workspace_root.is_empty()).then(|| facts.workspace_root.clone());
    let cwd = cmd.req.text("cwd").unwrap_or_default();
    let options = cmd.options().clone();
    let uptime = cmd.server.started.elapsed().as_secs();
    let date = format!("{} +0000 UTC", dates::date_time(facts.server_time));
    let mut fields: Vec<(&str, String)> = vec![
        ("userName", user_name.clone()),
        ("clientName", non_empty(&cmd.caller.workspace, "*unknown*")),
    ];
    if let Some(root) = &client_root {
        fields.push(("clientRoot", root.clone()));
    }
    fields.push(("clientHost", cmd.caller.host.clone()));
    if !cwd.is_empty() {
        fields.push(("clientCwd", cwd.clone()));
    }
    if let Some(addr) = peer.client {
        fields.push(("clientAddress", addr.ip().to_string()));
        fields.push(("peerAddress", addr.to_string()));
    }
    fields.push(("serverAddress", options.address.clone()));
    fields.push(("serverRoot", options.root.clone()));
    fields.push(("serverDate", date.clone()));
    fields.push(("tzoffset", "0".to_string()));
    fields.push(("serverUptime", dates::uptime(uptime)));
    fields.push(("serverVersion", version::server_version()));
    fields.push(("serverServices", "standard".to_string()));
    fields.push(("serverLicense", "none".to_string()));
    fields.push(("caseHandling", "sensitive".to_string()));
    fields.push(("security", facts.security.to_string()));
    if let Some(fp) = &options.fingerprint {
        fields.push(("serverCertFingerprint", fp.clone()));
    }
    if cmd.tagged {
        cmd.stat(fields);
        return Ok(());
    }
    let mut lines = vec![
        format!("User name: {user_name}"),
        format!(
            "Client name: {}",
            non_empty(&cmd.caller.workspace, "*unknown*")
        ),
        format!("Client host: {}", cmd.caller.host),
    ];
    match &client_root {
        Some(root) => lines.push(format!("Client root: {root}")),
        None => lines.push("Client unknown.".to_string()),
    }
    if !cwd.is_empty() {
        lines.push(format!("Current directory: {cwd}"));
    }
    if let Some(addr) = peer.client {
        lines.push(format!("Peer address: {addr}"));
        lines.push(format!("Client address: {}", addr.ip()));
    }
    lines.push(format!("Server address: {}", options.address));
    lines.push(format!("Server root: {}", options.root));
    lines.push(format!("Server date: {date}"));
    lines.push(format!("Server uptime: {}", dates::uptime(uptime)));
    lines.push(format!("Server version: {}", version::server_version()));
    if !short {
        lines.push("Server license: none".to_string());
    }
    lines.push("Case Handling: sensitive".to_string());
    if let Some(fp) = &options.fingerprint {
        lines.push(format!("Server certificate fingerprint: {fp}"));
    }
    for line in lines {
        cmd.info(line);
    }
    Ok(())
}

fn non_empty(s: &str, otherwise: &str) -> String {
    if s.is_empty() {
        otherwise.to_string()
    } else {
        s.to_string()
    }
}
