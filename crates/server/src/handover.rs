//! The hand-over between a blocking producer thread and a gRPC response stream: a tokio
//! channel bounded by records, a byte budget on top, and a stream that drains the channel at
//! most once per pacing tick while records are flowing.
//!
//! A producer that is slower than the network (a long read scanning the database) would
//! otherwise hand over a record or two at a time, and each hand-over wakes a runtime thread.
//! Those threads run at the server's normal priority: for a long fstat that cost more CPU than
//! the niced producer itself spent reading (see BENCHMARKS.md,
//! Design choices). Pacing lets
//! records gather for one tick of the runtime's timer instead. An idle stream waits to be
//! woken by its next record, so the first record of a burst goes at once, and no record waits
//! longer than one tick for the producer's next one.

use crate::config::HandoverLimits;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use tokio::sync::mpsc::{self, error::TryRecvError};
use tokio_stream::Stream;
use tonic::Status;

/// What a stream carries: records, and an error as its last item.
type Item<T> = Result<T, Status>;

/// A new hand-over bounded by `limits`: the producer's end and the stream.
pub(crate) fn handover<T>(limits: HandoverLimits) -> (Producer<T>, Consumer<T>) {
    let (tx, rx) = mpsc::channel(limits.max_items.max(1));
    let budget = Arc::new(Budget {
        state: Mutex::new(BudgetState {
            queued: 0,
            gone: false,
        }),
        room: Condvar::new(),
        max: limits.max_bytes,
    });
    (
        Producer {
            tx,
            budget: budget.clone(),
        },
        Consumer {
            rx,
            budget,
            limits,
            current: Vec::new().into_iter(),
            flowing: false,
            pause: None,
        },
    )
}

/// The byte bound: encoded bytes in the channel, and whether the stream went away.
struct Budget {
    state: Mutex<BudgetState>,
    /// Signalled when the stream takes records or goes away.
    room: Condvar,
    max: usize,
}

struct BudgetState {
    queued: usize,
    gone: bool,
}

impl Budget {
    fn lock(&self) -> MutexGuard<'_, BudgetState> {
        // Nothing panics while holding the lock, and the state stays consistent if it did.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until `bytes` more fit (always, into an empty channel); false when the stream
    /// went away.
    fn take(&self, bytes: usize) -> bool {
        let mut state = self.lock();
        while !state.gone && state.queued > 0 && state.queued + bytes > self.max {
            state = self
                .room
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.queued += bytes;
        !state.gone
    }

    fn give_back(&self, bytes: usize) {
        self.lock().queued -= bytes;
        self.room.notify_all();
    }
}

/// The producer's end; dropping it ends the stream.
pub(crate) struct Producer<T> {
    tx: mpsc::Sender<(Item<T>, usize)>,
    budget: Arc<Budget>,
}

impl<T> Producer<T> {
    /// Queues `item` (`bytes` is its encoded size), waiting while the queue is full; false
    /// when the stream has gone away. Call it from a thread outside the async runtime.
    pub(crate) fn send(&self, item: Item<T>, bytes: usize) -> bool {
        self.budget.take(bytes) && self.tx.blocking_send((item, bytes)).is_ok()
    }
}

/// The stream's end: the records in order, one at a time.
pub(crate) struct Consumer<T> {
    rx: mpsc::Receiver<(Item<T>, usize)>,
    budget: Arc<Budget>,
    limits: HandoverLimits,
    current: std::vec::IntoIter<Item<T>>,
    /// Records arrived since the stream last waited: look again after a pause.
    flowing: bool,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

// Nothing in a `Consumer` is pinned in place (the pause is boxed).
impl<T> Unpin for Consumer<T> {}

impl<T> Consumer<T> {
    /// Makes `taken` the records to hand out and frees their bytes for the producer.
    fn deliver(&mut self, taken: Vec<(Item<T>, usize)>) {
        let bytes = taken.iter().map(|(_, b)| b).sum();
        self.budget.give_back(bytes);
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
                // Only the timer wakes a pausing stream; records gather meanwhile.
                if pause.as_mut().poll(cx).is_pending() {
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
        self.budget.lock().gone = true;
        self.budget.room.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use std::time::Instant;

    const MAX_ITEMS: usize = 2048;
    const MAX_BYTES: usize = 2 << 20;

    fn limits() -> HandoverLimits {
        HandoverLimits {
            max_items: MAX_ITEMS,
            max_bytes: MAX_BYTES,
            pace: Duration::from_millis(1),
        }
    }
    use tokio_stream::StreamExt;

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
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(consumer);
        let sent = tokio::task::spawn_blocking(move || feeder.join().unwrap())
            .await
            .unwrap();
        assert_eq!(sent, MAX_ITEMS as u32);
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
}
