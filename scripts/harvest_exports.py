"""Harvest when each public name of a companion's top-level module first appeared (and, where it can be told, the first
release without it) from the real wheels' ``__init__.py``, for ``glmcompat/matrix/data/exports.toml`` (issue 38: an
``ImportError: cannot import name 'X' from 'transformers'`` is a companion too old only where X is newer than the
release installed or admitted).

Needs the index (read at run time, as pip would: ``glmcompat.edges.index.default_index_url``); each wheel is read with
HTTP range requests (its central directory and the one member), never downloaded whole. Run:
``python scripts/harvest_exports.py > glmcompat/matrix/data/exports.toml``.

What a release's ``__init__.py`` exports (read with :mod:`ast`, never imported): the string lists of its lazy-import
table (transformers' ``_import_structure``, huggingface_hub's ``_SUBMOD_ATTRS``: a dict literal, item assignments,
``.extend([...])`` and ``.append("...")``) and the names of its relative ``from .x import A`` statements (transformers 3.x,
huggingface_hub before its lazy table, and the ``TYPE_CHECKING`` branches). Since transformers builds the models' part of
its table with ``define_import_structure(.../models)`` (the models' own ``__all__``), a name that lived under a
``models.`` key and is missing from such a release's ``__init__.py`` is not known to be gone: no ``until`` is written for
it. A name of the oldest release read has ``since`` = that release (there or earlier).
"""

from __future__ import annotations

import ast
import functools
import sys
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from packaging.version import InvalidVersion, Version

from glmcompat.edges.index import IndexClient, IndexFile
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.readers.wheelzip import RemoteZip

# package -> (its top-level module, the oldest release read)
PACKAGES = {"transformers": ("transformers", "4.0.0"), "huggingface-hub": ("huggingface_hub", "0.10.0")}
TABLES = frozenset({"_import_structure", "_SUBMOD_ATTRS"})
R = TypeVar("R", bound=tuple)


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _table_key(node: ast.AST) -> str | None:
    """``_import_structure["k"]`` -> "k"."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in TABLES and \
            isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    return None


def exports(source: bytes) -> tuple[dict[str, str], bool]:
    """The public names ``__init__.py`` exports -> the submodule it takes each from; and whether the release builds the
    models' names elsewhere (define_import_structure)."""
    tree = ast.parse(source)
    out: dict[str, str] = {}

    def add(names: list[str], key: str) -> None:
        for n in names:
            if n and not n.startswith("_") and n.isidentifier():
                out.setdefault(n, key)

    def visit(nodes: list[ast.stmt]) -> None:
        for st in nodes:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id in TABLES and isinstance(st.value, ast.Dict):
                        for k, v in zip(st.value.keys, st.value.values, strict=True):
                            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                                add(_strings(v), k.value)
                    elif (key := _table_key(t)) is not None and st.value is not None:
                        add(_strings(st.value), key)
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and \
                    isinstance(st.value.func, ast.Attribute) and (key := _table_key(st.value.func.value)) is not None:
                args = st.value.args
                if st.value.func.attr == "extend" and args:
                    add(_strings(args[0]), key)
                elif st.value.func.attr == "append" and args and isinstance(args[0], ast.Constant):
                    add([str(args[0].value)], key)
            elif isinstance(st, ast.ImportFrom) and st.level >= 1:
                add([a.asname or a.name for a in st.names if a.name != "*"], st.module or "")
            for field in ("body", "orelse", "finalbody"):
                visit(getattr(st, field, []) or [])
            for h in getattr(st, "handlers", []) or []:
                visit(h.body)

    visit(tree.body)
    return out, b"define_import_structure(" in source


def releases(ic: IndexClient, package: str, oldest: str) -> list[str]:
    """The final releases of ``package`` on the index from ``oldest`` on, oldest first (no pre-, dev- or local release):
    the releases every wheel harvest reads (this script's, harvest_torch_api.py's, harvest_cumm_api.py's and
    harvest_torch_macros.py's)."""
    out = []
    for v in ic.project(package).versions:
        try:
            pv = Version(v)
        except InvalidVersion:
            continue
        if not pv.is_prerelease and not pv.is_devrelease and not pv.local and pv >= Version(oldest):
            out.append(v)
    return sorted(out, key=Version)


def first_wheel(ic: IndexClient, package: str, version: str, pythons: tuple[str, ...]) -> IndexFile | None:
    """The Linux x86_64 wheel of ``version`` for the first of ``pythons`` it has one for (None: no such wheel)."""
    for py in pythons:
        try:
            return ic.find_wheel(package, version, python=py)
        except Exception:  # no wheel of that Python: the next
            continue
    return None


def read_releases(read: Callable[[str], R | None], versions: list[str]) -> list[R]:
    """``read`` of each release, four at a time, oldest first, a release it cannot read (None) left out; each result's
    first item is its version."""
    with ThreadPoolExecutor(4) as pool:
        return sorted((r for r in pool.map(read, versions) if r is not None), key=lambda r: Version(r[0]))


def grouped(first: dict[str, str], gone: dict[str, str | None], keep: Callable[[str], bool] = lambda n: True
            ) -> dict[tuple[str, str | None], list[str]]:
    """The names of ``first`` that ``keep`` admits, grouped by (since, until): what :func:`export_rows` writes."""
    groups: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    for n, since in first.items():
        if keep(n):
            groups[(since, gone.get(n))].append(n)
    return groups


def wheel_source(what: str, script: str, package: str, got: list[tuple[str, str, object]], since: str,
                 until: str | None, how: str = "") -> str:
    """A harvested row's ``source``: ``what`` (the member read) of every final release's wheel of ``got`` (version,
    wheel file name, ..., oldest first), ``how`` it was read, and the releases the names came and went."""
    src = (f"{what} of every final release's wheel from {got[0][1]} to {got[-1][1]} ({how}read by scripts/{script}): "
           f"first in {package}-{since}")
    if since == got[0][0]:
        src += " (the oldest release read: there or earlier)"
    return src + (f", absent from {package}-{until} on" if until else "")


def read(ic: IndexClient, package: str, module: str, version: str) -> tuple[str, str, dict[str, str], bool]:
    f = ic.find_wheel(package, version)
    z = RemoteZip(HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size))
    names, partial = exports(z.read(f"{module}/__init__.py"))
    return version, f.filename, names, partial


def harvest(ic: IndexClient, package: str, module: str, oldest: str) -> list[str]:
    got = read_releases(lambda v: read(ic, package, module, v), releases(ic, package, oldest))
    first: dict[str, str] = {}
    gone: dict[str, str | None] = {}
    key_of: dict[str, str] = {}
    for version, _, names, partial in got:
        for n, key in names.items():
            first.setdefault(n, version)
            key_of.setdefault(n, key)
            gone[n] = None  # present (again): not gone
        for n in first:
            if n not in names and gone.get(n) is None:
                if partial and key_of[n].startswith("models"):
                    continue  # the models' names live in their own modules' __all__ here: not known to be gone
                gone[n] = version
    source = functools.partial(wheel_source, f"{module}/__init__.py", "harvest_exports.py", package, got,
                               how="its lazy-import table and relative imports, ")
    return export_rows(package, module, grouped(first, gone), source)


def since_until(told: list[tuple[str, set[str]]]) -> tuple[dict[str, str], dict[str, str | None]]:
    """Each name's first release and, where a later release lacks it, the first release without it, from ``told``
    (release, the names it defines), oldest release first: the walk the API harvests (torch's, cumm's) share."""
    first: dict[str, str] = {}
    gone: dict[str, str | None] = {}
    for version, names_had in told:
        for n in sorted(names_had):
            first.setdefault(n, version)
            gone[n] = None
        for n in first:
            if n not in names_had and gone.get(n) is None:
                gone[n] = version
    return first, gone


def export_rows(package: str, module: str, groups: dict[tuple[str, str | None], list[str]],
                source: Callable[[str, str | None], str]) -> list[str]:
    """The ``[[export]]`` rows of ``module``'s names grouped by (since, until), oldest first, each with its ``source``
    (the one writer of these rows: this script's, harvest_torch_api.py's and harvest_flash_attn_api.py's)."""
    lines: list[str] = []
    for (since, until), names in sorted(groups.items(), key=lambda kv: (Version(kv[0][0]), kv[0][1] or "")):
        lines += ["[[export]]", f'package = "{package}"', f'module = "{module}"', f'since = "{since}"']
        if until:
            lines.append(f'until = "{until}"')
        lines.append("names = [" + ", ".join(f'"{n}"' for n in sorted(names)) + "]")
        lines.append('evidence = "metadata"')
        lines.append(f'source = "{source(since, until)}"')
        lines.append("")
    return lines


def main() -> int:
    print("# When each public name of a companion's top-level module first appeared (since) and, where the wheels tell it,")
    print("# the first release without it (until): from the real wheels' __init__.py, harvested by")
    print("# scripts/harvest_exports.py (its docstring says how each release is read). explain reads it to tell a")
    print("# companion too old (the name is newer than the release installed or admitted) from an import that fails for")
    print("# another reason (issue 38). Generated: do not edit by hand.")
    print("schema = 1")
    print()
    with IndexClient() as ic:
        for package, (module, oldest) in PACKAGES.items():
            print("\n".join(harvest(ic, package, module, oldest)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
