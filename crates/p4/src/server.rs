//! What every connection of the P4 front end shares: the service, the options, the ticket key,
//! and the server's command gate, through which every command passes (a read-only replica's
//! refusal of writes, the monitor, the protections, the command log, metrics).

use crate::tickets::TicketKey;
use keel_service::Service;
use keel_service::command::CommandGate;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

/// How the front end behaves (from the server's configuration).
#[derive(Clone, Debug)]
pub struct P4Options {
    /// Largest message read from a client (bytes); a larger one ends the connection with an
    /// error naming the limit.
    pub max_message_bytes: usize,
    /// Let clients send passwords in the clear (`login`, `passwd`) over plain TCP from
    /// addresses other than loopback. Off: only over `ssl:`, loopback or stdio.
    pub plain_passwords: bool,
    /// The address the listener is reached at, shown by `info` (`Server address`).
    pub address: String,
    /// The server root, shown by `info`.
    pub root: String,
    /// Longest wait for a client's answer inside a command (a typed password, a form, a
    /// ticket proof); a client that takes longer loses the connection.
    pub reply_timeout: std::time::Duration,
    /// The TLS certificate's fingerprint as P4 clients show it (`p4 trust`), when the
    /// listener speaks TLS.
    pub fingerprint: Option<String>,
}

impl P4Options {
    /// The `serverAddress` the client files its ticket under (and looks it up by), when the
    /// client's own `P4PORT` would make a poor key: on stdio it is the command line of an
    /// `rsh:` port, whose `=` and spaces the tickets file cannot hold, so that each login would
    /// add a line. Elsewhere `None`: the client keys its ticket by its `P4PORT`.
    pub fn ticket_server_address(&self) -> Option<String> {
        (self.address == "stdio").then(|| format!("stdio:{}", self.root))
    }
}

/// The front end's shared state.
pub struct P4Server {
    pub(crate) service: Arc<Service>,
    pub(crate) options: P4Options,
    pub(crate) key: TicketKey,
    pub(crate) gate: Arc<dyn CommandGate>,
    pub(crate) started: Instant,
}

impl P4Server {
    pub fn new(
        service: Arc<Service>,
        options: P4Options,
        key: TicketKey,
        gate: Arc<dyn CommandGate>,
    ) -> P4Server {
        P4Server {
            service,
            options,
            key,
            gate,
            started: Instant::now(),
        }
    }
}

/// What the transport tells about one connection.
#[derive(Clone, Copy, Debug, Default)]
pub struct PeerInfo {
    /// The client's address (`None` on stdio).
    pub client: Option<SocketAddr>,
    /// The server's end as the client reached it (`None` on stdio): the `daddr` of the
    /// client's digests.
    pub local: Option<SocketAddr>,
    /// Whether the connection is TLS.
    pub tls: bool,
}

impl PeerInfo {
    /// Whether a password may travel in the clear on this connection.
    pub fn password_safe(&self, options: &P4Options) -> bool {
        self.tls
            || options.plain_passwords
            || match self.client {
                None => true,
                Some(a) => a.ip().is_loopback(),
            }
    }
}
