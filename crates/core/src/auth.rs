//! Users and server security, as pure rules: the security levels (Perforce's `security`
//! configurable), user types, what a "strong" password is, and the server settings `keel
//! configure` knows.

use std::fmt;

/// The server's `security` level (0–4), with Perforce's meanings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct SecurityLevel(u8);

impl SecurityLevel {
    /// The highest level: tickets only, and no user is created on first use.
    pub const MAX: SecurityLevel = SecurityLevel(4);

    /// Parses a level from its setting text (`0` to `4`).
    pub fn parse(text: &str) -> Result<SecurityLevel, SettingError> {
        match text.trim().parse::<u8>() {
            Ok(n) if n <= Self::MAX.0 => Ok(SecurityLevel(n)),
            _ => Err(SettingError::BadValue {
                name: SECURITY.to_string(),
                value: text.to_string(),
                expected: "a number from 0 to 4",
            }),
        }
    }

    pub fn from_number(n: u8) -> Option<SecurityLevel> {
        (n <= Self::MAX.0).then_some(SecurityLevel(n))
    }

    pub fn number(self) -> u8 {
        self.0
    }

    /// Passwords set from this level on must be strong ([`password_is_strong`]).
    pub fn requires_strong_passwords(self) -> bool {
        self.0 >= 2
    }

    /// Whether every user, with a password or without, needs a ticket (levels 3 and 4).
    pub fn tickets_for_everyone(self) -> bool {
        self.0 >= 3
    }

    /// Whether a user the server has not seen is created by their first command (below 4).
    pub fn creates_users_on_first_use(self) -> bool {
        self.0 < 4
    }
}

impl fmt::Display for SecurityLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A user's type, as in Perforce's user spec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UserType {
    /// A person.
    #[default]
    Standard,
    /// A server-to-server account: replicas and proxies log in as one.
    Service,
    /// An account for administration tasks.
    Operator,
}

impl UserType {
    pub fn parse(text: &str) -> Result<UserType, SettingError> {
        match text.trim() {
            "" | "standard" => Ok(UserType::Standard),
            "service" => Ok(UserType::Service),
            "operator" => Ok(UserType::Operator),
            other => Err(SettingError::BadValue {
                name: "Type".to_string(),
                value: other.to_string(),
                expected: "standard, service or operator",
            }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            UserType::Standard => "standard",
            UserType::Service => "service",
            UserType::Operator => "operator",
        }
    }
}

/// Perforce's strong password: at least 8 characters, with characters of at least two of the
/// classes upper-case letter, lower-case letter and non-letter.
pub fn password_is_strong(password: &str) -> bool {
    let upper = password.chars().any(char::is_uppercase);
    let lower = password.chars().any(char::is_lowercase);
    let other = password.chars().any(|c| !c.is_alphabetic());
    password.chars().count() >= 8 && [upper, lower, other].iter().filter(|&&b| b).count() >= 2
}

/// The name of the security-level setting.
pub const SECURITY: &str = "security";

/// A server setting `keel configure` can set: its name, what it means and its default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettingInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub description: &'static str,
}

/// The name of the setting that binds login tickets to the client's address.
pub const TICKETS_BIND: &str = "auth.tickets.bind";

/// Whether `login` binds a new ticket to the client's address (`auth.tickets.bind`), as
/// Perforce does; `login -a` always asks for a ticket valid from every address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TicketBinding {
    /// Bound from security level 3 on.
    #[default]
    Auto,
    /// Always bound.
    On,
    /// Never bound.
    Off,
}

impl TicketBinding {
    /// Parses the setting's text (`auto`, `on` or `off`).
    pub fn parse(text: &str) -> Result<TicketBinding, SettingError> {
        match text.trim() {
            "auto" => Ok(TicketBinding::Auto),
            "on" => Ok(TicketBinding::On),
            "off" => Ok(TicketBinding::Off),
            _ => Err(SettingError::BadValue {
                name: TICKETS_BIND.to_string(),
                value: text.to_string(),
                expected: "auto, on or off",
            }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TicketBinding::Auto => "auto",
            TicketBinding::On => "on",
            TicketBinding::Off => "off",
        }
    }

    /// Whether a ticket issued at `level` is bound to its client's address.
    pub fn binds(self, level: SecurityLevel) -> bool {
        match self {
            TicketBinding::Auto => level.tickets_for_everyone(),
            TicketBinding::On => true,
            TicketBinding::Off => false,
        }
    }
}

/// Every setting the server knows (names are case-sensitive, as in Perforce).
pub const SETTINGS: &[SettingInfo] = &[
    SettingInfo {
        name: SECURITY,
        default: "0",
        description: "security level 0-4: 0 passwords optional; 1 a user with a password must \
                      use it; 2 strong passwords, login for users with a password; 3 tickets \
                      for everyone; 4 also no automatic user creation",
    },
    SettingInfo {
        name: TICKETS_BIND,
        default: "auto",
        description: "whether a login ticket is valid only from the client address it was \
                      issued to: auto (from security level 3 on), on or off; login -a always \
                      asks for a ticket valid from every address",
    },
    SettingInfo {
        name: crate::counter::KEYS_HIDE,
        default: "0",
        description: "who may see and set keys (`keel key`): 0 list access reads and review \
                      access sets them; 1 reading needs admin; 2 reading and setting need admin",
    },
];

/// Checks `value` for setting `name`, returning it normalised.
pub fn check_setting(name: &str, value: &str) -> Result<String, SettingError> {
    match name {
        SECURITY => SecurityLevel::parse(value).map(|l| l.to_string()),
        TICKETS_BIND => TicketBinding::parse(value).map(|b| b.as_str().to_string()),
        crate::counter::KEYS_HIDE => crate::counter::KeysHide::parse(value).map(|h| h.to_string()),
        _ => Err(SettingError::Unknown {
            name: name.to_string(),
        }),
    }
}

/// A setting name or value the server does not accept.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    #[error("unknown setting '{name}' (known: {})", known_settings())]
    Unknown { name: String },
    #[error("{name}={value:?}: expected {expected}")]
    BadValue {
        name: String,
        value: String,
        expected: &'static str,
    },
}

fn known_settings() -> String {
    SETTINGS
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strong_passwords_follow_perforce() {
        for (password, strong) in [
            ("", false),
            ("short1A", false),      // 7 characters
            ("alllowercase", false), // one class
            ("ALLUPPERCASE", false), // one class
            ("12345678", false),     // one class
            ("lowerUPPER", true),    // two classes
            ("lower123", true),      // lower + non-letter
            ("UPPER-_-", true),      // upper + non-letter
            ("Mixed-case-1", true),  // three classes
            ("ünïcödeÜber", true),   // letters beyond ASCII count by case
        ] {
            assert_eq!(password_is_strong(password), strong, "{password:?}");
        }
    }

    #[test]
    fn security_levels_parse_and_mean_what_perforce_says() {
        assert_eq!(SecurityLevel::parse("3"), Ok(SecurityLevel(3)));
        assert!(SecurityLevel::parse("5").is_err());
        assert!(SecurityLevel::parse("-1").is_err());
        assert!(SecurityLevel::parse("high").is_err());
        let table = [
            // level, strong passwords, tickets for all, creates users
            (0, false, false, true),
            (1, false, false, true),
            (2, true, false, true),
            (3, true, true, true),
            (4, true, true, false),
        ];
        for (n, strong, everyone, creates) in table {
            let l = SecurityLevel::from_number(n).expect("level in range");
            assert_eq!(l.requires_strong_passwords(), strong, "level {n}");
            assert_eq!(l.tickets_for_everyone(), everyone, "level {n}");
            assert_eq!(l.creates_users_on_first_use(), creates, "level {n}");
        }
    }

    #[test]
    fn settings_are_checked_by_name() {
        assert_eq!(check_setting("security", " 2 "), Ok("2".to_string()));
        assert!(matches!(
            check_setting("security", "9"),
            Err(SettingError::BadValue { .. })
        ));
        let unknown = check_setting("colour", "blue").expect_err("unknown");
        assert_eq!(
            unknown.to_string(),
            "unknown setting 'colour' (known: security, auth.tickets.bind, keys.hide)"
        );
        assert_eq!(check_setting("keys.hide", " 2"), Ok("2".to_string()));
        assert!(check_setting("keys.hide", "3").is_err());
        assert_eq!(check_setting(TICKETS_BIND, " on"), Ok("on".to_string()));
        assert!(check_setting(TICKETS_BIND, "yes").is_err());
        let three = SecurityLevel::from_number(3).expect("level");
        let two = SecurityLevel::from_number(2).expect("level");
        assert!(TicketBinding::Auto.binds(three) && !TicketBinding::Auto.binds(two));
        assert!(TicketBinding::On.binds(two) && !TicketBinding::Off.binds(three));
        assert_eq!(UserType::parse("service"), Ok(UserType::Service));
        assert!(UserType::parse("robot").is_err());
    }
}
