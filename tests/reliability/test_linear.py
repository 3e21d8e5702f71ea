"""Issue 26, points 3 and 6 (the quadratic spots): reading is linear in the size of what is read, with caps.

Before: 300,000 ``numpy==1.0`` lines (3.3 MB) took 11-15 s; ``shlex`` on an 800 KB option token took 12 s (it builds
a token a character at a time), and the credential-hiding regex on a 1.6 MB error line 77 s (``\\w+://`` tried at
every position of a long word). Each case runs here as a real process, measured.
"""

from __future__ import annotations

import random
import shlex
import time
from pathlib import Path

import pytest

from tests.reliability.test_records import run_measured


def _one_error_line(res: dict[str, object], needle: str) -> None:
    err = str(res["stderr"])
    assert res["rc"] == 2, res
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert needle in err, err


def test_split_words_is_shlex_split() -> None:
    """The linear splitter gives shlex.split's words (and its errors) on every string of a small hostile alphabet."""
    from glmcompat.readers.formats.requirements import split_words

    rng = random.Random(26)
    alphabet = ["a", "b", " ", "\t", '"', "'", "\\", "\n", "=", "#", "\x0b", "é"]
    for _ in range(30_000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        try:
            want: object = shlex.split(s)
        except ValueError:
            want = ValueError
        try:
            got: object = split_words(s)
        except ValueError:
            got = ValueError
        assert got == want, repr(s)


@pytest.mark.parametrize("size", [800_000, 1_600_000])
def test_split_words_is_linear(size: int) -> None:
    from glmcompat.readers.formats.requirements import split_words

    t = time.monotonic()
    assert split_words("--hash=sha256:" + "a" * size + ' "b c"') == ["--hash=sha256:" + "a" * size, "b c"]
    assert time.monotonic() - t < 1.0


@pytest.mark.parametrize("line", ["a" * 1_600_000, "a." * 800_000, "a://" * 400_000, "x" * 100 + "://" + "y" * 1_600_000])
def test_hiding_credentials_is_linear(line: str) -> None:
    from glmcompat.model.errors import _flat

    t = time.monotonic()
    _flat(line)
    assert time.monotonic() - t < 1.0
    assert _flat("cannot fetch https://user:secret@host/x (git+https://u:p@h/y)") == \
        "cannot fetch https://***@host/x (git+https://***@h/y)"


@pytest.mark.parametrize("size", [800_000, 1_600_000])
def test_a_long_option_token_reads_in_bounded_time(tmp_path: Path, size: int) -> None:
    (tmp_path / "requirements.txt").write_text(f"--index-url https://index.invalid/{'a' * size}\ntorch==2.9.1\n")
    res = run_measured("check", "requirements.txt", "--target", "sm90", cwd=tmp_path, limit=60)
    assert res["rc"] in (0, 1), res
    assert float(res["seconds"]) < 10, res


def test_an_oversized_requirements_file_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy==1.0\n" * 300_000)  # 3.3 MB
    res = run_measured("check", "requirements.txt", "--target", "sm90", cwd=tmp_path, limit=60)
    _one_error_line(res, "requirements.txt: 3300000 characters is more than a requirements file may hold (2 MiB")
    assert float(res["seconds"]) < 10, res
    (tmp_path / "top.txt").write_text("-r requirements.txt\n")
    res = run_measured("check", "top.txt", "--target", "sm90", cwd=tmp_path, limit=60)
    _one_error_line(res, "top.txt:1: -r 'requirements.txt': is 3300000 bytes, more than the 2 MiB")


@pytest.mark.parametrize("distinct", [False, True])
def test_a_requirements_file_under_the_cap_reads_in_bounded_time(tmp_path: Path, distinct: bool) -> None:
    """Just under the cap: 190,000 repeated lines, or 135,000 distinct ones (each parsed once)."""
    text = "".join(f"numpy==1.{i}\n" for i in range(135_000)) if distinct else "numpy==1.0\n" * 190_000
    assert len(text) < 2 << 20
    (tmp_path / "requirements.txt").write_text(text)
    res = run_measured("check", "requirements.txt", "--target", "sm90", cwd=tmp_path, limit=60)
    assert res["rc"] == 0, res
    assert float(res["seconds"]) < 20, res
