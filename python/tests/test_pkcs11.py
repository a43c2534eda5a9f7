"""SigningKey.from_pkcs11: keys that never leave a PKCS#11 token (RFC 7512
URIs), on a real SoftHSM2 token this module makes itself: its own
SOFTHSM2_CONF and token directory under pytest's tmp_path (removed at the
end of the session), a token initialized by ``softhsm2-util`` and key pairs
generated in it by OpenSC's ``pkcs11-tool``, an implementation independent
of agentsig. Skips when the tools are absent (fails under
AGENTSIG_REQUIRE_INTEROP=1)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import agentsig
from conftest import DOC, require_interop

LABEL = "agentsig-py"
PIN = "1234"
SO_PIN = "5678"
MODULES = [
    "/usr/lib/softhsm/libsofthsm2.so",
    "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
    "/usr/lib64/pkcs11/libsofthsm2.so",
    "/usr/local/lib/softhsm/libsofthsm2.so",
]
# (label, CKA_ID, pkcs11-tool key type)
KEYS = [("p256", "01", "EC:prime256v1"), ("ed25519", "03", "EC:edwards25519")]


class Token:
    def __init__(self, root: pathlib.Path, module: str):
        self.root = root
        self.module = module
        self.conf = root / "softhsm2.conf"
        self.pin_file = root / "pin"

    def env(self, **extra):
        e = {k: v for k, v in os.environ.items() if k != "AGENTSIG_PKCS11_PIN"}
        return dict(e, SOFTHSM2_CONF=str(self.conf), **extra)

    def tool(self, *args):
        subprocess.run(
            ["pkcs11-tool", "--module", self.module, "--token-label", LABEL, *args],
            env=self.env(),
            check=True,
            capture_output=True,
        )

    def uri(self, obj="p256", pin=True, token=LABEL, module=None):
        q = f"module-path={module or self.module}"
        if pin:
            q += f"&pin-source=file:{self.pin_file}"
        return f"pkcs11:token={token};object={obj};type=private?{q}"


@pytest.fixture(scope="module")
def token(tmp_path_factory):
    module = next((m for m in MODULES if os.path.isfile(m)), None)
    if module is None or not shutil.which("softhsm2-util") or not shutil.which("pkcs11-tool"):
        msg = "softhsm2 or pkcs11-tool not found (apt-get install -y softhsm2 opensc)"
        if require_interop():
            pytest.fail(msg)
        pytest.skip(msg)
    root = tmp_path_factory.mktemp("softhsm")
    (root / "tokens").mkdir()
    t = Token(root, module)
    t.conf.write_text(f"directories.tokendir = {root / 'tokens'}\nobjectstore.backend = file\nlog.level = ERROR\n")
    t.pin_file.write_text(PIN + "\n")
    t.pin_file.chmod(0o600)
    subprocess.run(
        ["softhsm2-util", "--init-token", "--free", "--label", LABEL, "--pin", PIN, "--so-pin", SO_PIN],
        env=t.env(),
        check=True,
        capture_output=True,
    )
    for label, kid, kt in KEYS:
        t.tool("--login", "--pin", PIN, "--keypairgen", "--key-type", kt, "--id", kid, "--label", label)
    # SoftHSM2 reads its configuration when this process first loads the
    # module (C_Initialize), which the first from_pkcs11 does.
    old = os.environ.get("SOFTHSM2_CONF")
    os.environ["SOFTHSM2_CONF"] = str(t.conf)
    yield t
    if old is None:
        os.environ.pop("SOFTHSM2_CONF", None)
    else:
        os.environ["SOFTHSM2_CONF"] = old


CHILD = """
import json, sys, agentsig
try:
    k = agentsig.SigningKey.from_pkcs11(sys.argv[1])
    print(json.dumps({"ok": k.algorithm}))
except agentsig.AgentsigError as e:
    print(json.dumps({"class": type(e).__name__, "code": e.code, "message": str(e)}))
"""


def load_in_child(t: Token, uri: str, **env) -> dict:
    """from_pkcs11 in a new process: a login holds for the whole process
    (PKCS#11 v2.40 section 5.6, C_Login), so a wrong PIN is only seen by a
    process that has not logged in yet."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, uri], env=t.env(**env), capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("obj,alg", [("p256", "ES256"), ("ed25519", "EdDSA")])
def test_descriptor_signed_through_the_token_verifies(token, obj, alg):
    key = agentsig.SigningKey.from_pkcs11(token.uri(obj))
    assert key.algorithm == alg
    assert key.kid == key.thumbprint
    # The private key never leaves the token: it has no PEM form.
    assert key.private_pem() is None
    jws = agentsig.sign_descriptor(DOC, key)
    r = agentsig.Verifier(keys=[key.public_key()]).verify_descriptor(DOC, jws)
    assert r.verified and r.signatures[0]["kid"] == key.kid
    with pytest.raises(agentsig.NotVerified):
        agentsig.Verifier(keys=[key.public_key()]).verify_descriptor(DOC.replace(b"planner", b"p1anner"), jws)


def test_web_bot_auth_request_signed_through_the_token_verifies(token):
    key = agentsig.SigningKey.from_pkcs11(token.uri("p256"), kid="token-key")
    assert key.kid == "token-key"
    url = "https://api.example/orders?id=7"
    h = agentsig.sign_request("POST", url, [("Content-Type", "application/json")], DOC, key, signature_agent="https://agent.example")
    v = agentsig.Verifier(agent_keys={"https://agent.example": [key.public_key()]})
    r = v.verify_request("POST", url, h, DOC, web_bot_auth=True)
    assert r.verified and r.details["web_bot_auth"]["agent"] == "https://agent.example"
    # Another key of the same agent does not verify it.
    other = agentsig.SigningKey.generate("ES256")
    with pytest.raises(agentsig.NotVerified):
        agentsig.Verifier(agent_keys={"https://agent.example": [other.public_key()]}).verify_request(
            "POST", url, h, DOC, web_bot_auth=True
        )


def test_the_pin_from_the_environment(token):
    r = load_in_child(token, token.uri(pin=False), AGENTSIG_PKCS11_PIN=PIN)
    assert r == {"ok": "ES256"}


def test_pin_value_is_refused_with_the_reason(token):
    uri = f"pkcs11:token={LABEL};object=p256?module-path={token.module}&pin-value={PIN}"
    with pytest.raises(agentsig.BadKey, match="pin-value: refused, a PIN on the command line is visible"):
        agentsig.SigningKey.from_pkcs11(uri)


@pytest.mark.parametrize(
    "case,cause",
    [
        ("wrong-pin", "the token refused the PIN"),
        ("no-pin", "the token requires a PIN and none was given"),
        ("no-token", "no token matches"),
        ("no-object", "no private key on the token matches"),
        ("not-a-module", "is not a usable PKCS#11 module"),
        ("no-module-file", "is not a usable PKCS#11 module: no such file"),
    ],
)
def test_a_key_that_cannot_be_loaded_is_bad_key_naming_the_cause(token, case, cause):
    env = {}
    uri = token.uri()
    if case == "wrong-pin":
        wrong = token.root / "wrong-pin"
        wrong.write_text("0000\n")
        wrong.chmod(0o600)
        uri = uri.replace(str(token.pin_file), str(wrong))
    elif case == "no-pin":
        uri = token.uri(pin=False)
    elif case == "no-token":
        uri = token.uri(token="no-such-token")
    elif case == "no-object":
        uri = token.uri(obj="no-such-key")
    elif case == "not-a-module":
        fake = token.root / "not-a-module.so"
        fake.write_text("not a shared library\n")
        uri = token.uri(module=str(fake))
    else:
        uri = token.uri(module=str(token.root / "absent.so"))
    r = load_in_child(token, uri, **env)
    assert r["class"] == "BadKey" and r["code"] == "key.unusable", r
    assert cause in r["message"], r


def test_uri_argument_types(token):
    with pytest.raises(TypeError):
        agentsig.SigningKey.from_pkcs11(42)
    with pytest.raises(agentsig.BadKey, match="malformed pkcs11: URI"):
        agentsig.SigningKey.from_pkcs11("pkcs11:token=%zz")
