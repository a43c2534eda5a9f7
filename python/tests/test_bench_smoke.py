"""python/bench/bench.py runs (one iteration of every contender, which must
verify the same bytes first); figures are not measured here."""

import pathlib
import subprocess
import sys

import pytest

from conftest import peer

BENCH = pathlib.Path(__file__).parents[1] / "bench" / "bench.py"


def test_bench_smoke_run():
    for module in ("rfc8785", "joserfc", "http_message_signatures", "cryptography"):
        peer(module)
    out = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--no-rust"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "every contender verified" in out.stdout
