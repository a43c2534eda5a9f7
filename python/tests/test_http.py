"""RFC 9421 responses and requests (with Content-Digest), Web Bot Auth, A2A
cards and delegation audits."""

import copy
import json
import time

import pytest

import agentsig
from conftest import CARD, DOC, peer

URL = "https://api.example/orders?id=7"


def test_response_round_trip_and_report_fields(key, verifier):
    h = agentsig.sign_response(200, [("Content-Type", "application/json")], DOC, key)
    names = [n.lower() for n, _ in h]
    assert names == ["content-type", "content-digest", "signature-input", "signature"]
    r = verifier.verify_response(200, h, DOC)
    assert r.command == "http verify" and r.verdict == "verified"
    (sig,) = r.signatures
    assert sig["kind"] == "http-message-signature" and sig["id"] == "sig1"
    assert list(sig["covered"]) == ["@status", "content-type", "content-digest"]
    assert sig["kid"] == key.kid
    assert [c["code"] for c in r.checks] == ["content-digest"] and r.checks[0]["passed"]


def test_response_headers_as_mapping_and_bytes(key, verifier):
    h = agentsig.sign_response(200, {"content-type": "application/json"}, DOC, key)
    as_bytes = [(n.encode(), v.encode()) for n, v in h]
    assert verifier.verify_response(200, as_bytes, DOC).verified
    assert verifier.verify_response(200, dict(h), DOC).verified


def test_changed_body_fails_the_content_digest_check(key, verifier):
    h = agentsig.sign_response(200, [("Content-Type", "application/json")], DOC, key)
    with pytest.raises(agentsig.NotVerified) as e:
        verifier.verify_response(200, h, DOC + b" ")
    assert e.value.code == "content-digest"
    failed = [c for c in e.value.report.checks if not c["passed"]]
    assert failed and failed[0]["code"] == "content-digest"


def test_changed_status_or_header_fails_the_signature(key, verifier):
    h = agentsig.sign_response(200, [("Content-Type", "application/json")], DOC, key)
    with pytest.raises(agentsig.NotVerified) as e:
        verifier.verify_response(201, h, DOC)
    assert e.value.report.signatures[0]["verdict"] == "invalid"
    h2 = [(n, "text/plain" if n == "Content-Type" else v) for n, v in h]
    with pytest.raises(agentsig.NotVerified):
        verifier.verify_response(200, h2, DOC)


def test_unsigned_response_is_not_verified(verifier):
    with pytest.raises(agentsig.NotVerified) as e:
        verifier.verify_response(200, [("content-type", "application/json")], DOC)
    assert e.value.code == "header"
    assert e.value.report.verdict == "not-verified"


def test_response_with_related_request(key, verifier):
    h = agentsig.sign_response(200, [("Content-Type", "application/json")], DOC, key)
    req = ("GET", URL, [("accept", "application/json")], b"")
    assert verifier.verify_response(200, h, DOC, request=req).verified
    with pytest.raises(TypeError):
        verifier.verify_response(200, h, DOC, request=("GET", URL))


def test_request_round_trip_plain_rfc9421(key, verifier):
    h = agentsig.sign_request("POST", URL, [("Content-Type", "application/json")], DOC, key, web_bot_auth=False)
    r = verifier.verify_request("POST", URL, h, DOC)
    covered = list(r.signatures[0]["covered"])
    assert covered[:4] == ["@method", "@authority", "@path", "@query"]
    assert "content-digest" in covered
    for method, url, body in (("PUT", URL, DOC), ("POST", URL.replace("7", "8"), DOC), ("POST", URL, b"{}")):
        with pytest.raises(agentsig.NotVerified):
            verifier.verify_request(method, url, h, body)


def test_request_with_explicit_components(key, verifier):
    h = agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=False, components=["@method", "@target-uri"])
    r = verifier.verify_request("GET", URL, h)
    assert list(r.signatures[0]["covered"]) == ["@method", "@target-uri"]


def test_max_age_and_expiry_are_policy_refusals(key):
    old = int(time.time()) - 3600
    h = agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=False, created=old, expires_in=86400)
    v = agentsig.Verifier(keys=[key], max_age=60)
    with pytest.raises(agentsig.PolicyRefused) as e:
        v.verify_request("GET", URL, h)
    assert e.value.code == "too-old"
    h = agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=False, created=old, expires_in=60)
    with pytest.raises(agentsig.PolicyRefused) as e:
        agentsig.Verifier(keys=[key]).verify_request("GET", URL, h)
    assert e.value.code == "expired"


def test_fixed_clock():
    k = agentsig.SigningKey.generate("EdDSA")
    h = agentsig.sign_request("GET", URL, [], b"", k, web_bot_auth=False, created=1_700_000_000)
    assert agentsig.Verifier(keys=[k], now=1_700_000_010).verify_request("GET", URL, h).verified
    with pytest.raises(agentsig.PolicyRefused):
        agentsig.Verifier(keys=[k]).verify_request("GET", URL, h)


def test_web_bot_auth_profile(key, verifier):
    h = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://agent.example")
    d = dict(h)
    assert d["Signature-Agent"] == 'sig1="https://agent.example"'
    assert 'tag="web-bot-auth"' in d["Signature-Input"] and "expires=" in d["Signature-Input"]
    assert f'keyid="{key.thumbprint}"' in d["Signature-Input"]
    r = verifier.verify_request("GET", URL, h, web_bot_auth=True)
    assert r.details["web_bot_auth"]["agent"] == "https://agent.example"
    assert r.signatures[0]["kid"] == key.thumbprint
    # A plain RFC 9421 signature is not the profile.
    plain = agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=False)
    with pytest.raises(agentsig.NotVerified):
        verifier.verify_request("GET", URL, plain, web_bot_auth=True)
    # The profile needs the agent URL.
    with pytest.raises(agentsig.BadInput) as e:
        agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=True)
    assert e.value.code == "usage"


def test_web_bot_auth_allowed_agents(key):
    h = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://agent.example")
    agent_keys = {"https://agent.example": [key], "https://other.example": [key]}
    ok = agentsig.Verifier(agent_keys=agent_keys, agents=["https://agent.example"])
    assert ok.verify_request("GET", URL, h, web_bot_auth=True).verified
    other = agentsig.Verifier(agent_keys=agent_keys, agents=["https://other.example"])
    with pytest.raises(agentsig.NotVerified):
        other.verify_request("GET", URL, h, web_bot_auth=True)


def test_web_bot_auth_key_verifies_only_its_own_agent(key):
    """A key given for one agent cannot vouch for a request that names
    another agent: the identity is bound by the key set, not by the
    Signature-Agent value alone."""
    other = agentsig.SigningKey.generate("EdDSA")
    v = agentsig.Verifier(
        keys=[key, other],
        agent_keys={"https://agent.example": [key], "https://other.example": [other]},
    )
    forged = agentsig.sign_request("GET", URL, [], b"", other, signature_agent="https://agent.example")
    with pytest.raises(agentsig.NotVerified):
        v.verify_request("GET", URL, forged, web_bot_auth=True)
    unknown = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://unknown.example")
    with pytest.raises(agentsig.NotVerified):
        v.verify_request("GET", URL, unknown, web_bot_auth=True)
    own = agentsig.sign_request("GET", URL, [], b"", other, signature_agent="https://other.example")
    assert v.verify_request("GET", URL, own, web_bot_auth=True).details["web_bot_auth"]["agent"] == "https://other.example"
    # A JWK Set per agent works as well as a list of keys.
    jv = agentsig.Verifier(agent_keys={"https://agent.example": {"keys": [key.public_jwk()]}})
    ok = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://agent.example")
    assert jv.verify_request("GET", URL, ok, web_bot_auth=True).verified


def test_web_bot_auth_needs_agent_key_sets(key):
    h = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://agent.example")
    # Trusted keys alone say nothing of which agent a key belongs to.
    with pytest.raises(agentsig.BadInput) as e:
        agentsig.Verifier(keys=[key]).verify_request("GET", URL, h, web_bot_auth=True)
    assert e.value.code == "usage"
    with pytest.raises(agentsig.BadInput):
        agentsig.Verifier(agent_keys={"https://agent.example": [key]}, fetch_directories=True)
    for bad in ({"http://agent.example": [key]}, {"https://agent.example": []}, {3: [key]}):
        with pytest.raises((agentsig.BadInput, agentsig.BadKey, TypeError)):
            agentsig.Verifier(agent_keys=bad)
    with pytest.raises(TypeError):
        agentsig.Verifier(agent_keys=[key])


def test_web_bot_auth_with_body_covers_content_digest(key, verifier):
    h = agentsig.sign_request("POST", URL, [], DOC, key, signature_agent="https://agent.example")
    assert "content-digest" in dict(h)["Signature-Input"]
    assert verifier.verify_request("POST", URL, h, DOC, web_bot_auth=True).verified


def test_replay_store_memory_refuses_a_second_use(key):
    v = agentsig.Verifier(agent_keys={"https://agent.example": [key]}, replay_store="memory")
    h = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://agent.example")
    assert v.verify_request("GET", URL, h, web_bot_auth=True).verified
    with pytest.raises(agentsig.PolicyRefused) as e:
        v.verify_request("GET", URL, h, web_bot_auth=True)
    assert "replay" in e.value.code


def test_replay_store_file(tmp_path, key):
    path = str(tmp_path / "replay.json")
    h = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://agent.example")
    assert agentsig.Verifier(agent_keys={"https://agent.example": [key]}, replay_store=path).verify_request("GET", URL, h, web_bot_auth=True).verified
    with pytest.raises(agentsig.PolicyRefused):
        agentsig.Verifier(agent_keys={"https://agent.example": [key]}, replay_store=path).verify_request("GET", URL, h, web_bot_auth=True)


def test_bad_replay_store_is_refused(key):
    with pytest.raises(agentsig.BadInput):
        agentsig.Verifier(keys=[key], replay_store="")


def test_card_round_trip(key, verifier):
    signed = agentsig.sign_card(CARD, key)
    assert len(signed["signatures"]) == 1
    r = verifier.verify_card(signed)
    assert r.verdict == "verified" and r.details["rule"] == "any"
    assert r.details["signed_card"]["name"] == "Planner"
    assert verifier.verify_card(json.dumps(signed).encode(), require_all=True).details["rule"] == "all"


def test_tampered_and_unsigned_cards(key, verifier):
    signed = agentsig.sign_card(CARD, key)
    bad = copy.deepcopy(signed)
    bad["description"] = "steals"
    with pytest.raises(agentsig.NotVerified):
        verifier.verify_card(bad)
    with pytest.raises(agentsig.NotVerified) as e:
        verifier.verify_card(CARD)
    assert e.value.code == "a2a.no-signatures"


def _mint(jwt, key, claims, kid):
    return jwt.encode(claims, key.private_pem(), algorithm=key.algorithm, headers={"typ": "at+jwt", "kid": kid})


def test_audit_delegation():
    jwt = peer("jwt")
    key = agentsig.SigningKey.generate("ES256")
    now = int(time.time())
    claims = {
        "iss": "https://as.example",
        "sub": "alice",
        "aud": "https://api.example",
        "iat": now,
        "exp": now + 300,
        "jti": "t-1",
        "scope": "calendar.read",
        "act": {"sub": "agent-1"},
    }
    token = _mint(jwt, key, claims, key.kid)
    v = agentsig.Verifier(keys=[key])
    r = v.audit_delegation([token], issuer=["https://as.example"], audience="https://api.example")
    assert r.command == "delegation audit" and r.verified
    assert r.signatures[0]["kind"] == "jwt"
    assert v.audit_delegation(token).verified
    assert v.audit_delegation(token, issuer="https://as.example").verified
    with pytest.raises(agentsig.NotVerified):
        v.audit_delegation(token, issuer=["https://other.example"])
    with pytest.raises(agentsig.NotVerified):
        v.audit_delegation(token + "x")
    expired = _mint(jwt, key, dict(claims, iat=now - 7200, exp=now - 3600), key.kid)
    with pytest.raises(agentsig.PolicyRefused) as e:
        v.audit_delegation(expired)
    assert "expired" in e.value.code
    # An algorithm outside the allow-list is a policy refusal too (a
    # namespaced code: jwt.alg-not-allowed).
    with pytest.raises(agentsig.PolicyRefused) as e:
        agentsig.Verifier(keys=[key], algorithms=["EdDSA"]).audit_delegation(token)
    assert e.value.code.endswith("alg-not-allowed")


def test_verify_request_binds_the_signature_to_the_sites_authorities(key, verifier):
    h = agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=False)
    assert verifier.verify_request("GET", URL, h, authorities=["api.example"]).verified
    assert verifier.verify_request("GET", URL, h, authorities=["API.example:443", "b.example"]).verified
    with pytest.raises(agentsig.NotVerified) as e:
        verifier.verify_request("GET", URL, h, authorities=["b.example"])
    assert e.value.code == "wrong-authority"
    uncovered = agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=False, components=["@method", "@path"])
    with pytest.raises(agentsig.NotVerified) as e:
        verifier.verify_request("GET", URL, uncovered, authorities=["api.example"])
    assert e.value.code == "authority-not-covered"
    w = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://agent.example")
    with pytest.raises(agentsig.NotVerified) as e:
        verifier.verify_request("GET", URL, w, web_bot_auth=True, authorities=["b.example"])
    assert e.value.code == "wrong-authority"
    assert verifier.verify_request("GET", URL, w, web_bot_auth=True, authorities=["api.example"]).verified
    for bad in (["https://api.example"], [""], ["a b"]):
        with pytest.raises(agentsig.BadInput) as e:
            verifier.verify_request("GET", URL, h, authorities=bad)
        assert e.value.code == "usage"
    with pytest.raises(TypeError):
        verifier.verify_request("GET", URL, h, authorities="api.example")


def test_verify_request_refuses_userinfo_and_fragments(key, verifier):
    h = agentsig.sign_request("GET", "https://api.example/a", [], b"", key, web_bot_auth=False)
    # Both verified as https://api.example/a before.
    for url in ("https://evil.example@api.example/a", "https://api.example/a#/../b"):
        with pytest.raises(agentsig.BadInput) as e:
            verifier.verify_request("GET", url, h)
        assert e.value.code == "input.malformed"


def test_verify_request_from_parts(key, verifier):
    h = [("Host", "api.example")] + agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=False)
    assert verifier.verify_request("GET", "/orders?id=7", h, scheme="https", authorities=["api.example"]).verified
    for target in (".evil.example/orders?id=7", "@evil.example/orders", "/orders#x"):
        with pytest.raises(agentsig.BadInput):
            verifier.verify_request("GET", target, h, scheme="https")
    with pytest.raises(agentsig.BadInput):  # two Host fields
        verifier.verify_request("GET", "/orders?id=7", h + [("host", "b.example")], scheme="https")
    with pytest.raises(agentsig.BadInput):  # a Host that is not an authority
        verifier.verify_request("GET", "/orders?id=7", [("host", "a@b.example")] + h[1:], scheme="https")


def test_strict_verification_requires_a_nonce_method_and_path(key, verifier):
    plain = agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=False)
    assert verifier.verify_request("GET", URL, plain).verified
    with pytest.raises(agentsig.NotVerified):
        verifier.verify_request("GET", URL, plain, strict=True)
    w = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://agent.example")
    assert verifier.verify_request("GET", URL, w, web_bot_auth=True, strict=True).verified


def test_with_replay_store_keeps_the_rest_of_the_verifier(key, verifier):
    assert not verifier.has_replay_store
    v = verifier.with_replay_store("memory")
    assert v.has_replay_store and v.web_bot_auth_keys
    w = agentsig.sign_request("GET", URL, [], b"", key, signature_agent="https://agent.example")
    assert v.verify_request("GET", URL, w, web_bot_auth=True).verified
    with pytest.raises(agentsig.PolicyRefused) as e:
        v.verify_request("GET", URL, w, web_bot_auth=True)
    assert e.value.code == "replay"
    # The original is unchanged.
    assert verifier.verify_request("GET", URL, w, web_bot_auth=True).verified


def test_jwks_is_the_set_itself_or_a_path_like(key, tmp_path):
    f = tmp_path / "jwks.json"
    f.write_text(json.dumps({"keys": [key.public_jwk()]}))
    h = agentsig.sign_request("GET", URL, [], b"", key, web_bot_auth=False)
    assert agentsig.Verifier(jwks=f).verify_request("GET", URL, h).verified
    with pytest.raises(agentsig.BadKey, match="pathlib.Path"):
        agentsig.Verifier(jwks=str(f))
    with pytest.raises(agentsig.BadInput):
        agentsig.Verifier(jwks=tmp_path / "absent.json")


def test_parse_response_reads_what_curl_si_saved(key, verifier):
    h = agentsig.sign_response(200, [("Content-Type", "application/json")], DOC, key)
    head = "".join(f"{n}: {v}\r\n" for n, v in h)
    raw = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        + f"HTTP/1.1 200 OK\r\n{head}Content-Length: {len(DOC)}\r\n\r\n".encode()
        + DOC
    )
    status, headers, body = agentsig.parse_response(raw)
    assert status == 200 and body == DOC
    assert verifier.verify_response(status, headers, body).verified
    with pytest.raises(agentsig.BadInput):
        agentsig.parse_response(b"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n")
    with pytest.raises(agentsig.BadInput):
        agentsig.parse_response(b"not http")
