//! Users, passwords, login tickets and server settings, and the check every call passes
//! ([`Service::authenticate`](crate::Service::authenticate)): Perforce's security levels over
//! the metadata store.

mod access;
mod admitted;
mod authenticate;
mod forwarders;
mod hashing;
mod limits;
mod p4_digests;
mod passwords;
mod proven;
mod run_tickets;
mod settings;
mod tickets;
mod users;

pub(crate) use admitted::Admitted;
pub use authenticate::Credentials;
pub(crate) use hashing::HashGate;
pub use hashing::PasswordCheckStats;
pub(crate) use limits::LoginLimiter;
pub(crate) use p4_digests::DigestKey;
pub use p4_digests::{KEY_FILE as P4_DIGEST_KEY_FILE, p4_password_md5};
pub use passwords::PasswordInput;
pub use proven::ProvenTicket;
pub(crate) use run_tickets::RunTickets;
pub use settings::SettingValue;
pub(crate) use settings::security_level;
pub use tickets::TicketInfo;
pub use users::UserSpec;
