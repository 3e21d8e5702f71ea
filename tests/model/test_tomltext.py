"""One TOML reader for the matrix files and the dependency files (:func:`glmcompat.model.tomltext.loads`): the
same broken text is the same one-line error, naming the file and the line, whichever reads it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from glmcompat.matrix.schema import load_file
from glmcompat.model.errors import GlmcompatError, LockFormatError, MatrixError
from glmcompat.model import tomltext
from glmcompat.model.tomltext import loads
from glmcompat.readers.formats import read_lock

BROKEN = [  # (text, message, line)
    ('a = 1\nb = "unterminated\n', "invalid TOML: Illegal character '\\n'", 2),
    ("a = 1\na = 2\n", "invalid TOML: Cannot overwrite a value", 2),
    ("x = 1\ny = " + "9" * 5000 + "\n", "invalid TOML: Exceeds the limit (4300 digits) for integer string conversion", 2),
    ("x = " + "[" * 3000 + "]" * 3000 + "\n", "invalid TOML: nested too deeply", None),
]


@pytest.mark.parametrize("text,message,line", BROKEN)
def test_loads_names_the_file_and_line(text: str, message: str, line: int | None) -> None:
    with pytest.raises(MatrixError) as e:
        loads(text, MatrixError, "m.toml")
    assert e.value.message.startswith(message) and e.value.line == line and e.value.path == "m.toml"
    assert "\n" not in str(e.value) and "(at line" not in str(e.value)


def test_loads_reads_valid_toml() -> None:
    assert loads('a = 1\n[t]\nb = "x"\n', LockFormatError, "f.toml") == {"a": 1, "t": {"b": "x"}}


@pytest.mark.parametrize("text,message,line", BROKEN)
def test_matrix_and_locks_say_the_same(tmp_path: Path, text: str, message: str, line: int | None) -> None:
    errors: list[GlmcompatError] = []
    for name, read in (("torch.toml", load_file), ("uv.lock", read_lock), ("pylock.toml", read_lock),
                       ("poetry.lock", read_lock)):
        p = tmp_path / name
        p.write_text(text)
        with pytest.raises((MatrixError, LockFormatError)) as e:
            read(p)
        errors.append(e.value)
        assert e.value.one_line() == (f"{p}:{line}: " if line else f"{p}: ") + e.value.message
    assert isinstance(errors[0], MatrixError) and all(isinstance(x, LockFormatError) for x in errors[1:])
    assert len({(x.message, x.line) for x in errors}) == 1, [str(x) for x in errors]


# --- the fast path for arrays of one-line inline tables (issue 39) ---------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
# every lock (the fast path's texts), pyprojects and the matrix; not the tables of logs and messages under
# tests/fixtures/explain and raise_sites (hundreds of kilobytes of strings the fast path never takes)
TOML_FILES = sorted({*ROOT.glob("tests/fixtures/**/*.lock"),
                     *(p for p in ROOT.glob("tests/fixtures/**/*.toml")
                       if not p.is_relative_to(ROOT / "tests/fixtures/explain")
                       and not p.is_relative_to(ROOT / "tests/fixtures/raise_sites")),
                     *ROOT.glob("glmcompat/matrix/data/*.toml"), ROOT / "pyproject.toml"})


def _plain(path: Path) -> tuple[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
        return text, tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None  # broken on purpose: the error tests above are about those


def test_every_toml_file_reads_as_tomllib_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The document :func:`loads` gives is :mod:`tomllib`'s, for every TOML file the tests and the matrix hold (uv,
    poetry, pdm and pylock locks, pyprojects, matrix files) -- and the fast path is taken for the real uv.lock files,
    so the equality covers it. Each text is read by the fast path once: :func:`loads` is handed that document for it
    (the fast path's own answer, not a second run of it), and must return that very document."""
    fast_for = []
    real = tomltext._fast
    for path in TOML_FILES:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        fast = real(text)
        if fast is None:
            continue  # loads is tomllib itself for this text: nothing of glmcompat's own to compare
        got = _plain(path)
        assert got is not None, f"{path}: the fast path read a text tomllib refuses"
        assert got[1] == fast, path
        monkeypatch.setattr(tomltext, "_fast", lambda t, text=text, fast=fast: fast if t is text else real(t))
        assert loads(text, LockFormatError, str(path)) is fast, path
        if path.name == "uv.lock":
            fast_for.append(path)
    assert len(fast_for) >= 10, fast_for


LOCK = '''version = 1
requires-python = ">=3.11"
resolution-markers = [
    "python_full_version >= '3.12'",
    "python_full_version < '3.12'",
]

[[package]]
name = "torch"
version = "2.9.1"
source = { registry = "https://example.invalid/simple" }
dependencies = [
    { name = "filelock" },
    { name = "nvidia-cublas-cu12", marker = "platform_machine == 'x86_64' and sys_platform == 'linux'" },
]
sdist = { url = "https://example.invalid/torch-2.9.1.tar.gz", hash = "sha256:ef", size = 12, upload-time = "2025-11-12T15:20:40Z" }
wheels = [
    { url = "https://example.invalid/torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl", hash = "sha256:ab", size = 899, upload-time = "2025-11-12T15:20:46.338Z" },
    { url = "https://example.invalid/torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl", hash = "sha256:cd", size = 0, upload-time = "2025-11-12T15:20:47Z" },
]

[package.optional-dependencies]
opt = [
    { name = "x", extra = ["a"] },
]
'''


FAST_CASES = [
    LOCK,
    LOCK.replace('size = 899', 'size = 1_0'),  # an integer TOML reads but the fast form does not: the array goes whole
    LOCK.replace('hash = "sha256:ab"', 'hash = "sha\\u0041"'),  # an escape: that array to tomllib
    LOCK.replace('sha256:ab', 'sha256:\\u0000glmcompat-array:0'),  # the marker itself, escaped: the text to tomllib
    LOCK + 'note = """\nwheels = [\n    { url = "u" },\n]\n"""\n',  # an array's lines inside a multi-line string
    LOCK.replace('size = 0,', 'size = 0, size = 1,'),  # a key twice in a row: tomllib's error, below
    LOCK.replace('\n]\n\n[package.optional', '\n]\nwheels = 1\n\n[package.optional'),  # a key twice in a table
    LOCK.replace('size = 899', 'size = 123456789012345678901234567890'),  # a big integer: tomllib's
    LOCK.replace("\n", "\r\n"),
    LOCK.replace('"python_full_version < \'3.12\'"', '"a\\tb"'),  # an escape in a string array: that array whole
    LOCK.replace('source = { registry', 'source = { nested = { a = 1 }, registry'),  # a nested table: tomllib's
    LOCK.replace('size = 12, ', 'size = 12, size = 13, '),  # a key twice in a one-line table: tomllib's error
    LOCK.replace('[package.optional-dependencies]', 'sdist.more = 1\n\n[package.optional-dependencies]'),  # extending
    LOCK.replace('[package.optional-dependencies]', '[package.sdist]\n\n[package.optional-dependencies]'),  # a table
    LOCK.replace('requires-python = ">=3.11"', 'requires-python = [\n    ">=3.11",\n]\nrequires-python = 1'),
    "a = [\n    { b = true, c = false, d = 0 },\n    { b = 1 },\n]\n",  # rows of several shapes
    "[t]\na = [\n    { b = \"x\" },\n]\n[[t.u]]\nv = [\n    { w = \"y\" },\n]\n",  # nested tables and arrays of tables
]


def test_each_case_is_its_own() -> None:
    assert len(set(FAST_CASES)) == len(FAST_CASES)  # every edit above found what it replaces


@pytest.mark.parametrize("text", FAST_CASES)
def test_fast_path_is_tomllib(text: str) -> None:
    try:
        want: Any = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        with pytest.raises(LockFormatError) as e:
            loads(text, LockFormatError, "uv.lock")
        plain = tomllib.TOMLDecodeError
        try:
            tomllib.loads(text)
        except plain as err:
            assert e.value.message == "invalid TOML: " + str(err).rsplit(" (at ", 1)[0]
        return
    assert loads(text, LockFormatError, "uv.lock") == want


def test_fast_path_reads_the_wheel_arrays() -> None:
    """The common uv.lock arrays are read by the fast path (the text tomllib is left is a fraction of the lock)."""
    doc = tomltext._fast(LOCK)
    assert doc is not None and doc == tomllib.loads(LOCK)
    assert doc["package"][0]["wheels"][1] == {"url": "https://example.invalid/torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl",
                                              "hash": "sha256:cd", "size": 0, "upload-time": "2025-11-12T15:20:47Z"}
    assert doc["resolution-markers"] == ["python_full_version >= '3.12'", "python_full_version < '3.12'"]
    assert doc["package"][0]["sdist"]["size"] == 12 and doc["package"][0]["source"] == {"registry": "https://example.invalid/simple"}
    assert tomltext._fast('note = """\nx\n"""\n') is None and tomltext._fast("a = 1\n") is None
