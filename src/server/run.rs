//! The HTTP/1.1 server loop: plain TCP or TLS (rustls on ring, no
//! OpenSSL), bounded connections, timeouts against slow clients, reload on
//! change, graceful shutdown, one log line per request.

use super::layer::{SignLayer, SignService};
use super::publish::{PublishService, Publisher};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tower::ServiceExt;
use tower_layer::Layer;

/// Limits and behaviour of the server loop.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// TLS configuration; `None` serves plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Time allowed for a request head (and for the TLS handshake).
    pub header_timeout: Duration,
    /// Longest life of one connection (slow readers are cut off).
    pub connection_timeout: Duration,
    /// Most connections served at once; more get `503` and are closed over
    /// plain HTTP, and are closed before the TLS handshake over TLS.
    pub max_connections: usize,
    /// How often the directory is checked for changes; `None`: never.
    pub reload_interval: Option<Duration>,
    /// Time allowed to finish requests in flight at shutdown.
    pub shutdown_grace: Duration,
    /// Serve this Web Bot Auth key directory at its well-known path.
    pub web_bot_auth: Option<Arc<super::webbotauth::DirectoryPublisher>>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            tls: None,
            header_timeout: Duration::from_secs(10),
            connection_timeout: Duration::from_secs(120),
            max_connections: 512,
            reload_interval: Some(Duration::from_secs(1)),
            shutdown_grace: Duration::from_secs(10),
            web_bot_auth: None,
        }
    }
}

/// Errors loading the TLS certificate chain and key.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        err: std::io::Error,
    },
    /// No certificate in the chain file.
    #[error("{0}: no PEM certificate")]
    NoCertificate(String),
    /// No private key in the key file.
    #[error("{0}: no PEM private key")]
    NoKey(String),
    /// rustls refused the pair.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

/// A rustls server configuration (ring provider, TLS 1.2 and 1.3, ALPN
/// `http/1.1`) from a PEM certificate chain and a PEM private key.
///
/// # Errors
/// [`TlsError`] when the certificate or key cannot be read or is refused by rustls.
pub fn tls_config(
    cert_pem: &[u8],
    key_pem: &[u8],
    names: (&str, &str),
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let certs: Vec<_> = rustls_pemfile::certs(&mut &cert_pem[..])
        .collect::<Result<_, _>>()
        .map_err(|err| TlsError::Io {
            path: names.0.to_owned(),
            err,
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate(names.0.to_owned()));
    }
    let key = rustls_pemfile::private_key(&mut &key_pem[..])
        .map_err(|err| TlsError::Io {
            path: names.1.to_owned(),
            err,
        })?
        .ok_or_else(|| TlsError::NoKey(names.1.to_owned()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

/// The full service of `agentsig serve`: the publisher behind the signing layer.
pub fn publisher_service(publisher: Arc<Publisher>) -> SignService<PublishService> {
    let mut cfg = super::SignConfig::new(publisher.config().keys.clone());
    cfg.max_body = usize::try_from(publisher.config().max_file)
        .unwrap_or(usize::MAX)
        .max(64 * 1024);
    cfg.accept_signature = true;
    SignLayer::with_config(cfg).layer(PublishService::new(publisher))
}

const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 32\r\nretry-after: 1\r\nconnection: close\r\n\r\ntoo many connections, try again\n";

/// Serve `publisher` on `listener` until `shutdown` resolves, then stop
/// accepting and give requests in flight [`ServeOptions::shutdown_grace`].
///
/// # Errors
/// an I/O error when the file cannot be read or written.
pub async fn serve(
    listener: TcpListener,
    publisher: Arc<Publisher>,
    opts: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let svc = publisher_service(publisher.clone());
    let limit = Arc::new(tokio::sync::Semaphore::new(opts.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let tls = opts.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let reload = opts.reload_interval.map(|every| {
        let p = publisher.clone();
        tokio::spawn(async move {
            let mut t = tokio::time::interval(every);
            t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                t.tick().await;
                let p = p.clone();
                match tokio::task::spawn_blocking(move || p.reload_if_changed()).await {
                    Ok(Ok(true)) => tracing::info!("directory changed: reloaded"),
                    Ok(Ok(false)) => {}
                    Ok(Err(e)) => {
                        tracing::warn!("reload failed, serving the previous snapshot: {e}")
                    }
                    Err(e) => tracing::warn!("reload task failed: {e}"),
                }
            }
        })
    });
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let Ok(permit) = limit.clone().try_acquire_owned() else {
            tracing::warn!(%peer, "connection refused: {} connections open", opts.max_connections);
            if tls.is_none() {
                tokio::spawn(async move {
                    let mut s = stream;
                    let _ = tokio::time::timeout(Duration::from_secs(1), s.write_all(BUSY)).await;
                    let _ = s.shutdown().await;
                });
            }
            continue;
        };
        let svc = svc.clone();
        let watcher = graceful.watcher();
        let tls = tls.clone();
        let opts = opts.clone();
        tokio::spawn(async move {
            let _permit = permit;
            match tls {
                None => connection(stream, peer, svc, watcher, &opts, "http").await,
                Some(acc) => {
                    match tokio::time::timeout(opts.header_timeout, acc.accept(stream)).await {
                        Ok(Ok(s)) => connection(s, peer, svc, watcher, &opts, "https").await,
                        Ok(Err(e)) => tracing::info!(%peer, "TLS handshake failed: {e}"),
                        Err(_) => tracing::info!(%peer, "TLS handshake timed out"),
                    }
                }
            }
        });
    }
    if let Some(r) = reload {
        r.abort();
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => tracing::info!("all connections closed"),
        _ = tokio::time::sleep(opts.shutdown_grace) => tracing::warn!("shutdown grace period over; closing remaining connections"),
    }
    Ok(())
}

async fn connection<I>(
    io: I,
    peer: SocketAddr,
    svc: SignService<PublishService>,
    watcher: hyper_util::server::graceful::Watcher,
    opts: &ServeOptions,
    scheme: &'static str,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let wba = opts.web_bot_auth.clone();
    let service = hyper::service::service_fn(move |req: http::Request<Incoming>| {
        let svc = svc.clone();
        let wba = wba.clone();
        async move {
            let start = Instant::now();
            let method = req.method().clone();
            let path = req.uri().path().to_owned();
            let res = match wba {
                Some(d) if super::webbotauth::DirectoryPublisher::matches(&req) => {
                    d.respond_boxed(&req)
                }
                _ => svc.oneshot(req).await?,
            };
            tracing::info!(
                %peer,
                %method,
                path = %crate::text::escape_controls(&path),
                status = res.status().as_u16(),
                signed = res.headers().contains_key("signature"),
                micros = start.elapsed().as_micros() as u64,
                scheme,
                "request"
            );
            Ok::<_, std::convert::Infallible>(res)
        }
    });
    let mut b = hyper::server::conn::http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(opts.header_timeout)
        .max_buf_size(64 * 1024);
    let conn = b.serve_connection(TokioIo::new(io), service);
    let conn = watcher.watch(conn);
    match tokio::time::timeout(opts.connection_timeout, conn).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(%peer, "connection ended: {e}"),
        Err(_) => tracing::info!(%peer, "connection closed after the connection time limit"),
    }
}

/// Bytes of log kept before they are written out at once.
const LOG_BUFFER: usize = 32 * 1024;

/// How long a log line waits at most before it is written.
const LOG_FLUSH_EVERY: Duration = Duration::from_millis(100);

/// A log writer for `tracing_subscriber` (`.with_writer(log.clone())`)
/// that gathers lines in one shared buffer and writes them to standard
/// error in batches: when 32 KiB have gathered, at least
/// every 100 ms (a background thread), and when a handle is dropped. The
/// request log keeps one line per request without one `write(2)` per
/// request. Make it with [`BufferedStderr::start`] and keep
/// it alive until the server has stopped.
#[derive(Clone, Debug)]
pub struct BufferedStderr {
    shared: Arc<LogShared>,
}

#[derive(Debug)]
struct LogShared {
    buf: std::sync::Mutex<Vec<u8>>,
    /// Where gathered lines go: standard error (a test's sink in tests).
    out: fn(&[u8]),
}

fn to_stderr(b: &[u8]) {
    use std::io::Write as _;
    let _ = std::io::stderr().lock().write_all(b);
}

impl LogShared {
    fn flush(&self) {
        let out = match self.buf.lock() {
            Ok(mut b) if !b.is_empty() => std::mem::take(&mut *b),
            _ => return,
        };
        (self.out)(&out);
    }
}

impl BufferedStderr {
    /// The writer and its flushing thread (which ends once every handle
    /// is dropped).
    pub fn start() -> BufferedStderr {
        BufferedStderr::start_to(to_stderr)
    }

    fn start_to(out: fn(&[u8])) -> BufferedStderr {
        let shared = Arc::new(LogShared {
            buf: std::sync::Mutex::default(),
            out,
        });
        let weak = Arc::downgrade(&shared);
        let _ = std::thread::Builder::new()
            .name("agentsig-log".into())
            .spawn(move || loop {
                std::thread::sleep(LOG_FLUSH_EVERY);
                match weak.upgrade() {
                    Some(s) => s.flush(),
                    None => return,
                }
            });
        BufferedStderr { shared }
    }

    /// Write out what has gathered.
    pub fn flush(&self) {
        self.shared.flush();
    }
}

impl Drop for BufferedStderr {
    /// Any handle dropped writes out what has gathered (the subscriber
    /// keeps its own handle for the life of the process).
    fn drop(&mut self) {
        self.shared.flush();
    }
}

/// One log event's writer (see [`BufferedStderr`]).
#[derive(Debug)]
pub struct LogLine<'a> {
    shared: &'a LogShared,
}

impl std::io::Write for LogLine<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let full = match self.shared.buf.lock() {
            Ok(mut b) => {
                b.extend_from_slice(data);
                b.len() >= LOG_BUFFER
            }
            // A poisoned buffer: write straight through.
            Err(_) => {
                (self.shared.out)(data);
                return Ok(data.len());
            }
        };
        if full {
            self.shared.flush();
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for BufferedStderr {
    type Writer = LogLine<'a>;
    fn make_writer(&'a self) -> LogLine<'a> {
        LogLine {
            shared: &self.shared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::fmt::MakeWriter;

    static SINK: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());
    fn sink(b: &[u8]) {
        SINK.lock().unwrap().extend_from_slice(b);
    }

    #[test]
    fn log_lines_gather_until_flushed_and_none_is_lost() {
        let log = BufferedStderr::start_to(sink);
        for i in 0..10 {
            use std::io::Write as _;
            writeln!(log.make_writer(), "line {i}").unwrap();
        }
        let gathered = String::from_utf8(log.shared.buf.lock().unwrap().clone()).unwrap();
        // Unless the 100 ms flusher ran in between, all ten wait together;
        // either way what is gathered is whole lines, in order.
        let lines: Vec<_> = gathered.lines().collect();
        let first = 10 - lines.len();
        let want: Vec<String> = (first..10).map(|i| format!("line {i}")).collect();
        assert_eq!(lines, want);
        log.flush();
        assert!(log.shared.buf.lock().unwrap().is_empty());
        let written = String::from_utf8(SINK.lock().unwrap().clone()).unwrap();
        let want: String = (0..10).map(|i| format!("line {i}\n")).collect();
        assert_eq!(written, want, "every line, once, in order");
        // A buffer past LOG_BUFFER is written out by the writer itself.
        let big = vec![b'x'; LOG_BUFFER + 1];
        {
            use std::io::Write as _;
            log.make_writer().write_all(&big).unwrap();
        }
        assert!(log.shared.buf.lock().unwrap().is_empty());
        assert_eq!(SINK.lock().unwrap().len(), want.len() + big.len());
    }
}
