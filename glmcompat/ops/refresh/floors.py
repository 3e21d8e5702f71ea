"""An engine's floors: the minimum versions it asserts at start-up beyond its METADATA (sglang refuses to start with
an older flashinfer or sgl-kernel), read from the member of its wheel that asserts them, and whether the matrix's
``[[requires]]`` rows already say them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.readers.wheelzip import RemoteZip

if TYPE_CHECKING:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient, IndexFile
    from glmcompat.matrix.rows import Requires

# An engine's floors: the minimum versions it asserts at start-up, beyond its METADATA (sglang refuses to start
# with an older flashinfer or sgl-kernel); the member of its wheel that asserts them.
ENGINE_FLOORS = {"sglang": "sglang/srt/entrypoints/engine.py"}
FLOORS_VERSION = 1  # the cache entry of what an engine file asserts
_ASSERT_PKG = re.compile(r"""assert_pkg_version\(\s*["']([A-Za-z0-9_.\-]+)["']\s*,\s*["']([^"']+)["']""")
_IF_LINE = re.compile(r"^(\s*)(?:if|elif)\s+(.*?):?\s*$")


def engine_floors(text: str) -> list[tuple[str, str, str, str]]:
    """(distribution, minimum version, condition, the name as written) of every ``assert_pkg_version("name", "version", ...)`` call of an
    engine's source (pure). The condition is the ``if`` the call sits in, as the engine writes it (``""``: none);
    a call whose version is not a literal is left out."""
    lines = text.splitlines()
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln) + 1)
    out = []
    for m in _ASSERT_PKG.finditer(text):
        try:
            version = str(Version(m.group(2)))
        except InvalidVersion:
            continue
        row = max(i for i, st in enumerate(starts) if st <= m.start())
        indent = len(lines[row]) - len(lines[row].lstrip())
        cond = ""
        closing = None  # the indent of a ``):`` that ends a condition over several lines
        for j in range(row - 1, -1, -1):
            ifm = _IF_LINE.match(lines[j])
            at = len(lines[j]) - len(lines[j].lstrip())
            if closing is None and lines[j].strip().startswith(")") and at < indent:
                closing = at
                continue
            if closing is not None and (at != closing or not ifm):
                continue
            if lines[j].strip() and at < indent:
                if ifm and "SKIP" not in ifm.group(2):
                    cond = ifm.group(2).rstrip(":").strip()
                    if cond == "(":  # a condition over several lines: its first operand
                        cond = lines[j + 1].strip()
                break
        out.append((str(canonicalize_name(m.group(1))), version, cond, m.group(1)))
    return out



def read_floors(index: IndexClient, cache: Cache | None, wheel: IndexFile,
                member: str) -> list[tuple[str, str, str, str]] | None:
    """:func:`engine_floors` of ``member`` of ``wheel``, read by range requests (its central directory and that
    member); None when the wheel has no such member. What the member asserts is kept by the wheel's sha256 like the
    probes' results (a re-run reads nothing). InputError when the wheel cannot be read."""
    key = f"floors-v{FLOORS_VERSION}-{wheel.sha256}" if wheel.sha256 else None
    hit = cache.get_json(key) if key and cache is not None else None
    if isinstance(hit, dict) and isinstance(hit.get("floors"), list):
        if hit.get("absent"):
            return None
        return [(str(d), str(v), str(c), str(wr)) for d, v, c, wr in hit["floors"]]
    zf = RemoteZip(HttpRangeReader(index.client, wheel.url, name=wheel.filename, size=wheel.size))
    names = {m.name: m for m in zf.members}
    text = zf.read(names[member]).decode("utf-8", "replace") if member in names else None
    floors = engine_floors(text) if text is not None else []
    if key and cache is not None:
        cache.put_json(key, {"floors": [list(f) for f in floors], "absent": text is None})
    return floors if text is not None else None

def floor_note(condition: str) -> str:
    """A floor's condition said short (``(attention backend flashinfer)``, ``(on CUDA)``), else as written."""
    if "flashinfer" in condition:
        return " (attention backend flashinfer)"
    if condition in ("_is_cuda", "is_cuda()"):
        return " (on CUDA)"
    return f" (when `{condition}`)" if condition else ""


def floor_recorded(row: Requires, rows: Sequence[Requires]) -> bool:
    """Whether a ``[[requires]]`` row covering the release already says the floor ``row`` proves (the rows hold
    together: a lower floor recorded for a range of releases, such as sglang>=0.5.9's flashinfer-python>=0.6.3,
    does not say it)."""
    version = str(row.versions).removeprefix("==")
    want = Requirement(row.requires)
    return any(canonicalize_name(r.package) == canonicalize_name(row.package)
               and canonicalize_name(Requirement(r.requires).name) == canonicalize_name(want.name)
               and Requirement(r.requires).specifier == want.specifier
               and SpecifierSet(r.versions).contains(version, prereleases=True) for r in rows)
