//! The site's own authorities: binding a request signature to the site that
//! verifies it.
//!
//! A request signature covers `@authority` (RFC 9421 section 2.2.3) or
//! `@target-uri` (section 2.2.2), whose value the verifier derives from the
//! request it received: its `Host` field or its absolute-form target. A
//! server that answers for a foreign `Host` (a bare axum, hyper or uvicorn
//! app, a default virtual host) therefore rebuilds, for a request an agent
//! signed for site A and replayed at site B with `Host: A`, exactly the
//! base the agent signed: the signature verifies at B. RFC 9421 section
//! 7.2.1 leaves to the application which components bind a signature to its
//! context; a site binds it to itself by naming the authorities it serves
//! and refusing a signature whose covered authority is not one of them,
//! whatever `Host` says.
//!
//! [`SiteAuthorities`] is that choice, made explicitly: the gates
//! (`BotAuthLayer`, `VerifyLayer`, the Python `SignatureMiddleware`,
//! `agentsig http verify`) take one when they are built, so a gate cannot be
//! built that forgets it. [`SiteAuthorities::any`] says, in so many words,
//! that the application itself checks the authority (or serves one site only
//! behind a proxy that refuses every other `Host`).

use super::message::normalize_authority;

/// Longest authority accepted in a configuration (RFC 1035 section 2.3.4
/// names, plus a port).
pub const MAX_AUTHORITY_LEN: usize = 261;

/// Most authorities one gate serves.
pub const MAX_AUTHORITIES: usize = 256;

/// A configured authority is not `host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not an authority (host[:port], RFC 3986 section 3.2): {why}")]
pub struct AuthorityError {
    /// The value as given (its first 128 characters).
    pub value: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// The authorities a site serves, or the explicit choice to accept any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SiteAuthorities {
    /// Only signatures whose covered authority is one of these
    /// (`host[:port]`, lowercase; a scheme's default port matches its
    /// absence, RFC 9421 section 2.2.3).
    Only(Vec<String>),
    /// Any authority: the application checks it itself. A signature made
    /// for another site verifies here when it arrives with that site's
    /// `Host`.
    Any,
}

impl SiteAuthorities {
    /// The authorities this site serves, each `host` or `host:port`
    /// (`example.com`, `api.example.com:8443`, `[2001:db8::1]:443`).
    ///
    /// # Errors
    /// [`AuthorityError`] when the list is empty or longer than
    /// [`MAX_AUTHORITIES`], or an entry has a scheme, a path, a query,
    /// userinfo, a space or control character, a non-ASCII character, an
    /// empty host or a port that is not 1 to 65535.
    ///
    /// ```
    /// use agentsig::httpsig::SiteAuthorities;
    /// let a = SiteAuthorities::only(["Example.COM", "api.example.com:8443"]).unwrap();
    /// assert!(a.admits("example.com", "https"));
    /// assert!(a.admits("example.com:443", "https"));
    /// assert!(!a.admits("evil.example", "https"));
    /// assert!(SiteAuthorities::only(["https://example.com/"]).is_err());
    /// ```
    pub fn only<I, S>(authorities: I) -> Result<SiteAuthorities, AuthorityError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut out: Vec<String> = Vec::new();
        for a in authorities {
            let a = parse_authority(a.as_ref())?;
            if out.len() >= MAX_AUTHORITIES {
                return Err(AuthorityError {
                    value: a,
                    why: "more authorities than one gate serves (256)",
                });
            }
            if !out.contains(&a) {
                out.push(a);
            }
        }
        if out.is_empty() {
            return Err(AuthorityError {
                value: String::new(),
                why: "the list of the site's authorities is empty",
            });
        }
        Ok(SiteAuthorities::Only(out))
    }

    /// Accept a signature whatever authority it covers.
    pub fn any() -> SiteAuthorities {
        SiteAuthorities::Any
    }

    /// The list for a policy ([`HttpPolicy::authorities`](super::HttpPolicy::authorities),
    /// `webbotauth::Policy::authorities`): `None` for [`SiteAuthorities::Any`].
    pub fn to_policy(&self) -> Option<Vec<String>> {
        match self {
            SiteAuthorities::Only(v) => Some(v.clone()),
            SiteAuthorities::Any => None,
        }
    }

    /// Whether a request whose authority is `authority` (as received, for
    /// `scheme`) is one this site serves.
    pub fn admits(&self, authority: &str, scheme: &str) -> bool {
        match self {
            SiteAuthorities::Any => true,
            SiteAuthorities::Only(list) => authority_in(list, authority, scheme),
        }
    }
}

/// Whether `authority` (as received, for `scheme`) is one of `list`
/// (entries as [`SiteAuthorities::only`] keeps them), comparing as RFC 9421
/// section 2.2.3 derives `@authority`: lowercase, the scheme's default port
/// dropped.
pub fn authority_in(list: &[String], authority: &str, scheme: &str) -> bool {
    let got = normalize_authority(authority, scheme);
    list.iter().any(|a| normalize_authority(a, scheme) == got)
}

/// Check and lowercase one configured authority, `host[:port]`.
///
/// # Errors
/// [`AuthorityError`] as [`SiteAuthorities::only`] says.
pub fn parse_authority(value: &str) -> Result<String, AuthorityError> {
    let bad = |why| AuthorityError {
        value: value.chars().take(128).collect(),
        why,
    };
    if value.is_empty() {
        return Err(bad("it is empty"));
    }
    if value.len() > MAX_AUTHORITY_LEN {
        return Err(bad("it is too long"));
    }
    if !value.is_ascii() {
        return Err(bad("it is not ASCII (give an IDN as its A-label, xn--...)"));
    }
    if value.contains("://") {
        return Err(bad("give the authority alone, without a scheme"));
    }
    if value.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(bad("it holds a space or control character"));
    }
    if value.contains(['/', '?', '#']) {
        return Err(bad("give the authority alone, without a path or query"));
    }
    if value.contains(['@', '\\', '%']) {
        return Err(bad(
            "userinfo, backslashes and percent-encoding are not allowed",
        ));
    }
    let v = value.to_ascii_lowercase();
    let (host, port) = if let Some(rest) = v.strip_prefix('[') {
        let (inner, after) = rest
            .split_once(']')
            .ok_or_else(|| bad("unclosed IPv6 literal"))?;
        if inner.is_empty()
            || !inner
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            return Err(bad("not an IPv6 literal"));
        }
        match after {
            "" => (inner, None),
            p => (
                inner,
                Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| bad("junk after the IPv6 literal"))?,
                ),
            ),
        }
    } else {
        match v.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (v.as_str(), None),
        }
    };
    if host.is_empty() {
        return Err(bad("the host is empty"));
    }
    if !v.starts_with('[')
        && !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
    {
        return Err(bad("the host holds a character a host name cannot"));
    }
    if let Some(p) = port {
        match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) && !p.starts_with('0') => {}
            _ => return Err(bad("the port is not a number from 1 to 65535")),
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_authorities_are_checked_and_compared_as_at_authority_is_derived() {
        let a =
            SiteAuthorities::only(["Example.com", "api.example.com:8443", "[::1]:8080"]).unwrap();
        assert!(a.admits("EXAMPLE.com", "https"));
        assert!(a.admits("example.com:443", "https"));
        assert!(!a.admits("example.com:8443", "https"));
        assert!(a.admits("api.example.com:8443", "https"));
        assert!(!a.admits("api.example.com", "https"));
        assert!(a.admits("[::1]:8080", "http"));
        assert!(!a.admits("example.com.evil.example", "https"));
        assert!(!a.admits("evil.example", "https"));
        assert!(SiteAuthorities::any().admits("evil.example", "https"));
        assert_eq!(SiteAuthorities::any().to_policy(), None);
        for bad in [
            "",
            "https://example.com",
            "example.com/",
            "example.com?x",
            "user@example.com",
            "example.com:",
            "example.com:0",
            "example.com:65536",
            "example.com:08",
            "exa mple.com",
            "exämple.com",
            "example.com\\.victim",
            "ex%61mple.com",
            ":443",
            "[::1",
            "[zz]",
        ] {
            assert!(SiteAuthorities::only([bad]).is_err(), "{bad:?} accepted");
        }
        assert!(SiteAuthorities::only(Vec::<String>::new()).is_err());
    }
}
