"""Pipfile.lock (pipenv): the ``default`` and ``develop`` sections of the JSON document.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from glmcompat.readers.formats.common import (
    Format, VALID_NAME, Entry, Lock, checked_spec, count_lines, direct_reference, error, line_of, local_kind, marker_of, merge_groups,
    pin_or_spec, url_kind,
)

KNOWN_PIPFILE_SPECS = (6,)


def _json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"invalid JSON: {e.msg}", path, e.lineno) from None
    except RecursionError:
        raise error("invalid JSON: nested too deeply", path) from None


def _pipfile_entry(path: Path, name: str, info: dict[str, Any], line: int | None) -> Entry:
    """One package of a Pipfile.lock section: ``"version": "==X"`` pins, a ``file`` wheel's version comes
    from its file name, ``git``/``path``/``file``/``editable`` give the source kind."""
    what = f"package {name!r}"
    source, version, spec = "registry", None, None
    for key in ("git", "path", "file"):
        if isinstance(info.get(key), str):
            source = {"git": "git", "path": local_kind(info[key]), "file": url_kind(info[key])}[key]
            if source == "wheel":
                source, _, version = direct_reference(path, line, canonicalize_name(name.strip()), info[key])
            break
    if info.get("editable") is True:
        source = "editable"
    raw = info.get("version")
    if raw is not None:
        if not isinstance(raw, str):
            raise error(f"{what}: invalid version {raw!r}", path, line)
        try:
            version, spec = pin_or_spec(SpecifierSet("" if raw == "*" else raw))
        except ValueError:
            raise error(f"{what}: invalid version {raw!r}", path, line) from None
    elif source == "registry":
        spec = ""
    return Entry(canonicalize_name(name.strip()), version, marker_of(info.get("markers"), path, line, what), source, spec, line=line)


def _pipfile_python(meta: dict[str, Any]) -> str | None:
    req = meta.get("requires", {})
    if not isinstance(req, dict):
        return None
    full, minor = req.get("python_full_version"), req.get("python_version")
    for value, fmt in ((full, "=={}"), (minor, "=={}.*")):
        if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)*", value):
            try:
                return str(checked_spec(SpecifierSet(fmt.format(value))))
            except ValueError:
                return None
    return None


def parse_pipfile_lock(path: Path, text: str) -> Lock:
    """A Pipfile.lock (kind ``Pipfile.lock``, pipfile-spec 6): the ``default`` then ``develop`` packages.
    ``"==X"`` gives ``version=X``; ``git``/``path``/``file`` keys the source kind. ``meta["groups"]``:
    name -> the sections it is in; ``requires_python`` from ``_meta.requires``."""
    doc = _json(path, text)
    meta = doc.get("_meta") if isinstance(doc, dict) else None
    if not isinstance(meta, dict):
        raise error("not a Pipfile.lock: no '_meta' object", path, 1)
    spec = meta.get("pipfile-spec")
    if type(spec) is not int or spec not in KNOWN_PIPFILE_SPECS:
        raise error(f"_meta.pipfile-spec {spec!r} is not supported (known: "
                     f"{', '.join(map(str, KNOWN_PIPFILE_SPECS))})", path, line_of(text, '"pipfile-spec"'))
    entries: list[Entry] = []
    groups: dict[str, list[str]] = {}
    for section in ("default", "develop"):
        pkgs = doc.get(section, {})
        start = text.find(f'"{section}"')
        if not isinstance(pkgs, dict):
            raise error(f"{section!r} must be an object", path, count_lines(text, max(start, 0)))
        for name, info in pkgs.items():
            at = text.find(f'"{name}"', max(start, 0))
            line = count_lines(text, at) if at >= 0 else None
            if not VALID_NAME.match(name) or not isinstance(info, dict):
                raise error(f"{section}: invalid package {name!r}", path, line)
            entries.append(_pipfile_entry(path, name, info, line))
            merge_groups(groups, canonicalize_name(name.strip()), [section])
    return Lock(str(path), "Pipfile.lock", tuple(entries), _pipfile_python(meta), (), {"groups": groups})


# --- conda environment files ------------------------------------------------------------------------------------


FORMAT = Format("Pipfile.lock", parse_pipfile_lock, names=(r"pipfile\.lock",), signs=((r'"_meta"\s*:',),), json=True, beside=4)
