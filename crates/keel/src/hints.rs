//! What to do next after a refusal: the command-line hints the server leaves to the CLI
//! (`keel shelve -d -c N`, `keel resolve`), chosen by the refusal's machine-readable reason.

use keel_client::Refusal;

/// The text to append to a refusal's message, if any.
pub fn hint(refusal: &Refusal) -> Option<String> {
    Some(match refusal {
        Refusal::ShelvedFilesExist { change } => format!(": keel shelve -d -c {change}"),
        Refusal::MustResolve { .. } => " (keel resolve)".to_string(),
        Refusal::AddExisting { .. } => "; use edit".to_string(),
        Refusal::NotOnClient { .. } => "; sync first".to_string(),
        Refusal::TargetOpened { .. } => "; submit or revert it first".to_string(),
        Refusal::MoveNotOpened { .. } => "; edit it before moving".to_string(),
        Refusal::ChangedDuringSubmit { .. } => "; submit again".to_string(),
        Refusal::NoDescription => " (-d TEXT)".to_string(),
        Refusal::NeedsNumberedChange => " (-c N)".to_string(),
        Refusal::Raced { .. } | Refusal::ContentPurged { .. } => {
            "; run the command again".to_string()
        }
        Refusal::ChangeHasFiles { .. } => "; reopen or revert them first".to_string(),
        Refusal::WorkspaceHasFiles { .. } => "; revert or submit them first".to_string(),
        Refusal::BranchExists { name } => format!("; use `keel branch edit {name}`"),
        Refusal::LabelExists { name } => format!("; use `keel label edit {name}`"),
        Refusal::NoWorkspace => ": pass -w NAME or set KEEL_WORKSPACE".to_string(),
        Refusal::OpenedNeedsWorkspace => " (-w NAME), or -a for all".to_string(),
        Refusal::TriggerFailed { change } if *change != 0 => {
            format!(
                "\nSubmit failed; the change stays pending: fix the problems, then keel submit -c {change}"
            )
        }
        Refusal::LoginRequired { user } => format!(": run `keel -u {user} login`"),
        Refusal::Other(keel_proto::v1::ErrorReason::WorkspaceNotOwned)
        | Refusal::Other(keel_proto::v1::ErrorReason::ChangeOfOtherUser) => {
            " (super users: --override-owner, or -f to workspace edit/delete, change -D, shelve -d)"
                .to_string()
        }
        Refusal::ExclusivelyOpened { .. } | Refusal::TriggerFailed { .. } | Refusal::Other(_) => {
            return None;
        }
    })
}

/// What to do about a TLS server that was refused, or an address of the wrong protocol.
pub fn transport_hint(error: &keel_tls::ConnectError) -> String {
    use keel_tls::ConnectError as E;
    match error {
        E::Untrusted { .. } => {
            "; check it with the server's admin, then run `keel trust` to trust it".to_string()
        }
        E::Changed { .. } => "; if the server's certificate was replaced on purpose,                               `keel trust -f` trusts the new one"
            .to_string(),
        E::SpeaksTls { addr } => format!(": use ssl:{addr}"),
        E::SpeaksPlain { addr } => format!(": use {addr} (without ssl:)"),
    }
}

/// The client library's connection or server error that `cause` is or wraps (the typed
/// operations' errors wrap it).
pub fn client_error_of<'a>(
    cause: &'a (dyn std::error::Error + 'static),
) -> Option<&'a keel_client::Error> {
    use keel_client::ops::{CloneError, QueryError, TriggersError, WatchError};
    if let Some(e) = cause.downcast_ref::<keel_client::Error>() {
        return Some(e);
    }
    if let Some(e) = cause.downcast_ref::<QueryError>() {
        return e.client_error();
    }
    if let Some(e) = cause.downcast_ref::<WatchError>() {
        return e.client_error();
    }
    if let Some(e) = cause.downcast_ref::<TriggersError>() {
        return e.client_error();
    }
    if let Some(e) = cause.downcast_ref::<keel_client::ops::SyncError>() {
        return e.client_error();
    }
    if let Some(e) = cause.downcast_ref::<keel_client::ops::SubmitError>() {
        return e.client_error();
    }
    if let Some(e) = cause.downcast_ref::<keel_client::ops::ShelveError>() {
        return e.client_error();
    }
    cause.downcast_ref::<CloneError>()?.client_error()
}

/// An error's whole message (`{e:#}`) with the hint for the refusal inside it, if any.
pub fn with_hint(e: &anyhow::Error) -> String {
    let client_error = e.chain().find_map(client_error_of);
    let hint = match client_error {
        Some(keel_client::Error::Transport(why)) => Some(transport_hint(why)),
        Some(other) => other.refusal().and_then(hint),
        None => None,
    };
    format!("{}{}", chain_text(e), hint.unwrap_or_default())
}

/// The error and its causes joined by `: ` as `{e:#}` does, without a cause whose text its
/// outer message already ends with (an error that prints its source and also names it as its
/// `source()` would otherwise say the same thing twice).
pub fn chain_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.is_empty() {
            text = part;
        } else if !text.ends_with(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{chain_text, hint};

    /// A cause already printed by its outer error is not printed again.
    #[test]
    fn chain_text_says_each_cause_once() {
        #[derive(Debug)]
        struct Repeats {
            source: std::io::Error,
        }
        impl std::fmt::Display for Repeats {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "checkpoint x: {}", self.source)
            }
        }
        impl std::error::Error for Repeats {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.source)
            }
        }
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = anyhow::Error::new(Repeats { source: io() });
        assert_eq!(chain_text(&e), "checkpoint x: no such file");
        let e = anyhow::Error::new(io()).context("reading y");
        assert_eq!(chain_text(&e), "reading y: no such file");
    }
    use keel_client::Refusal;

    #[test]
    fn hints_name_the_command_that_helps() {
        let cases = [
            (
                Refusal::ShelvedFilesExist { change: 7 },
                Some(": keel shelve -d -c 7"),
            ),
            (
                Refusal::MustResolve {
                    path: "//depot/a".into(),
                },
                Some(" (keel resolve)"),
            ),
            (
                Refusal::LabelExists { name: "rel".into() },
                Some("; use `keel label edit rel`"),
            ),
            (
                Refusal::OpenedNeedsWorkspace,
                Some(" (-w NAME), or -a for all"),
            ),
            (
                Refusal::TriggerFailed { change: 3 },
                Some(
                    "\nSubmit failed; the change stays pending: fix the problems, then keel \
                     submit -c 3",
                ),
            ),
            (Refusal::TriggerFailed { change: 0 }, None),
            (
                Refusal::ExclusivelyOpened {
                    path: "//depot/a".into(),
                    user: "bob".into(),
                    workspace: "ws2".into(),
                },
                None,
            ),
        ];
        for (refusal, want) in cases {
            assert_eq!(hint(&refusal).as_deref(), want, "{refusal:?}");
        }
    }
}
