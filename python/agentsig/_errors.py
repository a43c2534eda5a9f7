"""The exceptions agentsig raises; each carries the stable ``code`` the CLI's
``--json`` report gives as ``error.code`` (``docs/report.md``)."""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["AgentsigError", "NotVerified", "PolicyRefused", "BadKey", "BadInput", "FetchError"]


class AgentsigError(Exception):
    """Base class of every agentsig error.

    ``code`` is the stable machine-readable code (``input.malformed``,
    ``key.unusable``, ``signature-mismatch``...); ``report`` is the
    :class:`agentsig.Report` when something was checked, else ``None``.
    """

    def __init__(self, message: str, code: str = "failed", report: Optional[Any] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.report = report


class NotVerified(AgentsigError):
    """Nothing verified, or a signature did not: ``.report`` says which and why."""


class PolicyRefused(NotVerified):
    """The verifier's policy refused what was presented: an algorithm not
    allowed, a signature too old or expired, a replayed nonce or ``jti``, a
    widened delegation scope... (no signature was found not to match)."""


class BadKey(AgentsigError, ValueError):
    """Key material that cannot be used: not a key, an unknown algorithm, a
    JWK Set with no usable key (code ``key.unusable``)."""


class BadInput(AgentsigError, ValueError):
    """Malformed or oversized input (codes ``input.malformed``,
    ``input.unreadable`` for oversize, ``usage`` for a bad option)."""


class FetchError(NotVerified):
    """Nothing verified because a key directory could not be fetched (the
    network, TLS, the SSRF guard, a redirect, a status other than 200, too
    large, too slow): codes ``directory-fetch-failed``, ``directory-refused``,
    ``directory-redirect``, ``directory-status``, ``directory-too-large``,
    ``directory-timeout`` (``docs/web-bot-auth.md``)."""
