"""What every reader shares (glmcompat.readers.formats.common): bytes to text, and that any input is read or is one
LockFormatError naming the file."""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glmcompat.matrix.locations import seal, unseal
from glmcompat.matrix.store import cache_dir
from glmcompat.model.errors import LockFormatError
from glmcompat.readers.formats import read_lock
from glmcompat.readers.formats.common import Entry, decode_text, is_lock_meta

from tests.conftest import LOCKS
from tests.readers.formats.helpers import FIXTURE_DIR, PARSERS, fixture, load, write_tree


# --- bytes to text ----------------------------------------------------------------------------------------------

S2_TEXT = fixture("s2/requirements.txt").read_text()


@pytest.mark.parametrize("encode", [
    lambda t: t.encode("utf-8"),
    lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
    lambda t: codecs.BOM_UTF16_LE + t.encode("utf-16-le"),
    lambda t: codecs.BOM_UTF16_BE + t.encode("utf-16-be"),
    lambda t: codecs.BOM_UTF32_LE + t.encode("utf-32-le"),
    lambda t: codecs.BOM_UTF32_BE + t.encode("utf-32-be"),
    lambda t: t.replace("\n", "\r\n").encode("utf-8"),
    lambda t: t.replace("\n", "\r").encode("utf-8"),
    lambda t: codecs.BOM_UTF16_LE + t.replace("\n", "\r\n").encode("utf-16-le"),  # Windows Notepad's "Unicode"
], ids=["utf-8", "utf-8-bom", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "crlf", "cr", "utf-16-crlf"])
def test_decode_text(tmp_path: Path, encode: Callable[[str], bytes]) -> None:
    p = tmp_path / "requirements.txt"
    p.write_bytes(encode(S2_TEXT))
    assert decode_text(p, p.read_bytes()) == S2_TEXT
    assert load(p).entries == load(fixture("s2/requirements.txt")).entries


BAD_BYTES = [
    (b"torch==2.9.1\nsgl-kernel==0.3.21\xff\n", 2, ["not UTF-8 text", "b'\\xff'"]),
    (b"torch==2.9.1\r\n\r\nx==1\xc3(\n", 3, ["not UTF-8 text", "b'\\xc3'"]),
    (b"torch==2.9.1\n\x00\x01\x02", 2, ["binary data", "NUL"]),
    ("torch==2.9.1\n".encode("utf-16-le"), 1, ["NUL", "UTF-16 without a byte-order mark?"]),
    (codecs.BOM_UTF16_LE + "torch==2.9.1\n".encode("utf-16-le") + b"\x00\xd8", 2, ["not UTF-16-LE text"]),
]


@pytest.mark.parametrize("data, line, needles", BAD_BYTES)
def test_decode_text_errors(tmp_path: Path, data: bytes, line: int, needles: list[str]) -> None:
    p = tmp_path / "requirements.txt"
    with pytest.raises(LockFormatError) as err:
        decode_text(p, data)
    msg = str(err.value)
    assert err.value.exit_code == 2 and "\n" not in msg and msg.startswith(f"{p}:{line}: "), msg
    for needle in needles:
        assert needle in msg, msg


# --- property tests ---------------------------------------------------------------------------------------------

_TOKENS = [
    "torch==2.9.1", "torch==", "==1.0", "-r base.txt", "-r loop.txt", "-r sub", "-c base.txt", "-e .",
    "-e git+https://github.com/a/b.git#egg=b", "x @ https://index.invalid/x-1.0-py3-none-any.whl", "\\",
    "    --hash=sha256:00", "# c", "a ; python_version >= '3", "[[package]]", 'name = "torch"', 'version = "2.3.0"',
    "[metadata]", 'lock-version = "2.1"', 'lock_version = "4.5.0"', "[package.source]", 'type = "git"',
    '{"_meta": {"pipfile-spec": 6}, "default": {"torch": {"version": "==2.4.1"}}}', "name: env", "dependencies:",
    "  - pytorch=2.3.0", "  - pip:", "    - -r base.txt", "    - torch==", "  - 'x", "channels: [a, b", "\t- x",
    "  - pytorch==2.3.0=py3.11_cuda12.1_cudnn8_0", "  - numpy >=1|<0", "markers = {a = 1}", "optional = 3",
    '"_meta": [', '    - "-r a\\0b"', "a ; " + "(" * 3000, "torch==" + "9" * 5000, "a = " + "[" * 3000, '{"_meta": ' + "[" * 3000,
]
_inputs = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from(_TOKENS), max_size=12).map(lambda ls: "\n".join(ls).encode()),
    st.lists(st.sampled_from(_TOKENS), max_size=8).map(lambda ls: "\r\n".join(ls).encode("utf-16")),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_inputs, kind=st.sampled_from(sorted(PARSERS)))
def test_arbitrary_bytes_only_raise_lock_format_error(tmp_path: Path, data: bytes, kind: str) -> None:
    write_tree(tmp_path, {"base.txt": "sgl-kernel==0.3.21\n", "loop.txt": "-r loop.txt\n", "sub/x.txt": ""})
    p = tmp_path / kind
    try:
        lock = PARSERS[kind](p, decode_text(p, data))
    except LockFormatError as e:
        assert "\n" not in str(e) and str(e).startswith(str(tmp_path)), str(e)
    else:
        assert lock.kind == kind and all(isinstance(e, Entry) and e.name for e in lock.entries)
        assert is_lock_meta(lock.meta), lock.meta


# --- Lock.meta: one declaration (LockMeta) that producers, readers and the parsed-lock cache share ---------------

_EVERY_FILE = [*sorted(p for p in FIXTURE_DIR.rglob("*") if p.is_file() and p.name != "SOURCE"),
               LOCKS / "glm5-torch-2.10.0" / "uv.lock", LOCKS / "glm5-torch-2.10.0" / "pylock.toml"]


@pytest.mark.parametrize("path", _EVERY_FILE, ids=[p.name if p.parent.parent.name == "locks" else
                                                   str(p.relative_to(FIXTURE_DIR)) for p in _EVERY_FILE])
def test_every_reader_fills_meta_as_declared(path: Path) -> None:
    lock = read_lock(path, use_cache=False)
    assert is_lock_meta(lock.meta), lock.meta
    assert json.loads(json.dumps(lock.meta)) == lock.meta  # JSON values only: the cache stores it as it is


@pytest.mark.parametrize("meta, ok", [
    ({}, True),
    ({"notes": ["x"], "overrides": {"torch": ">=2"}, "groups": {"torch": ["main"]}, "conda_cuda": "12.8"}, True),
    ({"notes": "x"}, False),  # a string, not a list of them
    ({"groups": {"torch": "main"}}, False),
    ({"overrides": {"torch": 2}}, False),
    ({"conda_cuda": 12.8}, False),
    ({"no_build_isolation": True}, False),  # a key LockMeta does not declare
    ([], False),
    (None, False),
])
def test_is_lock_meta(meta: object, ok: bool) -> None:
    assert is_lock_meta(meta) is ok


def test_a_cached_meta_of_another_shape_is_a_miss(tmp_path: Path) -> None:
    """The parsed-lock cache checks ``meta`` against LockMeta: an entry holding another shape is parsed again."""
    src = fixture("poetry/poetry.lock")
    p = tmp_path / "poetry.lock"
    p.write_bytes(src.read_bytes())
    lock = read_lock(p)
    [entry] = (cache_dir() / "locks").glob("poetry.lock-*.json")
    stored = json.loads(unseal("lock", entry.name, entry.read_bytes()) or b"")
    assert stored["meta"] == lock.meta and lock.meta["extras"]  # stored as it is: the form before LockMeta
    for bad in ({**lock.meta, "extras": ["gpu"]}, {**lock.meta, "unknown": []}, None):
        entry.write_bytes(seal("lock", entry.name, json.dumps({**stored, "meta": bad}).encode()))
        assert read_lock(p) == lock
        assert json.loads(unseal("lock", entry.name, entry.read_bytes()) or b"") == stored  # replaced
    marked = lock.meta.copy()
    marked["notes"] = ["from the cache"]
    entry.write_bytes(seal("lock", entry.name, json.dumps({**stored, "meta": marked}).encode()))
    assert read_lock(p).meta == marked  # a well-formed entry is served
