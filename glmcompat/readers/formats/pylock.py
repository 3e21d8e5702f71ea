"""pylock.toml (PEP 751), read and validated by :mod:`packaging.pylock`.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glmcompat.model.errors import LockFormatError
from glmcompat.readers.formats.common import (Format, Entry, Lock, LockMeta, compiled_wheels, line_of, package_entries,
                                              requires_python_of, toml, wheels_only)

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
    1.0 (what glmcompat reads has not changed since) with a note. PEP 825 variant wheels and their
    ``[packages.variants-json]`` are read and checked first (:func:`_without_variants`): ``meta["variants"]`` names
    each package's variant labels with their properties, and a note says what the lock offers.
    """
    doc = toml(path, text)
    lv = doc.get("lock-version")
    if not isinstance(lv, str) or not lv.startswith("1."):
        raise LockFormatError(f"pylock lock-version {lv!r} is not supported (known: 1.x)", path=str(path),
                              line=line_of(text, "lock-version"))
    checked = package_entries(path, text, doc, "packages", lambda p: p.get("marker"))
    rp = requires_python_of(path, text, doc)
    plain, variants = _without_variants(path, text, doc)
    pylock = _pylock(path, text, plain)
    versioned = [p for p in pylock.packages if p.version is not None]
    entries = [Entry(p.name, e.version, e.marker, _pylock_source(p)) for e, p in zip(checked, versioned, strict=True)]
    meta = LockMeta()
    notes = []
    if pylock.lock_version.release[:2] != (1, 0):  # 1.0.0 is 1.0
        notes.append(f"pylock lock-version {lv} is newer than the 1.0 glmcompat knows: read as 1.0")
    if variants:
        meta["variants"] = {k: v for k, (v, _) in sorted(variants.items())}
        notes.extend(n for _, (_, n) in sorted(variants.items()))
    if notes:
        meta["notes"] = notes
    compiled = {f"{e.name}=={e.version}": got for e, p in zip(entries, versioned, strict=True)
                if e.source == "registry" and (got := compiled_wheels(
                    [(w.url or w.path or w.name or "", w.hashes.get("sha256", "")) for w in p.wheels or ()]))}
    if compiled:
        meta["lock_wheels"] = dict(sorted(compiled.items()))
    only = {f"{e.name}=={e.version}": names for e, p in zip(entries, versioned, strict=True)
            if e.source == "registry" and p.sdist is None
            and (names := wheels_only([w.name or (w.url or str(w.path or "")) for w in p.wheels or ()])) is not None}
    if only:
        meta["wheels_only"] = dict(sorted(only.items()))
    return Lock(str(path), "pylock.toml", tuple(entries), rp, (), meta)


# PEP 825 (wheel variants): a variant label, and a namespace, feature and value of a variant property
_LABEL = re.compile(r"[0-9a-z_.]{1,16}")
_NAME = re.compile(r"[a-z0-9_]+")
_VALUE = re.compile(r"[a-z0-9_.]+")


def _without_variants(path: Path, text: str, doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """PEP 825 variant wheels read out of the lock: (the document without them, as :mod:`packaging.pylock` knows
    it, and package name -> (its variants' lines, one note)).

    A variant wheel's file name has one more component, its variant label (``torch-2.9.1-cp312-cp312-
    manylinux_2_28_x86_64-cu128.whl``; ``null``: the variant with no properties); ``[packages.variants-json]``
    either inlines the index's ``{name}-{version}-variants.json`` (``$schema``, ``default-priorities``, ``variants``:
    label -> namespace -> feature -> values) or points at it (``url``/``path``, ``hashes``). The labels and the
    properties are checked against PEP 825's grammar, and every labelled wheel against the inlined table; the
    label is taken off each wheel's name so that the rest is validated as any pylock. The package is judged by its
    name and version like any other; the note says which variants the lock offers (an installer picks one for the
    machine's properties, which glmcompat does not read)."""
    pkgs = doc.get("packages")
    if not isinstance(pkgs, list):
        return doc, {}
    out_pkgs: list[Any] = []
    found: dict[str, Any] = {}
    for i, p in enumerate(pkgs):
        if not isinstance(p, dict):
            out_pkgs.append(p)
            continue
        name = p.get("name")
        vj = p.get("variants-json")
        labels: dict[str, str] = {}  # label -> the first wheel file that carries it
        wheels = p.get("wheels")
        new_wheels: Any = wheels
        if isinstance(wheels, list):
            new_wheels = []
            for w in wheels:
                if isinstance(w, dict):
                    w, label, file = _unlabelled(w)
                    if label is not None:
                        labels.setdefault(label, file)
                new_wheels.append(w)
        if vj is None and not labels:
            out_pkgs.append(p)
            continue
        line = _variants_line(text, i) if vj is not None else _pylock_line(text, i, "wheels")
        what = f"package {name!r}"
        table = _variants_table(path, vj, line, what) if vj is not None else None
        if table is not None:
            gone = sorted(lb for lb in labels if lb not in table)
            if gone:
                raise LockFormatError(f"{what}: wheel {labels[gone[0]]} has the variant label {gone[0]!r}, which its "
                                      f"[packages.variants-json] does not list (PEP 825)", path=str(path), line=line)
        shown = sorted(labels) or sorted(table or {})
        lines = [f"{lb}: " + (", ".join(f"{ns} :: {ft} :: {v}" for ns, fs in sorted((table or {}).get(lb, {}).items())
                                         for ft, vs in sorted(fs.items()) for v in vs) or
                              ("no properties (the null variant)" if table is not None else "properties not inlined"))
                 for lb in shown]
        where = "" if table is not None else " (its variants.json not inlined: " + (
            "none locked)" if vj is None else "locked by reference)")
        note = (f"{name} {p.get('version')}: PEP 825 variant wheels {', '.join(shown)}{where}; judged as {name} "
                f"{p.get('version')}, whichever variant an installer picks")
        found[str(name)] = (lines, note)
        q = {k: v for k, v in p.items() if k != "variants-json"}
        q["wheels"] = new_wheels
        out_pkgs.append(q)
    if not found:
        return doc, {}
    return {**doc, "packages": out_pkgs}, found


def _variants_line(text: str, index: int) -> int | None:
    """The line of package ``index``'s ``[packages.variants-json]`` header (else its ``variants-json =`` key, else
    its ``[[packages]]`` header)."""
    heads = [m.start() for m in re.finditer(r"^[ \t]*\[\[[ \t]*packages[ \t]*\]\]", text, re.M)]
    if index < len(heads):
        end = heads[index + 1] if index + 1 < len(heads) else len(text)
        m = re.compile(r"^[ \t]*\[[ \t]*packages[ \t]*\.[ \t]*variants-json[ \t]*\]", re.M).search(text, heads[index], end)
        if m:
            return text.count("\n", 0, m.start()) + 1
    return _pylock_line(text, index, "variants-json")


def _unlabelled(w: dict[str, Any]) -> tuple[dict[str, Any], str | None, str]:
    """A wheel entry with its PEP 825 variant label taken off its file name: (entry, label or None, file name)."""
    where = w.get("name") or w.get("url") or w.get("path")
    if not isinstance(where, str):
        return w, None, ""
    file = where.split("?")[0].split("#")[0].rsplit("/", 1)[-1]
    if not file.endswith(".whl"):
        return w, None, file
    parts = file[:-4].split("-")
    # name-version(-build)?-python-abi-platform(-label)?: a build tag starts with a digit, a python tag never does
    if not (len(parts) == 7 or (len(parts) == 6 and not parts[2][:1].isdigit())) or not _LABEL.fullmatch(parts[-1]):
        return w, None, file
    label = parts[-1]
    plain = "-".join(parts[:-1]) + ".whl"
    q = dict(w)
    for key in ("name", "url", "path"):
        v = q.get(key)
        if isinstance(v, str) and file in v:
            q[key] = v.replace(file, plain)
    return q, label, file


def _variants_table(path: Path, vj: Any, line: int | None, what: str) -> dict[str, dict[str, dict[str, list[str]]]] | None:
    """``[packages.variants-json]`` checked: its inlined ``variants`` (label -> namespace -> feature -> values), or
    None where it locks the file by reference (``url``/``path``)."""
    def bad(msg: str) -> LockFormatError:
        return LockFormatError(f"{what}: [packages.variants-json] {msg} (PEP 825)", path=str(path), line=line)

    if not isinstance(vj, dict):
        raise bad(f"must be a table, not {type(vj).__name__}")
    if "variants" not in vj:
        if not any(isinstance(vj.get(k), str) for k in ("url", "path")):
            raise bad("has neither the inlined 'variants' table nor a 'url' or 'path' of the variants.json")
        return None
    if "$schema" in vj and not isinstance(vj["$schema"], str):
        raise bad("'$schema' must be a string")
    variants = vj["variants"]
    if not isinstance(variants, dict):
        raise bad("'variants' must be a table of variant labels")
    out: dict[str, dict[str, dict[str, list[str]]]] = {}
    for label, nss in variants.items():
        if not _LABEL.fullmatch(label):
            raise bad(f"variant label {label!r} is not 1-16 of 0-9 a-z _ .")
        if not isinstance(nss, dict):
            raise bad(f"variant {label!r} must be a table of namespaces")
        out[label] = {}
        for ns, feats in nss.items():
            if not _NAME.fullmatch(ns) or not isinstance(feats, dict):
                raise bad(f"variant {label!r}: namespace {ns!r} must be of a-z 0-9 _ and hold a table of features")
            out[label][ns] = {}
            for ft, vals in feats.items():
                if not _NAME.fullmatch(ft) or not isinstance(vals, list) or not vals \
                        or not all(isinstance(v, str) and _VALUE.fullmatch(v) for v in vals):
                    raise bad(f"variant {label!r}: {ns} :: {ft} must be a non-empty list of values of a-z 0-9 _ .")
                out[label][ns][ft] = list(vals)
    if "null" in out and out["null"]:
        raise bad("the 'null' variant has properties (it must have none)")
    return out


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
