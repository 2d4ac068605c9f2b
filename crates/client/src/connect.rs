//! The connection to a Keel server: a gRPC channel plus the `Caller` sent with every request.

use std::sync::Arc;
use std::time::Duration;

use keel_core::error_chain;
use keel_proto::v1::Caller;
use keel_proto::v1::keel_client::KeelClient;
use keel_tls::{DialError, Dialer, Observed, ServerAddr, TrustFile, TrustMode};
use tonic::metadata::AsciiMetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::config::Settings;
use crate::error::{Error, Result};
use crate::refusal::Refusal;
use crate::tuning::TransferConfig;

/// The metadata key a login ticket travels in (the server's `identity.rs` reads it).
pub const TICKET_METADATA: &str = "keel-ticket";

/// The generated gRPC client, sending the connection's ticket with every call.
pub type Rpc = KeelClient<InterceptedService<Channel, SendTicket>>;

/// Adds the login ticket, if any, to every request's metadata: the one place the client
/// authenticates.
#[derive(Clone, Debug)]
pub struct SendTicket(Option<AsciiMetadataValue>);

impl SendTicket {
    /// Sends `ticket` (none when `None`); a ticket that is not ASCII text is an error naming it.
    pub fn new(ticket: Option<&str>) -> Result<SendTicket> {
        ticket
            .map(|t| {
                t.parse::<AsciiMetadataValue>()
                    .map_err(|_| Error::BadArgument {
                        arg: "ticket".into(),
                        reason: "a ticket is ASCII text (log in again)".into(),
                    })
            })
            .transpose()
            .map(SendTicket)
    }
}

impl tonic::service::Interceptor for SendTicket {
    fn call(
        &mut self,
        mut req: tonic::Request<()>,
    ) -> std::result::Result<tonic::Request<()>, tonic::Status> {
        if let Some(ticket) = &self.0 {
            req.metadata_mut().insert(TICKET_METADATA, ticket.clone());
        }
        Ok(req)
    }
}

/// A connected client: cheap to clone (the channel is shared).
#[derive(Clone, Debug)]
pub struct Connection {
    client: Rpc,
    caller: Caller,
    addr: String,
    tuning: TransferConfig,
    /// What the transport saw (a wrong protocol shows only once a call fails).
    observed: Arc<Observed>,
}

impl Connection {
    /// The transfer knobs this connection was made with.
    pub fn tuning(&self) -> &TransferConfig {
        &self.tuning
    }

    /// Connects to `settings.server` with the default tuning; the caller identity comes from
    /// the same settings.
    pub async fn connect(settings: &Settings) -> Result<Connection> {
        Connection::connect_with(settings, TransferConfig::default()).await
    }

    /// Connects to `settings.server`, transferring as `tuning` says.
    pub async fn connect_with(settings: &Settings, tuning: TransferConfig) -> Result<Connection> {
        let addr = settings.server.clone();
        let server = ServerAddr::parse(&addr);
        let host_port = server.host_port.clone();
        // Errors name the address as completed (`1666` is `127.0.0.1:1666`).
        let shown = server.to_string();
        let connect_error = |reason: String| Error::Connect {
            addr: shown.clone(),
            reason,
        };
        let trust = match (&settings.trust_file, server.tls) {
            (Some(path), true) => TrustFile::load(path)?.mode(&server.host_port),
            _ => TrustMode::Unknown,
        };
        let dialer = Dialer::new(
            server,
            trust,
            Duration::from_secs(tuning.connect_timeout_secs),
        )
        .bind_local(settings.bind);
        // The server's monitor and command log name the client program by its user agent.
        let endpoint = dialer
            .endpoint()
            .and_then(|e| e.user_agent(concat!("keel/", env!("CARGO_PKG_VERSION"))))
            .map_err(|e| connect_error(error_chain(&e)))?;
        let channel = match dialer.connect(endpoint).await {
            Ok(channel) => channel,
            Err(DialError::Refused(why)) => return Err(Error::Transport(why)),
            Err(DialError::Transport(e)) => {
                return Err(unresolvable(&shown, &host_port)
                    .await
                    .unwrap_or_else(|| connect_error(error_chain(&e))));
            }
        };
        let ticket = SendTicket::new(settings.ticket.as_deref())?;
        let client = KeelClient::with_interceptor(channel, ticket)
            .max_decoding_message_size(tuning.max_message_bytes)
            .max_encoding_message_size(tuning.max_message_bytes);
        Ok(Connection {
            client,
            caller: Caller {
                user: settings.user.clone(),
                workspace: settings.workspace.clone().unwrap_or_default(),
                host: settings.host.clone(),
                force: false,
            },
            addr,
            tuning,
            observed: dialer.observed(),
        })
    }

    /// The identity sent with every request.
    pub fn caller(&self) -> Option<Caller> {
        Some(self.caller.clone())
    }

    /// Asks, as a super user, to act on workspaces and pending changes of other users (the
    /// `force` of every later request); the server ignores it for anyone else.
    pub fn set_force(&mut self, force: bool) {
        self.caller.force = force;
    }

    /// The same connection acting through another workspace (one the caller may use).
    pub fn with_workspace(&self, workspace: &str) -> Connection {
        let mut conn = self.clone();
        conn.caller.workspace = workspace.to_string();
        conn
    }

    /// The caller's user name.
    pub fn user(&self) -> &str {
        &self.caller.user
    }

    /// The caller's workspace name (empty when none is configured).
    pub fn workspace(&self) -> &str {
        &self.caller.workspace
    }

    /// The server address this connection was made to.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// A handle to the generated gRPC client (clones share the channel).
    pub fn client(&self) -> Rpc {
        self.client.clone()
    }

    /// Converts a gRPC status into a client error, naming the address when the server vanished
    /// and the protocol when the server speaks another one.
    pub fn status(&self, status: tonic::Status) -> Error {
        // A wrong protocol means no call ever reached a Keel server: every failure is that.
        if let Some(why) = self.observed.failure() {
            return Error::Transport(why.clone());
        }
        if status.code() == tonic::Code::Unavailable {
            return Error::Connect {
                addr: self.addr.clone(),
                reason: status.message().to_string(),
            };
        }
        Error::from(status)
    }

    /// The reply to one call made on [`Connection::client`] (its message, or a stream of
    /// them), a refusal turned into a client error as [`Connection::status`] does.
    pub(crate) async fn reply<T>(
        &self,
        call: impl std::future::Future<Output = std::result::Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T> {
        call.await
            .map(tonic::Response::into_inner)
            .map_err(|s| self.status(s))
    }
}

/// Why `host_port` could not be connected to, when the reason is the address itself rather
/// than the server: not an address at all, or a host name the resolver does not know. Asked
/// only after a connection failed, so a working connection pays no second lookup.
async fn unresolvable(addr: &str, host_port: &str) -> Option<Error> {
    match tokio::net::lookup_host(host_port).await {
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Some(Error::BadAddress {
            addr: addr.to_string(),
            reason: e.to_string(),
        }),
        Err(e) => Some(Error::Resolve {
            addr: addr.to_string(),
            reason: e.to_string(),
        }),
    }
}

impl From<tonic::Status> for Error {
    fn from(status: tonic::Status) -> Error {
        // Transport failures carry their cause as the status's source, not in its message.
        let message = match std::error::Error::source(&status) {
            Some(cause) => format!("{}: {}", status.message(), error_chain(cause)),
            None => status.message().to_string(),
        };
        Error::Server {
            code: status.code(),
            message,
            refusal: Refusal::from_details(status.details()),
        }
    }
}
