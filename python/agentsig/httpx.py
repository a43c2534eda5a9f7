"""``httpx`` clients that sign every request they send: ``Content-Digest``
(RFC 9530) when there is a body, ``Signature-Input`` and ``Signature`` (RFC
9421), and under the Web Bot Auth profile ``Signature-Agent``.

    client = agentsig.httpx.Client(key, signature_agent="https://bot.example")

:class:`Client` and :class:`AsyncClient` sign each request as it is sent,
redirect hops included: a hop's old signature fields are removed and the
hop is signed for its own target before it leaves, whether httpx or the
caller follows the redirect (a signature covers the authority and path it
was made for, RFC 9421 section 7.2.1, so the first hop's must never reach
the next target). A redirect from ``https`` to ``http`` is refused
(:class:`InsecureRedirect`): no signed hop crosses the network in clear
text. :class:`SignatureAuth`, the auth class, signs only what its own flow
sends, and cannot stop a client that follows redirects itself from
resending the first hop's fields: prefer the clients.
"""

from __future__ import annotations

from typing import Generator, Optional, Sequence

import httpx

from ._agentsig import SigningKey, sign_request

__all__ = ["AsyncClient", "Client", "InsecureRedirect", "SignatureAuth", "UnsignedRedirect"]


#: The fields a signature adds to a request; stripped from a redirected
#: request before it is signed again for its new target.
SIGNATURE_FIELDS = ("signature", "signature-input", "signature-agent", "content-digest")


class UnsignedRedirect(httpx.RequestError):
    """The client followed a redirect itself, so httpx resent the first
    request's signature fields to the next target (where they could be
    replayed at the origin, RFC 9421 section 7.2.1): leave the client's
    ``follow_redirects`` off and let :class:`SignatureAuth` follow, signing
    each hop."""


class InsecureRedirect(httpx.RequestError):
    """A redirect from ``https`` to ``http``: the next hop, signed, would
    cross the network in clear text, where anyone on the path can read it,
    replay it while it is valid, or answer in the server's name (RFC 9421
    sections 7.1.2 and 7.2.2). Refused before it is sent."""


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


def _strip(request: httpx.Request) -> None:
    for name in SIGNATURE_FIELDS:
        request.headers.pop(name, None)


def _check_redirect(response: httpx.Response) -> None:
    """Refuse a redirect from https to http before it is followed."""
    if not response.has_redirect_location or response.request.url.scheme != "https":
        return
    nxt = response.request.url.join(response.headers["location"])
    if nxt.scheme == "http":
        raise InsecureRedirect(
            f"{response.request.url} redirected to {nxt.copy_with(path='/', query=None, fragment=None)} "
            "over plain http: a signed request is not sent in clear text after https",
            request=response.request,
        )


#: The keyword arguments of :class:`Client` and :class:`AsyncClient` that
#: are :class:`SignatureAuth`'s; the others are httpx's.
SIGN_OPTIONS = ("web_bot_auth", "signature_agent", "components", "expires_in", "label")


def _signer(key: SigningKey, kwargs: dict) -> SignatureAuth:
    """The signer of a client, from (and out of) its keyword arguments."""
    return SignatureAuth(key, **{k: kwargs.pop(k) for k in SIGN_OPTIONS if k in kwargs})


def _hooks(kwargs: dict, request_hook, response_hook) -> dict:
    """The caller's event hooks with the signer's: the request hook last
    (it signs what the caller's hooks left), the response check first."""
    hooks = dict(kwargs.pop("event_hooks", None) or {})
    hooks["request"] = [*hooks.get("request", []), request_hook]
    hooks["response"] = [response_hook, *hooks.get("response", [])]
    return hooks


class Client(httpx.Client):
    """An ``httpx.Client`` that signs every request it sends with ``key``,
    each redirect hop for its own target (see the module documentation).

    The signing options (``web_bot_auth``, ``signature_agent``,
    ``components``, ``expires_in``, ``label``) are those of
    :class:`SignatureAuth`; ``follow_redirects`` defaults to ``True`` (every
    hop is signed anew); the other keyword arguments are ``httpx.Client``'s. Its signing is an
    event hook: replacing ``event_hooks`` after construction removes it.
    """

    def __init__(self, key: SigningKey, *, follow_redirects: bool = True, **kwargs) -> None:
        signer = _signer(key, kwargs)

        def sign_hop(request: httpx.Request) -> None:
            _strip(request)
            request.read()
            signer.sign(request)

        hooks = _hooks(kwargs, sign_hop, _check_redirect)
        super().__init__(follow_redirects=follow_redirects, event_hooks=hooks, **kwargs)


class AsyncClient(httpx.AsyncClient):
    """:class:`Client` for asyncio: an ``httpx.AsyncClient`` that signs
    every request it sends, each redirect hop for its own target."""

    def __init__(self, key: SigningKey, *, follow_redirects: bool = True, **kwargs) -> None:
        signer = _signer(key, kwargs)

        async def sign_hop(request: httpx.Request) -> None:
            _strip(request)
            await request.aread()
            signer.sign(request)

        async def check(response: httpx.Response) -> None:
            _check_redirect(response)

        hooks = _hooks(kwargs, sign_hop, check)
        super().__init__(follow_redirects=follow_redirects, event_hooks=hooks, **kwargs)
