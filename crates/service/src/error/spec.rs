//! Refusals of creating, editing and deleting workspace and branch specs.

use std::fmt;

use super::{ServiceError, embeds_service_error};

/// Which kind of spec a refusal is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecKind {
    Workspace,
    Branch,
}

impl fmt::Display for SpecKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpecKind::Workspace => "workspace",
            SpecKind::Branch => "branch",
        })
    }
}

/// Why a spec could not be saved or deleted; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// A field of the spec is wrong (`reason` names the field and the value).
    #[error("{kind} {name}: {reason}")]
    Invalid {
        kind: SpecKind,
        name: String,
        reason: String,
    },
    /// Creating a spec whose name is taken.
    #[error("{kind} '{name}' already exists")]
    AlreadyExists { kind: SpecKind, name: String },
    /// A workspace may not take a depot's name (`//NAME/...` would be ambiguous).
    #[error("'{name}' is already the name of a depot")]
    NameIsDepot { name: String },
    /// The named spec does not exist.
    #[error("{kind} '{name}' does not exist")]
    NoSuch { kind: SpecKind, name: String },
    /// A locked spec changed by someone other than its owner.
    #[error("{kind} '{name}' is locked; only its owner {owner} can change it")]
    Locked {
        kind: SpecKind,
        name: String,
        owner: String,
    },
    /// A workspace spec of another user, edited or deleted without a super user's override.
    #[error(
        "{kind} '{name}' belongs to {owner}: only its owner may edit or delete it (a super user may override)"
    )]
    NotOwner {
        kind: SpecKind,
        name: String,
        owner: String,
    },
    /// A spec whose Owner would become another user than the caller, who is not a super user
    /// overriding.
    #[error(
        "{kind} '{name}': Owner '{owner}' is not you ({user}); only a super user may give a spec to another user"
    )]
    OwnerNotCaller {
        kind: SpecKind,
        name: String,
        owner: String,
        user: String,
    },
    /// A workspace with opened files (`path` is one of them) cannot be deleted.
    #[error("workspace '{name}' has files opened (e.g. {path})")]
    FilesOpened { name: String, path: String },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(SpecError);
