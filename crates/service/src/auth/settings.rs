//! Server settings (`keel configure`): stored in the metadata, so they survive restarts and
//! reach replicas through the journal; unknown names and bad values are refused.

use crate::{AuthError, Caller, Service, ServiceError};
use keel_core::SecurityLevel;
use keel_core::TicketBinding;
use keel_core::auth::{SECURITY, SETTINGS, TICKETS_BIND, check_setting};
use keel_store::ReadTxn;

/// One setting as `configure show` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingValue {
    pub name: String,
    pub value: String,
    /// Not set: `value` is the default.
    pub is_default: bool,
    pub description: String,
}

/// The security level a snapshot holds (0 when unset; a value no longer valid counts as the
/// highest level, so damage never opens the server).
pub(crate) fn security_level(snap: &dyn ReadTxn) -> Result<SecurityLevel, ServiceError> {
    Ok(match snap.get_setting(SECURITY)? {
        None => SecurityLevel::default(),
        Some(text) => SecurityLevel::parse(&text).unwrap_or(SecurityLevel::MAX),
    })
}

/// Whether `login` binds tickets to the client's address (`auth.tickets.bind`; a value no
/// longer valid binds them, so damage never widens a ticket).
pub(crate) fn ticket_binding(snap: &dyn ReadTxn) -> Result<TicketBinding, ServiceError> {
    Ok(match snap.get_setting(TICKETS_BIND)? {
        None => TicketBinding::default(),
        Some(text) => TicketBinding::parse(&text).unwrap_or(TicketBinding::On),
    })
}

impl Service {
    /// The server's current security level.
    pub fn security_level(&self) -> Result<SecurityLevel, ServiceError> {
        let snap = self.meta.snapshot()?;
        security_level(snap.as_ref())
    }

    fn require_super(&self, caller: &Caller, what: &'static str) -> Result<(), AuthError> {
        if self.is_super(caller)? {
            Ok(())
        } else {
            Err(AuthError::NotSuper {
                user: caller.user.clone(),
                what,
            })
        }
    }

    /// `configure set NAME=VALUE` (super users only); returns the value stored.
    pub fn configure_set(
        &self,
        caller: &Caller,
        name: &str,
        value: &str,
    ) -> Result<String, AuthError> {
        self.touch_user(caller)?;
        self.require_super(caller, "change server settings")?;
        let value = check_setting(name, value)?;
        self.put_setting(name, &value)?;
        Ok(value)
    }

    /// Stores a setting without a caller: `keel serve --security N` at start.
    pub fn put_setting(&self, name: &str, value: &str) -> Result<(), AuthError> {
        let value = check_setting(name, value)?;
        let name = name.to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            txn.put_setting(&name, &value).map_err(AuthError::from)
        })
    }

    /// `configure unset NAME` (super users only); returns whether it was set.
    pub fn configure_unset(&self, caller: &Caller, name: &str) -> Result<bool, AuthError> {
        self.touch_user(caller)?;
        self.require_super(caller, "change server settings")?;
        let default = SETTINGS
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.default)
            .unwrap_or("");
        check_setting(name, default)?;
        let name = name.to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            txn.delete_setting(&name).map_err(AuthError::from)
        })
    }

    /// `configure show`: every known setting with its value, set or default.
    pub fn configure_show(&self, caller: &Caller) -> Result<Vec<SettingValue>, AuthError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let stored = snap.list_settings()?;
        Ok(SETTINGS
            .iter()
            .map(|s| {
                let set = stored.iter().find(|(n, _)| n == s.name);
                SettingValue {
                    name: s.name.to_string(),
                    value: set.map_or(s.default, |(_, v)| v.as_str()).to_string(),
                    is_default: set.is_none(),
                    description: s.description.to_string(),
                }
            })
            .collect())
    }
}
