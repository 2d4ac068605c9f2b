//! Thin helpers over the generated client: connecting as a user, draining streams, creating
//! workspaces and submitting generated content without touching the disk.

use keel_client::Connection;
use keel_client::ops::{self, OpenFor, OpenQuery, Records};
use keel_proto::v1::submit_message::Body;
use keel_proto::v1::{
    FileBegin, FileEnd, SaveWorkspaceRequest, SubmitBegin, SubmitCommit, SubmitMessage, Workspace,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::error::{BenchError, Result};

/// Waits for a workload's client tasks in order; a client that failed or panicked fails the run
/// (`workload` names it in the error).
pub async fn join_clients<T>(
    workload: &str,
    tasks: Vec<tokio::task::JoinHandle<Result<T>>>,
) -> Result<Vec<T>> {
    let mut results = Vec::with_capacity(tasks.len());
    for task in tasks {
        let result = task
            .await
            .map_err(|e| BenchError::Check(format!("{workload} client failed: {e}")))??;
        results.push(result);
    }
    Ok(results)
}

/// Largest chunk sent in one submit message.
const CHUNK: usize = 1 << 20;

/// Connects to `addr` as `user` in `workspace` (empty = none), on its own TCP connection,
/// sending no ticket.
pub async fn connect(addr: &str, user: &str, workspace: &str) -> Result<Connection> {
    crate::access::connect(addr, user, workspace, None).await
}

/// Reads a server stream to its end, returning how many messages it held.
pub async fn drain<M>(
    context: &str,
    reply: std::result::Result<tonic::Response<tonic::Streaming<M>>, tonic::Status>,
) -> Result<u64> {
    let mut stream = reply.map_err(|s| BenchError::rpc(context, s))?.into_inner();
    let mut n = 0;
    while stream
        .message()
        .await
        .map_err(|s| BenchError::rpc(context, s))?
        .is_some()
    {
        n += 1;
    }
    Ok(n)
}

/// Creates (or replaces) workspace `name` for the connection's user, mapping `view`.
pub async fn save_workspace(
    conn: &Connection,
    name: &str,
    root: &std::path::Path,
    view: Vec<String>,
) -> Result<Workspace> {
    let spec = Workspace {
        name: name.to_string(),
        owner: conn.user().to_string(),
        root: root.to_string_lossy().into_owned(),
        options: "allwrite clobber normdir nomodtime".into(),
        view,
        ..Workspace::default()
    };
    let reply = conn
        .client()
        .save_workspace(SaveWorkspaceRequest {
            caller: conn.caller(),
            workspace: Some(spec),
            create_only: false,
        })
        .await
        .map_err(|s| BenchError::rpc(format!("creating workspace {name}"), s))?;
    Ok(reply.into_inner())
}

/// Opens `files` (workspace syntax) for `action` in the default changelist; returns the count.
pub async fn open(conn: &Connection, action: OpenFor, files: Vec<String>) -> Result<u64> {
    let add_types = if action == OpenFor::Add {
        vec!["text".to_string(); files.len()]
    } else {
        Vec::new()
    };
    let query = OpenQuery {
        add_types,
        ..OpenQuery::new(action, files)
    };
    count(ops::open(conn, query).await?).await
}

/// How many records a typed reply streams, read one at a time (none held).
pub async fn count<T: Send + 'static>(mut records: Records<T>) -> Result<u64> {
    let mut n = 0u64;
    while records.next().await?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// Submits the default changelist, uploading `uploads` (depot file, content) produced lazily
/// by `content`, and returns the submitted change number and the number of files in it.
pub async fn submit(
    conn: &Connection,
    description: &str,
    uploads: Vec<String>,
    content: impl Fn(&str) -> Vec<u8> + Send + 'static,
) -> Result<(u64, u64)> {
    let (tx, rx) = mpsc::channel::<SubmitMessage>(16);
    let msg = |body| SubmitMessage { body: Some(body) };
    let begin = msg(Body::Begin(SubmitBegin {
        caller: conn.caller(),
        change: 0,
        description: description.to_string(),
        reply_files: keel_proto::v1::SubmitReplyFiles::All as i32,
    }));
    let producer = tokio::spawn(async move {
        if tx.send(begin).await.is_err() {
            return;
        }
        for depot_file in uploads {
            let bytes = content(&depot_file);
            let digest = blake3::hash(&bytes).to_hex().to_string();
            let size = bytes.len() as u64;
            if tx
                .send(msg(Body::File(FileBegin { depot_file })))
                .await
                .is_err()
            {
                return;
            }
            for chunk in bytes.chunks(CHUNK) {
                if tx.send(msg(Body::Chunk(chunk.to_vec()))).await.is_err() {
                    return;
                }
            }
            if tx
                .send(msg(Body::FileEnd(FileEnd {
                    digest,
                    size,
                    mod_time: 0,
                })))
                .await
                .is_err()
            {
                return;
            }
        }
        let _ = tx.send(msg(Body::Commit(SubmitCommit {}))).await;
    });
    let reply = conn.client().submit(ReceiverStream::new(rx)).await;
    let mut stream = reply
        .map_err(|s| BenchError::rpc(description, s))?
        .into_inner();
    let mut change = 0;
    let mut files = 0;
    while let Some(part) = stream
        .message()
        .await
        .map_err(|s| BenchError::rpc(description, s))?
    {
        change = part.change;
        files += part.files.len() as u64;
    }
    producer
        .await
        .map_err(|e| BenchError::Check(format!("submit producer failed: {e}")))?;
    if change == 0 {
        return Err(BenchError::Check(format!(
            "{description}: submit ended without a reply"
        )));
    }
    Ok((change, files))
}

/// Takes a checkpoint on the server (`Checkpoint`), returning its report.
pub async fn checkpoint(conn: &Connection) -> Result<keel_client::ops::CheckpointDone> {
    use keel_client::ops::{self, CheckpointEvent};
    let op = |e| BenchError::op("checkpoint", e);
    let mut events = ops::checkpoint(conn).await.map_err(op)?;
    let mut done = None;
    while let Some(event) = events.next().await.map_err(op)? {
        if let CheckpointEvent::Done(d) = event {
            done = Some(d);
        }
    }
    done.ok_or_else(|| BenchError::Check("the checkpoint ended without a report".into()))
}
