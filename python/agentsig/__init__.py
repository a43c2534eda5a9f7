"""agentsig: sign and verify AI-agent descriptors, A2A Agent Cards, RFC 9421
HTTP messages and delegation chains, with the Rust library's checks.

Success returns a :class:`Report`; anything else raises an
:class:`AgentsigError` (:class:`NotVerified` carries the report).
"""

from __future__ import annotations

from ._agentsig import (
    MAX_INPUT_BYTES,
    PublicKey,
    SigningKey,
    Verifier,
    __version__,
    canonicalize,
    parse_response,
    sign_card,
    sign_descriptor,
    sign_request,
    sign_response,
)
from ._errors import AgentsigError, BadInput, BadKey, FetchError, NotVerified, PolicyRefused
from ._report import Report

__all__ = [
    "AgentsigError",
    "BadInput",
    "BadKey",
    "FetchError",
    "MAX_INPUT_BYTES",
    "NotVerified",
    "PolicyRefused",
    "PublicKey",
    "Report",
    "SigningKey",
    "Verifier",
    "__version__",
    "canonicalize",
    "parse_response",
    "sign_card",
    "sign_descriptor",
    "sign_request",
    "sign_response",
]
