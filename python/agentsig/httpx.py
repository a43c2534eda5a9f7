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


#: The fields a signature adds to a request; stripped from a redirected
#: request before it is signed again for its new target.
SIGNATURE_FIELDS = ("signature", "signature-input", "signature-agent", "content-digest")


class UnsignedRedirect(httpx.RequestError):
    """The client followed a redirect itself, so httpx resent the first
    request's signature fields to the next target (where they could be
    replayed at the origin, RFC 9421 section 7.2.1): leave the client's
    ``follow_redirects`` off and let :class:`SignatureAuth` follow, signing
    each hop."""


class SignatureAuth(httpx.Auth):
    """Sign each request with ``key`` (an :class:`agentsig.SigningKey`).

    By default plain RFC 9421 over ``@method``, ``@authority``, ``@path``
    (``@query`` when there is one), ``content-type`` when present and
    ``content-digest`` when there is a body; ``components`` names others.
    Under the Web Bot Auth profile for the agent at ``signature_agent`` (its
    https URL) when that is given: ``web_bot_auth=None``, the default shared
    with :func:`agentsig.sign_request`, means "when ``signature_agent`` is
    given". ``expires_in``: the signature's lifetime in seconds.

    ``follow_redirects``: follow redirects here, signing each hop anew for
    its own target (a signature covers the authority and path it was made
    for, so the first one is never sent to the next target); at most the
    client's ``max_redirects``. Leave the client's own ``follow_redirects``
    off: httpx would resend the first hop's signature fields to every
    target, and this auth raises :class:`UnsignedRedirect` when it sees a
    response it did not follow itself.
    """

    requires_request_body = True

    def __init__(
        self,
        key: SigningKey,
        *,
        web_bot_auth: Optional[bool] = None,
        signature_agent: Optional[str] = None,
        components: Optional[Sequence[str]] = None,
        expires_in: int = 300,
        label: str = "sig1",
        follow_redirects: bool = False,
    ) -> None:
        if not isinstance(key, SigningKey):
            raise TypeError(f"key must be an agentsig.SigningKey, not {type(key).__name__}")
        if web_bot_auth is None:
            web_bot_auth = signature_agent is not None
        if web_bot_auth and not signature_agent:
            raise ValueError("web_bot_auth=True needs signature_agent (the agent's https URL)")
        self.key = key
        self.web_bot_auth = web_bot_auth
        self.signature_agent = signature_agent
        self.components = list(components) if components is not None else None
        self.expires_in = expires_in
        self.label = label
        self.follow_redirects = follow_redirects

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
        """Sign the request, send it, and, with ``follow_redirects``, sign and
        send each redirected request (httpx calls this for sync and async
        clients)."""
        self.sign(request)
        response = yield request
        hops = 0
        while True:
            if len(response.history) > hops:
                # httpx followed a redirect with the first hop's fields.
                raise UnsignedRedirect(
                    "the client followed a redirect and resent this request's signature to "
                    f"{response.request.url}: create the client with follow_redirects=False and give "
                    "SignatureAuth(..., follow_redirects=True), which signs each hop",
                    request=response.request,
                )
            nxt = response.next_request
            if not self.follow_redirects or nxt is None:
                return
            for name in SIGNATURE_FIELDS:
                nxt.headers.pop(name, None)
            nxt.read()
            self.sign(nxt)
            hops += 1
            response = yield nxt
