//! Replay-checked JWT verification with the Redis store on loopback versus
//! the in-memory store.
//!
//! Run: `cargo bench --bench replay -- --measurement-time 3`. Starts its own
//! `redis-server` on a free loopback port (skips the Redis cases with a
//! message when it is not installed). Each iteration verifies a fresh ES256
//! token (signature, claims, then `SET NX EX` of its jti); the `parallel`
//! cases verify 64 tokens on 2 threads, which shows whether the Redis round
//! trip serializes the signature checks (it does not: each thread has its
//! own pooled connection and no lock is held across the round trip).
//!
//! After the criterion groups, a paired loop prints the memory : Redis
//! ratio measured so that load from other processes falls on both stores
//! alike: it alternates one memory and one Redis verification (and one
//! 64-token batch of each), many times, and compares the medians.
//! `cargo bench --bench replay -- paired-only` (a filter that no criterion
//! case matches) runs the paired loop alone.

use agentsig::replay::{MemoryReplayStore, RedisReplayStore, ReplayStore};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{jwt, Algorithm, SigningKey};
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_redis() -> Option<(Server, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let child = match Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("SKIPPED redis cases: cannot start redis-server: {e}");
            return None;
        }
    };
    let server = Server(child);
    let url = format!("redis://127.0.0.1:{port}/0");
    let probe = RedisReplayStore::open(&url).ok()?;
    for _ in 0..200 {
        if probe.ping().is_ok() {
            return Some((server, url));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    eprintln!("SKIPPED redis cases: redis-server did not answer");
    None
}

static JTI: AtomicU64 = AtomicU64::new(0);

/// The current Unix time. Tokens expire an hour later: within the replay
/// window (one acceptable for longer is refused with a replay store).
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn token(key: &SigningKey) -> String {
    let n = JTI.fetch_add(1, Ordering::Relaxed);
    let claims = serde_json::json!({
        "iss": "https://as.example", "sub": "alice", "aud": "https://rs.example",
        "jti": format!("jti-{n}"), "exp": now() + 3600,
    });
    jwt::sign(claims.as_object().expect("object"), key, "JWT").expect("sign")
}

fn bench(c: &mut Criterion) {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("keygen");
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let redis = start_redis();
    let mut stores: Vec<(&str, Arc<dyn ReplayStore>)> = vec![(
        "memory",
        Arc::new(MemoryReplayStore::with_capacity(10_000_000)),
    )];
    if let Some((_, url)) = &redis {
        stores.push(("redis", Arc::new(RedisReplayStore::open(url).expect("url"))));
    }
    let mut g = c.benchmark_group("jwt_verify_replay");
    for (name, store) in &stores {
        let v = Verifier::builder(keys.clone())
            .replay_store(store.clone())
            .build();
        g.bench_function(format!("{name}/1_token"), |b| {
            b.iter_batched(
                || token(&key),
                |t| black_box(v.verify_jwt(&t).expect("verifies")),
                BatchSize::SmallInput,
            )
        });
        g.bench_function(format!("{name}/parallel_2x32_tokens"), |b| {
            b.iter_batched(
                || (0..64).map(|_| token(&key)).collect::<Vec<_>>(),
                |ts| {
                    std::thread::scope(|s| {
                        for half in ts.chunks(32) {
                            let v = &v;
                            s.spawn(move || {
                                for t in half {
                                    black_box(v.verify_jwt(t).expect("verifies"));
                                }
                            });
                        }
                    })
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
    // `cargo test --all-targets` runs this once as a smoke test (no
    // `--bench` argument): the paired timing loop is for `cargo bench`.
    if stores.len() == 2 && std::env::args().any(|a| a == "--bench") {
        paired(&stores, &keys, &key);
    }
    drop(redis);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Alternate memory and Redis so that both see the same load; print the
/// medians and their ratio.
fn paired(stores: &[(&str, Arc<dyn ReplayStore>)], keys: &StaticKeys, key: &SigningKey) {
    use std::time::Instant;
    let vs: Vec<Verifier> = stores
        .iter()
        .map(|(_, s)| {
            Verifier::builder(keys.clone())
                .replay_store(s.clone())
                .build()
        })
        .collect();
    let (mut one, mut batch) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for _ in 0..4000 {
        for (i, v) in vs.iter().enumerate() {
            let t = token(key);
            let start = Instant::now();
            black_box(v.verify_jwt(&t).expect("verifies"));
            one[i].push(start.elapsed().as_secs_f64());
        }
    }
    for _ in 0..150 {
        for (i, v) in vs.iter().enumerate() {
            let ts: Vec<String> = (0..64).map(|_| token(key)).collect();
            let start = Instant::now();
            std::thread::scope(|s| {
                for half in ts.chunks(32) {
                    s.spawn(move || {
                        for t in half {
                            black_box(v.verify_jwt(t).expect("verifies"));
                        }
                    });
                }
            });
            batch[i].push(start.elapsed().as_secs_f64());
        }
    }
    let [m1, r1] = one.map(median);
    let [m64, r64] = batch.map(median);
    println!(
        "paired medians: 1 token: memory {:.1} us, redis {:.1} us, memory : Redis = 1 : {:.2}; \
         64 tokens on 2 threads: memory {:.2} ms, redis {:.2} ms, memory : Redis = 1 : {:.2}",
        m1 * 1e6,
        r1 * 1e6,
        r1 / m1,
        m64 * 1e3,
        r64 * 1e3,
        r64 / m64
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
