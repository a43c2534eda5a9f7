#!/usr/bin/env bash
# Build the fuzz corpora from the test vectors (corpus/ is git-ignored).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/{json_jcs,jws_verify,httpsig_verify,delegation_audit,key_load,sfv_parse,catalog_verify,pkcs11_uri,fleet_entry}
cp ../tests/vectors/jcs/input/* ../examples/agent.json corpus/json_jcs/
cp ../tests/vectors/rfc9421/messages/*.http corpus/httpsig_verify/
# catalog_verify: the example catalogs (signed with keys/example-p256), and
# below a catalog nested inline and one declaring digests.
cp ../examples/ai-catalog.json corpus/catalog_verify/example
cp ../examples/catalog/ai-catalog.json corpus/catalog_verify/example-signed
# pkcs11_uri: every pkcs11: URI the parser's tests name.
grep -rhoE '"pkcs11:[^"]*"' ../src/keys/pkcs11/uri.rs ../tests/pkcs11.rs | tr -d '"' | sort -u |
    while IFS= read -r u; do printf '%s' "$u" >"corpus/pkcs11_uri/$(printf '%s' "$u" | cksum | cut -d' ' -f1)"; done
cp ../keys/rfc9421/* ../keys/example-p256.jwks.json corpus/key_load/
# sfv_parse: every header field value of the RFC 9421 test messages.
i=0
grep -ahE '^[A-Za-z0-9-]+: ' ../tests/vectors/rfc9421/messages/*.http | sed 's/^[^:]*: *//; s/\r$//' |
    while IFS= read -r v; do printf '%s' "$v" >"corpus/sfv_parse/v$i"; i=$((i + 1)); done
python3 - <<'PY'
import json
i = 0
def jws(o):
    global i
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("compact_detached", "compact") and isinstance(v, str):
                open(f"corpus/jws_verify/c{i}", "w").write(v); i += 1
            elif k.startswith(("general", "flattened", "json_")):
                open(f"corpus/jws_verify/j{i}", "w").write(json.dumps(v)); i += 1
            else:
                jws(v)
    elif isinstance(o, list):
        for v in o:
            jws(v)
jws(json.load(open("../tests/vectors/jws/detached_jcs_vectors.json")))
toks = []
def jwts(o):
    if isinstance(o, dict):
        for v in o.values(): jwts(v)
    elif isinstance(o, list):
        for v in o: jwts(v)
    elif isinstance(o, str) and o.count(".") == 2 and o.startswith("ey"):
        toks.append(o)
jwts(json.load(open("../tests/vectors/rfc8693_examples.json")))
for n, t in enumerate(toks):
    open(f"corpus/delegation_audit/t{n}", "w").write(t)
open("corpus/delegation_audit/bundle", "w").write("\n".join(toks[:3]))
# catalog_verify: nesting and digests.
def entry(i, mt, **kw):
    e = {"identifier": f"urn:example:{i}", "displayName": f"E{i}", "mediaType": mt}
    e.update(kw)
    return e
leaf = {"specVersion": "1.0", "entries": [entry("leaf", "application/json", data={"k": 1})]}
doc = leaf
for level in range(5):
    doc = {"specVersion": "1.0", "entries": [entry(f"n{level}", "application/ai-catalog+json", data=doc)]}
json.dump(doc, open("corpus/catalog_verify/nested", "w"))
digests = {"specVersion": "1.0", "entries": [
    entry("zip", "application/zip", url="https://cdn.example/x.zip", trustManifest={
        "identity": "urn:example:zip",
        "attestations": [{"type": "SOC2-Type2", "uri": "data:text/plain;base64,aGVsbG8=", "mediaType": "text/plain",
            "digest": "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", "size": 5},
            {"type": "publisher-identity", "uri": "https://cdn.example/p.jwt", "mediaType": "application/jwt"}],
        "provenance": [{"relation": "publishedFrom", "sourceId": "https://cdn.example/x.zip",
            "sourceDigest": "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}]}),
    entry("sub", "application/ai-catalog+json", url="https://catalog.example/sub.json")]}
json.dump(digests, open("corpus/catalog_verify/digests", "w"))
# fleet_entry: payloads stored now (a response and a remembered failure).
import time, base64
now = int(time.time() * 1000)
url = "https://keys.example/.well-known/jwks.json"
json.dump({"url": url, "stored": now, "entry": {"kind": "response", "status": 200,
    "fields": [["content-type", "application/jwk-set+json"], ["cache-control", "max-age=60"]],
    "vary": [["accept", "application/jwk-set+json"]], "initial_age_ms": 0, "lifetime_ms": 60000,
    "body": base64.b64encode(b'{"keys":[]}').decode()}}, open("corpus/fleet_entry/response", "w"))
json.dump({"url": url, "stored": now, "entry": {"kind": "failure", "ttl_ms": 30000, "status": 503,
    "timeout": False, "too_large": None, "message": "HTTP 503"}}, open("corpus/fleet_entry/failure", "w"))
PY
