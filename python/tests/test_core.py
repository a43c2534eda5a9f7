"""SigningKey, canonicalize, descriptors, the Report and the exceptions."""

import json

import pytest

import agentsig
from conftest import DOC, peer


def test_generate_every_algorithm_and_public_forms():
    for alg in ["ES256", "ES384", "EdDSA", "PS512", "RS256"]:
        k = agentsig.SigningKey.generate(alg)
        assert k.algorithm == alg
        jwk = k.public_jwk()
        assert "d" not in jwk and jwk["alg"] == alg
        assert k.kid == k.thumbprint == k.public_key().thumbprint
        assert agentsig.PublicKey.from_jwk(jwk).thumbprint == k.thumbprint
    with pytest.raises(agentsig.BadInput) as e:
        agentsig.SigningKey.generate("none")
    assert e.value.code == "usage"


def test_from_pem_round_trip_with_kid():
    k = agentsig.SigningKey.generate("ES256")
    pem = k.private_pem()
    assert pem.startswith("-----BEGIN PRIVATE KEY-----")
    k2 = agentsig.SigningKey.from_pem(pem, kid="key-1")
    assert k2.kid == "key-1" and k2.thumbprint == k.thumbprint
    assert "PRIVATE" not in repr(k2)
    with pytest.raises(agentsig.BadKey) as e:
        agentsig.SigningKey.from_pem("not a key")
    assert e.value.code == "key.unusable"
    assert isinstance(e.value, ValueError)


def test_canonicalize_objects_and_bytes_agree():
    obj = {"b": 1.0, "a": [True, None, "\u20ac", 1e21, -0.0], "c": {"z": 1, "y": 2}}
    want = b'{"a":[true,null,"\xe2\x82\xac",1e+21,0],"b":1,"c":{"y":2,"z":1}}'
    assert agentsig.canonicalize(obj) == want
    assert agentsig.canonicalize(json.dumps(obj).encode()) == want


@pytest.mark.parametrize(
    "bad",
    [float("nan"), float("inf"), {1: "x"}, 2**64, 2**60, {"a": object()}],
)
def test_canonicalize_refuses_what_has_no_canonical_form(bad):
    with pytest.raises((agentsig.BadInput, TypeError)):
        agentsig.canonicalize(bad)


def test_canonicalize_refuses_deep_nesting():
    deep = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(agentsig.BadInput):
        agentsig.canonicalize(deep)
    with pytest.raises(agentsig.BadInput):
        agentsig.canonicalize(b"[" * 200 + b"]" * 200)


def test_descriptor_round_trip(key, verifier):
    jws = agentsig.sign_descriptor(DOC, key)
    assert jws.count(".") == 2 and ".." in jws  # compact, detached payload
    r = verifier.verify_descriptor(DOC, jws)
    assert isinstance(r, agentsig.Report)
    assert r.verdict == "verified" and r.verified and r.error is None
    assert r.schema == "agentsig.report/1" and r.command == "verify"
    (sig,) = r.signatures
    assert sig["verdict"] == "valid" and sig["algorithm"] == key.algorithm
    assert sig["key"]["thumbprint"] == key.thumbprint
    assert len(r.details["canonical_sha256"]) == 64
    # Whitespace and member order do not change the canonical form.
    assert verifier.verify_descriptor(json.dumps(json.loads(DOC), indent=2).encode(), jws).verified


def test_tampered_descriptor_raises_not_verified_with_report(key, verifier):
    jws = agentsig.sign_descriptor(DOC, key)
    with pytest.raises(agentsig.NotVerified) as e:
        verifier.verify_descriptor(DOC.replace(b"planner", b"p1anner"), jws)
    assert not isinstance(e.value, agentsig.PolicyRefused)
    assert e.value.code == "signature-mismatch"
    assert e.value.report.verdict == "not-verified"
    assert e.value.report.error["code"] == "signature-mismatch"


def test_untrusted_key_is_not_verified(key):
    other = agentsig.Verifier(keys=[agentsig.SigningKey.generate(key.algorithm)])
    with pytest.raises(agentsig.NotVerified) as e:
        other.verify_descriptor(DOC, agentsig.sign_descriptor(DOC, key))
    # The verifier's key (no kid) is tried and does not match.
    assert e.value.report.signatures[0]["verdict"] in ("invalid", "no-trusted-key")


def test_algorithm_outside_the_allow_list_is_a_policy_refusal():
    k = agentsig.SigningKey.generate("EdDSA")
    v = agentsig.Verifier(keys=[k], algorithms=["ES256"])
    with pytest.raises(agentsig.PolicyRefused) as e:
        v.verify_descriptor(DOC, agentsig.sign_descriptor(DOC, k))
    assert isinstance(e.value, agentsig.NotVerified)
    assert e.value.report.signatures[0]["verdict"] == "refused"


def test_report_is_frozen_has_no_truth_value_and_round_trips(key, verifier):
    r = verifier.verify_descriptor(DOC, agentsig.sign_descriptor(DOC, key))
    with pytest.raises(TypeError):
        bool(r)
    with pytest.raises(AttributeError):
        r.verdict = "verified"
    with pytest.raises(TypeError):
        r.signatures[0]["verdict"] = "valid"
    d = r.to_dict()
    assert json.loads(r.to_json()) == d
    assert set(d) >= {"schema", "command", "subject", "verdict", "verified", "signatures", "checks", "error"}


def test_report_matches_the_cli_report_schema(key, verifier):
    jsonschema = peer("jsonschema")
    import pathlib

    schema = json.loads((pathlib.Path(__file__).parents[2] / "docs" / "report.schema.json").read_text())
    r = verifier.verify_descriptor(DOC, agentsig.sign_descriptor(DOC, key))
    jsonschema.validate(r.to_dict(), schema)
    with pytest.raises(agentsig.NotVerified) as e:
        verifier.verify_descriptor(b'{"name":"x"}', agentsig.sign_descriptor(DOC, key))
    jsonschema.validate(e.value.report.to_dict(), schema)


def test_verifier_from_jwks_in_every_form(key):
    jwks = {"keys": [key.public_jwk()]}
    jws = agentsig.sign_descriptor(DOC, key)
    for form in (jwks, json.dumps(jwks), json.dumps(jwks).encode()):
        r = agentsig.Verifier(jwks=form).verify_descriptor(DOC, jws)
        assert r.signatures[0]["key"]["source"]["kind"] == "jwks"
    with pytest.raises(agentsig.BadKey):
        agentsig.Verifier(jwks={"keys": [{"kty": "PQC"}]})
    with pytest.raises(agentsig.BadInput):
        agentsig.Verifier()


def test_verifier_keys_accept_pem_jwk_and_key_objects(key):
    jws = agentsig.sign_descriptor(DOC, key)
    pem = agentsig.SigningKey.from_pem(key.private_pem()).private_pem() if key.private_pem() else None
    for k in (key, key.public_key(), key.public_jwk(), json.dumps(key.public_jwk())):
        assert agentsig.Verifier(keys=[k]).verify_descriptor(DOC, jws).verified
    if pem:
        assert agentsig.Verifier(keys=[pem]).verify_descriptor(DOC, jws).verified


def test_hmac_only_when_named_and_its_secret_never_given_out():
    with pytest.raises(agentsig.BadKey):
        agentsig.Verifier(keys=[{"kty": "oct", "k": "AAAA"}])
    k = agentsig.SigningKey.generate("HS256")
    jws = agentsig.sign_descriptor(DOC, k)
    with pytest.raises(agentsig.PolicyRefused) as e:
        agentsig.Verifier(keys=[k]).verify_descriptor(DOC, jws)
    assert e.value.code == "alg-not-allowed"
    assert agentsig.Verifier(keys=[k], algorithms=["HS256"]).verify_descriptor(DOC, jws).verified
    with pytest.raises(agentsig.BadKey):
        k.public_jwk()
    with pytest.raises(agentsig.BadKey):
        k.public_key().jwk()
    assert k.private_pem() is None
