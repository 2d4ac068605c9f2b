//! Printing of the typed per-file records (`keel_client::ops::FileResult`) that the verbs
//! which open, move, reopen or revert files answer with: `//depot/x#2 - opened for edit`.

use keel_client::WorkspaceCtx;
use keel_client::ops::{FileResult, Outcome};
use keel_core::FileAction;

use super::records::rev_text;
use crate::listing::Listing;
use crate::output::{Out, Record};

/// An action's name (`move/add`), empty for none.
fn action_name(action: Option<FileAction>) -> &'static str {
    action.map_or("", |a| a.as_str())
}

/// The per-file line's message for what the command did; empty when it says nothing.
pub fn outcome_text(file: &FileResult) -> String {
    let action = action_name(file.action);
    match &file.outcome {
        Outcome::None => String::new(),
        Outcome::Opened => format!("opened for {action}"),
        Outcome::AlreadyOpened => format!("currently opened for {action}"),
        Outcome::MovedFrom => format!("moved from {}", file.move_file),
        Outcome::MovedTo => format!("moved to {}", file.move_file),
        Outcome::Reverted if file.action == Some(FileAction::Add) => {
            "was add, abandoned".to_string()
        }
        Outcome::Reverted => format!("was {action}, reverted"),
        Outcome::Reopened => format!("reopened; change {}, type {}", file.change, file.file_type),
        Outcome::Integrated => {
            let verb = match file.action {
                Some(FileAction::Branch) => "branch",
                Some(FileAction::Delete) => "delete",
                _ if !file.unresolved => "copy",
                _ => "integrate",
            };
            format!(
                "{verb} from {}#{},#{}",
                file.source_file,
                file.source_start + 1,
                file.source_end
            )
        }
        Outcome::Resolved { how, result } => match how {
            None => format!(
                "resolved ({})",
                result.map_or("unspecified", |r| r.as_str())
            ),
            Some(how) => format!("{} {}", how.as_str(), file.source_file),
        },
        Outcome::Purged => "purged".to_string(),
        Outcome::WouldBePurged => "would be purged".to_string(),
        Outcome::Shelved => format!("shelved {action}"),
        Outcome::ShelvedDeleted => "shelved file deleted".to_string(),
        Outcome::Unshelved => format!("unshelved, opened for {action}"),
    }
}

/// The local path of the file, when it is in this workspace's view.
pub fn local_of(ws: Option<&WorkspaceCtx>, file: &FileResult) -> String {
    ws.and_then(|ws| {
        file.client_file_in(ws)
            .map(|c| ws.display_local(&c).display().to_string())
    })
    .unwrap_or_default()
}

/// The common JSON fields of an opened file.
pub fn result_record(ws: Option<&WorkspaceCtx>, file: &FileResult) -> Record {
    Record::new()
        .s("depotFile", &file.depot_file)
        .s("clientFile", local_of(ws, file))
        .n("workRev", u64::from(file.work_rev()))
        .s("action", action_name(file.action))
        .n("change", file.change)
        .s("type", &file.file_type)
        .s("user", &file.user)
        .s("client", &file.workspace)
        .s("movedFile", &file.move_file)
}

/// Lists the files of add/edit/delete/reopen/move: `//depot/x#2 - opened for edit`.
pub fn print_results(listing: &mut Listing, ws: Option<&WorkspaceCtx>, files: &[FileResult]) {
    for file in files {
        let kind = format!("opened for {}", action_name(file.action));
        let message = match outcome_text(file) {
            text if text.is_empty() => kind.clone(),
            text => text,
        };
        listing.item(
            &kind,
            result_record(ws, file).s("message", &message),
            format!(
                "{}{} - {}",
                file.depot_file,
                rev_text(file.work_rev()),
                message
            ),
        );
    }
}

/// Lists one batch of files as a whole listing (see [`Listing`]).
pub fn list_results(out: Out, ws: Option<&WorkspaceCtx>, files: &[FileResult]) {
    let mut listing = Listing::new(out);
    print_results(&mut listing, ws, files);
    listing.finish();
}
