"""A user's project as uv sees it: where it is, what it asks of the core, and the lines glmcompat keeps in it.

* **Discovery** follows uv: the nearest ``pyproject.toml`` at or above the start directory that has a
  ``[project]`` or ``[tool.uv.workspace]`` table; if a directory above holds a workspace root whose ``members``
  (and not ``exclude``) take it in, the project is that workspace (uv locks a workspace as one, at its root).
* **Requirements** are read from every member: ``project.dependencies``, every ``optional-dependencies`` extra,
  every ``dependency-groups`` group (PEP 735; ``include-group`` tables are groups already read) and uv's legacy
  ``tool.uv.dev-dependencies``, each with the place it came from (``pyproject.toml: [project] dependencies``).
* **glmcompat's own lines.** The safe core goes into the workspace root's ``[tool.uv] constraint-dependencies``
  (and ``override-dependencies`` where an engine's pure-Python pin must give way), one line per entry, each
  ending in the comment ``# glmcompat lock``. :func:`without_ours` removes exactly those lines (and a key or
  table glmcompat created, once empty); :func:`with_core` inserts the new ones. Both work on the text, so every
  byte glmcompat did not write stays as it was, and both check their result by parsing it: the document must
  equal the original with only glmcompat's entries changed, or the edit is refused (one line, exit 2).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from glmcompat.matrix import readlog
from glmcompat.model.errors import InputError
from glmcompat.model.names import canonicalize
from glmcompat.readers.pyprojecttext import KEYS as KEYS  # this module's names too (the text's, apart: see there)
from glmcompat.readers.pyprojecttext import MARK as MARK
from glmcompat.readers.pyprojecttext import MAX_PYPROJECT as MAX_PYPROJECT
from glmcompat.readers.pyprojecttext import ours as ours
from glmcompat.readers.pyprojecttext import parse as parse
from glmcompat.readers.pyprojecttext import read_text as read_text
from glmcompat.readers.pyprojecttext import reasons as reasons
from glmcompat.readers.pyprojecttext import with_core as with_core
from glmcompat.readers.pyprojecttext import without_ours as without_ours


@dataclass(frozen=True)
class ProjectRequirement:
    """One requirement a project declares: its text, canonical name, extras, and where it was read."""

    text: str
    name: str
    extras: tuple[str, ...]
    where: str  # "pyproject.toml: [project] dependencies", "svc/pyproject.toml: [dependency-groups] dev"
    marker: str | None = None
    url: bool = False  # a direct reference (name @ URL): uv's, not the resolver's


@dataclass(frozen=True)
class UvProject:
    root: Path  # the directory uv locks in (the workspace root)
    pyproject: Path  # its pyproject.toml: where glmcompat's constraints go
    text: str  # that file's text, as read
    doc: Mapping[str, Any]  # that file, parsed
    members: tuple[Path, ...]  # every member's pyproject.toml (the root's first when it is a project)

    @cached_property
    def requirements(self) -> tuple[ProjectRequirement, ...]:
        """Every requirement of every member (read on first use: a recorded no-op answer needs none)."""
        reqs: list[ProjectRequirement] = []
        for m in self.members:
            mdoc = self.doc if m == self.pyproject else parse(m, read_text(m))
            shown = os.path.relpath(m, self.root) if m != self.pyproject else "pyproject.toml"
            reqs.extend(requirements_of(m, shown, mdoc))
        return tuple(reqs)

    @property
    def settings(self) -> dict[str, Any]:
        """``[tool.glmcompat]`` of the root pyproject.toml (InputError when it is not a table)."""
        tool = self.doc.get("tool", {})
        glm = tool.get("glmcompat", {}) if isinstance(tool, dict) else {}
        if not isinstance(glm, dict):
            raise InputError("[tool.glmcompat] must be a table", path=str(self.pyproject))
        return glm

    @property
    def uv(self) -> dict[str, Any]:
        tool = self.doc.get("tool", {})
        uv = tool.get("uv", {}) if isinstance(tool, dict) else {}
        return uv if isinstance(uv, dict) else {}

    @property
    def name(self) -> str:
        p = self.doc.get("project", {})
        return str(p.get("name", self.root.name)) if isinstance(p, dict) else self.root.name

    @property
    def requires_python(self) -> str | None:
        p = self.doc.get("project", {})
        v = p.get("requires-python") if isinstance(p, dict) else None
        return v if isinstance(v, str) else None


def _is_project(doc: Mapping[str, Any]) -> bool:
    tool = doc.get("tool", {})
    uv = tool.get("uv", {}) if isinstance(tool, dict) else {}
    return isinstance(doc.get("project"), dict) or (isinstance(uv, dict) and isinstance(uv.get("workspace"), dict))


def _workspace(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    tool = doc.get("tool", {})
    uv = tool.get("uv", {}) if isinstance(tool, dict) else {}
    ws = uv.get("workspace") if isinstance(uv, dict) else None
    return ws if isinstance(ws, dict) else None


def _globs(ws: Mapping[str, Any], key: str, path: Path) -> list[str]:
    v = ws.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise InputError(f"[tool.uv.workspace] {key} must be a list of paths or globs, not {v!r}"[:300], path=str(path))
    return v


def _member_dirs(root: Path, ws: Mapping[str, Any], pp: Path) -> list[Path]:
    """The workspace's member directories (uv's rule: ``members`` globs, minus ``exclude``, each holding a
    pyproject.toml), sorted."""
    out: list[Path] = []
    excl = _globs(ws, "exclude", pp)
    for pattern in _globs(ws, "members", pp):
        for d in sorted(root.glob(pattern)):
            rel = d.relative_to(root).as_posix()
            if readlog.is_dir(d) and readlog.is_file(d / "pyproject.toml") and not any(fnmatch.fnmatch(rel, e) for e in excl):
                if d.resolve() != root.resolve() and d not in out:
                    out.append(d)
    return out


def find(start: Path) -> Path | None:
    """The pyproject.toml uv would lock from ``start``: the nearest project at or above it, or the workspace
    root above that takes it in as a member. None when there is none."""
    here = start.resolve()
    nearest: Path | None = None
    for d in [here, *here.parents]:
        pp = d / "pyproject.toml"
        if readlog.is_file(pp) and _is_project(parse(pp, read_text(pp))):
            nearest = pp
            break
    if nearest is None:
        return None
    for d in nearest.parent.parents:
        pp = d / "pyproject.toml"
        if not readlog.is_file(pp):
            continue
        doc = parse(pp, read_text(pp))
        ws = _workspace(doc)
        if ws is not None and nearest.parent in [m.resolve() for m in _member_dirs(d, ws, pp)]:
            return pp
    return nearest


def load(pyproject: Path) -> UvProject:
    """The project (or workspace) whose root is ``pyproject``, with every member's requirements."""
    text = read_text(pyproject)
    doc = parse(pyproject, text)
    root = pyproject.parent
    members: list[Path] = [pyproject] if isinstance(doc.get("project"), dict) else []
    ws = _workspace(doc)
    if ws is not None:
        members += [d / "pyproject.toml" for d in _member_dirs(root, ws, pyproject)]
    return UvProject(root, pyproject, text, doc, tuple(members))


def _strings(value: Any, path: Path, what: str) -> list[str]:
    if not isinstance(value, list):
        raise InputError(f"{what} must be a list of requirement strings, not {value!r}"[:300], path=str(path))
    return [v for v in value if isinstance(v, str)] + [
        _bad(path, what, v) for v in value if not isinstance(v, (str, dict))]


def _bad(path: Path, what: str, v: Any) -> str:
    raise InputError(f"{what}: expected a requirement string, got {v!r}"[:300], path=str(path))


def requirements_of(path: Path, shown: str, doc: Mapping[str, Any]) -> Iterator[ProjectRequirement]:
    """Every requirement one pyproject.toml declares (see the module's docstring), InputError for one that does
    not parse (naming the file, the table and the value)."""
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: a cold lock's guess reads no requirement

    project = doc.get("project", {})
    groups: list[tuple[str, Any]] = []
    if isinstance(project, dict):
        groups.append(("[project] dependencies", project.get("dependencies", [])))
        opt = project.get("optional-dependencies", {})
        if not isinstance(opt, dict):
            raise InputError(f"[project.optional-dependencies] must be a table, not {opt!r}"[:300], path=str(path))
        groups += [(f"[project.optional-dependencies] {k}", v) for k, v in opt.items()]
    dg = doc.get("dependency-groups", {})
    if not isinstance(dg, dict):
        raise InputError(f"[dependency-groups] must be a table, not {dg!r}"[:300], path=str(path))
    groups += [(f"[dependency-groups] {k}", v) for k, v in dg.items()]
    tool = doc.get("tool", {})
    uv = tool.get("uv", {}) if isinstance(tool, dict) else {}
    if isinstance(uv, dict) and "dev-dependencies" in uv:
        groups.append(("[tool.uv] dev-dependencies", uv["dev-dependencies"]))
    for what, value in groups:
        for raw in _strings(value, path, what):
            try:
                r = Requirement(raw)
            except InvalidRequirement as e:
                raise InputError(f"{what}: invalid requirement {raw!r}: {str(e).splitlines()[0]}"[:300],
                                 path=str(path)) from None
            yield ProjectRequirement(raw, canonicalize(r.name), tuple(sorted(r.extras)), f"{shown}: {what}",
                                     str(r.marker) if r.marker else None, bool(r.url))
