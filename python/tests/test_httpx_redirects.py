"""``SignatureAuth`` across redirects: each hop is signed for its own
target, and a response the client followed itself (resending the first
hop's signature) is refused."""

import pytest

import agentsig
from conftest import peer

httpx = peer("httpx")

from agentsig.httpx import SignatureAuth, UnsignedRedirect  # noqa: E402

KEY = agentsig.SigningKey.generate("EdDSA")
AGENT = "https://agent.example"


def redirecting():
    """A transport: a.example redirects (302) to b.example, which answers."""
    seen = []

    def handler(request):
        seen.append(request)
        if request.url.host == "a.example":
            return httpx.Response(302, headers={"location": "https://b.example/next"})
        return httpx.Response(200, text="ok")

    return httpx.MockTransport(handler), seen


def verify_at(site, request, **kw):
    v = agentsig.Verifier(keys=[KEY.public_key()], agent_keys={AGENT: [KEY.public_key()]})
    return v.verify_request(
        request.method, str(request.url), list(request.headers.multi_items()), request.content, authorities=[site], **kw
    )


@pytest.mark.parametrize("wba", [False, True])
def test_each_hop_is_signed_for_its_own_target(wba):
    transport, seen = redirecting()
    auth = SignatureAuth(KEY, signature_agent=AGENT if wba else None, follow_redirects=True)
    with httpx.Client(transport=transport, auth=auth) as c:
        r = c.get("https://a.example/start")
    assert r.status_code == 200 and [q.url.host for q in seen] == ["a.example", "b.example"]
    first, second = seen
    assert first.headers["signature"] != second.headers["signature"]
    # The second hop verifies at b.example, under the profile when signed so.
    assert verify_at("b.example", second, web_bot_auth=wba).verified
    # The first hop's signature is not what b.example received.
    with pytest.raises(agentsig.NotVerified) as e:
        verify_at("b.example", first, web_bot_auth=wba)
    assert e.value.code == "wrong-authority"


def test_a_redirect_followed_by_the_client_is_refused():
    transport, seen = redirecting()
    with httpx.Client(transport=transport, auth=SignatureAuth(KEY), follow_redirects=True) as c:
        with pytest.raises(UnsignedRedirect, match="follow_redirects"):
            c.get("https://a.example/start")


def test_without_follow_redirects_the_redirect_is_returned():
    transport, seen = redirecting()
    with httpx.Client(transport=transport, auth=SignatureAuth(KEY)) as c:
        r = c.get("https://a.example/start")
    assert r.status_code == 302 and len(seen) == 1


def test_sign_request_and_signature_auth_share_their_default():
    # Plain RFC 9421 unless an agent is named, in both.
    plain = agentsig.sign_request("GET", "https://a.example/", [], b"", KEY)
    assert "signature-agent" not in {n.lower() for n, _ in plain}
    assert not SignatureAuth(KEY).web_bot_auth
    named = agentsig.sign_request("GET", "https://a.example/", [], b"", KEY, signature_agent=AGENT)
    assert "signature-agent" in {n.lower() for n, _ in named}
    assert SignatureAuth(KEY, signature_agent=AGENT).web_bot_auth
