//! One running command: its request, its caller, and the helpers every command uses to answer
//! (tagged records, message lines, errors), to ask the client something (a prompt, a form, a
//! ticket proof) and to call the service off the async runtime.

use crate::conn::{Conn, ConnError};
use crate::server::{P4Server, PeerInfo};
use crate::tickets;
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_service::{AuthError, Caller, Credentials, ProvenTicket, Service, ServiceError};
use std::sync::Arc;

/// Why a command stopped.
#[derive(Debug)]
pub enum CmdError {
    /// Refused or failed: the report is sent to the client as an error.
    Report(Report),
    /// The connection broke; nothing more can be sent.
    Conn(ConnError),
}

impl From<ConnError> for CmdError {
    fn from(e: ConnError) -> CmdError {
        CmdError::Conn(e)
    }
}

impl From<Report> for CmdError {
    fn from(r: Report) -> CmdError {
        CmdError::Report(r)
    }
}

impl From<ServiceError> for CmdError {
    fn from(e: ServiceError) -> CmdError {
        CmdError::Report(service_report(&e))
    }
}

impl From<AuthError> for CmdError {
    fn from(e: AuthError) -> CmdError {
        CmdError::Report(auth_report(&e))
    }
}

/// A command's outcome.
pub type CmdResult = Result<(), CmdError>;

/// Message numbers of the front end's own refusals.
pub mod number {
    pub const USAGE: u32 = 1;
    pub const UNKNOWN_COMMAND: u32 = 2;
    pub const LOGIN_REQUIRED: u32 = 3;
    pub const PROTECTED: u32 = 4;
    pub const SERVICE: u32 = 5;
    pub const PASSWORD_IN_CLEAR: u32 = 6;
    pub const TOO_BIG: u32 = 7;
    pub const INTERNAL: u32 = 8;
    pub const REPLICA: u32 = 9;
    pub const NO_SUCH: u32 = 10;
    pub const FORM: u32 = 11;
    // p4browse
    pub const NO_SUCH_FILES: u32 = 12;
    pub const NOT_IN_VIEW: u32 = well_known(367);
    pub const NO_SUCH_CHANGE: u32 = 14;
    // p4sync
    pub const UP_TO_DATE: u32 = well_known(388);
    pub const NOT_OPENED: u32 = well_known(382);
    pub const NOTHING_TO_INTEGRATE: u32 = well_known(372);
    pub const MERGE_NEEDED: u32 = 43;
    pub const NOTHING_TO_RESOLVE: u32 = 44;
    // p4py
    /// A submit refused because files still need a resolve (`Merges still pending`).
    pub const MERGES_PENDING: u32 = 50;
    // p4gaps
    /// `reconcile`, `status` or `clean` found nothing to do.
    pub const NO_RECONCILE: u32 = 60;
    /// The unique id (subsystem 6, the file-metadata messages, and `code`) that P4 clients'
    /// scripts recognise for the empty-result warnings (`File(s) up-to-date.` is 6532, as
    /// P4Python's own tests check), instead of a number in Keel's subsystem.
    const fn well_known(code: u32) -> u32 {
        (6 << 10) | code
    }
}

/// A service failure as the client shows it.
pub fn service_report(e: &ServiceError) -> Report {
    let generic = match e {
        ServiceError::CommandDenied { .. } => Generic::Protect,
        ServiceError::NoSuchWorkspace { .. } | ServiceError::NoSuchFiles { .. } => Generic::Unknown,
        ServiceError::BadArgument { .. } => Generic::Usage,
        _ => Generic::None,
    };
    Report::failed(generic, number::SERVICE, e.to_string())
}

/// An authentication or user-command refusal as the client shows it.
pub fn auth_report(e: &AuthError) -> Report {
    match e {
        AuthError::LoginRequired { user, .. }
        | AuthError::TicketInvalid { user, .. }
        | AuthError::TicketExpired { user, .. } => login_required(user),
        AuthError::P4DigestsOff { user } => login_required(user).text(
            " A P4PASSWD holding the password itself is accepted only when the server sets \
             p4_password_digests; otherwise use a ticket ('p4 login', or 'p4 login -p' for one \
             to put in P4PASSWD).",
        ),
        AuthError::NoSuchUser { user } => {
            Report::new(Severity::Failed, Generic::Unknown, number::NO_SUCH)
                .text("User ")
                .arg("user", user)
                .text(" doesn't exist.")
        }
        _ => Report::failed(Generic::None, number::SERVICE, e.to_string()),
    }
}

/// The refusal of a command that needs a login.
pub fn login_required(user: &str) -> Report {
    Report::new(Severity::Failed, Generic::Config, number::LOGIN_REQUIRED)
        .text("Password (P4PASSWD) invalid or unset for user ")
        .arg("user", user)
        .text("; log in with 'p4 login'.")
}

/// A command the service refused, its error's sentence as the message (exit 1 in the CLI).
pub fn refused(e: impl std::fmt::Display) -> CmdError {
    CmdError::Report(Report::failed(
        Generic::Usage,
        number::SERVICE,
        e.to_string(),
    ))
}

/// A usage error naming what was wrong.
pub fn usage(text: impl AsRef<str>) -> CmdError {
    CmdError::Report(Report::failed(Generic::Usage, number::USAGE, text))
}

/// The running command.
pub struct Cmd {
    pub(crate) conn: Conn,
    pub(crate) server: Arc<P4Server>,
    pub(crate) peer: PeerInfo,
    /// The client's request (`user-NAME` with its arguments and environment).
    pub req: Message,
    /// The command's name (`info`).
    pub name: String,
    /// The positional arguments, as text.
    pub args: Vec<String>,
    pub caller: Caller,
    /// Whether the client asked for tagged output.
    pub tagged: bool,
    /// Whether it asked so for the whole connection, in its protocol message (`p4 -G`,
    /// `-R`, `-Z tag`: scripts reading records, such as git-p4).
    pub tagged_connection: bool,
    /// Whether an error line was sent.
    pub(crate) failed: bool,
    /// The ticket the command's caller proved, when it proved one.
    pub(crate) proven: Option<ProvenTicket>,
    /// The running command's counters (set once the gate began it), which every service
    /// call enters so its rows count for the command in the monitor and the log.
    pub(crate) counters: Option<Arc<keel_service::command::CommandCounters>>,
}

impl Cmd {
    /// The service.
    pub fn service(&self) -> &Arc<Service> {
        &self.server.service
    }

    /// The front end's options.
    pub fn options(&self) -> &crate::P4Options {
        &self.server.options
    }

    /// What the transport says of this connection.
    pub fn peer(&self) -> PeerInfo {
        self.peer
    }

    /// Runs `f` with the service and the caller on a blocking thread (service calls read and
    /// write the store and hash passwords).
    pub fn call<T, F>(&self, f: F) -> impl Future<Output = Result<T, CmdError>> + Send + 'static
    where
        T: Send + 'static,
        F: FnOnce(&Service, &Caller) -> T + Send + 'static,
    {
        let service = self.server.service.clone();
        let caller = self.caller.clone();
        let counters = self.counters.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let _entered = keel_service::command::enter(counters);
                f(&service, &caller)
            })
            .await
            .map_err(|e| {
                CmdError::Report(Report::failed(
                    Generic::Fault,
                    number::INTERNAL,
                    format!("the command failed inside the server: {e}"),
                ))
            })
        }
    }

    /// Sends one tagged record (`client-FstatInfo`).
    pub fn stat<K: AsRef<str>, V: AsRef<[u8]>>(
        &mut self,
        fields: impl IntoIterator<Item = (K, V)>,
    ) {
        let mut m = Message::new();
        for (k, v) in fields {
            m.set(k.as_ref(), v);
        }
        m.set("func", "client-FstatInfo");
        self.conn.send(&m);
    }

    /// Sends one message line.
    pub fn report(&mut self, r: Report) {
        if r.severity >= Severity::Failed {
            self.failed = true;
        }
        self.conn.send(&r.to_message());
    }

    /// Sends one line of information.
    pub fn info(&mut self, text: impl AsRef<str>) {
        self.report(Report::info(text));
    }

    /// Sends `m` (a `client-*` callback naming `confirm` as the function to call back) and
    /// waits for the client's call of `confirm`.
    pub async fn ask(&mut self, m: &Message, confirm: &str) -> Result<Message, CmdError> {
        self.conn.send(m);
        self.conn.flush().await?;
        let wait = self.server.options.reply_timeout;
        let reply = tokio::time::timeout(wait, self.conn.read_command())
            .await
            .map_err(|_| ConnError::NoReply {
                expected: confirm.to_string(),
                waited_ms: wait.as_millis() as u64,
            })??;
        match reply.func() {
            Some(f) if f == confirm => Ok(reply),
            f => Err(CmdError::Conn(ConnError::Unexpected {
                func: f.unwrap_or_default(),
                expected: confirm.to_string(),
            })),
        }
    }

    /// Asks the client to prove it holds a ticket of the caller's (`client-Crypto`); the
    /// ticket it proves, or `refusal` when it proves none.
    pub async fn prove_ticket(&mut self, refusal: AuthError) -> Result<ProvenTicket, CmdError> {
        let Some(answer) = self.challenge().await? else {
            return Err(refusal.into());
        };
        match self.ticket_answer(&answer).await? {
            Ok(t) => Ok(t),
            Err(AuthError::TicketInvalid { .. }) => Err(refusal.into()),
            Err(e) => Err(e.into()),
        }
    }

    /// Sends the challenge (`client-Crypto`) and collects the client's answer; `None` when it
    /// answers nothing (it holds neither ticket nor password).
    async fn challenge(&mut self) -> Result<Option<Answer>, CmdError> {
        const CONFIRM: &str = "dm-ProveTicket";
        let token = tickets::new_token().map_err(|e| {
            Report::failed(
                Generic::Fault,
                number::INTERNAL,
                format!("no random challenge: {e}"),
            )
        })?;
        let mut challenge = Message::new()
            .with("token", &token)
            .with("confirm", CONFIRM);
        if let Some(key) = self.server.options.ticket_server_address() {
            challenge = challenge.with("serverAddress", &key);
        }
        let challenge = challenge.with("func", "client-Crypto");
        let reply = self.ask(&challenge, CONFIRM).await?;
        let answers: Vec<String> = ["token", "token2"]
            .iter()
            .filter_map(|n| reply.text(n))
            .filter(|a| !a.is_empty())
            .collect();
        if answers.is_empty() {
            return Ok(None);
        }
        // The address the client digested: this end of the socket as the client sees it, or
        // (on stdio, where there is none) the one the client names.
        let mut addresses: Vec<Option<String>> = Vec::new();
        if let Some(local) = self.peer.local {
            addresses.push(Some(local.to_string()));
        }
        if let Some(named) = reply.text("daddr").filter(|d| !d.is_empty())
            && !addresses.contains(&Some(named.clone()))
        {
            addresses.push(Some(named));
        }
        addresses.push(None);
        Ok(Some(Answer {
            token,
            answers,
            addresses,
        }))
    }

    /// The caller's ticket `answer` proves, remembered as this command's proven ticket.
    async fn ticket_answer(
        &mut self,
        answer: &Answer,
    ) -> Result<Result<ProvenTicket, AuthError>, CmdError> {
        let key = self.server.key.clone();
        let creds = self.credentials();
        let answer = answer.clone();
        let proven = self
            .call(move |svc, caller| {
                svc.prove_ticket(caller, &creds, &mut |id| answer.matches(&key.ticket(id)))
            })
            .await?;
        if let Ok(t) = &proven {
            self.proven = Some(t.clone());
        }
        Ok(proven)
    }

    /// Lets the caller in on `answer` made from the password itself (the server setting
    /// `p4_password_digests`).
    async fn password_answer(&mut self, answer: Answer) -> Result<Result<(), AuthError>, CmdError> {
        let server = self.server.options.address.clone();
        self.call(move |svc, caller| {
            svc.prove_p4_password(caller, &server, &mut |digest| answer.matches(digest))
        })
        .await
    }

    /// The credentials this connection presents to the service (no ticket bytes: P4 clients
    /// prove tickets instead).
    pub fn credentials(&self) -> Credentials {
        Credentials {
            ticket: None,
            server: self.server.options.address.clone(),
        }
    }

    /// Lets the caller in as the service's `authenticate` does, proving a ticket when one is
    /// needed.
    pub async fn authenticate(&mut self) -> CmdResult {
        let creds = self.credentials();
        let checked = self
            .call(move |svc, caller| svc.authenticate(caller, &creds))
            .await?;
        match checked {
            Ok(()) => Ok(()),
            Err(
                e @ (AuthError::LoginRequired { .. }
                | AuthError::TicketInvalid { .. }
                | AuthError::TicketExpired { .. }),
            ) => {
                let Some(answer) = self.challenge().await? else {
                    return Err(e.into());
                };
                match self.ticket_answer(&answer).await? {
                    Ok(_) => Ok(()),
                    // No ticket of the user's: the client may hold the password itself.
                    Err(AuthError::TicketInvalid { .. }) => {
                        self.password_answer(answer).await?.map_err(CmdError::from)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// A client's answer to the challenge: what it digested the token with is unknown (a ticket,
/// or its password's MD5), and so is which address it digested.
#[derive(Clone)]
struct Answer {
    token: String,
    /// `token` and `token2` (a client holding both a ticket and a password sends both).
    answers: Vec<String>,
    addresses: Vec<Option<String>>,
}

impl Answer {
    /// Whether the client answered from `secret` (a P4 ticket or a password's MD5).
    fn matches(&self, secret: &str) -> bool {
        self.addresses.iter().any(|daddr| {
            let expected = tickets::expected_answer(&self.token, secret, daddr.as_deref());
            self.answers
                .iter()
                .any(|a| tickets::same_answer(a, &expected))
        })
    }
}
