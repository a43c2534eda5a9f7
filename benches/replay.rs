//! Replay-checked JWT verification per second with the Redis
//! store on loopback versus the in-memory store.
//!
//! Run: `cargo bench --bench replay -- --measurement-time 3`. Starts its own
//! `redis-server` on a free loopback port (skips the Redis cases with a
//! message when it is not installed). Each iteration verifies a fresh ES256
//! token (signature, claims, then `SET NX EX` of its jti); the `parallel`
//! cases verify 64 tokens on 2 threads, which shows whether the Redis round
//! trip serializes the signature checks (it does not: each thread has its
//! own pooled connection and no lock is held across the round trip).

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

fn token(key: &SigningKey) -> String {
    let n = JTI.fetch_add(1, Ordering::Relaxed);
    let claims = serde_json::json!({
        "iss": "https://as.example", "sub": "alice", "aud": "https://rs.example",
        "jti": format!("jti-{n}"), "exp": 4_000_000_000i64,
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
    drop(redis);
}

criterion_group!(benches, bench);
criterion_main!(benches);
