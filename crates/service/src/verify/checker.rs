//! The checking pipeline of `verify`: worker threads at a low CPU priority read and hash stored
//! content while the calling thread walks the metadata, and the outcomes come back in the order
//! the files were queued.
//!
//! Memory is bounded: at most `page_size` files wait in the queue and at most two contents per
//! worker are being read or wait for a worker. A content is read at most once at a time (files
//! sharing it wait for the same read) and, while the cache remembers it, once per run.

use super::cache::CheckCache;
use super::{StoredFile, VerifiedFile, VerifyEvent, VerifyTotals, judge};
use crate::{Service, ServiceError};
use keel_blob::{BlobStore, CheckedContent, ContentCheck, check_content};
use keel_core::Digest;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::Scope;

/// A queued file and, when its content's check was already known, that check.
struct Queued {
    file: StoredFile,
    known: Option<ContentCheck>,
}

/// A content being read (or read, while queued files still wait for it).
struct Reading {
    /// Queued files waiting for this content.
    waiters: usize,
    result: Option<ContentCheck>,
}

/// Where checks run: worker threads, or (when none could start) the calling thread.
enum Workers {
    Threads {
        jobs: Option<mpsc::SyncSender<Digest>>,
        results: mpsc::Receiver<(Digest, CheckedContent)>,
    },
    Inline {
        blobs: Arc<dyn BlobStore>,
        buf: Vec<u8>,
        done: VecDeque<(Digest, CheckedContent)>,
    },
}

/// Checks queued files' content and hands their outcomes to a sink, in queue order.
pub(crate) struct Checker<'a> {
    service: &'a Service,
    sink: &'a mut dyn FnMut(VerifyEvent) -> Result<(), ServiceError>,
    problems_only: bool,
    workers: Workers,
    stop: Arc<AtomicBool>,
    queue: VecDeque<Queued>,
    reading: HashMap<Digest, Reading>,
    /// Contents handed to the workers and not yet back.
    running: usize,
    max_running: usize,
    cache: CheckCache,
    pub(crate) totals: VerifyTotals,
    /// Files and content bytes reported since the last progress event.
    since_progress: (usize, u64),
}

impl<'a> Checker<'a> {
    /// Starts the worker threads in `scope` (each lowers its own priority to `verify_nice`).
    pub(crate) fn start<'scope>(
        scope: &'scope Scope<'scope, '_>,
        service: &'a Service,
        problems_only: bool,
        sink: &'a mut dyn FnMut(VerifyEvent) -> Result<(), ServiceError>,
    ) -> Checker<'a> {
        let config = &service.config;
        let threads = config.verify_threads.max(1);
        let stop = Arc::new(AtomicBool::new(false));
        // One content in hand per worker and one waiting for each.
        let (job_tx, job_rx) = mpsc::sync_channel::<Digest>(threads);
        let (result_tx, result_rx) = mpsc::channel();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let mut started = 0;
        for _ in 0..threads {
            let (jobs, results, stop) = (job_rx.clone(), result_tx.clone(), stop.clone());
            let blobs = service.blobs.clone();
            let (nice, read_bytes) = (config.verify_nice, config.verify_read_bytes.max(1));
            let spawned = std::thread::Builder::new()
                .name("keel-verify".into())
                .spawn_scoped(scope, move || {
                    work(blobs.as_ref(), &jobs, &results, &stop, nice, read_bytes)
                });
            match spawned {
                Ok(_) => started += 1,
                Err(e) => tracing::warn!(error = %e, "could not start a verify thread"),
            }
        }
        let workers = if started > 0 {
            Workers::Threads {
                jobs: Some(job_tx),
                results: result_rx,
            }
        } else {
            Workers::Inline {
                blobs: service.blobs.clone(),
                buf: vec![0; config.verify_read_bytes.max(1)],
                done: VecDeque::new(),
            }
        };
        Checker {
            service,
            sink,
            problems_only,
            workers,
            stop,
            queue: VecDeque::new(),
            reading: HashMap::new(),
            running: 0,
            max_running: 2 * started.max(1),
            cache: CheckCache::new(config.verify_cache_entries),
            totals: VerifyTotals::default(),
            since_progress: (0, 0),
        }
    }

    /// Queues one file; reports every file whose outcome is known by now.
    pub(crate) fn check(&mut self, file: StoredFile) -> Result<(), ServiceError> {
        let digest = file.digest;
        let known = if let Some(reading) = self.reading.get_mut(&digest) {
            reading.waiters += 1;
            None
        } else if let Some(check) = self.cache.get(&digest) {
            Some(check.clone())
        } else {
            self.dispatch(digest)?;
            None
        };
        self.queue.push_back(Queued { file, known });
        self.report_ready()?;
        while self.queue.len() >= self.service.config.page_size.max(1) {
            self.receive()?;
            self.report_ready()?;
        }
        Ok(())
    }

    /// Reports every queued file, waiting for the contents still being read.
    pub(crate) fn finish(mut self) -> Result<VerifyTotals, ServiceError> {
        self.report_ready()?;
        while !self.queue.is_empty() {
            self.receive()?;
            self.report_ready()?;
        }
        Ok(self.totals.clone())
    }

    /// Hands a content to the workers, first waiting for one while all are busy.
    fn dispatch(&mut self, digest: Digest) -> Result<(), ServiceError> {
        while self.running >= self.max_running {
            self.receive()?;
            self.report_ready()?;
        }
        match &mut self.workers {
            Workers::Threads { jobs, .. } => {
                let sent = jobs.as_ref().is_some_and(|jobs| jobs.send(digest).is_ok());
                if !sent {
                    return Err(workers_gone());
                }
            }
            Workers::Inline { blobs, buf, done } => {
                let checked = check_content(blobs.as_ref(), &digest, buf, &|| false)
                    .expect("a check that is never stopped finishes");
                done.push_back((digest, checked));
            }
        }
        self.running += 1;
        self.reading.insert(
            digest,
            Reading {
                waiters: 1,
                result: None,
            },
        );
        Ok(())
    }

    /// Waits for one content's check and records it.
    fn receive(&mut self) -> Result<(), ServiceError> {
        let (digest, checked) = match &mut self.workers {
            Workers::Threads { results, .. } => results.recv().map_err(|_| workers_gone())?,
            Workers::Inline { done, .. } => done.pop_front().ok_or_else(workers_gone)?,
        };
        self.running -= 1;
        self.totals.contents_read += 1;
        self.totals.stored_bytes_read += checked.stored_bytes;
        self.cache.insert(digest, checked.check.clone());
        if let Some(reading) = self.reading.get_mut(&digest) {
            reading.result = Some(checked.check);
        }
        Ok(())
    }

    /// Reports queued files from the front for as long as their content's check is known.
    fn report_ready(&mut self) -> Result<(), ServiceError> {
        while let Some(front) = self.queue.front() {
            let digest = front.file.digest;
            let check = match &front.known {
                Some(check) => check.clone(),
                None => {
                    let Some(reading) = self.reading.get_mut(&digest) else {
                        return Err(workers_gone());
                    };
                    let Some(result) = &reading.result else {
                        return Ok(());
                    };
                    let check = result.clone();
                    reading.waiters -= 1;
                    if reading.waiters == 0 {
                        self.reading.remove(&digest);
                    }
                    check
                }
            };
            let queued = self.queue.pop_front().expect("the front was just read");
            self.report(queued.file, &check)?;
        }
        Ok(())
    }

    /// Reports one file's outcome, and the progress every so often.
    fn report(&mut self, file: StoredFile, check: &ContentCheck) -> Result<(), ServiceError> {
        let mut outcome = judge(&file, check);
        // Content missing because an obliterate removed its last reference while this verify
        // ran is not damage: the file is gone, and so is left out.
        if outcome == super::VerifyOutcome::Missing
            && !self.service.meta.snapshot()?.digest_in_use(&file.digest)?
        {
            return Ok(());
        }
        // A replica with on-demand content fetches what it lacks when a client needs it.
        if outcome == super::VerifyOutcome::Missing && self.service.blobs.fetches_on_demand() {
            outcome = super::VerifyOutcome::NotFetched;
        }
        self.totals.count(&file, &outcome);
        self.since_progress.0 += 1;
        self.since_progress.1 += file.size;
        let problem = !matches!(
            outcome,
            super::VerifyOutcome::Ok | super::VerifyOutcome::NotFetched
        );
        if !self.problems_only || problem {
            (self.sink)(VerifyEvent::File(VerifiedFile { file, outcome }))?;
        }
        let config = &self.service.config;
        if self.since_progress.0 >= config.page_size
            || self.since_progress.1 >= config.verify_progress_bytes
        {
            self.since_progress = (0, 0);
            (self.sink)(VerifyEvent::Progress(self.totals.clone()))?;
        }
        Ok(())
    }
}

impl Drop for Checker<'_> {
    /// Stops the workers: no more contents come, and a read in progress ends at its next chunk.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Workers::Threads { jobs, .. } = &mut self.workers {
            jobs.take();
        }
    }
}

/// A worker: checks contents until the jobs end or the verify stops.
fn work(
    blobs: &dyn BlobStore,
    jobs: &Mutex<mpsc::Receiver<Digest>>,
    results: &mpsc::Sender<(Digest, CheckedContent)>,
    stop: &AtomicBool,
    nice: i32,
    read_bytes: usize,
) {
    if let Err(e) = keel_store::thread_priority::lower_current_thread(nice) {
        // The checks then compete at the priority of the thread that started them.
        tracing::debug!(error = %e, "verify thread keeps its priority");
    }
    let mut buf = vec![0u8; read_bytes];
    loop {
        let job = jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv();
        let Ok(digest) = job else { return };
        let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_content(blobs, &digest, &mut buf, &|| stop.load(Ordering::Relaxed))
        }))
        .unwrap_or_else(|_| {
            Some(CheckedContent {
                check: ContentCheck::Unreadable {
                    reason: "checking this content failed unexpectedly (panic)".into(),
                },
                stored_bytes: 0,
            })
        });
        let Some(checked) = checked else { return };
        if results.send((digest, checked)).is_err() {
            return;
        }
    }
}

/// The workers ended before every content was checked (only when one panicked outside a
/// check, or the pipeline's bookkeeping broke).
fn workers_gone() -> ServiceError {
    ServiceError::ContentUnreadable {
        file: "verify".into(),
        reason: "the content checking threads stopped".into(),
    }
}
