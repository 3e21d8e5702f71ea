"""Mutation fuzzing of every reader over real locks (issue 12): no input makes glmcompat raise anything but
its own errors.

Seeds are the real dependency files under ``tests/fixtures/locks`` and ``tests/fixtures/formats`` (uv.lock,
pylock.toml, requirements files with includes, poetry.lock, pdm.lock, Pipfile.lock, conda files) and the
small matrix files. Each input is a seed with a few mutations: bit flips, truncations, deletions,
duplicated spans, inserted tokens chosen to hurt (quotes, brackets, NUL, invalid UTF-8, a byte-order mark,
a 5000-digit version, nesting 2000 deep, markers, options), a version replaced by a bad or absurd one and,
in TOML and JSON, a value swapped for one of another type. Each goes through :func:`glmcompat.readers.formats.read_lock` (no cache) and through
``check``'s main path in-process (:func:`glmcompat.cli.commands.check.main`, caches on); matrix files through
:func:`glmcompat.matrix.schema.load_file`. Only :class:`glmcompat.model.errors.GlmcompatError` may come out, and no
input may take long.

CI runs ``GLMCOMPAT_FUZZ_INPUTS`` inputs (default 300, a few seconds); the long run is
``GLMCOMPAT_FUZZ_INPUTS=20000 pytest tests/readers/test_fuzz.py`` (``GLMCOMPAT_FUZZ_SEED`` picks another
sequence). A failure names the seed file and the input number, and leaves the input in the test's
temporary directory.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import shutil
import time
import traceback
from pathlib import Path

import pytest

from glmcompat.cli.commands import check
from glmcompat.matrix.schema import load_file
from glmcompat.model.errors import GlmcompatError
from glmcompat.readers.formats import read_lock

from tests.conftest import FIXTURES, ROOT

INPUTS = int(os.environ.get("GLMCOMPAT_FUZZ_INPUTS", "300"))
SEED = int(os.environ.get("GLMCOMPAT_FUZZ_SEED", "12"))
SLOW = 60.0  # seconds: an input that takes longer is a finding too (a hang; inputs take milliseconds)

TOKENS = [
    b'"', b"'", b"[", b"]", b"{", b"}", b"\n", b"\r\n", b"\\\n", b"=", b"==", b"===", b"~=", b">=", b";", b"@", b"*",
    b"#", b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\xc3\x28", b"\t", b" ", b"1.0", b".*", b"+cu128", b"!",
    b"-r ", b"-c ", b"-e ", b"--hash=sha256:", b" ; python_version >= '3.8'", b" ; extra == 'x'", b" and ", b" or ",
    b"9" * 5000, b"==1" + b"1" * 4400, b"2." + b"0" * 4400, b">=" + b"3" * 4400,
    b"[" * 2000, b"{a=" * 1000, b'"\\u0000"', b"nan", b"inf", b"-1", b"true", b"null",
    b"[[package]]\n", b"[metadata]\n", b"version = ", b"name = ", b"marker = ", b"requires-python = ",
    b"dependencies:\n  - ", b"  - pip:\n    - ", b"file:///etc/passwd", b"../../x.txt", b"git+https://x.invalid/r.git",
]
SWAPS = [b"1", b"-7", b"1.5", b"true", b"[]", b"[1, 2]", b"{}", b"{ a = 1 }", b'[""]', b"[[1]]", b"1979-05-27"]
VERSIONS = [b"1" * 5000, b"2." + b"1" * 4400, b"1.0abc", b"[pa0.3.21", b"", b"1..2", b"v", b"1.0+", b"1.0.*", b"1.0+cu12 8",
            b"==1.0", b">=" + b"3" * 4400, b"\xff", b'1.0"', b"1.0\n"]
JSON_SWAPS = [b"1", b"null", b"true", b"[]", b"{}", b'[""]', b'{"a": 1}', b'"=="', b'"' + b"1" * 5000 + b'"']


# a dotted number, found only from the start of a run of digits: the same spans as without the lookbehind (a match is
# always a whole run's, and a start inside a run fails as the run's start does), but a 5000-digit token inserted
# earlier costs one pass, not one per digit (a regex restarted at each digit of a run is quadratic in its length)
_DOTTED = re.compile(rb"(?<!\d)\d+(?:\.\d+)+")


def seeds() -> list[Path]:
    out = [p for d in (FIXTURES / "locks", FIXTURES / "formats") for p in sorted(d.rglob("*"))
           if p.is_file() and p.name != "SOURCE"]
    out += [p for p in sorted((ROOT / "glmcompat" / "matrix" / "data").glob("*.toml")) if p.stat().st_size < 20_000]
    return out


def mutate(data: bytes, rng: random.Random, kind: str) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:  # flip a bit
            i = min(i, len(b) - 1)
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1:  # truncate
            del b[i:]
        elif op == 2:  # insert a token
            b[i:i] = rng.choice(TOKENS)
        elif op == 3 and b:  # delete a span
            del b[i:i + rng.randint(1, 64)]
        elif op == 4:  # duplicate a span elsewhere
            j = rng.randrange(len(b) + 1)
            b[i:i] = b[j:j + rng.randint(1, 200)]
        elif op == 6:  # replace a version (or any dotted number) with a bad or absurd one
            spots = [m.span() for m in _DOTTED.finditer(bytes(b))]
            if spots:
                lo, hi = rng.choice(spots)
                b[lo:hi] = rng.choice(VERSIONS)
        else:  # swap a value for one of another type (TOML/JSON strings, numbers, booleans, arrays)
            text = bytes(b)
            pat = rb'"[^"\n]*"' if kind != "json" else rb'"[^"\n]*"|\b\d+\b|true|false|null'
            spots = [m.span() for m in re.finditer(pat, text)]
            if spots:
                lo, hi = rng.choice(spots)
                b[lo:hi] = rng.choice(JSON_SWAPS if kind == "json" else SWAPS)
    return bytes(b)


def run_one(path: Path, is_matrix: bool) -> None:
    if is_matrix:
        load_file(path)
        return
    with contextlib.suppress(GlmcompatError):
        read_lock(path, use_cache=False)
    with contextlib.redirect_stdout(io.StringIO()):
        check.main("check", [str(path), "--target", "sm120"])


@pytest.mark.slow
def test_mutated_locks_raise_only_glmcompat_errors(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    pool = seeds()
    assert len(pool) > 40
    findings: dict[tuple[str, str], str] = {}
    slowest = (0.0, "")
    for n in range(INPUTS):
        src = rng.choice(pool)
        is_matrix = src.parent == ROOT / "glmcompat" / "matrix" / "data"
        work = tmp_path / f"in{n % 4}"
        if work.exists():
            shutil.rmtree(work)
        if is_matrix:
            work.mkdir()
        else:  # the seed's whole folder: includes and the pyproject.toml beside a lock resolve as in real use
            shutil.copytree(src.parent, work, ignore=shutil.ignore_patterns("SOURCE"))
        dst = work / src.relative_to(src.parent)
        kind = "json" if src.name.endswith(".lock") and src.read_bytes().lstrip().startswith(b"{") else "text"
        dst.write_bytes(mutate(src.read_bytes(), rng, kind))
        t0 = time.perf_counter()
        try:
            run_one(dst, is_matrix)
        except GlmcompatError:
            pass
        except BaseException as e:  # noqa: BLE001 - the finding
            if isinstance(e, KeyboardInterrupt):
                raise
            frames = [f for f in traceback.extract_tb(e.__traceback__) if "glmcompat" in f.filename]
            where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
            key = (type(e).__name__, where)
            if key not in findings:
                keep = tmp_path / f"finding-{len(findings)}-{dst.name}"
                shutil.copy(dst, keep)
                findings[key] = f"input {n} (seed {SEED}) from {src.relative_to(ROOT)}: {str(e)[:200]!r} -> {keep}"
        took = time.perf_counter() - t0
        if took > slowest[0]:
            slowest = (took, f"input {n} from {src.relative_to(ROOT)}")
    assert not findings, "\n".join(f"{k[0]} at {k[1]}: {v}" for k, v in findings.items())
    assert slowest[0] < SLOW, f"slowest input took {slowest[0]:.1f} s: {slowest[1]}"
