//! The hand-over between a blocking producer thread and a gRPC response stream: a bounded
//! queue the producer fills and the runtime drains, at most once per [`PACE`] while records
//! are flowing.
//!
//! A producer that is slower than the network (a long read scanning the database) would
//! otherwise hand over a record or two at a time, and each hand-over parks and wakes a runtime
//! thread. Those threads run at the server's normal priority, so the hand-overs could cost more
//! CPU than the niced producer itself spends reading (see BENCHMARKS.md, Design choices).
//! Pacing lets records gather for one tick of the runtime's timer instead. An idle stream waits to be
//! woken by its next record, so the first record of a burst goes at once, and no record waits
//! longer than one tick for the producer's next one.

use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio_stream::Stream;
use tonic::Status;

/// How long a stream whose records are flowing waits before it takes what has gathered (the
/// resolution of tokio's timer).
const PACE: Duration = Duration::from_millis(1);

/// Most records queued before the producer waits for the client.
const MAX_ITEMS: usize = 2048;

/// Most encoded bytes queued before the producer waits (one record may exceed it alone).
const MAX_BYTES: usize = 2 << 20;

/// What a stream carries: records, and an error as its last item.
type Item<T> = Result<T, Status>;

/// A new hand-over: the producer's end and the stream.
pub(crate) fn handover<T>() -> (Producer<T>, Consumer<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: Vec::new(),
            bytes: 0,
            finished: false,
            gone: false,
            waiting: None,
        }),
        room: Condvar::new(),
    });
    (
        Producer {
            shared: shared.clone(),
        },
        Consumer {
            shared,
            current: Vec::new().into_iter(),
            flowing: false,
            pause: None,
        },
    )
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// Signalled when the stream takes the queue or goes away.
    room: Condvar,
}

struct State<T> {
    items: Vec<Item<T>>,
    bytes: usize,
    /// The producer is done (or gone): nothing more will be queued.
    finished: bool,
    /// The stream was dropped (the client went away).
    gone: bool,
    /// The stream, when it is waiting for its next record (not while pausing).
    waiting: Option<Waker>,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Nothing panics while holding the lock, and the state stays consistent if it did.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The producer's end; dropping it ends the stream.
pub(crate) struct Producer<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Producer<T> {
    /// Queues `item` (`bytes` is its encoded size), waiting while the queue is full; false
    /// when the stream has gone away.
    pub(crate) fn send(&self, item: Item<T>, bytes: usize) -> bool {
        let mut state = self.shared.lock();
        loop {
            if state.gone {
                return false;
            }
            let fits = state.items.len() < MAX_ITEMS && state.bytes + bytes <= MAX_BYTES;
            if state.items.is_empty() || fits {
                break;
            }
            state = self
                .shared
                .room
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.items.push(item);
        state.bytes += bytes;
        let waiting = state.waiting.take();
        drop(state);
        if let Some(waker) = waiting {
            waker.wake();
        }
        true
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.finished = true;
        let waiting = state.waiting.take();
        drop(state);
        if let Some(waker) = waiting {
            waker.wake();
        }
    }
}

/// The stream's end: the records in order, one at a time.
pub(crate) struct Consumer<T> {
    shared: Arc<Shared<T>>,
    current: std::vec::IntoIter<Item<T>>,
    /// Records arrived since the stream last waited: look again after a pause.
    flowing: bool,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

// Nothing in a `Consumer` is pinned in place (the pause is boxed).
impl<T> Unpin for Consumer<T> {}

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
            let mut state = this.shared.lock();
            if !state.items.is_empty() {
                this.current = std::mem::take(&mut state.items).into_iter();
                state.bytes = 0;
                drop(state);
                this.shared.room.notify_one();
                this.flowing = true;
                continue;
            }
            if state.finished {
                return Poll::Ready(None);
            }
            if this.flowing {
                drop(state);
                this.flowing = false;
                this.pause = Some(Box::pin(tokio::time::sleep(PACE)));
                continue;
            }
            state.waiting = Some(cx.waker().clone());
            return Poll::Pending;
        }
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        self.shared.lock().gone = true;
        self.shared.room.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;
    use tokio_stream::StreamExt;

    /// Every record arrives in order, and the stream ends when the producer is dropped.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn delivers_in_order_through_a_full_queue() {
        let (producer, mut consumer) = handover::<u32>();
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
        let (producer, mut consumer) = handover::<u32>();
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
        let (producer, consumer) = handover::<u32>();
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
        let (producer, mut consumer) = handover::<u32>();
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
