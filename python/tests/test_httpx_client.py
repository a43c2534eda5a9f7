"""``agentsig.httpx.Client`` / ``AsyncClient`` on real loopback servers:
with httpx following redirects itself, each hop is signed for its own
target before it is sent, so the first hop's signature fields never reach
the redirect target; a redirect from https to http is refused before the
http hop is sent. The plain ``httpx.Client(auth=SignatureAuth(...),
follow_redirects=True)`` setup, by contrast, sends them (what the clients
exist to prevent)."""

import asyncio
import contextlib
import http.server
import ssl
import subprocess
import threading

import pytest

import agentsig
from conftest import peer

httpx = peer("httpx")

import agentsig.httpx as ahttpx  # noqa: E402

KEY = agentsig.SigningKey.generate("EdDSA")
AGENT = "https://agent.example"


@contextlib.contextmanager
def server(location=None, tls=None):
    """A loopback server recording each request's path and header fields;
    with ``location`` it answers 307 to it (the body is resent), else 200.
    ``tls``: (cert, key) files for HTTPS."""
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def handle_one(self):
            n = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(n) if n else b""
            seen.append((self.command, self.path, [(k.lower(), v) for k, v in self.headers.items()], body))
            if location:
                self.send_response(307)
                self.send_header("Location", location)
            else:
                self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = handle_one  # noqa: N815 - the stdlib's names

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*tls)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    scheme = "https" if tls else "http"
    try:
        yield f"{scheme}://127.0.0.1:{srv.server_address[1]}", seen
    finally:
        srv.shutdown()
        srv.server_close()
        t.join(timeout=10)


def verify(seen_request, authority):
    method, path, headers, body = seen_request
    v = agentsig.Verifier(keys=[KEY.public_key()], agent_keys={AGENT: [KEY.public_key()]})
    return v.verify_request(
        # The request target as the site sees it behind its TLS front.
        method, f"https://{authority}{path}", headers, body, authorities=[authority], web_bot_auth=True
    )


def signatures(seen):
    return [dict(h).get("signature") for _, _, h, _ in seen]


def test_httpx_following_redirects_itself_sends_the_first_signature_on():
    # What the clients prevent: the auth class signs only the first hop.
    with server() as (b, at_b), server(location=f"{b}/landing") as (a, at_a):
        auth = ahttpx.SignatureAuth(KEY, signature_agent=AGENT)
        with httpx.Client(auth=auth, follow_redirects=True) as c:
            with pytest.raises(ahttpx.UnsignedRedirect):
                c.post(f"{a}/start", content=b"order")
    assert signatures(at_b) == signatures(at_a), "the first hop's signature reached b"


@pytest.mark.parametrize("asynchronous", [False, True])
def test_each_hop_is_signed_for_its_target_before_it_is_sent(asynchronous):
    with server() as (b, at_b), server(location=f"{b}/landing") as (a, at_a):
        if asynchronous:

            async def go():
                async with ahttpx.AsyncClient(KEY, signature_agent=AGENT) as c:
                    return await c.post(f"{a}/start", content=b"order")

            r = asyncio.run(go())
        else:
            with ahttpx.Client(KEY, signature_agent=AGENT) as c:
                r = c.post(f"{a}/start", content=b"order")
    assert r.status_code == 200 and len(at_a) == 1 and len(at_b) == 1
    assert signatures(at_b)[0] is not None
    assert signatures(at_b) != signatures(at_a), "a's signature never reaches b"
    assert at_b[0][3] == b"order"
    authority = lambda url: url.split("//", 1)[1]  # noqa: E731
    assert verify(at_a[0], authority(a)).verified
    assert verify(at_b[0], authority(b)).verified


def test_a_redirect_from_https_to_http_is_refused_before_it_is_sent(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"],
        check=True, capture_output=True,
    )
    trust = ssl.create_default_context(cafile=str(cert))
    with server() as (b, at_b), server(location=f"{b}/landing", tls=(str(cert), str(key))) as (a, at_a):
        with ahttpx.Client(KEY, signature_agent=AGENT, verify=trust) as c:
            with pytest.raises(ahttpx.InsecureRedirect, match="clear text"):
                c.get(f"{a}/start")
    assert len(at_a) == 1 and signatures(at_a)[0] is not None
    assert at_b == [], "nothing was sent over http"
