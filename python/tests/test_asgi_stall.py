"""Requests naming a key directory that never answers (a tarpit) must not
hold up requests that carry no Web Bot Auth signature: those are never sent
to a worker thread, and the verifications that are get their own small
bound, beyond which a request fails at once with ``directory-busy``.
Counted, not timed."""

import socket
import threading

import agentsig
from agentsig.asgi import DEFAULT_MAX_OFFLOADED
from conftest import peer
from test_asgi import KEY, serve

httpx = peer("httpx")
peer("uvicorn")
peer("starlette")

SIGNED = 45


class Tarpit:
    """A TCP listener on loopback that accepts connections and never
    answers (a TLS handshake to it waits until the fetch deadline)."""

    def __init__(self, changed):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.accepted = []
        self.changed = changed
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.changed:
                self.accepted.append(conn)
                self.changed.notify_all()

    def close(self):
        self.sock.close()
        for c in self.accepted:
            c.close()


def test_an_unsigned_request_is_answered_while_signed_ones_wait_on_a_tarpit():
    changed = threading.Condition()
    tarpit = Tarpit(changed)
    agent = f"https://127.0.0.1:{tarpit.port}"
    verifier = agentsig.Verifier(fetch_directories=True, allow_private_hosts=["127.0.0.1"])
    apps = serve({"gate": {"verifier": verifier, "web_bot_auth": True, "scheme": "https"}})
    base = next(apps)["gate"]
    answered = []

    def signed_request():
        url = base + "/whoami"
        h = [(n, v) for n, v in agentsig.sign_request("GET", url, [], b"", KEY, signature_agent=agent)]
        r = httpx.get(url, headers=h, timeout=60)
        with changed:
            answered.append(r)
            changed.notify_all()

    threads = [threading.Thread(target=signed_request, daemon=True) for _ in range(SIGNED)]
    try:
        for t in threads:
            t.start()
        # The middleware's bound is full: the requests over it were refused
        # as busy, and the ones under it wait on the tarpit (through one
        # fetch of its URL at a time: the library's key-set client fetches
        # a URL once however many verifications need it).
        with changed:
            assert changed.wait_for(
                lambda: len(answered) >= SIGNED - DEFAULT_MAX_OFFLOADED and len(tarpit.accepted) >= 1,
                timeout=120,
            )
        r = httpx.get(base + "/whoami", timeout=60)
        with changed:
            done = list(answered)
        assert r.status_code == 401 and r.json()["code"] == "unsigned"
        # Answered while every offloaded verification still waits: only the
        # requests over the bound were answered, each at once, as busy.
        assert done and all(x.status_code == 503 for x in done), [x.status_code for x in done]
        assert {x.json()["code"] for x in done} == {"directory-busy"}
        assert len(done) == SIGNED - DEFAULT_MAX_OFFLOADED
        assert 1 <= len(tarpit.accepted) <= DEFAULT_MAX_OFFLOADED
    finally:
        tarpit.close()
        for t in threads:
            t.join(timeout=60)
        for _ in apps:
            pass
