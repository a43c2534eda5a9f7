//! `agentsig crawl add | work | status | stop | resume | results`: a
//! verification crawl run by any number of worker processes on any number
//! of machines over one Redis (server, Cluster or Sentinel), each input
//! verified exactly as `verify URL` verifies it ([`agentsig::net::Resolver`],
//! the fetch options and fleet key-set cache of `verify`), one result per
//! input in the report shape. The queue is [`agentsig::replay::stream`],
//! the worker [`agentsig::net::crawl`] (docs/crawl.md).

use super::args::{BoundedLines, FetchArgs, LineError};
use super::net::NetArgs;
use super::{CliError, CliResult, TrustedKeyArgs};
use agentsig::catalog::CatalogOptions;
use agentsig::net::crawl::{
    run_worker, FleetGate, VerifyStep, WorkerOptions, DEFAULT_LEASE, DEFAULT_MAX_ATTEMPTS,
    DEFAULT_TAKE, MAX_TAKE, REDIS_GRACE,
};
use agentsig::replay::stream::{CrawlEntry, CrawlQueue};
use agentsig::report::{Report, Verdict};
use clap::{Args, Subcommand};
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest input line read by `crawl add`.
const MAX_LINE: usize = 8 * 1024;

/// Longest reuse of one per-host permit by one worker. Other workers
/// waiting for the host do not wait for it: the holder gives its kept
/// permits back within a linger once it sees them waiting. A long turn
/// keeps a worker from asking for fresh permits while its old ones still
/// linger, which would fill the host for the other workers.
const PERMIT_TURN: Duration = Duration::from_secs(60);

#[derive(Subcommand)]
pub enum CrawlCommand {
    /// Queue inputs: LIST is a file of https URLs or origins (one a line; empty lines and lines
    /// starting with # skipped), or - for standard input. An input already queued in this crawl
    /// is not queued again.
    Add(AddArgs),
    /// Run a worker: take inputs from the queue, verify each as `verify URL` does, write one
    /// result per input to the results stream (and --results-out), expand catalogs into the queue.
    /// Run as many as you like, on any machines, with the same options.
    Work(Box<WorkArgs>),
    /// Queue depth, rate, results by verdict and reason code, per-host waits.
    Status(StatusArgs),
    /// Stop the crawl: workers finish the input at hand and exit; nothing is lost.
    Stop(CrawlArgs),
    /// Resume a stopped crawl (then start workers again).
    Resume(CrawlArgs),
    /// Print every result (one JSON report a line), oldest first; with --remove, take each out of
    /// Redis once written, and with --follow, go on as results come.
    Results(ResultsArgs),
    /// Delete every key of the crawl (its queue, results, records and counters; the per-host
    /// connection permits and Retry-After times end by themselves, within a lease). Refused
    /// while workers or a results reader are live, inputs are queued or results are still in
    /// Redis, unless --force.
    Delete(DeleteArgs),
}

/// `crawl delete`.
#[derive(Args, Clone, Debug)]
pub struct DeleteArgs {
    #[command(flatten)]
    pub crawl: CrawlArgs,
    /// Delete even while workers or a results reader are live, inputs are queued or results have
    /// not been taken out with `crawl results --remove`: those are lost.
    #[arg(long)]
    pub force: bool,
}

/// `crawl results`.
#[derive(Args, Clone, Debug)]
pub struct ResultsArgs {
    #[command(flatten)]
    pub crawl: CrawlArgs,
    /// Take each result out of the results stream once it is written to standard output (flushed,
    /// and on disk when standard output is a file), so that Redis does not hold every report of a
    /// long crawl. A result is removed only after it was written: a reader killed in between
    /// writes it again next time (at least once; details.crawl_input names the input). Each input
    /// keeps its record: it is not queued or verified again, and `crawl status` still counts it.
    /// One reader at a time takes results out of a crawl (two would write the same results):
    /// another one's --remove is refused (exit 1), or with --follow waits for it to stop. A
    /// reader killed without giving its hold back frees it within 40 s.
    #[arg(long)]
    pub remove: bool,
    /// After the last result, wait for more (asking Redis every second) and write them as they
    /// come, until interrupted: Ctrl-C or SIGTERM ends it between pages, leaving no line
    /// half-written. Redis unreachable (a failover, a restart) is asked again for 30 s, as a
    /// worker does, before it gives up.
    #[arg(long)]
    pub follow: bool,
}

/// Where the crawl lives.
#[derive(Args, Clone, Debug)]
pub struct CrawlArgs {
    /// The crawl's name (1 to 64 of A-Z a-z 0-9 . _ -): its keys are agentsig:crawl:{NAME}:*,
    /// one Redis Cluster slot.
    #[arg(value_parser = crawl_name)]
    pub name: String,
    /// The Redis: redis[s]://[USER:PASS@]HOST:PORT/DB, redis+cluster://HOST:PORT,...,
    /// redis+sentinel://HOST:PORT,.../MASTER, each with ?wait=N for acknowledged writes
    /// (docs/fleet.md); or env:NAME to read it from an environment variable (a password then
    /// stays off the command line).
    #[arg(long, allow_hyphen_values = true, value_name = "URL")]
    pub redis: String,
}

/// A crawl name as the command line takes it: refused at once, as a usage
/// error, when Redis keys could not carry it.
fn crawl_name(name: &str) -> Result<String, String> {
    agentsig::replay::stream::check_crawl_name(name).map(|()| name.to_owned())
}

impl CrawlArgs {
    fn queue(&self) -> Result<CrawlQueue, CliError> {
        let url = match self.redis.strip_prefix("env:") {
            Some(var) => std::env::var(var)
                .map_err(|_| CliError::usage(format!("--redis env:{var}: not set")))?,
            None => self.redis.clone(),
        };
        CrawlQueue::open(&url, &self.name).map_err(|e| CliError::usage(format!("--redis: {e}")))
    }

    /// [`CrawlArgs::queue`] of a crawl that is in Redis: a name that finds
    /// none (mistyped, deleted) is an input that cannot be read (exit 2),
    /// not an empty crawl.
    fn existing(&self) -> Result<CrawlQueue, CliError> {
        let q = self.queue()?;
        if !q.exists().map_err(store)? {
            return Err(CliError::unreadable(format!(
                "no crawl {} in this Redis (`crawl add` or a worker's start makes one)",
                self.name
            )));
        }
        Ok(q)
    }
}

#[derive(Args)]
pub struct AddArgs {
    #[command(flatten)]
    pub crawl: CrawlArgs,
    /// A file of inputs (one a line), or - for standard input.
    #[arg(allow_hyphen_values = true)]
    pub list: String,
}

#[derive(Args)]
pub struct WorkArgs {
    #[command(flatten)]
    pub crawl: CrawlArgs,
    /// Threads, each verifying one input at a time (default 4).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Most connections open at once to one host, summed over every worker of the crawl on
    /// every machine (held in Redis; default 2).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub per_host: usize,
    /// Most new connections per second to one host, over the whole crawl (default 0: no bound
    /// beyond --per-host). A Retry-After answer puts off the host's next connection.
    #[arg(long, value_name = "N", default_value_t = 0.0)]
    pub rate: f64,
    /// An input pending this long with a worker that stopped renewing it is taken over by
    /// another (the worker died): DURATION, 1s or more, default 60s. A live worker renews its
    /// inputs three times per lease, so it measures whether a worker lives, not how long an input
    /// takes.
    #[arg(long, value_name = "DURATION", value_parser = super::args::parse_duration)]
    pub lease: Option<u64>,
    /// Attempts at one input (a timeout, 5xx, 429, a lost worker) before its failure is its
    /// result (1 or more, default 3).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ATTEMPTS)]
    pub max_attempts: u32,
    /// The most entries each thread takes at once, in one Redis round trip (1 to 256): it
    /// verifies them one after the other and writes their results with its next take. A thread
    /// takes about as many as it verified in the last second (16 at first), at most this many:
    /// many when inputs are quick, so that the round trip and the finishing script's fixed costs
    /// are shared, and few when they are slow, so that a stopped worker soon finishes those at
    /// hand.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TAKE,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_TAKE as u64))]
    pub take: usize,
    /// Exit once every input of the crawl has its result, within about 0.1 s of the last one
    /// (default: wait for more).
    #[arg(long)]
    pub until_empty: bool,
    /// Close every connection after its request and give its fleet permit back at once. By
    /// default a worker keeps connections alive for a host's next inputs, each under a fleet
    /// permit it holds while the connection may be open (reused for 60 s at most, then given
    /// back once its connections are closed), saving a TLS handshake and two Redis round trips
    /// per fetch; when another worker finds the host full, the holder stops reusing the
    /// permits of its kept connections (they go back once those are closed, about 6 s) and
    /// closes each later connection to the host after its request.
    #[arg(long)]
    pub no_keep_connections: bool,
    /// Keep connections alive (the default; kept for scripts that name it).
    #[arg(long, hide = true, conflicts_with = "no_keep_connections")]
    pub keep_connections: bool,
    /// Also append each result this worker writes to FILE (JSON Lines: one report a line).
    #[arg(long, value_name = "FILE")]
    pub results_out: Option<String>,
    /// This worker's name in the consumer group (default: host name and process id).
    #[arg(long, value_name = "NAME")]
    pub consumer: Option<String>,
    /// Largest age of an RFC 9421 signature's created: DURATION (seconds, or 5m, 12h, 30d).
    #[arg(long, value_parser = super::args::parse_duration, value_name = "DURATION")]
    pub max_age: Option<u64>,
    #[command(flatten)]
    pub net: NetArgs,
    #[command(flatten)]
    pub trust: TrustedKeyArgs,
}

#[derive(Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub crawl: CrawlArgs,
    /// Print one JSON report (agentsig.report/1) with the figures in details.
    #[arg(long)]
    pub json: bool,
}

impl CrawlCommand {
    /// The crawl's name, for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        Some(
            match self {
                CrawlCommand::Add(a) => &a.crawl.name,
                CrawlCommand::Work(a) => &a.crawl.name,
                CrawlCommand::Status(a) => &a.crawl.name,
                CrawlCommand::Stop(a) | CrawlCommand::Resume(a) => &a.name,
                CrawlCommand::Results(a) => &a.crawl.name,
                CrawlCommand::Delete(a) => &a.crawl.name,
            }
            .clone(),
        )
    }
}

/// Redis failed or refused: exit 1.
fn store(e: agentsig::replay::ReplayError) -> CliError {
    CliError::failed(e.to_string())
}

/// How often `crawl results --follow` asks Redis for new results once it
/// has written all there were.
const FOLLOW_POLL: Duration = Duration::from_secs(1);

/// Set when Ctrl-C or SIGTERM arrives, by a thread that waits for them
/// ([`super::interrupted`]): the command then ends its work in hand and
/// exits by itself. A second one ends the process at once (exit 130), for
/// an operator who will not wait; a results reader first gives its hold
/// back ([`forced_exit`]). `None` when no such thread could be
/// started (the signals then end the process as usual).
fn stop_on_signal() -> Option<Arc<AtomicBool>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .ok()?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let (ready, installed) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            rt.block_on(async {
                let wait = super::interrupted();
                tokio::pin!(wait);
                // Polled once, so the handlers are in place before the
                // caller goes on.
                tokio::select! {
                    biased;
                    () = &mut wait => {}
                    () = std::future::ready(()) => {
                        let _ = ready.send(());
                        wait.await;
                    }
                }
                flag.store(true, Ordering::SeqCst);
                super::interrupted().await;
                errln!("interrupted again: exiting now");
                forced_exit();
            });
        })
        .ok()?;
    installed.recv().ok()?;
    Some(stop)
}

/// What a second signal does before the process exits at once: give back
/// a results reader's hold ([`Remover`]), so that the next reader need not
/// wait for its lease to end. Set while a hold is held.
static ON_FORCED_EXIT: Mutex<Option<Box<dyn FnOnce() + Send>>> = Mutex::new(None);

/// How long a forced exit waits for [`ON_FORCED_EXIT`] (Redis may be
/// away; the hold then ends with its lease).
const FORCED_EXIT_WAIT: Duration = Duration::from_secs(1);

/// Exit at once (130), after [`ON_FORCED_EXIT`] or [`FORCED_EXIT_WAIT`],
/// whichever ends first.
fn forced_exit() -> ! {
    let last = ON_FORCED_EXIT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(f) = last {
        let (done, ended) = std::sync::mpsc::channel();
        let ran = std::thread::Builder::new().spawn(move || {
            f();
            let _ = done.send(());
        });
        if ran.is_ok() {
            let _ = ended.recv_timeout(FORCED_EXIT_WAIT);
        }
    }
    std::process::exit(130);
}

/// `crawl results`: every result, a page at a time; with `--remove`, each
/// page taken out of Redis only once it is written (and on disk when
/// standard output is a file), so a failed write removes nothing. Ctrl-C
/// or SIGTERM ends it between pages (the page in hand written, synced and
/// removed), so a stopped `--follow` reader leaves no line half-written.
fn results(a: &ResultsArgs) -> CliResult {
    // A follower may start before the crawl is made, and waits for it.
    // Shared with the release a forced exit runs ([`ON_FORCED_EXIT`]).
    let q = Arc::new(if a.follow {
        a.crawl.queue()?
    } else {
        a.crawl.existing()?
    });
    let stop = stop_on_signal().unwrap_or_default();
    // A second's wait, in slices, so that a signal ends it soon.
    let pause = || {
        for _ in 0..10 {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(FOLLOW_POLL / 10);
        }
    };
    // One reader takes results out at a time.
    let hold = if a.remove {
        match Remover::take(&q, &a.crawl.name, a.follow, &stop, pause)? {
            Some(h) => Some(h),
            // A signal ended the wait for another reader.
            None => return Ok(ExitCode::SUCCESS),
        }
    } else {
        None
    };
    if let Some(h) = &hold {
        let (queue, holder) = (Arc::clone(&q), h.holder.clone());
        *ON_FORCED_EXIT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Box::new(move || {
            let _ = queue.release_remover(&holder);
        }));
    }
    // The hold is renewed on a thread of its own, so that it lasts while
    // this one is blocked on standard output; that thread ends (the scope
    // joins it) before the hold is given back.
    std::thread::scope(|s| {
        let renewing = hold.as_ref().map(|h| h.keep_renewed(s));
        read_results(a, &q, &stop, pause, renewing.as_ref())
    })
}

/// The loop of [`results`]: each page written (synced and removed with
/// `--remove`) before the next is read.
fn read_results(
    a: &ResultsArgs,
    q: &CrawlQueue,
    stop: &AtomicBool,
    pause: impl Fn(),
    hold: Option<&Renewing<'_>>,
) -> CliResult {
    // Duplicated once, not per page.
    let sync_to = if a.remove {
        Some(stdout_file().map_err(|e| unwritten(&e, true))?)
    } else {
        None
    };
    let mut outage = Outage::default();
    let mut after = "0".to_owned();
    let mut out = std::io::stdout().lock();
    let mut page_bytes = Vec::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(ExitCode::SUCCESS);
        }
        let page = match q.results(&after, 1000) {
            Ok(page) => page,
            // The signal that stops the reader can interrupt this very
            // call (a socket with a timeout is not restarted: signal(7)):
            // nothing is in hand, so the reader ends as asked.
            Err(_) if stop.load(Ordering::SeqCst) => return Ok(ExitCode::SUCCESS),
            Err(e) if a.follow => {
                outage.tolerate(e)?;
                pause();
                continue;
            }
            Err(e) => return Err(store(e)),
        };
        outage.over();
        let Some(last) = page.last() else {
            if a.follow {
                pause();
                continue;
            }
            return Ok(ExitCode::SUCCESS);
        };
        // Written only while this reader surely holds the crawl.
        if let Some(h) = hold {
            h.check(&a.crawl.name)?;
        }
        after = last.0.clone();
        page_bytes.clear();
        for (_, _, report) in &page {
            page_bytes.extend_from_slice(report);
            page_bytes.push(b'\n');
        }
        match out.write_all(&page_bytes).and_then(|()| out.flush()) {
            Ok(()) => {}
            // A reader that stopped reading (`| head`): nothing more to do.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe && !a.remove => {
                return Ok(ExitCode::SUCCESS)
            }
            Err(e) => return Err(unwritten(&e, a.remove)),
        }
        if let Some(file) = &sync_to {
            synced(file).map_err(|e| unwritten(&e, true))?;
            let ids: Vec<String> = page.into_iter().map(|(id, ..)| id).collect();
            // The page is written: remove it, asking again through an
            // outage while following (past the reader, it would be written
            // again only by the next reader). A removal interrupted by the
            // signal that stops the reader is asked once more, so that the
            // page in hand is done before the reader ends.
            let mut asked_after_stop = false;
            while let Err(e) = q.remove_results(&ids) {
                if stop.load(Ordering::SeqCst) && !asked_after_stop {
                    asked_after_stop = true;
                    continue;
                }
                if !a.follow || stop.load(Ordering::SeqCst) {
                    return Err(store(e));
                }
                outage.tolerate(e)?;
                pause();
            }
            outage.over();
        }
    }
}

/// How long the hold of a results remover lasts unless renewed
/// ([`CrawlQueue::hold_remover`]): past [`REDIS_GRACE`], so that a reader
/// riding out an outage keeps it, and short enough that the hold of a
/// reader killed without giving it back does not keep the next one waiting
/// long.
const REMOVER_LEASE: Duration = Duration::from_secs(REDIS_GRACE.as_secs() + 10);

/// How often a results remover renews its hold.
const REMOVER_RENEW: Duration = Duration::from_secs(5);

/// This reader's hold on taking results out of a crawl: one reader at a
/// time, since two that each write a page before removing it write the
/// same results twice. Given back when dropped (the reader ends).
struct Remover<'a> {
    queue: &'a CrawlQueue,
    holder: String,
    /// When the request that took it was sent: its lease runs from a
    /// moment after.
    taken: Instant,
}

/// A [`Remover`]'s hold renewed every [`REMOVER_RENEW`] by a thread of its
/// own, whatever the reader is doing (blocked on a standard output that
/// is not read, for one). The thread ends when this is dropped.
struct Renewing<'a> {
    state: Arc<(Mutex<HoldState>, std::sync::Condvar)>,
    _thread: std::thread::ScopedJoinHandle<'a, ()>,
}

/// What the renewing thread knows of the hold.
struct HoldState {
    /// When the newest request that confirmed the hold was sent.
    confirmed: Instant,
    /// Another reader holds it now (this one's lease ran out while Redis
    /// could not be reached): its name.
    lost: Option<String>,
    /// The reader is done: the thread ends.
    ended: bool,
}

impl<'a> Remover<'a> {
    /// Take the hold. Held by another reader: refused (exit 1), or, with
    /// `--follow`, waited for, saying so once; `None` when a signal ended
    /// the wait.
    fn take(
        queue: &'a CrawlQueue,
        name: &str,
        follow: bool,
        stop: &AtomicBool,
        pause: impl Fn(),
    ) -> Result<Option<Remover<'a>>, CliError> {
        // Unique to this process: its host and id, and when it started.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let holder = format!("{} {nanos:x}", consumer_name());
        let mut outage = Outage::default();
        let mut said = false;
        loop {
            if stop.load(Ordering::SeqCst) {
                return Ok(None);
            }
            let sent = Instant::now();
            match queue.hold_remover(&holder, REMOVER_LEASE) {
                Ok(None) => {
                    return Ok(Some(Remover {
                        queue,
                        holder,
                        taken: sent,
                    }))
                }
                Ok(Some(other)) if follow => {
                    outage.over();
                    if !said {
                        errln!(
                            "agentsig: warning: {}; waiting for it to stop",
                            held_by(&other, name)
                        );
                        said = true;
                    }
                }
                Ok(Some(other)) => {
                    return Err(CliError::failed(format!(
                        "{}: two would write the same results twice. Run one `crawl results \
                         --remove` per crawl; the hold of a reader that ended without giving \
                         it back ends within {} s",
                        held_by(&other, name),
                        REMOVER_LEASE.as_secs()
                    )))
                }
                Err(e) if follow => outage.tolerate(e)?,
                Err(e) => return Err(store(e)),
            }
            pause();
        }
    }

    /// Renew the hold every [`REMOVER_RENEW`] on a thread of `scope` until
    /// the returned [`Renewing`] is dropped. A failed renewal is asked
    /// again at the next; [`Renewing::check`] tells whether the hold is
    /// still sure.
    fn keep_renewed<'s>(&'s self, scope: &'s std::thread::Scope<'s, '_>) -> Renewing<'s> {
        let state = Arc::new((
            Mutex::new(HoldState {
                confirmed: self.taken,
                lost: None,
                ended: false,
            }),
            std::sync::Condvar::new(),
        ));
        let shared = state.clone();
        let thread = scope.spawn(move || {
            let (lock, wake) = &*shared;
            let mut st = lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            loop {
                st = wake
                    .wait_timeout_while(st, REMOVER_RENEW, |st| !st.ended)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
                if st.ended {
                    return;
                }
                drop(st);
                let sent = Instant::now();
                let renewed = self.queue.hold_remover(&self.holder, REMOVER_LEASE);
                st = lock
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                match renewed {
                    Ok(None) => st.confirmed = sent,
                    Ok(Some(other)) => {
                        st.lost = Some(other);
                        return;
                    }
                    // Redis away: asked again at the next renewal; the
                    // reader stops writing once the hold is no longer sure.
                    Err(_) => {}
                }
            }
        });
        Renewing {
            state,
            _thread: thread,
        }
    }
}

impl Renewing<'_> {
    /// Whether this reader surely holds the crawl: not when another reader
    /// took it, nor once no renewal was confirmed for the lease less a
    /// renewal's interval (Redis unreachable that long; the lease may end
    /// before the next page is written).
    fn check(&self, name: &str) -> Result<(), CliError> {
        let st = self
            .state
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(other) = &st.lost {
            return Err(CliError::failed(format!(
                "this reader's hold ran out and {}: stopping, so as not to write the same \
                 results twice",
                held_by(other, name)
            )));
        }
        let unsure = REMOVER_LEASE.saturating_sub(REMOVER_RENEW);
        if st.confirmed.elapsed() >= unsure {
            return Err(CliError::failed(format!(
                "this reader's hold on crawl {name} was not renewed for {} s (Redis \
                 unreachable): stopping, so as not to write the same results twice",
                unsure.as_secs()
            )));
        }
        Ok(())
    }
}

impl Drop for Renewing<'_> {
    fn drop(&mut self) {
        let (lock, wake) = &*self.state;
        lock.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .ended = true;
        wake.notify_all();
    }
}

impl Drop for Remover<'_> {
    fn drop(&mut self) {
        ON_FORCED_EXIT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        // Redis away: the hold ends with its lease.
        let _ = self.queue.release_remover(&self.holder);
    }
}

/// "another reader (HOLDER) is taking the results of crawl NAME out of
/// Redis".
fn held_by(other: &str, name: &str) -> String {
    let who = reader_name(other);
    format!("another reader ({who}) is taking the results of crawl {name} out of Redis")
}

/// A results reader's name as people read it: its host and process, not
/// the part that makes it unique ([`Remover::take`]).
fn reader_name(holder: &str) -> &str {
    holder.split(' ').next().unwrap_or(holder)
}

/// Redis unreachable while `crawl results --follow` runs: it asks again for
/// [`REDIS_GRACE`], as a worker does (a Sentinel failover, a restart; the
/// one rule, [`agentsig::net::crawl::Outage`]), saying so once, then gives
/// up (exit 1).
#[derive(Default)]
struct Outage(agentsig::net::crawl::Outage);

impl Outage {
    fn tolerate(&mut self, e: agentsig::replay::ReplayError) -> Result<(), CliError> {
        let said = e.to_string();
        if self.0.tolerate(e).map_err(store)? {
            errln!(
                "agentsig: warning: {said}; asking again for up to {} s",
                REDIS_GRACE.as_secs()
            );
        }
        Ok(())
    }

    fn over(&mut self) {
        self.0.over();
    }
}

/// `crawl delete`: every key of the crawl, once nothing in it would be
/// lost (no live worker, nothing queued, every result taken out), or with
/// `--force`.
fn delete(a: &DeleteArgs) -> CliResult {
    // With --force, also the stray keys of a crawl that is not there.
    let q = if a.force {
        a.crawl.queue()?
    } else {
        a.crawl.existing()?
    };
    let s = q.status().map_err(store)?;
    let in_redis = s.results.saturating_sub(s.results_removed);
    let mut left = Vec::new();
    if !s.workers.is_empty() {
        left.push(format!("{} live worker(s)", s.workers.len()));
    }
    if s.queued > 0 {
        left.push(format!("{} input(s) queued", s.queued));
    }
    if in_redis > 0 {
        left.push(format!(
            "{in_redis} result(s) not taken out (`crawl results --remove`)"
        ));
    }
    if let Some(who) = &s.results_reader {
        left.push(format!("a live results reader ({})", reader_name(who)));
    }
    if !left.is_empty() && !a.force {
        return Err(CliError::failed(format!(
            "crawl {} not deleted: {}; --force deletes them too",
            a.crawl.name,
            left.join(", ")
        )));
    }
    q.delete().map_err(store)?;
    errln!("crawl {} deleted", a.crawl.name);
    Ok(ExitCode::SUCCESS)
}

/// Standard output could not be written.
fn unwritten(e: &std::io::Error, remove: bool) -> CliError {
    CliError::unwritable(format!(
        "standard output: {e}{}",
        if remove {
            "; the results not yet removed stay in Redis"
        } else {
            ""
        }
    ))
}

/// Standard output on disk when it is a file (`fsync`), so that a result
/// removed from Redis is not lost with the machine; a pipe or a terminal
/// has nothing to sync.
fn synced(stdout: &std::fs::File) -> std::io::Result<()> {
    match stdout.sync_data() {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
        other => other,
    }
}

/// Standard output as a file, to sync it ([`synced`]).
fn stdout_file() -> std::io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    Ok(std::fs::File::from(
        std::io::stdout().as_fd().try_clone_to_owned()?,
    ))
}

/// `agentsig crawl ...`.
pub fn run(c: CrawlCommand) -> CliResult {
    match c {
        CrawlCommand::Add(a) => add(&a),
        CrawlCommand::Work(a) => work(&a),
        CrawlCommand::Status(a) => status(&a),
        CrawlCommand::Stop(a) => {
            a.existing()?.set_stopped(true).map_err(store)?;
            errln!(
                "crawl {} stopped: workers exit after the input at hand",
                a.name
            );
            Ok(ExitCode::SUCCESS)
        }
        CrawlCommand::Resume(a) => {
            a.existing()?.set_stopped(false).map_err(store)?;
            errln!(
                "crawl {} resumed: start workers with `agentsig crawl work`",
                a.name
            );
            Ok(ExitCode::SUCCESS)
        }
        CrawlCommand::Results(a) => results(&a),
        CrawlCommand::Delete(a) => delete(&a),
    }
}

/// An input line as the crawl queues it: an https URL as is; a bare host
/// name is its https origin. A line that is neither (a space in it) is
/// queued as written, so that its result (a URL refused) names the line
/// the list holds, not a URL made of it.
fn normalize(line: &str) -> Option<String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        return None;
    }
    Some(if t.contains("://") || t.contains(char::is_whitespace) {
        t.to_owned()
    } else {
        format!("https://{t}")
    })
}

fn add(a: &AddArgs) -> CliResult {
    let q = a.crawl.queue()?;
    let reader: Box<dyn BufRead> = if a.list == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(&a.list)
                .map_err(|e| CliError::unreadable(format!("{}: {e}", a.list)))?,
        ))
    };
    q.create().map_err(|e| CliError::failed(e.to_string()))?;
    let (mut read, mut queued) = (0u64, 0u64);
    let mut batch = Vec::new();
    for (n, line) in BoundedLines::new(reader, MAX_LINE) {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                // The inputs before it are queued, and each input is queued
                // once: the list can be given again once mended.
                q.add(&batch, 0)
                    .map_err(|e| CliError::failed(e.to_string()))?;
                let msg = format!(
                    "{} line {n}: {e} (the {read} input(s) before it are queued; mend the line \
                     and run `crawl add` again: an input is never queued twice)",
                    a.list
                );
                return Err(match e {
                    LineError::Read(_) => CliError::unreadable(msg),
                    LineError::TooLong(_) | LineError::NotUtf8 => CliError::malformed(msg),
                });
            }
        };
        if let Some(i) = normalize(&line) {
            read += 1;
            batch.push(i);
        }
        if batch.len() >= 1000 {
            queued += q
                .add(&batch, 0)
                .map_err(|e| CliError::failed(e.to_string()))?;
            batch.clear();
        }
    }
    queued += q
        .add(&batch, 0)
        .map_err(|e| CliError::failed(e.to_string()))?;
    errln!(
        "{queued} of {read} inputs queued in crawl {} ({} already there)",
        a.crawl.name,
        read - queued
    );
    Ok(ExitCode::SUCCESS)
}

/// The default consumer name: host name and process id.
fn consumer_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
        .take(64)
        .collect();
    format!(
        "{}-{}",
        if host.is_empty() { "worker" } else { &host },
        std::process::id()
    )
}

fn work(a: &WorkArgs) -> CliResult {
    let queue = Arc::new(a.crawl.queue()?);
    if a.per_host == 0 {
        return Err(CliError::usage("--per-host must be at least 1"));
    }
    if !(a.rate.is_finite() && a.rate >= 0.0) {
        return Err(CliError::usage(
            "--rate must be a number of connections per second, 0 or more",
        ));
    }
    let threads = match a.jobs {
        Some(0) => return Err(CliError::usage("-j must be at least 1")),
        Some(n) => n,
        None => 4,
    };
    if a.lease == Some(0) {
        return Err(CliError::usage(
            "--lease must be at least 1s: a worker renews its inputs three times per lease",
        ));
    }
    if a.max_attempts == 0 {
        return Err(CliError::usage("--max-attempts must be at least 1"));
    }
    let lease = a.lease.map_or(DEFAULT_LEASE, Duration::from_secs);
    let fetch: &FetchArgs = &a.net.fetch;
    let policy = fetch.policy()?;
    let interval = if a.rate > 0.0 {
        Duration::from_secs_f64((1.0 / a.rate).min(3600.0))
    } else {
        Duration::ZERO
    };
    // A permit outlives no fetch: leased for one fetch's deadline and more.
    let permit_lease = policy.timeout + Duration::from_secs(5);
    // Unless --no-keep-connections, a worker keeps its connections to a
    // host (and their permits) for the host's next inputs, each permit for
    // one turn at most, and gives them back when others wait for the host.
    let mut gate = FleetGate::new(queue.clone(), a.per_host, interval, permit_lease);
    if !a.no_keep_connections {
        gate = gate.keep_connections(policy.kept_connection_linger(), PERMIT_TURN);
    }
    let policy = policy
        .max_connections_per_host(a.per_host)
        .gate(Arc::new(gate));
    let fetcher = fetch.fetcher_with(policy)?;
    let mut options = super::net::options(&a.net, &a.trust, a.max_age, None)?;
    // A descriptor, then its `.jws`, on one connection: a crawl overlaps
    // the round trips of many inputs over its threads, so fetching the two
    // at once would only cost each host a second connection (a second TLS
    // handshake and fleet permit). The verdict is the same
    // (`UrlVerifyOptions::sequential_fetches`).
    options.sequential_fetches = true;
    let v = VerifyStep::new(
        agentsig::net::Resolver::with_options(fetcher, options),
        CatalogOptions::default(),
    );
    let jsonl = match &a.results_out {
        Some(p) => Some(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| CliError::unwritable(format!("--results-out {p}: {e}")))?,
        )),
        None => None,
    };
    if a.consumer.as_deref().is_some_and(str::is_empty) {
        return Err(CliError::usage("--consumer must not be empty"));
    }
    let mut opts = WorkerOptions::new(a.consumer.clone().unwrap_or_else(consumer_name));
    opts.threads = threads;
    opts.lease = lease;
    opts.max_attempts = a.max_attempts;
    opts.max_depth = u32::try_from(CatalogOptions::default().max_depth).unwrap_or(8);
    opts.until_empty = a.until_empty;
    opts.batch = a.take;
    let done = AtomicU64::new(0);
    let verified = AtomicU64::new(0);
    let on_result = |_: &CrawlEntry, is_verified: bool, json: &[u8]| {
        done.fetch_add(1, Ordering::Relaxed);
        if is_verified {
            verified.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(f) = &jsonl {
            // The report as the results stream holds it, serialized once.
            let mut line = Vec::with_capacity(json.len() + 1);
            line.extend_from_slice(json);
            line.push(b'\n');
            if let Ok(mut f) = f.lock() {
                let _ = f.write_all(&line);
            }
        }
    };
    // Ctrl-C or SIGTERM: the inputs at hand are finished and their results
    // written, and the worker leaves the fleet, as on `crawl stop`.
    let stop = stop_on_signal().unwrap_or_default();
    let finished = AtomicBool::new(false);
    let step = |e: &CrawlEntry| v.step(e);
    let outcome = std::thread::scope(|s| {
        if std::io::stderr().is_terminal() {
            s.spawn(|| progress(&queue, &done, &verified, &finished));
        }
        let r = run_worker(&queue, &opts, &step, &on_result, &stop);
        finished.store(true, Ordering::SeqCst);
        r
    });
    // The fetcher and its connections closed, its kept permits go back to
    // the fleet.
    drop(v);
    let counts = outcome.map_err(|e| CliError::failed(format!("crawl {}: {e}", a.crawl.name)))?;
    errln!(
        "worker {}: {} results written ({} verified), {} retried, {} put off for want of a connection permit, {} taken over, {} duplicates skipped",
        opts.consumer,
        counts.results,
        counts.verified,
        counts.retried,
        counts.postponed,
        counts.reclaimed,
        counts.duplicates
    );
    Ok(ExitCode::SUCCESS)
}

/// A progress line on standard error (a terminal), once a second.
fn progress(queue: &CrawlQueue, done: &AtomicU64, verified: &AtomicU64, finished: &AtomicBool) {
    let mut shown = false;
    while !finished.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1000));
        let depth = queue.queued().map_or_else(
            |e| format!("queue unknown: {e}"),
            |n| format!("{n} in the queue"),
        );
        let _ = write!(
            std::io::stderr().lock(),
            "\r\x1b[2K{} results by this worker, {} verified; {depth}",
            done.load(Ordering::Relaxed),
            verified.load(Ordering::Relaxed),
        );
        shown = true;
    }
    if shown {
        let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
    }
}

fn status(a: &StatusArgs) -> CliResult {
    let q = a.crawl.existing()?;
    let s = q.status().map_err(|e| CliError::failed(e.to_string()))?;
    if a.json {
        let mut r = Report::error("crawl status", Some(&a.crawl.name), "", "");
        r.error = None;
        r.detail("queued", s.queued);
        r.detail("pending", s.pending);
        r.detail(
            "pending_by_worker",
            s.pending_by_worker
                .iter()
                .map(|(w, n)| (w.clone(), serde_json::json!(n)))
                .collect::<serde_json::Map<_, _>>(),
        );
        r.detail("results", s.results);
        r.detail("results_removed", s.results_removed);
        r.detail(
            "results_reader",
            s.results_reader.as_deref().map(reader_name),
        );
        r.detail("inputs", s.inputs);
        if let Some((rate, since)) = s.recent_rate {
            r.detail("results_per_second", rate);
            r.detail("ms_since_last_result", since);
        }
        let counters: serde_json::Map<String, serde_json::Value> = s
            .counters
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::json!(v)))
            .collect();
        r.detail("counters", counters);
        r.detail(
            "host_waits",
            s.host_waits
                .iter()
                .map(|(h, ms, n)| serde_json::json!({"host": h, "waited_ms": ms, "waits": n}))
                .collect::<Vec<_>>(),
        );
        r.detail("hosts_waited", s.hosts_waited);
        r.detail("stopped", s.stopped);
        r.detail(
            "workers",
            s.workers
                .iter()
                .map(|(w, streams, queued)| {
                    serde_json::json!({"worker": w, "input_streams": streams, "queued": queued})
                })
                .collect::<Vec<_>>(),
        );
        r.set_verdict(Verdict::Done);
        super::print_report(&r);
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "crawl {}{}\n  inputs {}  results {}  queued {} ({} pending with workers)\n",
        a.crawl.name,
        if s.stopped { " (stopped)" } else { "" },
        s.inputs,
        s.results,
        s.queued,
        s.pending
    );
    if s.results_removed > 0 {
        outln!(
            "  {} of the results taken out of Redis by `crawl results --remove`\n",
            s.results_removed
        );
    }
    if let Some(who) = &s.results_reader {
        outln!(
            "  results reader {}: taking results out of Redis as they are written\n",
            reader_name(who)
        );
    }
    if let Some((rate, since)) = s.recent_rate {
        outln!("  rate {rate:.1} results/s (last 1000), last result {since} ms ago\n");
    }
    for (w, streams, queued) in &s.workers {
        outln!("  live worker {w}: {streams} input streams of its own, {queued} queued in them\n");
    }
    for (w, n) in &s.pending_by_worker {
        outln!("  pending with {w}: {n}\n");
    }
    for (k, v) in &s.counters {
        outln!("  {k}: {v}\n");
    }
    for (h, ms, n) in s.host_waits.iter().take(10) {
        outln!("  waits for {h}: {n} waits, {ms} ms in all\n");
    }
    if s.hosts_waited > 10 {
        outln!(
            "  ({} hosts waited in all; the {} that waited longest are in --json)\n",
            s.hosts_waited,
            s.host_waits.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn inputs_are_urls_or_origins() {
        assert_eq!(normalize("  # comment"), None);
        assert_eq!(normalize(""), None);
        assert_eq!(normalize("a.example").as_deref(), Some("https://a.example"));
        assert_eq!(normalize(" not a url ").as_deref(), Some("not a url"));
        assert_eq!(
            normalize("https://a.example/agent.json ").as_deref(),
            Some("https://a.example/agent.json")
        );
    }
}
