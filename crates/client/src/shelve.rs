//! The shelve and unshelve drivers: upload opened files to a shelf; open shelved files here and
//! fetch their content (`//depot/path@=N`) into the workspace.

use std::collections::HashMap;

use keel_proto::v1::shelve_message::Body;
use keel_proto::v1::{
    FileRecord, ShelveBegin, ShelveMessage, ShelveReply, SubmitCommit, UnshelveRequest,
};

use crate::connect::Connection;
use crate::content::ContentStream;
use crate::error::{Error, Result};
use crate::stream::collect;
use crate::transfer::{self, LocalMode};
use crate::upload::{self, UploadPart};
use crate::workspace::WorkspaceCtx;

fn wrap(part: UploadPart) -> ShelveMessage {
    let body = match part {
        UploadPart::File(f) => Body::File(f),
        UploadPart::Chunk(c) => Body::Chunk(c),
        UploadPart::FileEnd(e) => Body::FileEnd(e),
        UploadPart::Commit => Body::Commit(SubmitCommit {}),
    };
    ShelveMessage { body: Some(body) }
}

/// Shelves the files of numbered pending change `change` selected by `files` (all when empty);
/// `opened` are the same selection's open records (their content is uploaded).
pub async fn shelve(
    conn: &Connection,
    ws: &WorkspaceCtx,
    change: u64,
    files: Vec<String>,
    replace: bool,
    opened: &[FileRecord],
) -> Result<ShelveReply> {
    let uploads = upload::plan(ws, opened)?;
    let begin = ShelveMessage {
        body: Some(Body::Begin(ShelveBegin {
            caller: conn.caller(),
            change,
            files,
            replace,
        })),
    };
    let mut client = conn.client();
    upload::stream(conn, begin, uploads, wrap, |rx| client.shelve(rx)).await
}

/// Unshelves files of `shelved_change` into pending change `change` of this workspace and
/// writes their shelved content (deletes remove the local file). Returns the opened records.
pub async fn unshelve(
    conn: &Connection,
    ws: &WorkspaceCtx,
    shelved_change: u64,
    change: u64,
    files: Vec<String>,
) -> Result<Vec<FileRecord>> {
    let stream = conn
        .reply(conn.client().unshelve(UnshelveRequest {
            caller: conn.caller(),
            shelved_change,
            change,
            files,
        }))
        .await?;
    let opened = collect(conn, stream).await?;
    let mut wanted: HashMap<String, &FileRecord> = HashMap::new();
    for record in &opened {
        let client_file = ws
            .client_file_of(record)
            .ok_or_else(|| Error::BadArgument {
                arg: record.depot_file.clone(),
                reason: "not mapped in the workspace view".into(),
            })?;
        if record.head_digest.is_empty() {
            transfer::remove_local(&ws.root, &ws.local(&client_file)?, ws.options.rmdir)?;
        } else {
            wanted.insert(record.depot_file.clone(), record);
        }
    }
    if wanted.is_empty() {
        return Ok(opened);
    }
    let specs = wanted
        .keys()
        .map(|depot| format!("{depot}@={shelved_change}"))
        .collect();
    let mut content = ContentStream::open_for(conn, specs, "unshelve").await?;
    while let Some((file, header)) = content.next_file().await? {
        let (Some(record), Some(header)) = (wanted.get(&file.depot_file), header) else {
            continue;
        };
        let client_file = ws.client_file_of(record).unwrap_or_default();
        let mode = LocalMode::for_type(&record.file_type, true);
        // A `+m` file (or any, in a `modtime` workspace) gets the time recorded when shelved.
        let modified = crate::content::kept_mod_time(&file, &record.file_type, ws.options.modtime);
        content
            .write_file_at(&header, ws.local(&client_file)?, mode, modified)
            .await?;
    }
    Ok(opened)
}
