//! Replay-checked JWT verification on the fleet stores, as ratios to the
//! in-memory store, measured in one run: a three-primary Redis Cluster
//! (`redis+cluster://`), and one primary with one replica without and with
//! acknowledged writes (`?wait=1`: every accepted token waits for the
//! replica's `WAIT` acknowledgement).
//!
//! Run: `cargo bench --bench replay_fleet`. Starts its own `redis-server`
//! processes on free loopback ports (and joins the cluster with
//! `redis-cli --cluster create`); prints `SKIPPED` when they are not
//! installed. The stores are measured alternately, one verification each
//! per round, so that load from other processes falls on all alike; the
//! medians and their ratios are printed. Then the throughput of 1, 2 and
//! 4 verifiers (threads, each with its own `Verifier`) on every store, as
//! ratios to the in-memory store at the same count, in the same run; and
//! the same with 1, 2 and 4 verifier *processes* (this bench re-executed as
//! children, each with its own `Verifier`, store connection and memory
//! store) on the cluster, beside the in-memory store at the same count.

use agentsig::replay::{MemoryReplayStore, RedisReplayStore, ReplayStore};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{jwt, Algorithm, SigningKey};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A redis-server child, killed (and its directory removed) on drop.
struct Server {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn start(name: &str, extra: &[&str]) -> Option<Server> {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("agentsig-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).ok()?;
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--dir"])
        .arg(&dir)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let s = Server { child, dir, port };
    wait_for(|| cli(s.port, &["PING"]).contains("PONG")).then_some(s)
}

fn cli(port: u16, args: &[&str]) -> String {
    Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Poll `f` until it holds (at most 20 s).
fn wait_for(mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..400 {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Three cluster primaries, joined; their URL.
fn cluster() -> Option<(Vec<Server>, String)> {
    let cluster_args = [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
    ];
    let nodes = (0..3)
        .map(|i| start(&format!("cluster-{i}"), &cluster_args))
        .collect::<Option<Vec<_>>>()?;
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let ok = Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .output()
        .ok()?
        .status
        .success();
    let up = ok
        && wait_for(|| {
            nodes
                .iter()
                .all(|n| cli(n.port, &["CLUSTER", "INFO"]).contains("cluster_state:ok"))
        });
    up.then(|| (nodes, format!("redis+cluster://{}", addrs.join(","))))
}

/// A primary and one replica, the link up.
fn primary_and_replica() -> Option<(Server, Server)> {
    let p = start("primary", &[])?;
    let port = p.port.to_string();
    let r = start("replica", &["--replicaof", "127.0.0.1", &port])?;
    wait_for(|| cli(r.port, &["INFO", "replication"]).contains("master_link_status:up"))
        .then_some((p, r))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == WORKER) {
        worker(&args[i + 1..]);
        return;
    }
    // `cargo test --all-targets` builds and runs this without `--bench`:
    // the servers and the timing loop are for `cargo bench` only.
    if !args.iter().any(|a| a == "--bench") {
        return;
    }
    let Some((_nodes, cluster_url)) = cluster() else {
        eprintln!(
            "SKIPPED replay_fleet: redis-server or redis-cli missing, or the cluster did not form"
        );
        return;
    };
    let Some((primary, _replica)) = primary_and_replica() else {
        eprintln!("SKIPPED replay_fleet: the primary and replica did not start");
        return;
    };
    let single = format!("redis://127.0.0.1:{}/0", primary.port);
    let acked = format!("{single}?wait=1&wait-timeout=1s");
    let stores: Vec<(&str, Arc<dyn ReplayStore>)> = vec![
        (
            "memory",
            Arc::new(MemoryReplayStore::with_capacity(10_000_000)),
        ),
        (
            "cluster",
            Arc::new(RedisReplayStore::open(&cluster_url).expect("url")),
        ),
        (
            "primary+replica",
            Arc::new(RedisReplayStore::open(&single).expect("url")),
        ),
        (
            "primary+replica wait=1",
            Arc::new(RedisReplayStore::open(&acked).expect("url")),
        ),
    ];
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("keygen");
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let vs: Vec<Verifier> = stores
        .iter()
        .map(|(_, s)| {
            Verifier::builder(keys.clone())
                .replay_store(s.clone())
                .build()
        })
        .collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let mut n = 0u64;
    let mut token = || {
        n += 1;
        let claims = serde_json::json!({
            "iss": "https://as.example", "sub": "alice", "aud": "https://rs.example",
            "jti": format!("jti-{n}"), "exp": now + 3600,
        });
        jwt::sign(claims.as_object().expect("object"), &key, "JWT").expect("sign")
    };
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); vs.len()];
    for round in 0..3000 {
        for (i, v) in vs.iter().enumerate() {
            let t = token();
            let start = Instant::now();
            std::hint::black_box(v.verify_jwt(&t).expect("verifies"));
            // The first rounds warm the pools and the cluster's slot map.
            if round >= 200 {
                times[i].push(start.elapsed().as_secs_f64());
            }
        }
    }
    let medians: Vec<f64> = times.into_iter().map(median).collect();
    for ((name, _), m) in stores.iter().zip(&medians) {
        println!(
            "{name:24} median {:7.1} us   {:8.0} verifications/s   memory : {name} = 1 : {:.2}",
            m * 1e6,
            1.0 / m,
            m / medians[0]
        );
    }
    println!(
        "acknowledged writes (wait=1) : plain on the same primary = 1 : {:.2}",
        medians[3] / medians[2]
    );
    scaling(&stores, &key, &keys, now);
    processes(&cluster_url);
}

/// The argument that makes this program a verifier process of
/// [`processes`]: `WORKER STORE COUNT`.
const WORKER: &str = "--fleet-worker";

/// Verifications a verifier process makes before it is timed.
const WARM_UP: usize = 200;

/// One verifier process: its own key, `COUNT` (plus [`WARM_UP`]) fresh
/// ES256 JWTs signed before it says `ready`, a `Verifier` over the replay store `STORE`
/// (`memory:`: its own in-memory store); on a line on standard input it
/// verifies them all and prints the seconds it took.
fn worker(args: &[String]) {
    use std::io::{BufRead, Write};
    let (Some(url), Some(count)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        eprintln!("usage: {WORKER} STORE COUNT");
        std::process::exit(2);
    };
    let count: usize = count;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let store = agentsig::replay::open_store(url, now).expect("store");
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("keygen");
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let v = Verifier::builder(keys).replay_store(store).build();
    let pid = std::process::id();
    let tokens: Vec<String> = (0..count + WARM_UP)
        .map(|i| {
            let claims = serde_json::json!({
                "iss": "https://as.example", "sub": "alice", "aud": "https://rs.example",
                "jti": format!("proc-{pid}-{now}-{i}"), "exp": now + 3600,
            });
            jwt::sign(claims.as_object().expect("object"), &key, "JWT").expect("sign")
        })
        .collect();
    // The first verifications are not timed: the connection is made, the
    // cluster's slot map read and the code warm, as in a long-running
    // verifier process.
    for t in &tokens[..WARM_UP] {
        std::hint::black_box(v.verify_jwt(t).expect("verifies"));
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")
        .and_then(|()| out.flush())
        .expect("stdout");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).expect("stdin");
    let start = Instant::now();
    for t in &tokens[WARM_UP..] {
        std::hint::black_box(v.verify_jwt(t).expect("verifies"));
    }
    writeln!(out, "{}", start.elapsed().as_secs_f64()).expect("stdout");
}

/// Verifications per second with 1, 2 and 4 verifier processes (this
/// program re-executed as [`worker`]s) on the cluster store, beside the
/// in-memory store (each process its own) at the same count. A burst
/// starts its processes, lets them connect and sign their tokens, then
/// starts them together (one line on every standard input): process
/// start-up is not timed. The burst's rate is the sum of its processes'
/// rates; bursts alternate over the stores, and the median burst rate of
/// each is printed with its ratio to the in-memory store.
fn processes(cluster_url: &str) {
    use std::io::{BufRead, BufReader, Write};
    const PER_PROCESS: usize = 1000;
    const BURSTS: usize = 9;
    let exe = std::env::current_exe().expect("the bench's own path");
    let stores = [("memory", "memory:"), ("cluster", cluster_url)];
    println!("\nverifier processes (each its own Verifier and connection), median of {BURSTS} alternating bursts:");
    for n in [1usize, 2, 4] {
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); stores.len()];
        for _ in 0..BURSTS {
            for (si, (_, url)) in stores.iter().enumerate() {
                let mut children: Vec<(Child, BufReader<std::process::ChildStdout>)> = (0..n)
                    .map(|_| {
                        let mut c = Command::new(&exe)
                            .args([WORKER, url, &PER_PROCESS.to_string()])
                            .stdin(Stdio::piped())
                            .stdout(Stdio::piped())
                            .spawn()
                            .expect("a verifier process");
                        let out = BufReader::new(c.stdout.take().expect("stdout"));
                        (c, out)
                    })
                    .collect();
                let mut line = String::new();
                for (_, out) in &mut children {
                    line.clear();
                    out.read_line(&mut line).expect("ready");
                    assert_eq!(line.trim(), "ready", "a verifier process did not start");
                }
                for (c, _) in &mut children {
                    let stdin = c.stdin.as_mut().expect("stdin");
                    stdin
                        .write_all(b"go\n")
                        .and_then(|()| stdin.flush())
                        .expect("go");
                }
                let mut rate = 0.0;
                for (mut c, mut out) in children {
                    line.clear();
                    out.read_line(&mut line).expect("elapsed");
                    let secs: f64 = line.trim().parse().expect("seconds");
                    rate += PER_PROCESS as f64 / secs;
                    assert!(
                        c.wait().expect("exit").success(),
                        "a verifier process failed"
                    );
                }
                rates[si].push(rate);
            }
        }
        let medians: Vec<f64> = rates.into_iter().map(median).collect();
        for ((name, _), r) in stores.iter().zip(&medians) {
            println!(
                "{n} x {name:24} {r:8.0} verifications/s   memory : {name} = 1 : {:.2} (time per verification, processes)",
                medians[0] / r
            );
        }
    }
}

/// Verifications per second with 1, 2 and 4 verifiers, each a thread with
/// its own `Verifier` over the shared store (threads, not processes: the
/// store sees one pooled connection per thread either way). For each count,
/// short bursts (every thread verifying `PER_BURST` fresh tokens signed
/// beforehand) alternate over the stores, so that load from other
/// processes falls on all alike; the median burst rate of each store is
/// printed with its ratio to the in-memory store at the same count.
fn scaling(stores: &[(&str, Arc<dyn ReplayStore>)], key: &SigningKey, keys: &StaticKeys, now: i64) {
    const PER_BURST: usize = 150;
    const BURSTS: usize = 25;
    let mut next = 0u64;
    let mut sign = || {
        next += 1;
        let claims = serde_json::json!({
            "iss": "https://as.example", "sub": "alice", "aud": "https://rs.example",
            "jti": format!("scale-{next}"), "exp": now + 3600,
        });
        jwt::sign(claims.as_object().expect("object"), key, "JWT").expect("sign")
    };
    println!(
        "\nverifiers (threads, each its own Verifier), median of {BURSTS} alternating bursts:"
    );
    for n in [1usize, 2, 4] {
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); stores.len()];
        for _ in 0..BURSTS {
            for (si, (_, store)) in stores.iter().enumerate() {
                let batches: Vec<Vec<String>> = (0..n)
                    .map(|_| (0..PER_BURST).map(|_| sign()).collect())
                    .collect();
                let go = std::sync::Barrier::new(n + 1);
                let start = std::thread::scope(|sc| {
                    for tokens in &batches {
                        let (go, store) = (&go, store.clone());
                        sc.spawn(move || {
                            let v = Verifier::builder(keys.clone()).replay_store(store).build();
                            go.wait();
                            for t in tokens {
                                std::hint::black_box(v.verify_jwt(t).expect("verifies"));
                            }
                        });
                    }
                    go.wait();
                    Instant::now()
                });
                rates[si].push((n * PER_BURST) as f64 / start.elapsed().as_secs_f64());
            }
        }
        let medians: Vec<f64> = rates.into_iter().map(median).collect();
        for ((name, _), r) in stores.iter().zip(&medians) {
            println!(
                "{n} x {name:24} {r:8.0} verifications/s   memory : {name} = 1 : {:.2} (time per verification)",
                medians[0] / r
            );
        }
    }
}
