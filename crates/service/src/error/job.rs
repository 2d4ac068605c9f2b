//! Refusals of the job spec, jobs, job searches and fixes.

use keel_core::ChangeNumber;
use keel_core::job::{ExprError, JobError, JobSpecError};

use super::{ServiceError, embeds_service_error};

/// Why a job command was refused; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    /// A job spec form that does not parse or check (names the line).
    #[error(transparent)]
    BadSpec(#[from] JobSpecError),
    /// A job whose values do not fit the job spec (names the field).
    #[error("job {name}: {source}")]
    BadJob {
        name: String,
        #[source]
        source: JobError,
    },
    /// A `jobs -e` expression that does not parse or names no field of the spec.
    #[error(transparent)]
    BadExpression(#[from] ExprError),
    /// The named job does not exist.
    #[error("job '{name}' does not exist")]
    NoSuch { name: String },
    /// Deleting a job that changes fix.
    #[error(
        "job '{name}' is fixed by change {change}{}: remove its fixes first",
        and_more(*more)
    )]
    HasFixes {
        name: String,
        change: ChangeNumber,
        more: usize,
    },
    /// The job spec changed by someone who is not a super user.
    #[error("only a super user can change the job spec ({user} is not one)")]
    SpecNeedsSuper { user: String },
    /// `-f` (keeping read-only fields) by someone who is not an administrator.
    #[error("job {name}: forcing read-only fields needs admin access ({user} lacks it)")]
    ForceNeedsAdmin { name: String, user: String },
    /// A fix status that is not a value of the job spec's status field.
    #[error("{status:?} is not a job status (one of {values})")]
    BadStatus { status: String, values: String },
    /// `fix -d` of a fix that does not exist.
    #[error("job '{job}' is not fixed by change {change}")]
    NoSuchFix { job: String, change: ChangeNumber },
    /// Every `jobNNNNNN` name tried for a new job is taken.
    #[error("no free job number: the next {tries} jobNNNNNN names are all taken")]
    NoFreeNumber { tries: usize },
    /// The stored job spec no longer parses (written by another version).
    #[error("the stored job spec is unusable: {0}")]
    StoredSpec(String),
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(JobsError);

/// ` and N more` when there are more (fixes of a job).
fn and_more(more: usize) -> String {
    match more {
        0 => String::new(),
        n => format!(" and {n} more"),
    }
}
