//! Bridging blocking service calls to gRPC response streams with bounded buffering.
//!
//! Most calls run on tokio's blocking pool and stream through a hand-over queue. Small reads (one
//! file's fstat, one directory level, `changes -m 1`) are cheaper answered on the runtime thread
//! itself: [`Streams::read`] tries that first under a small budget of records and CPU time, and when
//! the answer turns out bigger, throws the partial answer away and runs the read again on the
//! blocking pool. Reads are snapshot-consistent and side-effect free, so running one twice is
//! safe; writes never take the inline path.
//!
//! A read that is not small (an fstat of a whole tree, a big sync) runs on a thread of its own
//! at a lower CPU priority (`ServerConfig::long_read_nice`). On a saturated machine the scheduler then
//! serves small reads, submits and the writer first: a long read takes longer, and nothing
//! waits behind it.
//!
//! Streamed records reach the runtime through a [`handover`](crate::handover) queue, which the
//! response stream drains at most once per timer tick while records flow: gRPC then packs many
//! messages into a few large HTTP/2 frames instead of one frame, one write and one wake-up per
//! record or two.

use crate::convert::WireError;
use keel_service::ServiceError;
use keel_service::command::Command;
use std::cell::{Cell, RefCell};

use crate::ServerConfig;
use crate::config::HandoverLimits;
use crate::handover::{Producer, handover};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio_stream::Stream;
use tonic::Status;

/// How streamed calls run: the knobs of inline reads, long reads and the hand-over queue, and
/// the count of long-read threads running now.
pub(crate) struct Streams {
    /// Most records an inline read may produce before it moves off the runtime.
    inline_items: usize,
    /// Most CPU time an inline read may spend on a runtime thread before it moves off the
    /// runtime. Measured as the thread's own CPU time, not wall time: on a busy machine a small
    /// read that is merely preempted must not be thrown away and rerun at the long reads' low
    /// priority.
    inline_time: Duration,
    /// Nice value (Linux, per thread) of threads serving long reads; runtime and writer
    /// threads stay at the server's own.
    long_read_nice: i32,
    /// Most long reads on threads of their own at once; more go to the blocking pool
    /// (bounded, queued, at normal priority).
    max_long_read_threads: usize,
    handover: HandoverLimits,
    long_read_threads: Arc<AtomicUsize>,
}

/// Counts one long-read thread for as long as it lives (also when its producer panics).
struct LongReadSlot(Arc<AtomicUsize>);

impl LongReadSlot {
    fn take(running: &Arc<AtomicUsize>, max: usize) -> Option<LongReadSlot> {
        if running.fetch_add(1, Ordering::AcqRel) < max {
            Some(LongReadSlot(running.clone()))
        } else {
            running.fetch_sub(1, Ordering::AcqRel);
            None
        }
    }
}

impl Drop for LongReadSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

pub(crate) type ResponseStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// Where a producer sends its records: a hand-over queue to the client, or an inline buffer.
pub(crate) struct Sink<T> {
    target: Target<T>,
    /// `keel_store::mapped_read_faults()` when the producer began (see [`trustworthy`]).
    faults: u64,
}

enum Target<T> {
    Queue(Producer<T>),
    Inline {
        items: RefCell<Vec<T>>,
        /// The budget: most records and most CPU time.
        max_items: usize,
        max_time: Duration,
        /// When the read began, by the wall clock and by the thread's CPU clock.
        began: Instant,
        began_cpu: Duration,
        overflowed: Cell<bool>,
    },
}

impl<T: prost::Message> Sink<T> {
    /// Sends one record; fails with `Cancelled` when the client went away (or an inline read
    /// ran over its budget). Waits while the hand-over queue is full (the client is behind).
    pub(crate) fn send(&self, item: T) -> Result<(), ServiceError> {
        trustworthy(self.faults)?;
        if keel_store::command::cancelled() {
            return Err(ServiceError::Cancelled);
        }
        match &self.target {
            Target::Queue(producer) => {
                let bytes = item.encoded_len();
                if producer.send(Ok(item), bytes) {
                    Ok(())
                } else {
                    Err(ServiceError::Cancelled)
                }
            }
            Target::Inline {
                items,
                max_items,
                max_time,
                began,
                began_cpu,
                overflowed,
            } => {
                let mut items = items.borrow_mut();
                // CPU time never exceeds wall time, so the thread's CPU clock (a system call,
                // unlike the wall clock) is read only once the wall clock allows an overrun.
                if items.len() >= *max_items
                    || (began.elapsed() > *max_time
                        && thread_cpu_time().saturating_sub(*began_cpu) > *max_time)
                {
                    overflowed.set(true);
                    return Err(ServiceError::Cancelled);
                }
                items.push(item);
                Ok(())
            }
        }
    }

    /// Queues `error` as the stream's last item; inline, does nothing.
    fn end_with(&self, error: Status) {
        if let Target::Queue(producer) = &self.target {
            // A client that went away gets nothing more.
            let _ = producer.send(Err(error), 0);
        }
    }
}

impl Streams {
    pub(crate) fn new(config: &ServerConfig) -> Streams {
        Streams {
            inline_items: config.inline_max_records,
            inline_time: Duration::from_micros(config.inline_cpu_micros),
            long_read_nice: config.long_read_nice,
            max_long_read_threads: config.long_read_threads,
            handover: config.handover(),
            long_read_threads: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Runs `produce` on the blocking pool, streaming what it sends; an error ends the stream.
    pub(crate) fn spawn<T, E, F>(&self, produce: F) -> ResponseStream<T>
    where
        T: prost::Message + 'static,
        E: WireError,
        F: FnOnce(&Sink<T>) -> Result<(), E> + Send + 'static,
    {
        let (producer, consumer) = handover(self.handover);
        let command = crate::monitor::current_counters();
        tokio::task::spawn_blocking(move || {
            let _command = keel_store::command::enter(command);
            let sink = Sink {
                faults: keel_store::mapped_read_faults(),
                target: Target::Queue(producer),
            };
            finish(&sink, produce(&sink));
        });
        Box::pin(consumer)
    }

    /// A read-only streamed call of `command`: answered inline when the command may be (its
    /// row's `small` flag), the request is `small` and the answer fits the inline budget, else
    /// (or when it does not fit) as a long read on a lower-priority thread.
    pub(crate) fn read<T, F>(
        &self,
        command: &'static Command,
        small: bool,
        produce: F,
    ) -> ResponseStream<T>
    where
        T: prost::Message + 'static,
        F: Fn(&Sink<T>) -> Result<(), ServiceError> + Send + 'static,
    {
        if command.inline(small) {
            let _command = keel_store::command::enter(crate::monitor::current_counters());
            let sink = Sink {
                faults: keel_store::mapped_read_faults(),
                target: Target::Inline {
                    items: RefCell::new(Vec::new()),
                    max_items: self.inline_items,
                    max_time: self.inline_time,
                    began: Instant::now(),
                    began_cpu: thread_cpu_time(),
                    overflowed: Cell::new(false),
                },
            };
            let result = produce(&sink);
            if let Target::Inline {
                items, overflowed, ..
            } = sink.target
                && !overflowed.get()
            {
                let mut out: Vec<Result<T, Status>> =
                    items.into_inner().into_iter().map(Ok).collect();
                if let Err(e) = result
                    && !matches!(e, ServiceError::Cancelled)
                {
                    out.push(Err(crate::convert::status(e)));
                }
                return Box::pin(tokio_stream::iter(out));
            }
        }
        self.spawn_long_read(produce)
    }

    /// Runs a long read on a thread of its own at the long-read nice value, streaming what it
    /// sends (on the blocking pool instead when the most long-read threads are running).
    fn spawn_long_read<T, F>(&self, produce: F) -> ResponseStream<T>
    where
        T: prost::Message + 'static,
        F: FnOnce(&Sink<T>) -> Result<(), ServiceError> + Send + 'static,
    {
        let Some(slot) = LongReadSlot::take(&self.long_read_threads, self.max_long_read_threads)
        else {
            return self.spawn(produce);
        };
        let (producer, consumer) = handover(self.handover);
        let nice = self.long_read_nice;
        let command = crate::monitor::current_counters();
        let run = move || {
            let _slot = slot;
            let _command = keel_store::command::enter(command);
            if let Err(e) = keel_store::thread_priority::lower_current_thread(nice) {
                // The read then competes at normal priority.
                tracing::debug!(error = %e, "long read keeps normal priority");
            }
            let sink = Sink {
                faults: keel_store::mapped_read_faults(),
                target: Target::Queue(producer),
            };
            finish(&sink, produce(&sink));
        };
        if let Err(e) = std::thread::Builder::new()
            .name("keel-long-read".into())
            .spawn(run)
        {
            // No thread to be had: the stream ends with the reason.
            tracing::warn!(error = %e, "could not start a thread for a long read");
            return Box::pin(tokio_stream::once(Err(Status::resource_exhausted(
                format!("server could not start a thread for this read: {e}"),
            ))));
        }
        Box::pin(consumer)
    }
}

/// CPU time the calling thread has used (zero where the clock is unavailable, which makes the
/// inline budget count records only).
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `now` is, and keeps no pointer to it.
    let result = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if result != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
}

/// Ends a producer's stream: an error other than a gone client goes as the last message (the
/// stream itself ends when the sink is dropped).
fn finish<T: prost::Message, E: WireError>(sink: &Sink<T>, result: Result<(), E>) {
    if let Err(e) = result
        && !e.is_cancelled()
    {
        tracing::debug!(error = %e, "streamed command failed");
        sink.end_with(crate::convert::status(e));
    }
}

/// Whether file arguments name single files, or the files of one directory (`*` in the last
/// path segment only, as `//depot/src/*` or `//depot/src/*.c`), so a read of them is likely
/// small. A big directory is caught by the inline budget and read again as a long read; `...`,
/// and `*` in a directory segment (which scans everything under the prefix before it), never
/// start inline.
pub(crate) fn small_file_args(files: &[String]) -> bool {
    !files.is_empty()
        && files.len() <= 16
        && files.iter().all(|f| {
            let dirs = f.rsplit_once('/').map_or("", |(dirs, _)| dirs);
            !f.contains("...") && !dirs.contains('*')
        })
}

/// Runs a blocking service call off the async workers.
pub(crate) async fn blocking<T, E, F>(f: F) -> Result<T, Status>
where
    T: Send + 'static,
    E: WireError,
    F: FnOnce() -> Result<T, E> + Send + 'static,
{
    let faults = keel_store::mapped_read_faults();
    let command = crate::monitor::current_counters();
    let answer = tokio::task::spawn_blocking(move || {
        let _command = keel_store::command::enter(command);
        f()
    })
    .await
    .map_err(|e| Status::internal(format!("server task failed: {e}")))?
    .map_err(crate::convert::status)?;
    trustworthy(faults).map_err(crate::convert::status)?;
    Ok(answer)
}

/// Fails when a read through a mapping of the metadata database hit an I/O error since
/// `faults` was taken: what was read meanwhile may be a page of zeros (see
/// `keel_store::mapped_read_faults`), so the answer is abandoned rather than sent.
fn trustworthy(faults: u64) -> Result<(), ServiceError> {
    if keel_store::mapped_read_faults() == faults {
        Ok(())
    } else {
        Err(ServiceError::Store(keel_store::StoreError::MappedReadFault))
    }
}

#[cfg(test)]
mod tests {
    use super::{Streams, small_file_args, thread_cpu_time};
    use crate::ServerConfig;
    use keel_proto::v1::FileRecord;
    use keel_service::ServiceError;
    use std::time::Duration;
    use tokio_stream::StreamExt;

    #[test]
    fn single_files_and_one_directory_start_inline() {
        let small = |files: &[&str]| {
            small_file_args(&files.iter().map(|f| f.to_string()).collect::<Vec<_>>())
        };
        assert!(small(&["//depot/src/a.c"]));
        assert!(small(&["//depot/src/*", "//depot/doc/*.md#head"]));
        assert!(small(&["//ws/src/a.c@2026/11/01"]));
        assert!(!small(&[]));
        assert!(!small(&["//depot/src/..."]));
        assert!(
            !small(&["//depot/*/a.c"]),
            "a directory wildcard scans the whole prefix"
        );
        assert!(
            !small(&["//depot/src/*@2026/11/01"]),
            "a date's slashes: taken as long"
        );
        assert!(!small(&["//depot/a"; 17]));
    }

    fn record(i: u32) -> FileRecord {
        FileRecord {
            depot_file: format!("//depot/f{i}"),
            head_rev: i,
            ..FileRecord::default()
        }
    }

    /// A streamed read delivers every record in order, then the producer's error last.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn streamed_read_delivers_every_record_then_its_error() {
        let streams = Streams::new(&ServerConfig::default());
        let mut stream = streams.spawn(|sink| {
            for i in 0..5_000 {
                sink.send(record(i))?;
                if i % 700 == 0 {
                    std::thread::sleep(Duration::from_millis(3));
                }
            }
            Err(ServiceError::NoSuchFiles {
                arg: "//depot/the-end".into(),
            })
        });
        let mut next = 0;
        let mut error = None;
        while let Some(item) = stream.next().await {
            match item {
                Ok(r) => {
                    assert!(error.is_none(), "a record after the error");
                    assert_eq!(r.head_rev, next);
                    next += 1;
                }
                Err(status) => error = Some(status.message().to_string()),
            }
        }
        assert_eq!(next, 5_000);
        assert_eq!(error.as_deref(), Some("//depot/the-end - no such file(s)"));
    }

    /// The inline budget counts work, not waiting: time spent off the CPU (here asleep, on a
    /// busy server preempted) does not use it up.
    #[test]
    fn thread_cpu_time_counts_work_not_waiting() {
        let before = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu_time().saturating_sub(before);
        assert!(slept < Duration::from_millis(25), "sleeping used {slept:?}");

        // Working does use it (bounded: at most ten million clock reads).
        let before = thread_cpu_time();
        let worked = (0..10_000_000u32)
            .map(|_| thread_cpu_time().saturating_sub(before))
            .find(|used| *used >= Duration::from_millis(5));
        assert!(worked.is_some(), "5 ms of work did not show as CPU time");
    }
}
