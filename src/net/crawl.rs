//! A verification crawl run by a fleet of workers over Redis Streams
//! (`agentsig crawl`): the worker loop and the fleet-wide per-host
//! connection permits. The queue's state is [`crate::replay::stream`];
//! one input's verification is [`VerifyStep`]: `verify URL`'s, with the
//! same [`Resolver`](super::Resolver), fetch policy and fleet key-set
//! cache, and one rule for what a failure is (put off, retried, or the
//! input's result).
//!
//! # Guarantees
//! * Every input ends with exactly one result in the results stream: the
//!   finishing script writes a result only for an input that has none and
//!   acknowledges the entry in the same atomic step
//!   ([`CrawlQueue::finish_and_take`]); a duplicated entry, or one finished
//!   twice after its lease ran out, adds nothing. A thread writes the
//!   results of the entries it took (up to [`WorkerOptions::batch`])
//!   together, in the script call that takes its next ones: one round trip
//!   per batch. A result waits for the rest of its batch, and once it has
//!   waited [`MAX_RESULT_DELAY`] it is written before the thread's next
//!   input (so never longer than that plus one input's verification);
//!   until written, its entry stays pending and renewed, so a worker killed
//!   meanwhile loses nothing.
//! * A worker killed mid-input loses nothing: its entries stay pending and
//!   another worker takes them over once they have been pending for the
//!   lease ([`CrawlQueue::claim_stale`]).
//! * An input whose verification fails for a reason worth retrying (a
//!   timeout, a 5xx or 429 answer) is queued again, at most
//!   [`WorkerOptions::max_attempts`] attempts in all (a worker lost
//!   mid-input counts as one); then its result records the failure and its
//!   reason (`crawl.gave-up`). Nothing is dropped.
//! * A fetch that found no connection permit within its deadline never
//!   reached the origin: the host's permits were held by the fleet (a
//!   worker killed while holding permits keeps them until their lease ends).
//!   Such an attempt is put off without counting
//!   ([`CrawlQueue::postpone`]), at most [`MAX_POSTPONED`] times per input
//!   (later ones count), so a dead worker's permits cost its hosts' inputs
//!   time, never their verdicts.
//! * Politeness over the whole fleet: at most [`FleetGate::limit`]
//!   connections open to one host (`host:port`) at once, summed over every
//!   worker on every machine, each connection opened under a permit held in
//!   Redis and closed before the permit goes back to the fleet (by default
//!   no connection is kept alive past its fetch; with
//!   [`FleetGate::keep_connections`] a worker keeps the permit as long as a
//!   connection opened under it may be open: [`FetchPolicy::gate`](
//!   super::FetchPolicy::gate); once another fetch in the fleet finds the
//!   host full, such permits are not reused and each later request to the
//!   host closes its connection and gives its permit back at once); a
//!   fetch that finds the host full waits for a permit given back (a
//!   wake), not by polling;
//!   connections to one host started at least [`FleetGate::interval`]
//!   apart; a `Retry-After` (RFC 9110 section 10.2.3) puts off the host's
//!   next connection by its delay (at most [`MAX_RETRY_AFTER`]). Redis
//!   unreachable: no permit, no connection (fail closed).
//! * Host affinity: an input is queued in the input stream of its host
//!   ([`shard_of`](crate::replay::stream::shard_of)), and a worker takes
//!   inputs only from its own share of the streams ([`own_shards`], from
//!   the live workers it sees, [`CrawlQueue::members`], every
//!   [`MEMBER_EVERY`]), so all of a host's inputs, and the connections and
//!   permits kept for them, are one worker's: workers do not contend for a
//!   host's permits. Nothing is taken from a live worker's streams; a
//!   worker that dies or stops gives its share to the others once its
//!   lease in the fleet ends (the entries it held, once their own leases
//!   end). Which stream an entry is in never decides its result: a
//!   worker's first take waits until the live workers it sees stay the
//!   same for a beat, and any overlap while shares change costs only
//!   contention for permits.

use super::fetch::{ConnectionGate, ConnectionPermit};
use super::verify::UrlVerifyError;
use crate::replay::stream::{
    own_shards, CrawlEntry, CrawlQueue, Finished, FinishedAndTaken, Finishing, Permit,
    ResultRecord, SHARDS,
};
use crate::replay::ReplayError;
use crate::report::{Report, Verdict};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest `Retry-After` honoured: 10 minutes (a longer one is cut to
/// it, so a host cannot park a crawl's workers).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);
/// Default attempts at one input.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Attempts at one input put off without counting because no connection
/// permit came ([`Step::Postpone`]); later ones count as attempts. With
/// the default deadlines this outlasts a dead worker's permit lease many
/// times over.
pub const MAX_POSTPONED: u32 = 20;
/// Default lease: an entry pending this long is taken over by another
/// worker. Longer than one `verify URL` operation (30 s) plus its permit
/// waits.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);
/// How long a worker keeps trying when Redis does not answer before it
/// gives up (exit): its entries stay pending for the others.
pub const REDIS_GRACE: Duration = Duration::from_secs(30);

/// A Redis outage ridden out for [`REDIS_GRACE`]: the rule a worker and a
/// following results reader share. Each failed call is
/// [`tolerated`](Outage::tolerate) until the first failure of the outage
/// is [`REDIS_GRACE`] old, then it is the caller's error; a call that
/// succeeds ends the outage ([`Outage::over`]).
#[derive(Debug, Default)]
pub struct Outage {
    since: Option<Instant>,
}

impl Outage {
    /// A call failed with `e`: `Ok(true)` for the first failure of an
    /// outage (the one to report), `Ok(false)` for a later one within
    /// [`REDIS_GRACE`] of it.
    ///
    /// # Errors
    /// `e` itself once the outage has lasted [`REDIS_GRACE`].
    pub fn tolerate(&mut self, e: ReplayError) -> Result<bool, ReplayError> {
        match self.since {
            None => {
                self.since = Some(Instant::now());
                Ok(true)
            }
            Some(t) if t.elapsed() >= REDIS_GRACE => Err(e),
            Some(_) => Ok(false),
        }
    }

    /// A call succeeded: the outage, if any, is over.
    pub fn over(&mut self) {
        self.since = None;
    }
}

/// What the verification of one input gave.
#[derive(Debug)]
#[non_exhaustive]
pub enum Step {
    /// The input's result (any verdict): final.
    Result(Box<Report>),
    /// The input is a catalog: its result, and the entry URLs to queue.
    Expand {
        /// The catalog's own result.
        report: Box<Report>,
        /// Its entries' URLs (already within the catalog bounds).
        entries: Vec<String>,
    },
    /// A failure worth trying again later (a timeout, 5xx, 429): its code
    /// and reason.
    Retry {
        /// The reason code (`fetch.timeout`).
        code: String,
        /// The reason.
        reason: String,
    },
    /// No connection permit came within the deadline ([`is_back_pressure`]):
    /// the attempt is put off without counting, up to [`MAX_POSTPONED`]
    /// times, then counts as a [`Step::Retry`].
    Postpone {
        /// The reason code (`fetch.timeout`).
        code: String,
        /// The reason.
        reason: String,
    },
}

/// The fetch failure behind `e`, if a fetch of the descriptor, its `.jws`
/// or its keys failed.
fn fetch_failure(e: &UrlVerifyError) -> Option<&super::fetch::FetchError> {
    match e {
        UrlVerifyError::Fetch(f) | UrlVerifyError::JwsFetch { source: f, .. } => Some(f),
        UrlVerifyError::Discovery(super::discovery::DiscoveryError::Fetch(f)) => Some(f),
        _ => None,
    }
}

/// Whether trying `e` again later may succeed: a timeout, a DNS failure,
/// a 5xx or 429 answer, no connection permit, for the descriptor, its
/// `.jws` or its keys.
pub fn is_transient(e: &UrlVerifyError) -> bool {
    fetch_failure(e).is_some_and(super::fetch::FetchError::is_transient)
}

/// Whether `e` is only that no connection permit came within the deadline
/// ([`FetchError::NoPermit`](super::fetch::FetchError::NoPermit)): the
/// origin was never asked, so the attempt is put off without counting
/// ([`Step::Postpone`]).
pub fn is_back_pressure(e: &UrlVerifyError) -> bool {
    fetch_failure(e).is_some_and(super::fetch::FetchError::is_no_permit)
}

/// A failed input's report, the shape `verify --batch` gives one:
/// `verify` over the input, not verified, with its code and reason.
pub fn failed_report(input: &str, code: &str, message: &str) -> Report {
    let mut r = Report::error("verify", Some(input), code, message);
    r.set_verdict(Verdict::NotVerified);
    r
}

/// One crawl input verified exactly as `verify URL` and `verify --batch`
/// verify it ([`verify_or_expand`](super::catalog::verify_or_expand)): a
/// catalog (an origin's well-known one, a catalog URL, or one recognised in
/// what a URL served) is expanded into its entries, each queued as its own
/// input ([`Step::Expand`]); anything else is verified by the shared
/// [`Resolver`](super::Resolver) and its report is the input's result, the
/// report `verify URL --json` gives ([`UrlVerified::report`](super::verify::UrlVerified::report)).
///
/// A failure, of a document or of a catalog's fetch, follows one rule: a
/// fetch that got no connection permit never reached the origin and is put
/// off without counting ([`Step::Postpone`]); one worth another attempt (a
/// timeout, a 5xx or 429 answer) is retried ([`Step::Retry`]); any other is
/// the input's result.
///
/// ```no_run
/// use agentsig::catalog::CatalogOptions;
/// use agentsig::net::crawl::{run_worker, VerifyStep, WorkerOptions};
/// use agentsig::net::{Fetcher, Resolver};
/// use agentsig::replay::stream::{CrawlEntry, CrawlQueue};
/// use std::sync::atomic::AtomicBool;
///
/// let queue = CrawlQueue::open("redis://127.0.0.1:6379", "agents")?;
/// let verify = VerifyStep::new(Resolver::new(Fetcher::new()?), CatalogOptions::default());
/// let options = WorkerOptions::new("worker-1");
/// let stop = AtomicBool::new(false);
/// let on_result = |_: &CrawlEntry, verified: bool, report: &[u8]| {
///     println!("{verified}: {}", String::from_utf8_lossy(report));
/// };
/// run_worker(&queue, &options, &|e| verify.step(e), &on_result, &stop)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct VerifyStep {
    resolver: super::Resolver,
    catalog: crate::catalog::CatalogOptions,
}

impl VerifyStep {
    /// Inputs verified by `resolver` (its fetcher, fetch policy and key
    /// caches), catalogs expanded under `catalog`'s bounds.
    pub fn new(resolver: super::Resolver, catalog: crate::catalog::CatalogOptions) -> VerifyStep {
        VerifyStep { resolver, catalog }
    }

    /// The resolver inputs are verified by.
    pub fn resolver(&self) -> &super::Resolver {
        &self.resolver
    }

    /// What verifying `entry`'s input gave.
    pub fn step(&self, entry: &CrawlEntry) -> Step {
        use super::catalog::{verify_or_expand, UrlInput};
        let url = entry.input.as_str();
        match verify_or_expand(&self.resolver, url, &self.catalog) {
            UrlInput::Document(r) => match *r {
                // One parse of the descriptor, moved into the report.
                Ok(v) => Step::Result(Box::new(v.into_report("verify", url))),
                Err(e) => document_failed(url, &e),
            },
            UrlInput::Catalog {
                url: c, entries, ..
            } => expanded(url, &c, &entries),
            UrlInput::CatalogFailed { error, .. } => catalog_failed(url, &error),
        }
    }
}

/// A descriptor that did not verify: put off, retried, or its report
/// the input's result ([`failed`]).
fn document_failed(url: &str, e: &UrlVerifyError) -> Step {
    failed(fetch_failure(e), e.code(), e.to_string(), || {
        e.report("verify", url)
    })
}

/// A catalog that could not be checked, by the rule a document's failure
/// follows ([`failed`]).
fn catalog_failed(url: &str, error: &super::catalog::CatalogUrlError) -> Step {
    use super::catalog::CatalogUrlError;
    let fetch = match error {
        CatalogUrlError::Unreachable(f) => Some(f),
        _ => None,
    };
    failed(fetch, error.code(), error.to_string(), || {
        error.report("verify", url)
    })
}

/// A failed verification's step, by its fetch failure if one caused it:
/// no permit put off, a transient failure retried, anything else the
/// input's result (`report`).
fn failed(
    fetch: Option<&super::fetch::FetchError>,
    code: &str,
    reason: String,
    report: impl FnOnce() -> Report,
) -> Step {
    match fetch {
        Some(f) if f.is_no_permit() => Step::Postpone {
            code: code.to_owned(),
            reason,
        },
        Some(f) if f.is_transient() => Step::Retry {
            code: code.to_owned(),
            reason,
        },
        _ => Step::Result(Box::new(report())),
    }
}

/// A catalog's own result (`done`: it was read and its entries queued;
/// each entry gets its own result) and its entry URLs. Entries this
/// version checks without a URL fetch (refused or not checked ones) are
/// listed in the catalog's result with why.
fn expanded(input: &str, catalog: &str, inputs: &[crate::catalog::CatalogInput]) -> Step {
    use crate::catalog::EntryCheck;
    use serde_json::json;
    let mut r = Report::error("verify", Some(input), "", "");
    r.error = None;
    let mut entries = Vec::new();
    let mut other = Vec::new();
    for i in inputs {
        match i.check() {
            EntryCheck::VerifyUrl(u) => entries.push(u.to_owned()),
            EntryCheck::Refused(why) => other.push(json!({"entry": i.pointer, "refused": why})),
            EntryCheck::NotChecked(why) => {
                other.push(json!({"entry": i.pointer, "not_checked": why}))
            }
        }
    }
    r.check(
        "crawl.catalog-expanded",
        true,
        format!(
            "{} entries queued, each verified as its own input",
            entries.len()
        ),
    );
    r.detail("catalog", catalog);
    if !other.is_empty() {
        r.detail("catalog_entries_not_queued", other);
    }
    r.set_verdict(Verdict::Done);
    Step::Expand {
        report: Box::new(r),
        entries,
    }
}

/// How a worker process runs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WorkerOptions {
    /// The worker's consumer name in the group (unique in the fleet).
    pub consumer: String,
    /// Threads, each verifying one input at a time.
    pub threads: usize,
    /// Time an entry may stay pending before another worker takes it.
    pub lease: Duration,
    /// Attempts at one input before its failure is its result.
    pub max_attempts: u32,
    /// Deepest catalog level whose entries are queued (an input added by
    /// an operator is level 0).
    pub max_depth: u32,
    /// Stop once the queue is empty (every input finished); otherwise wait
    /// for more. A thread with nothing to take asks whether anything is
    /// queued before it waits, and waits at most [`UNTIL_EMPTY_BLOCK`] at a
    /// time, so the worker ends soon after the crawl's last result.
    pub until_empty: bool,
    /// How long one read waits for a new entry (with `until_empty`, at
    /// most [`UNTIL_EMPTY_BLOCK`]).
    pub block: Duration,
    /// The most entries one thread takes at once (one Redis round trip),
    /// then verifies one after the other; their results are written
    /// together with the next take. A thread takes about as many as it
    /// verified in the last [`MAX_RESULT_DELAY`] ([`take_size`]), at most
    /// this many. From 1 to [`MAX_TAKE`] (a value outside is taken as the
    /// nearest bound); default [`DEFAULT_TAKE`].
    pub batch: usize,
}

impl WorkerOptions {
    /// Defaults for `consumer`: one thread, [`DEFAULT_LEASE`],
    /// [`DEFAULT_MAX_ATTEMPTS`], catalog depth 8, waiting for more input,
    /// at most [`DEFAULT_TAKE`] entries per take.
    pub fn new(consumer: impl Into<String>) -> WorkerOptions {
        WorkerOptions {
            consumer: consumer.into(),
            threads: 1,
            lease: DEFAULT_LEASE,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            max_depth: 8,
            until_empty: false,
            block: Duration::from_millis(500),
            batch: DEFAULT_TAKE,
        }
    }
}

/// What one worker did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerCounts {
    /// Results written.
    pub results: u64,
    /// Of them, verified.
    pub verified: u64,
    /// Entries found finished already (duplicates).
    pub duplicates: u64,
    /// Attempts queued again.
    pub retried: u64,
    /// Attempts put off without counting: no connection permit came.
    pub postponed: u64,
    /// Entries taken over from another worker.
    pub reclaimed: u64,
}

/// Counters shared by a worker's threads.
#[derive(Debug, Default)]
struct Shared {
    results: AtomicU64,
    verified: AtomicU64,
    duplicates: AtomicU64,
    retried: AtomicU64,
    postponed: AtomicU64,
    reclaimed: AtomicU64,
    last_claim_ms: AtomicU64,
    /// The entries being verified now (input stream, entry id), renewed
    /// by the heartbeat.
    held: Mutex<HeldEntries>,
    /// This worker's own input streams ([`own_shards`]), as of its last
    /// heartbeat.
    own: std::sync::RwLock<Vec<u16>>,
    /// Threads started, each its own number (each reads a part of the
    /// worker's streams first: [`own_order`]).
    started: AtomicUsize,
    /// Threads still running.
    running: AtomicUsize,
    /// Signalled when the last thread ends (the heartbeat then stops).
    ended: (Mutex<()>, std::sync::Condvar),
}

/// Entry ids per input stream (an entry id is unique in its stream only).
#[derive(Debug, Default)]
struct HeldEntries(std::collections::BTreeMap<u16, std::collections::BTreeSet<String>>);

impl HeldEntries {
    fn hold(&mut self, e: &CrawlEntry) {
        self.0.entry(e.shard).or_default().insert(e.entry.clone());
    }
    fn release(&mut self, e: &CrawlEntry) {
        if let Some(ids) = self.0.get_mut(&e.shard) {
            ids.remove(e.entry.as_str());
        }
    }
    fn all(&self) -> Vec<(u16, String)> {
        self.0
            .iter()
            .flat_map(|(x, ids)| ids.iter().map(|id| (*x, id.clone())))
            .collect()
    }
}

/// A report's verdict word and reason code, as the statistics count them.
fn labels(r: &Report) -> (&'static str, String) {
    let code = r.error.as_ref().map(|p| p.code.clone()).unwrap_or_default();
    (r.verdict.as_str(), code)
}

/// Run a worker on `queue` until it is stopped ([`CrawlQueue::set_stopped`]
/// or `stop`), or, with [`WorkerOptions::until_empty`], until every input
/// has its result. `verify` gives each input's [`Step`]; `on_result` sees
/// each result this worker wrote: whether its report says verified
/// ([`Report::verified`]) and its JSON as the results stream holds it (for
/// JSON Lines, a progress line). The report itself is dropped once
/// serialized, before its batch is written: a thread holding the reports of
/// a whole batch made the allocator's work grow with the batch.
///
/// # Errors
/// [`ReplayError::Unavailable`] when Redis stayed unreachable for
/// [`REDIS_GRACE`]: the worker stops; what it held stays pending for the
/// others. Also, before anything is taken, for options no worker can run
/// with: an empty consumer name, a zero `max_attempts` or `lease`.
pub fn run_worker(
    queue: &CrawlQueue,
    opts: &WorkerOptions,
    verify: &(dyn Fn(&CrawlEntry) -> Step + Sync),
    on_result: &(dyn Fn(&CrawlEntry, bool, &[u8]) + Sync),
    stop: &AtomicBool,
) -> Result<WorkerCounts, ReplayError> {
    if opts.consumer.is_empty() {
        return Err(ReplayError::Unavailable(
            "a worker's consumer name must not be empty".into(),
        ));
    }
    // No attempt would ever be made; a lease that ends at once takes every
    // input from the live worker that holds it.
    if opts.max_attempts == 0 || opts.lease.is_zero() {
        return Err(ReplayError::Unavailable(
            "a worker's max_attempts and lease must not be zero".into(),
        ));
    }
    queue.create()?;
    let shared = Shared::default();
    // This worker's share of the input streams, before its first take:
    // taken once the live workers it sees stay the same for a beat, so
    // that workers started together agree on their shares before any
    // takes an input of another's (a few beats at most).
    let mut seen = beat(queue, opts, &shared);
    for _ in 0..8 {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        std::thread::sleep(MEMBER_EVERY);
        let now = beat(queue, opts, &shared);
        if now == seen {
            break;
        }
        seen = now;
    }
    let threads = opts.threads.max(1);
    let failure: Mutex<Option<ReplayError>> = Mutex::new(None);
    let epoch = Instant::now();
    shared.running.store(threads, Ordering::SeqCst);
    let cx = Ctx {
        queue,
        opts,
        verify,
        on_result,
        shared: &shared,
    };
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                if let Err(e) = thread_loop(&cx, stop, epoch) {
                    stop.store(true, Ordering::SeqCst);
                    if let Ok(mut f) = failure.lock() {
                        f.get_or_insert(e);
                    }
                }
                if shared.running.fetch_sub(1, Ordering::SeqCst) == 1 {
                    let _guard = shared.ended.0.lock();
                    shared.ended.1.notify_all();
                }
            });
        }
        s.spawn(|| heartbeat(queue, opts, &shared));
    });
    // Its streams go to the others at their next heartbeat; unreachable
    // Redis: at the end of its lease.
    let _ = queue.members(&opts.consumer, Duration::ZERO);
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(WorkerCounts {
        results: shared.results.load(Ordering::SeqCst),
        verified: shared.verified.load(Ordering::SeqCst),
        duplicates: shared.duplicates.load(Ordering::SeqCst),
        retried: shared.retried.load(Ordering::SeqCst),
        postponed: shared.postponed.load(Ordering::SeqCst),
        reclaimed: shared.reclaimed.load(Ordering::SeqCst),
    })
}

/// Count this worker among the fleet's live workers for a lease, and take
/// its share of the input streams from the live workers then
/// ([`own_shards`]): the live workers, or `None` when Redis is
/// unreachable (the share then stays as it was; at first, none: every
/// stream is read).
fn beat(queue: &CrawlQueue, opts: &WorkerOptions, shared: &Shared) -> Option<Vec<String>> {
    let members = queue
        .members(&opts.consumer, opts.lease.min(MEMBER_LEASE))
        .ok()?;
    let own = own_shards(&members, &opts.consumer);
    if let Ok(mut o) = shared.own.write() {
        *o = own;
    }
    Some(members)
}

/// Until this worker's threads are done: renew the entries it is
/// verifying three times per lease, so that an input that takes longer
/// than the lease (permit waits, a slow host) is not taken over while its
/// worker lives; and renew its place among the live workers, taking its
/// share again ([`beat`]), every [`MEMBER_EVERY`].
fn heartbeat(queue: &CrawlQueue, opts: &WorkerOptions, shared: &Shared) {
    let renew_every = (opts.lease / 3).max(Duration::from_millis(50));
    let every = renew_every.min(MEMBER_EVERY);
    let mut renewed = Instant::now();
    let Ok(mut guard) = shared.ended.0.lock() else {
        return;
    };
    while shared.running.load(Ordering::SeqCst) > 0 {
        // Asleep until the next beat or the end of the threads (no wakeup
        // in between: a worker's CPU goes to its inputs).
        guard = match shared.ended.1.wait_timeout(guard, every) {
            Ok((g, _)) => g,
            Err(_) => return,
        };
        if shared.running.load(Ordering::SeqCst) == 0 {
            return;
        }
        if renewed.elapsed() >= renew_every {
            renewed = Instant::now();
            let ids: Vec<(u16, String)> = match shared.held.lock() {
                Ok(h) => h.all(),
                Err(_) => return,
            };
            // Redis unreachable: the entries' leases run out and others
            // take them over (the results stay one per input).
            let _ = queue.renew(&opts.consumer, &ids);
        }
        let _ = beat(queue, opts, shared);
    }
}

/// How long a worker stays among the fleet's live workers after its last
/// beat (or its lease, [`WorkerOptions::lease`], if shorter): a worker
/// killed gives its share of the input streams to the others this long
/// after its last beat, so their queued inputs wait no longer than that
/// (the entries it held wait for their own lease).
pub const MEMBER_LEASE: Duration = Duration::from_secs(5);

/// How often a worker tells the fleet it lives and takes its share of the
/// input streams again ([`CrawlQueue::members`], [`own_shards`]): a worker
/// that joins or leaves changes every worker's share within about this
/// long.
pub const MEMBER_EVERY: Duration = Duration::from_millis(100);

/// Longest a thread of a worker run with [`WorkerOptions::until_empty`]
/// waits in one read for a new entry (at most [`WorkerOptions::block`]):
/// between reads it asks whether anything is queued at all, and ends when
/// nothing is.
pub const UNTIL_EMPTY_BLOCK: Duration = Duration::from_millis(100);

/// The most entries a worker thread takes at once by default (`crawl work
/// --take`). Each finishing call's fixed costs, in redis-server and in the
/// worker (the round trip and its wakeups, the script's setup, its
/// commands over many ids, the trim of a stream, the append-only file's
/// write), are paid once per take, so a larger take costs less per input:
/// redis-server's CPU per input, the queue alone with reports of 1,400
/// bytes, 20.6 us with takes of 32 and 17.4 us with 128
/// (`docs/crawl.md`). A larger take also holds more entries per thread: a
/// result waits for the rest of its take, a stopped worker first finishes
/// the entries at hand, and entries held by one thread are not free for
/// another's. So a thread takes what it verifies in about
/// [`MAX_RESULT_DELAY`] ([`take_size`]): this many where inputs are quick,
/// a few where they are slow (whose results would be written once a
/// second anyway).
pub const DEFAULT_TAKE: usize = 128;

/// A thread's first take, before it knows its pace ([`take_size`]).
pub const FIRST_TAKE: usize = 16;

/// Most entries a worker thread may take at once (`crawl work --take`):
/// one finishing call carries the results of a whole take, each report up
/// to [`MAX_REPORT`](crate::replay::stream::MAX_REPORT) bytes.
pub const MAX_TAKE: usize = 256;

/// Longest time a thread keeps a result before writing it: results of one
/// batch are written together with the next take
/// ([`CrawlQueue::finish_and_take`]), or sooner when the batch's other
/// inputs take longer than this.
pub const MAX_RESULT_DELAY: Duration = Duration::from_secs(1);

/// The bytes reserved for one report's JSON: a descriptor's report with
/// its signatures and `details.descriptor` is a few kilobytes.
const REPORT_CAPACITY: usize = 4096;

/// A result decided and not yet written: it is written with the thread's
/// next take (one round trip for the batch), atomically with the
/// acknowledgement of its entry, so until then the entry stays pending and
/// held (renewed by the heartbeat).
struct Decided {
    entry: CrawlEntry,
    /// The report's [`Report::verified`] (the report is dropped once
    /// serialized).
    verified: bool,
    json: Vec<u8>,
    verdict: &'static str,
    code: String,
    children: Vec<String>,
    at: Instant,
}

/// What every thread of a worker works with.
struct Ctx<'a> {
    queue: &'a CrawlQueue,
    opts: &'a WorkerOptions,
    verify: &'a (dyn Fn(&CrawlEntry) -> Step + Sync),
    on_result: &'a (dyn Fn(&CrawlEntry, bool, &[u8]) + Sync),
    shared: &'a Shared,
}

/// One thread of a worker: take (or take over) entries, verify them,
/// write their results with the next take.
fn thread_loop(cx: &Ctx<'_>, stop: &AtomicBool, epoch: Instant) -> Result<(), ReplayError> {
    let mut decided: Vec<Decided> = Vec::new();
    // Each thread reads a part of the worker's streams first.
    READER.set((cx.shared.started.fetch_add(1, Ordering::SeqCst), 0));
    // Stopped: the results at hand are written before the thread ends.
    let r = work_loop(cx, stop, epoch, &mut decided)
        .and_then(|()| write_results(cx, &mut decided, 0, &[]).map(drop));
    if r.is_err() {
        forget(cx.shared, &mut decided);
    }
    r
}

fn work_loop(
    cx: &Ctx<'_>,
    stop: &AtomicBool,
    epoch: Instant,
    decided: &mut Vec<Decided>,
) -> Result<(), ReplayError> {
    let (queue, shared) = (cx.queue, cx.shared);
    let mut outage = Outage::default();
    let mut last_stop_check = Instant::now();
    // When this thread's last entries came, and how many ([`take_size`]).
    let mut last_take: Option<(Instant, usize)> = None;
    // Redis unreachable: keep trying for the grace period, then give up.
    let tolerate = |e: ReplayError, outage: &mut Outage| -> Result<(), ReplayError> {
        outage.tolerate(e)?;
        std::thread::sleep(Duration::from_millis(200));
        Ok(())
    };
    while !stop.load(Ordering::SeqCst) {
        if last_stop_check.elapsed() >= Duration::from_secs(1) {
            last_stop_check = Instant::now();
            match queue.stopped() {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => {
                    tolerate(e, &mut outage)?;
                    continue;
                }
            }
        }
        // The pace of the entries taken last, all decided by now.
        let pace = last_take.take().map(|(at, n)| (at.elapsed(), n));
        let (entries, end) = match next_entries(cx, epoch, decided, pace) {
            Ok(e) => e,
            Err(e) => {
                tolerate(e, &mut outage)?;
                continue;
            }
        };
        outage.over();
        if let Some(end) = end {
            // The take read the crawl's state (or found nothing queued).
            last_stop_check = Instant::now();
            if end {
                return Ok(());
            }
        }
        if entries.is_empty() {
            continue;
        }
        last_take = Some((Instant::now(), entries.len()));
        if let Ok(mut h) = shared.held.lock() {
            for (e, _) in &entries {
                h.hold(e);
            }
        }
        for (e, started) in entries {
            // A result is not kept past the bound while the batch's other
            // inputs take long.
            if decided
                .first()
                .is_some_and(|d| d.at.elapsed() >= MAX_RESULT_DELAY)
            {
                if let Err(err) = write_results(cx, decided, 0, &[]) {
                    tolerate(err, &mut outage)?;
                }
            }
            let release = |e: &CrawlEntry| {
                if let Ok(mut h) = shared.held.lock() {
                    h.release(e);
                }
            };
            match one(cx, &e, started) {
                // The decision takes the entry itself (no copy of its
                // strings per input).
                Ok(Some(mut d)) => {
                    d.entry = e;
                    decided.push(d);
                }
                Ok(None) => release(&e),
                // The entry stays pending: another attempt after the lease.
                Err(err) => {
                    tolerate(err, &mut outage)?;
                    release(&e);
                }
            }
        }
    }
    Ok(())
}

/// Stop renewing the entries of results that could not be written: they
/// stay pending and are taken over after the lease.
fn forget(shared: &Shared, decided: &mut Vec<Decided>) {
    if let Ok(mut h) = shared.held.lock() {
        for d in decided.iter() {
            h.release(&d.entry);
        }
    }
    SPARE_REPORTS.with_borrow_mut(|spare| {
        for d in decided.drain(..) {
            if spare.len() < MAX_SPARE_REPORTS && d.json.capacity() <= MAX_KEPT_REPORT {
                let mut json = d.json;
                json.clear();
                spare.push(json);
            }
        }
    });
}

/// The most report buffers a thread keeps for its next inputs: a default
/// take's.
const MAX_SPARE_REPORTS: usize = DEFAULT_TAKE;

/// The largest report buffer kept.
const MAX_KEPT_REPORT: usize = 64 * 1024;

thread_local! {
    /// This thread's report buffers, kept from one batch to the next: a
    /// batch's buffers, kilobytes each, freed together made the allocator
    /// consolidate its free lists and give memory back to the system, to
    /// fault it in again for the next batch.
    static SPARE_REPORTS: std::cell::RefCell<Vec<Vec<u8>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// An empty buffer for one report's JSON: one of this thread's kept
/// ones, or a new one sized for a usual report (growing a vector from
/// empty copies it about ten times).
fn report_buffer() -> Vec<u8> {
    SPARE_REPORTS
        .with_borrow_mut(Vec::pop)
        .unwrap_or_else(|| Vec::with_capacity(REPORT_CAPACITY))
}

/// Write the results at hand and take up to `take` new entries, in one
/// round trip ([`CrawlQueue::finish_and_take`]): the entries taken, and
/// whether the crawl is stopped (then nothing is taken). When Redis fails
/// the results are kept, their entries still held (their leases renewed),
/// and written by the next call once it is back (within [`REDIS_GRACE`]):
/// a result lost with a failed write would be found again only when its
/// lease ran out, in another attempt that counts towards
/// [`WorkerOptions::max_attempts`], so a Redis failover could end a healthy
/// input as `crawl.gave-up`. Writing a result twice is harmless: the
/// finishing script records each input's result once.
fn write_results(
    cx: &Ctx<'_>,
    decided: &mut Vec<Decided>,
    take: usize,
    own: &[u16],
) -> Result<FinishedAndTaken, ReplayError> {
    let shared = cx.shared;
    if decided.is_empty() && take == 0 {
        return Ok(FinishedAndTaken::default());
    }
    let done: Vec<Finishing<'_>> = decided
        .iter()
        .map(|d| Finishing {
            entry: &d.entry,
            result: ResultRecord {
                report: &d.json,
                verdict: d.verdict,
                code: &d.code,
            },
            children: &d.children,
        })
        .collect();
    let r = cx
        .queue
        .finish_and_take(&done, &cx.opts.consumer, take, own);
    drop(done);
    let r = r?;
    for (d, f) in decided.iter().zip(&r.finished) {
        match f {
            Finished::Written => {
                shared.results.fetch_add(1, Ordering::SeqCst);
                if d.verified {
                    shared.verified.fetch_add(1, Ordering::SeqCst);
                }
                (cx.on_result)(&d.entry, d.verified, &d.json);
            }
            Finished::Duplicate => {
                shared.duplicates.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    forget(shared, decided);
    Ok(r)
}

thread_local! {
    /// This thread's number among the worker's threads, and its count of
    /// takes ([`own_order`]).
    static READER: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
    /// The input stream this thread's last take ended in ([`own_order`]).
    static LAST_STREAM: std::cell::Cell<Option<u16>> = const { std::cell::Cell::new(None) };
    /// This thread's last read waited for a new entry and got none
    /// ([`next_entries`]).
    static DRY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How many entries a thread takes next, at most `most` (at least 1, at
/// most [`MAX_TAKE`]): about as many as it verifies in
/// [`MAX_RESULT_DELAY`], from `last`, the time its last `n` entries took
/// from their take to this one; [`FIRST_TAKE`] before it knows. A result
/// is written at most that long after it was decided anyway, so a take of
/// that size writes its results in the call that takes the next ones; a
/// thread whose inputs are quick shares each call's fixed costs among many
/// (up to `most`), and one whose inputs are slow holds only a few, which a
/// stopped worker finishes soon and which are not kept from other threads.
///
/// ```
/// use agentsig::net::crawl::{take_size, FIRST_TAKE};
/// use std::time::Duration;
/// assert_eq!(take_size(128, None), FIRST_TAKE);
/// // 16 entries in 20 ms: 800 a second, at most 128.
/// assert_eq!(take_size(128, Some((Duration::from_millis(20), 16))), 128);
/// // 16 entries in 4 s: 4 a second.
/// assert_eq!(take_size(128, Some((Duration::from_secs(4), 16))), 4);
/// assert_eq!(take_size(128, Some((Duration::from_secs(60), 2))), 1);
/// ```
#[must_use]
pub fn take_size(most: usize, last: Option<(Duration, usize)>) -> usize {
    let most = most.clamp(1, MAX_TAKE);
    match last {
        Some((took, n)) if n > 0 => {
            let per = took.as_secs_f64() / n as f64;
            let fits = MAX_RESULT_DELAY.as_secs_f64() / per.max(1e-9);
            if fits >= most as f64 {
                most
            } else {
                // Below `most`, so within usize; at least one.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let n = fits.ceil() as usize;
                n.max(1)
            }
        }
        _ => most.min(FIRST_TAKE),
    }
}

/// The worker's own input streams in the order this thread reads them for
/// its next take. First the stream its last take ended in, while it has
/// entries: a thread drains a stream before it moves on, so the inputs of
/// a host (a stream holds a few hosts') are verified one after the other
/// and reuse the thread's connection to it, within the pool's idle time.
/// Then thread t of T reads the streams whose place in the worker's share
/// is t modulo T, then the others; each part from the next stream in turn.
/// So the threads of a worker mostly read different streams, that is
/// different hosts, rather than open as many connections to each as there
/// are threads.
fn own_order(shared: &Shared, threads: usize) -> Vec<u16> {
    let own = shared.own.read().map(|o| o.clone()).unwrap_or_default();
    let (me, turn) = READER.get();
    READER.set((me, turn.wrapping_add(1)));
    let threads = threads.max(1);
    let (mut first, mut then): (Vec<u16>, Vec<u16>) = (Vec::new(), Vec::new());
    for (i, x) in own.into_iter().enumerate() {
        if i % threads == me % threads {
            first.push(x);
        } else {
            then.push(x);
        }
    }
    for part in [&mut first, &mut then] {
        if !part.is_empty() {
            let k = turn % part.len();
            part.rotate_left(k);
        }
    }
    first.append(&mut then);
    if let Some(at) = LAST_STREAM
        .get()
        .and_then(|x| first.iter().position(|&y| y == x))
    {
        first[..=at].rotate_right(1);
    }
    first
}

/// An entry taken, with its attempt when started already (`Some(None)`:
/// a duplicate, acknowledged).
type Taken = (CrawlEntry, Option<Option<u32>>);

/// Entries pending past the lease with any worker (checked by one thread
/// of this worker about four times per lease), else new ones: the results
/// at hand written and up to [`take_size`] entries (for `pace`, the time
/// the thread's last entries took and their number) started in one round
/// trip, or, when there are none, one waited for. With the
/// entries, whether the thread ends, when the take read the crawl's state:
/// the crawl is stopped, or, with [`WorkerOptions::until_empty`], nothing
/// is queued any more.
fn next_entries(
    cx: &Ctx<'_>,
    epoch: Instant,
    decided: &mut Vec<Decided>,
    pace: Option<(Duration, usize)>,
) -> Result<(Vec<Taken>, Option<bool>), ReplayError> {
    let (queue, opts, shared) = (cx.queue, cx.opts, cx.shared);
    let now = u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    let every = u64::try_from((opts.lease / 4).as_millis())
        .unwrap_or(u64::MAX)
        .max(50);
    let last = shared.last_claim_ms.load(Ordering::SeqCst);
    if (last == 0 || now.saturating_sub(last) >= every)
        && shared
            .last_claim_ms
            .compare_exchange(last, now.max(1), Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    {
        write_results(cx, decided, 0, &[])?;
        #[allow(clippy::cast_possible_truncation)]
        let first = (now % SHARDS as u64) as u16;
        let got = queue.claim_stale(&opts.consumer, opts.lease, 1, first)?;
        if !got.is_empty() {
            shared
                .reclaimed
                .fetch_add(got.len() as u64, Ordering::SeqCst);
            // Look again soon: a dead worker may have left more.
            shared.last_claim_ms.store(1, Ordering::SeqCst);
            DRY.set(false);
            return Ok((got.into_iter().map(|e| (e, None)).collect(), None));
        }
    }
    // After a wait that got nothing, with no result to write, the take
    // would find nothing either: the next wait returns at once with any
    // entry come since. So an idle thread makes one round trip per wait.
    if !(DRY.replace(false) && decided.is_empty()) {
        let got = write_results(
            cx,
            decided,
            take_size(opts.batch, pace),
            &own_order(shared, opts.threads),
        )?;
        LAST_STREAM.set(got.taken.last().map(|(e, _)| e.shard));
        if got.stopped || !got.taken.is_empty() {
            let taken = got.taken.into_iter().map(|(e, n)| (e, Some(n))).collect();
            return Ok((taken, Some(got.stopped)));
        }
    }
    // Nothing new in this worker's streams. With `until_empty` the crawl
    // is finished once nothing is queued (an entry held by any worker
    // stays in its stream until its result is written): the thread ends
    // now, not after a wait; while others still hold entries, it waits at
    // most UNTIL_EMPTY_BLOCK at a time, so that it ends within about that
    // of the crawl's last result.
    let block = if opts.until_empty {
        if !queue.any_queued()? {
            return Ok((Vec::new(), Some(true)));
        }
        opts.block.min(UNTIL_EMPTY_BLOCK)
    } else {
        opts.block
    };
    let waited: Vec<Taken> = queue
        .take(&opts.consumer, 1, block, &own_order(shared, opts.threads))?
        .into_iter()
        .map(|e| (e, None))
        .collect();
    DRY.set(waited.is_empty());
    Ok((waited, None))
}

/// Verify one entry and decide its outcome: a result to write (with the
/// thread's next take), or nothing more to do (a duplicate, or an attempt
/// queued again).
fn one(
    cx: &Ctx<'_>,
    e: &CrawlEntry,
    started: Option<Option<u32>>,
) -> Result<Option<Decided>, ReplayError> {
    let (queue, opts, shared) = (cx.queue, cx.opts, cx.shared);
    let started = match started {
        Some(s) => s,
        None => queue.start(e)?,
    };
    let Some(attempts) = started else {
        shared.duplicates.fetch_add(1, Ordering::SeqCst);
        return Ok(None);
    };
    let (mut report, children) = if attempts > opts.max_attempts {
        // Earlier attempts were lost with their workers or failed.
        let why = queue.last_failure(&e.id)?.unwrap_or_else(|| {
            "the workers holding it stopped before finishing (its lease ran out)".into()
        });
        let r = failed_report(
            &e.input,
            "crawl.gave-up",
            &format!("{} attempts did not finish: {why}", attempts - 1),
        );
        (r, Vec::new())
    } else {
        let mut step = (cx.verify)(e);
        if let Step::Postpone { code, reason } = step {
            if queue.postpone(e, &format!("{code}: {reason}"), MAX_POSTPONED)? {
                shared.postponed.fetch_add(1, Ordering::SeqCst);
                return Ok(None);
            }
            step = Step::Retry { code, reason };
        }
        match step {
            Step::Result(r) => (*r, Vec::new()),
            Step::Expand { report, entries } => {
                let mut r = *report;
                let entries = if e.depth >= opts.max_depth {
                    r.detail("crawl_entries_not_queued", entries.len());
                    Vec::new()
                } else {
                    entries
                };
                (r, entries)
            }
            Step::Retry { code, reason } | Step::Postpone { code, reason }
                if attempts >= opts.max_attempts =>
            {
                let r = failed_report(
                    &e.input,
                    "crawl.gave-up",
                    &format!("{attempts} attempts failed; the last: {code}: {reason}"),
                );
                (r, Vec::new())
            }
            Step::Retry { code, reason } | Step::Postpone { code, reason } => {
                queue.retry(e, &format!("{code}: {reason}"))?;
                shared.retried.fetch_add(1, Ordering::SeqCst);
                return Ok(None);
            }
        }
    };
    report.detail("crawl_input", &e.id);
    report.detail("crawl_attempts", attempts);
    if e.depth > 0 {
        report.detail("crawl_depth", e.depth);
    }
    if !children.is_empty() {
        report.detail("crawl_entries_queued", children.len());
    }
    let (verdict, code) = labels(&report);
    // Serialized once, into a buffer of this thread's kept ones.
    let mut json = report_buffer();
    serde_json::to_writer(&mut json, &report)
        .map_err(|err| ReplayError::Unavailable(err.to_string()))?;
    let verified = report.verified;
    // Freed now, while the next input's allocations can reuse its memory.
    drop(report);
    Ok(Some(Decided {
        // The caller moves the taken entry in (empty strings allocate
        // nothing).
        entry: CrawlEntry {
            entry: String::new(),
            shard: 0,
            id: String::new(),
            input: String::new(),
            depth: e.depth,
            attempt: e.attempt,
        },
        verified,
        json,
        verdict,
        code,
        children,
        at: Instant::now(),
    }))
}

/// The fleet-wide per-host connection permits of a crawl (see the module
/// documentation), for [`FetchPolicy::gate`](super::FetchPolicy::gate).
///
/// With keeping on ([`FleetGate::keep_connections`]) a permit given back by
/// a fetch stays with this process, so that its kept-alive connection is
/// reused for the host's next inputs without a new TLS handshake or a
/// Redis round trip: it goes back to the fleet once unused for
/// [`FleetGate::linger`] (every connection it covered is closed by then),
/// and it is reused for at most [`FleetGate::turn`], so that other workers
/// waiting for the host get their turn. Sooner: once a fetch of a worker
/// holding no usable permit of the host finds it full ([`CrawlQueue::host_wanted`], asked ten
/// times a second), permits that covered a kept connection are no
/// longer reused (they go back after the linger), and a permit handed out
/// covers one request sent with `Connection: close` (RFC 9112 section 9.6)
/// and goes back as soon as its answer is read. Waiting for a permit is a blocking
/// `BLPOP` on the host's wake list, woken when one is given back anywhere
/// in the fleet ([`CrawlQueue::host_wait`]), not a poll.
#[derive(Debug, Clone)]
pub struct FleetGate {
    queue: Arc<CrawlQueue>,
    /// Most connections open to one host at once, over the whole fleet.
    pub limit: usize,
    /// Least time between two connections to one host (the per-host
    /// request rate; zero: no bound). A bound here turns keeping off.
    pub interval: Duration,
    /// A permit's lease: it ends by itself after this (its holder died).
    pub lease: Duration,
    /// How long a permit given back stays held by this process before it
    /// goes back to the fleet ([`FetchPolicy::kept_connection_linger`](
    /// super::FetchPolicy::kept_connection_linger)); zero: none.
    pub linger: Duration,
    /// Longest time one permit is reused by this process.
    pub turn: Duration,
    local: Arc<Local>,
}

/// How often a keeping worker asks whether others wait for the hosts it
/// holds permits of ([`CrawlQueue::host_wanted`]).
const CONTENTION_EVERY: Duration = Duration::from_millis(100);
/// How often a kept permit's lease is extended while it is reused.
const RENEW_EVERY: Duration = Duration::from_secs(5);
/// Longest single wait on the fleet (a holder that died frees its permit
/// with its lease, without a wake).
const WAIT_SLICE: Duration = Duration::from_millis(200);

/// The permits this process holds, per host.
#[derive(Debug)]
struct Local {
    queue: Arc<CrawlQueue>,
    limit: usize,
    state: Mutex<LocalState>,
    /// A permit came back or was granted: for this process's waiters.
    changed: std::sync::Condvar,
    /// A fetch started waiting: for the manager.
    wanted: std::sync::Condvar,
}

impl LocalState {
    /// The state of `host`, made on its first use: the name is copied into
    /// a key then only, not at every permit asked for (one lookup more).
    fn host(&mut self, host: &str) -> Result<&mut HostState, &'static str> {
        if !self.hosts.contains_key(host) {
            self.hosts.insert(host.to_owned(), HostState::default());
        }
        self.hosts.get_mut(host).ok_or("permit state lost")
    }
}

#[derive(Debug, Default)]
struct LocalState {
    hosts: std::collections::HashMap<String, HostState>,
    /// Whether the thread that asks the fleet for waiters runs.
    manager: bool,
    /// Waits for a permit not yet counted in Redis: per host,
    /// milliseconds and waits (the manager adds them about once a second).
    waits: std::collections::HashMap<String, (u64, u64)>,
}

#[derive(Debug, Default)]
struct HostState {
    /// Given back, ready for reuse: most recently used last.
    idle: Vec<Held>,
    /// Past their turn: not reused, back to the fleet after the linger.
    retiring: Vec<Held>,
    /// Fetches of this process waiting for a permit.
    waiting: usize,
    /// No connection before this (a `Retry-After`).
    not_before: Option<Instant>,
    /// Permits this process holds (in use, idle or retiring).
    held: usize,
    /// The fleet said the host is full, and no permit was given back
    /// since: wait for a wake rather than ask.
    full: bool,
    /// A worker holding no usable permit of the host found it full within
    /// the last second ([`CrawlQueue::host_wanted`]): permits that covered a kept
    /// connection are not reused (they go back after the linger), and a
    /// permit handed out covers one request with `Connection: close` and
    /// goes back to the fleet as soon as its answer is read.
    contended: bool,
}

/// A permit held by this process.
#[derive(Debug)]
struct Held {
    token: String,
    granted: Instant,
    renewed: Instant,
    idle_since: Instant,
    /// It covered a request whose connection may have stayed open.
    used: bool,
}

impl Drop for Local {
    fn drop(&mut self) {
        // The fetcher (and its connections) is gone: every kept permit
        // goes back to the fleet.
        let (hosts, waits) = match self.state.get_mut() {
            Ok(s) => (std::mem::take(&mut s.hosts), std::mem::take(&mut s.waits)),
            Err(_) => return,
        };
        for (host, (ms, n)) in waits {
            let _ = self.queue.host_waited(&host, ms, n);
        }
        for (host, h) in hosts {
            for p in h.idle.into_iter().chain(h.retiring) {
                let _ = self
                    .queue
                    .host_release(&host, &p.token, Duration::ZERO, self.limit);
            }
        }
    }
}

impl FleetGate {
    /// Permits of `queue`'s crawl: `limit` per host, connections at least
    /// `interval` apart, each permit leased for `lease` (longer than one
    /// fetch's deadline). Keeping is off ([`FleetGate::keep_connections`]).
    pub fn new(
        queue: Arc<CrawlQueue>,
        limit: usize,
        interval: Duration,
        lease: Duration,
    ) -> FleetGate {
        let limit = limit.max(1);
        FleetGate {
            local: Arc::new(Local {
                queue: queue.clone(),
                limit,
                state: Mutex::default(),
                changed: std::sync::Condvar::new(),
                wanted: std::sync::Condvar::new(),
            }),
            queue,
            limit,
            interval,
            lease,
            linger: Duration::ZERO,
            turn: Duration::ZERO,
        }
    }

    /// Keep permits given back for reuse by this process (see the type's
    /// documentation): `linger` is the fetch policy's
    /// [`kept_connection_linger`](super::FetchPolicy::kept_connection_linger),
    /// `turn` the longest reuse of one permit. The lease grows by the
    /// linger. Ignored when the gate bounds the request rate.
    pub fn keep_connections(mut self, linger: Duration, turn: Duration) -> FleetGate {
        if self.interval.is_zero() {
            self.linger = linger;
            self.turn = turn;
            self.lease += linger + RENEW_EVERY;
        }
        self
    }

    fn keeps(&self) -> bool {
        !self.linger.is_zero()
    }

    /// One permit request to the fleet, with the token it was asked for
    /// (`starved`: this process holds no usable permit of the host).
    fn ask(&self, host: &str, starved: bool) -> Result<(Permit, String), String> {
        let token = crate::replay::redis::random_token()?;
        let p = self
            .queue
            .host_acquire(host, &token, self.limit, self.interval, self.lease, starved)
            .map_err(|e| e.to_string())?;
        Ok((p, token))
    }

    /// Count a wait for a permit of `host` that began at `start`, if the
    /// fetch had to wait (`waited`: the host was at its bound, its next
    /// connection not yet due, or others of this process were first) and
    /// it lasted: kept here for the manager to add, or added at once. A
    /// permit granted at the first ask is no wait, however long the round
    /// trip to Redis took.
    fn count_wait(&self, host: &str, start: Instant, waited: bool) {
        if !waited {
            return;
        }
        let waited = start.elapsed();
        if waited < Duration::from_millis(1) {
            return;
        }
        let ms = u64::try_from(waited.as_millis()).unwrap_or(u64::MAX);
        if self.keeps() {
            if let Ok(mut st) = self.local.state.lock() {
                let w = st.waits.entry(host.to_owned()).or_default();
                *w = (w.0.saturating_add(ms), w.1.saturating_add(1));
                return;
            }
        }
        let _ = self.queue.host_waited(host, ms, 1);
    }

    fn granted(
        &self,
        host: &str,
        token: String,
        start: Instant,
        waited: bool,
        closing: bool,
    ) -> Box<dyn ConnectionPermit> {
        self.count_wait(host, start, waited);
        let now = Instant::now();
        Box::new(FleetPermit {
            gate: self.clone(),
            host: host.to_owned(),
            held: Some(Held {
                token,
                granted: now,
                renewed: now,
                idle_since: now,
                used: false,
            }),
            delay: Duration::ZERO,
            closing,
        })
    }

    fn no_permit(&self, host: &str, start: Instant) -> String {
        format!(
            "{host}: no connection permit within the deadline ({} ms waited; at most {} open to one host across the fleet)",
            start.elapsed().as_millis(),
            self.limit
        )
    }

    /// Without keeping: ask the fleet until granted, waiting for a wake.
    fn acquire_each(
        &self,
        host: &str,
        deadline: Instant,
        start: Instant,
    ) -> Result<Box<dyn ConnectionPermit>, String> {
        let mut waited = false;
        loop {
            let (p, token) = self.ask(host, true)?;
            let left = deadline.saturating_duration_since(Instant::now());
            match p {
                Permit::Granted => return Ok(self.granted(host, token, start, waited, true)),
                Permit::Full if !left.is_zero() => {
                    waited = true;
                    self.queue
                        .host_wait(&[host.to_owned()], left.min(WAIT_SLICE))
                        .map_err(|e| e.to_string())?;
                }
                Permit::NotBefore(ms) if Duration::from_millis(ms) < left => {
                    waited = true;
                    std::thread::sleep(Duration::from_millis(ms));
                }
                _ => return Err(self.no_permit(host, start)),
            }
        }
    }

    /// Start the thread that asks the fleet for this process's waiters and
    /// gives back permits unused for the linger, once.
    fn start_manager(&self, st: &mut LocalState) {
        if st.manager {
            return;
        }
        st.manager = true;
        let (gate, local) = (self.clone_detached(), Arc::downgrade(&self.local));
        std::thread::spawn(move || manage(&gate, &local));
    }

    /// This gate's settings without its share of the local state (the
    /// manager holds that weakly, so that dropping the fetcher gives the
    /// kept permits back).
    fn clone_detached(&self) -> Settings {
        Settings {
            queue: self.queue.clone(),
            limit: self.limit,
            interval: self.interval,
            lease: self.lease,
            linger: self.linger,
        }
    }
}

/// The settings the manager thread works with.
struct Settings {
    queue: Arc<CrawlQueue>,
    limit: usize,
    interval: Duration,
    lease: Duration,
    linger: Duration,
}

/// The manager of a keeping gate (see [`FleetGate`]): gives back permits
/// unused for the linger (or past their turn and unused as long), and for
/// each host with fetches waiting and no permit at hand, asks the fleet,
/// or waits for a wake of those hosts. Ends with the gate.
fn manage(s: &Settings, local: &std::sync::Weak<Local>) {
    let (mut counted, mut looked) = (Instant::now(), Instant::now());
    loop {
        let Some(l) = local.upgrade() else { return };
        // Whether other fetches in the fleet wait for the hosts this
        // process holds permits of (one round trip, a few times a second).
        let holding: Vec<String> = match l.state.lock() {
            Ok(st) if looked.elapsed() >= CONTENTION_EVERY => st
                .hosts
                .iter()
                .filter(|(_, h)| h.held > 0)
                .map(|(host, _)| host.clone())
                .collect(),
            Ok(_) => Vec::new(),
            Err(_) => return,
        };
        let wanted = if holding.is_empty() {
            None
        } else {
            looked = Instant::now();
            // Unreachable Redis: as before (the permits end with their
            // leases if it stays away).
            s.queue.host_wanted(&holding).ok()
        };
        let mut give_back = Vec::new();
        let mut want = Vec::new();
        let mut waits = std::collections::HashMap::new();
        {
            let Ok(mut st) = l.state.lock() else { return };
            if let Some(wanted) = wanted {
                for (host, w) in holding.iter().zip(wanted) {
                    let Some(h) = st.hosts.get_mut(host) else {
                        continue;
                    };
                    h.contended = w;
                    if w {
                        // Kept connections' permits go back after the
                        // linger; fresh ones are still handed out.
                        let (used, fresh): (Vec<Held>, Vec<Held>) = std::mem::take(&mut h.idle)
                            .into_iter()
                            .partition(|p| p.used);
                        h.idle = fresh;
                        h.retiring.extend(used);
                    }
                }
            }
            let now = Instant::now();
            if now.duration_since(counted) >= Duration::from_secs(1) {
                counted = now;
                waits = std::mem::take(&mut st.waits);
            }
            for (host, h) in &mut st.hosts {
                let before = h.idle.len() + h.retiring.len();
                for list in [&mut h.idle, &mut h.retiring] {
                    list.retain(|p| {
                        let keep = now.duration_since(p.idle_since) < s.linger;
                        if !keep {
                            give_back.push((host.clone(), p.token.clone()));
                        }
                        keep
                    });
                }
                if h.waiting == 0 {
                    // Asked again at the next need.
                    h.full = false;
                }
                if h.not_before.is_some_and(|t| t <= now) {
                    h.not_before = None;
                }
                h.held = h
                    .held
                    .saturating_sub(before - h.idle.len() - h.retiring.len());
                if h.waiting > 0 && h.idle.is_empty() && h.not_before.is_none() && h.held < s.limit
                {
                    want.push((host.clone(), h.held <= h.retiring.len()));
                }
            }
            st.hosts.retain(|_, h| {
                !(h.held == 0 && h.waiting == 0 && h.not_before.is_none() && !h.full)
            });
        }
        drop(l);
        for (host, (ms, n)) in waits {
            let _ = s.queue.host_waited(&host, ms, n);
        }
        for (host, token) in give_back {
            // Unreachable Redis: the permit ends with its lease.
            let _ = s.queue.host_release(&host, &token, Duration::ZERO, s.limit);
        }
        let mut full = Vec::new();
        for (host, starved) in want {
            let Ok(token) = crate::replay::redis::random_token() else {
                continue;
            };
            let got = s
                .queue
                .host_acquire(&host, &token, s.limit, s.interval, s.lease, starved);
            let Some(l) = local.upgrade() else {
                if matches!(got, Ok(Permit::Granted)) {
                    let _ = s.queue.host_release(&host, &token, Duration::ZERO, s.limit);
                }
                return;
            };
            let Ok(mut st) = l.state.lock() else { return };
            let h = st.hosts.entry(host.clone()).or_default();
            let now = Instant::now();
            match got {
                Ok(Permit::Granted) => {
                    h.held += 1;
                    h.full = false;
                    h.idle.push(Held {
                        token,
                        granted: now,
                        renewed: now,
                        idle_since: now,
                        used: false,
                    });
                }
                Ok(Permit::Full) => {
                    h.full = true;
                    full.push(host);
                }
                Ok(Permit::NotBefore(ms)) => {
                    h.not_before = Some(now + Duration::from_millis(ms));
                }
                // Fail closed: the waiters run out of time.
                Err(_) => {}
            }
            l.changed.notify_all();
        }
        if !full.is_empty() {
            match s.queue.host_wait(&full, WAIT_SLICE) {
                Ok(Some(woken)) => {
                    let Some(l) = local.upgrade() else { return };
                    let mut st = match l.state.lock() {
                        Ok(st) => st,
                        Err(_) => return,
                    };
                    if let Some(h) = st.hosts.get_mut(&woken) {
                        h.full = false;
                    }
                }
                Ok(None) => {}
                Err(_) => std::thread::sleep(WAIT_SLICE),
            }
            continue;
        }
        let Some(l) = local.upgrade() else { return };
        let Ok(st) = l.state.lock() else { return };
        // Woken by a new waiter; otherwise look again for permits to give
        // back (a tenth of the linger at most late).
        let tick = (s.linger / 10).clamp(Duration::from_millis(10), WAIT_SLICE);
        let _ = l.wanted.wait_timeout(st, tick);
    }
}

impl ConnectionGate for FleetGate {
    fn acquire(&self, host: &str, deadline: Instant) -> Result<Box<dyn ConnectionPermit>, String> {
        let start = Instant::now();
        if !self.keeps() {
            return self.acquire_each(host, deadline, start);
        }
        // `queued`: this fetch waited (behind others of this process, or
        // for the fleet); `asked`: it asked the fleet once.
        let (mut asked, mut queued) = (false, false);
        let lock = || self.local.state.lock().map_err(|_| "permit lock poisoned");
        let mut st = lock()?;
        loop {
            let now = Instant::now();
            let h = st.host(host)?;
            // A fetch that finds others of this process waiting for the
            // host waits behind them.
            let open = h.not_before.is_none_or(|t| t <= now) && (queued || h.waiting == 0);
            let mut kept = None;
            let closing = h.contended;
            if open {
                // Past their turn, or covering a kept connection while
                // others wait for the host: not reused, back to the fleet
                // after the linger.
                while let Some(p) = h.idle.pop() {
                    if now.duration_since(p.granted) < self.turn && !(closing && p.used) {
                        kept = Some(p);
                        break;
                    }
                    h.retiring.push(p);
                }
            }
            // Nobody here waits for the host, and the fleet may have a
            // permit: ask at once.
            let ask_now = open
                && kept.is_none()
                && !asked
                && h.waiting == 0
                && !h.full
                && h.held < self.limit;
            if let Some(mut p) = kept {
                drop(st);
                if p.renewed.elapsed() >= RENEW_EVERY {
                    match self.queue.host_renew(host, &p.token, self.lease) {
                        Ok(true) => p.renewed = Instant::now(),
                        // Its lease ran out (Redis was away): no longer
                        // ours; look again.
                        Ok(false) => {
                            st = lock()?;
                            let h = st.hosts.entry(host.to_owned()).or_default();
                            h.held = h.held.saturating_sub(1);
                            continue;
                        }
                        Err(e) => return Err(e.to_string()),
                    }
                }
                self.count_wait(host, start, queued);
                return Ok(Box::new(FleetPermit {
                    gate: self.clone(),
                    host: host.to_owned(),
                    held: Some(p),
                    delay: Duration::ZERO,
                    closing,
                }));
            }
            if ask_now {
                asked = true;
                let starved = h.held <= h.retiring.len();
                drop(st);
                let (p, token) = self.ask(host, starved)?;
                st = lock()?;
                let h = st.hosts.entry(host.to_owned()).or_default();
                match p {
                    Permit::Granted => {
                        h.held += 1;
                        h.full = false;
                        let closing = h.contended;
                        drop(st);
                        return Ok(self.granted(host, token, start, queued, closing));
                    }
                    Permit::Full => h.full = true,
                    Permit::NotBefore(ms) => {
                        h.not_before = Some(Instant::now() + Duration::from_millis(ms));
                    }
                }
                continue;
            }
            let left = deadline.saturating_duration_since(now);
            if left.is_zero() {
                return Err(self.no_permit(host, start));
            }
            st.hosts.entry(host.to_owned()).or_default().waiting += 1;
            self.start_manager(&mut st);
            self.local.wanted.notify_one();
            st = self
                .local
                .changed
                .wait_timeout(st, left.min(WAIT_SLICE))
                .map_err(|_| "permit lock poisoned")?
                .0;
            let h = st.hosts.entry(host.to_owned()).or_default();
            h.waiting = h.waiting.saturating_sub(1);
            queued = true;
        }
    }

    fn keeps_connections(&self) -> bool {
        self.keeps()
    }
}

/// A held permit; on drop kept for reuse (or given back, with any
/// `Retry-After` delay).
struct FleetPermit {
    gate: FleetGate,
    host: String,
    held: Option<Held>,
    delay: Duration,
    /// Its request carries `Connection: close` and it goes back to the
    /// fleet on drop (no keeping, or others wait for the host).
    closing: bool,
}

/// The delay of a `Retry-After` value: delay-seconds or an HTTP-date (RFC
/// 9110 section 10.2.3), at most [`MAX_RETRY_AFTER`].
pub fn retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let v = value.trim();
    let d = if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        Duration::from_secs(v.parse().unwrap_or(u64::MAX))
    } else {
        httpdate::parse_http_date(v)
            .ok()?
            .duration_since(now)
            .unwrap_or(Duration::ZERO)
    };
    Some(d.min(MAX_RETRY_AFTER))
}

impl ConnectionPermit for FleetPermit {
    fn answered(&mut self, _status: u16, value: Option<&str>) {
        if let Some(d) = value.and_then(|v| retry_after(v, std::time::SystemTime::now())) {
            self.delay = d;
        }
    }

    fn keep_alive(&self) -> bool {
        !self.closing
    }
}

impl Drop for FleetPermit {
    fn drop(&mut self) {
        let Some(mut p) = self.held.take() else {
            return;
        };
        let g = &self.gate;
        // A closing permit's request carried `Connection: close`: its
        // connection is closed once the answer is read (or dropped
        // unread), so the permit goes back at once.
        if !self.delay.is_zero() {
            // The fleet's next connection to the host waits; unreachable
            // Redis: the permit ends with its lease.
            let token = if self.closing { p.token.as_str() } else { "" };
            let _ = g.queue.host_release(&self.host, token, self.delay, g.limit);
        } else if self.closing {
            let _ = g
                .queue
                .host_release(&self.host, &p.token, Duration::ZERO, g.limit);
        }
        if !g.keeps() {
            return;
        }
        if let Ok(mut st) = g.local.state.lock() {
            // The permit ends here: its host name becomes the key if the
            // host has none (no copy).
            let h = st.hosts.entry(std::mem::take(&mut self.host)).or_default();
            let now = Instant::now();
            if !self.delay.is_zero() {
                h.not_before = Some(now + self.delay);
            }
            if self.closing {
                h.held = h.held.saturating_sub(1);
                drop(st);
                g.local.changed.notify_all();
                g.local.wanted.notify_one();
                return;
            }
            p.idle_since = now;
            p.used = true;
            if now.duration_since(p.granted) >= g.turn || h.contended {
                h.retiring.push(p);
            } else {
                h.idle.push(p);
            }
            g.start_manager(&mut st);
        }
        g.local.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::FetchError;

    /// A take is what the thread verifies in about a second, within 1 and
    /// the bound (itself within 1 and `MAX_TAKE`), and `FIRST_TAKE` (at
    /// most the bound) before the pace is known or when the last take gave
    /// nothing to go by.
    #[test]
    fn a_take_follows_the_threads_pace_within_its_bounds() {
        let ms = Duration::from_millis;
        assert_eq!(take_size(128, None), FIRST_TAKE);
        assert_eq!(take_size(4, None), 4);
        assert_eq!(take_size(0, None), 1, "a bound of 0 is 1");
        assert_eq!(take_size(0, Some((ms(1), 10))), 1);
        assert_eq!(take_size(10_000, Some((ms(1), 10))), MAX_TAKE);
        assert_eq!(take_size(128, Some((ms(0), 10))), 128, "no time at all");
        assert_eq!(take_size(128, Some((ms(5), 0))), FIRST_TAKE);
        // 10 entries in 100 ms: 100 a second.
        assert_eq!(take_size(128, Some((ms(100), 10))), 100);
        // 3 in a second: 3; 3 in 1.5 s: 2 (rounded up); 1 in a minute: 1.
        assert_eq!(take_size(128, Some((ms(1000), 3))), 3);
        assert_eq!(take_size(128, Some((ms(1500), 3))), 2);
        assert_eq!(take_size(128, Some((Duration::from_secs(60), 1))), 1);
        assert_eq!(take_size(128, Some((Duration::MAX, 1))), 1);
    }

    /// An outage's first failure is the one reported; later ones within
    /// the grace are ridden out quietly; a success ends the outage, and
    /// the next failure starts another.
    #[test]
    fn an_outage_is_reported_once_and_ends_with_a_success() {
        let e = || ReplayError::Unavailable("connection refused".into());
        let mut o = Outage::default();
        assert!(matches!(o.tolerate(e()), Ok(true)));
        assert!(matches!(o.tolerate(e()), Ok(false)));
        assert!(matches!(o.tolerate(e()), Ok(false)));
        o.over();
        assert!(matches!(o.tolerate(e()), Ok(true)));
        // Past the grace the failure is the caller's.
        o.since = Instant::now().checked_sub(REDIS_GRACE);
        assert!(o.since.is_some(), "a clock that goes back 30 s");
        assert!(matches!(o.tolerate(e()), Err(ReplayError::Unavailable(_))));
    }

    /// A thread reads its part of the worker's streams first, each part
    /// from the next stream in turn; and the stream its last take ended in
    /// before all others, so that it drains a host's stream on the
    /// connection it holds rather than leave it for a later take.
    #[test]
    fn a_thread_drains_the_stream_its_last_take_ended_in() {
        // On a thread of its own: the order is kept in thread-locals.
        std::thread::spawn(|| {
            let shared = Shared {
                own: std::sync::RwLock::new(vec![3, 10, 17, 24, 31, 38]),
                ..Shared::default()
            };
            // Thread 0 of 2: the streams at even places first.
            assert_eq!(own_order(&shared, 2), [3, 17, 31, 10, 24, 38]);
            assert_eq!(own_order(&shared, 2), [17, 31, 3, 24, 38, 10]);
            // The last take ended in 24: it comes first, the others keep
            // their order.
            LAST_STREAM.set(Some(24));
            assert_eq!(own_order(&shared, 2), [24, 31, 3, 17, 38, 10]);
            // A stream no longer the worker's (its share changed) is not read.
            LAST_STREAM.set(Some(5));
            assert_eq!(own_order(&shared, 2), [3, 17, 31, 10, 24, 38]);
        })
        .join()
        .expect("the order");
    }

    /// Redis unreachable: no permit, so no connection (fail closed).
    #[test]
    fn no_permit_without_redis() {
        let q = Arc::new(CrawlQueue::open("redis://127.0.0.1:1/0", "t").unwrap());
        let g = FleetGate::new(q, 2, Duration::ZERO, Duration::from_secs(5));
        let deadline = Instant::now() + Duration::from_secs(5);
        match g.acquire("a.example:443", deadline) {
            Ok(_) => panic!("a permit without Redis"),
            Err(e) => assert!(e.contains("127.0.0.1:1"), "{e}"),
        }
    }

    #[test]
    fn retry_after_values() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(
            retry_after("99999999999999999999", now),
            Some(MAX_RETRY_AFTER)
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(retry_after(&later, now), Some(Duration::from_secs(30)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(retry_after(&past, now), Some(Duration::ZERO));
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(retry_after("-1", now), None);
    }

    #[test]
    fn transient_failures_are_retried_and_others_are_results() {
        let timeout = UrlVerifyError::Fetch(FetchError::Deadline {
            url: "https://a.example/".into(),
            scope: "fetch",
            limit: Duration::from_secs(1),
        });
        assert!(is_transient(&timeout));
        let unavailable = UrlVerifyError::Fetch(FetchError::Status {
            url: "https://a.example/".into(),
            status: 503,
        });
        assert!(is_transient(&unavailable));
        let missing = UrlVerifyError::Fetch(FetchError::Status {
            url: "https://a.example/".into(),
            status: 404,
        });
        assert!(!is_transient(&missing));
        assert!(!is_transient(&UrlVerifyError::NoKeySource));
        // No permit: transient, and put off without counting; a timeout at
        // the origin counts.
        let no_permit = UrlVerifyError::Fetch(FetchError::NoPermit {
            url: "https://a.example/".into(),
            message: "a.example:443: no connection permit within the deadline".into(),
        });
        assert!(is_transient(&no_permit) && is_back_pressure(&no_permit));
        assert!(!is_back_pressure(&timeout) && !is_back_pressure(&unavailable));
        assert_eq!(no_permit.code(), "fetch.timeout");
        let r = failed_report("https://a.example/", "crawl.gave-up", "3 attempts");
        assert_eq!(labels(&r), ("not-verified", "crawl.gave-up".into()));
    }

    /// One rule for a document's failure and a catalog's: no permit is put
    /// off (the origin was never asked), a timeout or a 503 retried, a
    /// refusal or a 403 the input's result at once, the report `verify URL
    /// --json` gives: `unavailable`, for a catalog as for a document
    /// (nothing could be checked).
    #[test]
    fn a_failure_is_put_off_retried_or_the_result_by_one_rule() {
        use crate::net::catalog::CatalogUrlError;
        let url = "https://a.example/.well-known/ai-catalog.json";
        let no_permit = || FetchError::NoPermit {
            url: url.into(),
            message: "a.example:443: no connection permit within the deadline".into(),
        };
        let status = |status| FetchError::Status {
            url: url.into(),
            status,
        };
        // Each failure with the code its report carries.
        let catalog = |e: FetchError| {
            let e = CatalogUrlError::Unreachable(e);
            (catalog_failed(url, &e), e.code())
        };
        let document = |e: FetchError| {
            let e = UrlVerifyError::Fetch(e);
            (document_failed(url, &e), e.code())
        };
        type Classify<'a> = &'a dyn Fn(FetchError) -> (Step, &'static str);
        for classify in [&catalog as Classify, &document] {
            let (step, want) = classify(no_permit());
            assert!(
                matches!(step, Step::Postpone { ref code, .. } if code == want),
                "{step:?}"
            );
            let (step, want) = classify(status(503));
            assert!(
                matches!(step, Step::Retry { ref code, .. } if code == want),
                "{step:?}"
            );
            let (Step::Result(r), want) = classify(status(403)) else {
                panic!("a 403 is retried");
            };
            assert_eq!(r.verdict, Verdict::Unavailable);
            let e = r
                .error
                .as_ref()
                .map(|e| (e.code.as_str(), e.message.as_str()));
            assert!(
                matches!(e, Some((code, m)) if code == want && m.contains("403")),
                "{e:?}"
            );
        }
        assert!(matches!(
            catalog_failed(url, &CatalogUrlError::Fetch("HTTP status 204".into())),
            Step::Result(r) if r.verdict == Verdict::Unavailable
        ));
        // Fetched and refused: not verified.
        let cross = CatalogUrlError::CrossOrigin {
            asked: url.into(),
            served: "https://b.example/".into(),
        };
        assert!(matches!(
            catalog_failed(url, &cross),
            Step::Result(r) if r.verdict == Verdict::NotVerified
        ));
        // A document's result is its `verify URL` report, byte for byte.
        let e = UrlVerifyError::Fetch(status(404));
        let Step::Result(r) = document_failed(url, &e) else {
            panic!("a 404 is retried");
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            serde_json::to_string(&e.report("verify", url)).unwrap()
        );
    }
}
