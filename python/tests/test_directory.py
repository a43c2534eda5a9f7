"""Web Bot Auth with key directories fetched over HTTPS (fetch_directories=True):
the agent's directory is served by a loopback HTTPS server whose certificate
a test CA signed; the fetcher trusts that CA (extra_roots_pem) and lets
localhost through its SSRF guard (allow_private_hosts) for the test only."""

import datetime
import json

import pytest

import agentsig
from conftest import https_server, peer

URL = "https://api.example/orders"
MEDIA_TYPE = "application/http-message-signatures-directory+json"


def make_ca_and_leaf(tmp_path):
    x509 = peer("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agentsig test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert = tmp_path / "leaf.pem"
    key = tmp_path / "leaf.key"
    cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return ca.public_bytes(serialization.Encoding.PEM).decode(), cert, key


@pytest.fixture
def directory(tmp_path):
    """An agent key and its directory served at https://localhost:PORT."""
    ca_pem, cert, key = make_ca_and_leaf(tmp_path)
    agent_key = agentsig.SigningKey.generate("EdDSA")
    jwk = dict(agent_key.public_jwk(), kid=agent_key.thumbprint)
    body = json.dumps({"keys": [jwk]}).encode()
    routes = {
        "/.well-known/http-message-signatures-directory": (
            [("Content-Type", MEDIA_TYPE), ("Cache-Control", "max-age=60")],
            body,
        )
    }
    with https_server(cert, key, routes) as (port, served):
        yield {
            "agent": f"https://localhost:{port}",
            "key": agent_key,
            "ca": ca_pem,
            "served": served,
        }


def test_keys_come_from_the_fetched_directory(directory):
    v = agentsig.Verifier(
        fetch_directories=True, allow_private_hosts=["localhost"], extra_roots_pem=[directory["ca"]]
    )
    h = agentsig.sign_request("GET", URL, [], b"", directory["key"], signature_agent=directory["agent"])
    r = v.verify_request("GET", URL, h, web_bot_auth=True)
    assert r.details["web_bot_auth"]["agent"] == directory["agent"]
    assert r.signatures[0]["key"]["source"] == {
        "kind": "discovered",
        "from": directory["agent"] + "/.well-known/http-message-signatures-directory",
    }
    assert directory["served"] == ["/.well-known/http-message-signatures-directory"]
    # A key the directory does not list is refused.
    other = agentsig.SigningKey.generate("EdDSA")
    h = agentsig.sign_request("GET", URL, [], b"", other, signature_agent=directory["agent"])
    with pytest.raises(agentsig.NotVerified) as e:
        v.verify_request("GET", URL, h, web_bot_auth=True)
    assert e.value.code == "unknown-key" and not isinstance(e.value, agentsig.FetchError)


def test_the_ssrf_guard_and_tls_roots_stay_on_by_default(directory):
    h = agentsig.sign_request("GET", URL, [], b"", directory["key"], signature_agent=directory["agent"])
    # No exception for localhost: the guard refuses the loopback address.
    guarded = agentsig.Verifier(fetch_directories=True, extra_roots_pem=[directory["ca"]])
    with pytest.raises(agentsig.FetchError) as e:
        guarded.verify_request("GET", URL, h, web_bot_auth=True)
    assert e.value.code == "directory-refused" and "loopback" in str(e.value)
    assert isinstance(e.value, agentsig.NotVerified)
    # The test CA is not trusted unless named.
    untrusted = agentsig.Verifier(fetch_directories=True, allow_private_hosts=["localhost"])
    with pytest.raises(agentsig.FetchError) as e:
        untrusted.verify_request("GET", URL, h, web_bot_auth=True)
    assert e.value.code == "directory-fetch-failed" and "UnknownIssuer" in str(e.value)
    assert directory["served"] == []


def test_a_signed_directory_can_be_required(directory):
    v = agentsig.Verifier(
        fetch_directories=True,
        require_directory_proof=True,
        allow_private_hosts=["localhost"],
        extra_roots_pem=[directory["ca"]],
    )
    h = agentsig.sign_request("GET", URL, [], b"", directory["key"], signature_agent=directory["agent"])
    with pytest.raises(agentsig.NotVerified) as e:
        v.verify_request("GET", URL, h, web_bot_auth=True)
    assert e.value.code == "directory-signature-missing"


def test_fetch_options_need_fetch_directories():
    k = agentsig.SigningKey.generate("EdDSA")
    with pytest.raises(agentsig.BadInput):
        agentsig.Verifier(keys=[k], allow_private_hosts=["localhost"])
    with pytest.raises(agentsig.BadInput):
        agentsig.Verifier(fetch_directories=True, extra_roots_pem=["not a certificate"])
