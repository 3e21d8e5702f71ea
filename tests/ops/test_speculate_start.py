"""What a cold `lock` reads before it starts the speculative uv, without tomllib, packaging or tempfile: the
requires-python of a generated pyproject.toml, whether this interpreter fits it (PEP 440, checked against
packaging), and the private directory uv runs in (where tempfile would put it)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet

from glmcompat.edges.uv import plain_fits, uv_env
from glmcompat.ops.speculate import private_dir, requires_python_of

ROOT = Path(__file__).resolve().parents[2]

release = st.lists(st.integers(0, 14), min_size=1, max_size=4).map(tuple)
clause = st.tuples(st.sampled_from([">=", "<=", "==", "!=", ">", "<", "==*", "!=*"]), release).map(
    lambda c: f"{c[0].rstrip('*')}{'.'.join(map(str, c[1]))}{'.*' if c[0].endswith('*') else ''}")


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(clause, min_size=1, max_size=3), st.tuples(st.integers(0, 14), st.integers(0, 14), st.integers(0, 14)))
def test_plain_fits_is_pep_440(clauses: list[str], here: tuple[int, int, int]) -> None:
    spec = ",".join(clauses)
    assert plain_fits(spec, here) == SpecifierSet(spec).contains(".".join(map(str, here)))


@pytest.mark.parametrize("spec", ["~=3.11", "===3.11.7", ">=3.11rc1", ">=1!3.11", "==3.11+local", ">=3.x", "", ">=3.11,"])
def test_plain_fits_leaves_the_rest_to_packaging(spec: str) -> None:
    assert plain_fits(spec, (3, 11, 7)) is None


def test_uv_env_gives_uv_this_interpreter_when_it_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UV_PYTHON", raising=False)
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert uv_env(f">={here}")["UV_PYTHON"] == sys.executable
    assert "UV_PYTHON" not in uv_env(f"<{here}")
    assert uv_env(f"~={here}")["UV_PYTHON"] == sys.executable  # packaging's answer


def test_requires_python_of_every_committed_pyproject() -> None:
    files = sorted(ROOT.glob("locks/*/*/pyproject.toml"))
    assert files
    for f in files:
        data = f.read_bytes()
        assert requires_python_of(data) == tomllib.loads(data.decode())["project"]["requires-python"], f
    other = b'[project]\nname = "x"\nrequires-python = \'>=3.10\'\n'  # not glmcompat's layout: tomllib reads it
    assert requires_python_of(other) == ">=3.10"
    assert requires_python_of(b'[tool.x]\nrequires-python = ">=3.9"\n[project]\nname = "x"\n') is None
    assert requires_python_of(b"not toml [") is None


def test_private_dir_is_where_tempfile_puts_its_own(tmp_path: Path) -> None:
    code = ("import os, tempfile\nfrom glmcompat.ops.speculate import private_dir\n"
            "p = private_dir('glmcompat-uv-')\nprint(os.path.dirname(p), tempfile.gettempdir(), oct(os.stat(p).st_mode & 0o777))\n"
            "os.rmdir(p)")
    missing = tmp_path / "missing"
    for env in ({"TMPDIR": str(tmp_path)}, {"TMPDIR": str(missing), "TEMP": str(tmp_path)}, {"TMPDIR": "", "TEMP": "", "TMP": ""}):
        full = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", "TEMP", "TMP")} | env
        out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, check=True).stdout.split()
        assert out[0] == out[1] and out[2] == "0o700", (env, out)
    p = private_dir("glmcompat-test-")
    try:
        assert os.path.dirname(p) == tempfile.gettempdir() and os.path.basename(p).startswith("glmcompat-test-")
    finally:
        os.rmdir(p)
