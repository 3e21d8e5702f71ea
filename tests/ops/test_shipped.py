"""Shipped evidence (issue 39, glmcompat.ops.shipped): a shipped row is what the judge derives from the wheel's own
bytes, and it answers only for the wheel of its sha256.

The fixture is a real wheel of the serving project's lock, as the index serves it (markupsafe 3.0.4, cp311,
manylinux x86_64: 23 KB; `pip download --no-deps --only-binary=:all: --python-version 3.11 --platform
manylinux_2_28_x86_64 markupsafe==3.0.4`), read offline."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from glmcompat.ops import shipped
from glmcompat.matrix.load import load_facts
from glmcompat.ops.artifacts import NUMPY_VERSION, Opened, _needs_torch, judge, judged_part, open_local, summaries
from glmcompat.ops.wheelrecords import ExtSummary
from glmcompat.ops.wheelprobe import SUMMARY_VERSION
from glmcompat.readers.wheelzip import BytesSource

WHEEL = (Path(__file__).resolve().parent.parent / "fixtures" / "shipped" /
         "markupsafe-3.0.4-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl")


@pytest.fixture
def fresh(monkeypatch):
    """The module's opened file and torch rows forgotten (a test that points PATH elsewhere reads that file)."""
    monkeypatch.delenv(shipped.OFF_ENV, raising=False)
    monkeypatch.setattr(shipped, "_zip", None)
    monkeypatch.setattr(shipped, "_names", None)
    monkeypatch.setattr(shipped, "_groups", {})
    monkeypatch.setattr(shipped, "_torch", {})
    return monkeypatch


def _read(data: bytes, sha: str) -> Opened:
    """An opened wheel that counts its zip openings (reading its bytes) in ``.opened``."""
    opened: list[int] = []

    def source() -> BytesSource:
        opened.append(1)
        return BytesSource(data, WHEEL.name)

    op = Opened(source, WHEEL.name, sha)
    op.opened = opened  # type: ignore[attr-defined]
    return op


def test_the_row_is_what_the_judge_derives_from_the_wheels_bytes(fresh):
    op = open_local(WHEEL)
    d = shipped.row(op.sha256, NUMPY_VERSION)
    assert d is not None and d["filename"] == WHEEL.name and d["sha256"] == op.sha256
    assert d["command"].endswith(f"--verify {op.sha256}")
    left: dict[str, str] = {}
    ext, np = summaries(op, None, True, left, shipped=False)  # read from the bytes, as with no row
    assert not left and ext.modules  # markupsafe/_speedups: read whole
    assert judged_part(ext).to_json() == d["ext"] and np == d["npabi"]
    assert shipped.summary(op.sha256, True, NUMPY_VERSION) == (judged_part(ext), np)
    assert not _needs_torch(ext) and d["ext"] != ext.to_json()  # the row keeps what the judge reads: needed libraries
    # ... and the verdict from the row is the verdict from the bytes (no torch to compare: nothing else is read)
    assert judge("markupsafe", "3.0.4", op, ExtSummary.from_json(d["ext"]), d["npabi"], {}) == judge(
        "markupsafe", "3.0.4", op, ext, np, {})


def test_a_shipped_wheel_is_not_read_and_another_is(fresh):
    data = WHEEL.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    op = _read(data, sha)
    ext, np = summaries(op, None, True)
    assert op.opened == [] and ext.to_json() == shipped.row(sha, NUMPY_VERSION)["ext"]  # type: ignore[attr-defined,index]
    whole = summaries(_read(data, sha), None, True, shipped=False)
    other = _read(data, "0" * 64)  # the same bytes under a sha256 no row has: read
    assert summaries(other, None, True) == whole and other.opened == [1]  # type: ignore[attr-defined]
    fresh.setenv(shipped.OFF_ENV, "1")
    off = _read(data, sha)
    assert summaries(off, None, True) == whole and off.opened == [1]  # type: ignore[attr-defined]


def test_a_wheel_not_shipped_is_read_from_its_bytes_as_before(fresh, tmp_path):
    """A sha256 the file does not hold: read from the wheel's bytes, the same summaries and the same stored kinds (ext,
    npabi, skipped) as with no shipped file at all."""
    from glmcompat.edges.cache import Cache

    data = WHEEL.read_bytes()
    sha = hashlib.sha256(b"a wheel no curated stack locks").hexdigest()
    assert shipped.row(sha, NUMPY_VERSION) is None and sha not in shipped.rows()
    got = {}
    for on in (True, False):
        cache = Cache(tmp_path / str(on))
        op = _read(data, sha)
        got[on] = summaries(op, cache, True, shipped=on), op.opened, sorted(  # type: ignore[attr-defined]
            p.name for p in (tmp_path / str(on)).rglob("*") if p.is_file())
    assert got[True] == got[False] and got[True][1] == [1] and got[True][2]


def _file(path: Path, filed: dict[str, dict[str, Any]]) -> None:
    """A shipped file holding ``filed`` ({sha256 it is filed under: row}), one member."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(shipped.INDEX, json.dumps({sha: "m-1" for sha in filed}))
        zf.writestr("m-1", b"\n".join(sha.encode() + b"\t" + json.dumps(r).encode() for sha, r in filed.items()))


def test_a_row_filed_under_another_sha256_is_never_used(fresh, tmp_path):
    """A row is used only where its own sha256 is the wheel's: a line filed for wheel B holding wheel A's row (a
    mistaken or tampered file), or a row of another reader's version, answers nothing, and B is read from its bytes."""
    data = WHEEL.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    real = shipped.row(sha, NUMPY_VERSION)
    assert real is not None
    whole, _ = summaries(_read(data, sha), None, True, shipped=False)
    other = hashlib.sha256(b"another wheel").hexdigest()
    old = {**real, "ext_version": real["ext_version"] - 1}
    path = tmp_path / "wheel-summaries.zip"
    _file(path, {other: {**real, "ext": {}}, sha: old})  # names B, says A; A's of another reader
    fresh.setattr(shipped, "PATH", path)
    fresh.setattr(shipped, "_names", None)  # opened anew, from PATH
    fresh.setattr(shipped, "_groups", {})
    assert shipped.row(other, NUMPY_VERSION) is None and shipped.row(sha, NUMPY_VERSION) is None
    op = _read(data, other)
    ext, _ = summaries(op, None, True)
    assert op.opened == [1] and ext == whole  # from the bytes, not the misfiled row's empty ext


def test_a_torch_row_answers_only_for_the_extensions_it_covers(fresh, tmp_path):
    """A torch row keeps only the names its covered extension rows leave undefined: it answers for those, never for
    another wheel (whose names it may lack), and never under another torch's sha256."""
    tsha, covered, other = (hashlib.sha256(s).hexdigest() for s in (b"torch", b"covered", b"other"))
    row = {"format": shipped.FORMAT, "sha256": tsha, "filename": "torch.whl", "command": "",
           "summary_version": SUMMARY_VERSION, "exports": ["_ZN3c104warnEv"], "covers": [covered]}
    path = tmp_path / "wheel-summaries.zip"
    _file(path, {tsha: row, other: {**row, "exports": []}})
    fresh.setattr(shipped, "PATH", path)
    assert shipped.torch_exports(tsha, covered) == frozenset({"_ZN3c104warnEv"})
    assert shipped.torch_exports(tsha, other) is None
    assert shipped.torch_exports(other, covered) is None  # a row filed under another torch's sha256


def test_the_shipped_torch_rows_cover_their_extensions_undefined_names(fresh):
    """Each shipped torch row is cut with every undefined name of the extension rows it covers: a covered extension's
    names that torch exports are all in it (so its comparison answers as against the whole export list); the rows
    it covers are whole (they need torch's exports: :func:`judged_part` keeps all of them)."""
    rows = shipped.rows()
    torches = [d for d in rows.values() if "exports" in d]
    assert torches
    for t in torches:
        assert set(t["exports"]) <= {s for sha in t["covers"] for m in rows[sha]["ext"].values() for s in m["undefined"]}
        assert all(_needs_torch(ExtSummary.from_json(rows[sha]["ext"])) for sha in t["covers"])


def test_every_row_is_a_wheel_of_a_curated_stacks_lock():
    """The file is the curated stacks' wheels, not one project's: ``covered.json`` (written with the rows) names the
    matrix's stacks as recorded, and every row's sha256 is a wheel one of their locks gave, of the file name it
    records, for CPython 3.10-3.13 on x86_64 and aarch64; every row is of one reader's versions; the rows span the
    stacks' engines (sglang, vllm), their kernels and both machines."""
    from glmcompat.ops.wheelprobe import EXT_SUMMARY_VERSION

    with zipfile.ZipFile(shipped.PATH) as zf:
        covered = json.loads(zf.read(shipped.COVERED))
    stacks = {s.name for s in load_facts().rows("stack")}
    assert set(covered["stacks"]) == stacks, "a curated stack changed: run scripts/record_wheel_summaries.py"
    assert covered["pythons"] == ["3.10", "3.11", "3.12", "3.13"] and covered["machines"] == ["x86_64", "aarch64"]
    wheels = covered["wheels"]
    rows = shipped.rows()
    assert rows and set(rows) <= set(wheels)
    for sha, d in rows.items():
        w = wheels[sha]
        assert d["sha256"] == sha and d["filename"] == w["filename"] and set(w["stacks"]) <= stacks and w["shipped"]
        assert d.get("ext_version", EXT_SUMMARY_VERSION) == EXT_SUMMARY_VERSION and d["format"] == shipped.FORMAT
        assert f"_{w['machine']}" in d["filename"]
    names = {w["filename"].split("-")[0].lower() for w in wheels.values()}
    # (the kernels and torch's family have matrix rows: the judge reads none of their bytes, so none is recorded)
    assert {"sglang", "torch", "sgl_deep_gemm", "xgrammar", "pydantic_core", "numba"} <= names
    assert {w["machine"] for w in wheels.values()} == {"x86_64", "aarch64"}
    tags = {t for w in wheels.values() for t in w["filename"].split("-")[2].split(".")}
    assert {"cp310", "cp311", "cp312", "cp313"} <= tags


SHIPPED_LOCK = '''version = 1
requires-python = ">=3.11"

[[package]]
name = "app"
version = "0.1.0"
source = {{ virtual = "." }}
dependencies = [
    {{ name = "markupsafe" }},
    {{ name = "numpy" }},
]

[[package]]
name = "markupsafe"
version = "3.0.4"
source = {{ registry = "http://127.0.0.1:9/simple" }}
wheels = [
    {{ url = "http://127.0.0.1:9/files/{wheel}", hash = "sha256:{sha}", size = 1, upload-time = "2025-01-01T00:00:00Z" }},
]

[[package]]
name = "numpy"
version = "2.1.0"
source = {{ registry = "http://127.0.0.1:9/simple" }}
wheels = [
    {{ url = "http://127.0.0.1:9/files/numpy-2.1.0-py3-none-any.whl", hash = "sha256:{zeros}", size = 1, upload-time = "2025-01-01T00:00:00Z" }},
]
'''


def test_facts_judged_from_a_shipped_row_alone_are_not_stored(fresh, tmp_path, monkeypatch):
    """A wheel whose summary is shipped and that needs nothing of torch is judged from its row, nothing read (the
    index at port 9 answers nothing), and its facts are not stored (judged again from the row for about what reading
    them back costs): the judge of a cold project lock wrote a file for each of 60 such wheels (issue 39); the facts
    are the same on the next run, and the lock's one entry of all its facts is stored as before."""
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.ops.artifacts import PROBE_ENV, probe_lock, read_artifacts
    from glmcompat.readers.formats import read_lock

    monkeypatch.delenv(PROBE_ENV, raising=False)
    sha = hashlib.sha256(WHEEL.read_bytes()).hexdigest()
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "uv.lock").write_text(SHIPPED_LOCK.format(wheel=WHEEL.name, sha=sha, zeros="0" * 64))
    lock = read_lock(tmp_path / "p" / "uv.lock", use_cache=False)
    facts = load_facts()
    runs = []
    for _ in range(2):
        cache = Cache(tmp_path / "cache")
        with IndexClient("http://127.0.0.1:9/simple", cache=cache, retries=0) as index:
            runs.append(probe_lock(lock, facts, index=index, cache=cache, resolved_at_install=False))
    got = runs[0][("markupsafe", "3.0.4")]
    assert got.read and got.sha256 == sha and not got.unread and runs[1] == runs[0]
    assert not list((tmp_path / "cache").glob("artifact/*"))  # nothing stored for it
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "whole"))
    assert read_artifacts(lock, facts, resolved_at_install=False) == runs[0]
    assert [p.name.split("-")[0] for p in (tmp_path / "whole").rglob("*") if p.is_file()] == ["lockart"]


def test_a_rows_file_name_read_without_parsing_it_is_the_parsed_rows():
    """The read-ahead reads each row's file name from its JSON text (:func:`shipped._filename`): for every row of the
    shipped file, the name the row parsed holds; a row written otherwise (spaced, escaped) is parsed."""
    with zipfile.ZipFile(shipped.PATH) as zf:
        index = json.loads(zf.read(shipped.INDEX))
        lines = [line[65:] for member in sorted(set(index.values())) for line in zf.read(member).split(b"\n") if line]
    assert len(lines) > 500
    assert [shipped._filename(x) for x in lines] == [json.loads(x)["filename"] for x in lines]
    spaced = b'{"command": "x", "ext": {"filename": {"needed": ["filename"]}}, "filename": "a-1-py3-none-any.whl"}'
    escaped = b'{"ext":{},"filename":"a\\u002d1-1-py3-none-any.whl"}'
    assert shipped._filename(spaced) == "a-1-py3-none-any.whl" and shipped._filename(escaped) == "a-1-1-py3-none-any.whl"
    assert shipped._filename({"filename": "b-1-py3-none-any.whl"}) == "b-1-py3-none-any.whl"
