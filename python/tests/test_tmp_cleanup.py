"""A test session leaves nothing in the system's temporary directory: the
tests write only under pytest's tmp_path, which python/pyproject.toml has
removed at the end of the session."""

import os
import pathlib
import subprocess
import sys

TESTS = pathlib.Path(__file__).parent


def test_a_session_removes_its_temporary_directories(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PYTEST_ADDOPTS="")
    env.pop("PYTEST_DEBUG_TEMPROOT", None)
    # Tests that write key files and a file replay store under tmp_path.
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(TESTS / "test_http.py") + "::test_replay_store_file",
            str(TESTS / "test_http.py") + "::test_jwks_is_the_set_itself_or_a_path_like",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=TESTS.parents[1],
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 passed" in out.stdout, out.stdout
    # What may stay: pytest's empty per-user root (pytest-of-USER).
    left = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*"))
    assert all(p.startswith("pytest-of-") and "/" not in p for p in left), left
