"""Verification releases the GIL: while one thread is inside a verification
(blocked on its replay store), Python code runs in other threads.

The replay store is a loopback server that reads the store's command and
does not answer until told to; the server itself is Python code, so it can
read the command only if the verifying thread released the GIL. The test
asserts an order of events, not a duration."""

import socket
import threading

import agentsig

URL = "https://api.example/orders"


def test_a_blocked_verification_does_not_hold_the_gil():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    got_command = threading.Event()
    release = threading.Event()

    def fake_store():
        conns = []
        while not release.is_set():
            listener.settimeout(0.1)
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            conns.append(conn)
            conn.settimeout(5)
            try:
                if conn.recv(65536):
                    got_command.set()
            except OSError:
                pass
        for c in conns:
            c.close()
        listener.close()

    server = threading.Thread(target=fake_store, daemon=True)
    server.start()

    k = agentsig.SigningKey.generate("EdDSA")
    v = agentsig.Verifier(agent_keys={"https://agent.example": [k]}, replay_store=f"redis://127.0.0.1:{port}/0")
    h = agentsig.sign_request("GET", URL, [], b"", k, signature_agent="https://agent.example")
    outcome = []

    def verify():
        try:
            v.verify_request("GET", URL, h, web_bot_auth=True)
            outcome.append("verified")
        except agentsig.NotVerified as e:
            outcome.append(e.code)

    worker = threading.Thread(target=verify)
    worker.start()
    try:
        assert got_command.wait(timeout=60), "the store never received the command"
        # The server (Python) read the command while the worker is still
        # inside the call, waiting for the answer: the GIL was released.
        assert worker.is_alive()
        assert outcome == []
    finally:
        release.set()
        worker.join(timeout=60)
        server.join(timeout=60)
    # A store that does not answer refuses (never accepts).
    assert outcome and outcome[0] != "verified"
