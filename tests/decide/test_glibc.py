"""The glibc rule (:mod:`glmcompat.decide.rules.glibc`): a package whose wheels for the machine need a newer glibc than
the machine's is an error naming both. The uv.lock is the real uv's, locked against a local index serving a wheel
tagged manylinux_2_34 only (as sglang 0.5.23 publishes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from glmcompat.model.wheeltags import glibc_needed
from tests.conftest import run_cli
from tests.localindex import serve_releases, tiny_wheel


@pytest.mark.parametrize(("name", "want"), [
    ("sglang-0.5.23-py3-none-manylinux_2_34_x86_64.whl", (2, 34)),
    ("torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl", (2, 28)),
    ("numpy-2.3.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", (2, 17)),
    ("six-1.17.0-py2.py3-none-any.whl", (0, 0)),
    ("sglang-0.5.23-py3-none-manylinux_2_34_aarch64.whl", None)])
def test_the_glibc_a_wheel_needs(name: str, want: tuple[int, int] | None) -> None:
    assert glibc_needed(name, "x86_64", "3.11") == want


def test_check_names_the_glibc_a_wheel_needs_and_the_machines(tmp_path: Path) -> None:
    from glmcompat.edges.uv import uv_binary

    fn, data = tiny_wheel("newglibc", "1.0")
    fn = "newglibc-1.0-cp311-abi3-manylinux_2_34_x86_64.whl"
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "0"\nrequires-python = ">=3.11,<3.12"\ndependencies = ["newglibc"]\n'
        "[tool.uv]\nenvironments = [\"sys_platform == 'linux' and platform_machine == 'x86_64'\"]\n")
    with serve_releases([("newglibc", "1.0", fn, data)]) as url:
        subprocess.run([uv_binary(), "lock", "-q", "--default-index", url], cwd=proj, check=True,
                       env={**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_CACHE_DIR": str(tmp_path / "c")})
    lock = str(proj / "uv.lock")
    r = run_cli("check", lock, "--target", "sm90", "--platform", "x86_64", "--glibc", "2.28")
    assert r.returncode == 1, r.stdout + r.stderr
    assert ("newglibc 1.0's wheels for this machine need glibc >= 2.34 (manylinux_2_34), but the machine's glibc is "
            "2.28 (--glibc)") in r.stdout
    assert run_cli("check", lock, "--target", "sm90", "--platform", "x86_64", "--glibc", "2.36").returncode == 0
    assert run_cli("check", lock, "--target", "sm90", "--platform", "x86_64").returncode == 0  # no glibc: not judged
