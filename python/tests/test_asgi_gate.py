"""What the ASGI middleware refuses, called directly as an ASGI app (no
server): a signature made for another site, a target that is not the one
verified, a failed signature when signatures are optional, a replayed
nonce, a WebSocket handshake, a scheme the app did not receive."""

import asyncio
import logging
from urllib.parse import unquote

import pytest

import agentsig
from agentsig.asgi import SignatureMiddleware

KEY = agentsig.SigningKey.generate("EdDSA")
AGENT = "https://agent.example"


def verifier():
    return agentsig.Verifier(keys=[KEY.public_key()], agent_keys={AGENT: [KEY.public_key()]})


def gate(**options):
    """The middleware around an app that records what reached it."""
    seen = []

    async def app(scope, receive, send):
        seen.append(scope)
        if scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.accept"})
            return
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    return SignatureMiddleware(app, options.pop("verifier", None) or verifier(), **options), seen


def call(mw, method, target, headers, body=b"", scheme="https", kind="http"):
    """One request through ``mw``: (status, problem code or None). A
    WebSocket handshake answers "accepted" or "closed"."""
    path, _, query = target.partition("?")
    scope = {
        "type": kind,
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": scheme,
        "path": unquote(path),
        "raw_path": path.encode("latin-1"),
        "query_string": query.encode("latin-1"),
        "headers": [(n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in headers],
    }
    if kind == "websocket":
        del scope["method"]
    sent = []
    incoming = [{"type": "websocket.connect"}] if kind == "websocket" else [
        {"type": "http.request", "body": body, "more_body": False}
    ]

    async def receive():
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(msg):
        sent.append(msg)

    asyncio.run(mw(scope, receive, send))
    if kind == "websocket":
        return sent[0]["type"].split(".")[1] if sent else None, scope
    status = sent[0]["status"]
    code = None
    if status != 200:
        import json

        code = json.loads(sent[1]["body"])["code"]
    return status, code, scope


def signed(method, url, body=b"", **kw):
    """The header fields of a request signed for ``url``, with its Host."""
    host = url.split("://", 1)[1].split("/", 1)[0]
    kw.setdefault("web_bot_auth", False)
    return [("host", host)] + agentsig.sign_request(method, url, [], body, KEY, **kw)


def test_a_request_signed_for_another_site_is_refused_whatever_host_says():
    h = signed("GET", "https://a.example/orders")
    mw, seen = gate(authorities=["b.example"])
    assert call(mw, "GET", "/orders", h)[:2] == (401, "wrong-authority")
    assert seen == []
    mw, seen = gate(authorities=["a.example"])
    assert call(mw, "GET", "/orders", h)[:2] == (200, None)
    # The same under the Web Bot Auth profile.
    w = signed("GET", "https://a.example/orders", signature_agent=AGENT, web_bot_auth=True)
    mw, _ = gate(authorities=["b.example"], web_bot_auth=True)
    assert call(mw, "GET", "/orders", w)[:2] == (401, "wrong-authority")
    mw, _ = gate(authorities=["a.example:443"], web_bot_auth=True)
    assert call(mw, "GET", "/orders", w)[:2] == (200, None)


def test_a_signature_that_covers_no_authority_is_not_bound_to_the_site():
    h = signed("GET", "https://a.example/orders", components=["@method", "@path"])
    mw, _ = gate(authorities=["a.example"], require_target=False)
    assert call(mw, "GET", "/orders", h)[:2] == (401, "authority-not-covered")


def test_a_gate_needs_its_authorities_or_an_explicit_any():
    with pytest.raises(ValueError, match="authorities"):
        gate()
    with pytest.raises(ValueError, match="not both"):
        gate(authorities=["a.example"], any_authority=True)
    for bad in (["https://a.example/"], ["a.example/x"], ["user@a.example"], []):
        with pytest.raises(ValueError):
            gate(authorities=bad)
    with pytest.raises(TypeError):
        gate(authorities="a.example")
    mw, _ = gate(any_authority=True)
    assert call(mw, "GET", "/orders", signed("GET", "https://c.example/orders"))[:2] == (200, None)


def test_a_target_with_a_fragment_is_refused_not_verified_as_another_path():
    # Verified as /files/a.txt, a static file server would serve b.txt.
    h = signed("GET", "https://a.example/files/a.txt")
    mw, seen = gate(authorities=["a.example"])
    assert call(mw, "GET", "/files/a.txt#/../b.txt", h)[:2] == (400, "target")
    assert seen == []
    assert call(mw, "GET", "/files/a.txt", h)[:2] == (200, None)


def test_a_target_without_a_leading_slash_cannot_move_the_signed_authority():
    # Glued to Host, ".evil.example/x" made the URL https://a.example.evil.example/x.
    for target, url in ((".evil.example/x", "https://a.example.evil.example/x"), ("@evil.example/x", "https://evil.example/x")):
        h = [("host", "a.example")] + signed("GET", url)[1:]
        mw, seen = gate(any_authority=True)
        assert call(mw, "GET", target, h)[:2] == (400, "target"), target
        assert seen == []


def test_a_failed_signature_is_refused_even_when_signatures_are_optional(caplog):
    h = signed("POST", "https://a.example/pay", b"pay 10")
    mw, seen = gate(authorities=["a.example"], require=False)
    # Unsigned: anonymous. Signed and tampered: refused, not anonymous.
    assert call(mw, "POST", "/pay", [("host", "a.example")], b"pay 99")[:2] == (200, None)
    assert seen[-1]["agentsig"] is None
    with caplog.at_level(logging.WARNING, logger="agentsig.asgi"):
        assert call(mw, "POST", "/pay", h, b"pay 99")[:2] == (401, "content-digest")
    assert "content-digest" in caplog.text
    assert len(seen) == 1
    # Asked for: the app gets it without identity, and the reason.
    mw, seen = gate(authorities=["a.example"], require=False, admit_invalid=True)
    status, _, scope = call(mw, "POST", "/pay", h, b"pay 99")
    assert status == 200 and scope["agentsig"] is None
    assert scope["agentsig_error"]["code"] == "content-digest"
    assert call(mw, "POST", "/pay", h, b"pay 10")[2]["agentsig"]["keyid"] == KEY.kid


def test_a_replayed_nonce_is_refused_by_default():
    h = signed("GET", "https://a.example/orders", signature_agent=AGENT, web_bot_auth=True)
    mw, seen = gate(authorities=["a.example"], web_bot_auth=True)
    assert call(mw, "GET", "/orders", h)[:2] == (200, None)
    assert call(mw, "GET", "/orders", h)[:2] == (401, "replay")
    assert len(seen) == 1
    # Without the store (the caller's choice), a captured signature is reusable.
    mw, _ = gate(authorities=["a.example"], web_bot_auth=True, nonce_store=False)
    assert [call(mw, "GET", "/orders", h)[0] for _ in range(2)] == [200, 200]


def test_strict_requires_method_path_and_a_nonce():
    plain = signed("GET", "https://a.example/orders")  # @method @authority @path, no nonce
    mw, _ = gate(authorities=["a.example"], strict=True)
    status, code, _ = call(mw, "GET", "/orders", plain)
    assert (status, code) == (401, "missing-parameter")
    mw, _ = gate(authorities=["a.example"], strict=False)
    assert call(mw, "GET", "/orders", plain)[0] == 200
    # The profile's signature covers @method and @path and has a nonce.
    w = signed("GET", "https://a.example/orders", signature_agent=AGENT, web_bot_auth=True)
    mw, _ = gate(authorities=["a.example"], web_bot_auth=True, strict=True)
    assert call(mw, "GET", "/orders", w)[:2] == (200, None)


def test_a_websocket_handshake_is_verified():
    mw, seen = gate(authorities=["a.example"])
    assert call(mw, "GET", "/ws", [("host", "a.example")], scheme="wss", kind="websocket")[0] == "close"
    assert seen == []
    h = signed("GET", "https://a.example/ws")
    state, scope = call(mw, "GET", "/ws", h, scheme="wss", kind="websocket")
    assert state == "accept" and scope["agentsig"]["keyid"] == KEY.kid
    # Optional signatures: an unsigned handshake is anonymous.
    mw, seen = gate(authorities=["a.example"], require=False)
    assert call(mw, "GET", "/ws", [("host", "a.example")], scheme="wss", kind="websocket")[0] == "accept"
    assert seen[0]["agentsig"] is None


def test_the_scheme_is_the_scopes_unless_a_trusted_proxy_is_declared():
    w = signed("GET", "https://a.example/orders", signature_agent=AGENT, web_bot_auth=True)
    # Received over plain HTTP: the profile requires TLS (section 5.4).
    mw, _ = gate(authorities=["a.example"], web_bot_auth=True)
    assert call(mw, "GET", "/orders", w, scheme="http")[:2] == (401, "request-not-tls")
    # Behind a proxy that terminates TLS, the app says so.
    mw, _ = gate(authorities=["a.example"], web_bot_auth=True, scheme="https")
    status, _, scope = call(mw, "GET", "/orders", w, scheme="http")
    assert status == 200


def test_the_web_bot_auth_identity_lists_what_was_covered():
    w = signed("GET", "https://a.example/orders", signature_agent=AGENT, web_bot_auth=True)
    mw, _ = gate(authorities=["a.example"], web_bot_auth=True)
    status, _, scope = call(mw, "GET", "/orders", w)
    assert status == 200
    covered = scope["agentsig"]["covered"]
    assert {"@method", "@authority", "@path"} <= set(covered)
    assert 'signature-agent;key="sig1"' in covered, covered
