//! The `pkcs11:` URI (RFC 7512), parsed strictly: the grammar of section
//! 2.3 (attribute names, the characters allowed in path and query values,
//! percent-encoding), each path attribute at most once (section 2.3), and
//! the query attributes agentsig acts on at most once, so a URI never means
//! two things.

use super::Pkcs11Error;

/// The longest URI accepted, in bytes: RFC 7512 sets no bound; real URIs
/// are a few hundred bytes.
pub const MAX_URI: usize = 4096;

/// A parsed RFC 7512 URI: the token and object selection of the path, and
/// the query attributes agentsig uses. Values are percent-decoded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pkcs11Uri {
    /// `token`: the token label (CK_TOKEN_INFO `label`).
    pub token: Option<String>,
    /// `manufacturer`: the token's manufacturer ID.
    pub manufacturer: Option<String>,
    /// `serial`: the token's serial number.
    pub serial: Option<String>,
    /// `model`: the token's model.
    pub model: Option<String>,
    /// `slot-id`: the slot ID (a decimal number, section 2.3).
    pub slot_id: Option<u64>,
    /// `slot-description`: the slot description.
    pub slot_description: Option<String>,
    /// `slot-manufacturer`: the slot manufacturer ID.
    pub slot_manufacturer: Option<String>,
    /// `library-manufacturer`: the module's manufacturer ID.
    pub library_manufacturer: Option<String>,
    /// `library-description`: the module's description.
    pub library_description: Option<String>,
    /// `library-version`: the module's version, `MAJOR[.MINOR]`.
    pub library_version: Option<(u8, u8)>,
    /// `object`: the object label (CKA_LABEL).
    pub object: Option<String>,
    /// `id`: the object ID (CKA_ID), raw bytes after percent-decoding.
    pub id: Option<Vec<u8>>,
    /// `type`: the object class; agentsig takes only `private` (signing
    /// keys), which is also what an absent `type` means here.
    pub object_type: Option<String>,
    /// `pin-source`: where the PIN is read from (a `file:` URI).
    pub pin_source: Option<String>,
    /// `module-path`: the PKCS#11 module to load.
    pub module_path: Option<String>,
    /// `module-name`: a module name without path (section 2.3).
    pub module_name: Option<String>,
}

fn bad(msg: impl Into<String>) -> Pkcs11Error {
    Pkcs11Error::Uri(msg.into())
}

/// RFC 3986 section 2.3 unreserved characters.
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// RFC 7512 section 2.3 `pk11-res-avail`.
fn res_avail(b: u8) -> bool {
    matches!(
        b,
        b':' | b'[' | b']' | b'@' | b'!' | b'$' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b'='
    )
}

/// Percent-decode `v`, allowing only the characters of `pk11-pchar` (path)
/// or `pk11-qchar` (query) unencoded.
fn decode(name: &str, v: &str, query: bool) -> Result<Vec<u8>, Pkcs11Error> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    bad(format!(
                        "{name}: '%' must be followed by two hex digits (RFC 3986 section 2.1)"
                    ))
                })?;
            out.push(hex);
            i += 3;
            continue;
        }
        let ok = unreserved(c)
            || res_avail(c)
            || (!query && c == b'&')
            || (query && matches!(c, b'/' | b'?' | b'|'));
        if !ok {
            return Err(bad(format!(
                "{name}: the character {:?} must be percent-encoded in a {} value (RFC 7512 section 2.3)",
                char::from(c),
                if query { "query" } else { "path" }
            )));
        }
        out.push(c);
        i += 1;
    }
    Ok(out)
}

fn text(name: &str, v: &str, query: bool) -> Result<String, Pkcs11Error> {
    String::from_utf8(decode(name, v, query)?)
        .map_err(|_| bad(format!("{name}: the decoded value is not UTF-8")))
}

fn set<T>(slot: &mut Option<T>, name: &str, v: T) -> Result<(), Pkcs11Error> {
    if slot.is_some() {
        return Err(bad(format!(
            "{name} appears more than once (RFC 7512 section 2.3 allows each attribute once)"
        )));
    }
    *slot = Some(v);
    Ok(())
}

impl Pkcs11Uri {
    /// Parse `s` as an RFC 7512 URI.
    ///
    /// # Errors
    /// [`Pkcs11Error::Uri`] for anything outside the grammar of RFC 7512
    /// section 2.3, a repeated attribute, an attribute agentsig does not
    /// know, or an object `type` other than `private`;
    /// [`Pkcs11Error::PinValueRefused`] for a `pin-value`.
    pub fn parse(s: &str) -> Result<Pkcs11Uri, Pkcs11Error> {
        if s.len() > MAX_URI {
            return Err(bad(format!("longer than {MAX_URI} bytes")));
        }
        // The scheme is case-insensitive (RFC 3986 section 3.1).
        let rest = match s.get(..7) {
            Some(p) if p.eq_ignore_ascii_case("pkcs11:") => &s[7..],
            _ => return Err(bad("it does not start with pkcs11:")),
        };
        if rest.contains('#') {
            return Err(bad("a fragment ('#') is not part of a pkcs11: URI"));
        }
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (rest, None),
        };
        let mut u = Pkcs11Uri::default();
        if !path.is_empty() {
            for attr in path.split(';') {
                u.path_attr(attr)?;
            }
        }
        if let Some(q) = query {
            if !q.is_empty() {
                for attr in q.split('&') {
                    u.query_attr(attr)?;
                }
            }
        }
        if let Some(t) = &u.object_type {
            if t != "private" {
                return Err(bad(format!(
                    "type={t}: a signing key is a private key object, give type=private or no type"
                )));
            }
        }
        Ok(u)
    }

    fn path_attr(&mut self, attr: &str) -> Result<(), Pkcs11Error> {
        if attr.is_empty() {
            return Err(bad("an empty path attribute (a stray ';')"));
        }
        let (name, v) = attr.split_once('=').ok_or_else(|| {
            bad(format!(
                "path attribute {attr:?} has no '=' (RFC 7512 section 2.3)"
            ))
        })?;
        match name {
            "token" => set(&mut self.token, name, text(name, v, false)?),
            "manufacturer" => set(&mut self.manufacturer, name, text(name, v, false)?),
            "serial" => set(&mut self.serial, name, text(name, v, false)?),
            "model" => set(&mut self.model, name, text(name, v, false)?),
            "slot-description" => set(&mut self.slot_description, name, text(name, v, false)?),
            "slot-manufacturer" => set(&mut self.slot_manufacturer, name, text(name, v, false)?),
            "library-manufacturer" => {
                set(&mut self.library_manufacturer, name, text(name, v, false)?)
            }
            "library-description" => {
                set(&mut self.library_description, name, text(name, v, false)?)
            }
            "object" => set(&mut self.object, name, text(name, v, false)?),
            "id" => set(&mut self.id, name, decode(name, v, false)?),
            "slot-id" => {
                // pk11-slot-id = "slot-id" "=" 1*DIGIT
                if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad("slot-id must be a decimal number (RFC 7512 section 2.3)"));
                }
                let n = v
                    .parse::<u64>()
                    .map_err(|_| bad("slot-id is out of range"))?;
                set(&mut self.slot_id, name, n)
            }
            "library-version" => {
                // pk11-lib-ver = "library-version" "=" 1*DIGIT [ "." 1*DIGIT ]
                let (maj, min) = v.split_once('.').unwrap_or((v, "0"));
                let num = |p: &str| {
                    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                        None
                    } else {
                        p.parse::<u8>().ok()
                    }
                };
                let ver = num(maj).zip(num(min)).ok_or_else(|| {
                    bad("library-version must be MAJOR[.MINOR], each 0-255 (RFC 7512 section 2.3)")
                })?;
                set(&mut self.library_version, name, ver)
            }
            "type" => {
                let t = text(name, v, false)?;
                if !matches!(
                    t.as_str(),
                    "public" | "private" | "cert" | "secret-key" | "data"
                ) {
                    return Err(bad(format!(
                        "type={t} is none of public, private, cert, secret-key, data (RFC 7512 section 2.3)"
                    )));
                }
                set(&mut self.object_type, name, t)
            }
            other => Err(bad(format!(
                "unknown path attribute {other:?}: agentsig knows those of RFC 7512 section 2.3 and no vendor attribute"
            ))),
        }
    }

    fn query_attr(&mut self, attr: &str) -> Result<(), Pkcs11Error> {
        if attr.is_empty() {
            return Err(bad("an empty query attribute (a stray '&')"));
        }
        let (name, v) = attr.split_once('=').ok_or_else(|| {
            bad(format!(
                "query attribute {attr:?} has no '=' (RFC 7512 section 2.3)"
            ))
        })?;
        match name {
            "pin-value" => Err(Pkcs11Error::PinValueRefused),
            "pin-source" => set(&mut self.pin_source, name, text(name, v, true)?),
            "module-path" => set(&mut self.module_path, name, text(name, v, true)?),
            "module-name" => set(&mut self.module_name, name, text(name, v, true)?),
            other => Err(bad(format!(
                "unknown query attribute {other:?}: agentsig knows pin-source, module-path and module-name (RFC 7512 section 2.3)"
            ))),
        }
    }

    /// The token and object selection, for messages: the path attributes
    /// that select, never the query (which names the PIN's source).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.token {
            parts.push(format!("token={t:?}"));
        }
        if let Some(t) = &self.serial {
            parts.push(format!("serial={t:?}"));
        }
        if let Some(n) = self.slot_id {
            parts.push(format!("slot-id={n}"));
        }
        if let Some(t) = &self.object {
            parts.push(format!("object={t:?}"));
        }
        if let Some(id) = &self.id {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            parts.push(format!("id={hex}"));
        }
        if parts.is_empty() {
            "the URI (it selects no token or object)".into()
        } else {
            parts.join(" ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_uri_is_decoded() {
        let u = Pkcs11Uri::parse(
            "pkcs11:token=My%20Token;object=sig%3Bkey;id=%01%02%ff;type=private;slot-id=7;library-version=2.6?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/pin",
        )
        .unwrap();
        assert_eq!(u.token.as_deref(), Some("My Token"));
        assert_eq!(u.object.as_deref(), Some("sig;key"));
        assert_eq!(u.id.as_deref(), Some(&[1u8, 2, 0xff][..]));
        assert_eq!(u.slot_id, Some(7));
        assert_eq!(u.library_version, Some((2, 6)));
        assert_eq!(
            u.module_path.as_deref(),
            Some("/usr/lib/softhsm/libsofthsm2.so")
        );
        assert_eq!(u.pin_source.as_deref(), Some("file:/run/pin"));
        // The scheme is case-insensitive; an empty path is valid.
        assert_eq!(Pkcs11Uri::parse("PKCS11:").unwrap(), Pkcs11Uri::default());
    }

    #[test]
    fn pin_value_is_refused_with_the_reason() {
        let e = Pkcs11Uri::parse("pkcs11:token=t?pin-value=1234").unwrap_err();
        assert_eq!(e, Pkcs11Error::PinValueRefused);
        assert!(e.to_string().contains("command line"));
        assert!(!e.to_string().contains("1234"));
    }

    #[test]
    fn malformed_uris_are_refused() {
        for (uri, why) in [
            ("pkcs12:token=t", "pkcs11:"),
            ("pkcs11:token=a;token=b", "more than once"),
            ("pkcs11:token=a/b", "percent-encoded"),
            ("pkcs11:token=a%2", "two hex digits"),
            ("pkcs11:token=a%zz", "two hex digits"),
            ("pkcs11:token", "no '='"),
            ("pkcs11:token=a;;object=b", "empty path attribute"),
            ("pkcs11:x-vendor=1", "unknown path attribute"),
            ("pkcs11:slot-id=-1", "decimal"),
            ("pkcs11:slot-id=99999999999999999999999", "out of range"),
            ("pkcs11:library-version=1.", "MAJOR"),
            ("pkcs11:type=cert", "private key object"),
            ("pkcs11:type=key", "none of"),
            (
                "pkcs11:token=t?module-path=a&module-path=b",
                "more than once",
            ),
            ("pkcs11:token=t?foo=bar", "unknown query attribute"),
            ("pkcs11:token=t?module-path=a b", "percent-encoded"),
            ("pkcs11:token=t#frag", "fragment"),
            ("pkcs11:token=%ff", "UTF-8"),
        ] {
            let e = Pkcs11Uri::parse(uri).unwrap_err().to_string();
            assert!(e.contains(why), "{uri}: {e}");
        }
        let long = format!("pkcs11:object={}", "a".repeat(MAX_URI));
        assert!(Pkcs11Uri::parse(&long).is_err());
    }
}
