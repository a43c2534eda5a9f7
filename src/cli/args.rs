//! Argument types shared by several commands: durations and the fetch
//! options. Every command module imports them from here, so no command
//! module imports another for an argument type.

//!
//! The fetch options exist with the `net` feature only: without it no
//! command fetches, and every flag that would (`--allow-private-networks`,
//! `--ca-file`, ...) is absent rather than accepted and ignored.

#[cfg(feature = "net")]
use super::CliError;
#[cfg(feature = "net")]
use agentsig::net::fleet::{FleetCache, FleetSecret};
#[cfg(feature = "net")]
use agentsig::net::{FetchPolicy, Fetcher};
#[cfg(feature = "net")]
use std::net::IpAddr;
#[cfg(feature = "net")]
use std::sync::Arc;
#[cfg(feature = "net")]
use std::time::Duration;

/// Why a line of a list was not read ([`BoundedLines`]).
#[derive(Debug)]
pub enum LineError {
    /// Longer than the bound, in bytes (the rest of it was skipped).
    TooLong(usize),
    /// Not UTF-8.
    NotUtf8,
    /// The read failed (the lines end there).
    Read(std::io::Error),
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::TooLong(max) => write!(f, "longer than {max} bytes"),
            LineError::NotUtf8 => f.write_str("not UTF-8"),
            LineError::Read(e) => write!(f, "{e}"),
        }
    }
}

/// The lines of a list (a file, standard input), numbered from 1, each
/// read with a bound: a longer line is an error of its own and is skipped
/// to its end in pieces, so one endless line holds at most the bound in
/// memory. The line's end (`\n`, `\r\n`) is taken off.
pub struct BoundedLines {
    r: Box<dyn std::io::BufRead>,
    max: usize,
    n: usize,
    done: bool,
}

impl BoundedLines {
    /// The lines of `r`, each of at most `max` bytes.
    pub fn new(r: Box<dyn std::io::BufRead>, max: usize) -> BoundedLines {
        BoundedLines {
            r,
            max,
            n: 0,
            done: false,
        }
    }
}

impl Iterator for BoundedLines {
    type Item = (usize, Result<String, LineError>);
    fn next(&mut self) -> Option<Self::Item> {
        use std::io::{BufRead, Read};
        if self.done {
            return None;
        }
        let limit = u64::try_from(self.max).unwrap_or(u64::MAX);
        let mut buf = Vec::new();
        self.n += 1;
        let line = match self
            .r
            .by_ref()
            .take(limit.saturating_add(1))
            .read_until(b'\n', &mut buf)
        {
            Ok(0) => {
                self.done = true;
                return None;
            }
            Ok(_) if buf.len() > self.max && buf.last() != Some(&b'\n') => {
                // Skip to the end of the over-long line.
                let mut rest = Vec::new();
                loop {
                    rest.clear();
                    match self.r.by_ref().take(limit).read_until(b'\n', &mut rest) {
                        Ok(0) | Err(_) => {
                            self.done = true;
                            break;
                        }
                        Ok(_) if rest.last() == Some(&b'\n') => break,
                        Ok(_) => {}
                    }
                }
                Err(LineError::TooLong(self.max))
            }
            Ok(_) => String::from_utf8(buf)
                .map(|s| s.trim_end_matches(['\n', '\r']).to_owned())
                .map_err(|_| LineError::NotUtf8),
            Err(e) => {
                self.done = true;
                Err(LineError::Read(e))
            }
        };
        Some((self.n, line))
    }
}

/// Parse a duration: seconds, or a number with s, m, h or d.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let (num, mult) = match s.char_indices().last() {
        Some((i, 's')) => (&s[..i], 1),
        Some((i, 'm')) => (&s[..i], 60),
        Some((i, 'h')) => (&s[..i], 3600),
        Some((i, 'd')) => (&s[..i], 86400),
        _ => (s, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| {
            format!(
                "invalid duration {s_q} (e.g. 300, 5m, 12h, 30d)",
                s_q = agentsig::text::quoted(s)
            )
        })
}

/// How to fetch: the SSRF opt-ins for development and tests, extra CA
/// roots, pinned addresses (every command that fetches).
#[cfg(feature = "net")]
#[derive(clap::Args, Clone, Debug, Default)]
pub struct FetchArgs {
    /// Allow fetching from loopback, private and link-local addresses (development and
    /// tests only; also AGENTSIG_ALLOW_PRIVATE_NETWORKS=1). Off by default (SSRF protection).
    #[arg(long)]
    pub allow_private_networks: bool,
    /// Extra trusted CA certificates (PEM bundle) for HTTPS; also AGENTSIG_CA_FILE.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<String>,
    /// Resolve HOST to ADDR instead of asking DNS (like curl --resolve); the address is
    /// still checked. Repeatable: --resolve-to agents.example=127.0.0.1
    #[arg(long, value_name = "HOST=ADDR")]
    pub resolve_to: Vec<String>,
    /// Total deadline of each fetch: connection, redirects, headers and the whole body (e.g.
    /// 10, 30s, 1m; default 10 s). A slower answer fails with a timeout code.
    #[arg(long, value_name = "DURATION", value_parser = parse_deadline)]
    pub timeout: Option<u64>,
    /// Deadline of each URL's verification, every fetch of it included (registry,
    /// descriptor, URL.jws, metadata, key sets; default 30 s): the whole command for one URL,
    /// each input of --batch or of a crawl.
    #[arg(long, value_name = "DURATION", value_parser = parse_deadline)]
    pub deadline: Option<u64>,
    /// Share fetched key sets (Web Bot Auth directories, JWK Sets, DID documents, RFC 8414 /
    /// RFC 9728 metadata) with the other verifiers of a fleet through STORE:
    /// redis[s]://[USER:PASS@]HOST:PORT/DB, redis+cluster://HOST:PORT,...,
    /// redis+sentinel://HOST:PORT,.../MASTER (docs/fleet.md). The fleet then asks an origin once
    /// per freshness lifetime; every entry is authenticated with the fleet secret and verified
    /// again on use. STORE unreachable: fetched directly (reported once).
    #[arg(long, allow_hyphen_values = true, value_name = "STORE")]
    pub key_cache: Option<String>,
    /// The fleet secret authenticating --key-cache entries: a file of at least 32 bytes, the
    /// same on every verifier (e.g. `openssl rand -hex 32 > FILE`, mode 0600); or set
    /// AGENTSIG_FLEET_SECRET to the secret itself. Never given on the command line.
    #[arg(long, value_name = "FILE")]
    pub fleet_secret_file: Option<String>,
}

/// A deadline in seconds, at least one.
#[cfg(feature = "net")]
fn parse_deadline(s: &str) -> Result<u64, String> {
    match parse_duration(s)? {
        0 => Err("a deadline must be at least 1 second".into()),
        n => Ok(n),
    }
}

#[cfg(feature = "net")]
impl FetchArgs {
    /// The fetcher these options describe.
    pub fn fetcher(&self) -> Result<Fetcher, CliError> {
        self.fetcher_with(self.policy()?)
    }

    /// A fetcher with `policy` (these options' policy, adjusted) and these
    /// options' fleet cache.
    pub fn fetcher_with(&self, policy: FetchPolicy) -> Result<Fetcher, CliError> {
        let f = Fetcher::with_policy(policy).map_err(|e| CliError::usage(e.to_string()))?;
        Ok(match self.fleet_cache()? {
            Some(fleet) => f.with_fleet_cache(fleet),
            None => f,
        })
    }

    /// The fleet key-set cache of `--key-cache`, with its secret from
    /// `--fleet-secret-file` or the environment.
    fn fleet_cache(&self) -> Result<Option<Arc<FleetCache>>, CliError> {
        let Some(url) = &self.key_cache else {
            if self.fleet_secret_file.is_some() {
                return Err(CliError::usage(
                    "--fleet-secret-file is the secret of --key-cache STORE: give both",
                ));
            }
            return Ok(None);
        };
        let secret = FleetSecret::from_file_or_env(
            self.fleet_secret_file.as_deref().map(std::path::Path::new),
        )
        .map_err(|e| CliError::usage(format!("--key-cache: {e}")))?;
        let fleet = FleetCache::open(url, &secret)
            .map_err(|e| CliError::usage(format!("--key-cache: {e}")))?;
        Ok(Some(Arc::new(fleet)))
    }

    /// The fetch policy these options describe.
    pub fn policy(&self) -> Result<FetchPolicy, CliError> {
        let env_on = std::env::var("AGENTSIG_ALLOW_PRIVATE_NETWORKS")
            .is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        let mut p =
            FetchPolicy::default().allow_private_networks(self.allow_private_networks || env_on);
        let ca = self.ca_file.clone().or_else(|| {
            std::env::var("AGENTSIG_CA_FILE")
                .ok()
                .filter(|s| !s.is_empty())
        });
        if let Some(path) = ca {
            let pem = std::fs::read(&path)
                .map_err(|e| CliError::usage(format!("--ca-file {path}: {e}")))?;
            p = p.extra_root_pem(pem);
        }
        for r in &self.resolve_to {
            let (h, a) = r
                .split_once('=')
                .ok_or_else(|| CliError::usage(format!("--resolve-to {r}: expected HOST=ADDR")))?;
            let ip: IpAddr = a.parse().map_err(|_| {
                CliError::usage(format!("--resolve-to {r}: {a} is not an IP address"))
            })?;
            p = p.pin(h, vec![ip]);
        }
        if let Some(t) = self.timeout {
            let connect = p.connect_timeout;
            p = p.timeouts(connect, Duration::from_secs(t));
        }
        if let Some(d) = self.deadline {
            p = p.operation_timeout(Duration::from_secs(d));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::BoundedLines;
    use std::io::Read;

    fn lines(r: impl std::io::Read + 'static, max: usize) -> Vec<(usize, Result<String, String>)> {
        BoundedLines::new(Box::new(std::io::BufReader::new(r)), max)
            .map(|(n, l)| (n, l.map_err(|e| e.to_string())))
            .collect()
    }

    #[test]
    fn each_line_is_bounded_and_a_long_one_is_skipped_to_its_end() {
        let text = b"a\r\nbbbbbbbbbb\nccccccccccc\n\xff\nlast".to_vec();
        assert_eq!(
            lines(std::io::Cursor::new(text), 10),
            vec![
                (1, Ok("a".into())),
                (2, Ok("bbbbbbbbbb".into())),
                (3, Err("longer than 10 bytes".into())),
                (4, Err("not UTF-8".into())),
                (5, Ok("last".into())),
            ]
        );
        // Ten million bytes without an end of line: one error, and the
        // line after it, read in pieces of the bound.
        let endless = std::io::repeat(b'x')
            .take(10_000_000)
            .chain(std::io::Cursor::new(b"\nok\n".to_vec()));
        assert_eq!(
            lines(endless, 8192),
            vec![
                (1, Err("longer than 8192 bytes".into())),
                (2, Ok("ok".into()))
            ]
        );
    }
}
