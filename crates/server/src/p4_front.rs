//! The P4 listener beside the gRPC one: one process, one store, the same `Service`. Connections
//! are accepted under the same caps and idle timeout as the gRPC port's (plain TCP, or TLS with
//! the server's certificate for `ssl:`), and each P4 command is registered with the same
//! monitor and command log as a gRPC call (as `p4-NAME`), and refused on a read-only replica
//! when it writes. `--p4-stdio` serves one connection on stdin and stdout instead.

use crate::monitor::registry::{Registry, Running, Who};
use keel_p4::{CommandEnd, CommandStart, Hooks, P4Options, P4Server, PeerInfo};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_stream::StreamExt;
use tonic::transport::server::Connected;

/// A P4 command's arguments, as `monitor show -a` and the command log show them.
#[derive(Clone, Debug)]
struct P4Args {
    #[allow(dead_code)] // Read through `Debug` only.
    args: Vec<String>,
}

/// How the server sees P4 commands.
pub(crate) struct P4Hooks {
    pub(crate) registry: Option<Arc<Registry>>,
    /// The primary, when this server is a read-only replica.
    pub(crate) primary: Option<String>,
    pub(crate) tracker: Option<Arc<keel_tls::ConnTracker>>,
    pub(crate) args_max_bytes: usize,
}

struct Ended {
    registry: Option<Arc<Registry>>,
    run: Option<Arc<Running>>,
    _busy: Option<keel_tls::RequestGuard>,
}

impl CommandEnd for Ended {
    fn end(self: Box<Self>, error: Option<&str>) {
        if let (Some(registry), Some(run)) = (&self.registry, &self.run) {
            registry.end(run, error.map(|e| (tonic::Code::Unknown, e.to_string())));
        }
    }
}

impl Hooks for P4Hooks {
    fn start(&self, c: &CommandStart<'_>) -> Result<Box<dyn CommandEnd>, String> {
        let run = self.registry.as_ref().map(|registry| {
            let program: String = c.program.chars().take(128).collect();
            let run = registry.start(format!("p4-{}", c.name), program);
            let _ = run.who.set(Who {
                user: c.user.to_string(),
                workspace: c.workspace.to_string(),
                host: c.host.to_string(),
            });
            if let Some(a) = c.address {
                let _ = run.address.set(a);
            }
            let request = P4Args {
                args: c.args.to_vec(),
            };
            if let Some(args) =
                crate::monitor::args::Arguments::keep(&run.command, &request, self.args_max_bytes)
            {
                let _ = run.args.set(args);
            }
            run
        });
        if c.writes
            && let Some(primary) = &self.primary
        {
            let refusal = format!(
                "{}: this server is a read-only replica of {primary}: send writes to the primary",
                c.name
            );
            if let (Some(registry), Some(run)) = (&self.registry, &run) {
                registry.end(
                    run,
                    Some((tonic::Code::FailedPrecondition, refusal.clone())),
                );
            }
            return Err(refusal);
        }
        let busy = match (&self.tracker, c.peer) {
            (Some(t), Some(peer)) => t.activity(peer).map(|a| a.begin()),
            _ => None,
        };
        Ok(Box::new(Ended {
            registry: self.registry.clone(),
            run,
            _busy: busy,
        }))
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
