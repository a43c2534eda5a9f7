"""Bad input raises a clear exception and never crashes the interpreter:
wrong types, huge inputs, invalid UTF-8, truncated JWS, odd headers."""

import os
import random

import pytest

import agentsig
from conftest import CARD, DOC

URL = "https://api.example/x"
HUGE = 100 * 1024 * 1024


@pytest.fixture(scope="module")
def k():
    return agentsig.SigningKey.generate("EdDSA")


@pytest.fixture(scope="module")
def v(k):
    return agentsig.Verifier(keys=[k])


@pytest.fixture(scope="module")
def jws(k):
    return agentsig.sign_descriptor(DOC, k)


def test_wrong_types_are_type_errors(k, v, jws):
    cases = [
        lambda: v.verify_descriptor(DOC.decode(), jws),
        lambda: v.verify_descriptor(DOC, 42),
        lambda: v.verify_descriptor(None, jws),
        lambda: v.verify_response(200, 5, DOC),
        lambda: v.verify_response(200, [("a", 1)], DOC),
        lambda: v.verify_response(200, [("a", "b", "c")], DOC),
        lambda: v.verify_response(200, ["ab"], DOC),
        lambda: v.verify_response(200, [], "body"),
        lambda: v.verify_request("GET", URL, [], 3.5),
        lambda: v.verify_card(42),
        lambda: v.verify_card({"name": object()}),
        lambda: v.audit_delegation(7),
        lambda: v.audit_delegation("a.b.c", issuer=7),
        lambda: agentsig.sign_descriptor(DOC, "key"),
        lambda: agentsig.sign_descriptor(DOC, k.public_key()),
        lambda: agentsig.canonicalize(object()),
        lambda: agentsig.canonicalize({"a": {1, 2}}),
        lambda: agentsig.Verifier(keys=[3]),
        lambda: agentsig.Verifier(keys="not a list"),
    ]
    for case in cases:
        with pytest.raises(TypeError) as e:
            case()
        assert str(e.value)


def test_status_codes_are_three_digit_ints(k, v):
    for bad in (-1, 0, 99, 1000, 2**70):
        for call in (lambda: v.verify_response(bad, [], DOC), lambda: agentsig.sign_response(bad, [], DOC, k)):
            with pytest.raises(agentsig.BadInput) as e:
                call()
            assert e.value.code == "input.malformed" and "status" in str(e.value)
    for bad in ("200", 200.0, True, None):
        with pytest.raises(TypeError):
            v.verify_response(bad, [], DOC)
        with pytest.raises(TypeError):
            agentsig.sign_response(bad, [], DOC, k)


def test_too_many_header_lines_name_the_bound(v):
    with pytest.raises(agentsig.BadInput) as e:
        v.verify_response(200, [("a", "b")] * 100_000, DOC)
    assert e.value.code == "input.unreadable" and "field lines" in str(e.value)


def test_huge_inputs_raise_bad_input_before_copying(k, v, jws):
    big = b" " * HUGE
    for call in (
        lambda: v.verify_descriptor(big, jws),
        lambda: v.verify_response(200, [], big),
        lambda: v.verify_request("POST", URL, [], big),
        lambda: v.verify_card(big),
        lambda: agentsig.canonicalize(big),
        lambda: agentsig.sign_descriptor(big, k),
        lambda: agentsig.sign_response(200, [], big, k),
    ):
        with pytest.raises(agentsig.BadInput) as e:
            call()
        assert e.value.code == "input.unreadable"
    with pytest.raises(agentsig.BadInput) as e:
        v.verify_descriptor(bytearray(HUGE), jws)
    assert e.value.code == "input.unreadable"
    # A Python object is held to the bound of the JSON text it stands for.
    with pytest.raises(agentsig.BadInput):
        agentsig.canonicalize([None] * (9 * 1024 * 1024))
    with pytest.raises(agentsig.BadInput):
        v.verify_card({"name": "x", "skills": [{}] * (9 * 1024 * 1024)})
    with pytest.raises(agentsig.BadInput):
        v.verify_descriptor(DOC, "a" * (2 * 1024 * 1024))
    with pytest.raises(agentsig.BadInput):
        v.audit_delegation("a" * (1024 * 1024))
    with pytest.raises(agentsig.BadInput):
        v.audit_delegation(["a.b.c"] * 11)
    with pytest.raises(agentsig.BadInput):
        v.verify_response(200, [("x-a", "b")] * 600, DOC)
    with pytest.raises(agentsig.BadInput):
        v.verify_response(200, [("x-a", "b" * 200_000)], DOC)
    with pytest.raises(agentsig.BadInput):
        agentsig.canonicalize(["x" * 1024] * 20_000)


def test_invalid_utf8_and_unicode(v, jws):
    with pytest.raises(agentsig.BadInput) as e:
        v.verify_descriptor(b'{"name":"\xff"}', jws)
    assert e.value.code == "input.malformed"
    with pytest.raises(agentsig.BadInput):
        v.verify_descriptor(DOC, jws.encode() + b"\xff")
    with pytest.raises(agentsig.BadInput):
        v.verify_response(200, [(b"x-a", b"\xff\xfe")], DOC)
    with pytest.raises(agentsig.BadInput):
        v.verify_descriptor(DOC, "\ud800")
    with pytest.raises(agentsig.BadInput):
        agentsig.canonicalize({"a": "\udc00"})
    with pytest.raises(agentsig.BadInput):
        agentsig.canonicalize(b'{"a":"\xc3"}')


def test_truncated_and_malformed_jws(v, jws):
    for bad in (jws[: len(jws) // 2], jws[:-5], "", "a.b", "...", "x" * 100):
        with pytest.raises(agentsig.AgentsigError) as e:
            v.verify_descriptor(DOC, bad)
        assert e.value.code


def test_header_injection_and_bad_names(v):
    with pytest.raises(agentsig.BadInput):
        v.verify_response(200, [("x-a", "b\r\nSignature: x")], DOC)
    with pytest.raises(agentsig.BadInput):
        v.verify_response(200, [("bad name", "b")], DOC)
    with pytest.raises(agentsig.BadInput):
        v.verify_response(200, [("", "b")], DOC)


def test_bad_urls_methods_and_status(k, v):
    for url in ("/relative", "ftp://x/", "https://", "https://a b/"):
        with pytest.raises(agentsig.BadInput):
            v.verify_request("GET", url, [])
    with pytest.raises(agentsig.BadInput):
        v.verify_request("G ET", URL, [])
    with pytest.raises((OverflowError, TypeError, ValueError)):
        v.verify_response(70000, [], b"")
    with pytest.raises(agentsig.BadInput):
        agentsig.sign_request("GET", URL, [], b"", k, web_bot_auth=False, components=["@nope"])
    with pytest.raises(agentsig.BadInput):
        agentsig.sign_request("GET", URL, [], b"", k, signature_agent="http://insecure.example")
    with pytest.raises(agentsig.BadInput):
        agentsig.sign_card({"name": 1}, k)


def test_bad_options(k):
    with pytest.raises(agentsig.BadInput):
        agentsig.Verifier(keys=[k], algorithms=["none"])
    with pytest.raises(agentsig.BadInput):
        agentsig.Verifier(keys=[k], algorithms=[])
    with pytest.raises(agentsig.BadKey):
        agentsig.Verifier(keys=["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"])
    with pytest.raises(agentsig.BadKey):
        agentsig.Verifier(keys=[{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}])
    with pytest.raises(agentsig.BadKey):
        agentsig.Verifier(jwks=b"not json")


def test_random_bytes_never_crash(k, v, jws):
    rng = random.Random(1)
    signed_headers = agentsig.sign_response(200, [("Content-Type", "application/json")], DOC, k)
    for _ in range(300):
        blob = os.urandom(rng.randrange(0, 300)) if rng.random() < 0.5 else bytes(
            rng.choice(b'{}[]":,.0123456789abcdefnulltrue\\ ') for _ in range(rng.randrange(0, 200))
        )
        text = blob.decode("latin-1")
        calls = [
            lambda: v.verify_descriptor(blob, jws),
            lambda: v.verify_descriptor(DOC, text),
            lambda: v.verify_card(blob),
            lambda: agentsig.canonicalize(blob),
            lambda: v.audit_delegation(text),
            lambda: v.verify_response(200, signed_headers[:-1] + [("Signature", text)], DOC),
            lambda: v.verify_response(200, signed_headers[:2] + [("Signature-Input", text), signed_headers[-1]], DOC),
        ]
        for call in calls:
            try:
                call()
            except (agentsig.AgentsigError, TypeError):
                pass


def test_exceptions_carry_code_and_are_valueerrors_where_documented():
    assert issubclass(agentsig.BadKey, ValueError) and issubclass(agentsig.BadInput, ValueError)
    assert issubclass(agentsig.PolicyRefused, agentsig.NotVerified)
    assert not issubclass(agentsig.NotVerified, KeyError)
    e = agentsig.NotVerified("m", "c", None)
    assert e.code == "c" and e.report is None and str(e) == "m"


def test_an_oversized_bytearray_is_refused_before_it_is_copied():
    """In a fresh interpreter: refusing a 100 MB bytearray must not raise the
    peak memory by another 100 MB (a copy before the size check would)."""
    import subprocess
    import sys

    code = f"""
import resource, agentsig
k = agentsig.SigningKey.generate("EdDSA")
v = agentsig.Verifier(keys=[k])
big = bytearray({HUGE})
big[-1] = 1  # touch the pages
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for call in (lambda: v.verify_descriptor(big, "a..b"), lambda: v.verify_response(200, [], big)):
    try:
        call()
    except agentsig.BadInput:
        pass
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) // 1024)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    grown_mib = int(out.stdout.strip())
    assert grown_mib < 50, f"peak memory grew by {grown_mib} MiB"
