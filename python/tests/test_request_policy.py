"""One default policy for a request in every surface (RFC 9421 section
7.2.8, RFC 9530 section 2): content its signature does not cover through
``content-digest`` is refused by default, as by ``agentsig http verify``
and the Rust library, unless ``allow_uncovered_content=True`` (the CLI's
``--allow-uncovered-content``). The corpus ``tests/vectors/request_policy.json``
is the one the Rust (``tests/request_policy.rs``) and Node
(``node/test/request_policy.test.js``) suites read."""

import json
import pathlib

import pytest

import agentsig

CORPUS = json.loads(
    (pathlib.Path(__file__).resolve().parents[2] / "tests" / "vectors" / "request_policy.json").read_text()
)


def verdict(v, case):
    try:
        r = v.verify_request(case["method"], case["url"], [tuple(p) for p in case["headers"]], case["body"].encode())
    except agentsig.AgentsigError as e:
        return e.code
    assert r.verified and r.verdict == "verified"
    return "verified"


@pytest.mark.parametrize("waived", [False, True])
def test_verify_request_has_the_cli_default_and_waiver(waived):
    kw = {"allow_uncovered_content": True} if waived else {}
    v = agentsig.Verifier(jwks=CORPUS["jwks"], now=CORPUS["now"], **kw)
    cases = CORPUS["cases"]
    assert len(cases) >= 5
    for case in cases:
        want = case["waived" if waived else "default"]
        assert verdict(v, case) == want, case["name"]


def test_a_changed_body_under_an_uncovering_signature_is_refused_by_default():
    v = agentsig.Verifier(jwks=CORPUS["jwks"], now=CORPUS["now"])
    (case,) = [c for c in CORPUS["cases"] if c["name"] == "content changed, not covered"]
    with pytest.raises(agentsig.PolicyRefused) as e:
        v.verify_request(case["method"], case["url"], [tuple(p) for p in case["headers"]], case["body"].encode())
    assert e.value.code == "required-component-not-covered"
