"""Record rows in the matrix as evidence: ``glmcompat matrix probe`` (one probe's row) and ``matrix refresh`` (many).

``matrix probe EXT==VER --torch VER`` adds an ``[[abi_probe]]`` row, ``matrix probe PKG==VER --arch``
an ``[[arch_probe]]`` row, to ``glmcompat/matrix/data/kernels.toml`` (or ``--file``). The row is rendered with
tomlkit and inserted after the last row of its table, so comments, order and every other byte of the
file stay as they were: the diff shows only added lines. The new file is validated (the file and the
whole matrix) before it replaces the old one, atomically. A row that is already recorded with the same
verdict is left alone; one that contradicts the recorded verdict is refused.

Rows are :mod:`glmcompat.matrix.rows`'s dataclasses here as everywhere: built as rows (``matrix probe``'s
and ``matrix refresh``'s, from the probe results: :mod:`glmcompat.ops.refresh.probes`), validated as rows (:func:`check_row`), compared by identity and verdict
(:func:`row_identity`, :func:`verdict`); they become plain TOML data only to be written (:func:`plain_row`, in
:data:`KEY_ORDER`) and are read back from it (:func:`row_of`).
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any

import tomlkit
from packaging.utils import canonicalize_name
from packaging.version import Version
from pydantic import ValidationError

from glmcompat.matrix.rows import (
    FIELDS,
    ROWS,
    AbiProbe,
    ArchProbe,
    Fact,
    FamilyRule,
    Jit,
    Kernel,
    Release,
    TorchBuild,
    from_values,
    to_plain,
)
from glmcompat.matrix.schema import MatrixFile, load_file, load_matrix
from glmcompat.matrix.store import atomic_write, matrix_files
from glmcompat.model.errors import MatrixError

_HEADER = re.compile(r"^\s*\[")


# ------------------------------------------------------------------------------------------------
# Rows (pure)
# ------------------------------------------------------------------------------------------------


def _python_option(wheel: str) -> str:
    """`` --python cpXY`` when the wheel is not one the probes choose by default (cp311 / abi3 / py3)."""
    m = re.search(r"-(cp\d+)-(cp\d+|abi3|none)-", wheel)
    if m and m.group(2) != "abi3" and m.group(1) != "cp311":
        return f" --python {m.group(1)}"
    return ""


def _platform_option(platform: str) -> str:
    return "" if platform in ("", "x86_64") else f" --platform {platform}"


def abi_command(package: str, version: str, torch: str, wheel: str = "", platform: str = "x86_64") -> str:
    """The command that reproduces an ABI verdict (what a row's ``source`` cites)."""
    return f"glmcompat abi {package}=={version} --torch {torch}{_python_option(wheel)}{_platform_option(platform)}"


def arch_command(package: str, version: str, wheel: str = "", platform: str = "x86_64") -> str:
    """The command that reproduces a GPU-code list."""
    return f"glmcompat arch {package}=={version}{_python_option(wheel)}{_platform_option(platform)}"


# table -> the order of the keys of a written row: what identifies the row, what it claims, then evidence and
# source (the order of the curated rows); the fields of a table not named follow in FIELDS order
KEY_ORDER: dict[str, tuple[str, ...]] = {
    "torch": ("versions", "variant", "platform", "cuda", "sass", "ptx", "evidence", "source"),
    "family": ("package", "pairs", "cudart", "failure", "on_mismatch", "consequence", "evidence", "source"),
    "kernel": ("package", "versions", "variant", "platform", "torch", "cuda", "sass", "ptx", "on_mismatch",
               "consequence", "evidence", "source"),
    "abi_probe": ("package", "version", "platform", "torch", "compatible", "missing", "symbols", "evidence", "source"),
    "arch_probe": ("package", "version", "variant", "platform", "sass", "ptx", "evidence", "source", "kernel_code"),
    "jit": ("package", "versions", "evidence", "source"),
    "requires": ("package", "versions", "requires", "evidence", "source"),
    "release": ("package", "version", "requires", "evidence", "source"),
    "model": ("model_type", "architectures", "transformers", "sglang", "sglang_config", "vllm", "vllm_config",
              "evidence", "source", "failure"),
}
# table -> fields written even where they hold their default (an empty ``ptx`` says "no PTX was found"; an empty
# ``architectures`` says no architecture is known, so no engine bound can be derived)
ALWAYS: dict[str, tuple[str, ...]] = {"torch": ("ptx",), "arch_probe": ("ptx",), "model": ("architectures",)}
TABLE_OF: dict[type[Fact], str] = {cls: table for table, cls in ROWS.items()}


def _defaults(cls: type[Fact]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(cls):
        if f.default is not MISSING:
            out[f.name] = f.default
        elif f.default_factory is not MISSING:
            out[f.name] = f.default_factory()
    return out


_DEFAULTS: dict[str, dict[str, Any]] = {t: _defaults(cls) for t, cls in ROWS.items()}


def table_of(row: Fact) -> str:
    """The table ``row`` is a row of."""
    return TABLE_OF[type(row)]


def plain_row(row: Fact, also: Iterable[str] = ()) -> dict[str, Any]:
    """``row`` as a matrix file holds it (plain TOML data, in :data:`KEY_ORDER`): every field but those that are
    None or hold their default -- unless the table writes them always (:data:`ALWAYS`) or they are named in ``also``
    (a package-level key copied onto a new row)."""
    table = table_of(row)
    defaults = _DEFAULTS[table]
    keep = {*ALWAYS.get(table, ()), *also}
    plain = to_plain(table, row)
    order = KEY_ORDER.get(table, ())
    keys = [*(k for k in order if k in plain), *(k for k in FIELDS[table] if k not in order)]
    return {k: plain[k] for k in keys if plain[k] is not None
            and (k in keep or k not in defaults or getattr(row, k) != defaults[k])}


def row_of(table: str, plain: Mapping[str, Any]) -> Fact:
    """The ``table`` row whose plain data (as :func:`plain_row` writes it) is ``plain``: absent fields take their
    default. KeyError, TypeError or ValueError when it does not fit (unknown or missing keys)."""
    unknown = set(plain) - set(FIELDS[table])
    if unknown:
        raise KeyError(f"unknown keys of [[{table}]]: {', '.join(sorted(unknown))}")
    defaults = _DEFAULTS[table]
    values = [copy.deepcopy(plain[k]) if k in plain else defaults[k] for k in FIELDS[table]]
    return from_values(table, [values])[0]


def check_row(row: Fact) -> str | None:
    """Why the matrix schema rejects ``row`` (``field: message``), or None when it admits it."""
    table = table_of(row)
    try:
        MatrixFile.model_validate({"schema": 1, table: [plain_row(row)]})
    except ValidationError as e:
        err = e.errors()[0]
        return f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
    return None


def render_row(table: str, row: Mapping[str, Any]) -> str:
    """``[[table]]`` and its keys (plain TOML data, as :func:`plain_row` gives them) as tomlkit writes them."""
    t = tomlkit.table()
    for k, v in row.items():
        if isinstance(v, list):
            arr = tomlkit.array()
            arr.extend(v)
            t.add(k, arr)
        elif isinstance(v, dict):  # an inline table, as the curated rows write pairs = { "0.24.1" = "==2.9.1" }
            inline = tomlkit.inline_table()
            for kk, vv in v.items():
                inline.append(tomlkit.key(str(kk)) if not re.match(r"^[A-Za-z0-9_-]+$", str(kk))
                              else str(kk), vv)
            t.add(k, inline)
        else:
            t.add(k, v)
    aot = tomlkit.aot()
    aot.append(t)
    doc = tomlkit.document()
    doc.add(table, aot)
    return tomlkit.dumps(doc).strip("\n") + "\n"


def insert_row(text: str, table: str, rendered: str) -> str:
    """``text`` with ``rendered`` inserted after the last ``[[table]]`` row (pure; adds lines only).

    Comments and blank lines that lead into the next table stay with it. Without such a table the
    row goes at the end of the file.
    """
    lines = text.splitlines(keepends=True)
    header = re.compile(r"^\s*\[\[\s*" + re.escape(table) + r"\s*\]\]\s*(#.*)?$")
    last = max((i for i, line in enumerate(lines) if header.match(line)), default=None)
    if last is None:
        body = text if text.endswith("\n") or not text else text + "\n"
        return body + ("\n" if body.strip() else "") + rendered
    end = len(lines)
    for j in range(last + 1, len(lines)):
        if _HEADER.match(lines[j]):
            end = j
            break
    k = end
    while k > last + 1 and (not lines[k - 1].strip() or lines[k - 1].lstrip().startswith("#")):
        k -= 1
    before = lines[:k]
    if before and not before[-1].endswith("\n"):
        before[-1] += "\n"
    return "".join(before) + "\n" + rendered + "".join(lines[k:])


def find_row(rows: Sequence[Fact], row: Fact, keys: Sequence[str]) -> Fact | None:
    """The row of ``rows`` that has ``row``'s ``keys`` (names canonical, versions equal), or None."""
    for r in rows:
        ok = True
        for k in keys:
            a, b = getattr(r, k), getattr(row, k)
            if k == "package":
                ok = ok and canonicalize_name(a) == canonicalize_name(b)
            else:
                ok = ok and Version(a) == Version(b)
        if ok:
            return r
    return None


# ------------------------------------------------------------------------------------------------
# Writing
# ------------------------------------------------------------------------------------------------


def add_row(path: Path, table: str, row: AbiProbe | ArchProbe, *, dry_run: bool = False) -> str | None:
    """Add the probe's ``row`` to ``[[table]]`` of ``path``; return the added text, or None when already recorded."""
    if table_of(row) != table:
        raise ValueError(f"a [[{table_of(row)}]] row is not a [[{table}]] row")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise MatrixError(f"cannot read: {e.strerror}", path=str(path)) from None
    current, _ = load_file(path)
    keys = ("package", "version", "torch") if isinstance(row, AbiProbe) else ("package", "version")
    existing = find_row(getattr(current, table), row, keys)
    if existing is not None:
        if verdict(existing) == verdict(row):
            return None
        what = " ".join(f"{k}={getattr(row, k)}" for k in keys)
        raise MatrixError(f"the probe contradicts the recorded [[{table}]] row for {what}; review and edit it by hand",
                          path=str(path))
    rendered = render_row(table, plain_row(row))
    new = insert_row(text, table, rendered)
    _validate(path, new)
    if not dry_run:
        _atomic_write(path, new)
    return rendered


def verdict(row: Fact) -> tuple[Any, ...] | None:
    """What a probe row measured (an ABI verdict, a GPU-code list): two rows of one identity that differ in it
    contradict each other; None for the other tables."""
    if isinstance(row, AbiProbe):
        return (row.compatible, row.missing)
    if isinstance(row, ArchProbe):
        return (tuple(row.sass), tuple(row.ptx or ()))
    return None


def row_identity(row: Fact) -> tuple[Any, ...] | None:
    """What makes two rows of a table claim the same thing (None: no identity, never deduplicated)."""
    pkg = getattr(row, "package", None)
    pkg = str(canonicalize_name(pkg)) if pkg is not None else None
    plat = getattr(row, "platform", "x86_64")  # an aarch64 wheel is another build: its rows claim other things
    if isinstance(row, AbiProbe):
        return (pkg, Version(row.version), Version(row.torch), plat)
    if isinstance(row, ArchProbe):
        return (pkg, Version(row.version), row.variant, plat)
    if isinstance(row, Kernel):
        return (pkg, tuple(sorted(Version(v) for v in row.versions)), row.variant, plat)
    if isinstance(row, TorchBuild):
        return (tuple(sorted(Version(v) for v in row.versions)), row.variant, plat)
    if isinstance(row, FamilyRule):
        return (pkg, tuple(sorted(Version(v) for v in row.pairs)))
    if isinstance(row, Jit):
        return (pkg, row.versions)
    if isinstance(row, Release):
        return (pkg, row.version)
    return None


@dataclass(frozen=True, slots=True)
class Addition:
    """A row to add to the matrix file ``path``; ``also``: fields written even where they hold their default (a
    package-level key copied from the package's other rows, :func:`plain_row`)."""

    path: Path
    row: Fact
    also: tuple[str, ...] = ()

    @property
    def table(self) -> str:
        return table_of(self.row)


def add_rows(files: Sequence[Path], additions: Sequence[Addition], *, dry_run: bool = False) -> dict[Path, list[str]]:
    """Add many rows to the files of one matrix at once; return {file: [rendered rows]}.

    ``files`` are every file of the matrix (the changed ones and the rest: the whole is validated).
    Each row is rendered by tomlkit and inserted after the last row of its table in its file (a file that
    does not exist yet starts as ``schema = 1``), so the diff shows only added lines. The new matrix is
    validated as a whole (every file, cross-file checks) before any file is replaced; each file is then
    replaced atomically. Nothing is written on error or with ``dry_run``.
    """
    texts: dict[Path, str] = {}
    added: dict[Path, list[str]] = {}
    for a in additions:
        path = a.path
        if path not in texts:
            if path.exists():
                try:
                    texts[path] = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as e:
                    raise MatrixError(f"cannot read: {e}", path=str(path)) from None
            else:
                texts[path] = "schema = 1\n"
        rendered = render_row(a.table, plain_row(a.row, a.also))
        texts[path] = insert_row(texts[path], a.table, rendered)
        added.setdefault(path, []).append(rendered)
    _commit(files, texts, dry_run)
    return added


def replace_row(text: str, table: str, index: int, rendered: str) -> str:
    """``text`` with row ``index`` of ``[[table]]`` (its header through its last key line) replaced by ``rendered``
    (pure; the comments and blank lines after it stay)."""
    lines = text.splitlines(keepends=True)
    header = re.compile(r"^\s*\[\[\s*" + re.escape(table) + r"\s*\]\]\s*(#.*)?$")
    at = [i for i, line in enumerate(lines) if header.match(line)]
    if not 0 <= index < len(at):
        raise MatrixError(f"no row {index} of [[{table}]]")
    start = at[index]
    end = next((j for j in range(start + 1, len(lines)) if _HEADER.match(lines[j])), len(lines))
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return "".join(lines[:start]) + rendered + "".join(lines[end:])


@dataclass(frozen=True, slots=True)
class Replacement:
    """Row ``index`` of its table (counted in the matrix file ``path``) replaced by ``row``."""

    path: Path
    index: int
    row: Fact

    @property
    def table(self) -> str:
        return table_of(self.row)


def replace_rows(files: Sequence[Path], replacements: Sequence[Replacement], *,
                 dry_run: bool = False) -> dict[Path, list[str]]:
    """Replace rows in place (the ``[[model]]`` rows :mod:`glmcompat.ops.refresh.models` updates), each rendered
    as :func:`plain_row` writes it; validated and written as :func:`add_rows` writes (the whole matrix first, then
    each file atomically; nothing on error). Returns {file: [rendered rows]}."""
    texts: dict[Path, str] = {}
    out: dict[Path, list[str]] = {}
    for r in replacements:
        path = r.path
        if path not in texts:
            try:
                texts[path] = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise MatrixError(f"cannot read: {e}", path=str(path)) from None
        rendered = render_row(r.table, plain_row(r.row))
        texts[path] = replace_row(texts[path], r.table, r.index, rendered)
        out.setdefault(path, []).append(rendered)
    _commit(files, texts, dry_run)
    return out


def _commit(files: Sequence[Path], texts: dict[Path, str], dry_run: bool) -> None:
    """Validate the whole matrix with ``texts`` in place of those files, then (unless ``dry_run``) write each
    atomically: nothing is written when any row is wrong."""
    if not texts:
        return
    validate_matrix_texts(files, texts)
    if not dry_run:
        for path, text in texts.items():
            _atomic_write(path, text)


def validate_matrix_texts(files: Sequence[Path], texts: dict[Path, str]) -> None:
    """Validate the matrix made of ``files`` with ``texts`` replacing (or adding) some of them: each
    new text parses by the schema and the whole loads without contradictions. Raises
    :class:`MatrixError` naming the real file."""
    every = list(dict.fromkeys([*files, *texts]))
    with tempfile.TemporaryDirectory(prefix="glmcompat-matrix-") as tmp:
        names: dict[str, Path] = {}
        temps: list[Path] = []
        for i, path in enumerate(every):
            t = Path(tmp) / f"{i:03d}-{path.name}"
            names[str(t)] = path
            if path in texts:
                t.write_text(texts[path], encoding="utf-8")
            else:
                shutil.copyfile(path, t)
            temps.append(t)
        try:
            load_matrix(temps)
        except MatrixError as e:
            msg = e.one_line()
            for tmp_name, real in names.items():
                msg = msg.replace(tmp_name, str(real))
            raise MatrixError(msg) from None


def _validate(path: Path, new: str) -> None:
    if tomlkit.parse(new).as_string() != new:  # pragma: no cover - tomlkit round-trips what it parses
        raise MatrixError("tomlkit does not round-trip the new file", path=str(path))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".probe-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(new)
        load_file(Path(tmp))
        try:
            shipped = matrix_files()
        except MatrixError:
            shipped = []
        if any(p.resolve() == path.resolve() for p in shipped):
            load_matrix([p for p in shipped if p.resolve() != path.resolve()] + [Path(tmp)])
        else:
            load_matrix([Path(tmp)])
    finally:
        os.unlink(tmp)


def _atomic_write(path: Path, text: str) -> None:
    """Replace a matrix file atomically (a temporary file beside it, then a rename), keeping what the user
    set on it: its permission bits (a temporary file is created 0600; the file it replaces was perhaps
    0644), and the symlink when ``path`` is one (the file it points at is replaced). A new file gets the
    mode the umask gives."""
    real = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    atomic_write(real, text.encode("utf-8"), mode=mode)


