"""AI Catalogs (Verifier.verify_catalog, Verifier.verify_catalog_url): a
catalog whose Trust Manifests the agentsig CLI signed verifies, a changed
manifest raises NotVerified with the report, an oversized catalog is BadInput,
and the report is the CLI's `verify CATALOG --json` report in every mode."""

import json
import os
import pathlib
import subprocess

import pytest

import agentsig
from conftest import https_server
from test_directory import make_ca_and_leaf

REPO = pathlib.Path(__file__).resolve().parents[2]


def cli():
    """The agentsig CLI: AGENTSIG_BIN, else the workspace's debug or release build."""
    for p in (os.environ.get("AGENTSIG_BIN"), REPO / "target/debug/agentsig", REPO / "target/release/agentsig"):
        if p and pathlib.Path(p).is_file():
            return str(p)
    pytest.fail("the agentsig CLI is not built: run `cargo build` (or set AGENTSIG_BIN)")


def run(cwd, *args):
    return subprocess.run([cli(), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def entry(identifier, version="1"):
    return {
        "identifier": identifier,
        "displayName": "X",
        "version": version,
        "mediaType": "application/zip",
        # Inline, so that `sign` binds it to its manifest (an entry by url
        # read from a file is not fetched: nothing would bind its bytes).
        "data": {"id": identifier, "version": version},
    }


@pytest.fixture
def signed(tmp_path):
    """A catalog of three entries, two of them signed by the CLI's key."""
    r = run(tmp_path, "keygen", "--out", "k")
    assert r.returncode == 0, r.stderr
    doc = {"specVersion": "1.0", "entries": [entry("urn:a"), entry("urn:b"), entry("urn:c")]}
    (tmp_path / "cat.json").write_text(json.dumps(doc))
    for e in ("urn:a", "urn:b"):
        r = run(tmp_path, "sign", "cat.json", "--key", "k.pem", "--entry", e)
        assert r.returncode == 0, r.stderr
    return tmp_path


def verifier(d):
    return agentsig.Verifier(jwks=d / "k.jwks.json")


def outcome(call):
    """The report of a verify_* call, as a dict, whether it raised or not."""
    try:
        return call().to_dict()
    except agentsig.NotVerified as e:
        return e.report.to_dict()


def test_a_catalog_signed_by_the_cli_verifies(signed):
    text = (signed / "cat.json").read_bytes()
    v = verifier(signed)
    for form in (text, text.decode(), json.loads(text)):
        # urn:c has no Trust Manifest: nothing failed, but no trusted key
        # vouches for it, so the catalog is `unsigned` (docs/report.md):
        # raised by default, returned (never verified) with allow_unsigned.
        with pytest.raises(agentsig.NotVerified) as e:
            v.verify_catalog(form)
        assert e.value.code == "catalog.unsigned" and e.value.report.verdict == "unsigned"
        r = v.verify_catalog(form, allow_unsigned=True)
        assert not r.verified and r.verdict == "unsigned"
        assert [e["identifier"] for e in r.details["entries"]] == ["urn:a", "urn:b", "urn:c"]
        assert [e["manifest"]["status"] for e in r.details["entries"]] == ["verified", "verified", "unsigned"]
        assert sum(c["code"] == "catalog.entry" for c in r.checks) == 3
    # The unsigned entry fails when every entry must be signed.
    with pytest.raises(agentsig.NotVerified) as e:
        v.verify_catalog(text, require_signed=True)
    assert e.value.code == "catalog.not-verified"
    assert "a verified Trust Manifest is required" in e.value.report.error["message"]


def test_a_tampered_manifest_raises_not_verified_with_the_entry(signed):
    doc = json.loads((signed / "cat.json").read_text())
    doc["entries"][1]["trustManifest"]["termsOfServiceUrl"] = "https://evil.example/"
    with pytest.raises(agentsig.NotVerified) as e:
        verifier(signed).verify_catalog(json.dumps(doc).encode())
    assert type(e.value) is agentsig.NotVerified  # neither a policy refusal nor a fetch failure
    assert e.value.code == "catalog.not-verified" == e.value.report.error["code"]
    assert "/entries/1" in str(e.value)
    entries = e.value.report.details["entries"]
    assert [x["manifest"]["status"] for x in entries] == ["verified", "failed", "unsigned"]
    failed = [c for c in e.value.report.checks if c["code"] == "catalog.entry" and not c["passed"]]
    assert len(failed) == 1 and "urn:b" in failed[0]["message"]
    # A key from elsewhere verifies nothing.
    other = agentsig.Verifier(keys=[agentsig.SigningKey.generate()])
    with pytest.raises(agentsig.NotVerified):
        other.verify_catalog((signed / "cat.json").read_bytes())


def test_a_10_mb_catalog_is_bad_input(signed):
    big = b'{"specVersion": "1.0", "entries": [], "pad": "' + b"x" * (10 * 1024 * 1024) + b'"}'
    v = verifier(signed)
    for form in (big, big.decode()):
        with pytest.raises(agentsig.BadInput) as e:
            v.verify_catalog(form)
        assert e.value.code == "input.unreadable"
    for bad in (b"{", b'{"a": 1, "a": 2}'):
        with pytest.raises(agentsig.BadInput) as e:
            v.verify_catalog(bad)
        assert e.value.code == "input.malformed"
    with pytest.raises(TypeError):
        v.verify_catalog(3)


def test_the_report_is_the_clis_in_every_mode(signed):
    doc = json.loads((signed / "cat.json").read_text())
    tampered = json.loads(json.dumps(doc))
    tampered["entries"][0]["trustManifest"]["identity"] = "urn:other"
    lint_error = {"specVersion": "1.0", "entries": [entry("urn:a"), entry("urn:a")]}
    v = verifier(signed)
    seen = set()
    for name, d in (("signed", doc), ("tampered", tampered), ("lint", lint_error)):
        path = signed / f"{name}.json"
        path.write_text(json.dumps(d))
        for require_signed in (False, True):
            args = ["verify", path.name, "--jwks", "k.jwks.json", "--json"]
            if require_signed:
                args.append("--require-signed")
            r = run(signed, *args)
            want = json.loads(r.stdout)
            got = outcome(lambda: v.verify_catalog(path.read_bytes(), require_signed=require_signed))
            assert r.returncode == (0 if want["verified"] else 1), r.stderr
            assert got["subject"] is None and want["subject"] == path.name
            del got["subject"], want["subject"]
            # The one difference: the CLI names the given key set by its
            # file, the binding by its argument.
            want = json.loads(json.dumps(want).replace("JWK Set k.jwks.json", "JWK Set jwks"))
            assert got == want, (name, require_signed)
            seen.add(want["verdict"])
    assert seen == {"unsigned", "not-verified"}


@pytest.fixture
def served(signed, tmp_path_factory):
    """The signed catalog served at https://localhost:PORT/.well-known/ai-catalog.json."""
    ca_pem, cert, key = make_ca_and_leaf(tmp_path_factory.mktemp("tls"))
    body = (signed / "cat.json").read_bytes()
    routes = {"/.well-known/ai-catalog.json": ([("Content-Type", "application/ai-catalog+json")], body)}
    with https_server(cert, key, routes) as (port, _):
        yield {"url": f"https://localhost:{port}/.well-known/ai-catalog.json", "ca": ca_pem}


def test_a_catalog_fetched_by_url_verifies_as_the_file_does(signed, served):
    v = verifier(signed)
    r = v.verify_catalog_url(
        served["url"], allow_unsigned=True, allow_private_hosts=["localhost"], extra_roots_pem=[served["ca"]]
    )
    assert r.verdict == "unsigned" and r.subject == served["url"]
    file_report = v.verify_catalog((signed / "cat.json").read_bytes(), allow_unsigned=True)
    # The same verdict per entry (the messages may say where it was fetched).
    def statuses(rep):
        return [(e["identifier"], e["artifact"]["status"], e["manifest"]["status"]) for e in rep.details["entries"]]

    assert statuses(r) == statuses(file_report)
    assert [c["passed"] for c in r.checks] == [c["passed"] for c in file_report.checks]
    with pytest.raises(agentsig.NotVerified) as e:
        v.verify_catalog_url(
            served["url"], require_signed=True, allow_private_hosts=["localhost"], extra_roots_pem=[served["ca"]]
        )
    assert e.value.code == "catalog.not-verified"
    # The SSRF guard is on by default: a loopback host is refused before any
    # connection, as a fetch failure with a report.
    with pytest.raises(agentsig.FetchError) as e:
        v.verify_catalog_url(served["url"], extra_roots_pem=[served["ca"]])
    assert e.value.code == "fetch.failed" and e.value.report.error["code"] == "fetch.failed"
    # Nothing could be checked: unavailable, as `agentsig verify URL --json` says.
    assert e.value.report.verdict == "unavailable"
    with pytest.raises(agentsig.BadInput):
        v.verify_catalog_url("http://example.com/.well-known/ai-catalog.json")


@pytest.fixture
def resolved(tmp_path_factory):
    """A catalog whose two manifests the CLI signed for an https JWK Set
    identity (the entry identifier is the JWK Set's URL), served with that
    JWK Set at https://localhost:PORT; a third entry is unsigned."""
    d = tmp_path_factory.mktemp("resolved")
    ca_pem, cert, key = make_ca_and_leaf(d)
    (d / "ca.pem").write_text(ca_pem)
    r = run(d, "keygen", "--out", "k")
    assert r.returncode == 0, r.stderr
    routes = {}
    with https_server(cert, key, routes) as (port, served):
        origin = f"https://localhost:{port}"
        identity = origin + "/jwks.json"
        doc = {"specVersion": "1.0", "entries": [entry(identity), entry(identity, "2"), entry("urn:c")]}
        (d / "cat.json").write_text(json.dumps(doc))
        for version in ("1", "2"):
            r = run(d, "sign", "cat.json", "--key", "k.pem", "--entry", identity, "--version", version)
            assert r.returncode == 0, r.stderr
        jwks_headers = [("Content-Type", "application/jwk-set+json"), ("Cache-Control", "max-age=60")]
        routes["/jwks.json"] = (jwks_headers, (d / "k.jwks.json").read_bytes())
        cat_headers = [("Content-Type", "application/ai-catalog+json")]
        routes["/.well-known/ai-catalog.json"] = (cat_headers, (d / "cat.json").read_bytes())
        yield {"dir": d, "ca": ca_pem, "url": origin + "/.well-known/ai-catalog.json", "served": served}


def resolving_verifier(ca_pem, **kw):
    """A verifier with no keys of its own that may fetch: each manifest
    identity's keys are resolved, as `agentsig verify CATALOG` without
    --key resolves them."""
    return agentsig.Verifier(fetch_directories=True, allow_private_hosts=["localhost"], extra_roots_pem=[ca_pem], **kw)


def test_without_keys_each_identitys_keys_are_resolved_as_the_cli_does(resolved):
    d = resolved["dir"]
    v = resolving_verifier(resolved["ca"])
    fetch = ["--ca-file", "ca.pem", "--allow-private-networks", "--json"]
    tampered = json.loads((d / "cat.json").read_text())
    tampered["entries"][1]["trustManifest"]["termsOfServiceUrl"] = "https://evil.example/"
    (d / "tampered.json").write_text(json.dumps(tampered))
    seen = set()
    for name in ("cat.json", "tampered.json"):
        for require_signed in (False, True):
            extra = ["--require-signed"] if require_signed else []
            r = run(d, "verify", name, *fetch, *extra)
            want = json.loads(r.stdout)
            assert r.returncode == (0 if want["verified"] else 1), r.stderr
            got = outcome(lambda: v.verify_catalog((d / name).read_bytes(), require_signed=require_signed))
            assert got["subject"] is None and want["subject"] == name
            del got["subject"], want["subject"]
            assert got == want, (name, require_signed)
            seen.add(want["verdict"])
    assert seen == {"unsigned", "not-verified"}
    statuses = [
        e["manifest"]["status"]
        for e in v.verify_catalog((d / "cat.json").read_bytes(), allow_unsigned=True).details["entries"]
    ]
    assert statuses == ["verified", "verified", "unsigned"]

    # By URL: the same report as `agentsig verify URL --json`.
    r = run(d, "verify", resolved["url"], *fetch, "--allow-unsigned")
    want = json.loads(r.stdout)
    assert r.returncode == 0 and want["verdict"] == "unsigned", r.stderr
    got = outcome(
        lambda: v.verify_catalog_url(
            resolved["url"], allow_unsigned=True, allow_private_hosts=["localhost"], extra_roots_pem=[resolved["ca"]]
        )
    )
    assert got == want

    # With keys given, those keys are trusted for every identity (--key K):
    # a key of another identity verifies no manifest.
    other = agentsig.Verifier(keys=[agentsig.SigningKey.generate()])
    with pytest.raises(agentsig.NotVerified):
        other.verify_catalog((d / "cat.json").read_bytes())


def test_without_keys_or_fetching_a_catalog_is_bad_input(signed):
    k = agentsig.SigningKey.generate("EdDSA")
    v = agentsig.Verifier(agent_keys={"https://agent.example": [k]})
    with pytest.raises(agentsig.BadInput) as e:
        v.verify_catalog((signed / "cat.json").read_bytes())
    assert e.value.code == "usage" and "fetch_directories=True" in str(e.value)


@pytest.fixture
def host_signed(tmp_path):
    """A catalog whose one inline entry carries no Trust Manifest: only the
    catalog's detached JWS binds it (`sign --host` signs the host's manifest
    and writes cat.json.jws, over the RFC 8785 form of the whole document,
    draft-narvaneni-agent-uri-03 section 10.3)."""
    r = run(tmp_path, "keygen", "--out", "k")
    assert r.returncode == 0, r.stderr
    # The host identity is the origin the URL tests serve it from.
    doc = {"specVersion": "1.0", "host": {"displayName": "H", "identifier": "https://localhost"}, "entries": [entry("urn:a")]}
    (tmp_path / "cat.json").write_text(json.dumps(doc))
    r = run(tmp_path, "sign", "cat.json", "--host", "--key", "k.pem")
    assert r.returncode == 0 and (tmp_path / "cat.json.jws").is_file(), r.stderr
    return tmp_path


def tampered_jws(jws):
    """`jws` with one character of its signature changed."""
    jws = jws.strip()
    return jws[:-2] + ("A" if jws[-2] != "A" else "B") + jws[-1]


def test_a_catalog_bound_by_its_jws_gets_the_clis_verdict(host_signed):
    d = host_signed
    jws = (d / "cat.json.jws").read_text()
    (d / "bad.jws").write_text(tampered_jws(jws))
    # The same document with no .jws beside it (`verify FILE` reads FILE.jws).
    (d / "plain.json").write_bytes((d / "cat.json").read_bytes())
    v = verifier(d)
    seen = []
    for file, flags, kw in (
        ("cat.json", ["--jws", "cat.json.jws"], {"jws": jws}),
        ("cat.json", ["--jws", "bad.jws"], {"jws": tampered_jws(jws)}),
        ("plain.json", ["--require-signed"], {"require_signed": True}),
        ("plain.json", [], {}),
    ):
        r = run(d, "verify", file, "--jwks", "k.jwks.json", "--json", *flags)
        want = json.loads(r.stdout.replace("JWK Set k.jwks.json", "JWK Set jwks"))
        assert r.returncode == (0 if want["verified"] else 1), r.stderr
        text = (d / file).read_bytes()
        for form in (text, text.decode(), json.loads(text)):
            got = outcome(lambda: v.verify_catalog(form, **kw))
            assert got["subject"] is None and want["subject"] == file
            assert {**got, "subject": file} == want, (flags, kw)
        seen.append((want["verdict"], want["details"]["entries"][0]["binding"]))
    assert seen == [
        ("verified", "catalog-signature"),
        ("not-verified", "unbound"),
        ("unsigned", "unbound"),
        ("unsigned", "unbound"),
    ]
    # The JWS as bytes is the same JWS; a JWS that is not text, or is above
    # the 1 MiB bound of every JWS, is refused before any check.
    assert v.verify_catalog((d / "cat.json").read_bytes(), jws=jws.encode()).verified
    with pytest.raises(TypeError):
        v.verify_catalog((d / "cat.json").read_bytes(), jws=7)
    with pytest.raises(agentsig.BadInput) as e:
        v.verify_catalog((d / "cat.json").read_bytes(), jws="a" * (1024 * 1024 + 1))
    assert e.value.code == "input.unreadable"


def test_a_catalog_url_is_verified_with_its_jws_beside_it(host_signed, tmp_path_factory):
    """verify_catalog_url fetches URL.jws beside the catalog, as `agentsig
    verify URL` does (the same library function); a 404 there means none."""
    d = host_signed
    ca_pem, cert, key = make_ca_and_leaf(tmp_path_factory.mktemp("tls"))
    (d / "ca.pem").write_text(ca_pem)
    cat = ([("Content-Type", "application/ai-catalog+json")], (d / "cat.json").read_bytes())
    routes = {"/.well-known/ai-catalog.json": cat, "/.well-known/ai-catalog.json.jws": ([], (d / "cat.json.jws").read_bytes())}
    v = verifier(d)
    loose = {"allow_private_hosts": ["localhost"], "extra_roots_pem": [ca_pem]}
    fetch = ["--jwks", "k.jwks.json", "--ca-file", "ca.pem", "--allow-private-networks", "--json"]
    with https_server(cert, key, routes) as (port, _):
        url = f"https://localhost:{port}/.well-known/ai-catalog.json"
        r = run(d, "verify", url, *fetch)
        want = json.loads(r.stdout.replace("JWK Set k.jwks.json", "JWK Set jwks"))
        assert r.returncode == 0 and want["verdict"] == "verified", r.stdout + r.stderr
        got = v.verify_catalog_url(url, **loose).to_dict()
        assert got == want
        assert got["details"]["entries"][0]["binding"] == "catalog-signature"
        # No JWS served (404): the entry is unbound, as from the CLI.
        del routes["/.well-known/ai-catalog.json.jws"]
        r = run(d, "verify", url, *fetch)
        want = json.loads(r.stdout.replace("JWK Set k.jwks.json", "JWK Set jwks"))
        assert r.returncode == 1 and want["verdict"] == "unsigned", r.stdout + r.stderr
        assert outcome(lambda: v.verify_catalog_url(url, **loose)) == want
