//! `agentsig crawl` on a real three-primary Redis Cluster: three worker
//! processes (the real binary) over signed descriptors served on loopback
//! with a test CA; one worker is killed with SIGKILL mid-run. Every input
//! still ends with exactly one result, each with the verdict `verify URL`
//! gives it (the library's resolver, over a sample); the per-host bound
//! holds at the server across all workers; a duplicated queue entry and a
//! second `crawl add` of the same list give no second result; an input that
//! keeps failing is retried a bounded number of times, then recorded with
//! its reason. Counts, never timings.

#[path = "net_support/mod.rs"]
mod net_support;
#[path = "redis_support/mod.rs"]
mod redis_support;

use agentsig::net::crawl::DEFAULT_MAX_ATTEMPTS;
use agentsig::net::{FetchPolicy, Fetcher, Resolver};
use agentsig::replay::stream::{input_id, CrawlQueue};
use agentsig::{descriptor, Algorithm, SigningKey};
use net_support::{Ca, Resp, Server};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Inputs of the run: `CRAWL_TEST_INPUTS` to change (default 1000).
fn inputs() -> usize {
    std::env::var("CRAWL_TEST_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

const PER_HOST: usize = 3;
const SECRET: &str = "0123456789abcdef0123456789abcdef-crawl-test";

fn worker(dir: &Path, redis: &str, name: &str, consumer: &str, jsonl: &str) -> Child {
    worker_with(dir, redis, name, consumer, jsonl, 2, &[])
}

/// A worker that makes at most `attempts` attempts at one input, with
/// `extra` arguments.
fn worker_with(
    dir: &Path,
    redis: &str,
    name: &str,
    consumer: &str,
    jsonl: &str,
    attempts: u32,
    extra: &[&str],
) -> Child {
    Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .current_dir(dir)
        .args([
            "crawl",
            "work",
            name,
            "--redis",
            redis,
            "--until-empty",
            "-j",
            "3",
            "--per-host",
            &PER_HOST.to_string(),
            "--lease",
            "3s",
            "--max-attempts",
            &attempts.to_string(),
            "--consumer",
            consumer,
            "--results-out",
            jsonl,
            "--ca-file",
            "ca.pem",
            "--resolve-to",
            "agents.example=127.0.0.1",
            "--resolve-to",
            "flaky.example=127.0.0.1",
            "--allow-private-networks",
            "--key-cache",
            redis,
        ])
        .args(extra)
        .env("AGENTSIG_FLEET_SECRET", SECRET)
        .env_remove("AGENTSIG_CA_FILE")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn worker")
}

fn cli(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run")
}

/// `crawl add NAME urls.txt` in `dir`, which must succeed: the queue.
fn add_urls(dir: &Path, redis: &str, name: &str) -> CrawlQueue {
    let o = cli(dir, &["crawl", "add", name, "--redis", redis, "urls.txt"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    CrawlQueue::open(redis, name).unwrap()
}

fn stderr_of(c: Child) -> (Option<i32>, String) {
    let o = c.wait_with_output().expect("wait");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `n` descriptors signed by one P-256 key, served by `srv` as `/a{i}.json`
/// with their detached JWS at `/a{i}.json.jws` and the key set at `/jwks`.
/// One in ten (`i % 10 == 3`) is served with another body than its JWS
/// signed; with `some_missing`, one in fifty (`i % 50 == 7`) is not there
/// at all. Their URLs, in order.
fn serve_signed(srv: &Server, n: usize, some_missing: bool) -> Vec<String> {
    serve_signed_at(srv, "agents.example", n, some_missing)
}

/// [`serve_signed`] under the host name `host`.
fn serve_signed_at(srv: &Server, host: &str, n: usize, some_missing: bool) -> Vec<String> {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("k1");
    let mut j = key.verifying_key().to_jwk().to_value();
    j["use"] = json!("sig");
    srv.route(
        "/jwks",
        Resp::json(&json!({ "keys": [j] })).header("cache-control", "max-age=600"),
    );
    let mut urls = Vec::new();
    for i in 0..n {
        let body = serde_json::to_vec(&json!({
            "name": format!("agent {i}"),
            "authentication": {"jwksUri": srv.url(host, "/jwks")}
        }))
        .unwrap();
        let jws = descriptor::sign(&body, &key).unwrap().jws;
        let path = format!("/a{i}.json");
        if !(some_missing && i % 50 == 7) {
            let served = if i % 10 == 3 {
                format!("{{\"name\":\"x{i}\"}}").into_bytes()
            } else {
                body
            };
            srv.route(&path, Resp::ok("application/json", served));
            srv.route(&format!("{path}.jws"), Resp::ok("application/jose", jws));
        }
        urls.push(srv.url(host, &path));
    }
    urls
}

#[test]
fn a_fleet_crawl_on_a_cluster_survives_a_killed_worker_with_one_result_per_input() {
    let Some(cluster) = redis_support::Cluster::start("crawl") else {
        return;
    };
    let redis = cluster.url("");
    let dir = redis_support::tmp("crawl-work");
    let ca = Ca::new();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let srv = Server::start(&ca, &["agents.example"]);
    let flaky = Server::start(&ca, &["flaky.example"]);
    let n = inputs();
    let mut urls = serve_signed(&srv, n, true);
    let mut list = urls.join("\n");
    list.push('\n');
    // Three inputs on a host that always answers 503 with Retry-After.
    for i in 0..3 {
        let path = format!("/busy{i}.json");
        flaky.route(
            &path,
            Resp {
                status: 503,
                ..Resp::ok("text/plain", "busy")
            }
            .header("retry-after", "1"),
        );
        let u = flaky.url("flaky.example", &path);
        list.push_str(&u);
        list.push('\n');
        urls.push(u);
    }
    std::fs::write(dir.join("urls.txt"), &list).unwrap();
    let name = "crawl-test";
    let queue = add_urls(&dir, &redis, name);
    assert_eq!(queue.status().unwrap().inputs, urls.len() as u64);

    // Workers of one fleet need not take alike: the first takes the
    // default number of entries at once, the others 1 and 7 (`--take`).
    let takes: [&[&str]; 3] = [&[], &["--take", "1"], &["--take", "7"]];
    let mut workers: Vec<Child> = (0..3)
        .map(|i| {
            let (w, out) = (format!("w{i}"), format!("w{i}.jsonl"));
            worker_with(&dir, &redis, name, &w, &out, 2, takes[i])
        })
        .collect();
    // The inputs of a host are in one input stream, read by the worker
    // whose share holds it: kill the one that verifies the main host's,
    // once a quarter of the results are in, while it holds inputs (a
    // probe, not a timing). Its streams go to the others once its lease in
    // the fleet ends; what it held, once their leases end.
    let names: Vec<String> = (0..3).map(|i| format!("w{i}")).collect();
    let main = agentsig::replay::stream::shard_of(&urls[0]);
    let victim = (0..3)
        .find(|&i| agentsig::replay::stream::own_shards(&names, &names[i]).contains(&main))
        .unwrap();
    redis_support::until("a quarter of the results", || {
        queue.status().unwrap().results >= (urls.len() / 4) as u64
    });
    let held = queue
        .status()
        .unwrap()
        .pending_by_worker
        .iter()
        .find(|(w, _)| *w == names[victim])
        .map_or(0, |(_, n)| *n);
    workers[victim].kill().unwrap();
    let _ = workers[victim].wait();
    let mut logs = Vec::new();
    for (i, w) in workers.into_iter().enumerate() {
        if i != victim {
            let (code, err) = stderr_of(w);
            assert_eq!(code, Some(0), "{err}");
            logs.push(err);
        }
    }
    let status = queue.status().unwrap();
    assert_eq!(status.queued, 0, "{status:?}");
    let counter = |k: &str| {
        status
            .counters
            .iter()
            .find(|(c, _)| c == k)
            .map_or(0, |(_, v)| *v)
    };
    if held > 0 {
        assert!(counter("reclaimed") >= 1, "{status:?} {logs:?}");
    }

    // Exactly one result per input.
    let results = queue.results("0", 100_000).unwrap();
    assert_eq!(results.len(), urls.len(), "{status:?}");
    let mut by_input: HashMap<String, Value> = HashMap::new();
    for (_, input, report) in &results {
        let r: Value = serde_json::from_slice(report).unwrap();
        assert_eq!(r["subject"], json!(input));
        assert_eq!(r["details"]["crawl_input"], json!(input_id(input)));
        assert!(
            by_input.insert(input.clone(), r).is_none(),
            "second result for {input}"
        );
    }
    let expected: HashSet<&String> = urls.iter().collect();
    assert_eq!(by_input.keys().collect::<HashSet<_>>(), expected);

    // The per-host bound, counted at the servers, across all workers.
    assert!(
        srv.most_open() <= PER_HOST,
        "{} connections open at once",
        srv.most_open()
    );
    assert!(flaky.most_open() <= PER_HOST);

    // Each verdict is the one `verify URL` gives (the library, the same
    // options), on a sample of every kind.
    let policy = FetchPolicy::default()
        .allow_private_networks(true)
        .extra_root_pem(ca.pem())
        .pin("agents.example", net_support::loopback());
    let resolver = Resolver::new(Fetcher::with_policy(policy).unwrap());
    for (i, u) in urls.iter().enumerate().take(n) {
        if i % 7 != 0 && i % 10 != 3 && i % 50 != 7 {
            continue;
        }
        let r = &by_input[u];
        match resolver.verify_url(u) {
            Ok(_) => assert_eq!(r["verdict"], "verified", "{u}: {r}"),
            Err(e) => {
                assert_eq!(r["verified"], false, "{u}: {r}");
                assert_eq!(r["error"]["code"], e.code(), "{u}: {r}");
            }
        }
    }
    // Every input served with the body its JWS signed verifies, and no
    // other: the reports that disagree are printed whole.
    let wrong: Vec<&Value> = urls
        .iter()
        .enumerate()
        .take(n)
        .filter(|(i, u)| (by_input[*u]["verified"] == true) != (i % 10 != 3 && i % 50 != 7))
        .map(|(_, u)| &by_input[u])
        .collect();
    assert!(
        wrong.is_empty(),
        "{} wrong verdicts: {wrong:#?}",
        wrong.len()
    );
    // The whole report, not only its verdict: for each kind of input (two
    // verified descriptors, one served with another body than its JWS
    // signed, one not served), the stored result is the report `agentsig
    // verify URL --json` prints for it, but for the crawl's own details
    // (`crawl_*`) and `cache`, which says whether the keys came from a cache
    // (the fleet's was warm; a lone `verify URL` starts cold). Details left
    // empty by that are dropped: a report without details has none.
    let strip = |mut r: Value| {
        if let Some(o) = r.as_object_mut() {
            if let Some(d) = o.get_mut("details").and_then(Value::as_object_mut) {
                d.retain(|k, _| !k.starts_with("crawl_") && k != "cache");
                if d.is_empty() {
                    o.remove("details");
                }
            }
        }
        r
    };
    for i in [0, 1, 3, 7] {
        let u = &urls[i];
        let o = cli(
            &dir,
            &[
                "verify",
                u,
                "--json",
                "--ca-file",
                "ca.pem",
                "--resolve-to",
                "agents.example=127.0.0.1",
                "--allow-private-networks",
            ],
        );
        let alone: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{u}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
        assert_eq!(
            o.status.code(),
            Some(if i % 10 == 3 || i % 50 == 7 { 1 } else { 0 }),
            "{u}: {alone}"
        );
        assert_eq!(strip(by_input[u].clone()), strip(alone), "{u}");
    }
    // The host that keeps failing: two attempts, then its failure and
    // reason are its result. An attempt the killed worker held counts too
    // (its host's inputs all go to one worker, which may be the one
    // killed): then a third finds the two used up, and its result says
    // they did not finish, with the last failure's reason.
    for u in &urls[n..] {
        let r = &by_input[u];
        let message = r["error"]["message"].as_str().unwrap();
        assert_eq!(r["error"]["code"], "crawl.gave-up", "{r}");
        assert!(message.contains("503"), "{r}");
        match r["details"]["crawl_attempts"].as_u64() {
            Some(2) => {}
            Some(3) => assert!(message.contains("2 attempts did not finish"), "{r}"),
            _ => panic!("attempts: {r}"),
        }
    }

    // A duplicated queue entry and the same list added again: no second
    // result.
    queue.add_raw(&urls[5]).unwrap();
    let o = cli(&dir, &["crawl", "add", name, "--redis", &redis, "urls.txt"]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("0 of {} inputs queued", urls.len()))
    );
    let (code, err) = stderr_of(worker(&dir, &redis, name, "w3", "w3.jsonl"));
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("0 results written"), "{err}");
    assert!(err.contains("1 duplicates skipped"), "{err}");
    assert_eq!(queue.results("0", 100_000).unwrap().len(), urls.len());

    // `crawl status --json` is a report; the JSON Lines of the surviving
    // workers hold their results.
    let o = cli(
        &dir,
        &["crawl", "status", name, "--redis", &redis, "--json"],
    );
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["command"], "crawl status");
    assert_eq!(s["details"]["results"], urls.len());
    assert_eq!(s["details"]["queued"], 0);
    let lines: usize = (0..3)
        .filter(|&i| i != victim)
        .map(|i| {
            std::fs::read_to_string(dir.join(format!("w{i}.jsonl")))
                .map_or(0, |t| t.lines().count())
        })
        .sum();
    assert!(lines > 0 && lines <= urls.len());
    // Deleted on the cluster, every key of the crawl is gone (one
    // `UNLINK`: the keys share one hash slot), but for the per-host
    // politeness state, which ends by itself: a permit with its lease, a
    // host's next connection time, a wake list within a minute, the flag
    // that a worker waits for the host within a second (a worker that
    // ended just before the delete may have set it).
    let o = cli(
        &dir,
        &["crawl", "delete", name, "--redis", &redis, "--force"],
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    for n in &cluster.nodes {
        for key in n.cli(&["--scan", "--pattern", "agentsig:crawl:*"]).lines() {
            let kind = key.rsplit(':').nth(1).unwrap_or_default();
            assert!(
                ["host", "next", "wake", "wanted"].contains(&kind),
                "{key} left after the delete"
            );
            let ttl: i64 = n.cli(&["PTTL", key]).trim().parse().unwrap();
            // -2: it ended between the scan and the question.
            assert!(
                ttl == -2 || (0..=61_000).contains(&ttl),
                "{key} ends by itself: {ttl}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Keeping connections is fair: a worker that keeps reusing a permit
/// gives it back soon after another worker finds the host full (within the
/// linger, here 300 ms, once it sees the host's `wanted` flag), not after
/// its turn (here 60 s, far past the waiter's 8 s deadline). One permit
/// for the host across both workers throughout.
#[test]
fn a_kept_permit_goes_back_when_another_worker_waits() {
    use agentsig::net::crawl::FleetGate;
    use agentsig::net::ConnectionGate;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let Some(redis) = redis_support::Server::start("crawl-fair") else {
        eprintln!("skipped: no redis-server");
        return;
    };
    let gate = || {
        let q = Arc::new(CrawlQueue::open(&redis.url(), "fair").unwrap());
        FleetGate::new(q, 1, Duration::ZERO, Duration::from_secs(30))
            .keep_connections(Duration::from_millis(300), Duration::from_secs(60))
    };
    let (a, b) = (gate(), gate());
    let host = "agents.example:443";
    let deadline = || Instant::now() + Duration::from_secs(8);
    let p = a.acquire(host, deadline()).expect("first permit");
    assert!(p.keep_alive(), "no one waits: the connection is kept");
    drop(p);

    // `a` keeps reusing its permit, one fetch after another.
    let stop = Arc::new(AtomicBool::new(false));
    let busy = {
        let (a, stop) = (a.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                if let Ok(_p) = a.acquire(host, Instant::now() + Duration::from_secs(8)) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    // `b` finds the host full, flags it, and gets a permit within its
    // deadline.
    let q = CrawlQueue::open(&redis.url(), "fair").unwrap();
    let p = b
        .acquire(host, deadline())
        .expect("a kept permit given back");
    assert_eq!(q.host_wanted(&[host.to_owned()]).unwrap(), vec![true]);
    drop(p);
    stop.store(true, Ordering::SeqCst);
    busy.join().unwrap();
}

/// A redis-server of its own with the crawl `name` made in it (`None`,
/// the test skipped, without redis-server).
fn made(server: &str, name: &str) -> Option<(redis_support::Server, CrawlQueue)> {
    let Some(redis) = redis_support::Server::start(server) else {
        eprintln!("skipped: no redis-server");
        return None;
    };
    let q = CrawlQueue::open(&redis.url(), name).unwrap();
    q.create().unwrap();
    Some((redis, q))
}

/// `n` inputs of one host (so of one input stream), queued in `q`.
fn queued_on_one_host(q: &CrawlQueue, n: usize) -> Vec<String> {
    let inputs: Vec<String> = (0..n)
        .map(|i| format!("https://h.example/a{i}.json"))
        .collect();
    assert_eq!(q.add(&inputs, 0).unwrap(), n as u64);
    inputs
}

/// Up to `n` new entries of any input stream, for the consumer `who`.
fn taken(q: &CrawlQueue, who: &str, n: usize) -> Vec<agentsig::replay::stream::CrawlEntry> {
    let all: Vec<u16> = (0..64).collect();
    q.take(who, n, std::time::Duration::from_millis(10), &all)
        .unwrap()
}

/// `crawl status` reads every input stream's length and what is pending
/// in it, per worker, in one round trip: inputs queued, of them those
/// taken and not finished, and by whom (here all of one host, so of one
/// stream).
#[test]
fn the_status_counts_what_each_worker_holds() {
    let Some((_redis, q)) = made("crawl-pending", "pending") else {
        return;
    };
    queued_on_one_host(&q, 5);
    let (a, b) = (taken(&q, "wa", 2), taken(&q, "wb", 1));
    assert_eq!((a.len(), b.len()), (2, 1));
    let s = q.status().unwrap();
    assert_eq!((s.queued, s.pending), (5, 3), "{s:?}");
    assert_eq!(
        s.pending_by_worker,
        vec![("wa".to_string(), 2), ("wb".to_string(), 1)]
    );
}

/// An acknowledged entry leaves its input stream once every older entry of
/// the stream is acknowledged (a trim, not a delete per entry): entries
/// finished after an older one still pending stay counted as queued until
/// it is finished, and then the stream is empty. A taken-over entry whose
/// input has a result already (a duplicate) is trimmed the same way.
#[test]
fn finished_entries_leave_their_stream_once_the_older_ones_have() {
    use agentsig::replay::stream::{CrawlEntry, Finishing, ResultRecord};
    let Some((redis, q)) = made("crawl-trim", "trim") else {
        return;
    };
    let inputs = queued_on_one_host(&q, 6);
    let older = taken(&q, "wa", 2);
    let newer = taken(&q, "wb", 4);
    assert_eq!((older.len(), newer.len()), (2, 4));
    let finish = |held: &[CrawlEntry], who: &str| {
        let done: Vec<Finishing<'_>> = held
            .iter()
            .map(|entry| Finishing {
                entry,
                result: ResultRecord {
                    report: b"{}",
                    verdict: "verified",
                    code: "",
                },
                children: &[],
            })
            .collect();
        q.finish_and_take(&done, who, 0, &[]).unwrap()
    };
    let key = q.key_name(&format!("inputs:{}", older[0].shard));
    let len = || redis.cli(&["XLEN", &key]).trim().parse::<u64>().unwrap();
    assert_eq!(finish(&newer, "wb").finished.len(), 4);
    let s = q.status().unwrap();
    assert_eq!((s.queued, s.pending, s.results), (6, 2, 4), "{s:?}");
    assert_eq!(len(), 6, "finished after a pending one: kept");
    assert_eq!(finish(&older, "wa").finished.len(), 2);
    assert_eq!(len(), 0, "all finished: the stream is empty");
    assert_eq!(q.queued().unwrap(), 0);
    // Queued again by hand (a replayed entry) and taken over: its input
    // has a result, so it is only acknowledged, and leaves the stream.
    q.add_raw(&inputs[0]).unwrap();
    let again = taken(&q, "wc", 1);
    assert_eq!(q.start(&again[0]).unwrap(), None, "a duplicate");
    assert_eq!(len(), 0, "the duplicate left the stream");
    assert_eq!(q.status().unwrap().results, 6);
    // A stream gone from under a worker (the crawl deleted with --force
    // while it ran) fails nothing: the result is recorded, as an XDEL on
    // a missing stream did.
    q.add_raw("https://h.example/late.json").unwrap();
    let late = taken(&q, "wd", 1);
    assert_eq!(redis.cli(&["DEL", &key]).trim(), "1");
    assert_eq!(finish(&late, "wd").finished.len(), 1);
}

/// `crawl status` reads the hosts that waited longest for a permit and
/// the number of all, not every host (a crawl over millions of hosts may
/// see waits at many of them), longest first; each host's figures are its
/// own whatever its name (a host named `waited` was read as another host's
/// count of waits before). `crawl delete` then leaves no key behind.
#[test]
fn the_status_reads_the_longest_waits_not_every_host() {
    use agentsig::replay::stream::STATUS_HOSTS;
    let Some((redis, q)) = made("crawl-many-waits", "manywaits") else {
        return;
    };
    for i in 0..300u64 {
        q.host_waited(&format!("h{i}.example:443"), i + 1, 2)
            .unwrap();
    }
    q.host_waited("waited:443", 1000, 1).unwrap();
    let s = q.status().unwrap();
    assert_eq!(s.hosts_waited, 301);
    assert_eq!(s.host_waits.len(), STATUS_HOSTS);
    assert_eq!(s.host_waits[0], ("waited:443".to_string(), 1000, 1));
    assert_eq!(s.host_waits[1], ("h299.example:443".to_string(), 300, 2));
    assert!(
        s.host_waits.windows(2).all(|w| w[0].1 >= w[1].1),
        "longest first: {:?}",
        s.host_waits
    );
    let counter = |k: &str| s.counters.iter().find(|(c, _)| c == k).map(|(_, n)| *n);
    assert_eq!(counter("waits"), Some(601));
    assert_eq!(counter("waited_ms"), Some(300 * 301 / 2 + 1000));
    // Later waits add up, and move the host up.
    q.host_waited("h0.example:443", 5000, 3).unwrap();
    let s = q.status().unwrap();
    assert_eq!(s.host_waits[0], ("h0.example:443".to_string(), 5001, 5));
    assert_eq!(s.hosts_waited, 301);
    q.delete().unwrap();
    assert_eq!(redis.cli(&["DBSIZE"]).trim(), "0", "no key left behind");
}

/// `crawl status`'s per-host waits count fetches that found the host at
/// its bound (or behind others): a permit granted at the first ask is no
/// wait, however long its round trip to Redis took (here Redis is held
/// about 50 ms by a script sent on another connection just before the
/// ask); a fetch that waited for a permit given back is one.
#[test]
fn a_permit_granted_at_the_first_ask_is_no_wait() {
    use agentsig::net::crawl::FleetGate;
    use agentsig::net::ConnectionGate;
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let Some(redis) = redis_support::Server::start("crawl-waits") else {
        eprintln!("skipped: no redis-server");
        return;
    };
    let q = Arc::new(CrawlQueue::open(&redis.url(), "waits").unwrap());
    // Without keeping, a wait is added to Redis as the permit is granted.
    let gate = FleetGate::new(q.clone(), 1, Duration::ZERO, Duration::from_secs(30));
    let host = "agents.example:443";
    let deadline = || Instant::now() + Duration::from_secs(8);
    let waits = || {
        q.status()
            .unwrap()
            .host_waits
            .iter()
            .find(|w| w.0 == host)
            .map(|w| w.2)
    };
    let busy = "local t = redis.call('TIME') local s = t[1] * 1000000 + t[2] \
        repeat local n = redis.call('TIME') until n[1] * 1000000 + n[2] - s > 50000 return 1";
    let mut slow = std::net::TcpStream::connect(("127.0.0.1", redis.port)).unwrap();
    write!(
        slow,
        "*3\r\n$4\r\nEVAL\r\n${}\r\n{busy}\r\n$1\r\n0\r\n",
        busy.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(10));
    let p = gate.acquire(host, deadline()).expect("a free host");
    let mut reply = [0u8; 4];
    slow.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b":1\r\n", "the script that held Redis ran");
    assert_eq!(
        waits(),
        None,
        "a permit granted at the first ask is no wait"
    );
    // The host is now at its bound: the next fetch waits until the permit
    // is given back, and that is one wait.
    let other = gate.clone();
    let asked = std::thread::spawn(move || other.acquire(host, deadline()).is_ok());
    // It found the host full and waits on the host's wake list.
    redis_support::until("the second fetch waiting", || {
        redis.cli(&["CLIENT", "LIST"]).contains("cmd=blpop")
    });
    drop(p);
    assert!(asked.join().unwrap(), "the permit given back");
    assert_eq!(waits(), Some(1));
}

/// An attempt that found no connection permit within its deadline (the
/// host's permits held by the fleet, e.g. by a worker killed while holding
/// them) never reached the origin: it is put off without counting, so the
/// input still gets its verdict with one attempt allowed; past
/// `MAX_POSTPONED` such attempts they count, so an input never waits
/// forever.
/// A crawl `name` on a redis-server of its own with `inputs` queued (and
/// `raw` duplicates appended after the input of the same index), for
/// tests of one worker thread run in this process.
fn one_thread_crawl(
    name: &str,
    inputs: &[String],
    raw: &[usize],
) -> Option<(redis_support::Server, CrawlQueue)> {
    let Some(redis) = redis_support::Server::start(&format!("crawl-{name}")) else {
        eprintln!("skipped: no redis-server");
        return None;
    };
    let queue = CrawlQueue::open(&redis.url(), name).unwrap();
    queue.create().unwrap();
    for (i, input) in inputs.iter().enumerate() {
        assert_eq!(queue.add(std::slice::from_ref(input), 0).unwrap(), 1);
        if raw.contains(&i) {
            queue.add_raw(input).unwrap();
        }
    }
    Some((redis, queue))
}

/// The result of an input verified, as a test's `verify` gives it.
fn verified_result(e: &agentsig::replay::stream::CrawlEntry) -> agentsig::net::crawl::Step {
    let mut r = agentsig::report::Report::done("verify", Some(&e.input));
    r.set_verdict(agentsig::report::Verdict::Verified);
    agentsig::net::crawl::Step::Result(Box::new(r))
}

/// Run one worker of one thread on `queue` until every input has its
/// result (`tune` sets other options), verifying with `verify`.
fn run_one_thread(
    queue: &CrawlQueue,
    tune: impl FnOnce(&mut agentsig::net::crawl::WorkerOptions),
    verify: &(dyn Fn(&agentsig::replay::stream::CrawlEntry) -> agentsig::net::crawl::Step + Sync),
) -> agentsig::net::crawl::WorkerCounts {
    let mut opts = agentsig::net::crawl::WorkerOptions::new("w");
    opts.threads = 1;
    opts.until_empty = true;
    tune(&mut opts);
    agentsig::net::crawl::run_worker(
        queue,
        &opts,
        verify,
        &|_, _, _| {},
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap()
}

#[test]
fn an_attempt_without_a_permit_is_put_off_without_counting() {
    use agentsig::net::crawl::{Step, MAX_POSTPONED};
    use agentsig::replay::stream::CrawlEntry;
    use std::sync::atomic::{AtomicU32, Ordering};
    let inputs = [
        "https://busy.example/a.json".to_owned(),
        "https://held.example/b.json".to_owned(),
    ];
    let Some((_redis, queue)) = one_thread_crawl("postpone", &inputs, &[]) else {
        return;
    };
    let calls: HashMap<&str, AtomicU32> = inputs
        .iter()
        .map(|i| (i.as_str(), AtomicU32::new(0)))
        .collect();
    let no_permit = || Step::Postpone {
        code: "fetch.timeout".into(),
        reason: "no connection permit within the deadline".into(),
    };
    // The first input finds no permit three times, then verifies; the
    // second never finds one.
    let verify = |e: &CrawlEntry| {
        let n = calls[e.input.as_str()].fetch_add(1, Ordering::SeqCst) + 1;
        if e.input.contains("busy") && n > 3 {
            verified_result(e)
        } else {
            no_permit()
        }
    };
    let counts = run_one_thread(&queue, |o| o.max_attempts = 1, &verify);
    assert_eq!(counts.results, 2);
    assert_eq!(calls[inputs[0].as_str()].load(Ordering::SeqCst), 4);
    assert_eq!(
        calls[inputs[1].as_str()].load(Ordering::SeqCst),
        MAX_POSTPONED + 1
    );
    assert_eq!(counts.postponed, u64::from(3 + MAX_POSTPONED));
    let results = queue.results("0", 10).unwrap();
    let by: HashMap<&str, Value> = results
        .iter()
        .map(|(_, i, r)| (i.as_str(), serde_json::from_slice(r).unwrap()))
        .collect();
    let busy = &by[inputs[0].as_str()];
    assert_eq!(busy["verdict"], "verified", "{busy}");
    assert_eq!(busy["details"]["crawl_attempts"], 1, "{busy}");
    let held = &by[inputs[1].as_str()];
    assert_eq!(held["error"]["code"], "crawl.gave-up", "{held}");
    assert!(
        held["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no connection permit"),
        "{held}"
    );
}

/// Results whose write Redis refused are kept and written once it accepts
/// writes again, not found again after their lease in another attempt:
/// Redis refuses every write (`min-replicas-to-write` with no replica, as
/// on a primary that lost its replicas) from the first verification until
/// well after the entries' lease has run out. Each input is verified once
/// and verified in its result, with one attempt (at one attempt allowed,
/// a lost result would have ended it as `crawl.gave-up`).
#[test]
fn results_refused_by_redis_are_written_once_it_is_back() {
    use agentsig::replay::stream::CrawlEntry;
    use std::sync::atomic::{AtomicU32, Ordering};
    let inputs: Vec<String> = (0..3)
        .map(|i| format!("https://a.example/{i}.json"))
        .collect();
    let Some((redis, queue)) = one_thread_crawl("refused", &inputs, &[]) else {
        return;
    };
    let calls: HashMap<&str, AtomicU32> = inputs
        .iter()
        .map(|i| (i.as_str(), AtomicU32::new(0)))
        .collect();
    let lease = std::time::Duration::from_millis(500);
    let port = redis.port;
    let cli = move |args: &[&str]| {
        Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &port.to_string()])
            .args(args)
            .output()
            .unwrap()
    };
    let refused = std::sync::Once::new();
    let verify = |e: &CrawlEntry| {
        refused.call_once(|| {
            cli(&["CONFIG", "SET", "min-replicas-to-write", "1"]);
            std::thread::spawn(move || {
                std::thread::sleep(lease * 4);
                cli(&["CONFIG", "SET", "min-replicas-to-write", "0"]);
            });
        });
        calls[e.input.as_str()].fetch_add(1, Ordering::SeqCst);
        verified_result(e)
    };
    let counts = run_one_thread(
        &queue,
        |o| {
            o.max_attempts = 1;
            o.lease = lease;
        },
        &verify,
    );
    assert_eq!(counts.results, 3, "{counts:?}");
    for i in &inputs {
        assert_eq!(calls[i.as_str()].load(Ordering::SeqCst), 1, "{i}");
    }
    for (_, input, report) in queue.results("0", 10).unwrap() {
        let r: Value = serde_json::from_slice(&report).unwrap();
        assert_eq!(r["verdict"], "verified", "{input}: {r}");
        assert_eq!(r["details"]["crawl_attempts"], 1, "{input}: {r}");
    }
}

/// Calls of command `what` at `redis` since its counts were reset
/// ([`log_every_command`]), those made by scripts included
/// (`INFO commandstats`).
fn command_calls(redis: &redis_support::Server, what: &str) -> u64 {
    let info = redis.cli(&["INFO", "commandstats"]);
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{what}:calls=")))
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// From now on, count and log every command at `redis` (its command counts
/// reset, its slow log emptied and logging every command, those scripts
/// make included).
fn log_every_command(redis: &redis_support::Server) {
    redis.cli(&["CONFIG", "RESETSTAT"]);
    redis.cli(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    redis.cli(&["CONFIG", "SET", "slowlog-max-len", "100000"]);
    redis.cli(&["SLOWLOG", "RESET"]);
}

/// The commands logged since [`log_every_command`] (`SLOWLOG GET`, a line
/// per word), the logging stopped.
fn logged_commands(redis: &redis_support::Server) -> String {
    redis.cli(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
    let log = redis.cli(&["SLOWLOG", "GET", "-1"]);
    assert!(
        log.lines().any(|l| l.eq_ignore_ascii_case("evalsha")),
        "no script call logged: {log:.2000}"
    );
    log
}

/// The finishing script's calls in `log`: the `EVALSHA`s with its keys
/// (the crawl's seven and the input streams; no other script has as
/// many).
fn finishing_calls(log: &str) -> usize {
    let finish_keys = (7 + agentsig::replay::stream::SHARDS).to_string();
    let lines: Vec<&str> = log.lines().collect();
    lines
        .windows(3)
        .filter(|w| w[0].eq_ignore_ascii_case("evalsha") && w[2] == finish_keys)
        .count()
}

/// The reads that waited for a new entry since [`log_every_command`]:
/// only such a read has the argument `BLOCK` (the finishing script's take
/// never waits). Redis 7.0 leaves a command that blocked out of the slow
/// log but counts it among the command's calls, so the reads counted and
/// not logged are those.
fn waiting_reads(redis: &redis_support::Server, log: &str) -> u64 {
    let lines: Vec<&str> = log.lines().collect();
    let logged_blocking = lines.iter().filter(|l| **l == "BLOCK").count() as u64;
    let logged = lines
        .iter()
        .filter(|l| l.eq_ignore_ascii_case("xreadgroup"))
        .count() as u64;
    logged_blocking + command_calls(redis, "xreadgroup").saturating_sub(logged)
}

/// A thread with nothing to take makes one round trip per wait for a new
/// entry: after a wait that got nothing, and with no result to write, it
/// waits again rather than call the finishing script, whose take would
/// find nothing either. Here the crawl's one entry is held by a worker
/// that died; the live one waits until the entry's lease ends, takes it
/// over and writes its result.
#[test]
fn an_idle_thread_waits_without_calling_the_finishing_script() {
    use agentsig::replay::stream::CrawlEntry;
    use std::time::Duration;
    let inputs = ["https://agents.example/held.json".to_owned()];
    let Some((redis, queue)) = one_thread_crawl("idle", &inputs, &[]) else {
        return;
    };
    let held = queue
        .take("dead", 1, Duration::from_millis(10), &[])
        .unwrap();
    assert_eq!(held.len(), 1);
    log_every_command(&redis);
    let verify = |e: &CrawlEntry| verified_result(e);
    let counts = run_one_thread(&queue, |o| o.lease = Duration::from_millis(1500), &verify);
    let log = logged_commands(&redis);
    assert_eq!((counts.results, counts.reclaimed), (1, 1), "{counts:?}");
    // The lease is 15 waits of 100 ms; at least a few happened.
    let waits = waiting_reads(&redis, &log);
    assert!(waits >= 3, "{waits} waits");
    // The first take (nothing), the take over's result with the next take
    // (nothing), maybe a result written before a look for stale entries:
    // not one per wait.
    let scripts = finishing_calls(&log);
    assert!(scripts <= 4, "{scripts} finishing calls, {waits} waits");
}

/// A thread writes the results of the inputs it took together, with its
/// next take, in one script call: one result per input (a duplicated
/// entry in the same batch only acknowledged), each entry acknowledged
/// with its result, every result of a batch written by the time the next
/// batch is verified, and about one script call per batch, not one per
/// input (counted at the server: `INFO commandstats`).
#[test]
fn a_batch_of_results_is_written_in_one_script_call_with_the_next_take() {
    use agentsig::net::crawl::{WorkerOptions, FIRST_TAKE};
    use agentsig::replay::stream::CrawlEntry;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let inputs: Vec<String> = (0..40)
        .map(|i| format!("https://agents.example/a{i}.json"))
        .collect();
    // A raw duplicate taken in the same batch as its first copy (both
    // verified, the second result only acknowledged), and one taken after
    // its input's result is in (acknowledged when taken).
    let Some((redis, queue)) = one_thread_crawl("batch", &inputs, &[0, 39]) else {
        return;
    };
    let stats = |what: &str| command_calls(&redis, what);
    log_every_command(&redis);
    let verified = AtomicUsize::new(0);
    // The thread's first take is `FIRST_TAKE`; its inputs are quick, so
    // each take after it is the most, `batch`.
    let batch = WorkerOptions::new("w").batch;
    let first = FIRST_TAKE.min(batch);
    let verify = |e: &CrawlEntry| {
        // The results of every earlier batch are in by now.
        let n = verified.fetch_add(1, Ordering::SeqCst);
        let written = queue.results("0", 100).unwrap().len();
        let before = if n < first {
            0
        } else {
            first + (n - first) / batch * batch
        };
        // (One fewer: the duplicate in the first batch has no result.)
        assert!(written + 1 >= before, "{written} results before input {n}");
        verified_result(e)
    };
    let counts = run_one_thread(&queue, |_| {}, &verify);
    let log = logged_commands(&redis);
    let scripts = finishing_calls(&log);
    // With `until_empty`, the thread that wrote the last results asked
    // whether anything was queued and ended: no read waited for a new
    // entry (each such wait held the worker half a second past its end).
    assert_eq!(waiting_reads(&redis, &log), 0, "{log:.4000}");
    assert_eq!(counts.results, 40);
    assert_eq!(counts.duplicates, 2);
    let results = queue.results("0", 100).unwrap();
    let ids: HashSet<&str> = results.iter().map(|(_, i, _)| i.as_str()).collect();
    assert_eq!((results.len(), ids.len()), (40, 40));
    assert_eq!(queue.queued().unwrap(), 0, "every entry acknowledged");
    // 42 entries: the first take, then one per `batch` entries (2 with the
    // default 16 then 128; then one of none) writes the batches; a
    // finishing call per input made 52.
    let takes = 1 + (42 - first).div_ceil(batch);
    assert!(
        (takes..=takes + 2).contains(&scripts),
        "{scripts} finishing calls for 40 inputs, {batch} a take"
    );
    let scripts = scripts as u64;
    // Inside the calls, one command per call where Redis takes many fields
    // or ids at once (the `done` records and attempt counts, the
    // acknowledgements, the verdict counter): one per input made 40 `HSET`,
    // 42 `XACK` and 80 `HINCRBY`. Only the result's `XADD` is per input.
    // An acknowledged entry leaves its stream by one trim per call, not
    // an `XDEL` per entry.
    assert_eq!(stats("xdel"), 0, "entries deleted one by one");
    let per_call = [
        ("hset", 2),
        ("xack", 1),
        ("xtrim", 1),
        ("hdel", 2),
        ("hincrby", 1),
    ];
    for (what, most) in per_call {
        let n = stats(what);
        assert!(
            n <= most * scripts,
            "{n} {what} for 40 inputs in {scripts} script calls"
        );
    }
    assert_eq!(stats("xadd"), 40, "one result each");
    // A result's entry holds its input and its report, and nothing the
    // report carries already (verdict, reason code, input id, attempts):
    // every byte of it is copied into the stream and the append-only file.
    let key = queue.key_name("results");
    let entry = redis.cli(&["XRANGE", &key, "-", "+", "COUNT", "1"]);
    let fields: Vec<&str> = entry.lines().skip(1).step_by(2).collect();
    assert_eq!(fields, ["input", "report"], "{entry}");
}

/// A thread takes what it verifies in about a second, not `--take` at once:
/// over inputs that take 50 ms each, its first take is `FIRST_TAKE` (16)
/// of the 24 queued, and its next at most 20 (a second's worth), which is
/// the 8 left. So no more than 16 entries are ever pending with it (taken
/// and not yet finished, counted at the server as each input is verified),
/// where a take of the bound (128) held all 24 at once. Slower inputs only
/// make the takes smaller.
#[test]
fn a_thread_whose_inputs_are_slow_takes_a_few_at_a_time() {
    use agentsig::net::crawl::{WorkerOptions, FIRST_TAKE};
    use agentsig::replay::stream::CrawlEntry;
    use std::sync::atomic::{AtomicU64, Ordering};
    let inputs: Vec<String> = (0..24)
        .map(|i| format!("https://slow.example/a{i}.json"))
        .collect();
    let Some((_redis, queue)) = one_thread_crawl("slow", &inputs, &[]) else {
        return;
    };
    assert!(WorkerOptions::new("w").batch > inputs.len());
    let most = AtomicU64::new(0);
    let verify = |e: &CrawlEntry| {
        let pending = queue.status().unwrap().pending;
        most.fetch_max(pending, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(50));
        verified_result(e)
    };
    let counts = run_one_thread(&queue, |_| {}, &verify);
    assert_eq!(counts.results, 24);
    let most = most.load(Ordering::SeqCst);
    assert!(
        most >= 8 && most <= FIRST_TAKE as u64,
        "{most} entries pending at once"
    );
}

/// Exactly one result per input across a Redis failover. A primary with two
/// replicas under a sentinel, writes acknowledged by one replica
/// (`?wait=1`, Redis `WAIT`): two worker processes crawl through the
/// sentinel, and the primary is killed with SIGKILL once a third of the
/// results are in. The sentinel promotes a replica (the other one follows
/// it, so acknowledged writes go on); the workers ride out the gap (within
/// `REDIS_GRACE`), and every input still ends with exactly one result,
/// each with the verdict its bytes call for.
#[test]
fn a_crawl_over_sentinel_survives_the_primary_killed_with_one_result_per_input() {
    let Some((primary, replica)) = redis_support::primary_and_replica("crawl-fo") else {
        return;
    };
    // The second replica is up before the sentinel starts, so the sentinel
    // learns both from the primary at once (not at its next 10 s poll).
    let Some(second) = redis_support::Server::start_args(
        "crawl-fo-r2",
        vec![
            "--replicaof".into(),
            "127.0.0.1".into(),
            primary.port.to_string(),
        ],
        None,
    ) else {
        return;
    };
    redis_support::until("the second replica's link", || {
        second
            .cli(&["INFO", "replication"])
            .contains("master_link_status:up")
    });
    let Some(sentinel) = redis_support::Sentinel::start("crawl-fo-s", &primary) else {
        return;
    };
    redis_support::until("the sentinel knows both replicas", || {
        let r = sentinel.cli(&["SENTINEL", "REPLICAS", "agentsig-primary"]);
        r.contains(&replica.port.to_string()) && r.contains(&second.port.to_string())
    });
    let redis = format!("{}?wait=1&wait-timeout=2s", sentinel.url());
    let dir = redis_support::tmp("crawl-fo-work");
    let ca = Ca::new();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let srv = Server::start(&ca, &["agents.example"]);
    let n = (inputs() / 8).max(40);
    let urls = serve_signed(&srv, n, false);
    std::fs::write(dir.join("urls.txt"), urls.join("\n")).unwrap();
    let name = "crawl-fo";
    let queue = add_urls(&dir, &redis, name);
    // The default attempts an input: entries taken by a call whose answer
    // was lost with the primary are found again once their lease ends, and
    // that attempt counts ("a worker lost mid-input counts as one"); results
    // Redis could not take are kept and written once it is back.
    let workers: Vec<Child> = (0..2)
        .map(|i| {
            let (w, out) = (format!("w{i}"), format!("w{i}.jsonl"));
            worker_with(&dir, &redis, name, &w, &out, DEFAULT_MAX_ATTEMPTS, &[])
        })
        .collect();
    redis_support::until("a third of the results", || {
        queue
            .status()
            .is_ok_and(|s| s.results >= (urls.len() / 3) as u64)
    });
    let before = queue.status().unwrap();
    primary.signal("KILL");
    for w in workers {
        let (code, err) = stderr_of(w);
        assert_eq!(code, Some(0), "{err}");
    }
    // The crawl went on on a promoted replica, and not before the kill
    // only.
    let now_primary = sentinel.primary_port();
    assert_ne!(now_primary, primary.port.to_string());
    let status = queue.status().unwrap();
    assert!(status.results > before.results, "{before:?} {status:?}");
    assert_eq!(status.queued, 0, "{status:?}");

    let results = queue.results("0", 100_000).unwrap();
    let mut by_input: HashMap<String, Value> = HashMap::new();
    for (_, input, report) in &results {
        let r: Value = serde_json::from_slice(report).unwrap();
        assert!(
            by_input.insert(input.clone(), r).is_none(),
            "second result for {input}"
        );
    }
    assert_eq!(
        by_input.keys().collect::<HashSet<_>>(),
        urls.iter().collect::<HashSet<_>>(),
        "{status:?}"
    );
    for (i, u) in urls.iter().enumerate() {
        let r = &by_input[u];
        // A report that disagrees names how often the server saw its
        // documents asked for.
        assert_eq!(
            r["verified"],
            i % 10 != 3,
            "{u}: {r} (asked for {} and {} times)",
            srv.hit_count(&format!("/a{i}.json")),
            srv.hit_count(&format!("/a{i}.json.jws"))
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `crawl work --take` outside 1 to [`MAX_TAKE`] is a usage error (exit 2)
/// naming the flag and its bounds, refused before any connection to Redis;
/// the help states the same bounds and the default.
#[test]
fn a_take_outside_its_bounds_is_a_usage_error() {
    use agentsig::net::crawl::{DEFAULT_TAKE, MAX_TAKE};
    // Nothing is written: the temporary directory itself serves.
    let dir = std::env::temp_dir();
    let bounds = format!("1..={MAX_TAKE}");
    let over = (MAX_TAKE + 1).to_string();
    for take in ["0", over.as_str(), "many"] {
        let o = cli(
            &dir,
            &[
                "crawl",
                "work",
                "x",
                "--redis",
                "redis://127.0.0.1:1/0",
                "--take",
                take,
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--take {take}: {err}");
        assert!(err.contains("--take"), "--take {take}: {err}");
        // A number out of range is refused for its bounds, not as an
        // unknown flag.
        if take != "many" {
            assert!(err.contains(&bounds), "--take {take}: {err}");
        }
    }
    let o = cli(&dir, &["crawl", "work", "--help"]);
    // The help wraps to the terminal's width: compare its words.
    let help = String::from_utf8_lossy(&o.stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(&format!("(1 to {MAX_TAKE})"))
            && help.contains(&format!("[default: {DEFAULT_TAKE}]")),
        "{help}"
    );
}

/// Host affinity: the inputs of one host are in one input stream, and each
/// stream is read by the one live worker whose share holds it, so a host's
/// inputs are all verified by one worker and its connections and permits
/// stay with that worker. Eight hosts (a server each, so the per-host bound
/// is counted at each), 20 inputs each, three workers already counted
/// among the fleet's live workers when they start: every host's results
/// come from the worker whose share holds its stream, more than one worker
/// verifies, every input has one result, and no host ever has more than
/// the bound open.
#[test]
fn the_inputs_of_one_host_are_verified_by_one_worker() {
    use agentsig::replay::stream::{own_shards, shard_of};
    let Some(redis) = redis_support::Server::start("crawl-affinity") else {
        eprintln!("skipped: no redis-server");
        return;
    };
    let url = redis.url();
    let dir = redis_support::tmp("crawl-affinity");
    let ca = Ca::new();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let hosts: Vec<String> = (0..8).map(|i| format!("h{i}.example")).collect();
    let servers: Vec<Server> = hosts.iter().map(|h| Server::start(&ca, &[h])).collect();
    let mut urls = Vec::new();
    for (srv, h) in servers.iter().zip(&hosts) {
        urls.extend(serve_signed_at(srv, h, 20, false));
    }
    std::fs::write(dir.join("urls.txt"), urls.join("\n") + "\n").unwrap();
    let name = "affinity";
    let queue = add_urls(&dir, &url, name);
    // The fleet as it is once running: each worker live (for longer than
    // the run) before it takes anything.
    let names: Vec<String> = (0..3).map(|i| format!("w{i}")).collect();
    for w in &names {
        queue
            .members(w, std::time::Duration::from_secs(60))
            .unwrap();
    }
    let owner = |u: &str| {
        names
            .iter()
            .find(|w| own_shards(&names, w).contains(&shard_of(u)))
            .unwrap()
            .clone()
    };
    // `crawl status` names the live workers, their shares and what is
    // queued in them.
    let s = queue.status().unwrap();
    let live: Vec<&str> = s.workers.iter().map(|(w, _, _)| w.as_str()).collect();
    assert_eq!(live, ["w0", "w1", "w2"], "{s:?}");
    let streams: usize = s.workers.iter().map(|(_, n, _)| n).sum();
    let queued: u64 = s.workers.iter().map(|(_, _, q)| q).sum();
    assert_eq!((streams, queued), (agentsig::replay::stream::SHARDS, 160));
    let owners: HashSet<String> = urls.iter().map(|u| owner(u)).collect();
    assert!(owners.len() > 1, "the hosts fall to one worker: {owners:?}");
    let resolve: Vec<String> = hosts.iter().map(|h| format!("{h}=127.0.0.1")).collect();
    let extra: Vec<&str> = resolve
        .iter()
        .flat_map(|r| ["--resolve-to", r.as_str()])
        .collect();
    let workers: Vec<Child> = names
        .iter()
        .map(|w| worker_with(&dir, &url, name, w, &format!("{w}.jsonl"), 2, &extra))
        .collect();
    for w in workers {
        let (code, err) = stderr_of(w);
        assert_eq!(code, Some(0), "{err}");
    }
    // Who wrote each result: the worker's JSON Lines.
    let mut by: HashMap<String, String> = HashMap::new();
    for w in &names {
        let text = std::fs::read_to_string(dir.join(format!("{w}.jsonl"))).unwrap_or_default();
        for line in text.lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            let input = r["subject"].as_str().unwrap().to_owned();
            // One in ten is served with another body than its JWS signed.
            let tampered = input.ends_with("3.json");
            assert_eq!(r["verified"], !tampered, "{r}");
            assert!(by.insert(input, w.clone()).is_none(), "two results: {r}");
        }
    }
    assert_eq!(by.len(), urls.len());
    assert_eq!(queue.results("0", 1000).unwrap().len(), urls.len());
    for u in &urls {
        assert_eq!(by[u], owner(u), "{u}");
    }
    for (srv, h) in servers.iter().zip(&hosts) {
        assert!(srv.most_open() <= PER_HOST, "{h}: {}", srv.most_open());
    }
    // Each worker left the fleet as it ended.
    let s = queue.status().unwrap();
    assert!(s.workers.is_empty(), "{s:?}");
    assert_eq!(s.queued, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `n` inputs on `a.example`, in a crawl `name` of one redis-server,
/// each verified by one worker thread in this process: every result
/// written. `None` without redis-server.
fn crawled(name: &str, n: usize) -> Option<(redis_support::Server, CrawlQueue, Vec<String>)> {
    let inputs: Vec<String> = (0..n)
        .map(|i| format!("https://a.example/{i}.json"))
        .collect();
    let (redis, queue) = one_thread_crawl(name, &inputs, &[])?;
    Some((redis, queue, inputs))
}

/// One worker thread in this process verifies every input of `queue`
/// (each `verified`); the results it wrote.
fn verify_all(queue: &CrawlQueue) -> u64 {
    let verify = |e: &agentsig::replay::stream::CrawlEntry| verified_result(e);
    run_one_thread(queue, |_| {}, &verify).results
}

/// The subjects of the JSON Lines `text` (one report a line).
fn subjects(text: &str) -> HashSet<String> {
    text.lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            r["subject"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// `agentsig ARGS` with its standard output to `out`.
fn cli_to(args: &[&str], out: std::fs::File) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(args)
        .stdout(out)
        .output()
        .unwrap()
}

/// `crawl results NAME --follow --remove` on `url`, its standard output
/// and error piped to the test.
fn follower(url: &str, name: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args([
            "crawl", "results", name, "--redis", url, "--follow", "--remove",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// SIGTERM to `child` (a service manager's stop); its exit code once it
/// ended (`None`: ended by the signal).
fn terminated(child: &mut Child) -> Option<i32> {
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    child.wait().unwrap().code()
}

/// `crawl results --remove` takes each result out of Redis once it is
/// written, and only then: standard output that cannot be written
/// (`/dev/full`) removes nothing. Each input keeps its one result: the
/// status still counts it, and queuing the inputs again queues nothing.
/// `crawl delete` is refused while results are in Redis only.
#[test]
fn results_written_out_with_remove_leave_redis_and_nothing_else() {
    let Some((redis, queue, inputs)) = crawled("remove", 25) else {
        return;
    };
    assert_eq!(verify_all(&queue), 25);
    let dir = redis_support::tmp("crawl-remove");
    let url = redis.url();
    let results = ["crawl", "results", "remove", "--redis", &url, "--remove"];
    let delete = ["crawl", "delete", "remove", "--redis", &url];
    let refused = cli(&dir, &delete);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(err.contains("25 result(s) not taken out"), "{err}");
    let full = cli_to(&results, std::fs::File::create("/dev/full").unwrap());
    let err = String::from_utf8_lossy(&full.stderr);
    assert_eq!(full.status.code(), Some(2), "{err}");
    assert!(err.contains("stay in Redis"), "{err}");
    assert_eq!(
        queue.results("0", 100).unwrap().len(),
        25,
        "nothing removed"
    );
    // Written to a file, then removed.
    let out = dir.join("results.jsonl");
    let o = cli_to(&results, std::fs::File::create(&out).unwrap());
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 25);
    assert_eq!(subjects(&text), inputs.iter().cloned().collect());
    assert!(
        queue.results("0", 100).unwrap().is_empty(),
        "taken out of Redis"
    );
    let s = queue.status().unwrap();
    assert_eq!((s.results, s.results_removed), (25, 25));
    assert!(s.recent_rate.is_some(), "a rate over the results taken out");
    let status = cli(
        &dir,
        &["crawl", "status", "remove", "--redis", &url, "--json"],
    );
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["details"]["results"], 25, "{status}");
    assert_eq!(status["details"]["results_removed"], 25, "{status}");
    assert!(
        status["details"]["results_reader"].is_null(),
        "the reader gave its hold back: {status}"
    );
    // Nothing more to write; the inputs are not queued or verified again.
    let again = cli(&dir, &results);
    assert_eq!(again.status.code(), Some(0));
    assert!(again.stdout.is_empty());
    assert_eq!(queue.add(&inputs, 0).unwrap(), 0);
    assert_eq!(verify_all(&queue), 0);
    // Everything is out: the crawl's keys go.
    let deleted = cli(&dir, &delete);
    assert_eq!(deleted.status.code(), Some(0), "{deleted:?}");
    let s = queue.status().unwrap();
    assert_eq!((s.inputs, s.results, s.queued), (0, 0, 0));
}

/// `crawl results --follow --remove` writes results as they come: a
/// reader started before the crawl writes every result once the crawl
/// runs, leaves none in Redis, and ends by itself on SIGTERM.
#[test]
fn a_following_reader_writes_results_as_they_come() {
    use std::io::BufRead;
    let Some((redis, queue, inputs)) = crawled("follow", 12) else {
        return;
    };
    let url = redis.url();
    let mut reader = follower(&url, "follow");
    let stdout = reader.stdout.take().unwrap();
    // Twelve lines, or fewer if the reader ended.
    let lines = std::thread::spawn(move || {
        let lines = std::io::BufReader::new(stdout).lines().take(12);
        lines.map(Result::unwrap).collect::<Vec<_>>().join("\n")
    });
    assert_eq!(verify_all(&queue), 12);
    let text = lines.join().unwrap();
    assert_eq!(subjects(&text), inputs.iter().cloned().collect());
    // The reader removes a page once written: wait for the last removal
    // (a bounded count of polls, not a timed assertion).
    for _ in 0..200 {
        if queue.status().unwrap().results_removed == 12 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SIGTERM (a service manager's stop) ends it between pages, by itself.
    assert_eq!(terminated(&mut reader), Some(0), "ended by itself");
    assert_eq!(queue.status().unwrap().results_removed, 12);
    assert!(queue.results("0", 100).unwrap().is_empty());
}

/// One reader takes results out of a crawl at a time: while a `--follow
/// --remove` reader runs, another `--remove` is refused (exit 1, naming
/// it) or, following, waits for it; a reader that only prints is not held
/// back. A reader that stops gives its hold back at once.
#[test]
fn one_reader_at_a_time_takes_results_out() {
    use std::io::BufRead;
    let Some((redis, queue, _)) = crawled("exclusive", 5) else {
        return;
    };
    assert_eq!(verify_all(&queue), 5);
    let url = redis.url();
    let mut first = follower(&url, "exclusive");
    // It holds the crawl once it removed the results (a bounded count of
    // polls, not a timed assertion).
    for _ in 0..200 {
        if queue.status().unwrap().results_removed == 5 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(queue.status().unwrap().results_removed, 5);
    let reader = queue.status().unwrap().results_reader;
    let pid = first.id().to_string();
    assert!(
        reader.as_deref().is_some_and(|r| r.contains(&pid)),
        "status names the reader: {reader:?}"
    );
    let agentsig = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(["crawl", "results", "exclusive", "--redis", &url])
            .args(args)
            .output()
            .unwrap()
    };
    let refused = agentsig(&["--remove"]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains("another reader (") && err.contains("crawl exclusive out of Redis"),
        "{err}"
    );
    assert_eq!(
        agentsig(&[]).status.code(),
        Some(0),
        "printing is not held back"
    );
    // Nor is the crawl deleted under a live reader.
    let delete = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(["crawl", "delete", "exclusive", "--redis", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&delete.stderr);
    assert_eq!(delete.status.code(), Some(1), "{err}");
    assert!(err.contains("a live results reader ("), "{err}");
    // A second follower waits, saying so once.
    let mut second = follower(&url, "exclusive");
    let stderr = std::io::BufReader::new(second.stderr.take().unwrap());
    let said = stderr
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains("waiting for it to stop"));
    assert!(said.is_some(), "the second follower says it waits");
    assert_eq!(terminated(&mut first), Some(0));
    // The first gave its hold back: the second takes it (polled, bounded).
    let mut taken = false;
    for _ in 0..100 {
        let out = agentsig(&["--remove"]);
        if out.status.code() == Some(1) {
            taken = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(taken, "the waiting follower took the hold");
    assert_eq!(terminated(&mut second), Some(0));
    assert_eq!(queue.status().unwrap().results_reader, None, "given back");
    let after = agentsig(&["--remove"]);
    assert_eq!(
        after.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
}

/// A `crawl results NAME --follow --remove` reader over 300 results, blocked
/// on its first page (more than a pipe holds) since its standard output is
/// not read; returned once its hold was renewed while blocked. A renewal
/// comes 5 s after the take and nothing was removed by then, so the reader
/// is blocked in its write.
fn blocked_reader(name: &str) -> Option<(redis_support::Server, CrawlQueue, Child)> {
    // Each report names its input: 300 of about 700 bytes.
    let inputs: Vec<String> = (0..300)
        .map(|i| format!("https://a.example/{}/{i}.json", "p".repeat(600)))
        .collect();
    let (redis, queue) = one_thread_crawl(name, &inputs, &[])?;
    assert_eq!(verify_all(&queue), 300);
    let reader = follower(&redis.url(), name);
    let key = queue.key_name("remover");
    let pttl = || redis.cli(&["PTTL", &key]).trim().parse::<i64>().unwrap();
    // It takes the hold (a bounded count of polls).
    for _ in 0..200 {
        if pttl() > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The hold's time to live falls while the reader is blocked, until a
    // renewal raises it: polled, at most three renewals' worth of polls.
    let mut last = pttl();
    assert!(last > 0, "the reader holds the crawl");
    let mut renewed = false;
    for _ in 0..75 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let now = pttl();
        if now > last {
            renewed = true;
            break;
        }
        last = now;
    }
    assert!(renewed, "the hold was renewed while the reader was blocked");
    assert_eq!(
        queue.status().unwrap().results_removed,
        0,
        "the reader is still blocked on its first page"
    );
    Some((redis, queue, reader))
}

/// A `--remove` reader keeps its hold while it is blocked on a standard
/// output nobody reads: its hold is renewed all the same (a thread of its
/// own), so that no second reader takes the crawl over and writes the page
/// the first has in hand. Nothing is removed before the page is read; once
/// it is, every result is written once and taken out.
#[test]
fn a_reader_blocked_on_its_output_keeps_its_hold() {
    use std::io::Read;
    let Some((_redis, queue, mut reader)) = blocked_reader("blocked") else {
        return;
    };
    // Read its output: it writes every result once, then removes them.
    let mut stdout = reader.stdout.take().unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 65536];
    while text.lines().count() < 300 {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the reader ended early");
        text.push_str(std::str::from_utf8(&buf[..n]).unwrap());
    }
    for _ in 0..200 {
        if queue.status().unwrap().results_removed == 300 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(queue.status().unwrap().results_removed, 300);
    assert_eq!(terminated(&mut reader), Some(0));
    let written = subjects(&text);
    assert_eq!(written.len(), 300, "each result once");
    assert_eq!(text.lines().count(), 300);
    assert_eq!(queue.status().unwrap().results_reader, None, "given back");
}

/// A reader that cannot end by itself (blocked on its output) ends at a
/// second signal, exit 130, and gives its hold back first: the next
/// reader does not wait for the lease to end.
#[test]
fn a_second_signal_gives_a_readers_hold_back() {
    let Some((_redis, queue, mut reader)) = blocked_reader("forced") else {
        return;
    };
    let pid = reader.id().to_string();
    let term = || {
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
    };
    term();
    // The first is noted (the reader stays blocked); the second ends it.
    // Sent until it ends: a signal that arrives before the first was
    // handled counts once (a bounded count).
    let mut code = None;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        term();
        std::thread::sleep(std::time::Duration::from_millis(100));
        if let Some(status) = reader.try_wait().unwrap() {
            code = Some(status.code());
            break;
        }
    }
    assert_eq!(code, Some(Some(130)), "exit 130 at the second signal");
    assert_eq!(
        queue.status().unwrap().results_reader,
        None,
        "given back before the exit, not at the lease's end"
    );
    assert_eq!(queue.status().unwrap().results_removed, 0);
}

/// A crawl name that finds nothing in Redis (mistyped, deleted) is an input
/// that cannot be read, exit 2, not an empty crawl: `status`, `stop`,
/// `resume`, `results` and `delete` say so and leave no key behind. A
/// follower may start first and waits; `delete --force` clears strays.
#[test]
fn a_crawl_not_in_redis_is_not_an_empty_crawl() {
    let Some(redis) = redis_support::Server::start("crawl-unknown") else {
        return;
    };
    let dir = redis_support::tmp("crawl-unknown");
    let url = redis.url();
    let run = |verb: &str, extra: &[&str]| {
        let mut args = vec!["crawl", verb, "typo", "--redis", &url];
        args.extend_from_slice(extra);
        cli(&dir, &args)
    };
    for verb in ["status", "stop", "resume", "results", "delete"] {
        let o = run(verb, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{verb}: {err}");
        assert!(err.contains("no crawl typo in this Redis"), "{verb}: {err}");
    }
    let json = run("status", &["--json"]);
    let r: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(r["error"]["code"], "input.unreadable");
    assert_eq!(redis.cli(&["DBSIZE"]).trim(), "0", "no key left behind");
    assert_eq!(run("delete", &["--force"]).status.code(), Some(0));
    // Once made (here by an empty list), it is there; deleted, it is not.
    std::fs::write(dir.join("none.txt"), "").unwrap();
    assert_eq!(run("add", &["none.txt"]).status.code(), Some(0));
    assert_eq!(run("status", &[]).status.code(), Some(0));
    assert_eq!(run("stop", &[]).status.code(), Some(0));
    assert_eq!(run("resume", &[]).status.code(), Some(0));
    assert_eq!(run("results", &[]).status.code(), Some(0));
    assert_eq!(run("delete", &[]).status.code(), Some(0));
    assert_eq!(run("status", &[]).status.code(), Some(2));
}

/// Options no worker can run with are refused before anything is taken
/// (no Redis needed): no attempt at all, a lease that ends at once. The
/// command line says which, exit 2; the library returns an error.
#[test]
fn options_no_worker_can_run_with_are_refused() {
    use std::sync::atomic::AtomicBool;
    // No Redis and no files: any directory will do (none is left behind).
    let dir = std::env::temp_dir();
    let refused = |extra: &[&str], says: &str| {
        let mut args = vec![
            "crawl",
            "work",
            "opts",
            "--redis",
            "redis://127.0.0.1:1",
            "--until-empty",
        ];
        args.extend_from_slice(extra);
        let o = cli(&dir, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    };
    refused(&["--lease", "0s"], "--lease must be at least 1s");
    refused(
        &["--max-attempts", "0"],
        "--max-attempts must be at least 1",
    );
    let queue = CrawlQueue::open("redis://127.0.0.1:1", "opts").unwrap();
    let stop = AtomicBool::new(false);
    let verify = |_: &agentsig::replay::stream::CrawlEntry| -> agentsig::net::crawl::Step {
        unreachable!("nothing is taken")
    };
    for tune in [
        (|o: &mut agentsig::net::crawl::WorkerOptions| o.max_attempts = 0) as fn(&mut _),
        |o| o.lease = std::time::Duration::ZERO,
    ] {
        let mut opts = agentsig::net::crawl::WorkerOptions::new("w");
        tune(&mut opts);
        let e = agentsig::net::crawl::run_worker(&queue, &opts, &verify, &|_, _, _| {}, &stop)
            .unwrap_err();
        assert!(e.to_string().contains("must not be zero"), "{e}");
    }
}

/// A list line `crawl add` cannot read (not UTF-8, longer than its bound)
/// ends the command with exit 2 naming the line, once the inputs before it
/// are queued; given again, mended, the list queues only what is new.
#[test]
fn a_bad_list_line_names_itself_and_keeps_what_came_before() {
    let Some(redis) = redis_support::Server::start("crawl-badline") else {
        return;
    };
    let dir = redis_support::tmp("crawl-badline");
    let url = redis.url();
    let long = format!("https://a.example/{}\n", "x".repeat(9000));
    let good = b"https://a.example/1.json\r\nhttps://a.example/2.json\n";
    let list = [&good[..], b"https://a.example/\xff.json\n", long.as_bytes()].concat();
    std::fs::write(dir.join("list.txt"), &list).unwrap();
    let add = || {
        cli(
            &dir,
            &["crawl", "add", "badline", "--redis", &url, "list.txt"],
        )
    };
    let o = add();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("list.txt line 3: not UTF-8 (the 2 input(s) before it are queued"),
        "{err}"
    );
    let queue = CrawlQueue::open(&url, "badline").unwrap();
    assert_eq!(queue.status().unwrap().inputs, 2);
    // Line 3 mended; line 4 still too long.
    let list = [&good[..], b"https://a.example/3.json\n", long.as_bytes()].concat();
    std::fs::write(dir.join("list.txt"), &list).unwrap();
    let o = add();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("list.txt line 4: longer than 8192 bytes (the 3 input(s) before it"),
        "{err}"
    );
    assert_eq!(queue.status().unwrap().inputs, 3, "only the new one queued");
}

/// The hashes every take and finish looks ids up in are hash tables from
/// the crawl's start, not listpacks searched field by field (which Redis
/// uses for a hash of up to 512 fields by default: every crawl's in-flight
/// inputs, and the first hundreds of its results), and stay so once the
/// crawl has run; the field that keeps them so is no input's.
#[test]
fn the_hashes_by_input_id_are_hash_tables() {
    let Some((redis, queue, _)) = crawled("encoding", 5) else {
        return;
    };
    assert_eq!(verify_all(&queue), 5);
    for k in ["done", "tries", "why", "postponed"] {
        let key = queue.key_name(k);
        assert_eq!(
            redis.cli(&["OBJECT", "ENCODING", &key]).trim(),
            "hashtable",
            "{k}"
        );
        assert!(
            redis.cli(&["HGET", &key, "~"]).contains("hash table"),
            "{k}"
        );
    }
    let s = queue.status().unwrap();
    assert_eq!((s.results, s.inputs), (5, 5));
}

/// The remover's hold in the library: one holder at a time, renewed by its
/// holder, given back only by its holder, and free once its lease ends
/// without a renewal (a reader that died).
#[test]
fn a_remover_hold_has_one_holder_and_ends_with_its_lease() {
    let Some((_redis, queue, _)) = crawled("hold", 1) else {
        return;
    };
    let short = std::time::Duration::from_millis(300);
    assert_eq!(queue.hold_remover("a 1", short).unwrap(), None);
    assert_eq!(queue.hold_remover("a 1", short).unwrap(), None, "renewed");
    assert_eq!(
        queue.hold_remover("b 2", short).unwrap().as_deref(),
        Some("a 1")
    );
    queue.release_remover("b 2").unwrap();
    assert_eq!(
        queue.hold_remover("b 2", short).unwrap().as_deref(),
        Some("a 1"),
        "only its holder gives it back"
    );
    // Not renewed: free once the lease ends (a bounded count of polls).
    let mut free = false;
    for _ in 0..100 {
        if queue.hold_remover("b 2", short).unwrap().is_none() {
            free = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(free, "the lease ended");
    queue.release_remover("b 2").unwrap();
    assert_eq!(
        queue.hold_remover("a 1", short).unwrap(),
        None,
        "given back"
    );
}

/// SIGTERM (a service manager's stop) stops one worker as `crawl stop`
/// stops them all: it ends by itself, exit 0, and leaves the fleet at
/// once rather than at the end of its place's lease.
#[test]
fn sigterm_stops_a_worker_gracefully() {
    let Some(redis) = redis_support::Server::start("crawl-sigterm") else {
        return;
    };
    let dir = redis_support::tmp("crawl-sigterm");
    let url = redis.url();
    let queue = CrawlQueue::open(&url, "sigterm").unwrap();
    let mut w = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args([
            "crawl",
            "work",
            "sigterm",
            "--redis",
            &url,
            "--consumer",
            "w1",
        ])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Live in the fleet (a bounded count of polls).
    for _ in 0..200 {
        if !queue.status().unwrap().workers.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        queue.status().unwrap().workers.len(),
        1,
        "the worker is live"
    );
    let code = terminated(&mut w);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut w.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(code, Some(0), "ended by itself: {err}");
    assert!(err.contains("worker w1: 0 results written"), "{err}");
    assert!(queue.status().unwrap().workers.is_empty(), "left the fleet");
}

/// A following reader rides out Redis going away and coming back (a
/// restart; a failover looks the same to it): it says so on standard error,
/// asks again, and writes the results that come after, once each.
#[test]
fn a_following_reader_rides_out_a_redis_restart() {
    use std::io::BufRead;
    let Some((mut redis, queue, inputs)) = crawled("follow-restart", 10) else {
        return;
    };
    assert_eq!(verify_all(&queue), 10);
    let url = redis.url();
    let mut reader = follower(&url, "follow-restart");
    let stdout = reader.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let lines = std::thread::spawn(move || {
        let mut n = 0;
        let mut text = String::new();
        for line in std::io::BufReader::new(stdout).lines() {
            text.push_str(&line.unwrap());
            text.push('\n');
            n += 1;
            // The first ten are out: the test may stop Redis.
            if n == 10 {
                let _ = tx.send(());
            }
            if n == 15 {
                break;
            }
        }
        text
    });
    rx.recv().expect("the first ten results");
    redis_support::until("the first ten removed", || {
        queue.status().is_ok_and(|s| s.results_removed == 10)
    });
    redis.stop();
    // The reader saw Redis gone: its warning (read until it comes).
    let mut stderr = std::io::BufReader::new(reader.stderr.take().unwrap());
    let mut warning = String::new();
    stderr.read_line(&mut warning).unwrap();
    assert!(warning.contains("asking again"), "{warning}");
    redis.restart();
    let more: Vec<String> = (10..15)
        .map(|i| format!("https://a.example/{i}.json"))
        .collect();
    assert_eq!(queue.add(&more, 0).unwrap(), 5);
    assert_eq!(verify_all(&queue), 5);
    let text = lines.join().unwrap();
    assert_eq!(text.lines().count(), 15);
    let all: HashSet<String> = inputs.iter().chain(&more).cloned().collect();
    assert_eq!(subjects(&text), all);
    let code = terminated(&mut reader);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(code, Some(0), "{warning}{rest}");
}

/// Across a Redis Cluster failover: the primary that holds the crawl's slot
/// is killed mid-run and a replica of it promoted by the cluster. A worker
/// with acknowledged writes (`?wait=1`; the primary has two replicas, so
/// one is left to acknowledge after the promotion) rides out the gap, and
/// every input still ends with exactly one result.
#[test]
fn a_crawl_on_a_cluster_survives_a_failover_with_one_result_per_input() {
    use agentsig::net::crawl::{run_worker, WorkerOptions};
    use agentsig::replay::stream::CrawlEntry;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;
    let Some(cluster) = redis_support::Cluster::start("crawl-failover") else {
        return;
    };
    let replicas = [
        cluster.add_replica("crawl-failover-r1", 0),
        cluster.add_replica("crawl-failover-r2", 0),
    ];
    // Both stay primary 0's: the cluster would otherwise move one to a
    // primary without replicas (replica migration), and the promoted one
    // would then have none to acknowledge writes.
    let primary = cluster.nodes[0].cli(&["CLUSTER", "MYID"]).trim().to_owned();
    for r in &replicas {
        r.cli(&["CONFIG", "SET", "cluster-allow-replica-migration", "no"]);
        r.cli(&["CLUSTER", "REPLICATE", &primary]);
    }
    let master_port = format!("master_port:{}", cluster.nodes[0].port);
    redis_support::until("both replicas of primary 0, in sync", || {
        replicas.iter().all(|r| {
            let info = r.cli(&["INFO", "replication"]);
            info.contains(&master_port) && info.contains("master_link_status:up")
        })
    });
    // A crawl whose slot is primary 0's: a key of it is not redirected.
    let name = (0..100)
        .map(|i| format!("failover-{i}"))
        .find(|n| {
            let key = format!("agentsig:crawl:{{{n}}}:state");
            !cluster.nodes[0].cli(&["EXISTS", &key]).contains("MOVED")
        })
        .unwrap();
    let queue = CrawlQueue::open(&cluster.url("?wait=1"), &name).unwrap();
    queue.create().unwrap();
    let inputs: Vec<String> = (0..200)
        .map(|i| format!("https://agents.example/f{i}.json"))
        .collect();
    assert_eq!(queue.add(&inputs, 0).unwrap(), 200);
    let written = AtomicUsize::new(0);
    let verify = |e: &CrawlEntry| {
        // Slow enough that the primary dies mid-run.
        std::thread::sleep(Duration::from_millis(5));
        verified_result(e)
    };
    let on_result = |_: &CrawlEntry, _: bool, _: &[u8]| {
        written.fetch_add(1, Ordering::SeqCst);
    };
    let mut opts = WorkerOptions::new("w");
    opts.threads = 2;
    opts.until_empty = true;
    // A result lost with the old primary is found again after this.
    opts.lease = Duration::from_secs(3);
    let stop = AtomicBool::new(false);
    let counts = std::thread::scope(|s| {
        let w = s.spawn(|| run_worker(&queue, &opts, &verify, &on_result, &stop));
        redis_support::until("a quarter of the results", || {
            written.load(Ordering::SeqCst) >= 50
        });
        cluster.nodes[0].signal("KILL");
        let before = written.load(Ordering::SeqCst);
        (w.join().unwrap(), before)
    });
    let (counts, before) = counts;
    // Killed mid-run: results were still to be written after it.
    assert!(before < 200, "{before} results before the kill");
    let counts = counts.unwrap();
    assert!(
        replicas
            .iter()
            .any(|r| r.cli(&["ROLE"]).starts_with("master")),
        "a replica promoted"
    );
    let results = queue.results("0", 1000).unwrap();
    let ids: HashSet<&str> = results.iter().map(|(_, i, _)| i.as_str()).collect();
    assert_eq!((results.len(), ids.len()), (200, 200), "{counts:?}");
    assert_eq!(queue.queued().unwrap(), 0);
}
