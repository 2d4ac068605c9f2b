//! Content from the client's workspace into the service's upload step (submit and shelve):
//! `client-SendFile` for each file, the client calling back `open`, then `write` with chunks
//! (which carry only `handle` and `data`), then `confirm` with the MD5 digest and size it
//! computed (or `decline` when it could not read the file).
//!
//! The front end hashes what arrives (MD5 to check the client's claim, the store's digest for
//! the service) and hands it to [`keel_service::Uploads`] in slices of at most [`SLICE`] bytes,
//! each on a blocking thread. Any failure (a digest that does not match, a file the client
//! could not read, a broken connection) drops the session: nothing is submitted or shelved.

use crate::client_ops::{self, BATCH, FENCE};
use crate::cmd::{Cmd, CmdError, number};
use crate::commands::workspace::Work;
use crate::transfer::to_client::client_type;
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report};
use keel_core::{FileAction, FileType};
use keel_service::{FileInfo, Service, ServiceError, Uploads};
use md5::{Digest as _, Md5};
use std::sync::Arc;

/// Bytes gathered before they are handed to the service.
pub const SLICE: usize = 1 << 20;

const OPEN: &str = "dm-KeelSendOpen";
const WRITE: &str = "dm-KeelSendWrite";
const SENT: &str = "dm-KeelSendDone";
const FAILED: &str = "dm-KeelSendFailed";

/// One file the client must send.
#[derive(Debug, Clone)]
pub struct ToSend {
    pub depot_file: String,
    pub local: String,
    pub file_type: FileType,
    /// MD5 of content the server already holds for the file (a lazy copy: unshelved,
    /// integrated, moved): the client compares its file with it and sends the file only when
    /// it differs, answering `status same` otherwise.
    pub server_md5: Option<String>,
}

/// The file being received.
struct Receiving {
    depot_file: String,
    md5: Md5,
    store: blake3::Hasher,
    size: u64,
    buffer: Vec<u8>,
}

/// Runs `f` with the session on a blocking thread and hands the session back.
async fn on_session<S, T>(
    svc: &Arc<Service>,
    mut session: S,
    uploads: fn(&mut S) -> &mut Uploads,
    f: impl FnOnce(&mut Uploads, &Service) -> Result<T, ServiceError> + Send + 'static,
) -> Result<(S, T), CmdError>
where
    S: Send + 'static,
    T: Send + 'static,
{
    let svc = svc.clone();
    let (session, result) = tokio::task::spawn_blocking(move || {
        let r = f(uploads(&mut session), &svc);
        (session, r)
    })
    .await
    .map_err(|e| {
        CmdError::Report(Report::failed(
            Generic::Fault,
            number::INTERNAL,
            format!("the upload failed inside the server: {e}"),
        ))
    })?;
    Ok((session, result?))
}

fn refused(text: String) -> CmdError {
    CmdError::Report(Report::failed(Generic::NotYet, number::SERVICE, text))
}

/// The `client-SendFile` asking for `f` under handle number `handle`; with `skip_same`, the
/// server's MD5 goes along (`serverDigest`) so the client sends nothing when its file is that.
fn send_file(f: &ToSend, handle: usize, skip_same: bool) -> Message {
    let mut m = Message::new()
        .with("path", &f.local)
        .with("type", client_type(&f.file_type))
        .with("handle", format!("keel{handle}"))
        .with("keelDepotFile", &f.depot_file)
        .with("open", OPEN)
        .with("write", WRITE)
        .with("confirm", SENT)
        .with("decline", FAILED);
    if skip_same && let Some(md5) = &f.server_md5 {
        m = m.with("serverDigest", md5);
    }
    m.with("func", "client-SendFile")
}

/// Asks the client for every file of `files` and feeds their content to `session`'s uploads;
/// the session back once every file arrived whole and checked.
pub async fn receive<S: Send + 'static>(
    cmd: &mut Cmd,
    mut session: S,
    uploads: fn(&mut S) -> &mut Uploads,
    files: &[ToSend],
) -> Result<S, CmdError> {
    let svc = cmd.service().clone();
    for batch in files.chunks(BATCH) {
        for (i, f) in batch.iter().enumerate() {
            cmd.conn.send(&send_file(f, i, true));
        }
        client_ops::send_fence(cmd);
        let mut current: Option<Receiving> = None;
        loop {
            let m = client_ops::next_reply(cmd, FENCE).await?;
            let func = m.func().unwrap_or_default();
            if func == FENCE {
                break;
            }
            let step = match func.as_str() {
                OPEN => {
                    let depot_file = m.text("keelDepotFile").unwrap_or_default();
                    let path = depot_file.clone();
                    current = Some(Receiving {
                        depot_file,
                        md5: Md5::new(),
                        store: blake3::Hasher::new(),
                        size: 0,
                        buffer: Vec::new(),
                    });
                    on_session(&svc, session, uploads, move |u, svc| {
                        u.begin_file(svc, &path)
                    })
                    .await
                    .map(|(s, ())| s)
                }
                WRITE => {
                    let data = m.get("data").unwrap_or_default();
                    match current.as_mut() {
                        Some(r) => {
                            r.md5.update(data);
                            r.store.update(data);
                            r.size += data.len() as u64;
                            r.buffer.extend_from_slice(data);
                            if r.buffer.len() >= SLICE {
                                let slice = std::mem::take(&mut r.buffer);
                                on_session(&svc, session, uploads, move |u, svc| {
                                    u.write_chunk(svc, &slice)
                                })
                                .await
                                .map(|(s, ())| s)
                            } else {
                                Ok(session)
                            }
                        }
                        None => Err(refused(
                            "The client sent file content before opening its file.".into(),
                        )),
                    }
                }
                SENT => match current.take() {
                    Some(r) => finish(&svc, session, uploads, r, &m).await,
                    // A file whose content the server already holds, unchanged: the copy
                    // stands.
                    None if m.text("status").as_deref() == Some("same")
                        && batch.iter().any(|f| {
                            f.server_md5.is_some()
                                && m.text("keelDepotFile").as_deref() == Some(&f.depot_file)
                        }) =>
                    {
                        Ok(session)
                    }
                    None => Err(refused(
                        "The client ended a file it had not opened.".to_string(),
                    )),
                },
                FAILED => Err(refused(format!(
                    "{} - the client could not read its file {}; nothing was changed.",
                    m.text("keelDepotFile").unwrap_or_default(),
                    m.text("path").unwrap_or_default()
                ))),
                other => Err(refused(format!(
                    "The client called {other:?} while sending files."
                ))),
            };
            match step {
                Ok(s) => session = s,
                // The session is gone with the failed step: nothing is kept. The rest of the
                // batch is read and dropped, so the connection stays in step with the client.
                Err(e) => {
                    loop {
                        let m = client_ops::next_reply(cmd, FENCE).await?;
                        if m.func().as_deref() == Some(FENCE) {
                            break;
                        }
                    }
                    return Err(e);
                }
            }
        }
    }
    Ok(session)
}

/// Ends one file: what arrived must be what the client says it sent.
async fn finish<S: Send + 'static>(
    svc: &Arc<Service>,
    session: S,
    uploads: fn(&mut S) -> &mut Uploads,
    r: Receiving,
    m: &Message,
) -> Result<S, CmdError> {
    let Receiving {
        depot_file,
        md5,
        store,
        size,
        buffer,
    } = r;
    let got = hex::encode_upper(md5.finalize());
    let claimed = m.text("digest").unwrap_or_default();
    let claimed_size = m.text("fileSize").and_then(|s| s.parse::<u64>().ok());
    if !claimed.eq_ignore_ascii_case(&got) || claimed_size.is_some_and(|s| s != size) {
        return Err(refused(format!(
            "{depot_file} - the content the server received (MD5 {got}, {size} bytes) is not \
             what the client sent (MD5 {claimed}, {} bytes); nothing was changed.",
            claimed_size.map_or("unknown".to_string(), |s| s.to_string())
        )));
    }
    let digest = store.finalize().to_hex().to_string();
    // The client sends its file's modification time with the digest (seconds since the epoch).
    let mod_time = m
        .text("time")
        .and_then(|t| t.parse::<i64>().ok())
        .unwrap_or(0);
    on_session(svc, session, uploads, move |u, svc| {
        if !buffer.is_empty() {
            u.write_chunk(svc, &buffer)?;
        }
        u.end_file_at(svc, &digest, size, mod_time)
    })
    .await
    .map(|(s, ())| s)
}

/// The local file and type of each depot file the service expects content for.
pub fn files_to_send(
    work: &Work,
    opened: &[FileInfo],
    expected: &[String],
) -> Result<Vec<ToSend>, CmdError> {
    let mut out = expected
        .iter()
        .map(|depot| {
            let f = opened
                .iter()
                .find(|f| f.depot_file.as_str() == depot)
                .ok_or_else(|| refused(format!("{depot} - not opened in this change")))?;
            let rel = f
                .client_file
                .as_deref()
                .ok_or_else(|| refused(format!("{depot} - file(s) not in client view.")))?;
            Ok(ToSend {
                depot_file: depot.clone(),
                local: work.local_of_rel(rel),
                file_type: f.file_type.unwrap_or(FileType::TEXT),
                server_md5: None,
            })
        })
        .collect::<Result<Vec<_>, CmdError>>()?;
    // Files whose content the server holds already (unshelved, integrated, moved) may have
    // been changed in the workspace since: the client sends each one that differs. (A
    // branched file is a copy the user has not opened for edit.)
    for f in opened {
        let may_change = matches!(
            f.action,
            Some(FileAction::Add | FileAction::Edit | FileAction::Integrate | FileAction::MoveAdd)
        );
        if !may_change
            || f.lazy_md5.is_empty()
            || expected.iter().any(|e| e == f.depot_file.as_str())
        {
            continue;
        }
        let Some(rel) = f.client_file.as_deref() else {
            continue;
        };
        out.push(ToSend {
            depot_file: f.depot_file.to_string(),
            local: work.local_of_rel(rel),
            file_type: f.file_type.unwrap_or(FileType::TEXT),
            server_md5: Some(f.lazy_md5.to_ascii_uppercase()),
        });
    }
    Ok(out)
}

/// Asks the client for each of `files` (`client-SendFile`, as [`receive`]) and keeps what
/// arrives in memory, checked against the MD5 and size the client states: the workspace
/// files ("yours") a merge reads. A file over `limit` bytes or one the client could not read
/// fails the whole call, naming the file.
pub async fn receive_whole(
    cmd: &mut Cmd,
    files: &[ToSend],
    limit: u64,
) -> Result<Vec<(String, Vec<u8>)>, CmdError> {
    let mut got = Vec::with_capacity(files.len());
    for batch in files.chunks(BATCH) {
        for (i, f) in batch.iter().enumerate() {
            cmd.conn.send(&send_file(f, i, false));
        }
        client_ops::send_fence(cmd);
        let mut current: Option<(String, Vec<u8>)> = None;
        let mut failure: Option<CmdError> = None;
        loop {
            let m = client_ops::next_reply(cmd, FENCE).await?;
            let func = m.func().unwrap_or_default();
            if func == FENCE {
                break;
            }
            if failure.is_some() {
                // Read and drop the rest of the batch, so the connection stays in step.
                continue;
            }
            match func.as_str() {
                OPEN => current = Some((m.text("keelDepotFile").unwrap_or_default(), Vec::new())),
                WRITE => match current.as_mut() {
                    Some((depot, data)) => {
                        data.extend_from_slice(m.get("data").unwrap_or_default());
                        if data.len() as u64 > limit {
                            failure = Some(refused(format!(
                                "{depot} - the workspace file is larger than {limit} bytes, \
                                 too large to merge; nothing was changed."
                            )));
                        }
                    }
                    None => {
                        failure = Some(refused(
                            "The client sent file content before opening its file.".into(),
                        ))
                    }
                },
                SENT => match current.take() {
                    Some((depot, data)) => {
                        let md5 = hex::encode_upper(Md5::digest(&data));
                        let claimed = m.text("digest").unwrap_or_default();
                        if claimed.eq_ignore_ascii_case(&md5) {
                            got.push((depot, data));
                        } else {
                            failure = Some(refused(format!(
                                "{depot} - the content the server received (MD5 {md5}) is not \
                                 what the client sent (MD5 {claimed}); nothing was changed."
                            )));
                        }
                    }
                    None => {
                        failure = Some(refused(
                            "The client ended a file it had not opened.".to_string(),
                        ))
                    }
                },
                FAILED => {
                    failure = Some(refused(format!(
                        "{} - the client could not read its file {}; nothing was changed.",
                        m.text("keelDepotFile").unwrap_or_default(),
                        m.text("path").unwrap_or_default()
                    )))
                }
                other => {
                    failure = Some(refused(format!(
                        "The client called {other:?} while sending files."
                    )))
                }
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
    }
    Ok(got)
}
