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
//! system, of the agentsig processes (`getrusage(RUSAGE_CHILDREN)` around
//! them), and of redis-server (`/proc/PID/stat`; append-only file flushed
//! once a second), and the Redis commands per input (`INFO
//! commandstats`). Each crawl run comes right after a `verify --batch` run
//! of its own and is compared with it (both see about the same load on a
//! shared machine); the whole is repeated for a few rounds
//! (`CRAWL_BENCH_ROUNDS`, default 3) and the median of each figure over the
//! rounds printed, so that a burst of load in one run does not skew the
//! ratio. On a shared machine the CPU per input is the figure to read:
//! wall time depends on what the other users run. No assertion. Run:
//! `cargo bench --bench crawl` (`-- N` for another number of inputs,
//! default 2000).

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

/// User + system CPU seconds of process `pid` (`/proc/PID/stat`).
fn process_cpu(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of stat (utime, stime), clock ticks.
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / hz
}

/// Redis commands served since the last call, per command (`INFO
/// commandstats`, then `CONFIG RESETSTAT`), most called first.
fn redis_calls(port: u16) -> Vec<(String, u64)> {
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
    let mut calls: Vec<(String, u64)> = info
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let n = rest
                .strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            Some((name.to_owned(), n))
        })
        .filter(|(name, _)| name != "config|resetstat" && name != "info")
        .collect();
    calls.sort_by_key(|c| std::cmp::Reverse(c.1));
    calls
}

fn fetch_args(dir: &Path) -> Vec<String> {
    vec![
        "--ca-file".into(),
        dir.join("ca.pem").to_string_lossy().into_owned(),
        "--resolve-to".into(),
        format!("{HOST}=127.0.0.1"),
        "--allow-private-networks".into(),
    ]
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

/// `verify --batch`, one process.
fn verify_batch(bin: &str, list: &Path, dir: &Path, n: usize) -> Batch {
    let (c0, t0) = (children_cpu(), Instant::now());
    let o = Command::new(bin)
        .args(["verify", "--batch"])
        .arg(list)
        .args(["-j", "2", "--per-host", "4"])
        .args(fetch_args(dir))
        .stdout(Stdio::null())
        .output()
        .expect("batch");
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), children_cpu() - c0);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Batch {
        wall,
        cpu: cpu / n as f64,
    }
}

/// `crawl add`, then `workers` worker processes until the queue is empty.
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
) -> Run {
    let (c0, r0) = (children_cpu(), process_cpu(redis_pid));
    let o = Command::new(bin)
        .args(["crawl", "add", name, "--redis", url])
        .arg(list)
        .output()
        .expect("add");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (add, add_redis) = (children_cpu() - c0, process_cpu(redis_pid) - r0);
    redis_calls(port);
    let (c0, r0, t0) = (children_cpu(), process_cpu(redis_pid), Instant::now());
    let children: Vec<_> = (0..workers)
        .map(|w| {
            Command::new(bin)
                .args(["crawl", "work", name, "--redis", url, "--until-empty"])
                .args(["-j", "2", "--per-host", "4", "--consumer", &format!("w{w}")])
                .args((!keep).then_some("--no-keep-connections"))
                .args(fetch_args(dir))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("worker")
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().expect("wait");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let wall = t0.elapsed().as_secs_f64();
    let (cpu, rcpu) = (children_cpu() - c0, process_cpu(redis_pid) - r0);
    let calls = redis_calls(port);
    let per = |k: u64| k as f64 / n as f64;
    let total: u64 = calls.iter().map(|c| c.1).sum();
    let scripts: u64 = calls
        .iter()
        .filter(|c| c.0 == "evalsha" || c.0 == "eval")
        .map(|c| c.1)
        .sum();
    Run {
        wall,
        cpu: cpu / n as f64,
        redis: rcpu / n as f64,
        add: add / n as f64,
        add_redis: add_redis / n as f64,
        batch: 0.0,
        scripts: per(scripts),
        commands: per(total),
        calls: calls
            .iter()
            .map(|(c, k)| format!("{c} {:.2}", per(*k)))
            .collect::<Vec<_>>()
            .join(", "),
    }
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
    let dir = redis_support::tmp("crawl-bench-work");
    let ca = Ca::new();
    std::fs::write(dir.join("ca.pem"), ca.pem()).expect("ca");
    let srv = Server::start_keep_alive(&ca, &[HOST]);
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
        let body = serde_json::to_vec(&json!({
            "name": format!("agent {i}"),
            "description": "x".repeat(512),
            "authentication": {"jwksUri": srv.url(HOST, "/jwks")}
        }))
        .expect("json");
        let jws = descriptor::sign(&body, &key).expect("sign").jws;
        let path = format!("/a{i}.json");
        srv.route(&path, Resp::ok("application/json", body));
        srv.route(&format!("{path}.jws"), Resp::ok("application/jose", jws));
        list.push_str(&srv.url(HOST, &path));
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
    let bin = env!("CARGO_BIN_EXE_agentsig");
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!(
        "crawl bench: {n} inputs, {cores} cores, redis-server appendfsync {fsync}, load {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );

    let rounds: usize = std::env::var("CRAWL_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(if benching { 3 } else { 1 })
        .max(1);
    let configs = [(1usize, false), (1, true), (2, true), (4, true)];
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); configs.len()];
    let mut batches = Vec::new();
    for round in 0..rounds {
        // Each configuration right after a `verify --batch` of its own, so
        // that both see about the same load on a shared machine.
        for (c, &(workers, keep)) in configs.iter().enumerate() {
            let batch = verify_batch(bin, &list_path, &dir, n);
            batches.push(batch);
            let name = format!("bench-{round}-{c}");
            let run = crawl(
                bin, &url, &name, &list_path, &dir, n, workers, keep, redis_pid, redis.port,
            );
            println!(
                "round {}: verify --batch {:.0} inputs/s, {:.0} us CPU per input; {}: {:.0} inputs/s, \
                 {:.0} us CPU per input in the workers + {:.0} us in redis-server = {:.2}x",
                round + 1,
                n as f64 / batch.wall,
                batch.cpu * 1e6,
                label(workers, keep),
                n as f64 / run.wall,
                run.cpu * 1e6,
                run.redis * 1e6,
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
    println!(
        "\nmedians of {rounds} round(s), {n} inputs (each ratio against the verify --batch run just before it):"
    );
    println!(
        "verify --batch, 1 process: {:.0} inputs/s, {:.0} us CPU per input",
        n as f64 / med(batches.iter().map(|b| b.wall).collect()),
        med(batches.iter().map(|b| b.cpu).collect()) * 1e6
    );
    for (&(workers, keep), rs) in configs.iter().zip(&runs) {
        let m = |f: fn(&Run) -> f64| med(rs.iter().map(f).collect());
        println!(
            "{}: {:.0} inputs/s, {:.0} us CPU per input in the workers + {:.0} us in redis-server; \
             {:.2}x verify --batch (workers alone {:.2}x); Redis script calls {:.2}, commands {:.2} per input; \
             crawl add {:.1} us + {:.1} us in redis-server per input",
            label(workers, keep),
            n as f64 / m(|r| r.wall),
            m(|r| r.cpu) * 1e6,
            m(|r| r.redis) * 1e6,
            m(|r| (r.cpu + r.redis) / r.batch),
            m(|r| r.cpu / r.batch),
            m(|r| r.scripts),
            m(|r| r.commands),
            m(|r| r.add) * 1e6,
            m(|r| r.add_redis) * 1e6,
        );
        if let Some(r) = rs.last() {
            println!("  Redis commands per input, last round: {}", r.calls);
        }
    }
    println!(
        "server connections accepted over all runs: {} (kept alive: a worker reuses its connections to a host under its fleet permits)",
        srv.accepted()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
