"""The HTTP message model PyPI http-message-signatures (pyauth) signs and
verifies: ordered field lines behind the small mapping interface it uses
(repeated fields joined with ", ", RFC 9110 section 5.3), a request and a
response. Shared by tests/interop/httpsig_pyauth.py (the Rust tests' peer),
python/tests/test_interop.py and python/bench/bench.py."""


class Headers:
    """Ordered field lines with the mapping interface pyauth needs."""

    def __init__(self, lines):
        self.lines = list(lines)

    def items(self):
        return list(self.lines)

    def __iter__(self):
        return iter([n for n, _ in self.lines])

    def __contains__(self, name):
        return any(n.lower() == name.lower() for n, _ in self.lines)

    def __getitem__(self, name):
        vals = [v for n, v in self.lines if n.lower() == name.lower()]
        if not vals:
            raise KeyError(name)
        return ", ".join(vals)

    def __setitem__(self, name, value):
        self.lines.append((name, value))

    def __delitem__(self, name):
        self.lines = [(n, v) for n, v in self.lines if n.lower() != name.lower()]


class Request:
    def __init__(self, method, url, headers):
        self.method, self.url, self.headers = method, url, headers


class Response:
    def __init__(self, status_code, headers, request=None):
        self.status_code, self.headers, self.request = status_code, headers, request
