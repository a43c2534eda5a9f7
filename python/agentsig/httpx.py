"""An ``httpx`` auth class that signs outgoing requests (sync and async
clients): ``Content-Digest`` (RFC 9530) when there is a body,
``Signature-Input`` and ``Signature`` (RFC 9421), and under the Web Bot Auth
profile ``Signature-Agent``.

    client = httpx.Client(auth=SignatureAuth(key))
"""

from __future__ import annotations

from typing import Generator, Optional, Sequence

import httpx

from ._agentsig import SigningKey, sign_request

__all__ = ["SignatureAuth"]


class SignatureAuth(httpx.Auth):
    """Sign each request with ``key`` (an :class:`agentsig.SigningKey`).

    By default plain RFC 9421 over ``@method``, ``@authority``, ``@path``
    (``@query`` when there is one), ``content-type`` when present and
    ``content-digest`` when there is a body; ``components`` names others.
    ``web_bot_auth=True`` signs under the Web Bot Auth profile for the agent
    at ``signature_agent`` (its https URL). ``expires_in``: the signature's
    lifetime in seconds.
    """

    requires_request_body = True

    def __init__(
        self,
        key: SigningKey,
        *,
        web_bot_auth: bool = False,
        signature_agent: Optional[str] = None,
        components: Optional[Sequence[str]] = None,
        expires_in: int = 300,
        label: str = "sig1",
    ) -> None:
        if not isinstance(key, SigningKey):
            raise TypeError(f"key must be an agentsig.SigningKey, not {type(key).__name__}")
        if web_bot_auth and not signature_agent:
            raise ValueError("web_bot_auth=True needs signature_agent (the agent's https URL)")
        self.key = key
        self.web_bot_auth = web_bot_auth
        self.signature_agent = signature_agent
        self.components = list(components) if components is not None else None
        self.expires_in = expires_in
        self.label = label

    def sign(self, request: httpx.Request) -> None:
        """Add the signature fields to ``request`` (its body must be read)."""
        headers = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in request.headers.raw]
        signed = sign_request(
            request.method,
            str(request.url),
            headers,
            request.content,
            self.key,
            web_bot_auth=self.web_bot_auth,
            signature_agent=self.signature_agent,
            expires_in=self.expires_in,
            components=self.components,
            label=self.label,
        )
        for name, value in signed[len(headers):]:
            request.headers[name] = value

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Sign the request, then send it (httpx calls this for sync and async clients)."""
        self.sign(request)
        yield request
