"""Issue 26, points 3 and 6 (the quadratic spots): reading is linear in the size of what is read, with caps.

Before: 300,000 ``numpy==1.0`` lines (3.3 MB) took 11-15 s; ``shlex`` on an 800 KB option token took 12 s (it builds
a token a character at a time), and the credential-hiding regex on a 1.6 MB error line 77 s (``\\w+://`` tried at
every position of a long word). Each case is measured as a ratio in the same test (four times the input against once:
about 4 when linear, 16 when quadratic), so a loaded machine cannot fail it; a real process is run where a cap is the
point.
"""

from __future__ import annotations

import random
import shlex
from pathlib import Path

import pytest

from tests.conftest import LINEAR, growth
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


def test_split_words_is_linear() -> None:
    from glmcompat.readers.formats.requirements import split_words

    def run(size: int) -> None:
        assert split_words("--hash=sha256:" + "a" * size + ' "b c"') == ["--hash=sha256:" + "a" * size, "b c"]

    assert growth(run, 400_000) < LINEAR


@pytest.mark.parametrize("unit", ["a", "a.", "a://", "x://y"])
def test_hiding_credentials_is_linear(unit: str) -> None:
    from glmcompat.model.errors import _flat

    assert growth(lambda n: _flat(unit * (n // len(unit))), 400_000) < LINEAR
    assert _flat("cannot fetch https://user:secret@host/x (git+https://u:p@h/y)") == \
        "cannot fetch https://***@host/x (git+https://***@h/y)"


def test_a_long_option_token_reads_in_linear_time(tmp_path: Path) -> None:
    from glmcompat.readers.formats import read_lock

    def run(size: int) -> None:
        p = tmp_path / str(size) / "requirements.txt"
        p.parent.mkdir(exist_ok=True)
        p.write_text(f"--index-url https://index.invalid/{'a' * size}\ntorch==2.9.1\n")
        read_lock(p, use_cache=False)

    assert growth(run, 400_000) < LINEAR


def test_an_oversized_requirements_file_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy==1.0\n" * 300_000)  # 3.3 MB
    res = run_measured("check", "requirements.txt", "--target", "sm90", cwd=tmp_path, limit=60)
    _one_error_line(res, "requirements.txt: 3300000 characters is more than a requirements file may hold (2 MiB")
    (tmp_path / "top.txt").write_text("-r requirements.txt\n")
    res = run_measured("check", "top.txt", "--target", "sm90", cwd=tmp_path, limit=60)
    _one_error_line(res, "top.txt:1: -r 'requirements.txt': is 3300000 bytes, more than the 2 MiB")


@pytest.mark.slow
@pytest.mark.parametrize("distinct", [False, True])
def test_a_requirements_file_reads_in_linear_time(tmp_path: Path, distinct: bool) -> None:
    """Repeated lines, or distinct ones (each parsed once): four times the lines cost about four times the time."""
    from glmcompat.readers.formats import read_lock

    def run(lines: int) -> None:
        p = tmp_path / str(lines) / "requirements.txt"
        p.parent.mkdir(exist_ok=True)
        p.write_text("".join(f"numpy==1.{i}\n" for i in range(lines)) if distinct else "numpy==1.0\n" * lines)
        read_lock(p, use_cache=False)

    assert growth(run, 5_000) < LINEAR


@pytest.mark.slow
def test_a_requirements_file_just_under_the_cap_is_read(tmp_path: Path) -> None:
    """Just under the cap (135,000 distinct lines), the whole command as a process ends with its verdict (a hang
    guard: the limit is many times what it takes)."""
    text = "".join(f"numpy==1.{i}\n" for i in range(135_000))
    assert len(text) < 2 << 20
    (tmp_path / "requirements.txt").write_text(text)
    res = run_measured("check", "requirements.txt", "--target", "sm90", cwd=tmp_path, limit=300)
    assert res["rc"] == 0, res
