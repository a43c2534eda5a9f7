//! `agentsig crawl` against `agentsig verify --batch`: the same signed
//! descriptors (each with its detached JWS, ES256, keys from a JWK Set
//! cached for 10 minutes) served by a keep-alive HTTPS server on
//! 127.0.0.1 (the tests' server, a test CA), verified
//! * by `verify --batch LIST -j 2 --per-host 4`, one process;
//! * by a crawl on one redis-server: `crawl add`, then 1, 2 and 4 worker
//!   processes (`crawl work --until-empty -j 2 --per-host 4`), keeping
//!   connections (the default), and one with `--no-keep-connections`.
//!
//! Measured per run: inputs per second (wall) and CPU per input, user +
//! system, of each agentsig process (`wait4`), and of redis-server (its
//! threads' `/proc/PID/task/*/schedstat`, nanoseconds; append-only file
//! flushed once a second), and the Redis commands per input with the time
//! spent in them (`INFO commandstats`). redis-server's idle rate (CPU per
//! second with no crawl running: its timers, the append-only file) is
//! measured for a second before each crawl run and the share of the run's
//! redis-server CPU it accounts for printed apart: a fixed cost per second,
//! which a slow run pays per input.
//!
//! The machine is shared, and the CPU time of one input moves with the
//! load of the moment (twice as much when another build runs), so each
//! crawl run is paired with a `verify --batch` run that sees the same
//! load: by default both start at once (`CRAWL_BENCH_PAIRING=alternate`:
//! one after the other, the first of the two changing from round to
//! round), and the ratio is taken per round. The whole is repeated
//! (`CRAWL_BENCH_ROUNDS`; by default enough rounds for about 10,000 inputs
//! per configuration, at least 5) and the median of each figure printed
//! with the spread of the per-round ratios. `CRAWL_BENCH_CONFIGS=1n,1,2,4`
//! picks the configurations (worker processes, `n`: without keeping
//! connections); `CRAWL_BENCH_JSON=1` adds a `verify --batch --json` run
//! to each pair (the reports the crawl writes, built by the batch too).
//! `CRAWL_BENCH_HOSTS=N` serves the inputs under N host names (one server,
//! input i on host i mod N), so that more workers than one host's permits
//! do not wait for each other: the case of a crawl over many hosts.
//! Instructions per input would be steadier than CPU time, but this
//! machine's virtual CPUs expose no hardware counters (`perf stat -e
//! instructions`: not supported); valgrind counts them, user space only,
//! with `CRAWL_BENCH_BIN` naming a script that runs agentsig under
//! `valgrind --tool=cachegrind` (`docs/crawl.md`, "Counted, not timed").
//! `CRAWL_BENCH_BIN=PATH` runs another
//! agentsig binary (e.g. an older build, to compare two builds run in
//! turn in the same minutes) in place of the one Cargo built.
//! `CRAWL_BENCH_EACH=1` prints each process's CPU and context switches
//! (a worker with no share of the hosts costs its start and its waits).
//! `CRAWL_BENCH_BASELINE=json` pairs each crawl run with `verify --batch
//! --json` in place of `verify --batch`: the batch then writes a report per
//! input, as the crawl's results stream holds, so that the ratio is the
//! fleet's cost for the same output (two processes at once, not the three
//! of `CRAWL_BENCH_JSON`). `CRAWL_BENCH_QUEUE=SIZES` (bytes, e.g.
//! `200,2000,8000`) measures the queue alone, no HTTPS and no
//! verification: N inputs queued on one host, then finished 32 at a time
//! (`CRAWL_BENCH_QUEUE_TAKE`: another number) by
//! `CrawlQueue::finish_and_take`, as a worker thread does, with a
//! report of each size; it prints redis-server's CPU per input, the floor
//! of what a crawl costs in Redis, and what each kilobyte of report adds
//! (and redis-server's instructions, run under valgrind by a `redis-server`
//! script first in PATH: `docs/crawl.md`, "Counted, not timed").
//! No assertion. Run: `cargo bench --bench crawl` (`-- N` for another number
//! of inputs per run, default 2000).

#[path = "../tests/net_support/mod.rs"]
mod net_support;
#[path = "../tests/redis_support/mod.rs"]
mod redis_support;

use agentsig::{descriptor, Algorithm, SigningKey};
use net_support::{Ca, Resp, Server};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const HOST: &str = "agents.example";

/// The host names the descriptors are served under (`CRAWL_BENCH_HOSTS=N`:
/// N hosts, `h0.agents.example` and on, input i on host i mod N, each with
/// its key set; by default the one host `agents.example`).
static HOSTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

fn hosts() -> &'static [String] {
    HOSTS.get_or_init(|| {
        match std::env::var("CRAWL_BENCH_HOSTS")
            .ok()
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(n) if n > 1 => (0..n).map(|i| format!("h{i}.{HOST}")).collect(),
            _ => vec![HOST.to_owned()],
        }
    })
}

/// User + system CPU seconds of the waited-for children so far.
fn children_cpu() -> f64 {
    // SAFETY: an all-zero rusage is a valid value, and getrusage writes it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    assert_eq!(rc, 0, "getrusage");
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Wait for `child` and return its user + system CPU seconds, its own and
/// its threads' (`wait4`), so that two children running at once are
/// measured apart. Panics (a bench, not a library) when it failed.
fn reap(child: std::process::Child, what: &str, log: &Path) -> f64 {
    let pid = i32::try_from(child.id()).expect("pid");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value, and wait4 writes it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not waited for yet; the pointers are
    // valid and writable.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut u) };
    assert_eq!(rc, pid, "wait4 {what}");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    assert!(
        ok,
        "{what} failed: {}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    if std::env::var_os("CRAWL_BENCH_EACH").is_some() {
        eprintln!("  {what} {pid}: {:.1} ms user, {:.1} ms system, {} voluntary / {} involuntary switches", t(u.ru_utime) * 1e3, t(u.ru_stime) * 1e3, u.ru_nvcsw, u.ru_nivcsw);
    }
    t(u.ru_utime) + t(u.ru_stime)
}

/// CPU seconds of process `pid`, all its threads (`/proc/PID/task/*/schedstat`:
/// time on a CPU in nanoseconds, where `/proc/PID/stat` counts clock ticks
/// of 10 ms, too coarse for the few hundred milliseconds of a small run).
fn process_cpu(pid: u32) -> f64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.flatten().map(|t| t.path()).collect::<Vec<_>>())
        .unwrap_or_default();
    let ns: u64 = tasks
        .iter()
        .filter_map(|t| std::fs::read_to_string(t.join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    ns as f64 * 1e-9
}

/// redis-server's CPU seconds per second while no crawl runs (its timers
/// at `hz`, the append-only file): a fixed cost per second, which a run
/// of `wall` seconds pays whatever its number of inputs.
fn idle_rate(pid: u32, sample: std::time::Duration) -> f64 {
    let (r0, t0) = (process_cpu(pid), Instant::now());
    std::thread::sleep(sample);
    (process_cpu(pid) - r0) / t0.elapsed().as_secs_f64()
}

/// Redis commands served since the last call, per command (`INFO
/// commandstats`, then `CONFIG RESETSTAT`): calls and microseconds spent
/// in them (a script's time includes its commands'), most called first.
fn redis_calls(port: u16) -> Vec<(String, u64, u64)> {
    let cli = |args: &[&str]| {
        Command::new("redis-cli")
            .args(["-p", &port.to_string()])
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    let info = cli(&["INFO", "commandstats"]);
    cli(&["CONFIG", "RESETSTAT"]);
    let field = |rest: &str, name: &str| -> Option<u64> {
        rest.split(',')
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))?
            .parse()
            .ok()
    };
    let mut calls: Vec<(String, u64, u64)> = info
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            Some((
                name.to_owned(),
                field(rest, "calls")?,
                field(rest, "usec").unwrap_or(0),
            ))
        })
        .filter(|(name, ..)| name != "config|resetstat" && name != "info")
        .collect();
    calls.sort_by_key(|c| std::cmp::Reverse(c.1));
    calls
}

fn fetch_args(dir: &Path) -> Vec<String> {
    let mut args = vec![
        "--ca-file".into(),
        dir.join("ca.pem").to_string_lossy().into_owned(),
        "--allow-private-networks".into(),
    ];
    for h in hosts() {
        args.extend(["--resolve-to".into(), format!("{h}=127.0.0.1")]);
    }
    args
}

/// One measured run: wall seconds, CPU seconds per input.
#[derive(Clone, Copy, Default)]
struct Batch {
    wall: f64,
    cpu: f64,
}

/// One crawl run: wall seconds; CPU seconds per input of the workers, of
/// redis-server, and of `crawl add` (both); the `verify --batch` CPU per
/// input it is compared with; Redis script calls and commands per input.
#[derive(Clone, Default)]
struct Run {
    wall: f64,
    cpu: f64,
    redis: f64,
    add: f64,
    add_redis: f64,
    batch: f64,
    /// `verify --batch --json` run with it (`CRAWL_BENCH_JSON`, together
    /// pairing only; else 0).
    batch_json: f64,
    /// redis-server's CPU per input that its idle rate (measured just
    /// before the run) accounts for over the run's wall time.
    redis_idle: f64,
    scripts: f64,
    commands: f64,
    calls: String,
}

fn label(workers: usize, keep: bool) -> String {
    format!(
        "crawl, {workers} worker process(es){}",
        if keep { "" } else { " --no-keep-connections" }
    )
}

/// `verify --batch`, one process, started; with `json`, `--json` (a
/// report per input, as the crawl writes to its results stream). Its
/// standard error goes to the file [`batch_log`] names.
fn spawn_batch(bin: &str, list: &Path, dir: &Path, json: bool) -> std::process::Child {
    Command::new(bin)
        .args(["verify", "--batch"])
        .arg(list)
        .args(["-j", "2", "--per-host", "4"])
        .args(json.then_some("--json"))
        .args(fetch_args(dir))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(batch_log(dir, json)).expect("log"))
        .spawn()
        .expect("batch")
}

/// Whether the baseline is `verify --batch --json` (`CRAWL_BENCH_BASELINE=json`).
fn baseline_json() -> bool {
    std::env::var("CRAWL_BENCH_BASELINE").is_ok_and(|b| b == "json")
}

fn batch_log(dir: &Path, json: bool) -> std::path::PathBuf {
    dir.join(if json { "batch-json.log" } else { "batch.log" })
}

/// `verify --batch`, one process, alone.
fn verify_batch(bin: &str, list: &Path, dir: &Path, n: usize) -> Batch {
    let t0 = Instant::now();
    let json = baseline_json();
    let cpu = reap(
        spawn_batch(bin, list, dir, json),
        "batch",
        &batch_log(dir, json),
    );
    Batch {
        wall: t0.elapsed().as_secs_f64(),
        cpu: cpu / n as f64,
    }
}

/// `crawl add`, then `workers` worker processes until the queue is empty;
/// with `together`, a `verify --batch` started with the workers (its run
/// measured apart: [`reap`]).
#[allow(clippy::too_many_arguments)]
fn crawl(
    bin: &str,
    url: &str,
    name: &str,
    list: &Path,
    dir: &Path,
    n: usize,
    workers: usize,
    keep: bool,
    redis_pid: u32,
    port: u16,
    together: bool,
) -> (Run, Option<Batch>) {
    let (c0, r0) = (children_cpu(), process_cpu(redis_pid));
    let o = Command::new(bin)
        .args(["crawl", "add", name, "--redis", url])
        .arg(list)
        .output()
        .expect("add");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (add, add_redis) = (children_cpu() - c0, process_cpu(redis_pid) - r0);
    redis_calls(port);
    let (r0, t0) = (process_cpu(redis_pid), Instant::now());
    // The baselines reaped by threads of their own, so that each one's
    // wall time ends when it does.
    let baseline = |json: bool| {
        let child = spawn_batch(bin, list, dir, json);
        let log = batch_log(dir, json);
        std::thread::spawn(move || {
            let cpu = reap(child, "batch", &log);
            Batch {
                wall: t0.elapsed().as_secs_f64(),
                cpu: cpu / n as f64,
            }
        })
    };
    let batch = together.then(|| baseline(baseline_json()));
    // `CRAWL_BENCH_JSON=1`: also `verify --batch --json` with them (three
    // processes at once: more contention than a pair).
    let batch_json =
        (together && !baseline_json() && std::env::var_os("CRAWL_BENCH_JSON").is_some())
            .then(|| baseline(true));
    let children: Vec<_> = (0..workers)
        .map(|w| {
            let log = dir.join(format!("w{w}.log"));
            let child = Command::new(bin)
                .args(["crawl", "work", name, "--redis", url, "--until-empty"])
                .args(["-j", "2", "--per-host", "4", "--consumer", &format!("w{w}")])
                .args((!keep).then_some("--no-keep-connections"))
                .args(fetch_args(dir))
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).expect("log"))
                .spawn()
                .expect("worker");
            (child, log)
        })
        .collect();
    let cpu: f64 = children
        .into_iter()
        .map(|(c, log)| reap(c, "worker", &log))
        .sum();
    let (wall, rcpu) = (t0.elapsed().as_secs_f64(), process_cpu(redis_pid) - r0);
    let batch = batch.map(|b| b.join().expect("batch"));
    let batch_json = batch_json.map_or(0.0, |b| b.join().expect("batch --json").cpu);
    let calls = redis_calls(port);
    let per = |k: u64| k as f64 / n as f64;
    let total: u64 = calls.iter().map(|c| c.1).sum();
    let scripts: u64 = calls
        .iter()
        .filter(|c| c.0 == "evalsha" || c.0 == "eval")
        .map(|c| c.1)
        .sum();
    let run = Run {
        wall,
        cpu: cpu / n as f64,
        redis: rcpu / n as f64,
        add: add / n as f64,
        add_redis: add_redis / n as f64,
        batch: 0.0,
        batch_json,
        redis_idle: 0.0,
        scripts: per(scripts),
        commands: per(total),
        calls: calls
            .iter()
            .map(|(c, k, us)| format!("{c} {:.2} ({:.1} us)", per(*k), *us as f64 / n as f64))
            .collect::<Vec<_>>()
            .join(", "),
    };
    (run, batch)
}

/// `CRAWL_BENCH_QUEUE=SIZES`: redis-server's CPU per input for the queue
/// alone, per report size in bytes: `n` inputs of one host queued, then
/// taken and finished 32 at a time (`CRAWL_BENCH_QUEUE_TAKE`) by one thread with
/// `CrawlQueue::finish_and_take` (a worker thread's loop, without the
/// fetches), each result's report that many bytes. The append-only file is
/// flushed once a second, as in the crawl runs. Five runs per size, the
/// median printed with their range, and the cost of each kilobyte of
/// report between the smallest and the largest size.
fn queue_only(sizes: &str, n: usize) {
    use agentsig::replay::stream::{CrawlQueue, Finishing, ResultRecord, SHARDS};
    let sizes: Vec<usize> = sizes.split(',').filter_map(|s| s.parse().ok()).collect();
    let mut redis = redis_support::Server::start_args(
        "crawl-bench-queue",
        vec!["--appendfsync".into(), "everysec".into()],
        None,
    )
    .expect("redis");
    let pid = redis.child.as_ref().map_or(0, std::process::Child::id);
    let inputs: Vec<String> = (0..n)
        .map(|i| format!("https://{HOST}:8443/a{i}.json"))
        .collect();
    let all: Vec<u16> = (0..SHARDS as u16).collect();
    let take: usize = std::env::var("CRAWL_BENCH_QUEUE_TAKE")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(32);
    println!("crawl queue bench: {n} inputs on 1 host, finished {take} at a time by one thread, redis-server appendfsync everysec");
    let mut medians = Vec::new();
    for &size in &sizes {
        let report = format!("{{\"pad\":\"{}\"}}", "x".repeat(size.saturating_sub(10)));
        let mut per = Vec::new();
        for round in 0..5 {
            let q =
                CrawlQueue::open(&redis.url(), &format!("queue-{size}-{round}")).expect("queue");
            q.create().expect("create");
            q.add(&inputs, 0).expect("add");
            let r0 = process_cpu(pid);
            let mut held: Vec<agentsig::replay::stream::CrawlEntry> = Vec::new();
            let mut order = all.clone();
            let mut finished = 0;
            loop {
                let done: Vec<Finishing<'_>> = held
                    .iter()
                    .map(|entry| Finishing {
                        entry,
                        result: ResultRecord {
                            report: report.as_bytes(),
                            verdict: "verified",
                            code: "",
                        },
                        children: &[],
                    })
                    .collect();
                finished += done.len();
                let got = q
                    .finish_and_take(&done, "q0", take, &order)
                    .expect("finish");
                held = got.taken.into_iter().map(|(e, _)| e).collect();
                // As a worker thread reads: the stream its last take
                // ended in first (the script passes over empty streams
                // before it, an `XLEN` each).
                if let Some(x) = held.last().map(|e| e.shard) {
                    order.retain(|&y| y != x);
                    order.insert(0, x);
                }
                if held.is_empty() {
                    break;
                }
            }
            assert_eq!(finished, n, "every input finished");
            per.push((process_cpu(pid) - r0) / n as f64 * 1e6);
            let _ = q.delete();
        }
        per.sort_by(f64::total_cmp);
        println!(
            "report of {size} bytes: {:.1} us of redis-server CPU per input ({:.1} to {:.1})",
            per[per.len() / 2],
            per[0],
            per[per.len() - 1]
        );
        medians.push((size, per[per.len() / 2]));
    }
    if let (Some(&(s0, c0)), Some(&(s1, c1))) = (medians.first(), medians.last()) {
        if s1 > s0 {
            println!(
                "each kilobyte of report: {:.1} us per input",
                (c1 - c0) / ((s1 - s0) as f64 / 1024.0)
            );
        }
    }
    // Stopped, not killed: a redis-server run under valgrind (a
    // `redis-server` script first in PATH) writes its count as it exits.
    redis.stop();
}

fn main() {
    if redis_support::redis_server().is_none() {
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this
    // file too, without it: then a smoke run of 20 inputs proves the bench
    // still works without spending the test suite's minutes.
    let benching = std::env::args().any(|a| a == "--bench");
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(if benching { 2000 } else { 20 });
    if let Ok(sizes) = std::env::var("CRAWL_BENCH_QUEUE") {
        queue_only(&sizes, n);
        return;
    }
    let dir = redis_support::tmp("crawl-bench-work");
    let ca = Ca::new();
    std::fs::write(dir.join("ca.pem"), ca.pem()).expect("ca");
    let names: Vec<&str> = hosts().iter().map(String::as_str).collect();
    let srv = Server::start_keep_alive(&ca, &names);
    srv.answer_without_delay();
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("k1");
    let mut j = key.verifying_key().to_jwk().to_value();
    j["use"] = json!("sig");
    srv.route(
        "/jwks",
        Resp::json(&json!({ "keys": [j] })).header("cache-control", "max-age=600"),
    );
    let mut list = String::new();
    for i in 0..n {
        let host = names[i % names.len()];
        let body = serde_json::to_vec(&json!({
            "name": format!("agent {i}"),
            "description": "x".repeat(512),
            "authentication": {"jwksUri": srv.url(host, "/jwks")}
        }))
        .expect("json");
        let jws = descriptor::sign(&body, &key).expect("sign").jws;
        let path = format!("/a{i}.json");
        srv.route(&path, Resp::ok("application/json", body));
        srv.route(&format!("{path}.jws"), Resp::ok("application/jose", jws));
        list.push_str(&srv.url(host, &path));
        list.push('\n');
    }
    let list_path = dir.join("urls.txt");
    std::fs::write(&list_path, list).expect("list");
    // Durable as a fleet would run it: the append-only file, flushed once
    // a second (Redis's default policy for it); `CRAWL_BENCH_FSYNC=always`
    // flushes every write (twice per input: its start and its result).
    let fsync = std::env::var("CRAWL_BENCH_FSYNC").unwrap_or_else(|_| "everysec".into());
    let redis = redis_support::Server::start_args(
        "crawl-bench",
        vec!["--appendfsync".into(), fsync.clone()],
        None,
    )
    .expect("redis");
    let redis_pid = redis.child.as_ref().map_or(0, std::process::Child::id);
    let url = redis.url();
    // `CRAWL_BENCH_BIN`: another agentsig binary (an older build, for an
    // A/B of two builds in the same minutes, or a wrapper that runs it
    // under a profiler); by default the one Cargo built with this bench.
    let bin_override = std::env::var("CRAWL_BENCH_BIN").ok();
    let bin = bin_override
        .as_deref()
        .unwrap_or(env!("CARGO_BIN_EXE_agentsig"));
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!(
        "crawl bench: {n} inputs on {} host(s), {cores} cores, redis-server appendfsync {fsync}, load {}",
        names.len(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );

    // Rounds of N inputs; by default as many as make about 10,000 inputs
    // per configuration (at least 5), so that a smaller N gives more
    // rounds, each a fresh pair of runs under the load of its moment.
    let rounds: usize = std::env::var("CRAWL_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(if benching {
            (10_000 / n.max(1)).max(5)
        } else {
            1
        })
        .max(1);
    // `CRAWL_BENCH_CONFIGS=1n,1,2,4` (the default): worker processes, `n`
    // for `--no-keep-connections`.
    let configs: Vec<(usize, bool)> = std::env::var("CRAWL_BENCH_CONFIGS")
        .unwrap_or_else(|_| "1n,1,2,4".into())
        .split(',')
        .filter_map(|c| {
            let keep = !c.ends_with('n');
            Some((c.trim_end_matches('n').parse().ok()?, keep))
        })
        .collect();
    // How each crawl run is paired with its `verify --batch` run:
    // `together` (the default), both started at once, so that both see the
    // same load of the machine at the same moments, each process's CPU
    // measured apart; `alternate`, one after the other, the first of the
    // two changing from round to round.
    let base = if baseline_json() {
        "verify --batch --json"
    } else {
        "verify --batch"
    };
    let together = std::env::var("CRAWL_BENCH_PAIRING").map_or(true, |p| p != "alternate");
    let idle_sample = std::time::Duration::from_millis(if benching { 1000 } else { 200 });
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); configs.len()];
    let mut batches = Vec::new();
    for round in 0..rounds {
        // Each crawl run paired with a `verify --batch` run of its own, so
        // that both see about the same load on a shared machine; which of
        // the two goes first alternates from round to round, so that a
        // drift of the load does not favour one side.
        for (c, &(workers, keep)) in configs.iter().enumerate() {
            let name = format!("bench-{round}-{c}");
            let crawl_run = |together| {
                let idle = idle_rate(redis_pid, idle_sample);
                let (r, b) = crawl(
                    bin, &url, &name, &list_path, &dir, n, workers, keep, redis_pid, redis.port,
                    together,
                );
                let r = Run {
                    redis_idle: (idle * r.wall / n as f64).min(r.redis),
                    ..r
                };
                (r, b)
            };
            let (batch, run) = if together {
                let (r, b) = crawl_run(true);
                (b.unwrap_or_default(), r)
            } else if round % 2 == 0 {
                let b = verify_batch(bin, &list_path, &dir, n);
                (b, crawl_run(false).0)
            } else {
                let r = crawl_run(false).0;
                (verify_batch(bin, &list_path, &dir, n), r)
            };
            batches.push(batch);
            println!(
                "round {}: {base} {:.0} inputs/s, {:.0} us CPU per input; {}: {:.0} inputs/s, \
                 {:.0} us CPU per input in the workers + {:.0} us in redis-server ({:.0} us of it its idle rate) = {:.2}x",
                round + 1,
                n as f64 / batch.wall,
                batch.cpu * 1e6,
                label(workers, keep),
                n as f64 / run.wall,
                run.cpu * 1e6,
                run.redis * 1e6,
                run.redis_idle * 1e6,
                (run.cpu + run.redis) / batch.cpu,
            );
            runs[c].push(Run {
                batch: batch.cpu,
                ..run
            });
            let _ =
                agentsig::replay::stream::CrawlQueue::open(&url, &name).and_then(|q| q.delete());
        }
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let spread = |v: Vec<f64>| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("{lo:.2} to {hi:.2}")
    };
    println!(
        "\nmedians of {rounds} round(s), {n} inputs each (each ratio against the {base} run paired with it; \
         instructions per input: not measured, the bench reads CPU time only):"
    );
    println!(
        "{base}, 1 process: {:.0} inputs/s, {:.0} us CPU per input ({:.0} to {:.0})",
        n as f64 / med(batches.iter().map(|b| b.wall).collect()),
        med(batches.iter().map(|b| b.cpu).collect()) * 1e6,
        batches.iter().map(|b| b.cpu).fold(f64::INFINITY, f64::min) * 1e6,
        batches.iter().map(|b| b.cpu).fold(0.0, f64::max) * 1e6,
    );
    for (&(workers, keep), rs) in configs.iter().zip(&runs) {
        let m = |f: fn(&Run) -> f64| med(rs.iter().map(f).collect());
        let all = |f: fn(&Run) -> f64| rs.iter().map(f).collect::<Vec<_>>();
        let ratio = |r: &Run| (r.cpu + r.redis) / r.batch;
        let marginal = |r: &Run| (r.cpu + r.redis - r.redis_idle) / r.batch;
        println!(
            "{}: {:.0} inputs/s, {:.0} us CPU per input in the workers + {:.0} us in redis-server \
             ({:.0} us of it redis-server's idle rate over the run); {:.2}x {base} (rounds {}), \
             {:.2}x without redis-server's idle rate (rounds {}), workers alone {:.2}x; \
             Redis script calls {:.2}, commands {:.2} per input; \
             crawl add {:.1} us + {:.1} us in redis-server per input",
            label(workers, keep),
            n as f64 / m(|r| r.wall),
            m(|r| r.cpu) * 1e6,
            m(|r| r.redis) * 1e6,
            m(|r| r.redis_idle) * 1e6,
            m(ratio),
            spread(all(ratio)),
            m(marginal),
            spread(all(marginal)),
            m(|r| r.cpu / r.batch),
            m(|r| r.scripts),
            m(|r| r.commands),
            m(|r| r.add) * 1e6,
            m(|r| r.add_redis) * 1e6,
        );
        if rs.iter().all(|r| r.batch_json > 0.0) {
            let json = |r: &Run| (r.cpu + r.redis) / r.batch_json;
            println!(
                "  against verify --batch --json (a report per input, as the results stream holds): \
                 {:.0} us CPU per input, {:.2}x (rounds {}), workers alone {:.2}x",
                m(|r| r.batch_json) * 1e6,
                m(json),
                spread(all(json)),
                m(|r| r.cpu / r.batch_json),
            );
        }
        if let Some(r) = rs.last() {
            println!("  Redis commands per input, last round (in brackets: microseconds in them per input, a script's including its commands'): {}", r.calls);
        }
    }
    println!(
        "server connections accepted over all runs: {} (kept alive: a worker reuses its connections to a host under its fleet permits)",
        srv.accepted()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
