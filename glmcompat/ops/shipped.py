"""Shipped evidence (issue 39): what the judge reads of the compiled wheels everyone locks, shipped, by sha256.

The judge of a lock reads the bytes of each compiled wheel the matrix says nothing of (:func:`glmcompat.ops.artifacts.
summaries`: the extension tables of its own code and the NumPy C API its modules import), and on an empty cache that
reading (HTTP range requests, ~70 wheels of a serving project) is most of a cold ``glmcompat lock`` or of a fresh
clone's. What it derives is a pure function of the wheel's bytes, so of its sha256: ``evidence/wheel-summaries.zip``
holds it for the wheels of the curated stacks' locks, one member ``<sha256>.json`` a wheel (its file name, the
command that derives it again, and the summary), written by ``scripts/record_wheel_summaries.py`` from the index's
bytes with the judge's own reader. Only wheels read whole (nothing left beyond the byte budget) are shipped.

A wheel whose sha256 is not in it is read as before. The file is opened only when a summary is asked for (a lock with
compiled wheels) and only the members asked for are inflated: a lookup reads the zip's central directory once
(a few ms) and one small member. ``GLMCOMPAT_NO_SHIPPED=1`` turns it off (everything is read from the index)."""

from __future__ import annotations

import json
import os
import threading
import zipfile
from pathlib import Path
from typing import Any

from glmcompat.ops.wheelrecords import ExtSummary

PATH = Path(__file__).parent / "evidence" / "wheel-summaries.zip"
FORMAT = 1  # the rows' form: {"sha256", "filename", "command", "ext_version", "numpy_version", "ext", "npabi"};
# a torch wheel's (member ``torch-<sha256>.json``): {"sha256", "filename", "command", "summary_version", "exports",
# "covers"}
OFF_ENV = "GLMCOMPAT_NO_SHIPPED"

_lock = threading.Lock()
_zip: zipfile.ZipFile | None = None
_names: frozenset[str] | None = None


def _open() -> tuple[zipfile.ZipFile | None, frozenset[str]]:
    global _zip, _names
    with _lock:
        if _names is None:
            try:
                _zip = zipfile.ZipFile(PATH)
                _names = frozenset(_zip.namelist())
            except (OSError, zipfile.BadZipFile):
                _zip, _names = None, frozenset()
        return _zip, _names


def _member(member: str) -> dict[str, Any] | None:
    zf, names = _open()
    if zf is None or member not in names:
        return None
    with _lock:
        data = zf.read(member)
    d = json.loads(data)
    return d if isinstance(d, dict) and d.get("format") == FORMAT else None


def row(sha256: str, numpy_version: int) -> dict[str, Any] | None:
    """The shipped row of the wheel of this sha256, or None (not shipped, shipping off, or a row whose own sha256,
    form or reader versions -- the extension summary's, and ``numpy_version``: the caller's NumPy scan's,
    :data:`glmcompat.ops.artifacts.NUMPY_VERSION` -- are not this one's: never used for another wheel or by another
    reader)."""
    from glmcompat.ops.wheelprobe import EXT_SUMMARY_VERSION  # lazy: read at call time, as the judge's own

    sha = sha256.lower()
    if not sha or os.environ.get(OFF_ENV):
        return None
    d = _member(f"{sha}.json")
    if not (d is not None and d.get("sha256") == sha and d.get("ext_version") == EXT_SUMMARY_VERSION and d.get("numpy_version") == numpy_version):
        return None
    return d


def summary(sha256: str, numpy: bool, numpy_version: int) -> tuple[ExtSummary, dict[str, int]] | None:
    """What :func:`glmcompat.ops.artifacts.summaries` answers for the wheel of this sha256 (its own code's extension
    summary and, with ``numpy``, its modules' NumPy C API), from the shipped row; None where none is shipped."""
    d = row(sha256, numpy_version)
    if d is None:
        return None
    ext = ExtSummary.from_json(d["ext"])
    np = {str(k): int(v) for k, v in d["npabi"].items()} if numpy and ext.modules else {}
    return ext, np


_torch: dict[str, tuple[frozenset[str], frozenset[str]] | None] = {}


def torch_exports(torch_sha256: str, ext_sha256: str) -> frozenset[str] | None:
    """The names the torch wheel of ``torch_sha256`` exports, as far as the extension wheel of ``ext_sha256`` asks:
    a shipped torch row keeps only the exported names that some shipped extension row leaves undefined, and names
    the extension rows it ``covers`` (every one whose undefined names it was cut with). The judge tests only whether
    an extension's undefined names are exported (:func:`glmcompat.ops.wheelrecords.compare_abi`), so for a covered
    extension the cut set answers as the whole one; for any other wheel (None) torch is read as before."""
    from glmcompat.ops.wheelprobe import SUMMARY_VERSION  # lazy: read at call time, as the judge's own

    tsha, esha = torch_sha256.lower(), ext_sha256.lower()
    if not tsha or not esha or os.environ.get(OFF_ENV):
        return None
    if tsha not in _torch:
        d = _member(f"torch-{tsha}.json")
        ok = d is not None and d.get("sha256") == tsha and d.get("summary_version") == SUMMARY_VERSION
        _torch[tsha] = (frozenset(d["exports"]), frozenset(d["covers"])) if ok and d is not None else None
    got = _torch[tsha]
    return got[0] if got is not None and esha in got[1] else None
