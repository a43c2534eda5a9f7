"""Peer for tests/a2a_interop.rs: the A2A Python SDK (PyPI a2a-sdk[signing] 1.3).

Usage:
  a2a_sdk.py canon  CARD.json                -> prints the SDK's canonical payload
  a2a_sdk.py sign   CARD.json PRIVATE.jwk    -> prints the card signed by the SDK
  a2a_sdk.py served CARD.json PRIVATE.jwk    -> the same, as the SDK's server serves it
                                                (agent_card_to_dict: v0.3 compatibility
                                                members added)
  a2a_sdk.py verify CARD.json PUBLIC.jwk     -> exit 0 valid, 1 invalid
Exit 3: the SDK is not installed (the Rust test skips, or fails under
AGENTSIG_REQUIRE_INTEROP=1).
"""

import json
import sys

try:
    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils import signing
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from google.protobuf.json_format import MessageToDict
    from jwt.api_jwk import PyJWK
except ImportError as e:  # pragma: no cover
    print(f"a2a-sdk[signing] not importable: {e}", file=sys.stderr)
    sys.exit(3)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main():
    mode, card_path = sys.argv[1], sys.argv[2]
    card = parse_agent_card(load(card_path))
    if mode == "canon":
        sys.stdout.write(signing._canonicalize_agent_card(card))
        return 0
    jwk = load(sys.argv[3])
    alg = {"P-256": "ES256", "Ed25519": "EdDSA"}.get(jwk.get("crv"), "RS256")
    if mode in ("sign", "served"):
        header = {"alg": alg, "kid": jwk["kid"], "typ": "JOSE"}
        signer = signing.create_agent_card_signer(PyJWK(jwk, algorithm=alg), header)
        signed = signer(card)
        out = MessageToDict(signed) if mode == "sign" else agent_card_to_dict(signed)
        sys.stdout.write(json.dumps(out, ensure_ascii=False))
        return 0
    if mode == "verify":
        public = {k: v for k, v in jwk.items() if k not in ("d", "p", "q", "dp", "dq", "qi")}
        verifier = signing.create_signature_verifier(
            lambda kid, jku: PyJWK(public, algorithm=alg), ["ES256", "EdDSA", "RS256", "PS512"]
        )
        try:
            verifier(card)
        except signing.SignatureVerificationError as e:
            print(f"invalid: {e}", file=sys.stderr)
            return 1
        return 0
    print(f"unknown mode {mode}", file=sys.stderr)
    return 2


sys.exit(main())
