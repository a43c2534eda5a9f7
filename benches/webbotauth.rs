//! Web Bot Auth verification (draft-ietf-webbotauth-httpsig-protocol-00)
//! against its crypto floor.
//!
//! * `webbotauth/floor_base_plus_ed25519`: the signature base of the
//!   request's one signature (components and `@signature-params` already
//!   parsed) plus one Ed25519 verify: the least any verifier must do.
//! * `webbotauth/verify_static_directory`: `WebBotAuthVerifier::verify` of a
//!   signed request (`@method @authority @path "signature-agent";key`),
//!   keys from a `StaticDirectory`: parsing, attribution, policy, verify.
//! * `webbotauth/verify_fetched_directory_warm`: the same with the fetching
//!   `DirectoryClient`, its directory (served over loopback HTTPS with
//!   `Cache-Control: max-age=86400` and a directory proof) warm in the RFC
//!   9111 cache: no request per call.
//! * `webbotauth/tower_layer_request`: one request through `BotAuthLayer`
//!   (body collection, verification on the blocking pool, the extension,
//!   an inner service), on a current-thread runtime; 1 / time = requests
//!   per second on one core.
//!
//! Run: cargo bench --bench webbotauth -- --warm-up-time 1 --measurement-time 3

#[path = "../tests/net_support/mod.rs"]
mod net_support;

use agentsig::httpsig::base::{signature_base, signature_params_value};
use agentsig::httpsig::components::known_sf_type;
use agentsig::httpsig::{ComponentId, Message, SiteAuthorities};
use agentsig::net::webbotauth::DirectoryClient;
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::server::webbotauth::{BotAuthConfig, BotAuthLayer};
use agentsig::webbotauth::directory::{directory_body, directory_headers};
use agentsig::webbotauth::{
    sign_message, KeyDirectory, Policy, SignOptions, StaticDirectory, WebBotAuthVerifier,
    MEDIA_TYPE, WELL_KNOWN_PATH,
};
use agentsig::{Algorithm, SigningKey};
use bytes::Bytes;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use http_body_util::Full;
use std::sync::Arc;
use tower::{Layer, ServiceExt};

fn now() -> i64 {
    agentsig::clock::Clock::now(&agentsig::clock::SystemClock)
}

fn signed(agent: &str, key: &SigningKey) -> Message {
    signed_with(agent, key, false)
}

fn signed_with(agent: &str, key: &SigningKey, no_nonce: bool) -> Message {
    let mut m = Message::parse(
        b"GET /catalog?page=2 HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: bench\r\n\r\n",
        "https",
    )
    .unwrap();
    let mut o = SignOptions::new(agent, now());
    o.lifetime = 3600;
    o.no_nonce = no_nonce;
    sign_message(&mut m, key, &o).unwrap();
    m
}

fn bench(c: &mut Criterion) {
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let agent = "https://agent.example";
    let msg = signed(agent, &key);

    // The floor: base + one verify, with the covered list pre-parsed.
    let o = SignOptions::new(agent, now());
    let spec = agentsig::webbotauth::signature_spec(&msg, &key, &o).unwrap();
    let covered: Vec<ComponentId> = spec.components.clone();
    let input = String::from_utf8(
        msg.field_lines("signature-input", false)
            .next()
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    let params_value = input["sig1=".len()..].to_owned();
    let sig_field =
        String::from_utf8(msg.field_lines("signature", false).next().unwrap().to_vec()).unwrap();
    let sig = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        sig_field.trim_start_matches("sig1=:").trim_end_matches(':'),
    )
    .unwrap();
    let vk = key.verifying_key().clone();
    assert_eq!(
        signature_params_value(&covered, &spec.params)
            .chars()
            .next(),
        Some('(')
    );
    let base = signature_base(&msg, None, &covered, &params_value, &known_sf_type).unwrap();
    vk.verify(&base, &sig).unwrap();
    c.bench_function("webbotauth/floor_base_plus_ed25519", |b| {
        b.iter(|| {
            let base = signature_base(
                black_box(&msg),
                None,
                &covered,
                &params_value,
                &known_sf_type,
            )
            .unwrap();
            vk.verify(&base, &sig).unwrap();
        })
    });

    let dir = StaticDirectory::new().with(
        &format!("{agent}{WELL_KNOWN_PATH}"),
        vec![key.verifying_key().clone()],
    );
    let v = WebBotAuthVerifier::new(Policy::default());
    let t = now();
    assert!(v.verify(&msg, &dir, t).verified().is_some());
    c.bench_function("webbotauth/verify_static_directory", |b| {
        b.iter(|| {
            let r = v.verify(black_box(&msg), &dir, t);
            assert!(r.verified().is_some());
        })
    });

    // The fetching directory over loopback HTTPS, warm in cache.
    let ca = net_support::Ca::new();
    let srv = net_support::Server::start(&ca, &["agent.example"]);
    let body = directory_body(&[key.verifying_key()]);
    let authority = format!("agent.example:{}", srv.port);
    let mut resp = net_support::Resp::ok(MEDIA_TYPE, body.clone());
    resp.headers.clear();
    for (n, val) in directory_headers(&body, &authority, &[&key], t - 10, t + 86400).unwrap() {
        resp = resp.header(&n.to_ascii_lowercase(), &val);
    }
    srv.route(WELL_KNOWN_PATH, resp);
    let fetcher = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", net_support::loopback()),
    )
    .unwrap();
    let client = Arc::new(DirectoryClient::new(Arc::new(fetcher)).require_proof(true));
    let net_agent = format!("https://agent.example:{}", srv.port);
    let net_msg = signed(&net_agent, &key);
    assert!(v.verify(&net_msg, client.as_ref(), t).verified().is_some());
    c.bench_function("webbotauth/verify_fetched_directory_warm", |b| {
        b.iter(|| {
            let r = v.verify(black_box(&net_msg), client.as_ref(), t);
            assert!(r.verified().is_some());
        })
    });
    assert_eq!(
        srv.hit_count(WELL_KNOWN_PATH),
        1,
        "the directory stayed cached"
    );

    // The tower layer.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let directory: Arc<dyn KeyDirectory> = Arc::new(dir.clone());
    let cfg = BotAuthConfig::new(
        WebBotAuthVerifier::new(Policy::default()),
        directory,
        SiteAuthorities::only(["shop.example"]).unwrap(),
    );
    let app = tower::service_fn(|_req: http::Request<Full<Bytes>>| async {
        Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from_static(b"ok"))))
    });
    let svc = BotAuthLayer::new(cfg).layer(app);
    // The layer keeps every nonce it accepts (its default replay store), so
    // the request sent again and again carries none.
    let m = signed_with(agent, &key, true);
    let mut builder = http::Request::get("https://shop.example/catalog?page=2");
    for f in &m.headers {
        if f.name != "host" {
            builder = builder.header(f.name.as_str(), f.value.as_slice());
        }
    }
    let template = builder.body(()).unwrap();
    let make = || {
        let mut r = http::Request::new(Full::new(Bytes::new()));
        *r.method_mut() = template.method().clone();
        *r.uri_mut() = template.uri().clone();
        *r.headers_mut() = template.headers().clone();
        r
    };
    assert_eq!(
        rt.block_on(svc.clone().oneshot(make())).unwrap().status(),
        200
    );
    c.bench_function("webbotauth/tower_layer_request", |b| {
        b.iter(|| {
            let res = rt.block_on(svc.clone().oneshot(make())).unwrap();
            assert_eq!(res.status(), 200);
        })
    });
    drop(client);
}

criterion_group!(benches, bench);
criterion_main!(benches);
