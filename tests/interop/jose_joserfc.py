#!/usr/bin/env python3
"""Independent JOSE side of tests/jws_interop.rs: PyPI joserfc (+ rfc8785 for JCS).

Reads one JSON request on stdin and writes one JSON response on stdout:
  {"verify": [{"alg", "jwk" (public), "jws" (compact detached), "payload_b64u"}...],
   "sign":   [{"alg", "jwk" (private), "kid", "document" (JSON text)}...]}
->
  {"verify": [{"ok": bool, "error": str|null}...],
   "sign":   [{"jws": "<protected>..<signature>", "jcs_b64u": ...}...]}

Exit code 3 with {"missing": "<module>"} when joserfc or rfc8785 is absent.
"""
import base64
import json
import sys
import warnings

try:
    from joserfc import jws
    from joserfc.jwk import import_key
    import rfc8785
except ImportError as e:  # the Rust side decides whether this is a skip
    print(json.dumps({"missing": e.name}))
    sys.exit(3)

warnings.simplefilter("ignore")  # joserfc warns that EdDSA is deprecated (RFC 9864)


def b64u_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def verify(req):
    key = import_key(req["jwk"])
    payload = b64u_decode(req["payload_b64u"])
    try:
        obj = jws.deserialize_compact(req["jws"], key, algorithms=[req["alg"]], payload=payload)
        if obj.payload != payload:
            return {"ok": False, "error": "payload differs"}
        if obj.protected.get("alg") != req["alg"]:
            return {"ok": False, "error": "alg differs"}
        return {"ok": True, "error": None}
    except Exception as e:  # noqa: BLE001 - any failure is "not verified"
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}


def sign(req):
    key = import_key(req["jwk"])
    # Canonicalize independently of agentsig (RFC 8785).
    jcs = rfc8785.dumps(json.loads(req["document"]))
    token = jws.serialize_compact(
        {"alg": req["alg"], "kid": req["kid"]}, jcs, key, algorithms=[req["alg"]]
    )
    h, _, s = token.split(".")
    return {"jws": f"{h}..{s}", "jcs_b64u": b64u(jcs)}


def main():
    req = json.load(sys.stdin)
    out = {
        "verify": [verify(r) for r in req.get("verify", [])],
        "sign": [sign(r) for r in req.get("sign", [])],
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
