//! Refusals of label specs, `tag` and `labelsync`.

use keel_core::ChangeNumber;

use super::{ServiceError, embeds_service_error};

/// Why a label could not be saved, deleted, tagged or synced; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    /// The named label does not exist.
    #[error("label '{name}' does not exist")]
    NoSuch { name: String },
    /// Creating a label whose name is taken.
    #[error("label '{name}' already exists")]
    Exists { name: String },
    /// A field of the spec is wrong (`reason` names the field and the value: Options,
    /// Revision or a View line).
    #[error("label {name}: {reason}")]
    Invalid { name: String, reason: String },
    /// A View line names a depot that does not exist.
    #[error("label {name}: view line '{line}': depot '{depot}' does not exist")]
    NoSuchDepot {
        name: String,
        line: String,
        depot: String,
    },
    /// The label is locked, so its files and spec cannot change and it cannot be deleted.
    #[error("label '{name}' is locked; its owner {owner} must set Options: unlocked first")]
    Locked { name: String, owner: String },
    /// A label's spec saved, or the label deleted, by someone other than its owner.
    #[error(
        "label '{name}' belongs to {owner}; only its owner (or a super user with -f) can \
         change or delete it"
    )]
    NotOwner { name: String, owner: String },
    /// `-f` given by a user without super access.
    #[error("label '{name}': -f needs super access")]
    ForceNeedsSuper { name: String },
    /// A locked label's spec saved by its owner without unlocking it.
    #[error("label '{name}' is locked; set Options: unlocked to change it")]
    StaysLocked { name: String },
    /// `tag`/`labelsync` of an automatic label, whose files follow its Revision.
    #[error(
        "label '{name}' is an automatic label (Revision @{revision}); its files cannot be tagged"
    )]
    Automatic {
        name: String,
        revision: ChangeNumber,
    },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(LabelError);
