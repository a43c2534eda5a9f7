"""ASGI middleware (Starlette, FastAPI, any ASGI 3 app) that verifies the
RFC 9421 signatures of incoming requests before the app sees them.

It mirrors the Rust tower layers (``src/server/verify.rs``,
``src/server/webbotauth.rs``):

* the body is collected up to ``max_body`` bytes (``413`` beyond) so a
  covered ``content-digest`` is checked against it (RFC 9530 section 2),
  then replayed to the app unchanged;
* the URL is built from ``scheme`` (default ``https``: the scheme the client
  used, as behind a TLS-terminating proxy), the single ``Host`` field and
  the raw path and query; several ``Host`` fields, or none, answer ``400``
  (RFC 9112 section 3.2);
* plain RFC 9421: a verified signature must cover ``@method`` and the target
  (``@authority`` and ``@path``, with ``@query`` when there is one, or
  ``@target-uri``) and, when the request has content, ``content-digest``
  (RFC 9421 section 7.2.1);
* ``web_bot_auth=True``: the Web Bot Auth profile (a ``tag="web-bot-auth"``
  signature over ``Signature-Agent``, keyid the thumbprint of a key in
  that agent's key set: the verifier's ``agent_keys``, or the agent's key
  directory with ``fetch_directories=True``);
* a verified request carries its identity at ``scope["agentsig"]`` and
  ``scope["state"]["agentsig"]`` (Starlette: ``request.state.agentsig``);
  an unsigned or failed one gets ``401`` with a small
  ``application/problem+json`` body (RFC 9457), or, with ``require=False``,
  reaches the app with no identity (``None``).
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Dict, List, MutableMapping, Optional, Tuple

from ._agentsig import Verifier
from ._errors import AgentsigError

__all__ = ["SignatureMiddleware", "DEFAULT_MAX_BODY"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Largest request body collected for verification (1 MiB, as the Rust layer).
DEFAULT_MAX_BODY = 1024 * 1024


class _Refused(Exception):
    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail


class SignatureMiddleware:
    """Verify signed requests with ``verifier`` (an :class:`agentsig.Verifier`).

    ``require``: refuse unsigned and failed requests with ``401`` (default);
    ``False`` passes them through without identity. ``web_bot_auth``:
    require the Web Bot Auth profile. ``max_body``: largest body collected.
    ``scheme``: the scheme the URL is built with. ``require_target``: require
    ``@method`` and the target to be covered (plain RFC 9421). ``offload``:
    verify in a worker thread (anyio's, else asyncio's default executor)
    rather than on the event loop; default on with ``web_bot_auth`` (a
    verifier with ``fetch_directories=True`` fetches key directories, up to
    its fetch deadline), off otherwise (verification is CPU-bound and short).
    ``accept_signature``: an ``Accept-Signature`` field value (RFC 9421
    section 5.1) sent with every ``401``, telling clients what to sign.
    """

    def __init__(
        self,
        app: ASGIApp,
        verifier: Verifier,
        *,
        require: bool = True,
        web_bot_auth: bool = False,
        max_body: int = DEFAULT_MAX_BODY,
        scheme: str = "https",
        require_target: bool = True,
        offload: Optional[bool] = None,
        accept_signature: Optional[str] = None,
    ) -> None:
        if not isinstance(verifier, Verifier):
            raise TypeError(f"verifier must be an agentsig.Verifier, not {type(verifier).__name__}")
        if scheme not in ("https", "http"):
            raise ValueError("scheme must be 'https' or 'http'")
        if web_bot_auth and not verifier.web_bot_auth_keys:
            raise ValueError(
                "web_bot_auth=True needs a Verifier with the agents' keys: agent_keys={...} or fetch_directories=True"
            )
        self.app = app
        self.verifier = verifier
        self.require = require
        self.web_bot_auth = web_bot_auth
        self.max_body = int(max_body)
        self.scheme = scheme
        self.require_target = require_target
        self.offload = web_bot_auth if offload is None else bool(offload)
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
        """Verify an HTTP request, then call the app (other scopes pass through)."""
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        try:
            body = await self._collect(receive)
        except _Refused as r:
            await _problem(send, r.status, r.code, r.detail)
            return
        except _Disconnected:
            return
        identity: Optional[Dict[str, Any]] = None
        try:
            if self.offload:
                identity = await _in_thread(lambda: self._verify(scope, body))
            else:
                identity = self._verify(scope, body)
        except _Refused as r:
            if r.status != 401 or self.require:
                extra = [(b"accept-signature", self.accept_signature)] if r.status == 401 and self.accept_signature else []
                await _problem(send, r.status, r.code, r.detail, extra)
                return
        scope["agentsig"] = identity
        state = scope.setdefault("state", {})
        state["agentsig"] = identity
        await self.app(scope, _replay(body, receive), send)

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

    def _verify(self, scope: Scope, body: bytes) -> Dict[str, Any]:
        headers: List[Tuple[bytes, bytes]] = [(bytes(n), bytes(v)) for n, v in scope.get("headers", [])]
        hosts = [v for n, v in headers if n.lower() == b"host"]
        if len(hosts) != 1:
            raise _Refused(400, "host", "several Host fields" if hosts else "no Host field")
        try:
            host = hosts[0].decode("ascii").strip()
        except UnicodeDecodeError:
            raise _Refused(400, "host", "Host is not visible ASCII") from None
        if not host or any(c in host for c in "/?#@ \t\\"):
            raise _Refused(400, "host", "Host is not an authority")
        path = scope.get("raw_path") or scope.get("path", "/").encode("utf-8")
        query = scope.get("query_string", b"")
        url = f"{self.scheme}://{host}{path.decode('latin-1')}"
        if query:
            url += "?" + query.decode("latin-1")
        method = scope.get("method", "GET")
        try:
            report = self.verifier.verify_request(method, url, headers, body, web_bot_auth=self.web_bot_auth)
        except AgentsigError as e:
            if self._unsigned(headers):
                raise _Refused(401, "unsigned", "the request is not signed") from None
            raise _Refused(401, e.code, str(e)) from None
        return self._accept(report, body, bool(query))

    def _unsigned(self, headers: List[Tuple[bytes, bytes]]) -> bool:
        names = {n.lower() for n, _ in headers}
        return b"signature" not in names and b"signature-input" not in names

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
    titles = {400: "Bad Request", 401: "Unauthorized", 413: "Content Too Large"}
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
