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
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from glmcompat.matrix import readlog
from glmcompat.model.errors import InputError
from glmcompat.model.names import canonicalize
from glmcompat.model.tomltext import loads

MARK = "# glmcompat lock"
KEYS = ("constraint-dependencies", "override-dependencies")
MAX_PYPROJECT = 4 * 1024 * 1024  # a pyproject.toml larger than this is not one


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


def read_text(path: Path) -> str:
    """A pyproject.toml's text (UTF-8, a regular file of sane size); InputError naming it otherwise."""
    try:
        st = path.stat()
        if st.st_size > MAX_PYPROJECT:
            raise InputError(f"larger than {MAX_PYPROJECT // (1024 * 1024)} MiB; not a pyproject.toml", path=str(path))
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read it: {e.strerror or e}", path=str(path)) from None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 (byte {e.start})", path=str(path)) from None


def parse(path: Path, text: str) -> dict[str, Any]:
    return loads(text, InputError, str(path))


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


# ------------------------------------------------------------------------------------------------
# glmcompat's lines in the user's pyproject.toml
# ------------------------------------------------------------------------------------------------

_ITEM = re.compile(r'\n[ \t]*"[^"\\\n]*",[ \t]*' + re.escape(MARK) + r"\b[^\n]*")
_END = re.compile(r"\n[ \t]*" + re.escape(MARK) + r": end\n[ \t]*")
_OWN_KEY = re.compile(r"(?m)^(?:constraint|override)-dependencies = \[  " + re.escape(MARK) + r"\n\]\n")
_OWN_TABLE = re.compile(r"\n\[tool\.uv\]  " + re.escape(MARK) + r"\n(?=\[|\Z)")
_TABLE = re.compile(r"(?m)^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*uv[ \t]*\][ \t]*(?:#[^\n]*)?$")
_HEADER = re.compile(r"(?m)^[ \t]*\[")


def _arrays(doc: Mapping[str, Any]) -> dict[str, list[Any]]:
    tool = doc.get("tool", {})
    uv = tool.get("uv", {}) if isinstance(tool, dict) else {}
    uv = uv if isinstance(uv, dict) else {}
    return {k: list(uv[k]) if isinstance(uv.get(k), list) else [] for k in KEYS}


def _rest(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The document without the two arrays glmcompat edits (and without a [tool.uv] that holds nothing else)."""
    out = dict(doc)
    tool = dict(out.get("tool", {})) if isinstance(out.get("tool"), dict) else None
    if tool is None:
        return out
    uv = tool.get("uv")
    if isinstance(uv, dict):
        uv = {k: v for k, v in uv.items() if k not in KEYS}
        if uv:
            tool["uv"] = uv
        else:
            tool.pop("uv")
    if tool:
        out["tool"] = tool
    else:
        out.pop("tool")
    return out


def ours(path: Path, text: str) -> dict[str, list[str]]:
    """The entries glmcompat wrote, per key (``constraint-dependencies``, ``override-dependencies``)."""
    doc = parse(path, text)
    arrays = _arrays(doc)
    found: dict[str, list[str]] = {k: [] for k in KEYS}
    for m in _ITEM.finditer(text):
        value = m.group(0).split('"')[1]
        for k in KEYS:
            if arrays[k].count(value) > found[k].count(value):
                found[k].append(value)
                break
    return found


def reasons(text: str) -> dict[str, str]:
    """The reason glmcompat wrote after each of its lines' mark (``# glmcompat lock: REASON``), by the line's value."""
    out: dict[str, str] = {}
    for m in _ITEM.finditer(text):
        line = m.group(0)
        value = line.split('"')[1]
        why = line.split(MARK, 1)[1]
        if why.startswith(": "):
            out[value] = why[2:].strip()
    return out


def _minus(values: list[Any], drop: list[str]) -> list[Any]:
    """``values`` with each of ``drop`` removed once."""
    out = list(values)
    for d in drop:
        if d in out:
            out.remove(d)
    return out


def without_ours(path: Path, text: str) -> str:
    """``text`` without glmcompat's lines (and the key or table it created, once empty)."""
    if MARK not in text:
        return text
    new = _END.sub("", _ITEM.sub("", text), count=0)
    new = _OWN_KEY.sub("", new)
    new = _OWN_TABLE.sub("", new)
    before, after = parse(path, text), parse(path, new)
    mine = ours(path, text)
    want = {k: _minus(_arrays(before)[k], mine[k]) for k in KEYS}
    if _rest(before) != _rest(after) or _arrays(after) != want:
        raise InputError(f"the lines marked `{MARK}` are not where glmcompat writes them ([tool.uv] "
                         f"{' / '.join(KEYS)}); remove them by hand", path=str(path))
    return new


def _comment(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)


def _lines(entries: list[tuple[str, str]], indent: str) -> str:
    return "".join(f'\n{indent}"{value}",  {MARK}{": " + _comment(why) if why else ""}' for value, why in entries)


def with_core(path: Path, text: str, entries: Mapping[str, list[tuple[str, str]]]) -> str:
    """``text`` (already without glmcompat's lines) with ``entries`` -- per key, ``(requirement, reason)`` --
    inserted at the head of ``[tool.uv]``'s arrays; the key, or ``[tool.uv]`` itself, created when absent."""
    for key, items in entries.items():
        for value, _ in items:
            if '"' in value or "\\" in value or not value.isprintable():
                raise InputError(f"cannot write {value!r} into {key}", path=str(path))
    doc = parse(path, text)
    new = text
    for key in reversed(KEYS):  # each goes first in [tool.uv]: constraints end up above overrides
        items = entries.get(key, [])
        if items:
            new = _insert(path, new, key, items)
    try:
        after = parse(path, new)
    except InputError:
        after = {}
    want = {k: [v for v, _ in entries.get(k, [])] + _arrays(doc)[k] for k in KEYS}
    if _rest(doc) != _rest(after) or _arrays(after) != want:
        raise InputError("cannot place glmcompat's constraints in it: [tool.uv] is written in a form glmcompat does "
                         "not edit (dotted keys or an inline table); write it as a `[tool.uv]` table", path=str(path))
    return new


def _insert(path: Path, text: str, key: str, items: list[tuple[str, str]]) -> str:
    table = _TABLE.search(text)
    if table is None:  # (a [tool.uv] made of dotted keys makes this invalid TOML: with_core refuses it)
        sep = "" if text.endswith("\n") or not text else "\n"
        return (text + sep + ("\n" if text else "") + f"[tool.uv]  {MARK}\n"
                + f"{key} = [  {MARK}" + _lines(items, "    ") + "\n]\n")
    start = table.end()
    nxt = _HEADER.search(text, start + 1)
    end = nxt.start() if nxt else len(text)
    m = re.search(r"(?m)^[ \t]*" + re.escape(key) + r"[ \t]*=[ \t]*\[", text[start:end])
    if m is None:
        eol = text.find("\n", start)
        at = len(text) if eol < 0 else eol + 1
        block = f"{key} = [  {MARK}" + _lines(items, "    ") + "\n]\n"
        return text[:at] + ("\n" if eol < 0 else "") + block + text[at:]
    bracket = start + m.end()
    eol = text.find("\n", bracket)
    rest = text[bracket: len(text) if eol < 0 else eol]
    if rest.strip() == "" or rest.strip().startswith("#"):
        at = len(text) if eol < 0 else eol
        return text[:at] + _lines(items, "    ") + text[at:]
    # The array's first item is on the line of its "[": glmcompat's lines go before it, closed by an end marker.
    return text[:bracket] + _lines(items, "    ") + f"\n    {MARK}: end\n    " + text[bracket:]
