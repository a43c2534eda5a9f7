"""ASGI middleware (Starlette, FastAPI, any ASGI 3 app) that verifies the
RFC 9421 signatures of incoming requests before the app sees them.

It mirrors the Rust tower layers (``src/server/verify.rs``,
``src/server/webbotauth.rs``):

* the site names its own authorities (``authorities=[...]``), and a
  signature whose covered ``@authority`` (or the authority of
  ``@target-uri``) is not one of them is refused whatever ``Host`` says
  (RFC 9421 section 7.2.1): a server that answers for a foreign ``Host``
  would otherwise accept a request an agent signed for another site and
  replayed here with that site's ``Host``. ``any_authority=True`` says, in
  so many words, that the app checks the authority itself;
* the body is collected up to ``max_body`` bytes (``413`` beyond) so a
  covered ``content-digest`` is checked against it (RFC 9530 section 2),
  then replayed to the app unchanged;
* the message is built from its parts: the method, the origin-form target
  (``raw_path`` and the query; one not starting with ``/`` or holding
  ``#`` answers ``400``, RFC 9112 section 3.2), the single ``Host`` field
  (several, or none, answer ``400``) and the scheme of the ASGI scope
  (``scope["scheme"]``), or the ``scheme`` a trusted proxy receives on;
* plain RFC 9421: a verified signature must cover ``@method`` and the target
  (``@authority`` and ``@path``, with ``@query`` when there is one, or
  ``@target-uri``) and, when the request has content, ``content-digest``
  (RFC 9421 section 7.2.1);
* ``web_bot_auth=True``: the Web Bot Auth profile (a ``tag="web-bot-auth"``
  signature over ``Signature-Agent``, keyid the thumbprint of a key in
  that agent's key set: the verifier's ``agent_keys``, or the agent's key
  directory with ``fetch_directories=True``);
* a nonce is accepted once (RFC 9421 section 7.2.2): without a replay store
  of its own, the verifier gets a bounded in-process one; ``strict=True``
  also requires ``@method``, ``@path`` and a ``nonce``;
* a verified request carries its identity at ``scope["agentsig"]`` and
  ``scope["state"]["agentsig"]`` (Starlette: ``request.state.agentsig``);
  an unsigned one gets ``401`` with a small ``application/problem+json``
  body (RFC 9457), or, with ``require=False``, reaches the app with no
  identity (``None``); a signed one that fails verification is refused
  (``401``) in both modes unless ``admit_invalid=True``, and the reason is
  logged and kept at ``scope["agentsig_error"]``;
* a WebSocket handshake is verified as a ``GET`` request; refused, it is
  closed before it is accepted (the server answers ``403``).
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Awaitable, Callable, Dict, List, MutableMapping, Optional, Sequence, Tuple

from ._agentsig import Verifier
from ._errors import AgentsigError, BadInput

__all__ = ["SignatureMiddleware", "DEFAULT_MAX_BODY", "DEFAULT_MAX_OFFLOADED"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Largest request body collected for verification (1 MiB, as the Rust layer).
DEFAULT_MAX_BODY = 1024 * 1024

#: Most verifications run in worker threads at once (those that may fetch a
#: key directory); beyond it a request is refused at once with ``503``
#: ``directory-busy`` rather than queued behind the others.
DEFAULT_MAX_OFFLOADED = 8

logger = logging.getLogger("agentsig.asgi")


class _Refused(Exception):
    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail


class SignatureMiddleware:
    """Verify signed requests with ``verifier`` (an :class:`agentsig.Verifier`).

    ``authorities``: the site's own authorities (``host[:port]``); a
    signature made for another one is refused (``wrong-authority``), and one
    that covers neither ``@authority`` nor ``@target-uri`` too
    (``authority-not-covered``). Required unless ``any_authority=True``
    says the app checks the authority itself. ``require``: refuse unsigned
    requests with ``401`` (default); ``False`` passes them through without
    identity. ``admit_invalid``: pass requests whose signature fails to the
    app without identity (default: refused, even with ``require=False``).
    ``web_bot_auth``: require the Web Bot Auth profile. ``strict``: require
    ``@method``, ``@path`` and a ``nonce``. ``nonce_store``: give a verifier
    without a replay store a bounded in-process one (default), so a nonce
    is accepted once. ``max_body``: largest body collected. ``scheme``:
    ``None`` (default) takes the scheme from the ASGI scope; ``"https"``
    (or ``"http"``) says the app is behind a trusted proxy that receives on
    that scheme. ``require_target``: require ``@method`` and the target to
    be covered (plain RFC 9421). ``offload``: verify Web Bot Auth signatures
    in a worker thread (default with ``web_bot_auth``: a verifier with
    ``fetch_directories=True`` fetches key directories); a request without
    one is never offloaded, and at most ``max_offloaded`` run at once
    (beyond: ``503`` ``directory-busy``). ``accept_signature``: an
    ``Accept-Signature`` field value (RFC 9421 section 5.1) sent with every
    ``401``, telling clients what to sign.
    """

    def __init__(
        self,
        app: ASGIApp,
        verifier: Verifier,
        *,
        authorities: Optional[Sequence[str]] = None,
        any_authority: bool = False,
        require: bool = True,
        admit_invalid: bool = False,
        web_bot_auth: bool = False,
        strict: bool = False,
        nonce_store: bool = True,
        max_body: int = DEFAULT_MAX_BODY,
        scheme: Optional[str] = None,
        require_target: bool = True,
        offload: Optional[bool] = None,
        max_offloaded: int = DEFAULT_MAX_OFFLOADED,
        accept_signature: Optional[str] = None,
    ) -> None:
        if not isinstance(verifier, Verifier):
            raise TypeError(f"verifier must be an agentsig.Verifier, not {type(verifier).__name__}")
        if scheme not in (None, "https", "http"):
            raise ValueError("scheme must be None (the ASGI scope's), 'https' or 'http' (a trusted proxy's)")
        if web_bot_auth and not verifier.web_bot_auth_keys:
            raise ValueError(
                "web_bot_auth=True needs a Verifier with the agents' keys: agent_keys={...} or fetch_directories=True"
            )
        self.authorities = _site_authorities(verifier, authorities, any_authority)
        if int(max_offloaded) < 1:
            raise ValueError("max_offloaded must be at least 1")
        if nonce_store and not verifier.has_replay_store:
            verifier = verifier.with_replay_store("memory")
        self.app = app
        self.verifier = verifier
        self.require = require
        self.admit_invalid = admit_invalid
        self.web_bot_auth = web_bot_auth
        self.strict = strict
        self.max_body = int(max_body)
        self.scheme = scheme
        self.require_target = require_target
        self.offload = web_bot_auth if offload is None else bool(offload)
        self.max_offloaded = int(max_offloaded)
        self._offloaded = 0
        self._lock = threading.Lock()
        hint = None
        if accept_signature is not None:
            if not isinstance(accept_signature, str):
                raise TypeError("accept_signature must be a str")
            try:
                hint = accept_signature.encode("ascii")
            except UnicodeEncodeError:
                raise ValueError("accept_signature must be ASCII (an RFC 8941 Dictionary)") from None
            if not hint or any(b < 0x20 or b == 0x7F for b in hint):
                raise ValueError("accept_signature must be a non-empty field value without control characters")
        self.accept_signature = hint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Verify an HTTP request or a WebSocket handshake, then call the app
        (other scopes, such as ``lifespan``, pass through)."""
        kind = scope.get("type")
        if kind == "websocket":
            await self._websocket(scope, receive, send)
            return
        if kind != "http":
            await self.app(scope, receive, send)
            return
        try:
            body = await self._collect(receive)
        except _Refused as r:
            await _problem(send, r.status, r.code, r.detail)
            return
        except _Disconnected:
            return
        try:
            self._admit(scope, await self._identity(scope, body))
        except _Refused as r:
            extra = [(b"accept-signature", self.accept_signature)] if r.status == 401 and self.accept_signature else []
            if r.status == 503:
                extra.append((b"retry-after", b"1"))
            await _problem(send, r.status, r.code, r.detail, extra)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The handshake is a GET request without content (RFC 6455 section
        # 4.1): verified as one, so a gate cannot be walked around through
        # a WebSocket route.
        try:
            self._admit(scope, await self._identity(scope, b""))
        except _Refused:
            msg = await receive()
            if msg.get("type") == "websocket.connect":
                # Closing before accepting: the server answers 403
                # (ASGI specification, WebSocket "Close - send").
                await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)

    async def _identity(self, scope: Scope, body: bytes) -> Optional[Dict[str, Any]]:
        """The verified identity, ``None`` for an unsigned request admitted
        anonymously (or a failed one under ``admit_invalid``); raises
        ``_Refused`` otherwise."""
        headers: List[Tuple[bytes, bytes]] = [(bytes(n), bytes(v)) for n, v in scope.get("headers", [])]
        scope.pop("agentsig_error", None)
        target = self._target(scope, headers)
        if _unsigned(headers):
            if self.require:
                raise _Refused(401, "unsigned", "the request is not signed")
            return None
        try:
            if self.offload and _names_web_bot_auth(headers):
                return await self._offloaded_verify(scope, target, headers, body)
            return self._verify(scope, target, headers, body)
        except _Refused as r:
            if r.status != 401:
                raise
            logger.warning("refused a signed request: %s: %s", r.code, r.detail)
            scope["agentsig_error"] = {"code": r.code, "detail": r.detail}
            if self.admit_invalid:
                return None
            raise

    async def _offloaded_verify(
        self, scope: Scope, target: str, headers: List[Tuple[bytes, bytes]], body: bytes
    ) -> Dict[str, Any]:
        with self._lock:
            if self._offloaded >= self.max_offloaded:
                raise _Refused(
                    503,
                    "directory-busy",
                    f"{self.max_offloaded} verifications are already fetching key directories; retry shortly",
                )
            self._offloaded += 1
        try:
            return await _in_thread(lambda: self._verify(scope, target, headers, body))
        finally:
            with self._lock:
                self._offloaded -= 1

    def _admit(self, scope: Scope, identity: Optional[Dict[str, Any]]) -> None:
        scope["agentsig"] = identity
        state = scope.setdefault("state", {})
        state["agentsig"] = identity

    async def _collect(self, receive: Receive) -> bytes:
        chunks: List[bytes] = []
        size = 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                raise _Disconnected()
            if msg["type"] != "http.request":
                continue
            chunk = msg.get("body", b"") or b""
            size += len(chunk)
            if size > self.max_body:
                raise _Refused(413, "body-too-large", f"request body larger than {self.max_body} bytes")
            chunks.append(chunk)
            if not msg.get("more_body", False):
                return b"".join(chunks)

    def _target(self, scope: Scope, headers: List[Tuple[bytes, bytes]]) -> str:
        """The origin-form target (RFC 9112 section 3.2.1) as received, once
        the one ``Host`` field it goes with is checked (RFC 9112 section 3.2)."""
        hosts = [v for n, v in headers if n.lower() == b"host"]
        if len(hosts) != 1:
            raise _Refused(400, "host", "several Host fields" if hosts else "no Host field")
        try:
            host = hosts[0].decode("ascii").strip()
        except UnicodeDecodeError:
            raise _Refused(400, "host", "Host is not visible ASCII") from None
        if not host or any(c in host for c in "/?#@ \t\\%"):
            raise _Refused(400, "host", "Host is not an authority (host[:port], RFC 3986 section 3.2)")
        raw = scope.get("raw_path")
        path = bytes(raw).decode("latin-1") if raw else str(scope.get("path", "/"))
        query = bytes(scope.get("query_string", b"") or b"").decode("latin-1")
        target = path + ("?" + query if query else "")
        if not target.startswith("/"):
            raise _Refused(400, "target", "the request target does not start with / (RFC 9112 section 3.2.1)")
        if "#" in target:
            raise _Refused(
                400, "target", "the request target holds a fragment (#), which no target has (RFC 9112 section 3.2)"
            )
        return target

    def _scheme(self, scope: Scope) -> str:
        if self.scheme is not None:
            return self.scheme
        s = str(scope.get("scheme", "http")).lower()
        return {"ws": "http", "wss": "https"}.get(s, s)

    def _verify(self, scope: Scope, target: str, headers: List[Tuple[bytes, bytes]], body: bytes) -> Dict[str, Any]:
        try:
            report = self.verifier.verify_request(
                scope.get("method", "GET"),
                target,
                headers,
                body,
                web_bot_auth=self.web_bot_auth,
                authorities=self.authorities,
                strict=self.strict,
                scheme=self._scheme(scope),
            )
        except AgentsigError as e:
            raise _Refused(401, e.code, str(e)) from None
        return self._accept(report, body, "?" in target)

    def _accept(self, report: Any, body: bytes, has_query: bool) -> Dict[str, Any]:
        d = report.to_dict()
        if self.web_bot_auth:
            wba = d.get("details", {}).get("web_bot_auth", {})
            sig = next((s for s in d["signatures"] if s["id"] == wba.get("label")), d["signatures"][0])
            return _identity(sig, d, agent=wba.get("agent"))
        for sig in d["signatures"]:
            if sig["verdict"] != "valid":
                continue
            covered = set(sig.get("covered", []))
            if body and "content-digest" not in covered:
                continue
            if self.require_target and not (
                "@method" in covered
                and (
                    "@target-uri" in covered
                    or ("@authority" in covered and "@path" in covered and (not has_query or "@query" in covered))
                )
            ):
                continue
            return _identity(sig, d)
        need = []
        if self.require_target:
            need.append("@method and @authority with @path" + (" and @query" if has_query else "") + " (or @target-uri)")
        if body:
            need.append("content-digest (the request has content)")
        raise _Refused(401, "requirements", "no verified signature covers " + " and ".join(need))


def _site_authorities(
    verifier: Verifier, authorities: Optional[Sequence[str]], any_authority: bool
) -> Optional[List[str]]:
    """The authorities the gate binds signatures to, checked now (the
    library's rule, RFC 3986 section 3.2) so a bad one fails at startup."""
    if any_authority:
        if authorities is not None:
            raise ValueError("give authorities=[...] or any_authority=True, not both")
        return None
    if authorities is None:
        raise ValueError(
            "SignatureMiddleware needs the site's own authorities, authorities=['example.com', ...]: "
            "a request an agent signed for another site, replayed here with that site's Host, verifies "
            "unless its covered @authority is checked against yours (RFC 9421 section 7.2.1); "
            "any_authority=True if the app checks the authority itself"
        )
    if isinstance(authorities, (str, bytes)):
        raise TypeError("authorities must be a list of str (host[:port]), not a single str")
    listed = list(authorities)
    try:
        verifier.verify_request("GET", "/", [("host", "localhost")], scheme="https", authorities=listed)
    except BadInput as e:
        if e.code == "usage":
            raise ValueError(str(e)) from None
    except AgentsigError:
        pass  # an unsigned probe does not verify: the authorities were accepted
    return listed


def _unsigned(headers: List[Tuple[bytes, bytes]]) -> bool:
    names = {n.lower() for n, _ in headers}
    return b"signature" not in names and b"signature-input" not in names


def _names_web_bot_auth(headers: List[Tuple[bytes, bytes]]) -> bool:
    """Whether a ``Signature-Input`` may hold a ``tag="web-bot-auth"`` label:
    only such a label makes the verifier fetch a key directory (the profile
    examines no other, draft-ietf-webbotauth-httpsig-protocol section 5.4)."""
    return any(n.lower() == b"signature-input" and b"web-bot-auth" in v for n, v in headers)


class _Disconnected(Exception):
    pass


async def _in_thread(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a worker thread: anyio's (Starlette, FastAPI, any
    backend), else asyncio's default executor."""
    try:
        import anyio.to_thread
    except ImportError:
        import asyncio

        return await asyncio.get_running_loop().run_in_executor(None, fn)
    return await anyio.to_thread.run_sync(fn)


def _identity(sig: Dict[str, Any], report: Dict[str, Any], agent: Optional[str] = None) -> Dict[str, Any]:
    return {
        "keyid": sig.get("kid"),
        "label": sig.get("id"),
        "algorithm": sig.get("algorithm"),
        "covered": list(sig.get("covered", [])),
        "thumbprint": (sig.get("key") or {}).get("thumbprint"),
        "agent": agent,
        "report": report,
    }


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _problem(
    send: Send, status: int, code: str, detail: str, extra: Optional[List[Tuple[bytes, bytes]]] = None
) -> None:
    titles = {400: "Bad Request", 401: "Unauthorized", 413: "Content Too Large", 503: "Service Unavailable"}
    body = json.dumps(
        {"type": "about:blank", "title": titles.get(status, "Error"), "status": status, "code": code, "detail": detail}
    ).encode()
    headers = [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ] + (extra or [])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
