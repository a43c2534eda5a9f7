"""Shared fixtures of the Python package's tests."""

import os

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
