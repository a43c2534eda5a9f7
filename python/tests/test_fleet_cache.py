"""The fleet key-set cache from Python (key_cache="redis://...",
fleet_secret_file=... or AGENTSIG_FLEET_SECRET), against a real redis-server
the test starts on loopback and loopback HTTPS origins that count their
fetches: two verifiers with the same store and secret fetch an agent's key
directory (and a catalog identity's JWK Set) once between them; a verifier
with another secret ignores their entries and fetches again. The option
rules (no secret, a short secret, a secret file others can write) raise
BadInput or BadKey naming the cause."""

import os

import pytest

import agentsig
from test_catalog import resolved, resolving_verifier  # noqa: F401 - the fixture
from test_directory import directory  # noqa: F401 - the fixture

URL = "https://api.example/orders"
DIRECTORY = "/.well-known/http-message-signatures-directory"


def secret_file(tmp_path, name, secret=b"s" * 40, mode=0o600):
    p = tmp_path / name
    p.write_bytes(secret)
    os.chmod(p, mode)
    return p


def fetching(directory, **kw):
    return agentsig.Verifier(
        fetch_directories=True, allow_private_hosts=["localhost"], extra_roots_pem=[directory["ca"]], **kw
    )


def test_two_verifiers_fetch_a_directory_once_and_another_secret_fetches_again(
    directory, redis_url, tmp_path, monkeypatch  # noqa: F811
):
    monkeypatch.delenv("AGENTSIG_FLEET_SECRET", raising=False)
    fleet = secret_file(tmp_path, "fleet")
    a = fetching(directory, key_cache=redis_url, fleet_secret_file=fleet)
    b = fetching(directory, key_cache=redis_url, fleet_secret_file=str(fleet))

    def verify(v):
        h = agentsig.sign_request("GET", URL, [], b"", directory["key"], signature_agent=directory["agent"])
        assert v.verify_request("GET", URL, h, web_bot_auth=True).verified

    verify(a)
    verify(b)
    assert directory["served"] == [DIRECTORY]
    # Another secret: the stored entry fails its MAC and is not used.
    c = fetching(directory, key_cache=redis_url, fleet_secret_file=secret_file(tmp_path, "other", b"t" * 40))
    verify(c)
    assert directory["served"] == [DIRECTORY, DIRECTORY]
    # The secret from the environment, as the command line takes it: the
    # same secret as c's, whose entry now stands, so no fetch.
    monkeypatch.setenv("AGENTSIG_FLEET_SECRET", "t" * 40)
    verify(fetching(directory, key_cache=redis_url))
    assert len(directory["served"]) == 2


def test_catalog_identities_keys_are_fetched_once_per_fleet(resolved, redis_url, tmp_path):  # noqa: F811
    fleet = secret_file(tmp_path, "fleet")
    # urn:c has no Trust Manifest: the catalog is `unsigned`, accepted by
    # allow_unsigned (docs/report.md); urn:a and urn:b verify.
    kw = {"allow_private_hosts": ["localhost"], "extra_roots_pem": [resolved["ca"]], "allow_unsigned": True}
    for _ in range(2):
        v = resolving_verifier(resolved["ca"], key_cache=redis_url, fleet_secret_file=fleet)
        assert v.verify_catalog_url(resolved["url"], **kw).verdict == "unsigned"
        r = v.verify_catalog((resolved["dir"] / "cat.json").read_bytes(), allow_unsigned=True)
        assert [e["manifest"]["status"] for e in r.details["entries"]] == ["verified", "verified", "unsigned"]
    assert resolved["served"].count("/jwks.json") == 1
    other = resolving_verifier(
        resolved["ca"], key_cache=redis_url, fleet_secret_file=secret_file(tmp_path, "other", b"t" * 40)
    )
    assert other.verify_catalog_url(resolved["url"], **kw).verdict == "unsigned"
    assert resolved["served"].count("/jwks.json") == 2


def test_the_key_cache_option_rules(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTSIG_FLEET_SECRET", raising=False)
    k = agentsig.SigningKey.generate("EdDSA")
    store = "redis://127.0.0.1:9/0"  # never contacted when the options are refused
    with pytest.raises(agentsig.BadInput) as e:
        agentsig.Verifier(keys=[k], key_cache=store)
    assert e.value.code == "usage" and "fleet_secret_file" in str(e.value) and "AGENTSIG_FLEET_SECRET" in str(e.value)
    with pytest.raises(agentsig.BadInput) as e:
        agentsig.Verifier(keys=[k], fleet_secret_file=secret_file(tmp_path, "f"))
    assert e.value.code == "usage" and "give both" in str(e.value)
    with pytest.raises(agentsig.BadKey) as e:
        agentsig.Verifier(keys=[k], key_cache=store, fleet_secret_file=secret_file(tmp_path, "short", b"x" * 31))
    assert "31 bytes" in str(e.value) and "at least 32" in str(e.value)
    with pytest.raises(agentsig.BadKey) as e:
        agentsig.Verifier(keys=[k], key_cache=store, fleet_secret_file=secret_file(tmp_path, "open", mode=0o622))
    assert "open to its group or others" in str(e.value)
    # Readable by others is refused too: a reader could forge entries.
    with pytest.raises(agentsig.BadKey) as e:
        agentsig.Verifier(keys=[k], key_cache=store, fleet_secret_file=secret_file(tmp_path, "readable", mode=0o644))
    assert "chmod 600" in str(e.value)
    with pytest.raises(agentsig.BadInput) as e:
        agentsig.Verifier(keys=[k], key_cache=store, fleet_secret_file=tmp_path / "missing")
    assert e.value.code == "input.unreadable"
    monkeypatch.setenv("AGENTSIG_FLEET_SECRET", "x" * 8)
    with pytest.raises(agentsig.BadKey):
        agentsig.Verifier(keys=[k], key_cache=store)
    with pytest.raises(agentsig.BadInput) as e:
        agentsig.Verifier(keys=[k], key_cache="ftp://x", fleet_secret_file=secret_file(tmp_path, "ok"))
    assert e.value.code == "usage"
    assert agentsig.Verifier(keys=[k], key_cache=store, fleet_secret_file=secret_file(tmp_path, "good"))
