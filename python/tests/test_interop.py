"""Interop in the same process with independent implementations, both ways:
a2a-sdk (A2A Agent Card signatures), joserfc + rfc8785 (detached JWS over
JCS) and http-message-signatures (RFC 9421). Each peer is required under
AGENTSIG_REQUIRE_INTEROP=1 (scripts/test.sh), else skipped when missing."""

import base64
import hashlib
import json
import pathlib
import sys

import pytest

import agentsig
from conftest import CARD, DOC, peer

# joserfc warns that the JOSE name EdDSA is deprecated (RFC 9864).
pytestmark = pytest.mark.filterwarnings("ignore:EdDSA is deprecated")


def crypto_key(alg):
    """A key made by `cryptography`, shared with agentsig through PEM."""
    serialization = peer("cryptography.hazmat.primitives.serialization")
    if alg == "ES256":
        ec = peer("cryptography.hazmat.primitives.asymmetric.ec")
        priv = ec.generate_private_key(ec.SECP256R1())
    else:
        ed = peer("cryptography.hazmat.primitives.asymmetric.ed25519")
        priv = ed.Ed25519PrivateKey.generate()
    pem = priv.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return priv, agentsig.SigningKey.from_pem(pem)


ALGS = ["ES256", "EdDSA"]


# ---------------------------------------------------------------- joserfc


@pytest.mark.parametrize("alg", ALGS)
def test_joserfc_verifies_agentsig_detached_jws(alg):
    jws = peer("joserfc.jws")
    jwk = peer("joserfc.jwk")
    rfc8785 = peer("rfc8785")
    k = agentsig.SigningKey.generate(alg)
    token = agentsig.sign_descriptor(DOC, k)
    payload = rfc8785.dumps(json.loads(DOC))
    assert payload == agentsig.canonicalize(DOC)
    obj = jws.deserialize_compact(token, jwk.import_key(k.public_jwk()), algorithms=[alg], payload=payload)
    assert obj.payload == payload
    with pytest.raises(Exception):
        jws.deserialize_compact(token, jwk.import_key(k.public_jwk()), algorithms=[alg], payload=payload + b" ")


@pytest.mark.parametrize("alg", ALGS)
def test_agentsig_verifies_joserfc_detached_jws(alg):
    jws = peer("joserfc.jws")
    jwk = peer("joserfc.jwk")
    rfc8785 = peer("rfc8785")
    priv, k = crypto_key(alg)
    key = jwk.import_key(priv_pem(priv), "EC" if alg == "ES256" else "OKP")
    payload = rfc8785.dumps(json.loads(DOC))
    h, _, s = jws.serialize_compact({"alg": alg, "kid": k.kid}, payload, key, algorithms=[alg]).split(".")
    detached = f"{h}..{s}"
    v = agentsig.Verifier(keys=[k.public_key()])
    assert v.verify_descriptor(DOC, detached).verified
    with pytest.raises(agentsig.NotVerified):
        v.verify_descriptor(DOC.replace(b"planner", b"p1anner"), detached)


def priv_pem(priv):
    serialization = peer("cryptography.hazmat.primitives.serialization")
    return priv.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


# ------------------------------------------------- http-message-signatures


sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "interop"))
from pyauth_model import Headers, Request, Response  # noqa: E402


def names(covered):
    """The library's covered components ('"@status"', ...) as plain names."""
    return [str(c).split(";")[0].strip('"') for c in covered if str(c).strip('"') != "@signature-params"]


def pyauth_alg(hms, alg):
    return hms.algorithms.ECDSA_P256_SHA256 if alg == "ES256" else hms.algorithms.ED25519


@pytest.mark.parametrize("alg", ALGS)
def test_pyauth_verifies_agentsig_response_and_request(alg):
    hms = peer("http_message_signatures")
    priv, k = crypto_key(alg)
    resolver = hms.MappingKeyResolver(public_keys={k.kid: priv.public_key()}, private_keys={})
    verifier = hms.HTTPMessageVerifier(signature_algorithm=pyauth_alg(hms, alg), key_resolver=resolver)

    h = agentsig.sign_response(200, [("Content-Type", "application/json")], DOC, k)
    results = verifier.verify(Response(200, Headers(h)), body=DOC)
    assert names(results[0].covered_components) == ["@status", "content-type", "content-digest"]
    with pytest.raises(Exception):
        verifier.verify(Response(201, Headers(h)), body=DOC)

    url = "https://api.example/orders?id=7"
    h = agentsig.sign_request("POST", url, [("Content-Type", "application/json")], DOC, k, web_bot_auth=False)
    results = verifier.verify(Request("POST", url, Headers(h)), body=DOC)
    assert "@query" in names(results[0].covered_components)
    with pytest.raises(Exception):
        verifier.verify(Request("PUT", url, Headers(h)), body=DOC)


@pytest.mark.parametrize("alg", ALGS)
def test_agentsig_verifies_pyauth_response_and_request(alg):
    hms = peer("http_message_signatures")
    priv, k = crypto_key(alg)
    resolver = hms.MappingKeyResolver(public_keys={}, private_keys={k.kid: priv})
    signer = hms.HTTPMessageSigner(signature_algorithm=pyauth_alg(hms, alg), key_resolver=resolver)
    digest = "sha-256=:" + base64.b64encode(hashlib.sha256(DOC).digest()).decode() + ":"
    v = agentsig.Verifier(keys=[k.public_key()])

    res = Response(200, Headers([("Content-Type", "application/json"), ("Content-Digest", digest)]))
    signer.sign(res, key_id=k.kid, label="sig1", covered_component_ids=("@status", "content-type", "content-digest"),
                use_existing_digest=True)
    r = v.verify_response(200, res.headers.lines, DOC)
    assert list(r.signatures[0]["covered"]) == ["@status", "content-type", "content-digest"]
    with pytest.raises(agentsig.NotVerified):
        v.verify_response(200, res.headers.lines, DOC + b"!")

    url = "https://api.example/orders?id=7"
    req = Request("GET", url, Headers([("Accept", "application/json")]))
    signer.sign(req, key_id=k.kid, label="sig1", covered_component_ids=("@method", "@authority", "@path", "@query"))
    assert v.verify_request("GET", url, req.headers.lines).verified
    with pytest.raises(agentsig.NotVerified):
        v.verify_request("GET", url.replace("7", "8"), req.headers.lines)


# ---------------------------------------------------------------- a2a-sdk


def sdk_jwk(priv, kid, alg):
    jwt_algorithms = peer("jwt.algorithms")
    cls = jwt_algorithms.ECAlgorithm if alg == "ES256" else jwt_algorithms.OKPAlgorithm
    d = json.loads(cls.to_jwk(priv))
    d["kid"] = kid
    return d


@pytest.mark.parametrize("alg", ALGS)
def test_a2a_sdk_verifies_agentsig_card(alg):
    card_resolver = peer("a2a.client.card_resolver")
    signing = peer("a2a.utils.signing")
    PyJWK = peer("jwt.api_jwk").PyJWK
    k = agentsig.SigningKey.generate(alg)
    signed = agentsig.sign_card(CARD, k)
    public = k.public_jwk()
    verify = signing.create_signature_verifier(lambda kid, jku: PyJWK(public, algorithm=alg), [alg])
    verify(card_resolver.parse_agent_card(signed))
    tampered = dict(signed, description="steals")
    with pytest.raises(signing.SignatureVerificationError):
        verify(card_resolver.parse_agent_card(tampered))


@pytest.mark.parametrize("alg", ALGS)
def test_agentsig_verifies_a2a_sdk_card(alg):
    card_resolver = peer("a2a.client.card_resolver")
    signing = peer("a2a.utils.signing")
    PyJWK = peer("jwt.api_jwk").PyJWK
    json_format = peer("google.protobuf.json_format")
    priv, k = crypto_key(alg)
    header = {"alg": alg, "kid": k.kid, "typ": "JOSE"}
    signer = signing.create_agent_card_signer(PyJWK(sdk_jwk(priv, k.kid, alg), algorithm=alg), header)
    signed = json_format.MessageToDict(signer(card_resolver.parse_agent_card(CARD)))
    v = agentsig.Verifier(keys=[k.public_key()])
    r = v.verify_card(signed)
    assert r.verdict == "verified" and r.signatures[0]["kid"] == k.kid
    with pytest.raises(agentsig.NotVerified):
        v.verify_card(dict(signed, name="Evil"))
