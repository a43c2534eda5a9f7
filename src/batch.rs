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
//! [`run_grouped`] with [`Order::Finished`] gives each result as soon as
//! it is known instead (what `agentsig verify --batch` prints by default).
//!
//! For local inputs, [`LocalFiles`] reads only regular files (never
//! blocking on a FIFO), bounded, optionally only under a root, and
//! [`verify_document`] verifies one document by the rule `agentsig verify
//! FILE` uses for its format.
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
    sink: S,
    flush: F,
) where
    I: IntoIterator<Item = T>,
    T: Send,
    R: Send,
    W: Fn(T) -> R + Sync,
    S: FnMut(usize, R),
    F: FnMut(),
{
    run_grouped(items, opts, Order::Input, work, sink, flush);
}

/// The order in which [`run_grouped`] gives results to its sink.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Each result as soon as it is known (the default of `agentsig
    /// verify --batch`): a slow item never holds back the results of
    /// items that finished after it started. The sink gets the input
    /// index with each result.
    #[default]
    Finished,
    /// In input order: a result waits until every earlier one is given
    /// (`verify --batch --ordered`).
    Input,
}

/// [`run_ordered_grouped`] with the [`Order`] of the results chosen:
/// `flush` runs on the calling thread after each group given to `sink`,
/// before it waits for more. At most [`BatchOptions::window`] items are
/// pulled and not yet given to the sink, whatever the order.
///
/// ```
/// use agentsig::batch::{run_grouped, BatchOptions, Order};
///
/// let mut seen = Vec::new();
/// run_grouped(0..4u32, &BatchOptions::with_threads(2), Order::Finished, |n| n * n,
///     |i, sq| seen.push((i, sq)), || {});
/// seen.sort();
/// assert_eq!(seen, [(0, 0), (1, 1), (2, 4), (3, 9)]);
/// ```
pub fn run_grouped<I, T, R, W, S, F>(
    items: I,
    opts: &BatchOptions,
    order: Order,
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
    // a tenth of a descriptor verification on two cores). Results given
    // as they finish wake it for every result: none waits for a group.
    let done: Done<R> = (Mutex::new(Vec::new()), Condvar::new());
    let batch = match order {
        Order::Input => (window / 4).max(1),
        Order::Finished => 1,
    };
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
        // In input order: results waiting for an earlier one (slot k is
        // index next + k).
        let mut pending: VecDeque<Option<R>> = VecDeque::new();
        // `given` results went to the sink; `next` is the next index due
        // in input order.
        let (mut next, mut given, mut pulled, mut exhausted) = (0usize, 0usize, 0usize, false);
        let mut got = Vec::new();
        'run: loop {
            while !exhausted && pulled - given < window {
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
            if given == pulled {
                break;
            }
            {
                let mut g = done.0.lock().unwrap_or_else(|p| p.into_inner());
                while g.is_empty() {
                    g = done.1.wait(g).unwrap_or_else(|p| p.into_inner());
                }
                std::mem::swap(&mut *g, &mut got);
            }
            let before = given;
            for (i, r) in got.drain(..) {
                let r = match r {
                    Ok(r) => r,
                    Err(p) => {
                        panic = Some(p);
                        break 'run;
                    }
                };
                if order == Order::Finished {
                    sink(i, r);
                    given += 1;
                    continue;
                }
                let k = i - next;
                if pending.len() <= k {
                    pending.resize_with(k + 1, || None);
                }
                pending[k] = Some(r);
            }
            while let Some(Some(_)) = pending.front() {
                if let Some(Some(r)) = pending.pop_front() {
                    sink(next, r);
                    next += 1;
                    given += 1;
                }
            }
            if given != before {
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

/// Largest local input a batch reads (a descriptor, a card, a JWS): the
/// verifier's document bound, [`crate::json::JsonLimits`] (16 MiB).
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;

/// Why a local input of a batch was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not a regular file (a FIFO, a device, a socket, a directory): a
    /// batch never waits on one.
    #[error("{path}: is a {kind}, not a regular file; a batch reads only regular files")]
    NotRegular {
        /// The path as given.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// Larger than [`MAX_INPUT_BYTES`].
    #[error("{path}: larger than {limit} bytes")]
    TooLarge {
        /// The path as given.
        path: String,
        /// The bound.
        limit: usize,
    },
    /// The path resolves outside the root the batch was given.
    #[error("{path}: outside the root {root}; only files under it are read")]
    OutsideRoot {
        /// The path as given.
        path: String,
        /// The root.
        root: String,
    },
    /// `-` as an entry: standard input is not an input of a batch (it is
    /// the list itself, or nothing).
    #[error("\"-\" is not an input of a batch: standard input is never read as a descriptor; give a file path, a URL, or (in JSON Lines) the content inline as {{\"descriptor\",\"jws\"}}")]
    Stdin,
    /// A local path where local files are not allowed (JSON Lines on
    /// standard input without a root).
    #[error("{path}: a local path given on standard input is refused unless a root is set (--root DIR); give the content inline as {{\"descriptor\",\"jws\"}}, or a URL")]
    PathsRefused {
        /// The path as given.
        path: String,
    },
}

/// Which local files a batch may read, and how: only regular files (a
/// FIFO, a device or a socket is refused without blocking on it), at most
/// [`MAX_INPUT_BYTES`], and, under a root, only files whose real path
/// (every symbolic link resolved) lies under it.
#[derive(Clone, Debug)]
pub struct LocalFiles {
    root: Option<std::path::PathBuf>,
    allowed: bool,
}

impl LocalFiles {
    /// Any local file the process can read (paths the operator listed).
    pub fn anywhere() -> LocalFiles {
        LocalFiles {
            root: None,
            allowed: true,
        }
    }

    /// No local file: every path is refused with
    /// [`InputError::PathsRefused`] (paths that came from an untrusted
    /// stream).
    pub fn refused() -> LocalFiles {
        LocalFiles {
            root: None,
            allowed: false,
        }
    }

    /// Only files under `root` (resolved once, now).
    ///
    /// # Errors
    /// The root cannot be resolved.
    pub fn under(root: &std::path::Path) -> std::io::Result<LocalFiles> {
        Ok(LocalFiles {
            root: Some(std::fs::canonicalize(root)?),
            allowed: true,
        })
    }

    /// Read the regular file at `path`, bounded; see [`LocalFiles`].
    ///
    /// # Errors
    /// [`InputError`] saying which rule refused it or why it could not be read.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, InputError> {
        if path == "-" {
            return Err(InputError::Stdin);
        }
        if !self.allowed {
            return Err(InputError::PathsRefused {
                path: path.to_owned(),
            });
        }
        let io = |source| InputError::Io {
            path: path.to_owned(),
            source,
        };
        let real = match &self.root {
            Some(root) => {
                let real = std::fs::canonicalize(path).map_err(io)?;
                if !real.starts_with(root) {
                    return Err(InputError::OutsideRoot {
                        path: path.to_owned(),
                        root: root.to_string_lossy().into_owned(),
                    });
                }
                real
            }
            None => std::path::PathBuf::from(path),
        };
        let f = open_nonblocking(&real).map_err(io)?;
        let meta = f.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(InputError::NotRegular {
                path: path.to_owned(),
                kind: file_kind(&meta.file_type()),
            });
        }
        let mut buf = Vec::with_capacity(
            usize::try_from(meta.len()).map_or(MAX_INPUT_BYTES, |n| n.min(MAX_INPUT_BYTES) + 1),
        );
        std::io::Read::read_to_end(
            &mut std::io::Read::take(f, MAX_INPUT_BYTES as u64 + 1),
            &mut buf,
        )
        .map_err(io)?;
        if buf.len() > MAX_INPUT_BYTES {
            return Err(InputError::TooLarge {
                path: path.to_owned(),
                limit: MAX_INPUT_BYTES,
            });
        }
        Ok(buf)
    }
}

/// Open for reading without blocking: opening a FIFO with no writer
/// blocks forever unless `O_NONBLOCK` is given (POSIX `open`, "O_NONBLOCK
/// ... for a FIFO"); the kind is checked on the open file right after.
fn open_nonblocking(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    o.open(path)
}

/// What a file that is not a regular file is, for messages.
fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "device";
        }
    }
    if t.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// Verify one local document as `agentsig verify FILE` does, whatever its
/// format: an A2A Agent Card carrying a `signatures` member (or with no
/// detached JWS given) by its embedded signatures (A2A specification
/// section 8.4, [`Verifier::verify_agent_card_value`]); any other
/// descriptor against its detached JWS (`detached`). `None` when the
/// document needs a detached JWS and none was given. The verdict of the
/// report follows the one rule for several signatures
/// ([`crate::policy::signatures_verified`]).
pub fn verify_document(
    v: &Verifier,
    subject: &str,
    document: &[u8],
    detached: Option<&str>,
) -> Option<crate::report::Report> {
    use crate::report::{Report as Json, Verdict};
    // A card is recognised by parsing; a descriptor with its JWS and no
    // `signatures` member anywhere is not parsed twice for it.
    let may_be_card = detached.is_none() || document.windows(12).any(|w| w == b"\"signatures\"");
    if may_be_card {
        if let Ok((crate::formats::Format::A2a, card)) = crate::formats::detect_bytes(document) {
            if card.get("signatures").is_some() || detached.is_none() {
                return Some(match v.verify_agent_card_value(&card) {
                    Ok(r) => Json::from_card("verify", Some(subject), &r, false),
                    Err(crate::a2a::A2aError::NotVerified(r)) => {
                        Json::from_card("verify", Some(subject), &r, false)
                    }
                    Err(e) => {
                        let code = match e {
                            crate::a2a::A2aError::NoSignatures => "a2a.no-signatures",
                            crate::a2a::A2aError::BadSignature { .. } => "a2a.bad-signature-entry",
                            _ => "a2a.malformed-card",
                        };
                        let mut r = Json::error("verify", Some(subject), code, &e.to_string());
                        r.set_verdict(Verdict::NotVerified);
                        r
                    }
                });
            }
        }
    }
    let jws = detached?;
    let failed = |code: &str, message: String| {
        let mut r = Json::error("verify", Some(subject), code, &message);
        r.set_verdict(Verdict::NotVerified);
        r
    };
    Some(match v.verify_descriptor(document, jws) {
        Ok(r) => descriptor_report(subject, &r),
        Err(DescriptorError::NotVerified(r)) => descriptor_report(subject, &r),
        Err(DescriptorError::Jws(crate::jws::JwsError::PayloadDiffers)) => failed(
            "payload-differs",
            "the JWS carries a payload that differs from the descriptor".into(),
        ),
        Err(DescriptorError::TooLarge(n)) => failed("too-large", format!("{n} bytes is too large")),
        Err(e) => failed("batch.malformed", e.to_string()),
    })
}

/// The report of a descriptor checked against its detached JWS.
fn descriptor_report(subject: &str, r: &Report) -> crate::report::Report {
    let mut json = crate::report::Report::from_jws("verify", Some(subject), &r.jws);
    json.detail("canonical_sha256", r.canonical_sha256());
    json
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

    /// [`Order::Finished`]: a result is given as soon as it is known. Item
    /// 0 waits until the sink has been given item 1 (bounded: after ten
    /// seconds it finishes anyway), so item 1 comes first; in input order
    /// it would have had to wait for item 0.
    #[test]
    fn finished_order_gives_a_result_before_a_slower_earlier_one() {
        let one_given = std::sync::atomic::AtomicBool::new(false);
        let mut seen = Vec::new();
        run_grouped(
            0..2usize,
            &BatchOptions {
                threads: 2,
                window: 4,
            },
            Order::Finished,
            |i| {
                if i == 0 {
                    for _ in 0..1000 {
                        if one_given.load(Ordering::SeqCst) {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                }
                i
            },
            |i, r| {
                assert_eq!(i, r);
                if i == 1 {
                    one_given.store(true, Ordering::SeqCst);
                }
                seen.push(i);
            },
            || {},
        );
        assert_eq!(seen, [1, 0]);
    }

    /// In either order every result is given once, and at most `window`
    /// items are in flight.
    #[test]
    fn finished_order_gives_every_result_once_within_the_window() {
        for (threads, window) in [(1, 1), (3, 2), (4, 64)] {
            let taken = AtomicUsize::new(0);
            let mut given = 0usize;
            let mut most = 0usize;
            let mut seen = Vec::new();
            run_grouped(
                Counting {
                    n: 0,
                    total: 200,
                    taken: &taken,
                },
                &BatchOptions { threads, window },
                Order::Finished,
                |i| {
                    for _ in 0..(i % 3) * 20 {
                        std::thread::yield_now();
                    }
                    i
                },
                |i, r| {
                    assert_eq!(i, r);
                    most = most.max(taken.load(Ordering::SeqCst) - given);
                    given += 1;
                    seen.push(i);
                },
                || {},
            );
            seen.sort_unstable();
            assert_eq!(seen, (0..200).collect::<Vec<_>>());
            assert!(most <= window, "{threads} threads, window {window}: {most}");
        }
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
