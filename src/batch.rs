//! Verify many descriptors or messages on all cores with one shared
//! [`Verifier`] (or any shared verifying closure).
//!
//! [`run_ordered`] pulls items from an iterator on the calling thread,
//! hands them to a scoped pool of worker threads and gives the results to
//! a sink on the calling thread **in input order**. At most
//! [`BatchOptions::window`] items are in flight at any time (pulled from
//! the input and not yet given to the sink), so memory is bounded by the
//! window, never by the input's size: a directory of a million descriptors
//! or an endless JSON Lines stream is verified in constant memory.
//!
//! ```
//! use agentsig::batch::{verify_descriptors, BatchOptions};
//! use agentsig::trust::{KeySource, StaticKeys};
//! use agentsig::verifier::Verifier;
//! use agentsig::{descriptor, Algorithm, SigningKey};
//!
//! let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
//! let docs: Vec<(Vec<u8>, String)> = (0..8)
//!     .map(|i| {
//!         let d = format!(r#"{{"name":"agent {i}"}}"#).into_bytes();
//!         let jws = descriptor::sign(&d, &key)
//!             .unwrap()
//!             .jws;
//!         (d, jws)
//!     })
//!     .collect();
//! let v = Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned))
//!     .build();
//! let mut order = Vec::new();
//! verify_descriptors(&v, docs, &BatchOptions::default(), |i, r| {
//!     assert!(r.is_ok_and(|r| r.verified()));
//!     order.push(i);
//! });
//! assert_eq!(order, (0..8).collect::<Vec<_>>());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::descriptor::{DescriptorError, Report};
use crate::verifier::Verifier;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};

/// Finished items and the condition the calling thread waits on.
type Done<R> = (Mutex<Vec<(usize, std::thread::Result<R>)>>, Condvar);

/// How many threads and how many items in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchOptions {
    /// Worker threads (at least one); default: the number of cores.
    pub threads: usize,
    /// Most items pulled from the input and not yet given to the sink (at
    /// least one); default: 16 per thread.
    pub window: usize,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions::with_threads(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        )
    }
}

impl BatchOptions {
    /// `threads` workers and a window of 16 items per worker.
    pub fn with_threads(threads: usize) -> BatchOptions {
        let threads = threads.clamp(1, MAX_THREADS);
        BatchOptions {
            threads,
            window: threads * 16,
        }
    }
}

/// Most worker threads [`run_ordered`] starts.
pub const MAX_THREADS: usize = 256;

/// Run `work` over every item of `items` on [`BatchOptions::threads`]
/// scoped threads and give each result to `sink` with its input index, in
/// input order, on the calling thread.
///
/// The input iterator is driven on the calling thread only (it need not be
/// `Send`), and never more than [`BatchOptions::window`] items ahead of
/// the sink. A panic in `work` is propagated to the caller once the other
/// workers have stopped.
pub fn run_ordered<I, T, R, W, S>(items: I, opts: &BatchOptions, work: W, sink: S)
where
    I: IntoIterator<Item = T>,
    T: Send,
    R: Send,
    W: Fn(T) -> R + Sync,
    S: FnMut(usize, R),
{
    run_ordered_grouped(items, opts, work, sink, || {});
}

/// [`run_ordered`], calling `flush` on the calling thread after each group
/// of results given to `sink`, before it waits for more. A sink that
/// buffers its output (one write for a group instead of one per item)
/// writes it out there, so no result it was given waits for a later one.
///
/// ```
/// use agentsig::batch::{run_ordered_grouped, BatchOptions};
/// use std::cell::RefCell;
///
/// let (buffer, out) = (RefCell::new(String::new()), RefCell::new(String::new()));
/// run_ordered_grouped(
///     1..=3,
///     &BatchOptions::with_threads(2),
///     |n: u32| n * n,
///     |_, sq| buffer.borrow_mut().push_str(&format!("{sq}\n")),
///     || out.borrow_mut().push_str(&buffer.take()),
/// );
/// assert_eq!(out.take(), "1\n4\n9\n");
/// ```
pub fn run_ordered_grouped<I, T, R, W, S, F>(
    items: I,
    opts: &BatchOptions,
    work: W,
    mut sink: S,
    mut flush: F,
) where
    I: IntoIterator<Item = T>,
    T: Send,
    R: Send,
    W: Fn(T) -> R + Sync,
    S: FnMut(usize, R),
    F: FnMut(),
{
    let threads = opts.threads.clamp(1, MAX_THREADS);
    let window = opts.window.max(1);
    let mut items = items.into_iter();
    let (job_tx, job_rx) = mpsc::channel::<(usize, T)>();
    let job_rx = Mutex::new(job_rx);
    // Results are handed back in groups: a worker wakes the calling thread
    // only when `batch` results wait or when it runs out of jobs, not for
    // every item (one wake-up and context switch per item cost as much as
    // a tenth of a descriptor verification on two cores).
    let done: Done<R> = (Mutex::new(Vec::new()), Condvar::new());
    let batch = (window / 4).max(1);
    // Jobs sent and not yet taken by a worker.
    let queued = &AtomicUsize::new(0);
    let work = &work;
    let job_rx = &job_rx;
    let done = &done;
    let mut panic = None;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(move || loop {
                // The lock is held only to take one job.
                let job = match job_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok((i, item)) = job else { return };
                queued.fetch_sub(1, Ordering::SeqCst);
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(item)));
                let waiting = {
                    let mut g = done.0.lock().unwrap_or_else(|p| p.into_inner());
                    g.push((i, r));
                    g.len()
                };
                // Wake the calling thread for a group of results, or when
                // no job is left to do (it must pull more or finish).
                if waiting >= batch || queued.load(Ordering::SeqCst) == 0 {
                    done.1.notify_one();
                }
            });
        }
        // Results waiting for an earlier one: slot k is index next + k.
        let mut pending: VecDeque<Option<R>> = VecDeque::new();
        let (mut next, mut pulled, mut exhausted) = (0usize, 0usize, false);
        let mut got = Vec::new();
        'run: loop {
            while !exhausted && pulled - next < window {
                match items.next() {
                    Some(item) => {
                        queued.fetch_add(1, Ordering::SeqCst);
                        if job_tx.send((pulled, item)).is_err() {
                            exhausted = true;
                            break;
                        }
                        pulled += 1;
                    }
                    None => exhausted = true,
                }
            }
            if next == pulled {
                break;
            }
            {
                let mut g = done.0.lock().unwrap_or_else(|p| p.into_inner());
                while g.is_empty() {
                    g = done.1.wait(g).unwrap_or_else(|p| p.into_inner());
                }
                std::mem::swap(&mut *g, &mut got);
            }
            for (i, r) in got.drain(..) {
                let r = match r {
                    Ok(r) => r,
                    Err(p) => {
                        panic = Some(p);
                        break 'run;
                    }
                };
                let k = i - next;
                if pending.len() <= k {
                    pending.resize_with(k + 1, || None);
                }
                pending[k] = Some(r);
            }
            let before = next;
            while let Some(Some(_)) = pending.front() {
                if let Some(Some(r)) = pending.pop_front() {
                    sink(next, r);
                    next += 1;
                }
            }
            if next != before {
                flush();
            }
        }
        // Workers end when the job channel closes.
        drop(job_tx);
    });
    if let Some(p) = panic {
        std::panic::resume_unwind(p);
    }
}

/// Verify descriptors against their detached JWS (`(descriptor bytes, JWS
/// text)` pairs) with one shared verifier, on all cores; results in input
/// order (see [`run_ordered`]).
pub fn verify_descriptors<I, S>(v: &Verifier, items: I, opts: &BatchOptions, sink: S)
where
    I: IntoIterator<Item = (Vec<u8>, String)>,
    S: FnMut(usize, Result<Report, DescriptorError>),
{
    run_ordered(
        items,
        opts,
        |(d, jws): (Vec<u8>, String)| v.verify_descriptor(&d, &jws),
        sink,
    );
}

/// Verify `http::Response`s with RFC 9421 (each with its related request
/// when there is one) with one shared verifier, on all cores; results in
/// input order (see [`run_ordered`]).
pub fn verify_responses<I, B, S>(v: &Verifier, scheme: &str, items: I, opts: &BatchOptions, sink: S)
where
    I: IntoIterator<Item = (http::Response<B>, Option<http::Request<B>>)>,
    B: AsRef<[u8]> + Send,
    S: FnMut(usize, Result<crate::httpsig::VerifyReport, crate::httpsig::HttpSigError>),
{
    run_ordered(
        items,
        opts,
        |(res, req): (http::Response<B>, Option<http::Request<B>>)| {
            let m = crate::httpsig::Message::from_response(&res)?;
            let related = match &req {
                Some(q) => Some(crate::httpsig::Message::from_request(q, scheme)?),
                None => None,
            };
            v.verify_http(&m, related.as_ref())
        },
        sink,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// An iterator that counts how many items were taken.
    struct Counting<'a> {
        n: usize,
        total: usize,
        taken: &'a AtomicUsize,
    }
    impl Iterator for Counting<'_> {
        type Item = usize;
        fn next(&mut self) -> Option<usize> {
            if self.n == self.total {
                return None;
            }
            self.n += 1;
            self.taken.fetch_add(1, Ordering::SeqCst);
            Some(self.n - 1)
        }
    }

    #[test]
    fn results_come_in_input_order_whatever_order_they_finish_in() {
        let opts = BatchOptions {
            threads: 4,
            window: 8,
        };
        let mut seen = Vec::new();
        // Early items are slow and later ones fast: they finish out of order.
        run_ordered(
            0..200usize,
            &opts,
            |i| {
                if i % 7 == 0 {
                    std::thread::yield_now();
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                i * 2
            },
            |i, r| seen.push((i, r)),
        );
        let want: Vec<_> = (0..200).map(|i| (i, i * 2)).collect();
        assert_eq!(seen, want);
    }

    /// Results go back to the calling thread in groups (a worker wakes it
    /// for `window / 4` results, or when no job is left): every shape of
    /// pool and window, uneven work, the tail of the input, and a window
    /// smaller than the pool all finish with every result, in order.
    #[test]
    fn grouped_results_never_strand_the_caller() {
        for threads in 1..=4 {
            for window in [1, 2, 3, 5, 8, 13, 64] {
                for n in [0usize, 1, 2, 7, 61] {
                    let opts = BatchOptions { threads, window };
                    let mut seen = Vec::new();
                    run_ordered(
                        0..n,
                        &opts,
                        |i| {
                            // Uneven work: some items take many turns.
                            for _ in 0..(i % 5) * 50 {
                                std::thread::yield_now();
                            }
                            i + 1
                        },
                        |i, r| seen.push((i, r)),
                    );
                    let want: Vec<_> = (0..n).map(|i| (i, i + 1)).collect();
                    assert_eq!(seen, want, "{threads} threads, window {window}, {n} items");
                }
            }
        }
    }

    #[test]
    fn at_most_window_items_are_in_flight() {
        for (threads, window) in [(1, 1), (2, 3), (4, 5), (3, 64)] {
            let taken = AtomicUsize::new(0);
            let opts = BatchOptions { threads, window };
            let mut emitted = 0usize;
            let mut most = 0usize;
            let items = Counting {
                n: 0,
                total: 300,
                taken: &taken,
            };
            run_ordered(
                items,
                &opts,
                |i| {
                    // In flight as seen from a worker: taken, not yet emitted.
                    i
                },
                |i, r| {
                    assert_eq!(i, r);
                    let in_flight = taken.load(Ordering::SeqCst) - emitted;
                    most = most.max(in_flight);
                    emitted += 1;
                },
            );
            assert_eq!(emitted, 300);
            assert!(
                most <= window,
                "threads {threads} window {window}: {most} in flight"
            );
            assert!(most >= 1);
        }
    }

    /// `flush` follows every group: each result given to the sink is
    /// flushed before the calling thread waits again (so before the end),
    /// and `flush` is never called without a new result.
    #[test]
    fn every_result_is_flushed_and_flush_never_runs_empty() {
        let given = std::cell::Cell::new(0usize);
        let flushed = std::cell::Cell::new(0usize);
        let empty_flushes = std::cell::Cell::new(0usize);
        run_ordered_grouped(
            0..500u64,
            &BatchOptions {
                threads: 3,
                window: 8,
            },
            |i| {
                if i % 7 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                i
            },
            |i, r| {
                assert_eq!(i as u64, r);
                given.set(given.get() + 1);
            },
            || {
                if given.get() == flushed.get() {
                    empty_flushes.set(empty_flushes.get() + 1);
                }
                flushed.set(given.get());
            },
        );
        assert_eq!(given.get(), 500);
        assert_eq!(flushed.get(), 500, "the last group was flushed");
        assert_eq!(empty_flushes.get(), 0);
    }

    #[test]
    fn an_empty_input_gives_nothing() {
        let mut n = 0;
        run_ordered(
            std::iter::empty::<u8>(),
            &BatchOptions::default(),
            |x| x,
            |_, _| n += 1,
        );
        assert_eq!(n, 0);
    }

    #[test]
    fn a_panic_in_work_reaches_the_caller() {
        let r = std::panic::catch_unwind(|| {
            run_ordered(
                0..10u8,
                &BatchOptions::with_threads(2),
                |x| {
                    assert!(x != 5, "item five");
                    x
                },
                |_, _| {},
            )
        });
        assert!(r.is_err());
    }

    #[test]
    fn descriptors_failures_are_reported_per_item() {
        use crate::trust::{KeySource, StaticKeys};
        use crate::{Algorithm, SigningKey};
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let other = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let v = Verifier::builder(
            StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned),
        )
        .build();
        let items: Vec<(Vec<u8>, String)> = (0..30)
            .map(|i| {
                let d = format!(r#"{{"name":"agent {i}"}}"#).into_bytes();
                let signer = if i % 3 == 1 { &other } else { &key };
                let jws = crate::descriptor::sign(&d, signer).unwrap().jws;
                if i % 3 == 2 {
                    (format!(r#"{{"name":"tampered {i}"}}"#).into_bytes(), jws)
                } else {
                    (d, jws)
                }
            })
            .collect();
        let mut out = Vec::new();
        verify_descriptors(&v, items, &BatchOptions::with_threads(3), |i, r| {
            out.push((i, r.is_ok_and(|r| r.verified())))
        });
        let want: Vec<_> = (0..30).map(|i| (i, i % 3 == 0)).collect();
        assert_eq!(out, want);
    }

    /// A response and the request it answers.
    type Exchange = (http::Response<Vec<u8>>, Option<http::Request<Vec<u8>>>);

    #[test]
    fn responses_are_verified_in_order_with_failures_per_item() {
        use crate::httpsig::SignHttp;
        use crate::httpsig::{ComponentId, Derived, HttpPolicy, SignatureSpec};
        use crate::trust::{KeySource, StaticKeys};
        use crate::{Algorithm, SigningKey};
        let key = SigningKey::generate(Algorithm::Ed25519)
            .unwrap()
            .with_kid("k");
        let now = crate::clock::Clock::now(&crate::clock::SystemClock);
        let v = Verifier::builder(
            StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned),
        )
        .http(HttpPolicy::default())
        .build();
        let items: Vec<Exchange> = (0..12)
            .map(|i| {
                let mut res = http::Response::builder()
                    .status(200)
                    .header("x-n", i.to_string())
                    .body(Vec::new())
                    .unwrap();
                let spec = SignatureSpec::new("sig1")
                    .component(ComponentId::derived(Derived::Status))
                    .component(ComponentId::field("x-n").unwrap())
                    .created(now)
                    .keyid("k");
                res.sign_signature(&spec, &key).unwrap();
                if i % 4 == 3 {
                    res.headers_mut()
                        .insert("x-n", http::HeaderValue::from_static("tampered"));
                }
                (res, None)
            })
            .collect();
        let mut out = Vec::new();
        verify_responses(
            &v,
            "https",
            items,
            &BatchOptions::with_threads(3),
            |i, r| out.push((i, r.is_ok_and(|r| r.all_valid()))),
        );
        let want: Vec<_> = (0..12).map(|i| (i, i % 4 != 3)).collect();
        assert_eq!(out, want);
    }
}
