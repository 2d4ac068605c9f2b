//! Server-level verbs: `info`, `depots`, `depot create`.

use anyhow::Result;
use keel_client::ops;

use crate::cli::DepotCmd;
use crate::output::{Record, date, date_time};
use crate::session::Session;

pub async fn info(s: &mut Session) -> Result<()> {
    let reply = ops::info(&s.conn).await?;
    let uptime = reply.uptime_seconds;
    let uptime_text = format!(
        "{:02}:{:02}:{:02}",
        uptime / 3600,
        uptime % 3600 / 60,
        uptime % 60
    );
    let client_name = if reply.workspace.is_empty() {
        "*unknown*"
    } else {
        reply.workspace.as_str()
    };
    let client_root = if reply.workspace_root.is_empty() {
        "*unknown*"
    } else {
        reply.workspace_root.as_str()
    };
    let mut record = Record::new()
        .s("userName", &reply.user)
        .s("clientName", client_name)
        .s("clientHost", &s.settings.host)
        .s("clientRoot", client_root)
        .s("clientCwd", s.cwd.display().to_string())
        .s("serverAddress", &reply.server_address)
        .s("serverTlsFingerprint", &reply.tls_fingerprint)
        .s("serverRoot", &reply.server_root)
        .s("serverDate", date_time(reply.server_time))
        .n("serverUptime", uptime)
        .s("serverVersion", &reply.server_version)
        .n("contentBytesSent", reply.content_bytes_sent)
        .n("security", u64::from(reply.security));
    let mut lines = vec![
        format!("User name: {}", reply.user),
        format!("Client name: {client_name}"),
        format!("Client host: {}", s.settings.host),
        format!("Client root: {client_root}"),
        format!("Current directory: {}", s.cwd.display()),
        format!("Server address: {}", reply.server_address),
        format!(
            "Server TLS fingerprint: {}",
            match reply.tls_fingerprint.as_str() {
                "" => "none (plain TCP)",
                fp => fp,
            }
        ),
        format!("Server root: {}", reply.server_root),
        format!("Server date: {}", date_time(reply.server_time)),
        format!("Server uptime: {uptime_text}"),
        format!("Server version: {}", reply.server_version),
        format!("Server content bytes sent: {}", reply.content_bytes_sent),
        format!("Server security: {}", reply.security),
    ];
    if let Some(r) = &reply.replica {
        // Lag in seconds is shown to the millisecond (JSON in milliseconds, an integer).
        let lag_ms = (r.lag_seconds * 1000.0).round() as u64;
        record = record
            .s("replicaOf", &r.primary)
            .b("replicaConnected", r.connected)
            .n("replicaAppliedPosition", r.applied_position)
            .n("replicaPrimaryPosition", r.primary_position)
            .n("replicaLagRecords", r.lag_records)
            .n("replicaLagMillis", lag_ms)
            .b("replicaForwardWrites", r.forward_writes)
            .s("replicaLastError", &r.last_error);
        lines.push(format!(
            "Replica of: {} ({}{})",
            r.primary,
            if r.connected {
                "connected"
            } else {
                "not connected"
            },
            if r.forward_writes {
                ", forwarding writes"
            } else {
                ""
            }
        ));
        lines.push(format!(
            "Replica journal position: {} applied, {} on the primary",
            r.applied_position, r.primary_position
        ));
        lines.push(format!(
            "Replica lag: {} records, {:.3} s",
            r.lag_records, r.lag_seconds
        ));
        if !r.last_error.is_empty() {
            lines.push(format!("Replica last error: {}", r.last_error));
        }
    }
    let record = match &reply.proxy {
        Some(p) => {
            lines.extend([
                format!("Proxy address: {} (target {})", p.address, p.target),
                format!(
                    "Proxy cache: {} ({} files, {} of {} bytes)",
                    p.cache_dir, p.cache_files, p.cache_bytes, p.cache_limit_bytes
                ),
                format!(
                    "Proxy content: {} hits, {} misses, {} bytes from target, {} bytes served, {} corrupt dropped",
                    p.hits, p.misses, p.bytes_from_target, p.bytes_served, p.dropped_corrupt
                ),
            ]);
            record
                .s("proxyAddress", &p.address)
                .s("proxyTarget", &p.target)
                .s("proxyCacheDir", &p.cache_dir)
                .n("proxyCacheFiles", p.cache_files)
                .n("proxyCacheBytes", p.cache_bytes)
                .n("proxyCacheLimit", p.cache_limit_bytes)
                .n("proxyHits", p.hits)
                .n("proxyMisses", p.misses)
                .n("proxyBytesFromTarget", p.bytes_from_target)
                .n("proxyBytesServed", p.bytes_served)
                .n("proxyDroppedCorrupt", p.dropped_corrupt)
        }
        None => record,
    };
    s.out.emit(record, lines.join("\n"));
    Ok(())
}

pub async fn depots(s: &mut Session) -> Result<()> {
    for depot in ops::depots(&s.conn).await? {
        let map = format!("{}/...", depot.name);
        s.out.emit(
            Record::new()
                .s("name", &depot.name)
                .n("time", depot.created)
                .s("type", &depot.kind)
                .s("map", &map)
                .s("owner", &depot.owner)
                .s("desc", &depot.description),
            format!(
                "Depot {} {} {} {} '{}'",
                depot.name,
                date(depot.created),
                depot.kind,
                map,
                depot.description
            ),
        );
    }
    Ok(())
}

pub async fn depot(s: &mut Session, cmd: DepotCmd) -> Result<()> {
    match cmd {
        DepotCmd::Create { name, description } => {
            let description = description.unwrap_or_default();
            let depot = ops::create_depot(&s.conn, &name, &description).await?;
            s.out.emit(
                Record::new()
                    .s("name", &depot.name)
                    .s("type", &depot.kind)
                    .s("action", "saved"),
                format!("Depot {} saved.", depot.name),
            );
            Ok(())
        }
    }
}
