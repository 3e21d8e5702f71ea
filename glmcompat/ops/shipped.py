"""Shipped evidence (issue 39): what the judge reads of the compiled wheels everyone locks, shipped, by sha256.

The judge of a lock reads the bytes of each compiled wheel the matrix says nothing of (:func:`glmcompat.ops.artifacts.
summaries`: the extension tables of its own code and the NumPy C API its modules import), and on an empty cache that
reading (HTTP range requests, ~70 wheels of a serving project) is most of a cold ``glmcompat lock`` or of a fresh
clone's. What it derives is a pure function of the wheel's bytes, so of its sha256: ``evidence/wheel-summaries.zip``
holds it for the wheels of the curated stacks (the matrix's ``[[stack]]`` rows, locked universally for CPython 3.10 to
3.13 on Linux x86_64 and aarch64: ``covered.json`` in it names them and every wheel), each row with its file name, the
command that derives it again and what the judge reads of its summary (:func:`glmcompat.ops.artifacts.judged_part`),
written by ``scripts/record_wheel_summaries.py`` from the index's bytes with the judge's own reader. Only wheels read
whole (nothing left beyond the byte budget) are shipped.

The rows of one release (all its wheels: Pythons, machines) are one LZMA member, ``<name>-<version>``, one line
``<sha256>\t<row>`` a wheel (they share most of their names, so the file is small); ``index.json`` maps each sha256
to its member. A wheel whose sha256 is not there is read as before. The file is opened only when a summary is asked
for (a lock with compiled wheels): the index is read once, and only the members asked for are inflated, each once.
``GLMCOMPAT_NO_SHIPPED=1`` turns it off (everything is read from the index)."""

from __future__ import annotations

import json
import os
import re
import threading
import zipfile
from pathlib import Path
from typing import Any

from glmcompat.ops.wheelrecords import ExtSummary

PATH = Path(__file__).parent / "evidence" / "wheel-summaries.zip"
FORMAT = 2  # the rows' form: {"sha256", "filename", "command", "ext_version", "numpy_version", "ext", "npabi"}
# (``ext``: what the judge reads of the summary, :func:`glmcompat.ops.artifacts.judged_part`); a torch wheel's:
# {"sha256", "filename", "command", "summary_version", "exports", "covers"}
OFF_ENV = "GLMCOMPAT_NO_SHIPPED"
INDEX = "index.json"  # {sha256: the member holding its row}
COVERED = "covered.json"  # the stacks, Pythons and machines recorded, and every wheel their locks gave (read or not)

_lock = threading.Lock()
_zip: zipfile.ZipFile | None = None
_names: dict[str, str] | None = None  # the index: {sha256: member}
# a member's rows, split: {sha256: its row's JSON}, each replaced by its row once parsed (the read-ahead of a new lock
# parses every row of a release uv selects, the judge asks for a wheel's twice: probe_lock's own thread, summaries)
_groups: dict[str, dict[str, Any]] = {}


def _parsed(group: dict[str, Any], sha: str) -> Any:
    """The row filed under ``sha`` in ``group`` (a member's rows), parsed once; None where there is none. Raises
    ValueError for a row that is not JSON."""
    data = group.get(sha)
    if isinstance(data, bytes):
        data = group[sha] = json.loads(data)
    return data


def _open() -> tuple[zipfile.ZipFile | None, dict[str, str]]:
    global _zip, _names
    with _lock:
        if _names is None:
            try:
                _zip = zipfile.ZipFile(PATH)
                got = json.loads(_zip.read(INDEX))
                _names = {str(k): str(v) for k, v in got.items()} if isinstance(got, dict) else {}
            except (OSError, KeyError, ValueError, zipfile.BadZipFile):
                _zip, _names = None, {}
        return _zip, _names


def _member(sha: str) -> dict[str, Any] | None:
    """The row filed under ``sha`` (its member inflated once: one line ``<sha256>\t<row>`` a wheel), or None."""
    zf, names = _open()
    member = names.get(sha)
    if zf is None or member is None:
        return None
    with _lock:
        if member not in _groups:
            _groups[member] = {line[:64].decode(): line[65:] for line in zf.read(member).split(b"\n") if line}
        d = _parsed(_groups[member], sha)
    return d if isinstance(d, dict) and d.get("format") == FORMAT else None


_releases: frozenset[str] | None = None  # the members (``<name>-<version>`` of the wheels' file names)


def covers(wheel: str, python: str, machine: str) -> bool:
    """Whether rows are shipped for the release of the wheel file name ``wheel`` (any one file of it: uv's log names
    one), one of them of a wheel an installer of CPython ``python`` on ``machine`` takes: the judge of a lock holding
    that release most likely reads nothing of it (the lock's own pick is usually that very wheel; where it is not,
    it is read as before). Only the read-ahead of a new lock asks (:mod:`glmcompat.ops.lockprefetch`); never fails."""
    global _releases
    from glmcompat.model.wheeltags import supported_set, wheel_file_tags  # lazy: packaging's tags, only when asked

    parts = wheel.split("-")
    if len(parts) < 5 or not wheel.endswith(".whl") or os.environ.get(OFF_ENV):
        return False
    member = f"{parts[0].lower()}-{parts[1]}"
    zf, names = _open()
    with _lock:
        if _releases is None:
            _releases = frozenset(names.values())
    if zf is None or member not in _releases:
        return False
    with _lock:
        if member not in _groups:
            try:
                _groups[member] = {line[:64].decode(): line[65:] for line in zf.read(member).split(b"\n") if line}
            except (OSError, KeyError, ValueError, zipfile.BadZipFile):
                return False
        group = list(_groups[member].values())
    fits = supported_set(python, machine)
    for data in group:
        try:
            got = wheel_file_tags(_filename(data))
        except (ValueError, AttributeError):
            continue
        if got is not None and any(t in fits for t in got[0]):
            return True
    return False


_FILENAME = re.compile(rb'"filename":"([^"\\]*)"')


def _filename(data: Any) -> str:
    """The file name of a row (its JSON, or the row parsed already), read without parsing the rest of its JSON: the
    rows are written compact with their keys sorted, ``"filename":"NAME"`` once, beside the extension summary (whose
    keys are member names and field names, its values lists and tables); a name with an escape is read parsed. The
    read-ahead of a new lock asks of every row of each release uv selects (each of its Pythons and machines), and
    parsing their summaries only to read their names was most of its cost."""
    if isinstance(data, bytes):
        m = _FILENAME.search(data)
        if m is not None:
            return m.group(1).decode("utf-8")
        data = json.loads(data)
    return str(data.get("filename", ""))


def row(sha256: str, numpy_version: int) -> dict[str, Any] | None:
    """The shipped row of the wheel of this sha256, or None (not shipped, shipping off, or a row whose own sha256,
    form or reader versions -- the extension summary's, and ``numpy_version``: the caller's NumPy scan's,
    :data:`glmcompat.ops.artifacts.NUMPY_VERSION` -- are not this one's: never used for another wheel or by another
    reader)."""
    from glmcompat.ops.wheelprobe import EXT_SUMMARY_VERSION  # lazy: read at call time, as the judge's own

    sha = sha256.lower()
    if not sha or os.environ.get(OFF_ENV):
        return None
    d = _member(sha)
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
        d = _member(tsha)
        ok = d is not None and d.get("sha256") == tsha and d.get("summary_version") == SUMMARY_VERSION and "exports" in d
        _torch[tsha] = (frozenset(d["exports"]), frozenset(d["covers"])) if ok and d is not None else None
    got = _torch[tsha]
    return got[0] if got is not None and esha in got[1] else None


def rows(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every row of the file (default :data:`PATH`), by sha256: what the recording script verifies and the tests read."""
    with zipfile.ZipFile(path or PATH) as zf:
        index = json.loads(zf.read(INDEX))
        out: dict[str, dict[str, Any]] = {}
        for member in sorted(set(index.values())):
            for line in zf.read(member).split(b"\n"):
                if line:
                    out[line[:64].decode()] = json.loads(line[65:])
        return out
