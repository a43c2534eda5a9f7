//! `agentsig inspect --serve [--port N] [--assets DIR]`: the inspector page
//! (inspector/, embedded in the binary) and the WebAssembly package it runs
//! on (the scripts and module the package's `package.json` lists, its
//! `dist/` built by scripts/wasm-build.sh, read from `--assets`, by default
//! the `wasm/` directory of the source tree the binary was built from) over
//! HTTP on loopback only (127.0.0.1).
//!
//! The URL layout is the repository's (`/inspector/`, `/wasm/...`), so the
//! page imports `../wasm/browser.js` the same way when the repository is
//! served by any static server. The page computes everything in the browser;
//! this server only hands out fixed files: no path is taken from the request
//! to the file system, and a request whose `Host` is not this loopback
//! address is refused (a DNS-rebinding page cannot read through it).

use super::{CliError, CliResult};
use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The page's files, embedded: (URL path, content type, bytes).
const PAGE: &[(&str, &str, &[u8])] = &[
    (
        "/inspector/index.html",
        "text/html; charset=utf-8",
        include_bytes!("../../inspector/index.html"),
    ),
    (
        "/inspector/inspector.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../inspector/inspector.js"),
    ),
    (
        "/inspector/render.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../inspector/render.js"),
    ),
    (
        "/inspector/inspector.css",
        "text/css; charset=utf-8",
        include_bytes!("../../inspector/inspector.css"),
    ),
];

/// The content type of a package file, by its extension.
fn content_type(file: &str) -> Option<&'static str> {
    if file.ends_with(".js") {
        Some("text/javascript; charset=utf-8")
    } else if file.ends_with(".wasm") {
        Some("application/wasm")
    } else {
        None
    }
}

/// The Content-Security-Policy sent with every file (the page repeats it in
/// a meta tag for static hosting; `frame-ancestors` works only as a header).
const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
                   connect-src 'self' https:; img-src 'self' data:; object-src 'none'; \
                   base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The default `--assets`: the `wasm/` directory of the source tree this
/// binary was built from.
pub fn default_assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("wasm")
}

type Files = HashMap<String, (&'static str, Bytes)>;

/// Every file served, read once at start: the page (embedded) and the
/// package (from `assets`).
///
/// # Errors
/// `usage` naming the missing file and how to build the package.
fn files(assets: &Path) -> Result<Files, CliError> {
    let mut m = Files::new();
    for (path, ty, body) in PAGE {
        m.insert((*path).to_owned(), (*ty, Bytes::from_static(body)));
    }
    // The package's scripts and module, as its package.json `files` lists
    // them (the browser entry imports the others).
    let read = |p: &Path| {
        std::fs::read(p).map_err(|e| {
            CliError::usage(format!(
                "{}: {e}: the inspector needs the WebAssembly package built: run \
                 scripts/wasm-build.sh in the agentsig source tree (it writes wasm/dist), or give \
                 --assets DIR, the package directory (package.json, browser.js and dist/)",
                p.display()
            ))
        })
    };
    let manifest: serde_json::Value = serde_json::from_slice(&read(&assets.join("package.json"))?)
        .map_err(|e| CliError::usage(format!("{}: {e}", assets.join("package.json").display())))?;
    let listed = manifest["files"].as_array().cloned().unwrap_or_default();
    for rel in listed.iter().filter_map(|f| f.as_str()) {
        let Some(ty) = content_type(rel) else {
            continue;
        };
        if rel.contains("..") || rel.starts_with('/') {
            continue;
        }
        let body = read(&assets.join(rel))?;
        m.insert(format!("/wasm/{rel}"), (ty, Bytes::from(body)));
    }
    for needed in ["/wasm/browser.js", "/wasm/dist/agentsig_wasm_bg.wasm"] {
        if !m.contains_key(needed) {
            return Err(CliError::usage(format!(
                "{}: the package.json files list no {needed}",
                assets.display()
            )));
        }
    }
    Ok(m)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The answer to `req`: a fixed file, a redirect from `/` to the page, or
/// an error status.
fn respond<B>(files: &Files, hosts: &[String], req: &Request<B>) -> Response<Full<Bytes>> {
    let host = req
        .headers()
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok());
    if !host.is_some_and(|h| hosts.iter().any(|a| a == h)) {
        return plain(
            StatusCode::MISDIRECTED_REQUEST,
            "this server answers its loopback address only\n",
        );
    }
    let head = req.method() == hyper::Method::HEAD;
    if req.method() != hyper::Method::GET && !head {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "GET or HEAD\n");
    }
    let path = match req.uri().path() {
        "/" => {
            let mut r = plain(StatusCode::FOUND, "/inspector/\n");
            r.headers_mut().insert(
                hyper::header::LOCATION,
                hyper::header::HeaderValue::from_static("/inspector/"),
            );
            return r;
        }
        "/inspector" | "/inspector/" => "/inspector/index.html",
        p => p,
    };
    let Some((ty, body)) = files.get(path) else {
        return plain(StatusCode::NOT_FOUND, "not found\n");
    };
    let mut r = Response::new(Full::new(if head { Bytes::new() } else { body.clone() }));
    let h = r.headers_mut();
    use hyper::header::{self, HeaderValue};
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ty));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    r
}

/// Serve the inspector on 127.0.0.1:`port` (0: a free port) until
/// interrupted; prints the page's URL on standard output.
///
/// # Errors
/// `usage` when the package files are missing or the port cannot be bound.
pub fn run(port: u16, assets: Option<PathBuf>) -> CliResult {
    let assets = assets.unwrap_or_else(default_assets);
    let files = Arc::new(files(&assets)?);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("runtime: {e}")))?;
    rt.block_on(async move {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| CliError::usage(format!("{addr}: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::usage(e.to_string()))?;
        let hosts = Arc::new(vec![addr.to_string(), format!("localhost:{}", addr.port())]);
        println!("agentsig inspector: http://{addr}/inspector/ (loopback only; Ctrl+C stops it)");
        eprintln!("serving the WebAssembly package from {}", assets.display());
        loop {
            let conn = tokio::select! {
                c = listener.accept() => c,
                _ = tokio::signal::ctrl_c() => return Ok(ExitCode::SUCCESS),
            };
            let Ok((stream, _)) = conn else { continue };
            let (files, hosts) = (files.clone(), hosts.clone());
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let r = respond(&files, &hosts, &req);
                    async move { Ok::<_, std::convert::Infallible>(r) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(std::time::Duration::from_secs(10))
                    .serve_connection(io, svc)
                    .await;
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(files: &Files, path: &str, host: &str) -> Response<Full<Bytes>> {
        let req = Request::get(path).header("host", host).body(()).unwrap();
        respond(files, &["127.0.0.1:9".to_owned()], &req)
    }

    #[test]
    fn serves_fixed_files_to_its_loopback_host_only() {
        let mut files = Files::new();
        for (path, ty, body) in PAGE {
            files.insert((*path).to_owned(), (*ty, Bytes::from_static(body)));
        }
        assert_eq!(get(&files, "/inspector/", "127.0.0.1:9").status(), 200);
        assert_eq!(get(&files, "/", "127.0.0.1:9").status(), 302);
        assert_eq!(
            get(&files, "/inspector/../Cargo.toml", "127.0.0.1:9").status(),
            404
        );
        assert_eq!(get(&files, "/inspector/", "evil.example:9").status(), 421);
        let r = get(&files, "/inspector/index.html", "127.0.0.1:9");
        assert!(r.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("frame-ancestors 'none'"));
    }

    #[test]
    fn missing_package_says_how_to_build_it() {
        let e = files(Path::new("/nonexistent-agentsig-assets")).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(e.message.contains("scripts/wasm-build.sh"), "{}", e.message);
    }
}
