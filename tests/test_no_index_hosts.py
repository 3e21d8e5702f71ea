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


def _zip_members(p: Path) -> bytes:
    """Every member of a zip, inflated, one after another (its names too)."""
    import zipfile

    with zipfile.ZipFile(p) as zf:
        return b"\n".join(n.encode() + b"\n" + zf.read(n) for n in zf.namelist())


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
        elif name.endswith(".zip"):  # a zip's members are searched inflated (the shipped wheel summaries: LZMA)
            data = _zip_members(p)
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


def test_a_zips_members_are_searched(tmp_path):
    """A host inside a compressed member (the shipped wheel summaries' LZMA members) is found."""
    import zipfile

    p = tmp_path / "x.zip"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_LZMA) as zf:
        zf.writestr("m", b"a row " * 1000 + LITERALS[1] + b"/packages/x.whl")
    assert LITERALS[1] not in p.read_bytes().lower() and LITERALS[1] in _zip_members(p).lower()
