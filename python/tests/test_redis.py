"""replay_store="redis://..." against a real redis-server on loopback: two
Verifiers (two processes of a fleet) share one store, so a request seen by
one is refused by the other. Skipped when redis-server is not installed,
unless AGENTSIG_REQUIRE_INTEROP=1."""

import shutil
import socket
import subprocess
import time

import pytest

import agentsig
from conftest import require_interop

URL = "https://api.example/orders"


@pytest.fixture
def redis_url(tmp_path):
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


def test_two_verifiers_share_one_redis_replay_store(redis_url):
    k = agentsig.SigningKey.generate("EdDSA")
    a = agentsig.Verifier(agent_keys={"https://agent.example": [k]}, replay_store=redis_url)
    b = agentsig.Verifier(agent_keys={"https://agent.example": [k]}, replay_store=redis_url)
    h = agentsig.sign_request("GET", URL, [], b"", k, signature_agent="https://agent.example")
    assert a.verify_request("GET", URL, h, web_bot_auth=True).verified
    with pytest.raises(agentsig.PolicyRefused) as e:
        b.verify_request("GET", URL, h, web_bot_auth=True)
    assert "replay" in e.value.code
    fresh = agentsig.sign_request("GET", URL, [], b"", k, signature_agent="https://agent.example")
    assert b.verify_request("GET", URL, fresh, web_bot_auth=True).verified


def test_an_unreachable_redis_store_refuses(redis_url):
    k = agentsig.SigningKey.generate("EdDSA")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    v = agentsig.Verifier(agent_keys={"https://agent.example": [k]}, replay_store=f"redis://127.0.0.1:{dead}/0")
    h = agentsig.sign_request("GET", URL, [], b"", k, signature_agent="https://agent.example")
    with pytest.raises(agentsig.NotVerified):
        v.verify_request("GET", URL, h, web_bot_auth=True)
