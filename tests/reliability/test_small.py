"""Issue 26, point 6, the smaller items: each was an exit 4 (an internal error) or a silent wrong meaning; each is now
one line naming the value (exit 2), or the answer itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, LINEAR, growth, run_cli

S1 = FIXTURES / "formats" / "s1" / "requirements.txt"


def _one_line(r: subprocess.CompletedProcess[str], rc: int, needle: str) -> None:
    assert r.returncode == rc, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and needle in r.stderr, r.stderr


def test_a_bad_index_ttl_is_exit_2() -> None:
    _one_line(run_cli("arch", "x==1.0", "--index-url", "http://127.0.0.1:9/simple/", env={"GLMCOMPAT_INDEX_TTL": "abc"}),
              2, "GLMCOMPAT_INDEX_TTL='abc': not a number of seconds")


@pytest.mark.parametrize("var", ["UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"])
def test_a_blank_index_variable_is_exit_2(var: str) -> None:
    _one_line(run_cli("arch", "x==1.0", env={var: "  "}), 2, f"{var} is set but blank")


@pytest.mark.slow
@pytest.mark.parametrize("text", ["index-url = [\n", "index = 5\nindex-url = 7\n"])
def test_a_malformed_uv_toml(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "uv").mkdir()
    (tmp_path / "uv" / "uv.toml").write_text(text)
    for k in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        monkeypatch.delenv(k, raising=False)
    r = run_cli("arch", "x==1.0", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    if text.startswith("index-url = ["):
        _one_line(r, 2, f"{tmp_path / 'uv' / 'uv.toml'}: uv's configuration is not valid TOML")


@pytest.mark.slow
def test_an_ascii_stdout_and_a_closed_one_keep_the_verdict(tmp_path: Path) -> None:
    full = run_cli("check", str(S1), "--target", "sm90", env={"GLMCOMPAT_CACHE_DIR": str(tmp_path / "a")})
    assert full.returncode == 1, full.stderr
    ascii_ = run_cli("check", str(S1), "--target", "sm90", env={"GLMCOMPAT_CACHE_DIR": str(tmp_path / "b"),
                                                                "PYTHONIOENCODING": "ascii"})
    assert ascii_.returncode == 1 and "internal error" not in ascii_.stderr, ascii_.stderr
    closed = subprocess.run([sys.executable, "-m", "glmcompat", "check", str(S1), "--target", "sm90"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=60,
                            env={**os.environ, "GLMCOMPAT_CACHE_DIR": str(tmp_path / "c")}, pass_fds=(),
                            preexec_fn=lambda: os.close(1))
    assert closed.returncode == 1 and closed.stderr == "", closed.stderr


def test_absurd_integers_on_an_index_page_are_no_sizes() -> None:
    from glmcompat.edges.index import parse_project_page

    rows = [{"filename": "x-1.0-py3-none-any.whl", "url": "x-1.0-py3-none-any.whl", "hashes": {}, "size": size}
            for size in (10 ** 4000, -1, True, 12)]
    page = parse_project_page({"name": "x", "files": rows}, "https://index.invalid/simple/x/")
    assert [f.size for f in page.files] == [None, None, None, 12]


@pytest.mark.parametrize("pattern", ["a.{0,200}b.{0,200}c.{0,200}d", "(x.{0,100}y.{0,100}z)"])
def test_several_bounded_gaps_are_refused(pattern: str) -> None:
    import re

    from glmcompat.model.signatures import linear_time_problem

    assert "bounded gaps whose spans multiply" in (linear_time_problem(pattern) or "")
    assert linear_time_problem("(CUDA initialization: .{0,100}(error|failed)|cuInit.{0,100}(failed|error))") is None
    assert linear_time_problem("a.{0,40}a.{0,40}x") is None  # one accepted: a product of 1681
    pat = re.compile("a.{0,40}a.{0,40}x")
    assert growth(lambda n: [pat.search("a" * n) for _ in range(5)], 2000) < LINEAR  # linear in the line's length
