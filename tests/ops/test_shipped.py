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

import pytest

from glmcompat.ops import shipped
from glmcompat.ops.artifacts import NUMPY_VERSION, Opened, open_local, summaries
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
    assert ext.to_json() == d["ext"] and np == d["npabi"]
    assert shipped.summary(op.sha256, True, NUMPY_VERSION) == (ext, np)


def test_a_shipped_wheel_is_not_read_and_another_is(fresh):
    data = WHEEL.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    op = _read(data, sha)
    ext, np = summaries(op, None, True)
    assert op.opened == [] and ext.to_json() == shipped.row(sha, NUMPY_VERSION)["ext"]  # type: ignore[attr-defined,index]
    other = _read(data, "0" * 64)  # the same bytes under a sha256 no row has: read
    assert summaries(other, None, True) == (ext, np) and other.opened == [1]  # type: ignore[attr-defined]
    fresh.setenv(shipped.OFF_ENV, "1")
    off = _read(data, sha)
    assert summaries(off, None, True) == (ext, np) and off.opened == [1]  # type: ignore[attr-defined]


def test_a_row_filed_under_another_sha256_is_never_used(fresh, tmp_path):
    """A row is used only where its own sha256 is the wheel's: a member named for wheel B holding wheel A's row (a
    mistaken or tampered file), or a row of another reader's version, answers nothing, and B is read from its bytes."""
    data = WHEEL.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    real = shipped.row(sha, NUMPY_VERSION)
    assert real is not None
    other = hashlib.sha256(b"another wheel").hexdigest()
    old = {**real, "ext_version": real["ext_version"] - 1}
    path = tmp_path / "wheel-summaries.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{other}.json", json.dumps({**real, "ext": {}}))  # names B, says A
        zf.writestr(f"{sha}.json", json.dumps(old))
    fresh.setattr(shipped, "PATH", path)
    fresh.setattr(shipped, "_names", None)  # opened anew, from PATH
    assert shipped.row(other, NUMPY_VERSION) is None and shipped.row(sha, NUMPY_VERSION) is None
    op = _read(data, other)
    ext, _ = summaries(op, None, True)
    assert op.opened == [1] and ext.to_json() == real["ext"]  # from the bytes, not the misfiled row's empty ext


def test_a_torch_row_answers_only_for_the_extensions_it_covers(fresh, tmp_path):
    """A torch row keeps only the names its covered extension rows leave undefined: it answers for those, never for
    another wheel (whose names it may lack), and never under another torch's sha256."""
    tsha, covered, other = (hashlib.sha256(s).hexdigest() for s in (b"torch", b"covered", b"other"))
    path = tmp_path / "wheel-summaries.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"torch-{tsha}.json", json.dumps({
            "format": shipped.FORMAT, "sha256": tsha, "filename": "torch.whl", "command": "",
            "summary_version": SUMMARY_VERSION, "exports": ["_ZN3c104warnEv"], "covers": [covered]}))
        zf.writestr(f"torch-{other}.json", json.dumps({
            "format": shipped.FORMAT, "sha256": tsha, "filename": "torch.whl", "command": "",
            "summary_version": SUMMARY_VERSION, "exports": [], "covers": [covered]}))
    fresh.setattr(shipped, "PATH", path)
    assert shipped.torch_exports(tsha, covered) == frozenset({"_ZN3c104warnEv"})
    assert shipped.torch_exports(tsha, other) is None
    assert shipped.torch_exports(other, covered) is None  # a row filed under another torch's sha256


def test_the_shipped_torch_rows_cover_their_extensions_undefined_names(fresh):
    """Each shipped torch row is cut with every undefined name of the extension rows it covers: a covered extension's
    names that torch exports are all in it (so its comparison answers as against the whole export list)."""
    with zipfile.ZipFile(shipped.PATH) as zf:
        rows = {n: json.loads(zf.read(n)) for n in zf.namelist()}
    torches = [d for n, d in rows.items() if n.startswith("torch-")]
    assert torches
    for t in torches:
        exports = set(t["exports"])
        assert exports <= {s for sha in t["covers"] for m in rows[f"{sha}.json"]["ext"].values() for s in m["undefined"]}
        assert all(f"{sha}.json" in rows for sha in t["covers"])
