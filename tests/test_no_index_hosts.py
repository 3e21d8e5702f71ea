"""No package-index host name is committed: the index URL is read at run time (README), fixtures use a
placeholder host. This guards every tracked file, fixtures and recorded METADATA included."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# spelled in parts so that this file does not contain them either
HOSTS = ["pypi" + r"\.org", "pythonhosted" + r"\.org", "download\\.pytorch" + r"\.org", "flashinfer\\.ai/" + "whl"]


@pytest.mark.slow
def test_no_index_host_in_tracked_files():
    try:
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    # A virtual environment made inside the checkout (``python -m venv venv`` before the README's commands) is
    # never committed, and its installed packages name the index: not the project's files.
    venvs = tuple(n[: -len("pyvenv.cfg")] for n in files if n.endswith("/pyvenv.cfg"))
    pattern = re.compile("|".join(HOSTS).encode(), re.IGNORECASE)
    bad = []
    for name in filter(None, files):
        if venvs and name.startswith(venvs):
            continue
        p = ROOT / name
        if not p.is_file() or p.stat().st_size > 20_000_000:
            continue
        data = p.read_bytes()
        if name.endswith(".gz"):
            import gzip

            data = gzip.decompress(data)
        m = pattern.search(data)
        if m:
            bad.append(f"{name}: {m.group(0).decode(errors='replace')}")
    assert not bad, bad
