//! Identifiers: change numbers, content digests and validated names (workspaces, users, depots).
//!
//! Names (workspaces, users, depots, labels, branch specs) follow Perforce's rules: 1 to 255
//! bytes, no whitespace or control characters, none of `/`, `@`, `#`, `%`, `*`, no `...`, not
//! starting with `-`, and not all digits (so `@name` can never be read as a change number).

use std::fmt;

/// Errors produced when parsing identifiers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// A workspace, user, depot or label name broke a naming rule.
    #[error("invalid name {name:?}: {reason}")]
    InvalidName { name: String, reason: &'static str },
    /// A digest was not exactly 64 hexadecimal characters.
    #[error("invalid digest {text:?}: expected 64 hex characters")]
    InvalidDigest { text: String },
}

/// A submitted or pending change number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChangeNumber(pub u64);

impl fmt::Display for ChangeNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Which pending changelist a file is opened in, or a command acts on: the workspace's default
/// changelist or a numbered change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ChangeRef {
    #[default]
    Default,
    Numbered(ChangeNumber),
}

impl ChangeRef {
    /// Reads the stored and wire encoding, where change number 0 stands for the default
    /// changelist.
    pub fn from_number(number: u64) -> ChangeRef {
        match number {
            0 => ChangeRef::Default,
            n => ChangeRef::Numbered(ChangeNumber(n)),
        }
    }

    /// The stored and wire encoding: the change number, 0 for the default changelist.
    pub fn number(self) -> u64 {
        match self {
            ChangeRef::Default => 0,
            ChangeRef::Numbered(n) => n.0,
        }
    }

    /// The numbered change, if this is one.
    pub fn numbered(self) -> Option<ChangeNumber> {
        match self {
            ChangeRef::Default => None,
            ChangeRef::Numbered(n) => Some(n),
        }
    }
}

impl fmt::Display for ChangeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeRef::Default => f.write_str("default"),
            ChangeRef::Numbered(n) => write!(f, "{n}"),
        }
    }
}

/// Whether a change is still pending or submitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeStatus {
    Pending,
    Submitted,
}

impl ChangeStatus {
    /// Perforce's name: `pending` or `submitted`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeStatus::Pending => "pending",
            ChangeStatus::Submitted => "submitted",
        }
    }

    pub fn parse(s: &str) -> Option<ChangeStatus> {
        match s {
            "pending" => Some(ChangeStatus::Pending),
            "submitted" => Some(ChangeStatus::Submitted),
            _ => None,
        }
    }
}

impl fmt::Display for ChangeStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A 32-byte content digest (e.g. BLAKE3 of a file revision).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// Lower-case hexadecimal form (64 characters).
    pub fn to_hex(&self) -> String {
        // `encode_to_slice` writes bytes; `hex::encode` goes through a char iterator, which a
        // listing of many files pays per record.
        let mut out = [0u8; 64];
        hex::encode_to_slice(self.0, &mut out).expect("64 bytes hold 32 bytes in hex");
        std::str::from_utf8(&out)
            .expect("hex digits are ASCII")
            .to_owned()
    }

    /// Parses exactly 64 hexadecimal characters (either case).
    pub fn from_hex(text: &str) -> Result<Digest, IdError> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).map_err(|_| IdError::InvalidDigest {
            text: text.to_string(),
        })?;
        Ok(Digest(bytes))
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

/// Checks the shared naming rules; returns the reason on failure.
pub(crate) fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("must not be empty");
    }
    if name.len() > 255 {
        return Err("longer than 255 bytes");
    }
    if name.chars().any(char::is_control) {
        return Err("control characters not allowed");
    }
    if name.chars().any(char::is_whitespace) {
        return Err("whitespace not allowed");
    }
    if name
        .chars()
        .any(|c| matches!(c, '/' | '@' | '#' | '%' | '*'))
    {
        return Err("characters '/', '@', '#', '%', '*' not allowed");
    }
    if name.contains("...") {
        return Err("'...' not allowed");
    }
    if name.starts_with('-') {
        return Err("must not start with '-'");
    }
    if name.bytes().all(|b| b.is_ascii_digit()) {
        return Err("must not be all digits");
    }
    Ok(())
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            /// Validates `text` against the naming rules.
            pub fn parse(text: &str) -> Result<Self, IdError> {
                check_name(text).map_err(|reason| IdError::InvalidName {
                    name: text.to_string(),
                    reason,
                })?;
                Ok($name(text.to_string()))
            }

            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

name_type!(
    /// A workspace (client) name.
    WorkspaceName
);
name_type!(
    /// A user name.
    UserName
);
name_type!(
    /// A depot name (the first segment of a depot path).
    DepotName
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_refs_encode_the_default_changelist_as_zero() {
        let cases = [
            (0, ChangeRef::Default, "default"),
            (7, ChangeRef::Numbered(ChangeNumber(7)), "7"),
        ];
        for (number, change, text) in cases {
            assert_eq!(ChangeRef::from_number(number), change);
            assert_eq!(change.number(), number);
            assert_eq!(change.to_string(), text);
        }
        assert_eq!(ChangeRef::Default.numbered(), None);
    }

    #[test]
    fn name_rules() {
        let cases: &[(&str, bool)] = &[
            ("ws", true),
            ("my-ws_1.x", true),
            ("a1", true),
            ("1a", true),
            ("caf\u{e9}", true),
            ("", false),
            ("has space", false),
            ("tab\tx", false),
            ("nul\0x", false),
            ("del\x7fx", false),
            ("a/b", false),
            ("a@b", false),
            ("a#b", false),
            ("a%b", false),
            ("a*b", false),
            ("-ws", false),
            ("123", false),
            ("0", false),
            ("a...b", false),
            ("a..b", true),
        ];
        for (text, ok) in cases {
            assert_eq!(
                WorkspaceName::parse(text).is_ok(),
                *ok,
                "workspace {text:?}"
            );
            assert_eq!(UserName::parse(text).is_ok(), *ok, "user {text:?}");
            assert_eq!(DepotName::parse(text).is_ok(), *ok, "depot {text:?}");
        }
    }

    #[test]
    fn name_length_limit() {
        let ok = "a".repeat(255);
        let long = "a".repeat(256);
        assert_eq!(WorkspaceName::parse(&ok).map(|n| n.as_str().len()), Ok(255));
        assert!(WorkspaceName::parse(&long).is_err());
    }

    #[test]
    fn name_display_and_error_message() {
        let n = UserName::parse("alice").expect("valid");
        assert_eq!(n.to_string(), "alice");
        assert_eq!(n.as_str(), "alice");
        let err = DepotName::parse("a b").expect_err("invalid");
        assert_eq!(
            err.to_string(),
            "invalid name \"a b\": whitespace not allowed"
        );
    }

    #[test]
    fn change_number_display_and_order() {
        assert_eq!(ChangeNumber(42).to_string(), "42");
        assert!(ChangeNumber(3) < ChangeNumber(10));
    }

    #[test]
    fn digest_hex_round_trip() {
        let d = Digest([0xab; 32]);
        let hex = d.to_hex();
        assert_eq!(hex, "ab".repeat(32));
        assert_eq!(d.to_string(), hex);
        assert_eq!(Digest::from_hex(&hex), Ok(d));
        assert_eq!(Digest::from_hex(&hex.to_uppercase()), Ok(d));
    }

    #[test]
    fn digest_invalid_hex() {
        for bad in [
            "",
            "ab",
            &"ab".repeat(33),
            &"zz".repeat(32),
            &"a".repeat(63),
        ] {
            let err = Digest::from_hex(bad).expect_err(bad);
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }
}
