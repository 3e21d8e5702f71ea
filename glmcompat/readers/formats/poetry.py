"""poetry.lock: its packages (with their source and markers), groups, extras and optional packages.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from glmcompat.model.environments import Environment, flat_environments, merge
from glmcompat.model.names import canonicalize
from glmcompat.readers.formats.common import (
    Format, Entry, Lock, LockMeta, check_lock_version, compiled_wheels, wheels_only, sha256_of, checked_spec, error, flat_sets, line_of, marker_of, merge_groups, metadata_table,
    name_version, package_tables, str_list, toml_lock_doc,
)

KNOWN_POETRY_LOCK_VERSIONS = ("1", "2")  # lock-version majors ("1.1", "2.1", ...)

_POETRY_SOURCES = {"git": "git", "directory": "directory", "legacy": "registry"}


def _poetry_source(path: Path, p: dict[str, Any], line: int | None) -> str:
    """Map a poetry ``[package.source]`` to an :class:`Entry` source kind (``develop = true``: editable)."""
    src = p.get("source")
    if src is None:
        return "registry"
    kind = src.get("type") if isinstance(src, dict) else None
    url = src.get("url", "") if isinstance(src, dict) else ""
    if kind in ("file", "url") and isinstance(url, str):
        if url.lower().split("?")[0].endswith(".whl"):
            return "wheel"
        return "path" if kind == "file" else "url"
    if isinstance(kind, str) and kind in _POETRY_SOURCES:
        return "editable" if kind == "directory" and p.get("develop") is True else _POETRY_SOURCES[kind]
    raise error(f"package {p.get('name')!r}: unknown source type {kind!r} (known: directory, file, git, legacy, url)",
                 path, line)


def _poetry_marker(path: Path, p: dict[str, Any], line: int | None) -> str | None:
    """poetry 2's ``markers``: a string, or a table of group -> marker (installed where any holds; a group of
    ``groups`` absent from the table installs it everywhere, as poetry 2.5 writes ``markers = {dev = ...}`` for a
    package that main needs unconditionally)."""
    value = p.get("markers")
    what = f"package {p.get('name')!r}"
    if isinstance(value, dict):
        groups = p.get("groups")
        if isinstance(groups, list) and any(isinstance(g, str) and g not in value for g in groups):
            return None
        parts = sorted({m for m in (marker_of(v, path, line, what) for v in value.values()) if m})
        return None if not parts else parts[0] if len(parts) == 1 else " or ".join(f"({m})" for m in parts)
    return marker_of(value, path, line, what)


_POETRY_TERM = r"(?:(\^|~=|~|>=|<=|!=|==|>|<|=)\s*)?([0-9][0-9A-Za-z.*+!-]*|\*)"  # no blank without an operator:
# the blanks between terms then belong to the separator alone, and a failing match cannot backtrack exponentially


def poetry_python(constraint: Any) -> str | None:
    """A poetry Python constraint as a PEP 440 specifier (``^3.9.10`` -> ``>=3.9.10,<4``, ``~3.10`` ->
    ``>=3.10,<3.11``, ``>=3.10,<4.0`` as is), or None when it is absent, ``*``, an ``||`` or not simple."""
    if not isinstance(constraint, str) or \
            not re.fullmatch(rf"\s*{_POETRY_TERM}((\s*,\s*|\s+){_POETRY_TERM})*\s*", constraint):
        return None
    try:
        parts = [p for m in re.finditer(_POETRY_TERM, constraint) for p in _poetry_term(m.group(1) or "", m.group(2))]
        checked_spec(SpecifierSet(",".join(parts)))
    except ValueError:
        return None
    return ",".join(parts) or None


def _poetry_term(op: str, ver: str) -> list[str]:
    """One poetry constraint term as PEP 440 clauses (ValueError when it has none)."""
    if ver == "*":
        return []
    if op not in ("^", "~"):
        return [("==" if op in ("", "=") else op) + ver]
    nums = [int(x) for x in ver.split(".")]  # ValueError for a non-numeric caret/tilde version
    i = next((k for k, x in enumerate(nums) if x), len(nums) - 1) if op == "^" else min(1, len(nums) - 1)
    return [f">={ver}", "<" + ".".join(map(str, nums[:i] + [nums[i] + 1]))]


def parse_poetry_lock(path: Path, text: str) -> Lock:
    """A poetry.lock (kind ``poetry.lock``, lock-version 1.x or 2.x): each ``[[package]]`` with its source
    kind and (poetry 2) markers. ``meta``: ``extras`` (extra -> package names), ``optional`` (sorted names
    of optional packages), ``groups`` (name -> groups, or poetry 1's category)."""
    doc = toml_lock_doc(path, text)
    meta = metadata_table(path, text, doc)
    check_lock_version(path, text, "poetry.lock", "lock-version", meta.get("lock-version"), KNOWN_POETRY_LOCK_VERSIONS)
    entries: list[Entry] = []
    optional: set[str] = set()
    groups: dict[str, list[str]] = {}
    compiled: dict[str, list[str]] = {}
    wheels: dict[str, list[str]] = {}
    indexes: dict[str, str] = {}
    for i, (p, line) in enumerate(package_tables(path, text, doc)):
        name, version = name_version(path, p, line, i)
        if p.get("optional", False) not in (True, False):
            raise error(f"package {name!r}: 'optional' must be true or false, not {p['optional']!r}", path, line)
        if p.get("optional"):
            optional.add(name)
        grp = p.get("groups", [p["category"]] if isinstance(p.get("category"), str) else [])
        merge_groups(groups, name, str_list(grp, path, line, f"package {name!r}: 'groups'"))
        entries.append(Entry(name, version, _poetry_marker(path, p, line), _poetry_source(path, p, line), line=line))
        files = p.get("files")
        if entries[-1].source == "registry" and isinstance(files, list):  # file names and hashes: the index has the URL
            named = [(f["file"], sha256_of(f.get("hash"))) for f in files
                     if isinstance(f, dict) and isinstance(f.get("file"), str)]
            if (only := wheels_only([n for n, _ in named])) is not None:
                wheels[f"{name}=={version}"] = only
            got = compiled_wheels(named)
            if got:
                compiled[f"{name}=={version}"] = got
                src = p.get("source")
                if isinstance(src, dict) and src.get("type") == "legacy" and isinstance(src.get("url"), str):
                    indexes[f"{name}=={version}"] = src["url"]
    extras = _with_what_they_pull_in(_poetry_extras(path, text, doc), list(package_tables(path, text, doc)), optional)
    out = LockMeta(extras=extras, optional=sorted(optional))
    if any(groups.values()):
        out["groups"] = groups
    if compiled:
        out["lock_wheels"] = dict(sorted(compiled.items()))
    if indexes:
        out["wheel_indexes"] = dict(sorted(indexes.items()))
    if wheels:
        out["wheels_only"] = dict(sorted(wheels.items()))
    return Lock(str(path), "poetry.lock", tuple(entries), poetry_python(meta.get("python-versions")), (), out)


def _poetry_extras(path: Path, text: str, doc: dict[str, Any]) -> dict[str, list[str]]:
    extras = doc.get("extras", {})
    if not isinstance(extras, dict):
        raise error("'extras' must be a table", path, line_of(text, "[extras]"))
    out: dict[str, list[str]] = {}
    for extra, names in extras.items():
        line = line_of(text, f"{extra} =")
        found = [re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", s) for s in str_list(names, path, line, f"extra {extra!r}")]
        if not all(found):
            raise error(f"extra {extra!r}: invalid package name in {names!r}", path, line)
        out[extra] = [canonicalize_name(m.group(1)) for m in found if m]
    return out


def _with_what_they_pull_in(extras: dict[str, list[str]], tables: list[tuple[dict[str, Any], int | None]],
                            optional: set[str]) -> dict[str, list[str]]:
    """Each extra with every optional package it installs: ``[extras]`` names only the project's own optional requirements
    (``vision = ["torchvision"]``); what they require (torch, the nvidia-* wheels, also marked optional) comes with
    them, through each package's ``[package.dependencies]`` (a dependency marked ``optional`` there only through
    the extras a requirement asks for, read from the package's ``[package.extras]``)."""
    deps: dict[str, list[tuple[str, list[str]]]] = {}
    own_extras: dict[str, dict[str, list[str]]] = {}
    for p, _ in tables:
        name = canonicalize(str(p.get("name", "")))
        table = p.get("dependencies")
        out: list[tuple[str, list[str]]] = []
        for dep, spec in (table.items() if isinstance(table, dict) else ()):
            for s in spec if isinstance(spec, list) else [spec]:
                if isinstance(s, dict) and s.get("optional") is True:
                    continue  # installed only through one of this package's extras
                asked = s.get("extras") if isinstance(s, dict) else None
                out.append((canonicalize(str(dep)), [str(x) for x in asked] if isinstance(asked, list) else []))
        deps[name] = out
        px = p.get("extras")
        if isinstance(px, dict):
            own_extras[name] = {str(k): [m.group(1) for r in v if isinstance(r, str)
                                         for m in [re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", r)] if m]
                                for k, v in px.items() if isinstance(v, list)}
    full: dict[str, list[str]] = {}
    for extra, names in extras.items():
        seen: set[str] = set()
        todo = [canonicalize(n) for n in names]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            for dep, asked in deps.get(n, ()):
                todo.append(dep)
                for x in asked:
                    todo.extend(canonicalize(m) for m in own_extras.get(dep, {}).get(x, ()))
        full[extra] = [*names, *sorted((seen - set(names)) & {canonicalize(o) for o in optional})]
    return full


_EXTRA_CLAUSE = re.compile(r"""extra\s*==\s*(["'])([^"']*)\1|(["'])([^"']*)\3\s*==\s*extra""")


def _for_extra(marker: str | None, extra: str | None) -> str | None:
    """A poetry 2 package marker with its ``extra == "NAME"`` clauses decided for the environment of ``extra`` (true
    for that extra, false for any other), so that the platform markers beside them still decide."""
    if marker is None or "extra" not in marker:
        return marker
    return _EXTRA_CLAUSE.sub(lambda m: 'python_version >= "0"' if canonicalize(m.group(2) or m.group(4) or "") ==
                             canonicalize(extra or "-") else 'python_version < "0"', marker)


def extras_environments(lock: Lock) -> list[Environment]:
    """The base set (packages not marked optional) and the base plus each extra with what it pulls in (the
    package's own ``extra == "NAME"`` markers, which poetry 2 writes, hold in that extra's environment); a lock
    without extras: the flat environments."""
    extras = lock.meta.get("extras")
    if not extras:
        return flat_sets(lock)
    optional = set(lock.meta.get("optional", ()))
    out: list[Environment] = []
    for extra in [None, *sorted(extras)]:
        chosen = set() if extra is None else {canonicalize(n) for n in extras[extra]}
        entries = [replace(e, marker=_for_extra(e.marker, extra)) for e in lock.entries
                   if e.name not in optional or e.name in chosen]
        for env in flat_environments(lock.path, entries, lock.requires_python, lock.meta.get("overrides"),
                                     wheels=lock.meta.get("wheels_only")):
            label = "base" if extra is None else f"extra {extra}"
            merge(out, replace(env, name=f"{label}, {env.name}" if env.name else label))
    return out


FORMAT = Format("poetry.lock", parse_poetry_lock, names=(r"poetry\.lock",), environments=extras_environments,
                signs=((r"\A(#[^\n]*\n)*# This file is automatically @generated by Poetry",),
                       (r"^\[metadata\]", r"^content-hash\s*=", r"^\[\[package\]\]")), beside=2)
