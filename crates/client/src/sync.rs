//! The sync driver: consumes the Sync stream, hands files to the writers, reports them in
//! stream order and records the have list for the files in place.

use crate::keywords::{StoredForm, expanded_for_sync, form_of};
use keel_core::FileType;
use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;

use keel_proto::v1::sync_message::Body;
use keel_proto::v1::{SyncAction, SyncFile, SyncMessage, SyncRequest};
use tokio::sync::oneshot::error::TryRecvError;

use crate::clobber::ClobberCheck;
use crate::connect::Connection;
use crate::error::{Error, Result};
use crate::have::HaveUpdater;
use crate::paths::LocalResolver;
use crate::stream::PeekStream;
use crate::sync_dirs::SyncDirs;
use crate::transfer::{self, LocalMode};
use crate::workspace::WorkspaceCtx;
use crate::writers::{FileJob, Writers, Written};

/// What to sync and how (Perforce `sync` flags).
#[derive(Debug, Clone, Default)]
pub struct SyncOptions {
    /// Server-syntax file arguments; empty = the whole view at head.
    pub files: Vec<String>,
    /// `-n`: report only.
    pub preview: bool,
    /// `-f`: rewrite files and overwrite writable ones.
    pub force: bool,
    /// `-k`: update the have list without touching files.
    pub have_only: bool,
    /// `-p`: write files without recording them in the have list.
    pub populate_only: bool,
}

/// One file the sync dealt with.
#[derive(Debug)]
pub struct SyncEvent {
    pub file: SyncFile,
    /// The local path (None when the server's path was refused).
    pub local: Option<PathBuf>,
    /// Bytes written for this file.
    pub bytes: u64,
    /// Ok when the file is in the announced state; the reason otherwise.
    pub result: Result<()>,
}

/// Totals of a finished sync.
#[derive(Debug, Default, Clone, Copy)]
pub struct SyncTotals {
    pub files: u64,
    pub bytes: u64,
    pub failed: u64,
    /// Totals the server announced in its summary.
    pub server_files: u64,
    pub server_bytes: u64,
}

/// Runs a sync, calling `report` for every file in the order the server sent them.
///
/// The stream loop only receives: each file's content goes to one of a few [`Writers`], which
/// write, verify and place it while the next files arrive; small files go in batches. A file is reported, and recorded in
/// the have list, only once its writer has placed it.
pub async fn sync(
    conn: &Connection,
    ws: &WorkspaceCtx,
    options: &SyncOptions,
    mut report: impl FnMut(&SyncEvent),
) -> Result<SyncTotals> {
    let inner = conn
        .reply(conn.client().sync(SyncRequest {
            caller: conn.caller(),
            files: options.files.clone(),
            preview: options.preview,
            force: options.force,
            have_only: options.have_only,
            content_by_digest: false,
            populate_only: options.populate_only,
        }))
        .await?;
    let mut stream = PeekStream::new(conn, inner);
    let mut driver = Driver {
        conn,
        ws,
        options,
        report: &mut report,
        record_have: !options.preview && !options.populate_only,
        have: HaveUpdater::new(conn),
        clobber: ClobberCheck::default(),
        totals: SyncTotals::default(),
        paths: LocalResolver::with_limit(&ws.root, conn.tuning().remembered_dirs),
        dirs: SyncDirs::with_limit(conn.tuning().remembered_dirs),
        last_mode: None,
        writers: None,
        pending: VecDeque::new(),
        in_flight: HashSet::new(),
    };
    let mut mark = None;
    let outcome: Result<()> = async {
        while let Some(message) = stream.next().await? {
            match message.body {
                Some(Body::File(file)) => driver.file(&mut stream, file).await?,
                Some(Body::Summary(summary)) => {
                    driver.totals.server_files = summary.files;
                    driver.totals.server_bytes = summary.bytes;
                    mark = summary.mark;
                }
                Some(Body::Chunk(_)) => {
                    return Err(Error::Protocol("sync content without a file".into()));
                }
                None => {}
            }
        }
        Ok(())
    }
    .await;
    // Report and record what was written even when the stream broke off.
    let settled = driver.settle(true).await;
    let closed = match driver.writers.take() {
        Some(writers) => writers.close().await,
        None => Ok(()),
    };
    // The mark claims the have list holds every file of the sync: only when each is in place.
    let complete = outcome.is_ok()
        && settled.is_ok()
        && closed.is_ok()
        && driver.record_have
        && driver.totals.failed == 0;
    let recorded = driver.have.finish_marked(mark.filter(|_| complete)).await;
    outcome?;
    settled?;
    closed?;
    recorded?;
    Ok(driver.totals)
}

/// A file handled by the stream loop, waiting to be reported in stream order.
struct Pending {
    event: SyncEvent,
    /// The writer's outcome, for a file handed to one.
    written: Option<Written>,
}

/// The state of one sync.
struct Driver<'a, R> {
    conn: &'a Connection,
    ws: &'a WorkspaceCtx,
    options: &'a SyncOptions,
    report: &'a mut R,
    record_have: bool,
    have: HaveUpdater,
    clobber: ClobberCheck,
    totals: SyncTotals,
    paths: LocalResolver,
    /// Directories of new files, and which of them this sync created.
    dirs: SyncDirs,
    /// The last file type seen and its mode: runs of files share one.
    last_mode: Option<(String, LocalMode)>,
    /// Started with the first file that has content to write.
    writers: Option<Writers>,
    pending: VecDeque<Pending>,
    /// Local paths of pending files a writer may still be writing.
    in_flight: HashSet<PathBuf>,
}

impl<R: FnMut(&SyncEvent)> Driver<'_, R> {
    /// Handles one announced file and consumes its content; per-file problems go into its
    /// event, stream failures are errors.
    async fn file(&mut self, stream: &mut PeekStream<SyncMessage>, file: SyncFile) -> Result<()> {
        let mut event = SyncEvent {
            local: None,
            bytes: 0,
            result: Ok(()),
            file,
        };
        if event.file.action() == SyncAction::Deleted && event.file.client_file.is_empty() {
            // The revision left the view: the server cannot say where it was, so only the have
            // list entry goes (the caller reports the missing local path).
            skip_chunks(stream).await?;
            return self.push(event, None).await;
        }
        let local = match self.paths.resolve(&event.file.client_file) {
            Ok(path) => path,
            Err(e) => {
                skip_chunks(stream).await?;
                event.result = Err(e);
                return self.push(event, None).await;
            }
        };
        if self.in_flight.contains(&local) {
            // Two depot files at one local path: the earlier is finished before this one is
            // looked at, as if they were handled one after the other.
            self.settle(true).await?;
        }
        event.local = Some(local.clone());
        // An opened file whose head moved: the workspace file stays, a resolve is scheduled.
        if self.options.preview
            || self.options.have_only
            || event.file.action() == SyncAction::Resolve
        {
            skip_chunks(stream).await?;
            return self.push(event, None).await;
        }
        // A new file in a directory this sync created: nothing of the user's can be at its
        // path (and linking it under its name fails on a name taken meanwhile), so there is
        // nothing to check and it is written without a name (`landing.rs`). `prepare` also
        // creates the directory.
        let fresh = event.file.action() == SyncAction::Added
            && local.parent().is_some_and(|dir| self.dirs.prepare(dir));
        if !fresh
            && !self.options.force
            && !self.ws.options.clobber
            && transfer::is_writable_file(&local)
            && !self
                .clobber
                .safe_to_overwrite(self.conn, self.ws, &event.file, &local)
                .await?
        {
            skip_chunks(stream).await?;
            event.result = Err(Error::CantClobber(local));
            return self.push(event, None).await;
        }
        if event.file.action() == SyncAction::Deleted {
            if self.ws.options.rmdir {
                // Emptied directories go: none may be one a writer is about to fill.
                self.settle(true).await?;
            }
            event.result =
                transfer::remove_local(&self.ws.root, &local, self.ws.options.rmdir).map(|_| ());
            skip_chunks(stream).await?;
            return self.push(event, None).await;
        }
        let mode = self.mode(&event.file.file_type);
        if mode.symlink {
            // A new symlink may redirect directories other files are being written into.
            self.settle(true).await?;
        }
        // `modtime` (or a `+m` file): the file gets the modification time recorded when it was
        // submitted, as in Perforce; a revision without one gets its submit time.
        let keep_modtime = self.ws.options.modtime
            || FileType::parse(&event.file.file_type).is_ok_and(|t| t.modtime);
        let kept = u64::try_from(event.file.recorded_mod_time)
            .ok()
            .filter(|t| *t > 0)
            .unwrap_or(event.file.mod_time);
        let mut job = FileJob {
            target: local,
            compressed: event.file.compressed,
            digest: event.file.digest.clone(),
            mode,
            modified: (keep_modtime && kept > 0).then_some(kept),
            fresh,
        };
        let tuning = *self.conn.tuning();
        if !mode.symlink && form_of(&event.file.file_type) != StoredForm::PLAIN {
            // A keyword or utf16 file is received whole, verified as stored, and written in
            // its workspace form.
            let mut stored = Vec::new();
            while let Some(chunk) = next_chunk(stream).await? {
                stored.extend_from_slice(&chunk);
            }
            let expanded = match expanded_for_sync(&event.file, &stored, &job.target) {
                Ok(expanded) => expanded,
                Err(e) => {
                    event.result = Err(e);
                    return self.push(event, None).await;
                }
            };
            job.compressed = false;
            job.digest = String::new();
            let writers = self.writers.get_or_insert_with(|| Writers::start(&tuning));
            let written = writers.submit_whole(job, vec![expanded]).await?;
            return self.push(event, Some(written)).await;
        }
        let writers = self.writers.get_or_insert_with(|| Writers::start(&tuning));
        // A small file is received whole and joins a batch; one that turns out larger than
        // announced streams like a large file, starting with what was received.
        let mut held = Vec::new();
        if !mode.symlink && event.file.stored_size <= tuning.batch_file_bytes as u64 {
            let mut size = 0;
            loop {
                match next_chunk(stream).await? {
                    Some(chunk) => {
                        size += chunk.len();
                        held.push(chunk);
                        if size > tuning.batch_file_bytes {
                            break;
                        }
                    }
                    None => {
                        let written = writers.submit_whole(job, held).await?;
                        return self.push(event, Some(written)).await;
                    }
                }
            }
        }
        // Small files received before this one are not held back while it streams.
        writers.flush().await?;
        let (feed, written) = writers.submit(job).await?;
        let mut open = true;
        for chunk in held {
            if !feed.chunk(chunk).await {
                open = false;
                break;
            }
        }
        while open && let Some(chunk) = next_chunk(stream).await? {
            open = feed.chunk(chunk).await;
        }
        if !open {
            // The writer failed; the rest of the content has nowhere to go.
            skip_chunks(stream).await?;
        }
        feed.end().await;
        self.push(event, Some(written)).await?;
        if mode.symlink {
            // Paths checked from here on must see the link.
            self.settle(true).await?;
            self.paths.forget();
        }
        Ok(())
    }

    /// The local mode for `file_type` in this workspace.
    fn mode(&mut self, file_type: &str) -> LocalMode {
        match &self.last_mode {
            Some((last, mode)) if last == file_type => *mode,
            _ => {
                let mode = LocalMode::for_type(file_type, self.ws.options.allwrite);
                self.last_mode = Some((file_type.to_string(), mode));
                mode
            }
        }
    }

    /// Queues a handled file for reporting, then reports whatever is finished.
    async fn push(&mut self, event: SyncEvent, written: Option<Written>) -> Result<()> {
        if written.is_some()
            && let Some(local) = &event.local
        {
            self.in_flight.insert(local.clone());
        }
        self.pending.push_back(Pending { event, written });
        self.settle(false).await
    }

    /// Reports pending files in stream order while they are finished; with `all`, waits for
    /// every one. Also waits when the backlog is full.
    async fn settle(&mut self, all: bool) -> Result<()> {
        while let Some(mut next) = self.pending.pop_front() {
            if let Some(mut written) = next.written.take() {
                let wait = all || self.pending.len() >= self.conn.tuning().report_backlog;
                let outcome = match written.try_recv() {
                    Ok(outcome) => outcome,
                    Err(TryRecvError::Empty) if wait => {
                        // The file may be in the batch no writer has taken yet. A failed hand-over
                        // drops the batch, and with it this file's outcome: it reports below.
                        if let Some(writers) = &mut self.writers {
                            let _ = writers.flush().await;
                        }
                        written.await.unwrap_or(Err(Error::WriterStopped))
                    }
                    Err(TryRecvError::Empty) => {
                        next.written = Some(written);
                        self.pending.push_front(next);
                        return Ok(());
                    }
                    Err(TryRecvError::Closed) => Err(Error::WriterStopped),
                };
                match outcome {
                    Ok(bytes) => next.event.bytes = bytes,
                    Err(e) => next.event.result = Err(e),
                }
                if let Some(local) = &next.event.local {
                    self.in_flight.remove(local);
                }
            }
            self.account(next.event).await?;
        }
        Ok(())
    }

    /// Counts, records and reports one finished file.
    async fn account(&mut self, event: SyncEvent) -> Result<()> {
        if event.result.is_ok() {
            self.totals.files += 1;
            self.totals.bytes += event.bytes;
            // A scheduled resolve: the server moved the have list itself.
            if self.record_have && event.file.action() != SyncAction::Resolve {
                let rev = if event.file.action() == SyncAction::Deleted {
                    0
                } else {
                    event.file.rev
                };
                self.have.push(&event.file.depot_file, rev).await?;
            }
        } else {
            self.totals.failed += 1;
        }
        (self.report)(&event);
        Ok(())
    }
}

async fn next_chunk(stream: &mut PeekStream<SyncMessage>) -> Result<Option<Vec<u8>>> {
    match stream.next().await? {
        Some(SyncMessage {
            body: Some(Body::Chunk(bytes)),
        }) => Ok(Some(bytes)),
        Some(other) => {
            stream.push_back(other);
            Ok(None)
        }
        None => Ok(None),
    }
}

async fn skip_chunks(stream: &mut PeekStream<SyncMessage>) -> Result<()> {
    while next_chunk(stream).await?.is_some() {}
    Ok(())
}
