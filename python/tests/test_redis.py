"""replay_store="redis://..." against a real redis-server on loopback: two
Verifiers (two processes of a fleet) share one store, so a request seen by
one is refused by the other. Skipped when redis-server is not installed,
unless AGENTSIG_REQUIRE_INTEROP=1."""

import socket

import pytest

import agentsig

URL = "https://api.example/orders"


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
