//! A verification crawl run by a fleet of workers over Redis Streams
//! (`agentsig crawl`): the worker loop and the fleet-wide per-host
//! connection permits. The queue's state is [`crate::replay::stream`];
//! what one input's verification is, the caller gives (the command line
//! gives `verify URL`'s: the same [`Resolver`](super::Resolver), fetch
//! policy and fleet key-set cache).
//!
//! # Guarantees
//! * Every input ends with exactly one result in the results stream: the
//!   finishing script writes a result only for an input that has none and
//!   acknowledges the entry in the same atomic step
//!   ([`CrawlQueue::finish`]); a duplicated entry, or one finished twice
//!   after its lease ran out, adds nothing.
//! * A worker killed mid-input loses nothing: its entries stay pending and
//!   another worker takes them over once they have been pending for the
//!   lease ([`CrawlQueue::claim_stale`]).
//! * An input whose verification fails for a reason worth retrying (a
//!   timeout, a 5xx or 429 answer, no connection permit) is queued again,
//!   at most [`WorkerOptions::max_attempts`] attempts in all (a worker lost
//!   mid-input counts as one); then its result records the failure and its
//!   reason (`crawl.gave-up`). Nothing is dropped.
//! * Politeness over the whole fleet: at most [`FleetGate::limit`]
//!   connections open to one host (`host:port`) at once, summed over every
//!   worker on every machine, each connection opened under a permit held in
//!   Redis and closed before the permit is given back (no connection is
//!   kept alive past it: [`FetchPolicy::gate`](super::FetchPolicy::gate));
//!   connections to one host started at least [`FleetGate::interval`]
//!   apart; a `Retry-After` (RFC 9110 section 10.2.3) puts off the host's
//!   next connection by its delay (at most [`MAX_RETRY_AFTER`]). Redis
//!   unreachable: no permit, no connection (fail closed).

use super::fetch::{ConnectionGate, ConnectionPermit};
use super::verify::UrlVerifyError;
use crate::replay::stream::{CrawlEntry, CrawlQueue, Finished, Permit, ResultRecord};
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
/// Default lease: an entry pending this long is taken over by another
/// worker. Longer than one `verify URL` operation (30 s) plus its permit
/// waits.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);
/// How long a worker keeps trying when Redis does not answer before it
/// gives up (exit): its entries stay pending for the others.
pub const REDIS_GRACE: Duration = Duration::from_secs(30);

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
    /// A failure worth trying again later (a timeout, 5xx, 429, no
    /// permit): its code and reason.
    Retry {
        /// The reason code (`fetch.timeout`).
        code: String,
        /// The reason.
        reason: String,
    },
}

/// Whether trying `e` again later may succeed: a timeout, a DNS failure,
/// a 5xx or 429 answer, no connection permit, for the descriptor, its
/// `.jws` or its keys.
pub fn is_transient(e: &UrlVerifyError) -> bool {
    match e {
        UrlVerifyError::Fetch(f) | UrlVerifyError::JwsFetch { source: f, .. } => f.is_transient(),
        UrlVerifyError::Discovery(super::discovery::DiscoveryError::Fetch(f)) => f.is_transient(),
        _ => false,
    }
}

/// A failed input's report, the shape `verify --batch` gives one:
/// `verify` over the input, not verified, with its code and reason.
pub fn failed_report(input: &str, code: &str, message: &str) -> Report {
    let mut r = Report::error("verify", Some(input), code, message);
    r.set_verdict(Verdict::NotVerified);
    r
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
    /// for more.
    pub until_empty: bool,
    /// How long one read waits for a new entry.
    pub block: Duration,
}

impl WorkerOptions {
    /// Defaults for `consumer`: one thread, [`DEFAULT_LEASE`],
    /// [`DEFAULT_MAX_ATTEMPTS`], catalog depth 8, waiting for more input.
    pub fn new(consumer: impl Into<String>) -> WorkerOptions {
        WorkerOptions {
            consumer: consumer.into(),
            threads: 1,
            lease: DEFAULT_LEASE,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            max_depth: 8,
            until_empty: false,
            block: Duration::from_millis(500),
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
    reclaimed: AtomicU64,
    last_claim_ms: AtomicU64,
    idle: AtomicUsize,
    /// The entries being verified now, renewed by the heartbeat.
    held: Mutex<std::collections::BTreeSet<String>>,
    /// Threads still running.
    running: AtomicUsize,
}

/// A report's verdict word and reason code, as the statistics count them.
fn labels(r: &Report) -> (String, String) {
    let verdict = serde_json::to_value(r.verdict)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let code = r.error.as_ref().map(|p| p.code.clone()).unwrap_or_default();
    (verdict, code)
}

/// Run a worker on `queue` until it is stopped ([`CrawlQueue::set_stopped`]
/// or `stop`), or, with [`WorkerOptions::until_empty`], until every input
/// has its result. `verify` gives each input's [`Step`]; `on_result` sees
/// each result this worker wrote (for JSON Lines, a progress line).
///
/// # Errors
/// [`ReplayError::Unavailable`] when Redis stayed unreachable for
/// [`REDIS_GRACE`]: the worker stops; what it held stays pending for the
/// others.
pub fn run_worker(
    queue: &CrawlQueue,
    opts: &WorkerOptions,
    verify: &(dyn Fn(&CrawlEntry) -> Step + Sync),
    on_result: &(dyn Fn(&CrawlEntry, &Report) + Sync),
    stop: &AtomicBool,
) -> Result<WorkerCounts, ReplayError> {
    queue.create()?;
    let shared = Shared::default();
    let threads = opts.threads.max(1);
    let failure: Mutex<Option<ReplayError>> = Mutex::new(None);
    let epoch = Instant::now();
    shared.running.store(threads, Ordering::SeqCst);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                if let Err(e) = thread_loop(queue, opts, verify, on_result, stop, &shared, epoch) {
                    stop.store(true, Ordering::SeqCst);
                    if let Ok(mut f) = failure.lock() {
                        f.get_or_insert(e);
                    }
                }
                shared.running.fetch_sub(1, Ordering::SeqCst);
            });
        }
        s.spawn(|| heartbeat(queue, opts, &shared));
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(WorkerCounts {
        results: shared.results.load(Ordering::SeqCst),
        verified: shared.verified.load(Ordering::SeqCst),
        duplicates: shared.duplicates.load(Ordering::SeqCst),
        retried: shared.retried.load(Ordering::SeqCst),
        reclaimed: shared.reclaimed.load(Ordering::SeqCst),
    })
}

/// Renew the entries this worker is verifying, three times per lease,
/// until its threads are done: an input that takes longer than the lease
/// (permit waits, a slow host) is not taken over while its worker lives.
fn heartbeat(queue: &CrawlQueue, opts: &WorkerOptions, shared: &Shared) {
    let every = (opts.lease / 3).max(Duration::from_millis(50));
    let tick = Duration::from_millis(50).min(every);
    let mut last = Instant::now();
    while shared.running.load(Ordering::SeqCst) > 0 {
        std::thread::sleep(tick);
        if last.elapsed() < every {
            continue;
        }
        last = Instant::now();
        let ids: Vec<String> = match shared.held.lock() {
            Ok(h) => h.iter().cloned().collect(),
            Err(_) => return,
        };
        // Redis unreachable: the entries' leases run out and others take
        // them over (the results stay one per input).
        let _ = queue.renew(&opts.consumer, &ids);
    }
}

/// One thread of a worker: take (or take over) an entry, verify, finish.
fn thread_loop(
    queue: &CrawlQueue,
    opts: &WorkerOptions,
    verify: &(dyn Fn(&CrawlEntry) -> Step + Sync),
    on_result: &(dyn Fn(&CrawlEntry, &Report) + Sync),
    stop: &AtomicBool,
    shared: &Shared,
    epoch: Instant,
) -> Result<(), ReplayError> {
    let mut failing_since: Option<Instant> = None;
    let mut last_stop_check = Instant::now();
    // Redis unreachable: keep trying for the grace period, then give up.
    let tolerate = |e: ReplayError, since: &mut Option<Instant>| -> Result<(), ReplayError> {
        let first = *since.get_or_insert_with(Instant::now);
        if first.elapsed() >= REDIS_GRACE {
            return Err(e);
        }
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
                    tolerate(e, &mut failing_since)?;
                    continue;
                }
            }
        }
        let entries = match next_entries(queue, opts, shared, epoch) {
            Ok(e) => e,
            Err(e) => {
                tolerate(e, &mut failing_since)?;
                continue;
            }
        };
        failing_since = None;
        if entries.is_empty() {
            if opts.until_empty {
                shared.idle.fetch_add(1, Ordering::SeqCst);
                let empty = queue.queued().map(|n| n == 0);
                shared.idle.fetch_sub(1, Ordering::SeqCst);
                match empty {
                    Ok(true) => return Ok(()),
                    Ok(false) => {}
                    Err(e) => tolerate(e, &mut failing_since)?,
                }
            }
            continue;
        }
        for e in entries {
            if let Ok(mut h) = shared.held.lock() {
                h.insert(e.entry.clone());
            }
            let r = one(queue, opts, verify, on_result, shared, &e);
            if let Ok(mut h) = shared.held.lock() {
                h.remove(&e.entry);
            }
            if let Err(err) = r {
                // The entry stays pending: another attempt after the lease.
                tolerate(err, &mut failing_since)?;
            }
        }
    }
    Ok(())
}

/// Entries pending past the lease with any worker (checked by one thread
/// of this worker about four times per lease), else new ones.
fn next_entries(
    queue: &CrawlQueue,
    opts: &WorkerOptions,
    shared: &Shared,
    epoch: Instant,
) -> Result<Vec<CrawlEntry>, ReplayError> {
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
        let got = queue.claim_stale(&opts.consumer, opts.lease, 1)?;
        if !got.is_empty() {
            shared
                .reclaimed
                .fetch_add(got.len() as u64, Ordering::SeqCst);
            // Look again soon: a dead worker may have left more.
            shared.last_claim_ms.store(1, Ordering::SeqCst);
            return Ok(got);
        }
    }
    queue.take(&opts.consumer, 1, opts.block)
}

/// Verify one entry and record its outcome.
fn one(
    queue: &CrawlQueue,
    opts: &WorkerOptions,
    verify: &(dyn Fn(&CrawlEntry) -> Step + Sync),
    on_result: &(dyn Fn(&CrawlEntry, &Report) + Sync),
    shared: &Shared,
    e: &CrawlEntry,
) -> Result<(), ReplayError> {
    let Some(attempts) = queue.start(e)? else {
        shared.duplicates.fetch_add(1, Ordering::SeqCst);
        return Ok(());
    };
    let (mut report, entries) = if attempts > opts.max_attempts {
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
        match verify(e) {
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
            Step::Retry { code, reason } if attempts >= opts.max_attempts => {
                let r = failed_report(
                    &e.input,
                    "crawl.gave-up",
                    &format!("{attempts} attempts failed; the last: {code}: {reason}"),
                );
                (r, Vec::new())
            }
            Step::Retry { code, reason } => {
                queue.retry(e, &format!("{code}: {reason}"))?;
                shared.retried.fetch_add(1, Ordering::SeqCst);
                return Ok(());
            }
        }
    };
    report.detail("crawl_input", &e.id);
    report.detail("crawl_attempts", attempts);
    if e.depth > 0 {
        report.detail("crawl_depth", e.depth);
    }
    if !entries.is_empty() {
        report.detail("crawl_entries_queued", entries.len());
    }
    let (verdict, code) = labels(&report);
    let json =
        serde_json::to_vec(&report).map_err(|err| ReplayError::Unavailable(err.to_string()))?;
    let rec = ResultRecord {
        report: &json,
        verdict: &verdict,
        code: &code,
        attempts,
    };
    match queue.finish(e, &rec, &entries)? {
        Finished::Written => {
            shared.results.fetch_add(1, Ordering::SeqCst);
            if report.verified {
                shared.verified.fetch_add(1, Ordering::SeqCst);
            }
            on_result(e, &report);
        }
        Finished::Duplicate => {
            shared.duplicates.fetch_add(1, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// The fleet-wide per-host connection permits of a crawl (see the module
/// documentation), for [`FetchPolicy::gate`](super::FetchPolicy::gate).
#[derive(Debug, Clone)]
pub struct FleetGate {
    queue: Arc<CrawlQueue>,
    /// Most connections open to one host at once, over the whole fleet.
    pub limit: usize,
    /// Least time between two connections to one host (the per-host
    /// request rate; zero: no bound).
    pub interval: Duration,
    /// A permit's lease: it ends by itself after this (its holder died).
    pub lease: Duration,
}

impl FleetGate {
    /// Permits of `queue`'s crawl: `limit` per host, connections at least
    /// `interval` apart, each permit leased for `lease` (longer than one
    /// fetch's deadline).
    pub fn new(
        queue: Arc<CrawlQueue>,
        limit: usize,
        interval: Duration,
        lease: Duration,
    ) -> FleetGate {
        FleetGate {
            queue,
            limit: limit.max(1),
            interval,
            lease,
        }
    }
}

/// Time to sleep before asking again for a permit of a full host: 2 to 9
/// ms, varied so that the workers waiting do not ask in step.
fn poll_pause() -> Duration {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    Duration::from_millis(2 + u64::from(n % 8))
}

impl ConnectionGate for FleetGate {
    fn acquire(&self, host: &str, deadline: Instant) -> Result<Box<dyn ConnectionPermit>, String> {
        let token = crate::replay::redis::random_token()?;
        let start = Instant::now();
        loop {
            let wait = match self
                .queue
                .host_acquire(host, &token, self.limit, self.interval, self.lease)
                .map_err(|e| e.to_string())?
            {
                Permit::Granted => {
                    let waited = start.elapsed();
                    if waited >= Duration::from_millis(1) {
                        let ms = u64::try_from(waited.as_millis()).unwrap_or(u64::MAX);
                        let _ = self.queue.host_waited(host, ms);
                    }
                    return Ok(Box::new(FleetPermit {
                        queue: self.queue.clone(),
                        host: host.to_owned(),
                        token,
                        delay: Duration::ZERO,
                    }));
                }
                Permit::Full => poll_pause(),
                Permit::NotBefore(ms) => Duration::from_millis(ms),
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || wait > left {
                return Err(format!(
                    "{host}: no connection permit within the deadline ({} ms waited; at most {} open to one host across the fleet)",
                    start.elapsed().as_millis(),
                    self.limit
                ));
            }
            std::thread::sleep(wait);
        }
    }
}

/// A held permit; given back (with any `Retry-After` delay) on drop.
struct FleetPermit {
    queue: Arc<CrawlQueue>,
    host: String,
    token: String,
    delay: Duration,
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
}

impl Drop for FleetPermit {
    fn drop(&mut self) {
        // Unreachable Redis: the permit ends with its lease.
        let _ = self.queue.host_release(&self.host, &self.token, self.delay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::FetchError;

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
        let r = failed_report("https://a.example/", "crawl.gave-up", "3 attempts");
        assert_eq!(labels(&r), ("not-verified".into(), "crawl.gave-up".into()));
    }
}
