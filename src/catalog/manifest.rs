//! Trust Manifest signatures (AI Catalog "Trust Manifest Signatures"):
//! 1. canonicalize the manifest with RFC 8785, its `signature` member
//!    removed first;
//! 2. sign (or verify) those bytes as the detached payload of a JWS;
//! 3. store the compact serialization (`header..signature`, RFC 7515
//!    Appendix F) in `signature`.
//!
//! The key is one of the manifest `identity`'s ("Key Resolution"): each key
//! request carries the identity as its issuer ([`IdentityKeys`]), and the
//! identity of an entry's manifest must equal the entry's `identifier`
//! ("Identity": consumers MUST reject one that differs).

use super::outcome::{Outcome, Status};
use crate::formats::ArtifactDigest;
use crate::jws::{self, JwsError, JwsPolicy, JwsVerifyError, SignOptions, Verdict};
use crate::keys::SigningKey;
use crate::policy::Context;
use crate::trust::{KeyRequest, KeyResolver, KeySource, ResolveError, TrustedKey};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Why a manifest could not be signed or canonicalized.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest is not a JSON object.
    #[error("a Trust Manifest is a JSON object")]
    NotAnObject,
    /// The manifest has no string `identity` (AI Catalog "Identity": REQUIRED).
    #[error("the Trust Manifest has no string \"identity\" (it is REQUIRED)")]
    NoIdentity,
    /// RFC 8785 canonicalization failed (a number outside I-JSON).
    #[error("the Trust Manifest cannot be canonicalized (RFC 8785): {0}")]
    Canonical(String),
    /// Signing failed.
    #[error("signing the Trust Manifest failed: {0}")]
    Jws(#[from] JwsError),
}

/// The bytes a manifest's signature covers: its RFC 8785 canonical form
/// with the `signature` member removed.
///
/// # Errors
/// [`ManifestError::NotAnObject`], or [`ManifestError::Canonical`] for a
/// value RFC 8785 cannot serialize.
pub fn canonical_manifest(manifest: &Value) -> Result<Vec<u8>, ManifestError> {
    if !manifest.is_object() {
        return Err(ManifestError::NotAnObject);
    }
    // The member is skipped while writing: no copy of the manifest.
    crate::jcs::canonicalize_value_without(manifest, "signature")
        .map_err(|e| ManifestError::Canonical(e.to_string()))
}

/// Sign `manifest` with `key` and store the compact detached JWS in its
/// `signature` member (replacing any); returns the JWS. The protected
/// header carries `alg`, `kid` (the key's, or its RFC 7638 thumbprint) and
/// `typ: JOSE`.
///
/// # Errors
/// [`ManifestError`] when the manifest is not an object, has no `identity`,
/// cannot be canonicalized, or the key cannot sign.
pub fn sign_manifest(manifest: &mut Value, key: &SigningKey) -> Result<String, ManifestError> {
    if !manifest.get("identity").is_some_and(Value::is_string) {
        return Err(if manifest.is_object() {
            ManifestError::NoIdentity
        } else {
            ManifestError::NotAnObject
        });
    }
    let canonical = canonical_manifest(manifest)?;
    let jws = jws::sign_compact_detached(&canonical, key, &SignOptions::default())?;
    if let Some(o) = manifest.as_object_mut() {
        o.insert("signature".into(), Value::String(jws.clone()));
    }
    Ok(jws)
}

/// A new manifest for `identity` (the entry's `identifier`, AI Catalog
/// "Identity"), unsigned.
pub fn new_manifest(identity: &str) -> Value {
    let mut m = Map::new();
    m.insert("identity".into(), Value::String(identity.to_owned()));
    Value::Object(m)
}

/// A resolver that asks `inner` for keys as `identity`'s: every request
/// gets `identity` as its issuer (a [`crate::trust::PerIssuer`] then answers
/// only with that identity's keys; [`crate::trust::StaticKeys`] ignores it).
#[derive(Clone, Debug)]
pub struct IdentityKeys {
    inner: Arc<dyn KeyResolver>,
    identity: String,
}

impl IdentityKeys {
    /// Keys of `inner`, asked for as `identity`'s.
    pub fn new(inner: Arc<dyn KeyResolver>, identity: impl Into<String>) -> IdentityKeys {
        IdentityKeys {
            inner,
            identity: identity.into(),
        }
    }
}

impl KeyResolver for IdentityKeys {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        let mut r = req.clone();
        r.issuer = Some(self.identity.clone());
        self.inner.resolve(&r)
    }
}

/// `cx` whose keys are asked for as `identity`'s.
pub(crate) fn context_for(cx: &Context, identity: &str) -> Context {
    let mut c = cx.clone();
    c.keys = Arc::new(IdentityKeys::new(cx.keys.clone(), identity));
    c
}

/// The declared digests of a manifest (attestations' `digest`, provenance
/// links' `sourceDigest`) that are refused without fetching anything: a
/// malformed one, one weaker than SHA-256 (AI Catalog "Digest Format":
/// consumers MUST reject it), and one of a `data:` attestation (RFC 2397)
/// that does not match its content.
pub(crate) fn digest_refusals(manifest: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let list = |k: &str| {
        crate::json::get(manifest, k)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    for (i, a) in list("attestations").iter().enumerate() {
        let Some(d) = a.get("digest").and_then(Value::as_str) else {
            continue;
        };
        let data = a
            .get("uri")
            .and_then(Value::as_str)
            .and_then(data_uri_content);
        let r = match data {
            Some(Ok(bytes)) => crate::formats::digest_problem(d, &bytes),
            Some(Err(m)) => {
                out.push(format!("attestations/{i}: {m}"));
                continue;
            }
            None => ArtifactDigest::parse(d).map(|_| ()),
        };
        if let Err(p) = r {
            out.push(format!("attestations/{i}/digest: {p}"));
        }
    }
    for (i, p) in list("provenance").iter().enumerate() {
        if let Some(d) = p.get("sourceDigest").and_then(Value::as_str) {
            if let Err(e) = ArtifactDigest::parse(d) {
                out.push(format!("provenance/{i}/sourceDigest: {e}"));
            }
        }
    }
    out
}

/// The content of a `data:` URI (RFC 2397: `data:[<mediatype>][;base64],<data>`),
/// `None` for any other URI.
pub(crate) fn data_uri_content(uri: &str) -> Option<Result<Vec<u8>, String>> {
    let rest = uri
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("data:"))
        .map(|_| &uri[5..])?;
    let Some((meta, data)) = rest.split_once(',') else {
        return Some(Err("a data: URI has no \",\" (RFC 2397 section 3)".into()));
    };
    if meta.to_ascii_lowercase().ends_with(";base64") {
        use base64::Engine;
        let clean: String = data.chars().filter(|c| !c.is_whitespace()).collect();
        return Some(
            base64::engine::general_purpose::STANDARD
                .decode(clean.as_bytes())
                .map_err(|e| format!("the data: URI is not base64: {e}")),
        );
    }
    Some(percent_decode(data))
}

pub(crate) fn percent_decode(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a bad %-escape (RFC 3986 section 2.1)")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// Verify one manifest: `expected_identity` (the entry's `identifier`) must
/// equal its `identity`; its declared digests must be acceptable; its
/// `signature`, when present, must be a compact detached JWS over
/// [`canonical_manifest`] by one of the identity's keys, under `cx`'s
/// algorithm allow-list and `policy`. No signature is [`Status::Unsigned`].
pub(crate) fn verify_manifest(
    cx: &Context,
    policy: &JwsPolicy,
    manifest: &Value,
    expected_identity: Option<&str>,
) -> Outcome {
    let Some(identity) = crate::json::get(manifest, "identity").and_then(Value::as_str) else {
        return Outcome::failed(
            "the Trust Manifest has no string \"identity\" (AI Catalog \"Identity\": REQUIRED)",
        );
    };
    if let Some(expected) = expected_identity {
        if identity != expected {
            return Outcome::failed(format!(
                "the Trust Manifest identity {} differs from the entry identifier {}: consumers MUST reject it (AI Catalog \"Identity\")",
                crate::text::quoted(identity),
                crate::text::quoted(expected)
            ));
        }
    }
    let refusals = digest_refusals(manifest);
    if !refusals.is_empty() {
        return Outcome::failed(format!(
            "declared digest refused (AI Catalog \"Digest Format\"): {}",
            refusals.join("; ")
        ));
    }
    let sig = match crate::json::get(manifest, "signature") {
        None => {
            return Outcome::new(
                Status::Unsigned,
                "the Trust Manifest has no signature: its claims are not integrity-protected",
            )
        }
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Outcome::failed("the Trust Manifest \"signature\" is not a string"),
    };
    let mut shape = sig.split('.');
    let detached = matches!(
        (shape.next(), shape.next(), shape.next(), shape.next()),
        (Some(_), Some(""), Some(_), None)
    );
    if !detached {
        return Outcome::failed(
            "the Trust Manifest signature is not a compact JWS with detached payload (header..signature, RFC 7515 Appendix F)",
        );
    }
    let canonical = match canonical_manifest(manifest) {
        Ok(c) => c,
        Err(e) => return Outcome::failed(e.to_string()),
    };
    // The identity's keys (AI Catalog "Verification Procedures": the key
    // the identity resolves to): the identity is the issuer of the key
    // request, as [`IdentityKeys`] makes it.
    match jws::verify_as(cx, Some(identity), policy, sig, Some(&canonical)) {
        Ok(r) => verified_by(r, |s| {
            signed_by(identity, s.and_then(|s| s.key_source.as_ref()))
        }),
        Err(JwsVerifyError::NotVerified(r)) => {
            let why = r
                .signatures
                .first()
                .map(|s| match &s.reason {
                    Some(reason) => format!("{} ({})", reason, reason.code()),
                    None => s.verdict.as_str().to_owned(),
                })
                .unwrap_or_else(|| "no signature".into());
            let mut o = Outcome::failed(format!(
                "the Trust Manifest signature does not verify with a key of {}: {why}",
                crate::text::quoted(identity)
            ));
            o.kid = r.signatures.first().and_then(|s| s.kid.clone());
            o
        }
        Err(JwsVerifyError::Jws(e)) => {
            Outcome::failed(format!("the Trust Manifest signature is malformed: {e}"))
        }
    }
}

/// A verified outcome of the JWS `r`, its message made from the signature
/// that verified, whose `kid` and key thumbprint it carries.
fn verified_by(
    r: jws::JwsReport,
    message: impl FnOnce(Option<&jws::SignatureReport>) -> String,
) -> Outcome {
    let valid = r
        .signatures
        .into_iter()
        .find(|s| s.verdict == Verdict::Valid);
    let mut o = Outcome::new(Status::Verified, message(valid.as_ref()));
    if let Some(s) = valid {
        o.kid = s.kid;
        o.key_thumbprint = s.key_thumbprint;
    }
    o
}

/// Check `jws`, a detached JWS over the RFC 8785 form of the whole catalog
/// document `catalog` (the form of a descriptor's detached JWS,
/// draft-narvaneni-agent-uri-03 section 10.3; `agentsig sign` writes it as
/// `ai-catalog.json.jws`), with the keys of the catalog's `host.identifier`
/// only (AI Catalog "Host Info": the host identity vouches for the
/// document). By the one verdict rule: verified with a key of the host;
/// not checked when no key of the host matches (or the catalog names no
/// `host.identifier`); failed when it does not verify with a key of the
/// host, or cannot be read.
pub(crate) fn verify_catalog_jws(
    cx: &Context,
    policy: &JwsPolicy,
    catalog: &[u8],
    jws: &str,
) -> Outcome {
    let q = crate::text::quoted;
    let host = crate::json::parse_strict(catalog).ok().and_then(|d| {
        d.get("host")
            .and_then(|h| h.get("identifier"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    let Some(host) = host else {
        return Outcome::new(
            Status::NotChecked,
            "the catalog's detached JWS: the catalog names no host.identifier whose keys could check it: not checked",
        );
    };
    let canonical = match crate::jcs::canonicalize(catalog) {
        Ok(c) => c,
        Err(e) => return Outcome::failed(format!("the catalog's detached JWS: {e}")),
    };
    match jws::verify_as(cx, Some(&host), policy, jws.trim(), Some(&canonical)) {
        Ok(r) => verified_by(r, |_| {
            format!(
                "the catalog's detached JWS verified with a key of host.identifier {}",
                q(&host)
            )
        }),
        Err(JwsVerifyError::NotVerified(r)) => {
            let invalid = r
                .signatures
                .iter()
                .find(|s| s.verdict.status() == crate::policy::SignatureStatus::Invalid);
            let mut o = match invalid {
                Some(s) => Outcome::failed(format!(
                    "the catalog's detached JWS does not verify with a key of host.identifier {}: {}",
                    q(&host),
                    s.reason
                        .as_ref()
                        .map_or_else(|| s.verdict.as_str().to_owned(), |r| format!("{r} ({})", r.code()))
                )),
                None => Outcome::new(
                    Status::NotChecked,
                    format!(
                        "the catalog's detached JWS is by no key of host.identifier {}: not checked",
                        q(&host)
                    ),
                ),
            };
            o.kid = r.signatures.first().and_then(|s| s.kid.clone());
            o
        }
        Err(JwsVerifyError::Jws(e)) => {
            Outcome::failed(format!("the catalog's detached JWS is malformed: {e}"))
        }
    }
}

/// The `relation` of the provenance link agentsig writes to bind an
/// entry's artifact (AI Catalog "Provenance Link Object": a string
/// describing the relationship, `publishedFrom` among its examples): the
/// entry is published from the artifact the link names.
pub const BINDING_RELATION: &str = "publishedFrom";

/// SHA-256 of `bytes` in the catalog's digest format (AI Catalog "Digest
/// Format": `sha256:` and lowercase hex).
pub fn sha256_digest(bytes: &[u8]) -> String {
    sha256_format(ring::digest::digest(&ring::digest::SHA256, bytes).as_ref())
}

/// A SHA-256 hash as `sha256:` and lowercase hex.
pub(crate) fn sha256_format(hash: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(7 + 2 * hash.len());
    s.push_str("sha256:");
    for b in hash {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The digest that binds inline `data` to its entry's manifest: SHA-256 of
/// its RFC 8785 canonical form (the form the manifest signature itself
/// uses, so the digest survives re-indenting and member reordering).
///
/// # Errors
/// [`ManifestError::Canonical`] for a value RFC 8785 cannot serialize.
pub fn inline_data_digest(data: &Value) -> Result<String, ManifestError> {
    let c = crate::jcs::canonicalize_value(data)
        .map_err(|e| ManifestError::Canonical(e.to_string()))?;
    Ok(sha256_digest(&c))
}

/// Bind the inline `data` of the entry `identifier` to its manifest `m`:
/// the provenance link whose `sourceId` is `identifier` gets `sourceDigest`
/// = [`inline_data_digest`], made (relation [`BINDING_RELATION`]) when
/// there is none. A verifier then refuses the manifest over any other
/// `data` (AI Catalog "Verifying Artifact Integrity").
///
/// # Errors
/// [`ManifestError`] when `m` is not an object or `data` cannot be
/// canonicalized.
pub fn bind_inline_data(
    m: &mut Value,
    identifier: &str,
    data: &Value,
) -> Result<(), ManifestError> {
    let digest = inline_data_digest(data)?;
    set_source_digest(m, identifier, digest)
}

/// Set `sourceDigest` of every provenance link of `m` whose `sourceId` is
/// `source`, adding one link when there is none.
pub(crate) fn set_source_digest(
    m: &mut Value,
    source: &str,
    digest: String,
) -> Result<(), ManifestError> {
    let obj = m.as_object_mut().ok_or(ManifestError::NotAnObject)?;
    let links = obj
        .entry("provenance")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(links) = links.as_array_mut() else {
        return Err(ManifestError::Canonical(
            "its \"provenance\" is not an array".into(),
        ));
    };
    let mut found = false;
    for l in links.iter_mut() {
        if l.get("sourceId").and_then(Value::as_str) == Some(source) {
            if let Some(o) = l.as_object_mut() {
                o.insert("sourceDigest".into(), Value::String(digest.clone()));
                found = true;
            }
        }
    }
    if !found {
        let mut l = Map::new();
        l.insert("relation".into(), Value::String(BINDING_RELATION.into()));
        l.insert("sourceId".into(), Value::String(source.to_owned()));
        l.insert("sourceDigest".into(), Value::String(digest));
        links.push(Value::Object(l));
    }
    Ok(())
}

/// Whose key verified a manifest: the identity's own (resolved from it, or
/// carried by a `did:key`/`did:jwk`), or a key the caller gave, trusted for
/// every identity, whose source is named (the identity was then not
/// resolved, and the report must not say the key is the identity's).
fn signed_by(identity: &str, source: Option<&KeySource>) -> String {
    let q = crate::text::quoted;
    match source {
        Some(s @ (KeySource::Jwks(_) | KeySource::File(_))) => format!(
            "Trust Manifest signed by a key of the {s} given by the caller (trusted for every identity; {} was not resolved)",
            q(identity)
        ),
        Some(KeySource::Pinned) => format!(
            "Trust Manifest signed by a key given by the caller (trusted for every identity; {} was not resolved)",
            q(identity)
        ),
        _ => format!("Trust Manifest signed by a key of {}", q(identity)),
    }
}

/// Keys given by the caller (`--key`, `--jwks`: trusted for every identity
/// of a catalog, in place of resolving them), except for identities that
/// carry their key: a `did:key` or `did:jwk` identity is answered with the
/// key its DID encodes, and only that key (did:key Method "Read", did:jwk
/// Method "Read": resolution is decoding, no I/O). Given keys replace
/// network resolution, not a self-certifying identifier.
#[derive(Clone, Debug)]
pub struct SelfCertifyingKeys {
    given: Arc<dyn KeyResolver>,
}

impl SelfCertifyingKeys {
    /// `given` for every identity but `did:key` and `did:jwk` ones.
    pub fn new(given: Arc<dyn KeyResolver>) -> SelfCertifyingKeys {
        SelfCertifyingKeys { given }
    }
}

impl KeyResolver for SelfCertifyingKeys {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        let Some(did) = req.issuer.as_deref() else {
            return self.given.resolve(req);
        };
        let did = did.split('#').next().unwrap_or(did);
        let key = if did.starts_with("did:key:") {
            crate::did::decode_did_key(did)
        } else if did.starts_with("did:jwk:") {
            crate::did::decode_did_jwk(did)
        } else {
            return self.given.resolve(req);
        };
        let key = key.map_err(|e| ResolveError::discovery(format!("{did}: {e}")))?;
        Ok(vec![TrustedKey::new(
            key,
            KeySource::Discovered(did.to_owned()),
        )])
    }
}

/// Which Trust Manifests of a catalog [`sign_catalog`] signs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignTarget {
    /// Every entry of the catalog (not those of nested inline catalogs:
    /// their publisher signs them).
    Every,
    /// The entries with this `identifier`, and this `version` when given.
    Entry {
        /// The entry's `identifier`.
        identifier: String,
        /// Its `version`; needed when several entries share the identifier.
        version: Option<String>,
    },
    /// The `host` object's manifest.
    Host,
}

/// Why [`sign_catalog`] signed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignCatalogError {
    /// The document is not a catalog object with an `entries` array.
    #[error("not an AI Catalog: a JSON object with an \"entries\" array is expected")]
    NotACatalog,
    /// No entry has that identifier (and version).
    #[error("no entry has identifier {q0}{q1}", q0 = crate::text::quoted(.0), q1 = .1.as_deref().map(|v| format!(" and version {}", crate::text::quoted(v))).unwrap_or_default())]
    NoSuchEntry(String, Option<String>),
    /// Several entries share the identifier and no version was given.
    #[error("{1} entries have identifier {q0}: give --version to choose one", q0 = crate::text::quoted(.0))]
    Ambiguous(String, usize),
    /// `--host` on a catalog without `host`, or a host without `identifier`
    /// and without a manifest naming its identity.
    #[error("the catalog has no host, or its host has no \"identifier\" to make the manifest's identity from: add host.identifier")]
    NoHostIdentity,
    /// An entry without a string `identifier`.
    #[error("entry {0} has no string \"identifier\", so its manifest has no identity")]
    NoIdentifier(usize),
    /// An existing manifest whose identity is not the entry's identifier:
    /// signing it would publish a manifest every consumer MUST reject.
    #[error("entry {0}: its Trust Manifest identity {q1} is not the entry identifier {q2} (AI Catalog \"Identity\"); fix the manifest", q1 = crate::text::quoted(.1), q2 = crate::text::quoted(.2))]
    IdentityMismatch(usize, String, String),
    /// A URL whose declared digest is to be filled maps to no readable
    /// file ([`super::digests`]).
    #[error("{pointer}: {url} maps to {path}, which cannot be read ({why}): add the file, or correct the URL or the --digest-from mapping", url = crate::text::quoted(.url), path = crate::text::quoted(&.path.display().to_string()))]
    DigestFile {
        /// RFC 6901 pointer of the member that declares the digest.
        pointer: String,
        /// The URL referenced there.
        url: String,
        /// The local file it maps to.
        path: std::path::PathBuf,
        /// Why it cannot be read.
        why: String,
    },
    /// A URL whose declared digest is to be filled cannot name a file under
    /// the mapped directory (a `..` segment, a directory, a bad escape).
    #[error("{pointer}: {url} names no file under the --digest-from directory: {why}", url = crate::text::quoted(.url))]
    DigestUrl {
        /// RFC 6901 pointer of the member that declares the digest.
        pointer: String,
        /// The URL referenced there.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// Signing one manifest failed.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
}

/// The indexes of the entries `target` names: every entry, or the one
/// entry with the identifier (and version).
///
/// # Errors
/// [`SignCatalogError::NoSuchEntry`] or [`SignCatalogError::Ambiguous`].
pub(crate) fn chosen_entries(
    entries: &[Value],
    target: &SignTarget,
) -> Result<Vec<usize>, SignCatalogError> {
    let SignTarget::Entry {
        identifier,
        version,
    } = target
    else {
        return Ok((0..entries.len()).collect());
    };
    let hits: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.get("identifier").and_then(Value::as_str) == Some(identifier))
        .filter(|(_, e)| {
            version.is_none() || e.get("version").and_then(Value::as_str) == version.as_deref()
        })
        .map(|(i, _)| i)
        .collect();
    match hits.len() {
        0 => Err(SignCatalogError::NoSuchEntry(
            identifier.clone(),
            version.clone(),
        )),
        1 => Ok(hits),
        n => Err(SignCatalogError::Ambiguous(identifier.clone(), n)),
    }
}

/// Sign the Trust Manifests `target` names in `doc`, creating a missing
/// manifest with `identity` = the entry's `identifier` (or the host's
/// `identifier`); returns the RFC 6901 pointers of the manifests signed.
/// `doc` is changed only when every signature was made.
///
/// # Errors
/// [`SignCatalogError`].
pub fn sign_catalog(
    doc: &mut Value,
    key: &SigningKey,
    target: &SignTarget,
) -> Result<Vec<String>, SignCatalogError> {
    let mut work = doc.clone();
    let mut signed = Vec::new();
    if *target == SignTarget::Host {
        let host = work
            .get_mut("host")
            .and_then(Value::as_object_mut)
            .ok_or(SignCatalogError::NoHostIdentity)?;
        if !host.contains_key("trustManifest") {
            let id = host
                .get("identifier")
                .and_then(Value::as_str)
                .ok_or(SignCatalogError::NoHostIdentity)?;
            host.insert("trustManifest".into(), new_manifest(id));
        }
        if let Some(m) = host.get_mut("trustManifest") {
            sign_manifest(m, key)?;
        }
        signed.push("/host/trustManifest".to_owned());
        *doc = work;
        return Ok(signed);
    }
    let entries = work
        .get_mut("entries")
        .and_then(Value::as_array_mut)
        .ok_or(SignCatalogError::NotACatalog)?;
    let chosen = chosen_entries(entries, target)?;
    for i in chosen {
        let Some(entry) = entries.get_mut(i).and_then(Value::as_object_mut) else {
            return Err(SignCatalogError::NoIdentifier(i));
        };
        let id = entry
            .get("identifier")
            .and_then(Value::as_str)
            .ok_or(SignCatalogError::NoIdentifier(i))?
            .to_owned();
        // Inline `data` (not a nested catalog, whose entries carry their
        // own manifests) is bound by a digest of it ([`bind_inline_data`]).
        let data = entry
            .get("data")
            .filter(|_| {
                !crate::formats::entry_media_type(entry)
                    .ok()
                    .flatten()
                    .is_some_and(|mt| super::media_type_is(mt, super::MEDIA_TYPE))
            })
            .cloned();
        let m = entry
            .entry("trustManifest")
            .or_insert_with(|| new_manifest(&id));
        match m.get("identity").and_then(Value::as_str) {
            Some(identity) if identity != id => {
                return Err(SignCatalogError::IdentityMismatch(
                    i,
                    identity.to_owned(),
                    id,
                ))
            }
            _ => {}
        }
        if let Some(data) = data.as_ref() {
            bind_inline_data(m, &id, data)?;
        }
        sign_manifest(m, key)?;
        signed.push(format!("/entries/{i}/trustManifest"));
    }
    *doc = work;
    Ok(signed)
}
