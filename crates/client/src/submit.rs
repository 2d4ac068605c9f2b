//! The submit driver: uploads the content of opened files and commits the change.

use std::collections::HashMap;

use keel_proto::v1::submit_message::Body;
use keel_proto::v1::{
    FileAction, FileRecord, SubmitBegin, SubmitCommit, SubmitMessage, SubmitReply,
};

use crate::actions;
use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::paths::LocalResolver;
use crate::transfer::{self, LocalMode};
use crate::upload::{self, UploadPart};
use crate::workspace::WorkspaceCtx;

pub use crate::upload::needs_content;

fn wrap(part: UploadPart) -> SubmitMessage {
    let body = match part {
        UploadPart::File(f) => Body::File(f),
        UploadPart::Chunk(c) => Body::Chunk(c),
        UploadPart::FileEnd(e) => Body::FileEnd(e),
        UploadPart::Commit => Body::Commit(SubmitCommit {}),
    };
    SubmitMessage { body: Some(body) }
}

/// What happened during a submit that the caller may want to tell the user about.
#[derive(Debug, Clone, PartialEq)]
pub enum SubmitEvent {
    /// The connection broke before the request was complete, so nothing was submitted and the
    /// submit is being sent once more; `reason` is the transport's description.
    Retrying { reason: String },
    /// One batch of the submitted files, as the server sends them (the change is submitted
    /// by the time the first arrives): handled one at a time, never gathered, so a submit of
    /// 70,000 files holds at most one batch of their records.
    Submitted(SubmitReply),
}

/// Submits pending change `change` (0 = the default changelist) whose opened files are `opened`;
/// `on_event` hears of retries, so a flaky link is visible rather than hidden, and receives the
/// submitted files batch by batch. Returns the change numbers and any failed change-commit
/// triggers (no files).
pub async fn submit(
    conn: &Connection,
    ws: &WorkspaceCtx,
    change: u64,
    description: &str,
    opened: &[FileRecord],
    on_event: &mut dyn FnMut(SubmitEvent) -> Result<()>,
) -> Result<SubmitReply> {
    let mut stream = match submit_once(conn, ws, change, description, opened).await {
        // Nothing was committed; one more try on a fresh connection.
        Err(Error::Interrupted { reason }) => {
            on_event(SubmitEvent::Retrying { reason })?;
            submit_once(conn, ws, change, description, opened).await?
        }
        other => other?,
    };
    let mut numbers: Option<SubmitReply> = None;
    while let Some(part) = stream.message().await.map_err(|s| conn.status(s))? {
        match numbers.as_mut() {
            Some(all) => all
                .trigger_failures
                .extend(part.trigger_failures.iter().cloned()),
            None => {
                numbers = Some(SubmitReply {
                    change: part.change,
                    renamed_from: part.renamed_from,
                    files: Vec::new(),
                    trigger_failures: part.trigger_failures.clone(),
                })
            }
        }
        on_event(SubmitEvent::Submitted(part))?;
    }
    numbers.ok_or_else(|| Error::Protocol("submit ended without a reply".into()))
}

async fn submit_once(
    conn: &Connection,
    ws: &WorkspaceCtx,
    change: u64,
    description: &str,
    opened: &[FileRecord],
) -> Result<tonic::Streaming<SubmitReply>> {
    let uploads = upload::plan(ws, opened)?;
    let begin = SubmitMessage {
        body: Some(Body::Begin(SubmitBegin {
            caller: conn.caller(),
            change,
            description: description.to_string(),
        })),
    };
    let mut client = conn.client();
    upload::stream(conn, begin, uploads, wrap, |rx| client.submit(rx)).await
}

/// After a successful submit, makes submitted files read-only (unless allwrite or `+w`), one
/// reply batch at a time.
pub struct FinishModes<'a> {
    ws: &'a WorkspaceCtx,
    by_depot: HashMap<&'a str, &'a FileRecord>,
    resolver: LocalResolver,
}

impl<'a> FinishModes<'a> {
    pub fn new(ws: &'a WorkspaceCtx, opened: &'a [FileRecord]) -> FinishModes<'a> {
        FinishModes {
            ws,
            by_depot: opened.iter().map(|r| (r.depot_file.as_str(), r)).collect(),
            resolver: ws.resolver(),
        }
    }

    /// Makes the files of one reply batch read-only where their type says so.
    pub fn batch(&mut self, reply: &SubmitReply) -> Result<()> {
        let ws = self.ws;
        for record in &reply.files {
            let opened_record = self.by_depot.get(record.depot_file.as_str()).copied();
            let action = match record.action() {
                FileAction::Unspecified => {
                    opened_record.map_or(record.head_action(), |r| r.action())
                }
                open => open,
            };
            let wants = |a: FileAction| actions::from_wire(a).is_some_and(needs_content);
            if !wants(action) && !wants(record.head_action()) {
                continue;
            }
            let Some(client_file) = ws
                .client_file_of(record)
                .or_else(|| opened_record.and_then(|r| ws.client_file_of(r)))
            else {
                continue;
            };
            let file_type = [&record.head_type, &record.file_type]
                .into_iter()
                .chain(opened_record.map(|r| &r.file_type))
                .find(|t| !t.is_empty())
                .cloned()
                .unwrap_or_default();
            let mode = LocalMode::for_type(&file_type, ws.options.allwrite);
            if !mode.writable {
                transfer::make_read_only(&self.resolver.resolve(&client_file)?)?;
            }
        }
        Ok(())
    }
}
