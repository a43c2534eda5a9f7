"""The quick start of python/README.md runs as written and prints what the
README says it prints."""

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).parents[1] / "README.md"


def quick_start() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_quick_start_is_short_and_runs_as_written(tmp_path):
    code = quick_start()
    assert len(code.strip().splitlines()) <= 20
    script = tmp_path / "quick_start.py"
    script.write_text(code, encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "verified True",
        "verified",
        "refused: signature-mismatch not-verified",
    ]
