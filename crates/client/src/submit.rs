//! The submit driver: plans which files to upload, uploads their content and commits the change.

use std::path::PathBuf;

use keel_proto::v1::submit_message::Body;
use keel_proto::v1::{
    FileRecord, OpenedRequest, SubmitBegin, SubmitCommit, SubmitMessage, SubmitReply,
    SubmitReplyFiles,
};

use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::transfer::{self, LocalMode};
use crate::upload::{self, Planner, Upload, UploadPart};
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

/// What a submit does on the client, worked out from the change's open records one at a time
/// without holding them: the files to upload, the local files to make read-only once the change
/// is submitted, and how many records were planned. A branch of 70,000 files opened with
/// `integrate -v` plans to upload nothing and to touch nothing, and holds nothing.
#[derive(Debug, Default)]
pub struct SubmitPlan {
    uploads: Vec<Upload>,
    read_only: Vec<PathBuf>,
    files: u64,
}

impl SubmitPlan {
    /// Plans the submit of pending `change` (0 = the default changelist) from its
    /// content-carrying open records, streamed from the server: deletes need nothing here.
    pub async fn of_change(
        conn: &Connection,
        ws: &WorkspaceCtx,
        change: u64,
    ) -> Result<SubmitPlan> {
        let mut stream = conn
            .reply(conn.client().opened(OpenedRequest {
                caller: conn.caller(),
                change,
                filter_change: true,
                content_only: true,
                ..OpenedRequest::default()
            }))
            .await?;
        let mut planning = Planning::new(ws);
        while let Some(record) = stream.message().await.map_err(|s| conn.status(s))? {
            planning.add(&record)?;
        }
        Ok(planning.finish())
    }

    /// Plans the submit of `opened`, a change's open records already fetched.
    pub fn of_records(ws: &WorkspaceCtx, opened: &[FileRecord]) -> Result<SubmitPlan> {
        let mut planning = Planning::new(ws);
        for record in opened {
            planning.add(record)?;
        }
        Ok(planning.finish())
    }

    /// The depot files whose content is uploaded with keywords un-expanded (`+k`), which
    /// the workspace shows expanded again after the submit.
    pub fn keyword_files(&self) -> impl Iterator<Item = &str> {
        self.uploads
            .iter()
            .filter(|u| u.keywords != crate::keywords::StoredForm::PLAIN)
            .map(|u| u.depot_file.as_str())
    }

    /// How many open records were planned (with [`SubmitPlan::of_change`], the
    /// content-carrying ones).
    pub fn files(&self) -> u64 {
        self.files
    }

    /// After a successful submit, makes the submitted files read-only (unless allwrite or
    /// `+w`). Every file is tried; the first failure is returned.
    pub fn finish_modes(&self) -> Result<()> {
        let mut first = None;
        for local in &self.read_only {
            if let Err(e) = transfer::make_read_only(local) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// A [`SubmitPlan`] being built.
struct Planning<'a> {
    ws: &'a WorkspaceCtx,
    uploads: Planner<'a>,
    read_only: Vec<PathBuf>,
    files: u64,
}

impl<'a> Planning<'a> {
    fn new(ws: &'a WorkspaceCtx) -> Planning<'a> {
        Planning {
            ws,
            uploads: Planner::new(ws),
            read_only: Vec::new(),
            files: 0,
        }
    }

    fn add(&mut self, record: &FileRecord) -> Result<()> {
        self.files += 1;
        if let Some(local) = self.uploads.add(record)? {
            // The submitted revision has the open record's type.
            if !LocalMode::for_type(&record.file_type, self.ws.options.allwrite).writable {
                self.read_only.push(local);
            }
        }
        Ok(())
    }

    fn finish(self) -> SubmitPlan {
        SubmitPlan {
            uploads: self.uploads.finish(),
            read_only: self.read_only,
            files: self.files,
        }
    }
}

/// Submits pending change `change` (0 = the default changelist) as `plan` says; `on_event`
/// hears of retries, so a flaky link is visible rather than hidden, and receives the submitted
/// files batch by batch (none with [`SubmitReplyFiles::None`]: the reply then counts them in
/// `file_count`). Returns the change numbers, the file count and any failed change-commit
/// triggers (no files).
pub async fn submit(
    conn: &Connection,
    change: u64,
    description: &str,
    plan: &SubmitPlan,
    reply_files: SubmitReplyFiles,
    on_event: &mut dyn FnMut(SubmitEvent) -> Result<()>,
) -> Result<SubmitReply> {
    let begin = SubmitBegin {
        caller: conn.caller(),
        change,
        description: description.to_string(),
        reply_files: reply_files as i32,
    };
    let mut stream = match submit_once(conn, begin.clone(), plan).await {
        // Nothing was committed; one more try on a fresh connection.
        Err(Error::Interrupted { reason }) => {
            on_event(SubmitEvent::Retrying { reason })?;
            submit_once(conn, begin, plan).await?
        }
        other => other?,
    };
    let mut numbers: Option<SubmitReply> = None;
    while let Some(part) = stream.message().await.map_err(|s| conn.status(s))? {
        match numbers.as_mut() {
            Some(all) => {
                all.file_count += part.file_count;
                all.trigger_failures
                    .extend(part.trigger_failures.iter().cloned());
            }
            None => {
                numbers = Some(SubmitReply {
                    change: part.change,
                    renamed_from: part.renamed_from,
                    files: Vec::new(),
                    trigger_failures: part.trigger_failures.clone(),
                    file_count: part.file_count,
                })
            }
        }
        on_event(SubmitEvent::Submitted(part))?;
    }
    numbers.ok_or_else(|| Error::Protocol("submit ended without a reply".into()))
}

async fn submit_once(
    conn: &Connection,
    begin: SubmitBegin,
    plan: &SubmitPlan,
) -> Result<tonic::Streaming<SubmitReply>> {
    let begin = SubmitMessage {
        body: Some(Body::Begin(begin)),
    };
    let mut client = conn.client();
    upload::stream(conn, begin, plan.uploads.clone(), wrap, |rx| {
        client.submit(rx)
    })
    .await
}
