"""Benchmark of the Python package against the Python peers and the Rust
library, on the same bytes in the same run (docs/benchmarks.md, "Python
package").

* ``Verifier.verify_descriptor`` (a 10 KB descriptor, detached JWS (``--alg``, ES256 or EdDSA) over
  RFC 8785) vs ``rfc8785`` + ``joserfc`` (parse, canonicalize, verify);
* ``Verifier.verify_response`` (the same 10 KB body in a signed response:
  Content-Digest + RFC 9421, the same algorithm) vs ``http-message-signatures``;
* the Rust library's own time per call on the same files:
  ``cargo run --release --no-default-features --example py_parity``.

Usage: python python/bench/bench.py [--iterations N] [--rounds R] [--smoke] [--no-rust]
(``--smoke``: one iteration of everything, no figures: checks the script runs).
Not run by CI.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import agentsig

ROOT = pathlib.Path(__file__).resolve().parents[2]


def descriptor_10k() -> bytes:
    """The example descriptor with more skills, as benches/jws.rs builds it."""
    v = json.loads((ROOT / "examples" / "agent.json").read_text(encoding="utf-8"))
    skill = v["skills"][0]
    skills = []
    i = 0
    while True:
        s = dict(skill, id=f"skill-{i}", name=f"Skill № {i} — «planning»")
        skills.append(s)
        v["skills"] = skills
        out = json.dumps(v, indent=2, ensure_ascii=False).encode()
        if len(out) >= 10 * 1024:
            return out
        i += 1


def per_call_us(fn, iterations: int) -> float:
    """Median over five runs of the mean time per call, in microseconds."""
    for _ in range(max(1, iterations // 10)):
        fn()
    runs = []
    for _ in range(5 if iterations > 1 else 1):
        t = time.perf_counter()
        for _ in range(iterations):
            fn()
        runs.append((time.perf_counter() - t) * 1e6 / iterations)
    return statistics.median(runs)


sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "interop"))
from pyauth_model import Headers, Response  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", type=int, default=2000)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--alg", choices=["ES256", "EdDSA"], default="ES256")
    p.add_argument("--no-rust", action="store_true")
    a = p.parse_args()
    n = 1 if a.smoke else a.iterations
    n_peer = 1 if a.smoke else max(1, n // 4)
    warnings.simplefilter("ignore")

    import rfc8785
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    from joserfc import jws as jose_jws
    from joserfc.jwk import import_key
    import http_message_signatures as hms

    if a.alg == "ES256":
        priv = ec.generate_private_key(ec.SECP256R1())
        pyauth_alg = hms.algorithms.ECDSA_P256_SHA256
    else:
        priv = ed25519.Ed25519PrivateKey.generate()
        pyauth_alg = hms.algorithms.ED25519
    pem = priv.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key = agentsig.SigningKey.from_pem(pem)
    doc = descriptor_10k()
    token = agentsig.sign_descriptor(doc, key)
    headers = agentsig.sign_response(200, [("Content-Type", "application/json")], doc, key)
    verifier = agentsig.Verifier(keys=[key.public_key()])

    # Python peers, on the same bytes.
    jose_key = import_key(key.public_jwk())
    header_b64, _, sig_b64 = token.split(".")

    def joserfc_verify():
        payload = rfc8785.dumps(json.loads(doc))
        jose_jws.deserialize_compact(token, jose_key, algorithms=[a.alg], payload=payload)

    resolver = hms.MappingKeyResolver(public_keys={key.kid: priv.public_key()}, private_keys={})
    pyauth = hms.HTTPMessageVerifier(signature_algorithm=pyauth_alg, key_resolver=resolver)

    def pyauth_verify():
        pyauth.verify(Response(200, Headers(headers)), body=doc)

    # Every contender verifies the bytes before it is timed.
    verifier.verify_descriptor(doc, token)
    verifier.verify_response(200, headers, doc)
    joserfc_verify()
    pyauth_verify()

    contenders = {
        "agentsig_verify_descriptor_us": (lambda: verifier.verify_descriptor(doc, token), n),
        "joserfc_rfc8785_verify_us": (joserfc_verify, n_peer),
        "agentsig_verify_response_us": (lambda: verifier.verify_response(200, headers, doc), n),
        "http_message_signatures_verify_us": (pyauth_verify, n_peer),
    }
    rust_cmd = None
    if not a.no_rust:
        subprocess.run(
            ["cargo", "build", "-q", "--release", "--no-default-features", "--example", "py_parity"],
            cwd=ROOT,
            check=True,
        )
        rust_cmd = [str(ROOT / "target" / "release" / "examples" / "py_parity")]

    # Rounds alternate the Python contenders and the Rust loop, so a change
    # of load on a shared machine falls on all of them; each figure is the
    # median over the rounds.
    samples: dict = {k: [] for k in contenders}
    rounds = 1 if a.smoke else a.rounds
    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        (d / "descriptor.json").write_bytes(doc)
        (d / "descriptor.jws").write_text(token)
        (d / "response.body").write_bytes(doc)
        (d / "response.headers.json").write_text(json.dumps(headers))
        (d / "jwk.json").write_text(json.dumps(key.public_jwk()))
        for _ in range(rounds):
            for name, (fn, iters) in contenders.items():
                samples[name].append(per_call_us(fn, iters))
            if rust_cmd:
                out = subprocess.run(rust_cmd + [str(d), str(n)], capture_output=True, text=True, check=True)
                rust = json.loads(out.stdout.strip().splitlines()[-1])
                samples.setdefault("rust_verify_descriptor_us", []).append(rust["verify_descriptor_us"])
                samples.setdefault("rust_verify_http_us", []).append(rust["verify_response_us"])
                samples.setdefault("rust_verify_http_with_report_us", []).append(rust["verify_response_with_report_us"])
    results = {"descriptor_bytes": len(doc), "rounds": rounds}
    results.update({k: statistics.median(v) for k, v in samples.items()})

    if a.smoke:
        print("bench smoke run: every contender verified; no figures with --smoke")
        return 0
    r = results
    print(
        f"10 KB descriptor ({r['descriptor_bytes']} bytes), {a.alg}, {n} iterations (peers {n_peer}) per run; "
        f"median of {r['rounds']} rounds of the median of 5 runs"
    )
    rows = [
        ("verify_descriptor", r["agentsig_verify_descriptor_us"], "joserfc + rfc8785", r["joserfc_rfc8785_verify_us"],
         r.get("rust_verify_descriptor_us")),
        ("verify_response", r["agentsig_verify_response_us"], "http-message-signatures", r["http_message_signatures_verify_us"],
         r.get("rust_verify_http_us")),
    ]
    print(f"{'':20} {'agentsig (Python)':>18} {'peer':>26} {'peer/agentsig':>14} {'Rust':>10} {'agentsig/Rust':>14}")
    for name, ours, peer_name, peer, rust in rows:
        rust_s = f"{rust:8.1f}us" if rust else "-"
        ratio_rust = f"{ours / rust:13.2f}x" if rust else "-"
        print(f"{name:20} {ours:16.1f}us {peer_name + f' {peer:.1f}us':>26} {peer / ours:13.1f}x {rust_s:>10} {ratio_rust:>14}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
