//! `verify URL` of an A2A Agent Card (A2A v1.0 section 8.4): the card's own
//! embedded `signatures` are verified with [`Verifier::verify_agent_card_value`](crate::verifier::Verifier::verify_agent_card_value), in
//! addition to any RFC 9421 response signature or detached JWS.
//!
//! Keys for the card come from the caller (`--key`, `--jwks`, a pin store).
//! A `jku` header in a card signature is a key source only when the caller
//! opts in ([`UrlVerifyOptions::follow_jku`](super::verify::UrlVerifyOptions::follow_jku))
//! and only when it is an `https` URL on the card's own origin (scheme,
//! host and port of the URL the card was served from); it is then fetched
//! like any JWK Set, through the SSRF-guarded fetcher, without redirects,
//! with the key-set cache. A cross-origin `jku` is refused
//! ([`DiscoveryError::JkuRefused`](super::discovery::DiscoveryError::JkuRefused)), never fetched (RFC 8725 section 3.10:
//! a key URL nominated by the signer is trusted only as far as its origin
//! is).

use serde_json::Value;

/// The card, when `body` is an A2A Agent Card (format detection of
/// [`crate::formats::detect`]) carrying a non-empty `signatures` array.
pub(crate) fn signed_card(body: &[u8]) -> Option<Value> {
    // Cheap test first: no member named `signatures`, written plainly or
    // with escapes, means nothing to verify (and no second parse).
    // (A body that is not UTF-8 is no card; `str::contains` is a
    // substring search, not a byte-by-byte window compare.)
    let text = std::str::from_utf8(body).ok()?;
    if !text.contains("signatures") && !text.contains("\\u") {
        return None;
    }
    let (format, v) = crate::formats::detect_bytes(body).ok()?;
    if format != crate::formats::Format::A2a {
        return None;
    }
    let signed = v
        .get("signatures")
        .is_some_and(|s| !s.as_array().is_some_and(Vec::is_empty) && !s.is_null());
    signed.then_some(v)
}

/// The origin (`https://host[:port]`, default port omitted) of an https URL.
pub(crate) fn https_origin(u: &str) -> Option<String> {
    let u = url::Url::parse(u).ok()?;
    if u.scheme() != "https" {
        return None;
    }
    Some(u.origin().ascii_serialization())
}

/// The card's origin, for `CardKeys::origin` (in `super::verify`).
pub(crate) fn origin_of(url: &str) -> String {
    https_origin(url).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_card_detection() {
        let card = br#"{"defaultInputModes":["text/plain"],"signatures":[{"protected":"e30","signature":"AA"}]}"#;
        assert!(signed_card(card).is_some());
        // An escaped member name is the same member (RFC 8259 section 7).
        let escaped = br#"{"defaultInputModes":["text/plain"],"sign\u0061tures":[{"protected":"e30","signature":"AA"}]}"#;
        assert!(signed_card(escaped).is_some());
        assert!(signed_card(br#"{"defaultInputModes":["text/plain"],"signatures":[]}"#).is_none());
        assert!(signed_card(br#"{"skills":[],"signatures":[{"protected":"e30"}]}"#).is_none());
        assert!(signed_card(br#"{"defaultInputModes":["text/plain"]}"#).is_none());
    }

    #[test]
    fn origins() {
        assert_eq!(
            https_origin("https://a.example:443/x").as_deref(),
            Some("https://a.example")
        );
        assert_eq!(
            https_origin("https://a.example:8443/x").as_deref(),
            Some("https://a.example:8443")
        );
        assert_eq!(https_origin("http://a.example/x"), None);
        assert_ne!(
            https_origin("https://a.example.evil/x"),
            https_origin("https://a.example/x")
        );
    }
}
