//! The P4 listener beside the gRPC one: one process, one store, the same `Service`. Connections
//! are accepted under the same caps and idle timeout as the gRPC port's (plain TCP, or TLS with
//! the server's certificate for `ssl:`), and each P4 command runs one row of the command table
//! through the server's [`ServerGate`], as a gRPC call does: refused on a read-only replica
//! when it writes, registered with the monitor, checked against the protections, and logged
//! and counted at its end under the row's name. `--p4-stdio` serves one connection on stdin and stdout instead.

use crate::ServerGate;
use keel_p4::{P4Options, P4Server, PeerInfo};
use keel_service::ServiceError;
use keel_service::command::{Command, CommandGate, CommandRun, CommandStart};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_stream::StreamExt;
use tonic::transport::server::Connected;

/// The server's command gate for P4 commands: the same [`ServerGate`] gRPC calls' rows meet,
/// and a running command counts its connection busy (the idle timeout spares it).
pub(crate) struct P4Gate {
    pub(crate) gate: ServerGate,
    pub(crate) tracker: Arc<keel_tls::ConnTracker>,
}

impl CommandGate for P4Gate {
    fn begin(
        &self,
        command: &'static Command,
        start: CommandStart,
    ) -> Result<CommandRun, ServiceError> {
        let connection = start.connection;
        let run = self.gate.begin(command, start)?;
        let busy = connection.and_then(|peer| self.tracker.activity(peer).map(|a| a.begin()));
        Ok(match busy {
            Some(busy) => run.hold(Box::new(busy)),
            None => run,
        })
    }

    fn refused_login(&self, command: &'static Command, start: CommandStart, reason: &str) {
        self.gate.refused_login(command, start, reason);
    }

    fn running(&self) -> Vec<keel_service::command::RunningCommand> {
        self.gate.running()
    }

    fn terminate(&self, id: u64, by: &str) -> Option<keel_service::command::RunningCommand> {
        self.gate.terminate(id, by)
    }
}

/// Serves the P4 listener's connections until the stream of accepted ones ends.
pub(crate) async fn accept_loop(
    server: Arc<P4Server>,
    mut incoming: std::pin::Pin<
        Box<
            dyn tokio_stream::Stream<
                    Item = std::io::Result<keel_tls::Limited<keel_tls::ServerConn>>,
                > + Send,
        >,
    >,
    tls: bool,
) {
    while let Some(conn) = incoming.next().await {
        let Ok(conn) = conn else { continue };
        let info = conn.connect_info();
        let peer = PeerInfo {
            client: info.remote_addr,
            local: info.local_addr,
            tls,
        };
        tokio::spawn(keel_p4::serve_connection(
            server.clone(),
            Box::new(conn),
            peer,
        ));
    }
}

/// The front end's options from the server's configuration.
pub(crate) fn options(
    config: &crate::ServerConfig,
    address: String,
    root: &std::path::Path,
    fingerprint: Option<String>,
) -> P4Options {
    P4Options {
        max_message_bytes: config.p4_max_message_bytes,
        plain_passwords: config.p4_plain_passwords,
        address,
        root: root.display().to_string(),
        reply_timeout: std::time::Duration::from_millis(config.idle_timeout_ms),
        fingerprint,
    }
}

/// Where the P4 listener is, as `serve`'s caller is told.
#[derive(Clone, Debug)]
pub struct P4Listening {
    pub addr: SocketAddr,
    /// The fingerprint P4 clients pin (`p4 trust`), when it speaks TLS.
    pub fingerprint: Option<String>,
}

impl P4Listening {
    /// The address as P4 clients write it (`ssl:` for TLS).
    pub fn client_address(&self) -> String {
        match self.fingerprint {
            Some(_) => format!("ssl:{}", self.addr),
            None => self.addr.to_string(),
        }
    }
}
