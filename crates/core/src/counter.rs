//! Counters and keys: named values the server keeps for scripts (`counter`, `key`), the rules
//! for their names and values, the counters the server owns, and the arithmetic of `-i`.

use std::fmt;

/// Which namespace a name lives in: counters and keys never see each other's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterSpace {
    Counter,
    Key,
}

impl CounterSpace {
    /// The word messages use ("counter", "key").
    pub fn noun(self) -> &'static str {
        match self {
            CounterSpace::Counter => "counter",
            CounterSpace::Key => "key",
        }
    }
}

impl fmt::Display for CounterSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.noun())
    }
}

/// The counter that reads the newest change number; the server owns it and it cannot be set.
pub const CHANGE_COUNTER: &str = "change";

/// Counter names the server reserves: setting or deleting one needs `-f` (and super access).
/// `change` is among them but even `-f` cannot set it: it is the change numbering itself.
pub const PROTECTED_COUNTERS: &[&str] = &[
    CHANGE_COUNTER,
    "job",
    "journal",
    "lastCheckpointAction",
    "maxCommitChange",
    "monitor",
    "security",
    "unicode",
    "upgrade",
];

/// Longest name a counter or key may have, in bytes.
pub const MAX_NAME_LEN: usize = 1024;

/// Longest value a counter or key may hold, in bytes.
pub const MAX_VALUE_LEN: usize = 65_536;

/// The server setting that hides keys from users below admin (`keys.hide`).
pub const KEYS_HIDE: &str = "keys.hide";

/// Who may see and set keys: `0` list reads and review sets; `1` reading needs admin too;
/// `2` reading and setting need admin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeysHide {
    #[default]
    Open,
    HideReads,
    HideAll,
}

impl KeysHide {
    pub fn parse(text: &str) -> Result<KeysHide, crate::SettingError> {
        match text.trim() {
            "0" => Ok(KeysHide::Open),
            "1" => Ok(KeysHide::HideReads),
            "2" => Ok(KeysHide::HideAll),
            _ => Err(crate::SettingError::BadValue {
                name: KEYS_HIDE.to_string(),
                value: text.to_string(),
                expected: "0, 1 or 2",
            }),
        }
    }
}

impl fmt::Display for KeysHide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = match self {
            KeysHide::Open => 0,
            KeysHide::HideReads => 1,
            KeysHide::HideAll => 2,
        };
        write!(f, "{n}")
    }
}

/// Why a name or a value was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CounterError {
    #[error("{space} name is empty")]
    EmptyName { space: CounterSpace },
    #[error("{space} name '{name}' is longer than {MAX_NAME_LEN} bytes")]
    NameTooLong { space: CounterSpace, name: String },
    #[error("{space} name '{name}' contains {what}")]
    BadName {
        space: CounterSpace,
        name: String,
        what: &'static str,
    },
    #[error("{space} name '{name}' is a number; names must contain a non-digit")]
    NumericName { space: CounterSpace, name: String },
    #[error("{space} '{name}': value is longer than {MAX_VALUE_LEN} bytes")]
    ValueTooLong { space: CounterSpace, name: String },
    #[error("{space} '{name}': value contains a control character")]
    BadValue { space: CounterSpace, name: String },
    #[error("{space} '{name}' holds '{value}', which is not a number: it cannot be incremented")]
    NotNumeric {
        space: CounterSpace,
        name: String,
        value: String,
    },
    #[error("{space} '{name}' is at {value}: incrementing it would overflow")]
    Overflow {
        space: CounterSpace,
        name: String,
        value: i64,
    },
}

/// Checks a counter or key name: not empty, at most [`MAX_NAME_LEN`] bytes, no whitespace,
/// control characters or wildcards (`*`, `...`), not starting with `-`, not all digits.
pub fn check_name(space: CounterSpace, name: &str) -> Result<(), CounterError> {
    let bad = |what| {
        Err(CounterError::BadName {
            space,
            name: name.to_string(),
            what,
        })
    };
    if name.is_empty() {
        return Err(CounterError::EmptyName { space });
    }
    if name.len() > MAX_NAME_LEN {
        return Err(CounterError::NameTooLong {
            space,
            name: name.chars().take(40).collect::<String>() + "...",
        });
    }
    if name.chars().any(char::is_whitespace) {
        return bad("whitespace");
    }
    if name.chars().any(char::is_control) {
        return bad("a control character");
    }
    if name.contains('*') || name.contains("...") {
        return bad("a wildcard ('*' or '...')");
    }
    if name.starts_with('-') {
        return bad("a leading '-'");
    }
    if name.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CounterError::NumericName {
            space,
            name: name.to_string(),
        });
    }
    Ok(())
}

/// Checks a value to store: at most [`MAX_VALUE_LEN`] bytes, no control characters other than
/// tab and newline.
pub fn check_value(space: CounterSpace, name: &str, value: &str) -> Result<(), CounterError> {
    if value.len() > MAX_VALUE_LEN {
        return Err(CounterError::ValueTooLong {
            space,
            name: name.to_string(),
        });
    }
    if value
        .chars()
        .any(|c| c.is_control() && c != '\t' && c != '\n')
    {
        return Err(CounterError::BadValue {
            space,
            name: name.to_string(),
        });
    }
    Ok(())
}

/// Whether `name` is a counter the server reserves (see [`PROTECTED_COUNTERS`]).
pub fn is_protected(name: &str) -> bool {
    PROTECTED_COUNTERS.contains(&name)
}

/// The value after `-i`: the stored value (absent counts as 0) plus one.
pub fn increment(
    space: CounterSpace,
    name: &str,
    value: Option<&str>,
) -> Result<i64, CounterError> {
    let text = value.map(str::trim).unwrap_or("");
    let current = if text.is_empty() {
        0
    } else {
        text.parse::<i64>().map_err(|_| CounterError::NotNumeric {
            space,
            name: name.to_string(),
            value: text.chars().take(64).collect(),
        })?
    };
    current.checked_add(1).ok_or(CounterError::Overflow {
        space,
        name: name.to_string(),
        value: current,
    })
}

/// Whether `name` matches a `counters -e`/`keys -e` filter: `*` matches any run of
/// characters, everything else itself (case-sensitive).
pub fn name_matches(filter: &str, name: &str) -> bool {
    crate::protect::name_matches(filter, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: CounterSpace = CounterSpace::Counter;

    #[test]
    fn names() {
        for good in ["review", "build.last", "ci-42", "a1", "x_y"] {
            assert_eq!(check_name(C, good), Ok(()), "{good}");
        }
        for (bad, needle) in [
            ("", "empty"),
            ("a b", "whitespace"),
            ("a*", "wildcard"),
            ("a...", "wildcard"),
            ("-d", "leading '-'"),
            ("123", "is a number"),
            ("a\u{1}", "control"),
        ] {
            let err = check_name(C, bad).expect_err(bad).to_string();
            assert!(err.contains(needle), "{bad}: {err}");
        }
        let long = "n".repeat(MAX_NAME_LEN + 1);
        assert!(matches!(
            check_name(CounterSpace::Key, &long),
            Err(CounterError::NameTooLong { .. })
        ));
    }

    #[test]
    fn values() {
        assert_eq!(check_value(C, "a", "hello world\n"), Ok(()));
        assert!(check_value(C, "a", "bad\u{0}").is_err());
        assert!(check_value(C, "a", &"v".repeat(MAX_VALUE_LEN + 1)).is_err());
    }

    #[test]
    fn increments() {
        assert_eq!(increment(C, "a", None), Ok(1));
        assert_eq!(increment(C, "a", Some("41")), Ok(42));
        assert_eq!(increment(C, "a", Some("-1")), Ok(0));
        assert!(matches!(
            increment(C, "a", Some("abc")),
            Err(CounterError::NotNumeric { .. })
        ));
        assert!(matches!(
            increment(C, "a", Some(&i64::MAX.to_string())),
            Err(CounterError::Overflow { .. })
        ));
    }

    #[test]
    fn filters() {
        assert!(name_matches("build*", "build.last"));
        assert!(name_matches("*", "x"));
        assert!(!name_matches("build*", "rebuild"));
        assert!(name_matches("review", "review"));
    }

    #[test]
    fn change_is_protected() {
        assert!(is_protected(CHANGE_COUNTER));
        assert!(!is_protected("review"));
    }
}
