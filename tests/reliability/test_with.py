"""Issue 26, point 4: ``lock --with`` keeps a name and a version specifier, and refuses (exit 2, one line, nothing
written) what a stack lock cannot keep, instead of dropping it: ``--with 'torch[evil]==2.9.1'`` and ``--with
'sglang[all]>=0.5.9'`` exited 0 with the extra gone; ``torch @ file:///...`` resolved torch from the index."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize(("req", "needle"), [
    ("torch[evil]==2.9.1", "extras (evil) are not kept in a stack lock"),
    ("sglang[all]>=0.5.9", "extras (all) are not kept in a stack lock (its pins are plain name==version); pass --with 'sglang>=0.5.9'"),
    ("torch @ file:///tmp/torch-2.9.1-cp311-cp311-linux_x86_64.whl", "a URL requirement; a stack lock resolves"),
    ("torch==2.9.1; python_version < '3.99'", "a marker (python_version < \"3.99\") is not kept"),
])
def test_with_keeps_or_refuses(tmp_path: Path, req: str, needle: str) -> None:
    out = tmp_path / "out"
    r = run_cli("lock", "--target", "sm120", "--with", req, "--out", str(out))
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"error: --with {req!r}: ") and needle in r.stderr, r.stderr
    assert not out.exists()
