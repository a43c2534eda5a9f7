"""Shared fixtures of the Python package's tests."""

import contextlib
import http.server
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time

import pytest

import agentsig

DOC = b'{"name":"planner","url":"https://planner.example/","version":"1.0.0"}'

CARD = {
    "name": "Planner",
    "description": "plans",
    "supportedInterfaces": [{"url": "https://planner.example/a2a", "protocolBinding": "JSONRPC"}],
    "version": "1.0.0",
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [],
}


def require_interop() -> bool:
    """Interop tests fail instead of skipping when a peer is missing."""
    return os.environ.get("AGENTSIG_REQUIRE_INTEROP") == "1"


def peer(module: str):
    """Import an interop peer, or skip (fail under AGENTSIG_REQUIRE_INTEROP=1)."""
    if require_interop():
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module)


@pytest.fixture(params=["ES256", "EdDSA"])
def key(request):
    return agentsig.SigningKey.generate(request.param)


@pytest.fixture
def verifier(key):
    # The key is trusted, and is the Web Bot Auth key of agent.example only.
    return agentsig.Verifier(keys=[key.public_key()], agent_keys={"https://agent.example": [key.public_key()]})


@contextlib.contextmanager
def https_server(cert, key, routes):
    """A loopback HTTPS server (certificate ``cert``, key ``key``: files)
    answering ``routes`` (path -> (headers, body)) with 200, anything else
    404; yields ``(port, served)``, the paths asked for in order."""
    served = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            served.append(self.path)
            if self.path not in routes:
                self.send_error(404)
                return
            headers, body = routes[self.path]
            self.send_response(200)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert), str(key))
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield server.server_address[1], served
    finally:
        server.shutdown()
        server.server_close()
        t.join(timeout=10)


@pytest.fixture
def redis_url(tmp_path):
    """A redis-server started on a loopback port for the test (stopped after
    it); skipped when redis-server is not installed, unless
    AGENTSIG_REQUIRE_INTEROP=1."""
    binary = shutil.which("redis-server")
    if binary is None:
        if require_interop():
            pytest.fail("redis-server not found and AGENTSIG_REQUIRE_INTEROP=1 (apt-get install -y redis-server)")
        pytest.skip("redis-server not found")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Readiness: wait until the port accepts connections (not a timing assertion).
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
