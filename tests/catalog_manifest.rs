//! Trust Manifests (AI Catalog "Trust Manifest Signatures", "Identity",
//! "Digest Format") and whole catalogs: signed and verified, and each
//! refusal the text calls for.

use agentsig::catalog::{self, CatalogOptions, Status};
use agentsig::trust::{KeySource, PerIssuer, StaticKeys};
use agentsig::{Algorithm, SigningKey, Verifier};
use base64::Engine;
use serde_json::{json, Value};

const A: &str = "urn:example:agent:a";
const B: &str = "urn:example:agent:b";

fn key(kid: &str) -> SigningKey {
    SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid(kid)
}

/// A verifier whose keys are bound per identity: `A` has `ka`, `B` has `kb`.
fn verifier(ka: &SigningKey, kb: &SigningKey) -> Verifier {
    let per = PerIssuer::new()
        .with(
            A,
            StaticKeys::new().with(ka.verifying_key().clone(), KeySource::Jwks("a.jwks".into())),
        )
        .with(
            B,
            StaticKeys::new().with(kb.verifying_key().clone(), KeySource::Jwks("b.jwks".into())),
        );
    Verifier::builder(per).build()
}

fn manifest(identity: &str) -> Value {
    json!({
        "identity": identity,
        "attestations": [{"type": "SOC2-Type2", "uri": "data:text/plain,audited", "mediaType": "text/plain",
            "digest": format!("sha256:{}", sha256_hex(b"audited"))}],
        "provenance": [{"relation": "publishedFrom", "sourceId": "https://github.com/example/a"}]
    })
}

fn sha256_hex(b: &[u8]) -> String {
    agentsig::descriptor::sha256_hex(b)
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

#[test]
fn a_signed_manifest_verifies_with_its_identity_key() {
    let (ka, kb) = (key("a1"), key("b1"));
    let mut m = manifest(A);
    let jws = catalog::sign_manifest(&mut m, &ka).expect("sign");
    assert_eq!(m["signature"], jws);
    let parts: Vec<&str> = jws.split('.').collect();
    assert_eq!(parts.len(), 3);
    assert!(parts[1].is_empty(), "detached payload");
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[0])
            .expect("b64"),
    )
    .expect("json");
    assert_eq!(header["kid"], "a1");
    assert_eq!(header["alg"], "ES256");
    let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(A));
    assert_eq!(o.status, Status::Verified, "{}", o.message);
    assert_eq!(o.kid.as_deref(), Some("a1"));
    assert!(o.key_thumbprint.is_some());
}

#[test]
fn refused_when_the_identity_differs_from_the_identifier() {
    let (ka, kb) = (key("a1"), key("b1"));
    let mut m = manifest(A);
    catalog::sign_manifest(&mut m, &ka).expect("sign");
    let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(B));
    assert_eq!(o.status, Status::Failed);
    assert!(
        o.message.contains("differs from the entry identifier"),
        "{}",
        o.message
    );
}

#[test]
fn refused_when_the_manifest_changed_after_signing() {
    let (ka, kb) = (key("a1"), key("b1"));
    let mut m = manifest(A);
    catalog::sign_manifest(&mut m, &ka).expect("sign");
    m["privacyPolicyUrl"] = json!("https://evil.example/privacy");
    let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(A));
    assert_eq!(o.status, Status::Failed, "{}", o.message);
    assert!(o.message.contains("(signature-mismatch)"), "{}", o.message);
    assert!(o.message.contains("does not verify"), "{}", o.message);
}

/// A signer that canonicalized the manifest with its `signature` member
/// still in it signed other bytes: refused.
#[test]
fn refused_when_the_signature_member_was_not_removed_before_canonicalizing() {
    let (ka, kb) = (key("a1"), key("b1"));
    let mut m = manifest(A);
    m["signature"] = json!("");
    let wrong = agentsig::jcs::canonicalize_value(&m).expect("jcs");
    let jws = agentsig::jws::sign_compact_detached(&wrong, &ka, &Default::default()).expect("sign");
    m["signature"] = json!(jws);
    let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(A));
    assert_eq!(o.status, Status::Failed, "{}", o.message);
    assert!(o.message.contains("(signature-mismatch)"), "{}", o.message);
    // The same key over the right bytes verifies: only the bytes differ.
    catalog::sign_manifest(&mut m, &ka).expect("sign");
    assert_eq!(
        verifier(&ka, &kb).verify_trust_manifest(&m, Some(A)).status,
        Status::Verified
    );
}

/// B's key (from B's JWK Set) signing A's manifest: A's keys do not
/// include it, even with B's `kid`.
#[test]
fn refused_with_a_key_from_another_identitys_jwk_set() {
    let (ka, kb) = (key("a1"), key("b1"));
    let mut m = manifest(A);
    catalog::sign_manifest(&mut m, &kb).expect("sign");
    let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(A));
    assert_eq!(o.status, Status::Failed, "{}", o.message);
    assert!(o.message.contains("(no-trusted-key)"), "{}", o.message);
    // And with a kid equal to A's: still not A's key.
    let kb_as_a1 = key("a1");
    catalog::sign_manifest(&mut m, &kb_as_a1).expect("sign");
    assert_eq!(
        verifier(&ka, &kb).verify_trust_manifest(&m, Some(A)).status,
        Status::Failed
    );
}

fn forged(m: &Value, header: Value, sig: &[u8]) -> Value {
    let mut m = m.clone();
    m["signature"] = json!(format!(
        "{}..{}",
        b64(header.to_string().as_bytes()),
        b64(sig)
    ));
    m
}

#[test]
fn refused_alg_none() {
    let (ka, kb) = (key("a1"), key("b1"));
    let m = forged(&manifest(A), json!({"alg": "none", "kid": "a1"}), b"x");
    let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(A));
    assert_eq!(o.status, Status::Failed, "{}", o.message);
    assert!(o.message.contains("(alg-none)"), "{}", o.message);
    // The empty signature of a real `alg: none` JWS is not even the form.
    let mut m2 = manifest(A);
    m2["signature"] = json!(format!("{}..", b64(br#"{"alg":"none"}"#)));
    assert_eq!(
        verifier(&ka, &kb)
            .verify_trust_manifest(&m2, Some(A))
            .status,
        Status::Failed
    );
}

/// The key-confusion attack: HMAC-SHA256 keyed with A's public key.
#[test]
fn refused_hs256_with_a_public_key() {
    let (ka, kb) = (key("a1"), key("b1"));
    let m = manifest(A);
    let header = json!({"alg": "HS256", "kid": "a1"});
    let canonical = catalog::canonical_manifest(&m).expect("jcs");
    let si = format!("{}.{}", b64(header.to_string().as_bytes()), b64(&canonical));
    let public = agentsig::jwk::jwks_document(&[ka.verifying_key()]).to_string();
    let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, public.as_bytes());
    let tag = ring::hmac::sign(&k, si.as_bytes());
    let m = forged(&m, header, tag.as_ref());
    let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(A));
    assert_eq!(o.status, Status::Failed, "{}", o.message);
    assert!(o.message.contains("(alg-not-allowed)"), "{}", o.message);
}

/// A's own key material, announced under a `kid` A's key set does not
/// have: refused (the `kid` selects; it is never ignored).
#[test]
fn refused_unknown_kid() {
    let seed = [7u8; 32];
    let ka = SigningKey::from_ed25519_seed(&seed)
        .expect("seed")
        .with_kid("a1");
    let renamed = SigningKey::from_ed25519_seed(&seed)
        .expect("seed")
        .with_kid("a-unknown");
    let kb = key("b1");
    let mut m = manifest(A);
    catalog::sign_manifest(&mut m, &renamed).expect("sign");
    let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(A));
    assert_eq!(o.status, Status::Failed, "{}", o.message);
    assert!(o.message.contains("(no-trusted-key)"), "{}", o.message);
    assert_eq!(o.kid.as_deref(), Some("a-unknown"));
    catalog::sign_manifest(&mut m, &ka).expect("sign");
    assert_eq!(
        verifier(&ka, &kb).verify_trust_manifest(&m, Some(A)).status,
        Status::Verified
    );
}

#[test]
fn refused_md5_and_sha1_digests() {
    let (ka, kb) = (key("a1"), key("b1"));
    for d in [
        "md5:d41d8cd98f00b204e9800998ecf8427e",
        "sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709",
    ] {
        let mut m = manifest(A);
        m["provenance"][0]["sourceDigest"] = json!(d);
        catalog::sign_manifest(&mut m, &ka).expect("sign");
        let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(A));
        assert_eq!(o.status, Status::Failed, "{d}");
        assert!(o.message.contains("weaker than SHA-256"), "{}", o.message);
    }
}

#[test]
fn refused_a_digest_that_does_not_match() {
    let (ka, kb) = (key("a1"), key("b1"));
    let mut m = manifest(A);
    m["attestations"][0]["uri"] = json!("data:text/plain,tampered");
    catalog::sign_manifest(&mut m, &ka).expect("sign");
    let o = verifier(&ka, &kb).verify_trust_manifest(&m, Some(A));
    assert_eq!(o.status, Status::Failed);
    assert!(o.message.contains("not the declared"), "{}", o.message);
    // The base64 form of the right content matches.
    m["attestations"][0]["uri"] = json!(format!(
        "data:text/plain;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(b"audited")
    ));
    catalog::sign_manifest(&mut m, &ka).expect("sign");
    assert_eq!(
        verifier(&ka, &kb).verify_trust_manifest(&m, Some(A)).status,
        Status::Verified
    );
}

fn signed_entry(identifier: &str, version: &str, k: &SigningKey) -> Value {
    let mut m = catalog::manifest::new_manifest(identifier);
    catalog::sign_manifest(&mut m, k).expect("sign");
    json!({
        "identifier": identifier, "displayName": "X", "version": version,
        "mediaType": "application/agentskill+zip", "url": "https://example.com/x.zip",
        "trustManifest": m
    })
}

#[test]
fn refused_duplicate_identifier_and_version() {
    let (ka, kb) = (key("a1"), key("b1"));
    let v = verifier(&ka, &kb);
    let ok = json!({"specVersion": "1.0", "entries": [signed_entry(A, "1", &ka), signed_entry(A, "2", &ka)]});
    let r = v
        .verify_catalog(ok.to_string().as_bytes(), &CatalogOptions::default())
        .expect("read");
    assert!(r.verified(), "{:?}", r.first_failure());
    let dup = json!({"specVersion": "1.0", "entries": [signed_entry(A, "1", &ka), signed_entry(A, "1", &ka)]});
    let r = v
        .verify_catalog(dup.to_string().as_bytes(), &CatalogOptions::default())
        .expect("read");
    assert!(!r.verified());
    assert!(r
        .first_failure()
        .expect("why")
        .contains("catalog/duplicate"));
}

#[test]
fn refused_a_10_mb_catalog_before_parsing() {
    let (ka, kb) = (key("a1"), key("b1"));
    let mut big = br#"{"specVersion":"1.0","entries":[],"metadata":{"pad":""#.to_vec();
    big.resize(10 * 1000 * 1000, b'a');
    big.extend_from_slice(br#""}}"#);
    let e = verifier(&ka, &kb)
        .verify_catalog(&big, &CatalogOptions::default())
        .expect_err("too large");
    assert!(matches!(e, catalog::CatalogError::TooLarge { .. }), "{e}");
    assert!(e.to_string().contains("limit"), "{e}");
}

#[test]
fn a_higher_major_version_is_not_verified() {
    let (ka, kb) = (key("a1"), key("b1"));
    let doc = json!({"specVersion": "2.0", "entries": [signed_entry(A, "1", &ka)]});
    let r = verifier(&ka, &kb)
        .verify_catalog(doc.to_string().as_bytes(), &CatalogOptions::default())
        .expect("read");
    assert!(!r.verified());
    assert!(r
        .first_failure()
        .expect("why")
        .contains("catalog/major-unsupported"));
}

/// Inline artifacts are checked by their own rules: a signed A2A card by
/// its signature, an MCP Server Card by lint; an unknown type is "not
/// checked" and does not fail; `--require-signed` needs a manifest on each.
#[test]
fn inline_artifacts_by_media_type_and_require_signed() {
    let (ka, kb) = (key("a1"), key("b1"));
    let card = json!({"name": "Planner", "description": "plans",
        "supportedInterfaces": [{"url": "https://planner.example/a2a", "protocolBinding": "JSONRPC"}],
        "version": "1.0.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": []});
    let signed =
        agentsig::a2a::sign_card(&card, &ka, &serde_json::Map::new(), false).expect("card");
    let mcp = json!({"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": "com.example/w", "version": "1.0.0", "description": "W"});
    let mut m_a = catalog::manifest::new_manifest(A);
    catalog::sign_manifest(&mut m_a, &ka).expect("sign");
    let mut m_b = catalog::manifest::new_manifest(B);
    catalog::sign_manifest(&mut m_b, &kb).expect("sign");
    let doc = json!({"specVersion": "1.0", "entries": [
        {"identifier": A, "displayName": "Planner", "mediaType": "application/a2a-agent-card+json",
         "data": signed.card, "trustManifest": m_a},
        {"identifier": B, "displayName": "W", "type": "application/mcp-server-card+json", "data": mcp, "trustManifest": m_b},
        {"identifier": "urn:x", "displayName": "Z", "mediaType": "application/zip", "url": "https://example.com/z.zip"}
    ]});
    let v = verifier(&ka, &kb);
    let r = v
        .verify_catalog(doc.to_string().as_bytes(), &CatalogOptions::default())
        .expect("read");
    assert!(r.verified(), "{:?}", r.first_failure());
    let st: Vec<(Status, Status)> = r
        .entries
        .iter()
        .map(|e| (e.artifact.status, e.manifest.status))
        .collect();
    assert_eq!(
        st,
        vec![
            (Status::Verified, Status::Verified),
            // An inline MCP Server Card lints clean but carries no
            // signature of its own: unsigned, never "verified".
            (Status::Unsigned, Status::Verified),
            (Status::NotChecked, Status::Unsigned)
        ]
    );
    let r = v
        .verify_catalog(
            doc.to_string().as_bytes(),
            &CatalogOptions::default().require_signed(true),
        )
        .expect("read");
    assert!(!r.verified());
    // The inline MCP Server Card's manifest verifies but declares no digest
    // of it: nothing signed covers the card, so it is unbound.
    let why = r.first_failure().expect("why");
    assert!(
        why.contains("/entries/1") && why.contains("unbound"),
        "{why}"
    );
    assert_eq!(r.failure_code(), Some("catalog.unbound"));
    assert_eq!((r.counts().bound, r.counts().unbound), (1, 2));
    // Bound by the digest its manifest declares, it passes; the opaque
    // entry without a manifest still does not.
    let mut bound = doc.clone();
    let mut m = m_b.clone();
    catalog::manifest::bind_inline_data(&mut m, B, &bound["entries"][1]["data"]).expect("bind");
    catalog::sign_manifest(&mut m, &kb).expect("sign");
    bound["entries"][1]["trustManifest"] = m;
    let r = v
        .verify_catalog(
            bound.to_string().as_bytes(),
            &CatalogOptions::default().require_signed(true),
        )
        .expect("read");
    assert_eq!(r.entries[1].binding, catalog::Binding::ManifestDigest);
    assert_eq!(r.entries[1].artifact.status, Status::Verified);
    assert!(r.first_failure().expect("why").contains("/entries/2"));
    assert_eq!(r.failure_code(), Some("catalog.not-verified"));

    // The A2A card under B's identity (signed by A's key): no key of B's
    // matches its signature, so it is not checked (the one verdict rule:
    // an unknown signer counts neither way), never verified nor bound.
    let mut doc2 = doc.clone();
    doc2["entries"][0]["identifier"] = json!(B);
    doc2["entries"][0]["trustManifest"] = m_b.clone();
    doc2["entries"][1]["identifier"] = json!("urn:other");
    doc2["entries"][1]
        .as_object_mut()
        .expect("obj")
        .remove("trustManifest");
    let r = v
        .verify_catalog(doc2.to_string().as_bytes(), &CatalogOptions::default())
        .expect("read");
    assert_eq!(
        r.entries[0].artifact.status,
        Status::NotChecked,
        "{}",
        r.entries[0].artifact.message
    );
    assert_eq!(r.entries[0].binding, catalog::Binding::Unbound);
    // Signed by a key of B's own and then changed: invalid, failed.
    let mut doc4 = doc2.clone();
    let signed_b =
        agentsig::a2a::sign_card(&card, &kb, &serde_json::Map::new(), false).expect("card");
    doc4["entries"][0]["data"] = signed_b.card;
    doc4["entries"][0]["data"]["description"] = json!("changed");
    let r = v
        .verify_catalog(doc4.to_string().as_bytes(), &CatalogOptions::default())
        .expect("read");
    assert_eq!(
        r.entries[0].artifact.status,
        Status::Failed,
        "{}",
        r.entries[0].artifact.message
    );

    // A broken MCP card fails its entry.
    let mut doc3 = doc.clone();
    doc3["entries"][1]["data"]["name"] = json!("no-slash");
    let r = v
        .verify_catalog(doc3.to_string().as_bytes(), &CatalogOptions::default())
        .expect("read");
    assert!(!r.verified());
    assert!(
        r.entries[1].artifact.message.contains("mcp/name"),
        "{}",
        r.entries[1].artifact.message
    );
}

/// Inline nested catalogs are followed to level 4; a catalog at level 5
/// is refused.
#[test]
fn nesting_is_bounded_at_four_levels() {
    let (ka, kb) = (key("a1"), key("b1"));
    let leaf = json!({"specVersion": "1.0", "entries": [
        {"identifier": "urn:leaf", "displayName": "L", "mediaType": "application/zip", "url": "https://example.com/l.zip"}]});
    let wrap = |inner: Value, n: usize| {
        json!({"specVersion": "1.0", "entries": [
            {"identifier": format!("urn:level:{n}"), "displayName": "N", "mediaType": "application/ai-catalog+json", "data": inner}]})
    };
    // Levels: root 1 -> 2 -> 3 -> 4 (the leaf).
    let four = wrap(wrap(wrap(leaf.clone(), 3), 2), 1);
    let v = verifier(&ka, &kb);
    let r = v
        .verify_catalog(four.to_string().as_bytes(), &CatalogOptions::default())
        .expect("read");
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(r.entries.len(), 4);
    assert_eq!(r.entries[3].depth, 4);
    assert_eq!(
        r.entries[3].pointer,
        "/entries/0/data/entries/0/data/entries/0/data/entries/0"
    );
    let five = wrap(four, 0);
    let r = v
        .verify_catalog(five.to_string().as_bytes(), &CatalogOptions::default())
        .expect("read");
    assert!(!r.verified());
    // The lint names it first (`catalog/nesting-depth`), the walk stops
    // reading there.
    let why = r.first_failure().expect("why");
    assert!(
        why.contains("level 5") || why.contains("deeper than 4 levels"),
        "{why}"
    );
    assert_eq!(
        r.entries.len(),
        4,
        "the level-5 catalog's entries are not read"
    );
}

#[test]
fn too_many_entries_are_refused() {
    let (ka, kb) = (key("a1"), key("b1"));
    let entries: Vec<Value> = (0..5)
        .map(|i| json!({"identifier": format!("urn:e:{i}"), "displayName": "E", "mediaType": "application/zip", "url": "https://example.com/e"}))
        .collect();
    let doc = json!({"specVersion": "1.0", "entries": entries});
    let mut opts = CatalogOptions::default();
    opts.max_entries = 3;
    let r = verifier(&ka, &kb)
        .verify_catalog(doc.to_string().as_bytes(), &opts)
        .expect("read");
    assert!(!r.verified());
    assert_eq!(r.entries.len(), 3);
    assert!(r
        .first_failure()
        .expect("why")
        .contains("catalog/too-many-entries"));
}

/// Remove `member` from the object at the RFC 6901 pointer `parent`.
fn remove_member(doc: &mut Value, parent: &str, member: &str) {
    doc.pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .expect("object")
        .remove(member);
}

/// Catalogs referenced by `url`, fetched through a map (the `net` feature
/// supplies the SSRF-guarded fetcher): counts the fetches.
struct MapFetch {
    docs: std::collections::BTreeMap<String, Vec<u8>>,
    fetched: Vec<String>,
}

impl catalog::Fetch for MapFetch {
    fn fetch(&mut self, url: &str, _accept: &str) -> Result<Vec<u8>, String> {
        self.fetched.push(url.to_owned());
        self.docs
            .get(url)
            .cloned()
            .ok_or_else(|| format!("404 {url}"))
    }
}

/// Verify `doc`, fetched from `url`, its entries by URL through `f`.
fn fetch_verify(v: &Verifier, doc: &Value, url: &str, f: &mut MapFetch) -> catalog::CatalogReport {
    v.verify_catalog_from(
        doc.to_string().as_bytes(),
        url,
        f,
        &CatalogOptions::default(),
    )
    .expect("read")
}

fn by_url(id: &str, url: &str) -> Value {
    json!({"identifier": id, "displayName": "N", "mediaType": "application/ai-catalog+json", "url": url})
}

fn map_fetch(docs: &[(&str, Value)]) -> MapFetch {
    MapFetch {
        docs: docs
            .iter()
            .map(|(u, d)| (u.to_string(), d.to_string().into_bytes()))
            .collect(),
        fetched: Vec::new(),
    }
}

/// A chain root -> c2 -> c3 -> c4 verifies (level 4); one more level is
/// refused without fetching it.
#[test]
fn fetched_nesting_stops_at_level_four() {
    let (ka, kb) = (key("a1"), key("b1"));
    let v = verifier(&ka, &kb);
    let u = |n: usize| format!("https://example.com/c{n}.json");
    let chain = |levels: usize| {
        let mut docs = Vec::new();
        for n in 1..=levels {
            let entries = if n < levels {
                vec![by_url(&format!("urn:c{}", n + 1), &u(n + 1))]
            } else {
                vec![
                    json!({"identifier": "urn:leaf", "displayName": "L", "mediaType": "application/zip", "url": "https://example.com/l.zip"}),
                ]
            };
            docs.push((u(n), json!({"specVersion": "1.0", "entries": entries})));
        }
        docs
    };
    // Verify the chain of `levels` catalogs: the report and the URLs fetched.
    let run_chain = |levels: usize| {
        let docs = chain(levels);
        let refs: Vec<(&str, Value)> = docs.iter().map(|(a, b)| (a.as_str(), b.clone())).collect();
        let mut f = map_fetch(&refs);
        let root = docs[0].1.to_string();
        let r = v
            .verify_catalog_from(root.as_bytes(), &u(1), &mut f, &CatalogOptions::default())
            .expect("read");
        (r, f)
    };
    let (r, f) = run_chain(4);
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(f.fetched, vec![u(2), u(3), u(4)]);
    assert_eq!(r.entries.last().map(|e| e.depth), Some(4));
    assert!(r
        .entries
        .last()
        .is_some_and(|e| e.pointer == format!("{}#/entries/0", u(4))));

    let (r, f) = run_chain(5);
    assert!(!r.verified());
    assert!(
        r.first_failure().expect("why").contains("level 5"),
        "{:?}",
        r.first_failure()
    );
    assert_eq!(
        f.fetched,
        vec![u(2), u(3), u(4)],
        "level 5 is never fetched"
    );
}

/// A catalog that (indirectly) lists itself is a cycle, refused; a catalog
/// listed twice (a diamond) is fetched and checked once.
#[test]
fn fetched_cycles_are_refused_and_diamonds_fetched_once() {
    let (ka, kb) = (key("a1"), key("b1"));
    let v = verifier(&ka, &kb);
    let (root, a, b) = (
        "https://example.com/.well-known/ai-catalog.json",
        "https://example.com/a.json",
        "https://example.com/b.json",
    );
    let root_doc = json!({"specVersion": "1.0", "entries": [by_url("urn:a", a)]});
    let a_doc = json!({"specVersion": "1.0", "entries": [by_url("urn:root", root)]});
    let mut f = map_fetch(&[(a, a_doc)]);
    let r = fetch_verify(&v, &root_doc, root, &mut f);
    assert!(!r.verified());
    assert!(
        r.first_failure().expect("why").contains("cycle"),
        "{:?}",
        r.first_failure()
    );
    assert_eq!(f.fetched, vec![a.to_owned()]);

    let leaf = json!({"specVersion": "1.0", "entries": []});
    let diamond =
        json!({"specVersion": "1.0", "entries": [by_url("urn:a", a), by_url("urn:b", b)]});
    let a_doc = json!({"specVersion": "1.0", "entries": [by_url("urn:b2", b)]});
    let mut f = map_fetch(&[(a, a_doc), (b, leaf)]);
    let r = fetch_verify(&v, &diamond, root, &mut f);
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(
        f.fetched,
        vec![a.to_owned(), b.to_owned()],
        "b fetched once"
    );
    assert!(r
        .entries
        .iter()
        .any(|e| e.artifact.message.contains("already verified")));
}

/// The fetch bound: a catalog listing more nested catalogs than allowed
/// fetches gets the rest refused, not fetched.
#[test]
fn fetches_are_bounded() {
    let (ka, kb) = (key("a1"), key("b1"));
    let v = verifier(&ka, &kb);
    let leaf = json!({"specVersion": "1.0", "entries": []});
    let urls: Vec<String> = (0..5)
        .map(|i| format!("https://example.com/n{i}.json"))
        .collect();
    let root = json!({"specVersion": "1.0", "entries": urls.iter().enumerate().map(|(i, u)| by_url(&format!("urn:n{i}"), u)).collect::<Vec<_>>()});
    let docs: Vec<(&str, Value)> = urls.iter().map(|u| (u.as_str(), leaf.clone())).collect();
    let mut f = map_fetch(&docs);
    let mut opts = CatalogOptions::default();
    opts.max_fetches = 3;
    let r = v
        .verify_catalog_from(
            root.to_string().as_bytes(),
            "https://example.com/",
            &mut f,
            &opts,
        )
        .expect("read");
    assert!(!r.verified());
    assert_eq!(f.fetched.len(), 3);
    assert!(
        r.first_failure().expect("why").contains("3-fetch limit"),
        "{:?}",
        r.first_failure()
    );
}

/// With a fetcher, an attestation's declared digest (and size) is checked
/// against the fetched document: a mismatch fails the entry's manifest.
#[test]
fn fetched_attestations_are_checked_against_their_digest() {
    let (ka, kb) = (key("a1"), key("b1"));
    let v = verifier(&ka, &kb);
    let report = b"SOC2 report";
    let att = "https://example.com/soc2.pdf";
    let catalog_with = |digest: String, size: usize| {
        let mut m = json!({"identity": A, "attestations": [{"type": "SOC2-Type2", "uri": att,
            "mediaType": "application/pdf", "digest": digest, "size": size}]});
        catalog::sign_manifest(&mut m, &ka).expect("sign");
        json!({"specVersion": "1.0", "entries": [{"identifier": A, "displayName": "A",
            "mediaType": "application/zip", "url": "https://example.com/a.zip", "trustManifest": m}]})
    };
    let root = "https://example.com/.well-known/ai-catalog.json";
    let good = format!("sha256:{}", sha256_hex(report));
    let mut f = MapFetch {
        docs: [(att.to_owned(), report.to_vec())].into_iter().collect(),
        fetched: Vec::new(),
    };
    let r = fetch_verify(&v, &catalog_with(good.clone(), report.len()), root, &mut f);
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(f.fetched, vec![att.to_owned()]);
    let r = fetch_verify(
        &v,
        &catalog_with(format!("sha256:{}", sha256_hex(b"other")), report.len()),
        root,
        &mut f,
    );
    assert!(!r.verified());
    assert!(
        r.entries[0].manifest.message.contains("not the declared"),
        "{}",
        r.entries[0].manifest.message
    );
    let r = fetch_verify(&v, &catalog_with(good, 3), root, &mut f);
    assert!(!r.verified());
    assert!(
        r.entries[0].manifest.message.contains("declared size 3"),
        "{}",
        r.entries[0].manifest.message
    );
    // Without a fetcher the attestation is not fetched and the manifest verifies.
    let r = v
        .verify_catalog(
            catalog_with(format!("sha256:{}", sha256_hex(b"other")), 1)
                .to_string()
                .as_bytes(),
            &CatalogOptions::default(),
        )
        .expect("read");
    assert!(r.verified(), "{:?}", r.first_failure());
}

/// A resolver that answers with `inner`'s keys and records the threads
/// that asked.
#[derive(Debug)]
struct Threads {
    inner: StaticKeys,
    seen: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl agentsig::trust::KeyResolver for Threads {
    fn resolve(
        &self,
        req: &agentsig::trust::KeyRequest,
    ) -> Result<Vec<agentsig::trust::TrustedKey>, agentsig::trust::ResolveError> {
        if let Ok(mut s) = self.seen.lock() {
            s.insert(format!("{:?}", std::thread::current().id()));
        }
        self.inner.resolve(req)
    }
}

/// A catalog of 200 signed entries is checked with its manifests on all
/// cores (scoped threads, the catalog's lint on one more), and the report
/// is the sequential one: one result per entry in document order, the
/// tampered, mismatched and unsigned entries exactly where they are, the
/// lint error found.
#[test]
fn many_manifests_are_checked_in_parallel_in_document_order() {
    let k = key("k1");
    let entries: Vec<Value> = (0..200)
        .map(|i| json!({"identifier": format!("urn:e:{i}"), "displayName": "E", "mediaType": "application/zip", "url": format!("https://example.com/{i}.zip")}))
        .collect();
    let mut doc = json!({"specVersion": "1.0", "entries": entries});
    catalog::sign_catalog(&mut doc, &k, &catalog::SignTarget::Every).expect("sign");
    doc["entries"][17]["trustManifest"]["privacyPolicyUrl"] = json!("https://evil.example/");
    remove_member(&mut doc, "/entries/101/trustManifest", "signature");
    doc["entries"][150]["identifier"] = json!("urn:e:other");
    // A lint error, found by the root catalog's lint made on its own thread.
    remove_member(&mut doc, "/entries/42", "displayName");
    let resolver = std::sync::Arc::new(Threads {
        inner: StaticKeys::new().with(k.verifying_key().clone(), KeySource::Pinned),
        seen: Default::default(),
    });
    let v = Verifier::builder(resolver.clone()).build();
    let bytes = serde_json::to_vec(&doc).expect("json");
    let r = v
        .verify_catalog(&bytes, &CatalogOptions::default())
        .expect("catalog");
    assert_eq!(r.entries.len(), 200);
    assert!(
        r.lint
            .iter()
            .any(|f| f.severity == "error" && f.pointer == "/entries/42/displayName"),
        "{:?}",
        r.lint
    );
    assert!(!r.verified());
    for (i, e) in r.entries.iter().enumerate() {
        assert_eq!(e.pointer, format!("/entries/{i}"));
        let want = match i {
            17 | 150 => Status::Failed,
            101 => Status::Unsigned,
            _ => Status::Verified,
        };
        assert_eq!(e.manifest.status, want, "entry {i}: {}", e.manifest.message);
        // The same outcome as checking that one manifest alone.
        let alone = v.verify_trust_manifest(
            &doc["entries"][i]["trustManifest"],
            doc["entries"][i]["identifier"].as_str(),
        );
        assert_eq!(alone.status, e.manifest.status, "entry {i}");
        assert_eq!(alone.message, e.manifest.message, "entry {i}");
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = resolver.seen.lock().expect("lock").len();
    if cores > 1 {
        // The catalog's checks ran on worker threads: besides this thread
        // (the loop above), others asked for keys.
        assert!(threads > 1, "keys asked from {threads} thread(s)");
    }
}

/// The root entries that the worker threads make whole (inline `data`, no
/// attestations, not a nested catalog) give the report the walk gives on
/// one thread, entry for entry, beside every other kind of entry: a nested
/// inline catalog, a `data:` attestation, `type` for `mediaType`, a
/// manifest of another identity, an unsigned one, no manifest.
#[test]
fn entries_made_on_the_workers_equal_the_walks() {
    let k = key("k1");
    let hello = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    let entries: Vec<Value> = (0..120)
        .map(|i| {
            let id = format!("urn:e:{i}");
            match i % 5 {
                0 => json!({"identifier": id, "displayName": "E", "mediaType": "application/vnd.x+json", "version": "2.0", "data": {"n": i}}),
                1 => json!({"identifier": id, "displayName": "E", "mediaType": "application/ai-catalog+json", "data": {"specVersion": "1.0", "entries": [
                    {"identifier": format!("urn:inner:{i}"), "displayName": "I", "mediaType": "text/plain", "data": "x"}
                ]}}),
                2 => json!({"identifier": id, "displayName": "E", "mediaType": "application/vnd.x+json", "data": {}, "trustManifest": {
                    "identity": format!("urn:e:{i}"),
                    "attestations": [{"type": "audit", "uri": "data:,hello", "mediaType": "text/plain", "digest": hello}]
                }}),
                3 => json!({"identifier": id, "displayName": "E", "type": "application/vnd.x+json", "data": [1, 2]}),
                _ => json!({"identifier": id, "displayName": "E", "mediaType": "application/vnd.x+json", "data": {}}),
            }
        })
        .collect();
    let mut doc = json!({"specVersion": "1.0", "entries": entries});
    catalog::sign_catalog(&mut doc, &k, &catalog::SignTarget::Every).expect("sign");
    doc["entries"][9]["trustManifest"]["identity"] = json!("urn:e:other");
    remove_member(&mut doc, "/entries/14/trustManifest", "signature");
    remove_member(&mut doc, "/entries/19", "trustManifest");
    let v = Verifier::builder(StaticKeys::new().with(k.verifying_key().clone(), KeySource::Pinned))
        .build();
    let bytes = serde_json::to_vec(&doc).expect("json");
    let opts = CatalogOptions::default();
    // On all cores (at least 64 root entries) ...
    let parallel = v.verify_catalog(&bytes, &opts).expect("catalog");
    // ... and walked on this thread (a catalog verified by URL is: no entry
    // here is fetched, nothing is by url).
    let mut none = MapFetch {
        docs: Default::default(),
        fetched: Vec::new(),
    };
    let walked = v
        .verify_catalog_from(
            &bytes,
            "https://catalog.example/ai-catalog.json",
            &mut none,
            &opts,
        )
        .expect("catalog");
    assert!(none.fetched.is_empty(), "{:?}", none.fetched);
    assert_eq!(parallel.entries.len(), 120 + 24);
    assert_eq!(
        serde_json::to_value(&parallel.entries).expect("json"),
        serde_json::to_value(&walked.entries).expect("json")
    );
    assert_eq!(
        serde_json::to_value(&parallel.lint).expect("json"),
        serde_json::to_value(&walked.lint).expect("json")
    );
    let status = |i: usize| {
        parallel
            .entries
            .iter()
            .find(|e| e.pointer == format!("/entries/{i}"))
            .map(|e| e.manifest.status)
    };
    assert_eq!(status(0), Some(Status::Verified));
    assert_eq!(status(9), Some(Status::Failed));
    assert_eq!(status(14), Some(Status::Unsigned));
    assert_eq!(status(19), Some(Status::Unsigned));
    assert!(!parallel.verified());
}

/// A catalog large enough to be verified on all cores gets the verdict of
/// the serial parse and walk whatever its shape: a duplicate member deep in
/// one entry is the strict parser's error (the whole input is checked
/// before any value is built), and a document whose `entries` is not an
/// array, or that is not an object, is reported as the walk on one thread
/// reports it.
#[test]
fn a_large_catalog_of_any_shape_gets_the_serial_verdict() {
    let entries: Vec<String> = (0..200)
        .map(|i| {
            let extra = if i == 150 { r#","displayName":"again""# } else { "" };
            format!(
                r#"{{"identifier":"urn:e:{i}","displayName":"E","mediaType":"application/zip","url":"https://example.com/{i}.zip"{extra}}}"#
            )
        })
        .collect();
    let v = Verifier::builder(StaticKeys::new()).build();
    let opts = CatalogOptions::default();
    let duplicate = format!(
        r#"{{"specVersion":"1.0","entries":[{}]}}"#,
        entries.join(",")
    );
    let serial = agentsig::json::parse_strict(duplicate.as_bytes()).expect_err("duplicate");
    match v.verify_catalog(duplicate.as_bytes(), &opts) {
        Err(catalog::CatalogError::Json(e)) => assert_eq!(e, serial),
        other => panic!("{:?}", other.map(|r| r.entries.len())),
    }

    let plain: Vec<String> = (0..200)
        .map(|i| {
            format!(
                r#"{{"identifier":"urn:e:{i}","displayName":"E","mediaType":"application/zip","url":"https://example.com/{i}.zip"}}"#
            )
        })
        .collect();
    let shapes = [
        format!(
            r#"{{"specVersion":"1.0","entries":{{"a":[{}]}}}}"#,
            plain.join(",")
        ),
        format!(r#"[{}]"#, plain.join(",")),
        format!(
            r#"{{"specVersion":"1.0","other":[{}],"entries":[]}}"#,
            plain.join(",")
        ),
    ];
    for doc in &shapes {
        let parallel = v.verify_catalog(doc.as_bytes(), &opts).expect("catalog");
        let mut none = MapFetch {
            docs: Default::default(),
            fetched: Vec::new(),
        };
        let walked = v
            .verify_catalog_from(
                doc.as_bytes(),
                "https://catalog.example/c.json",
                &mut none,
                &opts,
            )
            .expect("catalog");
        assert_eq!(
            serde_json::to_value(&parallel.lint).expect("json"),
            serde_json::to_value(&walked.lint).expect("json")
        );
        assert_eq!(parallel.entries.len(), walked.entries.len());
        assert!(!parallel.lint.is_empty() || doc.contains("\"other\""));
    }
}
