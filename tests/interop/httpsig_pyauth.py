#!/usr/bin/env python3
"""Interop peer for agentsig's RFC 9421 implementation: PyPI
http-message-signatures 3.0.0 (pyauth), the strictest verifier we know.

Called by tests/httpsig_interop.rs:

  httpsig_pyauth.py check
  httpsig_pyauth.py verify --alg A --key FILE --keyid K --message FILE [--require C ...] [--body]
  httpsig_pyauth.py sign   --alg A --key FILE --keyid K --message FILE --out FILE --label L --component C ...

Messages are raw HTTP/1.1 files (CRLF), requests in origin-form with Host
(https assumed). Exit 0 = verified / signed, 1 = refused, 2 = usage.
"""
import argparse
import base64
import sys


def load_modules():
    import http_message_signatures  # noqa: F401
    from http_message_signatures import algorithms  # noqa: F401
    return http_message_signatures


from pyauth_model import Headers, Request, Response  # noqa: E402  (beside this script)


def parse_message(data):
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    start, fields = lines[0], []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields.append((name, value.strip(" \t")))
    headers = Headers(fields)
    if start.startswith("HTTP/"):
        return Response(int(start.split(" ")[1]), headers), body, start
    method, target, _ = start.split(" ")
    return Request(method, "https://" + headers["host"] + target, headers), body, start


def write_message(path, start, headers, body):
    out = start + "\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers.lines) + "\r\n"
    with open(path, "wb") as f:
        f.write(out.encode("latin-1") + body)


ALGS = {
    "rsa-pss-sha512": "RSA_PSS_SHA512",
    "rsa-v1_5-sha256": "RSA_V1_5_SHA256",
    "ecdsa-p256-sha256": "ECDSA_P256_SHA256",
    "ecdsa-p384-sha384": "ECDSA_P384_SHA384",
    "ed25519": "ED25519",
    "hmac-sha256": "HMAC_SHA256",
}


def load_key(alg, path, private):
    from cryptography.hazmat.primitives.serialization import (
        load_pem_private_key,
        load_pem_public_key,
    )

    data = open(path, "rb").read()
    if alg == "hmac-sha256":
        return base64.b64decode(data.strip())
    if private:
        return load_pem_private_key(data, password=None)
    if b"PRIVATE KEY" in data:
        return load_pem_private_key(data, password=None).public_key()
    return load_pem_public_key(data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["check", "verify", "sign"])
    p.add_argument("--alg")
    p.add_argument("--key")
    p.add_argument("--keyid")
    p.add_argument("--message")
    p.add_argument("--out")
    p.add_argument("--label", default="sig1")
    p.add_argument("--component", action="append", default=[])
    p.add_argument("--require", action="append", default=[])
    p.add_argument("--body", action="store_true", help="check Content-Digest against the body")
    p.add_argument(
        "--pss-max-salt",
        action="store_true",
        help="sign rsa-pss-sha512 with the maximum salt length (190 bytes for 2048-bit), as node does",
    )
    a = p.parse_args()
    try:
        hms = load_modules()
    except ImportError as e:
        print(f"http-message-signatures not importable: {e}", file=sys.stderr)
        return 3
    if a.cmd == "check":
        import importlib.metadata as md

        print(md.version("http-message-signatures"))
        return 0
    alg_cls = getattr(hms.algorithms, ALGS[a.alg])
    if a.pss_max_salt:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        class PssMaxSalt(alg_cls):
            def __init__(self, *args, **kw):
                super().__init__(*args, **kw)
                self.padding = padding.PSS(mgf=padding.MGF1(hashes.SHA512()), salt_length=padding.PSS.MAX_LENGTH)

        alg_cls = PssMaxSalt
    msg, body, start = parse_message(open(a.message, "rb").read())
    if a.cmd == "verify":
        key = load_key(a.alg, a.key, private=False)
        resolver = hms.MappingKeyResolver(public_keys={a.keyid: key}, private_keys={})
        verifier = hms.HTTPMessageVerifier(signature_algorithm=alg_cls, key_resolver=resolver)
        try:
            results = verifier.verify(
                msg,
                require_components=a.require,
                body=body if a.body else None,
            )
        except Exception as e:  # InvalidSignature and friends
            print(f"REFUSED: {type(e).__name__}: {e}")
            return 1
        for r in results:
            print(f"verified {r.label} covering {list(r.covered_components)}")
        return 0
    key = load_key(a.alg, a.key, private=True)
    resolver = hms.MappingKeyResolver(public_keys={}, private_keys={a.keyid: key})
    signer = hms.HTTPMessageSigner(signature_algorithm=alg_cls, key_resolver=resolver)
    signer.sign(
        msg,
        key_id=a.keyid,
        label=a.label,
        covered_component_ids=a.component,
        body=body,
        use_existing_digest=True,
    )
    write_message(a.out, start, msg.headers, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
