//! The hand-over between a blocking producer thread and a gRPC response stream, on tokio's
//! primitives: a channel bounded by records, a semaphore of encoded bytes beside it, and a
//! stream that drains the channel at most once per pacing tick while records are flowing.
//!
//! A producer that is slower than the network (a long read scanning the database) would
//! otherwise hand over a record or two at a time, and each hand-over wakes a runtime thread.
//! Those threads run at the server's normal priority: for a long fstat that cost more CPU than
//! the niced producer itself spent reading (measured in BENCHMARKS.md's Design choices at
//! commit c1af4eb). Pacing lets
//! records gather for one tick of the runtime's timer instead. An idle stream waits to be
//! woken by its next record, so the first record of a burst goes at once, and no record waits
//! longer than one tick for the producer's next one.

use crate::config::HandoverLimits;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::runtime::Handle;
use tokio::sync::mpsc::{self, error::TryRecvError};
use tokio::sync::{Semaphore, TryAcquireError, oneshot};
use tokio_stream::Stream;
use tonic::Status;

/// What a stream carries: records, and an error as its last item.
type Item<T> = Result<T, Status>;

/// A new hand-over bounded by `limits`: the producer's end and the stream. Call it on the
/// runtime (the producer blocks on it while waiting for room).
pub(crate) fn handover<T>(limits: HandoverLimits) -> (Producer<T>, Consumer<T>) {
    let (tx, rx) = mpsc::channel(limits.max_items.max(1));
    let max_bytes = u32::try_from(limits.max_bytes).unwrap_or(u32::MAX).max(1);
    let bytes = Arc::new(Semaphore::new(max_bytes as usize));
    let (alive, producer_gone) = oneshot::channel();
    (
        Producer {
            tx,
            bytes: bytes.clone(),
            max_bytes,
            runtime: Handle::current(),
            _alive: alive,
        },
        Consumer {
            rx,
            bytes,
            limits,
            current: Vec::new().into_iter(),
            flowing: false,
            pause: None,
            producer_gone: Some(producer_gone),
        },
    )
}

/// The producer's end; dropping it ends the stream.
pub(crate) struct Producer<T> {
    /// Each record goes with the byte permits it holds until the stream takes it.
    tx: mpsc::Sender<(Item<T>, u32)>,
    /// Permits for the encoded bytes queued; closed when the stream goes away.
    bytes: Arc<Semaphore>,
    max_bytes: u32,
    runtime: Handle,
    /// Dropped with the producer: tells a pausing stream that no more records will come.
    _alive: oneshot::Sender<()>,
}

impl<T> Producer<T> {
    /// Queues `item` (`bytes` is its encoded size), waiting while the queue is full; false
    /// when the stream has gone away. Call it from a thread outside the async runtime.
    pub(crate) fn send(&self, item: Item<T>, bytes: usize) -> bool {
        // A record larger than the whole budget takes all of it: it passes alone.
        let permits = u32::try_from(bytes).unwrap_or(u32::MAX).min(self.max_bytes);
        let room = match self.bytes.try_acquire_many(permits) {
            Ok(permit) => Ok(permit),
            Err(TryAcquireError::Closed) => return false,
            Err(TryAcquireError::NoPermits) => {
                self.runtime.block_on(self.bytes.acquire_many(permits))
            }
        };
        match room {
            // The stream gives the permits back when it takes the record.
            Ok(permit) => permit.forget(),
            Err(_closed) => return false,
        }
        self.tx.blocking_send((item, permits)).is_ok()
    }
}

/// The stream's end: the records in order, one at a time.
pub(crate) struct Consumer<T> {
    rx: mpsc::Receiver<(Item<T>, u32)>,
    bytes: Arc<Semaphore>,
    limits: HandoverLimits,
    current: std::vec::IntoIter<Item<T>>,
    /// Records arrived since the stream last waited: look again after a pause.
    flowing: bool,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Resolves when the producer is gone, so a pause ends with it rather than with the timer.
    producer_gone: Option<oneshot::Receiver<()>>,
}

// Nothing in a `Consumer` is pinned in place (the pause is boxed).
impl<T> Unpin for Consumer<T> {}

impl<T> Consumer<T> {
    /// Makes `taken` the records to hand out and frees their bytes for the producer.
    fn deliver(&mut self, taken: Vec<(Item<T>, u32)>) {
        let permits: usize = taken.iter().map(|(_, p)| *p as usize).sum();
        self.bytes.add_permits(permits);
        self.current = taken
            .into_iter()
            .map(|(item, _)| item)
            .collect::<Vec<_>>()
            .into_iter();
        self.flowing = true;
    }
}

impl<T> Stream for Consumer<T> {
    type Item = Item<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        use std::future::Future;
        let this = self.get_mut();
        loop {
            if let Some(item) = this.current.next() {
                return Poll::Ready(Some(item));
            }
            if let Some(pause) = this.pause.as_mut() {
                // Records gather while the stream pauses; the timer or the producer's end wakes
                // it (a short reply's end must not wait out the tick).
                let gone = match this.producer_gone.as_mut() {
                    Some(gone) => Pin::new(gone).poll(cx).is_ready(),
                    None => true,
                };
                if gone {
                    this.producer_gone = None;
                } else if pause.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.pause = None;
            }
            // Take what is queued without asking to be woken (`try_recv` registers nothing).
            let mut taken = Vec::new();
            let mut ended = false;
            while taken.len() < this.limits.max_items {
                match this.rx.try_recv() {
                    Ok(entry) => taken.push(entry),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        ended = true;
                        break;
                    }
                }
            }
            if !taken.is_empty() {
                this.deliver(taken);
                continue;
            }
            if ended {
                return Poll::Ready(None);
            }
            if this.flowing {
                this.flowing = false;
                this.pause = Some(Box::pin(tokio::time::sleep(this.limits.pace)));
                continue;
            }
            // Idle: the next record (or the producer's end) wakes the stream.
            match this
                .rx
                .poll_recv_many(cx, &mut taken, this.limits.max_items)
            {
                Poll::Ready(0) => return Poll::Ready(None),
                Poll::Ready(_) => this.deliver(taken),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        // The channel closes with the receiver; a producer waiting for bytes learns it here.
        self.bytes.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use std::time::Instant;
    use tokio_stream::StreamExt;

    const MAX_ITEMS: usize = 2048;
    const MAX_BYTES: usize = 2 << 20;

    fn limits() -> HandoverLimits {
        HandoverLimits {
            max_items: MAX_ITEMS,
            max_bytes: MAX_BYTES,
            pace: Duration::from_millis(1),
        }
    }

    /// Waits until `ready` holds, at most five seconds (then the test's own assertion fails).
    async fn wait_until(ready: impl Fn() -> bool) {
        for _ in 0..5_000 {
            if ready() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// The feeder thread's count of records it got into the queue.
    async fn joined(feeder: std::thread::JoinHandle<u32>) -> u32 {
        tokio::task::spawn_blocking(move || feeder.join().expect("feeder thread"))
            .await
            .expect("join task")
    }

    /// Every record arrives in order, and the stream ends when the producer is dropped.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn delivers_in_order_through_a_full_queue() {
        let (producer, mut consumer) = handover::<u32>(limits());
        let feeder = std::thread::spawn(move || {
            // More than the queue holds, so the producer waits for room several times.
            for i in 0..(MAX_ITEMS as u32 * 5) {
                assert!(producer.send(Ok(i), 8));
            }
        });
        let mut next = 0;
        while let Some(item) = consumer.next().await {
            assert_eq!(item.unwrap(), next);
            next += 1;
        }
        assert_eq!(next, MAX_ITEMS as u32 * 5);
        feeder.join().unwrap();
    }

    /// A record larger than the byte bound still goes through an empty queue.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_oversized_record_passes_alone() {
        let (producer, mut consumer) = handover::<u32>(limits());
        let feeder = std::thread::spawn(move || {
            for i in 0..3 {
                assert!(producer.send(Ok(i), MAX_BYTES * 2));
            }
        });
        let got: Vec<u32> = (&mut consumer).map(Result::unwrap).collect().await;
        assert_eq!(got, vec![0, 1, 2]);
        feeder.join().unwrap();
    }

    /// A producer waiting for room learns that the client went away.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_stream_releases_a_waiting_producer() {
        let (producer, consumer) = handover::<u32>(limits());
        let feeder = std::thread::spawn(move || {
            let mut sent = 0u32;
            while producer.send(Ok(sent), 1) {
                sent += 1;
                assert!(sent <= MAX_ITEMS as u32 + 1, "the queue is not bounded");
            }
            sent
        });
        wait_until(|| consumer.rx.len() == MAX_ITEMS).await;
        drop(consumer);
        let sent = joined(feeder).await;
        assert_eq!(sent, MAX_ITEMS as u32);
    }

    /// Records wait for room by their encoded bytes too: four quarter-budget records fill the
    /// queue, and the fifth waits (here until the client goes away).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_byte_budget_bounds_the_queue() {
        let (producer, consumer) = handover::<u32>(limits());
        let feeder = std::thread::spawn(move || {
            let mut sent = 0u32;
            while producer.send(Ok(sent), MAX_BYTES / 4) {
                sent += 1;
                assert!(sent <= 5, "the byte budget does not bound the queue");
            }
            sent
        });
        wait_until(|| consumer.bytes.available_permits() == 0).await;
        drop(consumer);
        let sent = joined(feeder).await;
        assert_eq!(sent, 4);
    }

    /// Nothing is held back until the producer's next record: records queued before a long
    /// silence arrive during it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn records_before_a_silence_arrive_during_it() {
        let silence = Duration::from_millis(1_500);
        let (producer, mut consumer) = handover::<u32>(limits());
        let feeder = std::thread::spawn(move || {
            for i in 1..=3 {
                assert!(producer.send(Ok(i), 8));
            }
            std::thread::sleep(silence);
            assert!(producer.send(Err(Status::internal("late")), 0));
        });
        let began = Instant::now();
        for want in 1..=3 {
            assert_eq!(consumer.next().await.unwrap().unwrap(), want);
        }
        assert!(began.elapsed() < silence / 2, "took {:?}", began.elapsed());
        let last = consumer.next().await.unwrap().unwrap_err();
        assert_eq!(last.message(), "late");
        assert!(consumer.next().await.is_none());
        feeder.join().unwrap();
    }

    /// A stream ends when its producer does, not when its pacing tick runs out: with a pace
    /// of an hour, a one-record reply still ends at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_producers_end_cuts_a_pause_short() {
        let pace = Duration::from_secs(3600);
        let (producer, mut consumer) = handover::<u32>(HandoverLimits { pace, ..limits() });
        let feeder = std::thread::spawn(move || {
            assert!(producer.send(Ok(7), 8));
            // Give the stream time to take the record and start its pause before the end.
            std::thread::sleep(Duration::from_millis(50));
        });
        let drained = tokio::time::timeout(Duration::from_secs(60), async {
            let first = consumer.next().await.map(|r| r.unwrap());
            (first, consumer.next().await.is_none())
        })
        .await
        .expect("the stream ended long before its pause would have");
        assert_eq!(drained, (Some(7), true));
        feeder.join().unwrap();
    }
}
