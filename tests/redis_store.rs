//! The Redis replay store against a real `redis-server` started
//! by the test on a loopback port: two verifier processes racing the same
//! token (exactly one accepts), TTLs, fail closed when Redis is stopped,
//! and state kept across a restart (AOF).
//!
//! Skips with a message when `redis-server` is not installed, unless
//! `AGENTSIG_REQUIRE_INTEROP=1` (CI), which makes a missing server a failure.

use agentsig::replay::{open_store, RedisReplayStore, ReplayError, ReplayStore, Sighting};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

mod redis_support;
use redis_support::{
    primary_and_replica, redis_server, sentinel_with_replica, tmp, Cluster, Server,
};
use std::sync::Arc;

const BIN: &str = env!("CARGO_BIN_EXE_agentsig");
const N: i64 = 1_760_000_000;
const AS: &str = "https://as.example.com";
const AUD: &str = "https://calendar.example.com";

fn run(d: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(d)
        .args(args)
        .output()
        .unwrap()
}

fn mint(d: &Path, file: &str, jti: &str) {
    let o = run(
        d,
        &[
            "delegation",
            "mint",
            "--signing-key",
            "as.pem",
            "--iss",
            AS,
            "--sub",
            "user@example.com",
            "--aud",
            AUD,
            "--scope",
            "calendar:read",
            "--jti",
            jti,
            "--now",
            &N.to_string(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(d.join(file), o.stdout).unwrap();
}

fn audit_cmd(d: &Path, token: &str, store: &str) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(d).args([
        "delegation",
        "audit",
        token,
        "--replay-store",
        store,
        "--jwks",
        "as.jwks.json",
        "--issuer",
        AS,
        "--audience",
        AUD,
        "--now",
        &(N + 10).to_string(),
        "--json",
    ]);
    c
}

fn setup(name: &str) -> PathBuf {
    let d = tmp(name);
    assert!(run(&d, &["keygen", "--out", "as"]).status.success());
    d
}

/// Two `delegation audit` processes race each of five tokens on the store
/// at `url`: exactly one accepts each.
fn cli_race(url: &str, name: &str) {
    let d = setup(name);
    for round in 0..5 {
        let file = format!("t{round}");
        mint(&d, &file, &format!("race-{round}"));
        let children: Vec<Child> = (0..2)
            .map(|_| {
                audit_cmd(&d, &file, url)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outs: Vec<Output> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let codes: Vec<Option<i32>> = outs.iter().map(|o| o.status.code()).collect();
        assert!(
            codes == [Some(0), Some(1)] || codes == [Some(1), Some(0)],
            "round {round}: {codes:?}"
        );
        let loser = outs.iter().find(|o| o.status.code() == Some(1)).unwrap();
        assert!(
            String::from_utf8_lossy(&loser.stdout).contains("jwt.jti-replay"),
            "{}",
            String::from_utf8_lossy(&loser.stdout)
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn two_processes_racing_one_token_exactly_one_accepts() {
    let Some(server) = Server::start("race") else {
        return;
    };
    cli_race(&server.url(), "race-cli");
    // The recorded keys are hashed and carry the token's lifetime:
    // exp (N + 3600) + skew (60) - now (N + 10).
    let keys = server.cli(&["--scan", "--pattern", "agentsig:replay:*"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert_eq!(keys.len(), 5, "{keys:?}");
    for k in &keys {
        assert_eq!(k.len(), "agentsig:replay:".len() + 64);
        let ttl: i64 = server.cli(&["TTL", k]).trim().parse().unwrap();
        assert!(ttl > 3600 && ttl <= 3650, "{k}: ttl {ttl}");
    }
}

#[test]
fn threads_racing_one_id_exactly_one_first() {
    let Some(server) = Server::start("threads") else {
        return;
    };
    threads_race(&server.url());
}

/// Eight threads race each of 20 ids, half through the single check and
/// half in a batch: exactly one first sighting per id.
fn threads_race(url: &str) {
    let store: Arc<dyn ReplayStore> = open_store(url, N).unwrap();
    for round in 0..20 {
        let id = format!("id-{round}");
        let firsts: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|i| {
                    let store = &store;
                    let id = &id;
                    s.spawn(move || {
                        // Half single, half batch: both paths share the key.
                        let r = if i % 2 == 0 {
                            store.check_and_record("iss", id, N + 100, N)
                        } else {
                            store.check_and_record_all(
                                &[("iss", id, N + 100), ("other", id, N + 100)],
                                N,
                            )
                        };
                        usize::from(r.unwrap() == Sighting::First)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(firsts, 1, "round {round}");
    }
}

#[test]
fn batches_are_all_or_nothing_on_redis() {
    let Some(server) = Server::start("batch") else {
        return;
    };
    batches_all_or_nothing(&server.url());
}

/// A batch is recorded whole or not at all; expired entries are checked,
/// not stored; hostile ids become fixed-size keys.
fn batches_all_or_nothing(url: &str) {
    let s = RedisReplayStore::open(url).unwrap();
    assert_eq!(
        s.check_and_record("i", "b", N + 100, N),
        Ok(Sighting::First)
    );
    // "a" is not recorded by the refused batch.
    assert_eq!(
        s.check_and_record_all(&[("i", "a", N + 100), ("i", "b", N + 100)], N),
        Ok(Sighting::Replay)
    );
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::First)
    );
    // A batch naming one id twice is a replay of itself, and records nothing.
    assert_eq!(
        s.check_and_record_all(&[("i", "c", N + 100), ("i", "c", N + 100)], N),
        Ok(Sighting::Replay)
    );
    assert_eq!(
        s.check_and_record_all(&[("i", "c", N + 100), ("i", "d", N + 100)], N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record("i", "d", N + 100, N),
        Ok(Sighting::Replay)
    );
    // An entry already expired at `now` is checked but not stored.
    assert_eq!(
        s.check_and_record("i", "old", N - 1, N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record("i", "old", N + 100, N),
        Ok(Sighting::First)
    );
    // Hostile ids: long, with CR LF and RESP syntax, become fixed-size keys.
    let hostile = "x\r\n*3\r\n$3\r\nDEL\r\n".repeat(60);
    assert_eq!(
        s.check_and_record("i", &hostile, N + 100, N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record("i", &hostile, N + 100, N),
        Ok(Sighting::Replay)
    );
    assert_eq!(
        s.check_and_record("i", &"y".repeat(2000), N + 100, N),
        Err(ReplayError::IdTooLong)
    );
}

#[test]
fn entries_expire_with_their_ttl() {
    let Some(server) = Server::start("ttl") else {
        return;
    };
    let s = RedisReplayStore::open(&server.url()).unwrap();
    let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
    // Kept until `until` (1 s from the caller's now): a replay meanwhile...
    assert_eq!(
        s.check_and_record("i", "short", now + 1, now),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record("i", "long", now + 500, now),
        Ok(Sighting::First)
    );
    let keys = server.cli(&["--scan", "--pattern", "agentsig:replay:*"]);
    let ttls: Vec<i64> = keys
        .lines()
        .map(|k| server.cli(&["TTL", k]).trim().parse().unwrap())
        .collect();
    assert_eq!(ttls.len(), 2);
    assert!(ttls.iter().all(|t| *t > 0 && *t <= 500), "{ttls:?}");
    // ...and new again once Redis expired it; the long one stays.
    let mut expired = false;
    for _ in 0..100 {
        if s.check_and_record("i", "short", now + 1000, now) == Ok(Sighting::First) {
            expired = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(expired, "the 1 s entry never expired");
    assert_eq!(
        s.check_and_record("i", "long", now + 500, now),
        Ok(Sighting::Replay)
    );
}

#[test]
fn stopped_redis_fails_closed_and_restart_keeps_state() {
    let Some(mut server) = Server::start("stop") else {
        return;
    };
    let d = setup("stop-cli");
    mint(&d, "a", "jti-a");
    mint(&d, "b", "jti-b");
    let url = server.url();
    assert_eq!(
        audit_cmd(&d, "a", &url).output().unwrap().status.code(),
        Some(0)
    );

    // Library: a store holding pooled connections, then Redis stops.
    let lib = RedisReplayStore::open(&url).unwrap();
    assert_eq!(
        lib.check_and_record("i", "x", N + 100, N),
        Ok(Sighting::First)
    );
    // A batch loads the script (EVALSHA, then EVAL after NOSCRIPT).
    assert_eq!(
        lib.check_and_record_all(&[("i", "b1", N + 100), ("i", "b2", N + 100)], N),
        Ok(Sighting::First)
    );
    server.stop();

    let o = audit_cmd(&d, "b", &url).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("jwt.replay-store"), "{out}");
    assert!(out.contains("unavailable"), "{out}");
    for (id, r) in [
        ("y", lib.check_and_record("i", "y", N + 100, N)),
        (
            "batch",
            lib.check_and_record_all(&[("i", "y", N + 100), ("i", "z", N + 100)], N),
        ),
    ] {
        assert!(matches!(r, Err(ReplayError::Unavailable(_))), "{id}: {r:?}");
    }
    // The verifier refuses a JWT with the store's own error.
    let key = agentsig::SigningKey::generate(agentsig::Algorithm::EcdsaP256Sha256).unwrap();
    // An exp within the replay window (a later one is refused outright:
    // its entry would expire while the token is still acceptable).
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + 3600;
    let claims = serde_json::json!({"iss": AS, "sub": "u", "jti": "j", "exp": exp});
    let token = agentsig::jwt::sign(claims.as_object().unwrap(), &key, "JWT").unwrap();
    let v = agentsig::verifier::Verifier::builder(agentsig::trust::StaticKeys::new().with(
        key.verifying_key().clone(),
        agentsig::trust::KeySource::Pinned,
    ))
    .replay_store(Arc::new(RedisReplayStore::open(&url).unwrap()))
    .build();
    let e = v.verify_jwt(&token).unwrap_err();
    assert_eq!(e.code(), "jwt.replay-store", "{e}");

    // Restart on the same data directory: what was recorded is still there,
    // what was refused while down was never recorded. The library store
    // reconnects by itself (its pooled connections died with the server).
    server.restart();
    let o = audit_cmd(&d, "a", &url).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("jwt.jti-replay"), "{out}");
    assert_eq!(
        audit_cmd(&d, "b", &url).output().unwrap().status.code(),
        Some(0)
    );
    assert_eq!(
        lib.check_and_record("i", "x", N + 100, N),
        Ok(Sighting::Replay)
    );
    assert_eq!(
        lib.check_and_record("i", "y", N + 100, N),
        Ok(Sighting::First)
    );
    // The restarted server forgot the script, not the batch's keys.
    assert_eq!(
        lib.check_and_record_all(&[("i", "b3", N + 100), ("i", "b2", N + 100)], N),
        Ok(Sighting::Replay)
    );
    assert_eq!(
        lib.check_and_record_all(&[("i", "b3", N + 100), ("i", "b4", N + 100)], N),
        Ok(Sighting::First)
    );
    let r = v.verify_jwt(&token);
    assert!(r.is_ok(), "{:?}", r.err());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn unreachable_redis_is_refused_not_accepted() {
    // A port nothing listens on: the first check fails closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let s = open_store(&format!("redis://127.0.0.1:{port}"), N).unwrap();
    let r = s.check_and_record("i", "j", N + 10, N);
    assert!(matches!(r, Err(ReplayError::Unavailable(_))), "{r:?}");
}

/// Eight replicas see one identity first with eight different keys at once
/// on the pin store at `url`: exactly one pins (returned: the keys, their
/// thumbprints and the winner's index).
fn pins_first_seen_race(url: &str) -> (Vec<agentsig::SigningKey>, Vec<String>, usize) {
    use agentsig::pin::{open_pin_store, PinOutcome, Pins};
    let keys: Vec<agentsig::SigningKey> = (0..8)
        .map(|_| agentsig::SigningKey::generate(agentsig::Algorithm::Ed25519).unwrap())
        .collect();
    let tps: Vec<String> = keys
        .iter()
        .map(|k| k.verifying_key().thumbprint())
        .collect();
    // Eight replicas see "agent" first with eight different keys at once:
    // exactly one pins, the other seven report a change to that one key.
    let outcomes: Vec<PinOutcome> = std::thread::scope(|s| {
        let hs: Vec<_> = tps
            .iter()
            .map(|t| {
                let url = url.to_owned();
                s.spawn(move || {
                    let pins = Pins::new(open_pin_store(&url).unwrap());
                    pins.check("https://agent.example/a", t).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first: Vec<usize> = (0..8)
        .filter(|i| outcomes[*i] == PinOutcome::FirstSeen)
        .collect();
    assert_eq!(first.len(), 1, "{outcomes:?}");
    let winner = first[0];
    for o in &outcomes {
        assert!(
            *o == PinOutcome::FirstSeen
                || *o
                    == PinOutcome::Changed {
                        pinned: vec![tps[winner].clone()]
                    },
            "{o:?}"
        );
    }
    (keys, tps, winner)
}

#[test]
fn pins_on_redis_are_shared_and_first_seen_is_atomic() {
    use agentsig::announce::sign_announcement;
    use agentsig::pin::{open_pin_store, PinOutcome, Pins};
    let Some(mut server) = Server::start("pins") else {
        return;
    };
    let (keys, tps, winner) = pins_first_seen_race(&server.url());
    let first = [winner];
    let winner = &tps[winner];
    // Another replica accepts an announcement signed by the pinned key;
    // the pins survive a restart.
    let other = (first[0] + 1) % 8;
    let pins = Pins::new(open_pin_store(&server.url()).unwrap());
    let (p, j) = sign_announcement(
        "https://agent.example/a",
        &[&tps[other]],
        N,
        &keys[first[0]],
    )
    .unwrap();
    let cands: Vec<agentsig::VerifyingKey> =
        keys.iter().map(|k| k.verifying_key().clone()).collect();
    assert_eq!(
        pins.accept_announcement("https://agent.example/a", &p, &j, &cands, N, 60),
        Ok(vec![winner.clone(), tps[other].clone()])
    );
    server.stop();
    assert!(matches!(
        pins.check("https://agent.example/a", &tps[other]),
        Err(agentsig::pin::PinError::Store(_))
    ));
    server.restart();
    assert_eq!(
        pins.check("https://agent.example/a", &tps[other]),
        Ok(PinOutcome::Match)
    );
    pins.store()
        .replace("https://agent.example/a", &[&tps[other]])
        .unwrap();
    assert_eq!(
        pins.store().list().unwrap(),
        vec![(
            "https://agent.example/a".to_owned(),
            vec![tps[other].clone()]
        )]
    );
}

#[test]
fn http_nonce_racing_two_processes_exactly_one_accepts() {
    let Some(server) = Server::start("nonce") else {
        return;
    };
    http_nonce_race(&server.url(), "nonce-cli");
}

/// Two `http verify` processes race each of three signed requests (RFC 9421
/// nonces) on the store at `url`: exactly one accepts each.
fn http_nonce_race(url: &str, name: &str) {
    let d = tmp(name);
    let root = env!("CARGO_MANIFEST_DIR");
    let signed = d.join("signed.http");
    for round in 0..3 {
        let o = Command::new(BIN)
            .args(["http", "sign"])
            .arg(format!(
                "{root}/tests/vectors/rfc9421/messages/test-request.http"
            ))
            .arg("--key")
            .arg(format!("{root}/keys/rfc9421/test-key-ecc-p256.pem"))
            .args(["--nonce", &format!("nonce-{round}"), "--expires-in", "300"])
            .arg("--out")
            .arg(&signed)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let verify = || {
            Command::new(BIN)
                .args(["http", "verify"])
                .arg(&signed)
                .arg("--key")
                .arg(format!("{root}/keys/rfc9421/test-key-ecc-p256.pub.pem"))
                .args(["--authority", "example.com"])
                .args(["--replay-store", url, "--json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (verify(), verify());
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        let codes: Vec<Option<i32>> = outs.iter().map(|o| o.status.code()).collect();
        assert!(
            codes == [Some(0), Some(1)] || codes == [Some(1), Some(0)],
            "round {round}: {codes:?} {}",
            String::from_utf8_lossy(&outs[0].stdout)
        );
        let loser = outs.iter().find(|o| o.status.code() == Some(1)).unwrap();
        assert!(
            String::from_utf8_lossy(&loser.stdout).contains("replay"),
            "{}",
            String::from_utf8_lossy(&loser.stdout)
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn verify_with_a_redis_pin_store_shares_pins_and_fails_closed() {
    let Some(mut server) = Server::start("pin-cli") else {
        return;
    };
    let d = setup("pin-cli-run");
    assert!(run(&d, &["keygen", "--out", "b"]).status.success());
    std::fs::write(
        d.join("agent.json"),
        r#"{"id":"https://agents.example/planner","version":"1"}"#,
    )
    .unwrap();
    let url = server.url();
    let verify = |jwks: &str| -> (Option<i32>, String) {
        let o = run(
            &d,
            &[
                "verify",
                "agent.json",
                "--jwks",
                jwks,
                "--pin-store",
                &url,
                "--json",
            ],
        );
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    assert!(run(&d, &["sign", "agent.json", "--key", "as.pem"])
        .status
        .success());
    let (c, out) = verify("as.jwks.json");
    assert_eq!(c, Some(0), "{out}");
    assert!(out.contains("pin.first-seen"), "{out}");
    // Another process (replica) sees the same pin.
    assert!(run(&d, &["sign", "agent.json", "--key", "b.pem"])
        .status
        .success());
    let (c, out) = verify("b.jwks.json");
    assert_eq!(c, Some(1), "{out}");
    assert!(out.contains("pin.key-changed"), "{out}");
    // Redis down: the pin cannot be checked, the verify fails closed.
    server.stop();
    let (c, out) = verify("b.jwks.json");
    assert_eq!(c, Some(1), "{out}");
    assert!(out.contains("pin.store"), "{out}");
    server.restart();
    let (c, out) = verify("b.jwks.json");
    assert_eq!(c, Some(1), "{out}");
    assert!(out.contains("pin.key-changed"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn password_protected_redis_needs_the_password() {
    let Some(server) = Server::start_with("auth", Some("s3cr%t p@ss")) else {
        return;
    };
    // The password is percent-encoded in the URL.
    let good = format!("redis://:s3cr%25t%20p%40ss@127.0.0.1:{}/2", server.port);
    let s = open_store(&good, N).unwrap();
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::Replay)
    );
    // Database 2 was selected: database 0 holds nothing.
    assert_eq!(server.cli(&["-n", "0", "DBSIZE"]).trim(), "0");
    assert_eq!(server.cli(&["-n", "2", "DBSIZE"]).trim(), "1");
    // No password or a wrong one: refused, and the message never shows it.
    for url in [
        format!("redis://127.0.0.1:{}/2", server.port),
        format!("redis://:wrong@127.0.0.1:{}/2", server.port),
    ] {
        let s = open_store(&url, N).unwrap();
        let r = s.check_and_record("i", "b", N + 100, N);
        let Err(ReplayError::Unavailable(m)) = &r else {
            panic!("{url}: {r:?}");
        };
        assert!(!m.contains("wrong") && !m.contains("s3cr"), "{m}");
        assert!(!format!("{s:?}").contains("wrong"));
    }
}

/// No replay entry is stored without expiry: a nonce whose signature has
/// neither `expires` nor a maximum age (`until` = i64::MAX) is kept
/// `MAX_REPLAY_TTL_SECS`, not forever.
#[test]
fn entries_without_expiry_get_the_capped_ttl() {
    use agentsig::replay::MAX_REPLAY_TTL_SECS;
    let Some(server) = Server::start("forever") else {
        return;
    };
    let s = RedisReplayStore::open(&server.url()).unwrap();
    let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
    assert_eq!(
        s.check_and_record("httpsig:k", "n1", i64::MAX, now),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record_all(&[("jwt:i", "a", i64::MAX), ("jwt:i", "b", now + 10)], now),
        Ok(Sighting::First)
    );
    let keys = server.cli(&["--scan", "--pattern", "agentsig:replay:*"]);
    let ttls: Vec<i64> = keys
        .lines()
        .map(|k| server.cli(&["TTL", k]).trim().parse().unwrap())
        .collect();
    assert_eq!(ttls.len(), 3);
    assert!(
        ttls.iter().all(|t| *t > 0 && *t <= MAX_REPLAY_TTL_SECS),
        "{ttls:?}"
    );
    assert_eq!(
        ttls.iter()
            .filter(|t| **t > MAX_REPLAY_TTL_SECS - 60)
            .count(),
        2,
        "{ttls:?}"
    );
}

/// Memory, file and Redis stores agree on what is one entry: a NUL inside
/// a scope or id does not join two pairs, and a JWT issuer never shares a
/// namespace with an RFC 9421 key id (`jwt:` / `httpsig:` scope tags).
#[test]
fn stores_agree_on_nul_and_scope_kinds() {
    let Some(server) = Server::start("agree") else {
        return;
    };
    let d = tmp("agree");
    let now = N;
    let stores: Vec<(&str, Arc<dyn ReplayStore>)> = vec![
        ("memory", open_store("memory:", now).unwrap()),
        (
            "file",
            open_store(d.join("seen.jsonl").to_str().unwrap(), now).unwrap(),
        ),
        ("redis", open_store(&server.url(), now).unwrap()),
    ];
    for (name, s) in &stores {
        assert_eq!(
            s.check_and_record("a\0b", "c", now + 100, now),
            Ok(Sighting::First),
            "{name}"
        );
        assert_eq!(
            s.check_and_record("a", "b\0c", now + 100, now),
            Ok(Sighting::First),
            "{name}: a NUL moved the boundary between scope and id"
        );
        assert_eq!(
            s.check_and_record("a", "b\0c", now + 100, now),
            Ok(Sighting::Replay),
            "{name}"
        );
        // A JWT whose iss is "httpsig:k" and jti "n", then an RFC 9421
        // nonce "n" under keyid "k": two different entries.
        assert!(agentsig::jwt::check_replay(&**s, &[("httpsig:k", "n", now + 100)], now).is_ok());
        assert_eq!(
            s.check_and_record(
                &format!("{}k", agentsig::replay::HTTPSIG_SCOPE),
                "n",
                now + 100,
                now
            ),
            Ok(Sighting::First),
            "{name}: a JWT issuer shared the RFC 9421 key id namespace"
        );
        assert!(
            agentsig::jwt::check_replay(&**s, &[("httpsig:k", "n", now + 100)], now).is_err(),
            "{name}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// An id recorded under the key an earlier release wrote (SHA-256 of the
/// scope, a NUL and the id; the JWT scope was the bare `iss`) is still a
/// replay, alone or in a batch, and nothing is written under a legacy key.
#[test]
fn ids_recorded_by_an_earlier_release_stay_replays() {
    use sha2::{Digest, Sha256};
    let Some(server) = Server::start("legacy") else {
        return;
    };
    let legacy = |scope: &str, id: &str| {
        let h = Sha256::digest(format!("{scope}\0{id}").as_bytes());
        let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
        format!("agentsig:replay:{hex}")
    };
    assert_eq!(
        server
            .cli(&["SET", &legacy(AS, "old-jti"), "1", "EX", "600"])
            .trim(),
        "OK"
    );
    assert_eq!(
        server
            .cli(&["SET", &legacy("httpsig:k1", "old-nonce"), "1", "EX", "600"])
            .trim(),
        "OK"
    );
    let s = open_store(&server.url(), N).unwrap();
    assert!(agentsig::jwt::check_replay(&*s, &[(AS, "old-jti", N + 100)], N).is_err());
    assert!(agentsig::jwt::check_replay(
        &*s,
        &[(AS, "new-jti", N + 100), (AS, "old-jti", N + 100)],
        N
    )
    .is_err());
    assert_eq!(
        s.check_and_record("httpsig:k1", "old-nonce", N + 100, N),
        Ok(Sighting::Replay)
    );
    // Already expired entries are checked only: still a replay.
    assert_eq!(
        s.check_and_record("httpsig:k1", "old-nonce", N - 1, N),
        Ok(Sighting::Replay)
    );
    // A refused batch records none of its entries; a fresh id is recorded
    // under the current key only.
    assert!(agentsig::jwt::check_replay(&*s, &[(AS, "new-jti", N + 100)], N).is_ok());
    assert!(agentsig::jwt::check_replay(&*s, &[(AS, "new-jti", N + 100)], N).is_err());
    assert_eq!(server.cli(&["EXISTS", &legacy(AS, "new-jti")]).trim(), "0");
    // The two legacy keys, new-jti, and the current keys of the two ids
    // checked alone (one SET NX pipelined with the legacy EXISTS records the
    // id even when the legacy key makes it a replay; it is one either way).
    assert_eq!(server.cli(&["DBSIZE"]).trim(), "5");
}

/// The Redis pin store holds at most `MAX_IDENTITIES` identities, as the
/// memory and file stores do: a new identity past the cap is refused
/// (check, add and rotate alike), known identities keep working.
#[test]
fn redis_pin_store_caps_identities() {
    use agentsig::pin::{open_pin_store, PinError, PinOutcome, MAX_IDENTITIES};
    let Some(server) = Server::start("pincap") else {
        return;
    };
    let tp = agentsig::SigningKey::generate(agentsig::Algorithm::Ed25519)
        .unwrap()
        .verifying_key()
        .thumbprint();
    // Fill the hash to the cap in one server-side loop.
    let fill = server.cli(&[
        "EVAL",
        "for i = 1, tonumber(ARGV[1]) do redis.call('HSET', KEYS[1], 'id' .. i, ARGV[2]) end return redis.call('HLEN', KEYS[1])",
        "1",
        "agentsig:pins",
        &MAX_IDENTITIES.to_string(),
        &tp,
    ]);
    assert_eq!(fill.trim(), MAX_IDENTITIES.to_string());
    let store = open_pin_store(&server.url()).unwrap();
    assert!(matches!(
        store.check_and_pin("https://new.example/a", &tp),
        Err(PinError::TooMany)
    ));
    assert!(matches!(
        store.add("https://new.example/a", &[&tp]),
        Err(PinError::TooMany)
    ));
    assert!(matches!(
        store.replace("https://new.example/a", &[&tp]),
        Err(PinError::TooMany)
    ));
    assert_eq!(
        server.cli(&["HLEN", "agentsig:pins"]).trim(),
        MAX_IDENTITIES.to_string()
    );
    // A known identity is not new: it still checks and rotates.
    assert_eq!(store.check_and_pin("id1", &tp).unwrap(), PinOutcome::Match);
    store.replace("id1", &[&tp]).unwrap();
    assert_eq!(store.add("id1", &[&tp]).unwrap(), vec![tp.clone()]);
}

/// An ACL user (`redis://user:password@`) holding only the commands the
/// module documentation of `replay::redis` lists runs both stores; a wrong
/// password, an unknown user and a user without those commands are
/// refused (fail closed), and no message shows the password.
/// The keys and commands the stores need (docs/fleet.md).
const FLEET_ACL: &[&str] = &[
    "~agentsig:*",
    "+ping",
    "+set",
    "+exists",
    "+evalsha",
    "+script|load",
    "+hget",
    "+hgetall",
    "+hdel",
    "+hset",
    "+hlen",
    "+hexists",
];

#[test]
fn acl_user_with_the_documented_commands_runs_both_stores() {
    use agentsig::pin::{open_pin_store, PinError, PinOutcome};
    let Some(server) = Server::start_with("acl", Some("admin-pw")) else {
        return;
    };
    let ok = server.cli(&[&["ACL", "SETUSER", "fleet", "on", ">fl%et pw"], FLEET_ACL].concat());
    assert_eq!(ok.trim(), "OK");
    assert_eq!(
        server
            .cli(&["ACL", "SETUSER", "pingonly", "on", ">pw", "~*", "+ping"])
            .trim(),
        "OK"
    );
    let port = server.port;
    let url = format!("redis://fleet:fl%25et%20pw@127.0.0.1:{port}/0");
    let s = open_store(&url, N).unwrap();
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::Replay)
    );
    // The batch script is loaded (SCRIPT LOAD) and run (EVALSHA).
    assert_eq!(
        s.check_and_record_all(&[("i", "b", N + 100), ("i", "c", N - 1)], N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record_all(&[("i", "d", N + 100), ("i", "b", N + 100)], N),
        Ok(Sighting::Replay)
    );
    let tp = agentsig::SigningKey::generate(agentsig::Algorithm::Ed25519)
        .unwrap()
        .verifying_key()
        .thumbprint();
    let pins = open_pin_store(&url).unwrap();
    assert_eq!(
        pins.check_and_pin("https://agent.example/a", &tp),
        Ok(PinOutcome::FirstSeen)
    );
    assert_eq!(
        pins.add("https://agent.example/a", &[&tp]),
        Ok(vec![tp.clone()])
    );
    assert_eq!(pins.get("https://agent.example/a"), Ok(vec![tp.clone()]));
    assert_eq!(pins.list().unwrap().len(), 1);
    // Written by the ACL user under agentsig:*: two replay keys ("c" was
    // already expired, so only checked) and the pin hash.
    assert_eq!(server.cli(&["-n", "0", "DBSIZE"]).trim(), "3");
    pins.replace("https://agent.example/a", &[]).unwrap();
    assert_eq!(pins.get("https://agent.example/a"), Ok(vec![]));

    for bad in [
        format!("redis://fleet:wrong-pw@127.0.0.1:{port}/0"),
        format!("redis://nobody:fl%25et%20pw@127.0.0.1:{port}/0"),
        format!("redis://pingonly:pw@127.0.0.1:{port}/0"),
    ] {
        let s = open_store(&bad, N).unwrap();
        let r = s.check_and_record("i", "e", N + 100, N);
        let Err(ReplayError::Unavailable(m)) = &r else {
            panic!("{bad}: {r:?}");
        };
        assert!(!m.contains("wrong-pw") && !m.contains("fl%et"), "{m}");
        let p = open_pin_store(&bad).unwrap();
        assert!(
            matches!(p.check_and_pin("x", &tp), Err(PinError::Store(_))),
            "{bad}"
        );
    }
    // The user without SET was refused by Redis itself (NOPERM).
    let r = open_store(&format!("redis://pingonly:pw@127.0.0.1:{port}/0"), N)
        .unwrap()
        .check_and_record("i", "e", N + 100, N);
    assert!(
        matches!(&r, Err(ReplayError::Unavailable(m)) if m.contains("NOPERM")),
        "{r:?}"
    );
}

/// `redis-server --tls-port` with a server certificate for `localhost`
/// issued by a test CA, killed on drop. `None` when redis-server is
/// missing (see [`redis_server`]) or built without TLS.
struct TlsServer {
    child: Child,
    dir: PathBuf,
    port: u16,
    ca_pem: Vec<u8>,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl TlsServer {
    fn start(name: &str) -> Option<TlsServer> {
        let bin = redis_server()?;
        let dir = tmp(name);
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.distinguished_name
            .push(rcgen::DnType::CommonName, "agentsig redis test CA");
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = p.self_signed(&ca_key).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .signed_by(&key, &ca, &ca_key)
            .unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.join("server.pem"), cert.pem()).unwrap();
        std::fs::write(dir.join("server.key"), key.serialize_pem()).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(&bin)
            .args(["--port", "0", "--tls-port", &port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--tls-cert-file")
            .arg(dir.join("server.pem"))
            .arg("--tls-key-file")
            .arg(dir.join("server.key"))
            .arg("--tls-ca-cert-file")
            .arg(dir.join("ca.pem"))
            .args(["--tls-auth-clients", "no", "--dir"])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let s = TlsServer {
            child,
            dir,
            port,
            ca_pem: ca.pem().into_bytes(),
        };
        let probe = RedisReplayStore::with_config(s.config("localhost"));
        for _ in 0..200 {
            if probe.ping().is_ok() {
                return Some(s);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let mut s = s;
        if let Ok(Some(status)) = s.child.try_wait() {
            // Exited at once: a redis-server built without TLS.
            if std::env::var("AGENTSIG_REQUIRE_INTEROP").as_deref() == Ok("1") {
                panic!("redis-server exited ({status}): built without TLS?");
            }
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: redis-server exited ({status}): built without TLS?"
            );
            return None;
        }
        panic!("redis-server with TLS on port {port} did not answer");
    }

    /// `rediss://HOST:PORT/0` trusting the test CA.
    fn config(&self, host: &str) -> agentsig::replay::RedisConfig {
        agentsig::replay::RedisConfig::from_url(&format!("rediss://{host}:{}/0", self.port))
            .unwrap()
            .with_root_ca_pem(self.ca_pem.clone())
    }
}

/// `rediss://`: the replay and pin stores work over TLS with the server
/// certificate checked; an untrusted issuer, a host name the certificate
/// does not name, and plain RESP to a TLS port are refused (fail closed).
#[test]
fn rediss_checks_the_server_certificate() {
    use agentsig::pin::{PinOutcome, PinStore, RedisPinStore};
    let Some(server) = TlsServer::start("tls") else {
        return;
    };
    let s = RedisReplayStore::with_config(server.config("localhost"));
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::Replay)
    );
    assert_eq!(
        s.check_and_record_all(&[("i", "b", N + 100), ("i", "c", N + 100)], N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record_all(&[("i", "c", N + 100), ("i", "d", N + 100)], N),
        Ok(Sighting::Replay)
    );
    let pins = RedisPinStore::with_config(server.config("localhost"));
    assert_eq!(
        pins.check_and_pin("https://agent.example/a", "tp1"),
        Ok(PinOutcome::FirstSeen)
    );
    assert_eq!(
        pins.check_and_pin("https://agent.example/a", "tp1"),
        Ok(PinOutcome::Match)
    );

    let port = server.port;
    for (why, expect, store) in [
        // webpki-roots do not hold the test CA.
        (
            "untrusted issuer",
            "UnknownIssuer",
            RedisReplayStore::open(&format!("rediss://localhost:{port}/0")).unwrap(),
        ),
        // The certificate names localhost, not 127.0.0.1.
        (
            "host name",
            "not valid for name",
            RedisReplayStore::with_config(server.config("127.0.0.1")),
        ),
        (
            "plain RESP to the TLS port",
            "",
            RedisReplayStore::open(&format!("redis://localhost:{port}/0")).unwrap(),
        ),
    ] {
        let r = store.check_and_record("i", "e", N + 100, N);
        assert!(
            matches!(&r, Err(ReplayError::Unavailable(m)) if m.contains(expect)),
            "{why}: {r:?}"
        );
    }
    // Nothing was recorded by the refused attempts.
    assert_eq!(
        s.check_and_record("i", "e", N + 100, N),
        Ok(Sighting::First)
    );
}

/// The CLI takes `rediss://` too and fails closed on a certificate it
/// cannot trust (the URL form trusts webpki-roots, not the test CA): the
/// audit refuses with the store's error, it never skips the replay check.
#[test]
fn cli_rediss_with_an_untrusted_certificate_refuses() {
    let Some(server) = TlsServer::start("tls-cli") else {
        return;
    };
    let d = setup("tls-cli-run");
    mint(&d, "t", "jti-tls");
    let o = audit_cmd(&d, "t", &format!("rediss://localhost:{}/0", server.port))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("jwt.replay-store"), "{out}");
    assert!(out.contains("UnknownIssuer"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

// Redis Cluster and Sentinel: real servers on loopback, started here.

/// `redis-cli`, which creates the cluster (`--cluster create`); `None`
/// (with a printed skip) when it or `redis-server` is missing, unless
/// `AGENTSIG_REQUIRE_INTEROP=1`.
#[test]
fn cluster_runs_the_race_and_batch_tests() {
    let Some(c) = Cluster::start("cl-race") else {
        return;
    };
    let url = c.url("");
    threads_race(&url);
    batches_all_or_nothing(&url);
    cli_race(&url, "cl-race-cli");
    http_nonce_race(&url, "cl-nonce-cli");
    // Pins: one hash, one slot, the scripts run there.
    pins_first_seen_race(&url);
}

#[test]
fn cluster_accepts_each_nonce_once_and_every_primary_holds_some() {
    let Some(c) = Cluster::start("cl-spread") else {
        return;
    };
    // Seeded with one node only: the client learns the others from it.
    let one = format!("redis+cluster://127.0.0.1:{}", c.nodes[0].port);
    let a = RedisReplayStore::open(&one).unwrap();
    let b = RedisReplayStore::open(&c.url("")).unwrap();
    for i in 0..300 {
        let id = format!("nonce-{i}");
        assert_eq!(
            a.check_and_record("httpsig:k", &id, N + 100, N),
            Ok(Sighting::First),
            "{id}"
        );
    }
    // Another verifier (another client) sees every one as a replay, alone
    // and in batches that span slots.
    for i in 0..300 {
        let id = format!("nonce-{i}");
        assert_eq!(
            b.check_and_record("httpsig:k", &id, N + 100, N),
            Ok(Sighting::Replay),
            "{id}"
        );
    }
    for i in (0..300).step_by(3) {
        let ids = [
            format!("nonce-{i}"),
            format!("new-{i}-a"),
            format!("new-{i}-b"),
        ];
        let batch: Vec<(&str, &str, i64)> = ids
            .iter()
            .map(|id| ("httpsig:k", id.as_str(), N + 100))
            .collect();
        assert_eq!(b.check_and_record_all(&batch, N), Ok(Sighting::Replay));
    }
    // The refused batches rolled back what they set: the new ids are new.
    for i in (0..300).step_by(3) {
        let ids = [format!("new-{i}-a"), format!("new-{i}-b")];
        let batch: Vec<(&str, &str, i64)> = ids
            .iter()
            .map(|id| ("httpsig:k", id.as_str(), N + 100))
            .collect();
        assert_eq!(b.check_and_record_all(&batch, N), Ok(Sighting::First));
        assert_eq!(a.check_and_record_all(&batch, N), Ok(Sighting::Replay));
    }
    // 300 + 200 keys over three primaries: each holds some.
    let per_node = c.replay_keys();
    assert_eq!(per_node.iter().sum::<usize>(), 500, "{per_node:?}");
    assert!(per_node.iter().all(|n| *n > 0), "{per_node:?}");
}

#[test]
fn cluster_primary_down_fails_closed_and_restart_keeps_state() {
    let Some(mut c) = Cluster::start("cl-stop") else {
        return;
    };
    let s = RedisReplayStore::open(&c.url("")).unwrap();
    let ids: Vec<String> = (0..60).map(|i| format!("before-{i}")).collect();
    for id in &ids {
        assert_eq!(s.check_and_record("i", id, N + 100, N), Ok(Sighting::First));
    }
    c.nodes[1].stop();
    // Recorded ids are never first while a primary is down: a replay
    // where their slot's primary answers, refused where it does not (or
    // where the cluster has marked itself down).
    let mut refused = 0;
    for id in &ids {
        match s.check_and_record("i", id, N + 100, N) {
            Ok(Sighting::Replay) => {}
            Err(ReplayError::Unavailable(_)) => refused += 1,
            r => panic!("{id}: {r:?}"),
        }
    }
    assert!(refused > 0, "no id lived on the stopped primary");
    // The CLI refuses a token it cannot record (exit 1, jwt.replay-store),
    // whichever slot its jti hashes to.
    let d = setup("cl-stop-cli");
    let mut cli_refused = 0;
    for i in 0..6 {
        let file = format!("t{i}");
        mint(&d, &file, &format!("down-{i}"));
        let o = audit_cmd(&d, &file, &c.url("")).output().unwrap();
        match o.status.code() {
            Some(0) => {}
            Some(1) => {
                assert!(
                    String::from_utf8_lossy(&o.stdout).contains("jwt.replay-store"),
                    "{}",
                    String::from_utf8_lossy(&o.stdout)
                );
                cli_refused += 1;
            }
            code => panic!("{code:?}"),
        }
    }
    assert!(cli_refused > 0);
    c.nodes[1].restart();
    c.wait_ok();
    // Its AOF kept the ids it held: every one is a replay again.
    for id in &ids {
        let mut r = s.check_and_record("i", id, N + 100, N);
        // The pooled cluster connection reconnects to the restarted node.
        for _ in 0..50 {
            if r.is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            r = s.check_and_record("i", id, N + 100, N);
        }
        assert_eq!(r, Ok(Sighting::Replay), "{id}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cluster_acknowledged_writes_without_replicas_are_refused() {
    let Some(c) = Cluster::start("cl-ack") else {
        return;
    };
    // No primary has a replica, so WAIT 1 (sent to each written key's
    // primary) can never be satisfied: refused, never accepted.
    let s = RedisReplayStore::open(&c.url("?wait=1&wait-timeout=100ms")).unwrap();
    for i in 0..10 {
        let r = s.check_and_record("i", &format!("id-{i}"), N + 100, N);
        let Err(ReplayError::Unavailable(m)) = &r else {
            panic!("{r:?}");
        };
        assert!(
            m.contains("not acknowledged") && m.contains("0 of the 1"),
            "{m}"
        );
    }
    let r = s.check_and_record_all(&[("i", "b1", N + 100), ("i", "b2", N + 100)], N);
    assert!(matches!(r, Err(ReplayError::Unavailable(_))), "{r:?}");
}

/// Offer fresh ids (`PREFIX-0`, `PREFIX-1`, ...) until `s` accepts one
/// (a readiness probe: at most 600 tries, 50 ms apart); each one before is
/// refused as unavailable, never taken for a replay.
fn accepts_a_fresh_id(s: &RedisReplayStore, prefix: &str) -> bool {
    for i in 0..600 {
        match s.check_and_record("i", &format!("{prefix}-{i}"), N + 1000, N) {
            Ok(Sighting::First) => return true,
            Err(ReplayError::Unavailable(_)) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            r => panic!("{prefix}-{i}: {r:?}"),
        }
    }
    false
}

#[test]
fn a_stopped_replica_makes_acknowledged_writes_refuse_and_a_resumed_one_accept() {
    let Some((primary, replica)) = primary_and_replica("ack-stop") else {
        return;
    };
    let url = format!("{}?wait=1&wait-timeout=300ms", primary.url());
    let s = RedisReplayStore::open(&url).unwrap();
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::First)
    );
    // The same through a batch script and a pin.
    assert_eq!(
        s.check_and_record_all(&[("i", "b", N + 100), ("i", "c", N + 100)], N),
        Ok(Sighting::First)
    );
    replica.signal("STOP");
    let r = s.check_and_record("i", "d", N + 100, N);
    let Err(ReplayError::Unavailable(m)) = &r else {
        panic!("accepted without the replica's acknowledgement: {r:?}");
    };
    assert!(m.contains("not acknowledged"), "{m}");
    let r = s.check_and_record_all(&[("i", "e", N + 100), ("i", "f", N + 100)], N);
    assert!(matches!(r, Err(ReplayError::Unavailable(_))), "{r:?}");
    let pins = agentsig::pin::open_pin_store(&url).unwrap();
    let r = pins.check_and_pin("https://agent.example/p", &"A".repeat(43));
    assert!(matches!(r, Err(agentsig::pin::PinError::Store(_))), "{r:?}");
    // The refused id stays recorded on the primary: a replay later, never
    // accepted twice.
    assert_eq!(
        s.check_and_record("i", "d", N + 100, N),
        Ok(Sighting::Replay)
    );
    replica.signal("CONT");
    assert!(
        accepts_a_fresh_id(&s, "g"),
        "the resumed replica never acknowledged"
    );
    assert_eq!(
        s.check_and_record_all(&[("i", "h", N + 100), ("i", "j", N + 100)], N),
        Ok(Sighting::First)
    );
    // Once acknowledged, the replica holds what the primary holds.
    assert_eq!(replica.cli(&["DBSIZE"]), primary.cli(&["DBSIZE"]));
}

#[test]
fn sentinel_failover_keeps_an_acknowledged_nonce_a_replay() {
    let Some((primary, replica, sentinel)) = sentinel_with_replica("sentinel") else {
        return;
    };
    let base = sentinel.url();
    let acked = RedisReplayStore::open(&format!("{base}?wait=1&wait-timeout=2s")).unwrap();
    let plain = RedisReplayStore::open(&base).unwrap();
    assert_eq!(
        acked.check_and_record("httpsig:k", "before", N + 1000, N),
        Ok(Sighting::First)
    );
    assert_eq!(
        plain.check_and_record("httpsig:k", "before", N + 1000, N),
        Ok(Sighting::Replay)
    );
    // The primary dies; the sentinel promotes the replica. Until then the
    // store refuses; it never takes a fresh id for a replay of one it
    // could not record.
    primary.signal("KILL");
    assert!(
        accepts_a_fresh_id(&plain, "probe"),
        "no primary after the failover"
    );
    assert_eq!(sentinel.primary_port(), replica.port.to_string());
    // The nonce acknowledged before the failover is a replay on the
    // promoted primary, through both stores.
    assert_eq!(
        acked.check_and_record("httpsig:k", "before", N + 1000, N),
        Ok(Sighting::Replay)
    );
    assert_eq!(
        plain.check_and_record("httpsig:k", "before", N + 1000, N),
        Ok(Sighting::Replay)
    );
    // The promoted primary has no replica left: an acknowledged write is
    // refused, not accepted unreplicated.
    let r = acked.check_and_record("httpsig:k", "after", N + 1000, N);
    let Err(ReplayError::Unavailable(m)) = &r else {
        panic!("{r:?}");
    };
    assert!(m.contains("not acknowledged"), "{m}");
}

#[test]
fn cluster_redirections_are_followed_while_a_slot_moves() {
    let Some(c) = Cluster::start("cl-move") else {
        return;
    };
    let s = RedisReplayStore::open(&c.url("")).unwrap();
    assert_eq!(
        s.check_and_record("i", "probe", N + 100, N),
        Ok(Sighting::First)
    );
    // Where its key lives: node `from`, slot `slot`.
    let (from, key) = c
        .nodes
        .iter()
        .enumerate()
        .find_map(|(i, n)| {
            n.cli(&["--scan", "--pattern", "agentsig:replay:*"])
                .lines()
                .next()
                .map(|k| (i, k.to_owned()))
        })
        .unwrap();
    let to = (from + 1) % 3;
    let slot = c.nodes[from]
        .cli(&["CLUSTER", "KEYSLOT", &key])
        .trim()
        .to_owned();
    let id = |i: usize| c.nodes[i].cli(&["CLUSTER", "MYID"]).trim().to_owned();
    let (from_id, to_id) = (id(from), id(to));
    // Mid-migration: the key moved, the slot not yet. The client, whose
    // slot map still names `from`, is sent on with ASK.
    assert_eq!(
        c.nodes[to]
            .cli(&["CLUSTER", "SETSLOT", &slot, "IMPORTING", &from_id])
            .trim(),
        "OK"
    );
    assert_eq!(
        c.nodes[from]
            .cli(&["CLUSTER", "SETSLOT", &slot, "MIGRATING", &to_id])
            .trim(),
        "OK"
    );
    let to_port = c.nodes[to].port.to_string();
    assert_eq!(
        c.nodes[from]
            .cli(&["MIGRATE", "127.0.0.1", &to_port, &key, "0", "5000"])
            .trim(),
        "OK"
    );
    assert_eq!(
        s.check_and_record("i", "probe", N + 100, N),
        Ok(Sighting::Replay)
    );
    // The slot moved: MOVED, and the client's new slot map.
    for n in &c.nodes {
        assert_eq!(
            n.cli(&["CLUSTER", "SETSLOT", &slot, "NODE", &to_id]).trim(),
            "OK"
        );
    }
    assert_eq!(
        s.check_and_record("i", "probe", N + 100, N),
        Ok(Sighting::Replay)
    );
    assert_eq!(c.nodes[to].cli(&["EXISTS", &key]).trim(), "1");
    assert!(!c.nodes[from]
        .cli(&["--scan", "--pattern", "agentsig:replay:*"])
        .contains(&key));
}

#[test]
fn cluster_acl_user_with_the_documented_commands_runs_both_stores() {
    use agentsig::pin::{open_pin_store, PinOutcome};
    let Some(c) = Cluster::start("cl-acl") else {
        return;
    };
    for n in &c.nodes {
        let ok = n.cli(
            &[
                &["ACL", "SETUSER", "fleet", "on", ">pw"],
                FLEET_ACL,
                &["+cluster|slots", "+get", "+del"],
            ]
            .concat(),
        );
        assert_eq!(ok.trim(), "OK");
    }
    let nodes: Vec<String> = c
        .nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let url = format!("redis+cluster://fleet:pw@{}", nodes.join(","));
    let s = open_store(&url, N).unwrap();
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record("i", "a", N + 100, N),
        Ok(Sighting::Replay)
    );
    // A batch: SET NX per key, and the roll-back script (GET, DEL).
    assert_eq!(
        s.check_and_record_all(&[("i", "b", N + 100), ("i", "c", N - 1)], N),
        Ok(Sighting::First)
    );
    assert_eq!(
        s.check_and_record_all(
            &[
                ("i", "d", N + 100),
                ("i", "e", N + 100),
                ("i", "b", N + 100)
            ],
            N
        ),
        Ok(Sighting::Replay)
    );
    assert_eq!(
        s.check_and_record_all(&[("i", "d", N + 100), ("i", "e", N + 100)], N),
        Ok(Sighting::First)
    );
    let tp = agentsig::SigningKey::generate(agentsig::Algorithm::Ed25519)
        .unwrap()
        .verifying_key()
        .thumbprint();
    let pins = open_pin_store(&url).unwrap();
    assert_eq!(
        pins.check_and_pin("https://agent.example/a", &tp),
        Ok(PinOutcome::FirstSeen)
    );
    assert_eq!(pins.get("https://agent.example/a"), Ok(vec![tp.clone()]));
    assert_eq!(pins.list().unwrap().len(), 1);
    // A wrong password is refused, not accepted.
    let bad = open_store(&url.replace(":pw@", ":nope@"), N).unwrap();
    let r = bad.check_and_record("i", "z", N + 100, N);
    assert!(matches!(r, Err(ReplayError::Unavailable(_))), "{r:?}");
}

#[test]
fn cluster_failover_to_a_replica_keeps_acknowledged_ids() {
    let Some(c) = Cluster::start("cl-failover") else {
        return;
    };
    let replica = c.add_replica("cl-failover-r", 0);
    // Only primary 0 has a replica: with wait=1 exactly the ids whose key
    // lands on its slots are accepted (WAIT goes to the written key's
    // primary), the others refused.
    let acked = RedisReplayStore::open(&c.url("?wait=1&wait-timeout=200ms")).unwrap();
    let mut accepted = Vec::new();
    let mut refused = 0;
    for i in 0..30 {
        let id = format!("id-{i}");
        match acked.check_and_record("i", &id, N + 1000, N) {
            Ok(Sighting::First) => accepted.push(id),
            Err(ReplayError::Unavailable(m)) if m.contains("not acknowledged") => refused += 1,
            r => panic!("{id}: {r:?}"),
        }
    }
    assert!(
        !accepted.is_empty() && refused > 0,
        "{accepted:?} {refused}"
    );
    assert_eq!(c.replay_keys()[0], accepted.len());
    // Primary 0 dies at once; its replica is promoted by the cluster. The
    // client follows the new slot owner: every acknowledged id is a
    // replay there, refused (never first) until the promotion.
    c.nodes[0].signal("KILL");
    let plain = RedisReplayStore::open(&c.url("")).unwrap();
    for id in &accepted {
        let mut r = plain.check_and_record("i", id, N + 1000, N);
        for _ in 0..300 {
            match r {
                Err(ReplayError::Unavailable(_)) => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    r = plain.check_and_record("i", id, N + 1000, N);
                }
                _ => break,
            }
        }
        assert_eq!(r, Ok(Sighting::Replay), "{id}");
    }
    assert!(replica.cli(&["ROLE"]).starts_with("master"));
    // The store opened before the failover follows it too.
    assert_eq!(
        acked.check_and_record("i", &accepted[0], N + 1000, N),
        Ok(Sighting::Replay)
    );
}
