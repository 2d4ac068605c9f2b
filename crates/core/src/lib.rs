//! Keel domain values and pure logic: identifiers, paths, wildcard patterns, file specs,
//! view mappings, file types, actions, workspace options, diffs, spec forms and the triggers table. No IO.

#![forbid(unsafe_code)]

pub mod action;
pub mod annotate;
pub mod auth;
pub mod calendar;
pub mod counter;
pub mod diff;
pub mod error_text;
pub mod filetype;
pub mod form;
pub mod group;
pub mod ids;
pub mod integ;
pub mod job;
pub mod keyword;
mod line_compare;
pub mod merge;
pub mod options;
pub mod path;
pub mod pattern;
pub mod protect;
pub mod record_filter;
pub mod reserved;
pub mod resolve;
pub mod spec;
pub mod trigger;
pub mod typemap;
pub mod utf16;
pub mod view;
pub mod webhook;

pub use action::FileAction;
pub use annotate::{AnnotatedLine, Annotation, LineId, LineTable};
pub use auth::{SecurityLevel, SettingError, TicketBinding, UserType, password_is_strong};
pub use calendar::civil_from_days;
pub use counter::{CounterError, CounterSpace};
pub use diff::unified_diff;
pub use error_text::error_chain;
pub use filetype::{
    BaseType, FileType, FileTypeError, Keywords, LocalKind, TypeChange, detect_base_type,
};
pub use form::{Form, FormError};
pub use group::{GroupLimits, GroupMembers, Limit, groups_of};
pub use ids::{
    ChangeNumber, ChangeRef, ChangeStatus, DepotName, Digest, IdError, UserName, WorkspaceName,
};
pub use integ::{IntegEdge, IntegHow, ancestors, pending_range, select_base, taken_whole_from};
pub use keyword::KeywordValues;
pub use line_compare::LineCompare;
pub use merge::{MergeOutcome, merge3};
pub use options::{OptionsError, SpecLock, WorkspaceOptions};
pub use path::{ClientPath, DepotPath, PathError};
pub use pattern::{PathPattern, PatternError};
pub use protect::{Level, Mode, ProtectLine, Right, UserProtections};
pub use reserved::{RESERVED_FILE_NAMES, reserved_name};
pub use resolve::{Resolution, ResolveMode, Skip, decide, decide_binary};
pub use spec::{FileSpec, RevSpec, SpecError};
pub use trigger::{FormType, TriggerError, TriggerKind, TriggerLine, TriggerVars};
pub use typemap::{TypemapError, TypemapLine, parse_typemap, typemap_lookup};
pub use view::{LineKind, View, ViewError, ViewLine};
pub use webhook::{WebhookError, WebhookLine, WebhookUrl, check_url, parse_webhooks};
