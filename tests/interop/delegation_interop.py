#!/usr/bin/env python3
"""Cross-implementation checks for `agentsig delegation` (called by
tests/delegation_interop.rs).

  mint-bundle --lib pyjwt|joserfc --key PRIV.pem --kid KID [--widen]
      Print a three-hop RFC 8693 delegation bundle (one compact JWT per line),
      subject token first, minted by the named library with the current time.
  verify --lib pyjwt|joserfc --pub PUB.pem --iss ISS --aud AUD TOKEN
      Verify TOKEN (ES256, typ at+jwt, exp/iss/aud/jti required) and print
      its claims as JSON; exit 1 when it does not verify.
  check --lib NAME
      Exit 0 when the library imports, 3 when it is missing.

CI installs the libraries with:  pip install "PyJWT[crypto]" joserfc
"""
import argparse
import json
import sys
import time

AS = "https://as.example.com"
A = "https://agent-a.example.com"
B = "https://agent-b.example.com"
CAL = "https://calendar.example.com"


def bundle_claims(now, widen):
    t0 = {"iss": AS, "sub": "user@example.com", "aud": A, "iat": now, "nbf": now,
          "exp": now + 3600, "jti": "py-t0", "scope": "calendar:read calendar:write mail:read",
          "may_act": {"sub": A}}
    t1 = {"iss": AS, "sub": "user@example.com", "aud": B, "iat": now + 1, "nbf": now + 1,
          "exp": now + 1800, "jti": "py-t1", "scope": "calendar:read mail:read",
          "act": {"sub": A}, "may_act": {"sub": B}}
    t2 = {"iss": AS, "sub": "user@example.com", "aud": CAL, "iat": now + 2, "nbf": now + 2,
          "exp": now + 900, "jti": "py-t2",
          "scope": "calendar:read calendar:write" if widen else "calendar:read",
          "act": {"sub": B, "act": {"sub": A}}}
    return [t0, t1, t2]


def load_lib(name):
    if name == "pyjwt":
        import jwt  # noqa: F401
        from cryptography.hazmat.primitives import serialization  # noqa: F401
        return jwt
    if name == "joserfc":
        import joserfc  # noqa: F401
        return joserfc
    raise SystemExit("unknown lib " + name)


def mint(lib, key_pem, kid, claims):
    header = {"alg": "ES256", "typ": "at+jwt", "kid": kid}
    if lib == "pyjwt":
        import jwt
        return jwt.encode(claims, key_pem, algorithm="ES256", headers=header)
    from joserfc import jwt as jjwt
    from joserfc.jwk import ECKey
    key = ECKey.import_key(key_pem)
    return jjwt.encode(header, claims, key, algorithms=["ES256"])


def verify(lib, pub_pem, iss, aud, token):
    if lib == "pyjwt":
        import jwt
        hdr = jwt.get_unverified_header(token)
        claims = jwt.decode(token, pub_pem, algorithms=["ES256"], audience=aud, issuer=iss,
                            options={"require": ["exp", "iss", "aud", "jti", "sub"]})
    else:
        from joserfc import jwt as jjwt
        from joserfc.jwk import ECKey
        key = ECKey.import_key(pub_pem)
        tok = jjwt.decode(token, key, algorithms=["ES256"])
        reg = jjwt.JWTClaimsRegistry(
            iss={"essential": True, "value": iss},
            aud={"essential": True, "value": aud},
            exp={"essential": True},
            jti={"essential": True},
            sub={"essential": True},
        )
        reg.validate(tok.claims)
        hdr, claims = tok.header, tok.claims
    if str(hdr.get("typ", "")).lower() not in ("at+jwt", "application/at+jwt"):
        raise ValueError("typ is not at+jwt: %r" % hdr.get("typ"))
    return claims


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--lib", required=True)
    m = sub.add_parser("mint-bundle")
    m.add_argument("--lib", required=True)
    m.add_argument("--key", required=True)
    m.add_argument("--kid", required=True)
    m.add_argument("--widen", action="store_true")
    v = sub.add_parser("verify")
    v.add_argument("--lib", required=True)
    v.add_argument("--pub", required=True)
    v.add_argument("--iss", required=True)
    v.add_argument("--aud", required=True)
    v.add_argument("token")
    a = p.parse_args()
    try:
        load_lib(a.lib)
    except ImportError as e:
        print("missing: %s" % e, file=sys.stderr)
        return 3
    if a.cmd == "check":
        return 0
    if a.cmd == "mint-bundle":
        key = open(a.key, "rb").read()
        for claims in bundle_claims(int(time.time()), a.widen):
            print(mint(a.lib, key, a.kid, claims))
        return 0
    pub = open(a.pub, "rb").read()
    try:
        claims = verify(a.lib, pub, a.iss, a.aud, a.token)
    except Exception as e:  # the verdict, not a crash
        print("verify failed: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1
    print(json.dumps(claims, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
