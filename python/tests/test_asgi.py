"""The ASGI middleware under a real uvicorn server on loopback, with the
httpx auth class signing requests (sync and async clients)."""

import asyncio
import json
import socket
import threading
import time

import pytest

import agentsig
from agentsig.asgi import SignatureMiddleware
from conftest import peer

# Installed by scripts/test.sh: required there (AGENTSIG_REQUIRE_INTEROP=1).
httpx = peer("httpx")
uvicorn = peer("uvicorn")
starlette = peer("starlette")

from agentsig.httpx import SignatureAuth  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

KEY = agentsig.SigningKey.generate("EdDSA")
AGENT = "https://agent.example"


async def whoami(request):
    ident = getattr(request.state, "agentsig", None)
    body = await request.body()
    return JSONResponse(
        {
            "identity": None if ident is None else {k: v for k, v in ident.items() if k != "report"},
            "verdict": None if ident is None else ident["report"]["verdict"],
            "scope_has_identity": request.scope.get("agentsig") is not None,
            "body": body.decode("utf-8", "replace"),
        }
    )


def app(**options):
    verifier = options.pop("verifier", None) or agentsig.Verifier(
        keys=[KEY.public_key()], agent_keys={AGENT: [KEY.public_key()]}
    )
    return Starlette(
        routes=[Route("/whoami", whoami, methods=["GET", "POST"])],
        middleware=[Middleware(SignatureMiddleware, verifier=verifier, **options)],
    )


# What the plain app asks clients to sign (RFC 9421 section 5.1), sent with its 401s.
HINT = 'sig1=("@method" "@authority" "@path" "content-digest");tag="example"'


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(apps):
    """Run each app (a name and the options of its middleware, the site's
    own authority ``127.0.0.1:PORT`` added) on a loopback port under
    uvicorn; yields the names' base URLs, then stops them."""
    servers, threads, urls = [], [], {}
    for name, opts in apps.items():
        port = free_port()
        opts = dict(opts)
        if not opts.get("any_authority"):
            opts.setdefault("authorities", [f"127.0.0.1:{port}"])
        config = uvicorn.Config(app(**opts), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
        s = uvicorn.Server(config)
        t = threading.Thread(target=s.run, daemon=True)
        t.start()
        servers.append(s)
        threads.append(t)
        urls[name] = f"http://127.0.0.1:{port}"
    for s in servers:
        while not s.started:
            time.sleep(0.01)
    yield urls
    for s in servers:
        s.should_exit = True
    for t in threads:
        t.join(timeout=30)


@pytest.fixture(scope="module")
def server():
    """The apps the tests call, on loopback ports: plain, Web Bot Auth
    (behind a "trusted proxy" that receives on https), optional."""
    yield from serve(
        {
            "plain": {"max_body": 4096, "accept_signature": HINT},
            "wba": {"web_bot_auth": True, "scheme": "https"},
            "optional": {"require": False},
        }
    )


def test_signed_get_and_post_reach_the_app_with_identity(server):
    with httpx.Client(auth=SignatureAuth(KEY)) as c:
        r = c.get(server["plain"] + "/whoami?x=1")
        assert r.status_code == 200, r.text
        got = r.json()
        assert got["identity"]["keyid"] == KEY.kid
        assert got["identity"]["label"] == "sig1"
        assert "@query" in got["identity"]["covered"]
        assert got["verdict"] == "verified" and got["scope_has_identity"]
        r = c.post(server["plain"] + "/whoami", json={"order": 7})
        assert r.status_code == 200, r.text
        assert json.loads(r.json()["body"]) == {"order": 7}
        assert "content-digest" in r.json()["identity"]["covered"]


def test_async_client_is_signed(server):
    async def go():
        async with httpx.AsyncClient(auth=SignatureAuth(KEY)) as c:
            return await c.post(server["plain"] + "/whoami", content=b"hello")

    r = asyncio.run(go())
    assert r.status_code == 200, r.text
    assert r.json()["body"] == "hello"


def test_unsigned_and_tampered_requests_get_401(server):
    r = httpx.get(server["plain"] + "/whoami")
    assert r.status_code == 401
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["code"] == "unsigned"
    assert r.headers["accept-signature"] == HINT
    url = server["plain"] + "/whoami"
    signed = agentsig.sign_request("POST", url, [("content-type", "text/plain")], b"pay 10", KEY, web_bot_auth=False)
    headers = [(n, v) for n, v in signed if n.lower() != "host"]
    ok = httpx.post(url, content=b"pay 10", headers=headers)
    assert ok.status_code == 200 and "accept-signature" not in ok.headers
    r = httpx.post(url, content=b"pay 99", headers=headers)
    assert r.status_code == 401 and r.json()["code"] == "content-digest"
    # A signature by a key the verifier does not trust.
    with httpx.Client(auth=SignatureAuth(agentsig.SigningKey.generate("EdDSA"))) as c:
        assert c.get(url).status_code == 401


def test_a_signature_not_covering_the_target_is_refused(server):
    with httpx.Client(auth=SignatureAuth(KEY, components=["@method", "@authority"])) as c:
        r = c.get(server["plain"] + "/whoami")
    assert r.status_code == 401 and r.json()["code"] == "requirements"


def test_oversized_body_gets_413(server):
    with httpx.Client(auth=SignatureAuth(KEY)) as c:
        r = c.post(server["plain"] + "/whoami", content=b"x" * 5000)
    assert r.status_code == 413


def test_several_host_fields_get_400(server):
    port = int(server["plain"].rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET /whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(4096):
            data += chunk
    assert data.startswith(b"HTTP/1.1 400")


def test_web_bot_auth_profile(server):
    with httpx.Client(auth=SignatureAuth(KEY, web_bot_auth=True, signature_agent=AGENT)) as c:
        r = c.get(server["wba"] + "/whoami")
    assert r.status_code == 200, r.text
    ident = r.json()["identity"]
    assert ident["agent"] == AGENT and ident["keyid"] == KEY.thumbprint
    # Plain RFC 9421 is not the profile.
    with httpx.Client(auth=SignatureAuth(KEY)) as c:
        assert c.get(server["wba"] + "/whoami").status_code == 401


def test_optional_mode_passes_unsigned_requests_without_identity(server):
    r = httpx.get(server["optional"] + "/whoami")
    assert r.status_code == 200 and r.json()["identity"] is None
    with httpx.Client(auth=SignatureAuth(KEY)) as c:
        assert c.get(server["optional"] + "/whoami").json()["identity"]["keyid"] == KEY.kid


def test_constructor_checks():
    with pytest.raises(TypeError):
        SignatureMiddleware(lambda *a: None, verifier="v", any_authority=True)
    with pytest.raises(TypeError):
        SignatureAuth("key")
    with pytest.raises(ValueError):
        SignatureAuth(KEY, web_bot_auth=True)
    for bad in ("", "a\nb", "sig1=(\"@method\");tag=\"é\""):
        with pytest.raises(ValueError):
            SignatureMiddleware(
                lambda *a: None, agentsig.Verifier(keys=[KEY.public_key()]), any_authority=True, accept_signature=bad
            )
    with pytest.raises(TypeError):
        SignatureMiddleware(
            lambda *a: None, agentsig.Verifier(keys=[KEY.public_key()]), any_authority=True, accept_signature=b"x"
        )
    # Web Bot Auth needs the agents' key sets, known at construction.
    plain = agentsig.Verifier(keys=[KEY.public_key()])
    assert not plain.web_bot_auth_keys
    with pytest.raises(ValueError):
        SignatureMiddleware(lambda *a: None, plain, any_authority=True, web_bot_auth=True)
    assert agentsig.Verifier(agent_keys={AGENT: [KEY.public_key()]}).web_bot_auth_keys
