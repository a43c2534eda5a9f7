//! Keys for a catalog's Trust Manifests, resolved from each manifest's
//! `identity` (AI Catalog "Key Resolution"):
//!
//! * a DID (`did:key`, `did:jwk`, `did:web`): its DID document's
//!   `verificationMethod` keys, through [`Discovery`] with
//!   [`KeyAuthority::Did`] (did:web fetched through the SSRF-guarded
//!   [`Fetcher`]);
//! * an `https:` URL: the JWK Set at that URL, the key chosen by the JWS
//!   `kid` ([`KeyAuthority::JwksUri`]);
//! * SPIFFE IDs and DNS names (and any other scheme): agentsig has no way to
//!   obtain their keys, so a signed manifest with such an identity is
//!   reported [`Status::Unsupported`], never passed.
//!
//! Each identity's keys are bound to it ([`PerIssuer`]): a manifest signed
//! with another identity's key does not verify. Keys are fetched lazily,
//! only for manifests that carry a signature.

use super::discovery::{Discovery, KeyAuthority};
use super::fetch::Fetcher;
use crate::catalog::{CatalogError, CatalogOptions, CatalogReport, Outcome, Status};
use crate::trust::PerIssuer;
use crate::verifier::Verifier;
use serde_json::Value;
use std::collections::BTreeMap;

/// How the keys of a manifest `identity` are found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdentityKeys {
    /// A DID: its DID document.
    Did,
    /// An `https:` URL: the JWK Set there.
    JwksUrl,
    /// No way agentsig supports; the text says which and why.
    Unsupported(String),
}

/// Classify a manifest `identity` by its URI scheme (AI Catalog "Key
/// Resolution"), with `identityType` as a hint for `dns`.
pub fn identity_keys(identity: &str, identity_type: Option<&str>) -> IdentityKeys {
    let lower = identity.to_ascii_lowercase();
    if identity_type.is_some_and(|t| t.eq_ignore_ascii_case("dns")) {
        return IdentityKeys::Unsupported(
            "a DNS identity's key (TLS certificate, DNSKEY or TXT record) cannot be resolved by agentsig".into(),
        );
    }
    if lower.starts_with("did:") {
        IdentityKeys::Did
    } else if lower.starts_with("https://") {
        IdentityKeys::JwksUrl
    } else if lower.starts_with("spiffe://") {
        IdentityKeys::Unsupported(
            "a SPIFFE ID's key comes from the SPIFFE Workload API, which agentsig does not use"
                .into(),
        )
    } else {
        IdentityKeys::Unsupported(format!(
            "{} names no key source agentsig can resolve (a DID or an https JWK Set URL); give the keys with --key or --jwks",
            crate::text::quoted(identity)
        ))
    }
}

fn add_identity(m: Option<&Value>, out: &mut BTreeMap<String, Option<String>>) {
    if let Some(id) = m.and_then(|m| m.get("identity")).and_then(Value::as_str) {
        let t = m
            .and_then(|m| m.get("identityType"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        out.entry(id.to_owned()).or_insert(t);
    }
}

/// Every Trust Manifest `(identity, identityType)` of a catalog: the host's
/// and each entry's, in nested inline catalogs too (to `max_depth` levels).
fn manifest_identities(
    doc: &Value,
    depth: usize,
    max_depth: usize,
    out: &mut BTreeMap<String, Option<String>>,
) {
    add_identity(doc.get("host").and_then(|h| h.get("trustManifest")), out);
    let Some(entries) = doc.get("entries").and_then(Value::as_array) else {
        return;
    };
    for e in entries {
        add_identity(e.get("trustManifest"), out);
        if depth < max_depth {
            if let Some(data) = e.get("data").filter(|d| d.get("entries").is_some()) {
                manifest_identities(data, depth + 1, max_depth, out);
            }
        }
    }
}

/// Verify a catalog document, each manifest's key resolved from its
/// `identity` through `fetcher`; `base` gives the algorithm allow-list and
/// the JWS policy, limits and ECDSA low-S setting (its own keys are not
/// used).
///
/// # Errors
/// [`CatalogError`] when the document is too large or not strict JSON.
pub fn verify_catalog_resolved(
    base: &Verifier,
    fetcher: &Fetcher,
    catalog: &[u8],
    opts: &CatalogOptions,
) -> Result<CatalogReport, CatalogError> {
    let doc = crate::catalog::verify::parse_catalog(catalog, opts)?;
    let mut ids = BTreeMap::new();
    manifest_identities(&doc, 1, opts.max_depth, &mut ids);
    let mut per = PerIssuer::new();
    let mut unsupported = BTreeMap::new();
    for (id, t) in &ids {
        match identity_keys(id, t.as_deref()) {
            IdentityKeys::Did => per.insert(
                id.clone(),
                Discovery::new(fetcher.clone(), KeyAuthority::Did(id.clone())),
            ),
            IdentityKeys::JwksUrl => per.insert(
                id.clone(),
                Discovery::new(fetcher.clone(), KeyAuthority::JwksUri(id.clone())),
            ),
            IdentityKeys::Unsupported(why) => {
                unsupported.insert(id.clone(), why);
            }
        }
    }
    let v = Verifier::builder(per)
        .algorithms(base.algorithms().clone())
        .jws(base.jws_policy().clone())
        .limits(*base.limits())
        .strict_low_s(base.strict_low_s())
        .key_headers(base.key_headers())
        .build();
    let mut report = v.verify_catalog(catalog, opts)?;
    // A signed manifest whose identity's keys cannot be resolved is
    // unsupported, not merely "no trusted key".
    let patch = |o: &mut Outcome, identity: Option<&str>| {
        if o.status != Status::Failed {
            return;
        }
        if let Some(why) = identity.and_then(|i| unsupported.get(i)) {
            if o.message.contains("does not verify with a key of") {
                *o = Outcome::new(
                    Status::Unsupported,
                    format!("Trust Manifest key resolution: {why}"),
                );
            }
        }
    };
    let host_identity = doc
        .get("host")
        .and_then(|h| h.get("trustManifest"))
        .and_then(|m| m.get("identity"))
        .and_then(Value::as_str);
    if let Some(h) = report.host.as_mut() {
        patch(h, host_identity);
    }
    for e in &mut report.entries {
        let id = e.identifier.clone();
        patch(&mut e.manifest, id.as_deref());
    }
    Ok(report)
}
