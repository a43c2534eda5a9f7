"""A key loaded from a file signs with the kid ``agentsig keygen --kid`` wrote
beside it, as the command line does, so a verifier holding the published JWK
Set finds it; a signature naming its key by thumbprint is refused with the
published kid named."""

import json

import pytest

import agentsig
from conftest import DOC


def _publish(tmp_path, kid):
    key = agentsig.SigningKey.generate("ES256")
    (tmp_path / "pub.pem").write_text(key.private_pem())
    jwk = dict(key.public_jwk(), kid=kid)
    jwks = json.dumps({"keys": [jwk]})
    (tmp_path / "pub.jwks.json").write_text(jwks)
    return key, jwks


def test_from_file_reads_the_kid_written_beside_the_pem(tmp_path):
    key, jwks = _publish(tmp_path, "publisher-1")
    loaded = agentsig.SigningKey.from_file(tmp_path / "pub.pem")
    assert loaded.kid == "publisher-1" and loaded.thumbprint == key.thumbprint
    assert agentsig.SigningKey.from_file(str(tmp_path / "pub.pem"), kid="k2").kid == "k2"
    verifier = agentsig.Verifier(jwks=jwks)
    assert verifier.verify_descriptor(DOC, agentsig.sign_descriptor(DOC, loaded)).verified
    # From PEM text, the published JWK Set names it too.
    from_pem = agentsig.SigningKey.from_pem(key.private_pem(), jwk=jwks)
    assert from_pem.kid == "publisher-1"
    with pytest.raises(agentsig.BadInput) as e:
        agentsig.SigningKey.from_file(tmp_path / "missing.pem")
    assert e.value.code == "input.unreadable"


def test_a_thumbprint_kid_is_refused_with_the_published_kid_named(tmp_path):
    key, jwks = _publish(tmp_path, "publisher-1")
    bare = agentsig.SigningKey.from_pem(key.private_pem())
    assert bare.kid == key.thumbprint
    with pytest.raises(agentsig.NotVerified) as e:
        agentsig.Verifier(jwks=jwks).verify_descriptor(DOC, agentsig.sign_descriptor(DOC, bare))
    assert 'published with kid "publisher-1"' in str(e.value.report.error["message"])
