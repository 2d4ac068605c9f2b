//! Refusals of integrate/merge/copy and of recording a resolve.

use keel_core::FileAction;

use super::{ServiceError, embeds_service_error};

/// Why an integration could not be opened or a resolve recorded; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum IntegrateError {
    /// The request names neither a FROM/TO pair nor a branch spec.
    #[error("integrate needs FROM and TO files, or a branch spec")]
    NoMapping,
    /// The named branch spec does not exist.
    #[error("branch '{name}' does not exist")]
    NoSuchBranch { name: String },
    /// A branch spec's stored view can no longer be used (`reason` is the parser's message).
    #[error("{reason}")]
    BadBranchView { name: String, reason: String },
    /// The one-line view FROM TO cannot be made (`reason` says why: wildcards differ, ...).
    #[error("{from} {to} - {reason}")]
    BadMapping {
        from: String,
        to: String,
        reason: String,
    },
    /// A source the mapping sends onto no valid depot path (a wildcard matched an empty
    /// segment); `reason` is the path parser's message, naming the target.
    #[error("{reason}")]
    BadTarget {
        from: String,
        target: String,
        reason: String,
    },
    /// The target pattern carries a revision.
    #[error("{target} - the target can't carry a revision")]
    TargetRevision { target: String },
    /// A side of the mapping is not in depot syntax.
    #[error("{path} - the {side} must be in depot syntax (//depot/...)")]
    NotDepotSyntax { path: String, side: &'static str },
    /// No source file matched (`from` is the FROM pattern or `branch NAME`).
    #[error("{from} - no such file(s)")]
    NoSuchFiles { from: String },
    /// Every matched source revision is already integrated into its target.
    #[error("{from} - all revision(s) already integrated ({files} file(s))")]
    AlreadyIntegrated { from: String, files: usize },
    /// A target lies outside the workspace view.
    #[error("{path} - not in client view of workspace {workspace}")]
    NotInView { path: String, workspace: String },
    /// A target is already opened in this workspace (`action` when known at planning).
    #[error("{path} - can't integrate: already opened{}", opened_for(action))]
    AlreadyOpened {
        path: String,
        action: Option<FileAction>,
    },
    /// A live target the workspace does not have.
    #[error("{path} - file(s) not on client")]
    NotOnClient { path: String },
    /// Nothing opened matches that still needs a resolve (`patterns` empty for all).
    #[error("{}no file(s) to resolve", with_dash(patterns))]
    NothingToResolve { patterns: String },
    /// A resolve argument names more than one file.
    #[error("{pattern} - names more than one file")]
    Ambiguous { pattern: String },
    /// The source revision a pending resolve names was obliterated.
    #[error("{path}#{rev} - source revision is gone")]
    SourceGone { path: String, rev: u32 },
    /// `integrated`: a file argument with no integration records either way.
    #[error("{arg} - no integrations found")]
    NoIntegrations { arg: String },
    /// The file was resolved (or reverted) meanwhile.
    #[error("{path} - no longer needs a resolve")]
    NoLongerNeedsResolve { path: String },
    /// `populate`: a target already has a live revision (populate only creates files).
    #[error("{path} - can't populate: the target already exists (#{rev})")]
    PopulateTargetExists { path: String, rev: u32 },
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(IntegrateError);

fn opened_for(action: &Option<FileAction>) -> String {
    action.map(|a| format!(" for {a}")).unwrap_or_default()
}

fn with_dash(patterns: &str) -> String {
    if patterns.is_empty() {
        String::new()
    } else {
        format!("{patterns} - ")
    }
}
