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
# the same names as plain lower-case bytes: a file is searched with the pattern only where one of them is in its bytes
# lower-cased (ASCII, as the pattern's IGNORECASE on bytes folds case): bytes.find runs in C at memory speed, where the
# case-insensitive alternation took 1.8 s over the 50 MB of tracked files
LITERALS = [h.replace("\\", "").lower().encode() for h in HOSTS]


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
        lowered = data.lower()
        m = pattern.search(data) if any(lit in lowered for lit in LITERALS) else None
        if m:
            bad.append(f"{name}: {m.group(0).decode(errors='replace')}")
    assert not bad, bad


def test_the_literals_are_the_hosts():
    """The quick test above finds every spelling the pattern finds (and only those)."""
    pattern = re.compile("|".join(HOSTS).encode(), re.IGNORECASE)
    assert len(LITERALS) == len(HOSTS)
    for lit in LITERALS:
        for spelled in (lit, lit.upper(), lit.capitalize(), b"x" + lit.swapcase() + b"y"):
            assert pattern.search(spelled) and any(x in spelled.lower() for x in LITERALS), spelled
    assert not any(pattern.fullmatch(lit.replace(b".", b"-")) for lit in LITERALS)
