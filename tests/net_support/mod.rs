//! Loopback HTTPS servers for the `net` tests: a test CA generated here
//! (rcgen), a tiny rustls server on a std thread that counts every accepted
//! TCP connection. Traffic only to 127.0.0.1.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// One canned response.
#[derive(Clone, Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Answer only once a request for this path has arrived (bounded wait:
    /// 5 s, then answer anyway and count a missed gate).
    pub after: Option<String>,
    /// Send the body one byte per this interval (a slow, hostile server).
    pub trickle: Option<std::time::Duration>,
}

impl Resp {
    pub fn ok(ctype: &str, body: impl Into<Vec<u8>>) -> Resp {
        Resp {
            status: 200,
            headers: vec![("content-type".into(), ctype.into())],
            body: body.into(),
            after: None,
            trickle: None,
        }
    }
    pub fn json(v: &serde_json::Value) -> Resp {
        Resp::ok("application/json", serde_json::to_vec(v).unwrap())
    }
    pub fn redirect(to: &str) -> Resp {
        Resp {
            status: 302,
            headers: vec![("location".into(), to.into())],
            body: Vec::new(),
            after: None,
            trickle: None,
        }
    }
    pub fn header(mut self, k: &str, v: &str) -> Resp {
        self.headers.push((k.into(), v.into()));
        self
    }
    /// Send the body one byte every `each` (headers at once).
    pub fn trickle(mut self, each: std::time::Duration) -> Resp {
        self.trickle = Some(each);
        self
    }
    /// Hold this response until `path` has been requested.
    pub fn after(mut self, path: &str) -> Resp {
        self.after = Some(path.into());
        self
    }
}

/// The test CA.
pub struct Ca {
    pub cert: rcgen::Certificate,
    pub key: rcgen::KeyPair,
}

impl Ca {
    pub fn new() -> Ca {
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.distinguished_name
            .push(rcgen::DnType::CommonName, "agentsig test CA");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = p.self_signed(&key).unwrap();
        Ca { cert, key }
    }
    pub fn pem(&self) -> Vec<u8> {
        self.cert.pem().into_bytes()
    }
}

/// A running HTTPS server on 127.0.0.1.
pub struct Server {
    pub port: u16,
    pub accepted: Arc<AtomicUsize>,
    pub routes: Arc<Mutex<HashMap<String, Resp>>>,
    pub hits: Arc<Mutex<Vec<String>>>,
    /// Gated responses answered only after their 5 s wait ran out.
    pub missed_gates: Arc<AtomicUsize>,
    /// Connections open now, and the most open at once.
    pub open: Arc<Open>,
    /// Whether connections accepted from now on send without Nagle's delay
    /// ([`Server::answer_without_delay`]).
    pub no_delay: Arc<std::sync::atomic::AtomicBool>,
}

/// The connections a server holds, and the most open at once.
#[derive(Default)]
pub struct Open {
    live: Mutex<HashMap<u64, std::net::TcpStream>>,
    next: AtomicUsize,
    most: AtomicUsize,
}

/// Whether the client still has its side of `s` open, by the kernel's TCP
/// state: a connection the client closed (its FIN received, `CLOSE_WAIT`)
/// is closed for the bound even before this server's thread for it reads
/// the end, which a loaded machine may schedule late.
fn client_side_open(s: &std::net::TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: getsockopt writes at most `len` bytes into `info`, a plain
    // C struct, for a socket this process owns.
    unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let r = libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        );
        // TCP_ESTABLISHED (1) and TCP_SYN_RECV (3), as in linux/tcp_states.h.
        r != 0 || matches!(info.tcpi_state, 1 | 3)
    }
}

/// Counts a connection as open from its accept until the client closes it
/// or this server ends it, whichever is first.
struct OpenGuard(Arc<Open>, u64);
impl OpenGuard {
    fn new(open: &Arc<Open>, stream: &std::net::TcpStream) -> OpenGuard {
        let id = open.next.fetch_add(1, Ordering::SeqCst) as u64;
        let mut live = open.live.lock().unwrap();
        let now = 1 + live.values().filter(|s| client_side_open(s)).count();
        open.most.fetch_max(now, Ordering::SeqCst);
        if let Ok(dup) = stream.try_clone() {
            live.insert(id, dup);
        }
        OpenGuard(open.clone(), id)
    }
}
impl Drop for OpenGuard {
    fn drop(&mut self) {
        if let Ok(mut live) = self.0.live.lock() {
            live.remove(&self.1);
        }
    }
}

impl Server {
    /// Serve certificates for `names` signed by `ca`.
    pub fn start(ca: &Ca, names: &[&str]) -> Server {
        Server::start_with(ca, names, false)
    }

    /// A server that keeps each connection open for further requests
    /// (HTTP/1.1 keep-alive), so that `accepted` counts connections, not
    /// requests.
    #[allow(dead_code)]
    pub fn start_keep_alive(ca: &Ca, names: &[&str]) -> Server {
        Server::start_with(ca, names, true)
    }

    fn start_with(ca: &Ca, names: &[&str], keep_alive: bool) -> Server {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let p = rcgen::CertificateParams::new(names).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &ca.cert, &ca.key).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let cfg = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .unwrap();
        let cfg = Arc::new(cfg);
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let routes: Arc<Mutex<HashMap<String, Resp>>> = Arc::default();
        let hits: Arc<Mutex<Vec<String>>> = Arc::default();
        let missed_gates = Arc::new(AtomicUsize::new(0));
        let open: Arc<Open> = Arc::default();
        let no_delay: Arc<std::sync::atomic::AtomicBool> = Arc::default();
        let (a, r, h, mg, op, nd) = (
            accepted.clone(),
            routes.clone(),
            hits.clone(),
            missed_gates.clone(),
            open.clone(),
            no_delay.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                if nd.load(Ordering::SeqCst) {
                    let _ = stream.set_nodelay(true);
                }
                a.fetch_add(1, Ordering::SeqCst);
                // Counted from the accept until the connection ends.
                let guard = OpenGuard::new(&op, &stream);
                let (cfg, r, h, mg) = (cfg.clone(), r.clone(), h.clone(), mg.clone());
                std::thread::spawn(move || {
                    let _guard = guard;
                    let Ok(conn) = rustls::ServerConnection::new(cfg) else {
                        return;
                    };
                    let mut tls = rustls::StreamOwned::new(conn, stream);
                    loop {
                        let mut buf = Vec::new();
                        let mut chunk = [0u8; 1024];
                        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                            match tls.read(&mut chunk) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                            if buf.len() > 64 * 1024 {
                                return;
                            }
                        }
                        let text = String::from_utf8_lossy(&buf).to_string();
                        let path = text.split(' ').nth(1).unwrap_or("/").to_string();
                        h.lock().unwrap().push(text.clone());
                        let resp = r.lock().unwrap().get(&path).cloned().unwrap_or(Resp {
                            status: 404,
                            headers: vec![],
                            body: b"not found".to_vec(),
                            after: None,
                            trickle: None,
                        });
                        if let Some(gate) = &resp.after {
                            let needle = format!("GET {gate} ");
                            let seen = || h.lock().unwrap().iter().any(|x| x.starts_with(&needle));
                            let mut waited = 0;
                            while !seen() && waited < 500 {
                                std::thread::sleep(std::time::Duration::from_millis(10));
                                waited += 1;
                            }
                            if !seen() {
                                mg.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        // RFC 9110 section 13.1.2: a route with an ETag answers
                        // a matching If-None-Match with 304 and no body.
                        let etag = resp
                            .headers
                            .iter()
                            .find(|(k, _)| k.eq_ignore_ascii_case("etag"))
                            .map(|(_, v)| v.clone());
                        let inm = text.lines().find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.trim()
                                .eq_ignore_ascii_case("if-none-match")
                                .then(|| v.trim().to_string())
                        });
                        let resp = match (etag, inm) {
                            (Some(e), Some(i)) if resp.status == 200 && e == i => Resp {
                                status: 304,
                                body: Vec::new(),
                                ..resp
                            },
                            _ => resp,
                        };
                        let mut out = format!("HTTP/1.1 {} X\r\n", resp.status);
                        for (k, v) in &resp.headers {
                            out.push_str(&format!("{k}: {v}\r\n"));
                        }
                        out.push_str(&format!(
                            "content-length: {}\r\n{}\r\n",
                            resp.body.len(),
                            if keep_alive {
                                ""
                            } else {
                                "connection: close\r\n"
                            }
                        ));
                        let _ = tls.write_all(out.as_bytes());
                        if let Some(each) = resp.trickle {
                            let _ = tls.flush();
                            for b in &resp.body {
                                std::thread::sleep(each);
                                if tls.write_all(&[*b]).and_then(|_| tls.flush()).is_err() {
                                    return;
                                }
                            }
                        }
                        let _ = tls.write_all(if resp.trickle.is_some() {
                            &[]
                        } else {
                            &resp.body[..]
                        });
                        let _ = tls.flush();
                        if !keep_alive {
                            tls.conn.send_close_notify();
                            let _ = tls.flush();
                            return;
                        }
                    }
                });
            }
        });
        Server {
            port,
            accepted,
            routes,
            hits,
            missed_gates,
            open,
            no_delay,
        }
    }
    /// Send answers on connections accepted from now on without Nagle's
    /// delay. An answer goes out as two TLS records (head, body), and by
    /// default Nagle's algorithm holds the second until the client's
    /// delayed ACK (about 40 ms on Linux): a bench that measures CPU per
    /// input wants no such stall (benches/crawl.rs). The tests keep the
    /// default, the timing their connection counts were proved under: with
    /// answers at once, `net_fetch`'s per-host bound saw a third connection
    /// about once in 65 loaded runs, because the HTTP client gives a kept
    /// connection back to its pool asynchronously after the body's end and
    /// a request starting in that moment opens a new one.
    pub fn answer_without_delay(&self) {
        self.no_delay.store(true, Ordering::SeqCst);
    }
    /// The most connections that were open at once.
    pub fn most_open(&self) -> usize {
        self.open.most.load(Ordering::SeqCst)
    }
    pub fn route(&self, path: &str, resp: Resp) {
        self.routes.lock().unwrap().insert(path.into(), resp);
    }
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.port)
    }
    /// Requests so far for `path` that carried `If-None-Match`.
    pub fn conditional_count(&self, path: &str) -> usize {
        let needle = format!("GET {path} ");
        self.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.starts_with(&needle) && h.to_ascii_lowercase().contains("if-none-match:"))
            .count()
    }
    /// Every request so far, whatever its path.
    pub fn total_hits(&self) -> usize {
        self.hits.lock().unwrap().len()
    }
    pub fn hit_count(&self, path: &str) -> usize {
        let needle = format!("GET {path} ");
        self.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.starts_with(&needle))
            .count()
    }
}

pub fn loopback() -> Vec<IpAddr> {
    vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]
}

/// A new ES256 key `k1` whose JWK Set `srv` serves at `/jwks`.
pub fn key_served_at_jwks(srv: &Server) -> agentsig::SigningKey {
    let key = agentsig::SigningKey::generate(agentsig::Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("k1");
    let mut j = key.verifying_key().to_jwk().to_value();
    j["use"] = serde_json::json!("sig");
    srv.route("/jwks", Resp::json(&serde_json::json!({ "keys": [j] })));
    key
}

/// A `200` descriptor response with the fields a static host sends
/// (`Content-Type`, `Content-Digest`, an RFC 9421 signature by `key`).
pub fn signed_resp(
    body: &[u8],
    key: &agentsig::SigningKey,
    created: i64,
    expires: Option<i64>,
) -> Resp {
    let fields = agentsig::httpsig::static_response_fields(
        body,
        "application/json",
        &[(key, key.kid().unwrap().to_owned())],
        created,
        expires,
    )
    .unwrap();
    let mut r = Resp::ok("application/json", body.to_vec());
    r.headers.clear();
    for (k, v) in fields {
        r = r.header(&k, &v);
    }
    r
}

/// Run the `agentsig` CLI with `args`, then `--ca-file CA_FILE` (the test
/// CA written to a file) and `agent.example` resolved to loopback, private
/// networks allowed (the test server is on 127.0.0.1).
pub fn agentsig_cli(ca_file: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(args)
        .arg("--ca-file")
        .arg(ca_file)
        .args(["--resolve-to", "agent.example=127.0.0.1"])
        .env("AGENTSIG_ALLOW_PRIVATE_NETWORKS", "1")
        .env_remove("AGENTSIG_CA_FILE")
        .output()
        .expect("run")
}
