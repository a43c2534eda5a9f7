//! `agentsig crawl` against `agentsig verify --batch`: the same signed
//! descriptors (each with its detached JWS, ES256, keys from a JWK Set
//! cached for 10 minutes) served by a keep-alive HTTPS server on
//! 127.0.0.1 (the tests' server, a test CA), verified
//! * by `verify --batch LIST -j 2 --per-host 4`, one process;
//! * by a crawl on one redis-server: `crawl add`, then 1, 2 and 4 worker
//!   processes (`crawl work --until-empty -j 2 --per-host 4`), keeping
//!   connections (the default), and one with `--no-keep-connections`.
//!
//! Printed per run: inputs per second (wall) and CPU per input, user +
//! system, of the agentsig processes (`getrusage(RUSAGE_CHILDREN)` around
//! them), and of redis-server (`/proc/PID/stat`; append-only file flushed
//! once a second), their sum against the batch's, and the Redis commands
//! per input (`INFO commandstats`). On a shared machine the
//! CPU per input is the figure to read: wall time depends on what the other
//! users run. No assertion. Run: `cargo bench --bench crawl` (`-- N` for
//! another number of inputs, default 2000).

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

    // verify --batch, one process.
    let (c0, t0) = (children_cpu(), Instant::now());
    let o = Command::new(bin)
        .args(["verify", "--batch"])
        .arg(&list_path)
        .args(["-j", "2", "--per-host", "4"])
        .args(fetch_args(&dir))
        .stdout(Stdio::null())
        .output()
        .expect("batch");
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), children_cpu() - c0);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let batch_cpu = cpu / n as f64;
    println!(
        "verify --batch, 1 process: {:.0} inputs/s, {:.0} us CPU per input",
        n as f64 / wall,
        batch_cpu * 1e6
    );

    for (round, (workers, keep)) in [(1usize, false), (1, true), (2, true), (4, true)]
        .into_iter()
        .enumerate()
    {
        let name = format!("bench-{round}");
        let (c0, r0) = (children_cpu(), process_cpu(redis_pid));
        let o = Command::new(bin)
            .args(["crawl", "add", &name, "--redis", &url])
            .arg(&list_path)
            .output()
            .expect("add");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (add_cpu, add_redis) = (children_cpu() - c0, process_cpu(redis_pid) - r0);
        redis_calls(redis.port);
        let (c0, r0, t0) = (children_cpu(), process_cpu(redis_pid), Instant::now());
        let children: Vec<_> = (0..workers)
            .map(|w| {
                Command::new(bin)
                    .args(["crawl", "work", &name, "--redis", &url, "--until-empty"])
                    .args(["-j", "2", "--per-host", "4", "--consumer", &format!("w{w}")])
                    .args((!keep).then_some("--no-keep-connections"))
                    .args(fetch_args(&dir))
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
        let per = cpu / n as f64;
        let calls = redis_calls(redis.port);
        let total: u64 = calls.iter().map(|c| c.1).sum();
        println!(
            "crawl, {workers} worker process(es){}: {:.0} inputs/s, {:.0} us CPU per input in the \
             workers + {:.0} us in redis-server = {:.2}x verify --batch (workers alone {:.2}x); \
             crawl add: {:.1} us + {:.1} us in redis-server per input",
            if keep { "" } else { " --no-keep-connections" },
            n as f64 / wall,
            per * 1e6,
            rcpu / n as f64 * 1e6,
            (cpu + rcpu) / n as f64 / batch_cpu,
            per / batch_cpu,
            add_cpu / n as f64 * 1e6,
            add_redis / n as f64 * 1e6,
        );
        println!(
            "  Redis commands per input: {:.2} ({})",
            total as f64 / n as f64,
            calls
                .iter()
                .map(|(c, k)| format!("{c} {:.2}", *k as f64 / n as f64))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!(
        "server connections accepted over all runs: {} (kept alive: a worker reuses its connections to a host under its fleet permits)",
        srv.accepted()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
