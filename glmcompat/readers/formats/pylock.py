"""pylock.toml (PEP 751), read and validated by :mod:`packaging.pylock`.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glmcompat.model.errors import LockFormatError
from glmcompat.readers.formats.common import Format, Entry, Lock, LockMeta, line_of, package_entries, requires_python_of, toml

if TYPE_CHECKING:
    from packaging.pylock import Package, Pylock


def parse_pylock(path: Path, text: str) -> Lock:
    """A pylock.toml (PEP 751), read and validated by :mod:`packaging.pylock`.

    glmcompat's own checks come first, as for uv.lock, because they name the line: the lock-version
    (1.x), each package's name, version and marker (every marker clause evaluated: a 5000-digit version
    fails here) and ``requires-python``. Then :meth:`packaging.pylock.Pylock.from_dict` checks the rest of
    the standard (``created-by``, normalized names, a wheel, sdist or exactly one direct source per
    package, hashes, wheel and sdist file names that agree with the name and version); its error is one
    :class:`LockFormatError` naming the package and, where the file has ``[[packages]]`` headers, the
    line. Entries keep the version and marker text as written (the local label, the quoting); the source
    kind comes from the validated package (``vcs``: git, ``directory``: directory or editable,
    ``archive``: wheel, url or path; wheels or an sdist: registry). A lock-version above 1.0 is read as
    1.0 (what glmcompat reads has not changed since) with a note.
    """
    doc = toml(path, text)
    lv = doc.get("lock-version")
    if not isinstance(lv, str) or not lv.startswith("1."):
        raise LockFormatError(f"pylock lock-version {lv!r} is not supported (known: 1.x)", path=str(path),
                              line=line_of(text, "lock-version"))
    checked = package_entries(path, text, doc, "packages", lambda p: p.get("marker"))
    rp = requires_python_of(path, text, doc)
    pylock = _pylock(path, text, doc)
    versioned = [p for p in pylock.packages if p.version is not None]
    entries = [Entry(p.name, e.version, e.marker, _pylock_source(p)) for e, p in zip(checked, versioned, strict=True)]
    meta = LockMeta()
    if pylock.lock_version.release[:2] != (1, 0):  # 1.0.0 is 1.0
        meta["notes"] = [f"pylock lock-version {lv} is newer than the 1.0 glmcompat knows: read as 1.0"]
    return Lock(str(path), "pylock.toml", tuple(entries), rp, (), meta)


def _pylock(path: Path, text: str, doc: dict[str, Any]) -> Pylock:
    """``packaging.pylock.Pylock.from_dict(doc)``, its validation error as one :class:`LockFormatError`."""
    from packaging.pylock import Pylock, PylockValidationError  # lazy: only pylock files need it (~7 ms)

    log = logging.getLogger("packaging.pylock")  # it logs a newer minor lock-version; parse_pylock notes it
    disabled, log.disabled = log.disabled, True
    try:
        return Pylock.from_dict(doc)
    except PylockValidationError as e:
        context = e.context or ""
        m = re.match(r"packages\[(\d+)\](?:\.([A-Za-z0-9_-]+))?", context)
        pkgs = doc.get("packages")
        pkg = pkgs[int(m.group(1))] if m and isinstance(pkgs, list) and int(m.group(1)) < len(pkgs) else None
        name = pkg.get("name") if isinstance(pkg, dict) else None
        what = f"package {name!r}: " if isinstance(name, str) else ""
        line = _pylock_line(text, int(m.group(1)), m.group(2)) if m else _key_line(text, context, 0, len(text))
        raise LockFormatError(f"not a valid pylock.toml (PEP 751): {what}{e}"[:300], path=str(path),
                              line=line) from None
    finally:
        log.disabled = disabled


def _key_line(text: str, key: str, start: int, end: int) -> int | None:
    """The line of ``key = ...`` at the start of a line between offsets ``start`` and ``end``, or None."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", key):
        return None
    m = re.compile(rf"^[ \t]*{re.escape(key)}[ \t]*=", re.M).search(text, start, end)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _pylock_line(text: str, index: int, key: str | None) -> int | None:
    """The line of package ``index``'s ``key`` (else of its ``[[packages]]`` header); None when the
    packages are not written as ``[[packages]]`` tables."""
    heads = [m.start() for m in re.finditer(r"^[ \t]*\[\[[ \t]*packages[ \t]*\]\]", text, re.M)]
    if index >= len(heads):
        return None
    end = heads[index + 1] if index + 1 < len(heads) else len(text)
    at = _key_line(text, key, heads[index], end) if key else None
    return at or text.count("\n", 0, heads[index]) + 1


def _pylock_source(package: Package) -> str:
    """The :class:`Entry` source kind of a validated :class:`packaging.pylock.Package`."""
    if package.vcs is not None:
        return "git"
    if package.directory is not None:
        return "editable" if package.directory.editable else "directory"
    if package.archive is not None:
        where = package.archive.url or package.archive.path or ""
        if where.split("?")[0].split("#")[0].endswith(".whl"):
            return "wheel"
        return "url" if package.archive.url else "path"
    return "registry"


FORMAT = Format("pylock.toml", parse_pylock, names=(r"pylock\.toml", r"pylock\..*\.toml"),
                signs=((r"^lock-version\s*=", r"^\[\[packages\]\]"),), beside=1)
