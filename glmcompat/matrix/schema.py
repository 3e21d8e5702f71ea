"""The curated compatibility matrix: TOML data under ``glmcompat/matrix/data/`` validated by pydantic into the frozen
dataclasses of :mod:`glmcompat.matrix.rows` (one declaration per table).

Every row is a fact with its ``evidence`` (how it is known) and ``source`` (where it was read).
Loading validates each file (unknown keys rejected; versions, specifiers, requirements, GPU code and
regular expressions parsed) and then the whole (no kernel release mapped to two torch versions, no
stack naming an unknown target, ...). Errors name the file, the line and the offending value.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from glmcompat.matrix.rows import (
    ROWS,
    ArchProbe,
    FamilyRule,
    Fact,
    Kernel,
    ModelTypeReleases,
    OtherCause,
    Signature,
    Tables,
    Target,
    TorchBuild,
    to_plain,
)
from glmcompat.matrix.store import matrix_files, read_input
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.errors import InputError, MatrixError
from glmcompat.model.findings import EvidenceKind
from glmcompat.model.memo import BoundedMemo
from glmcompat.model.signatures import linear_time_problem
from glmcompat.model.tomltext import loads as toml_loads

SCHEMA_VERSION = 1

# the kinds of evidence a row cites (declared once, glmcompat.model.findings.EvidenceKind); "documentation": what a
# project's docs or tables state; it never proves a break on its own (a warning)
Evidence = EvidenceKind
Severity = Literal["error", "warning"]
# The Linux machine a wheel is built for (its platform tag's architecture): rows about wheels say which;
# a row without one is about the x86_64 wheel. See glmcompat.model.platforms.PLATFORMS.
Platform = Literal["x86_64", "aarch64"]


def _parsed_by(parse: Callable[[str], object], error: type[Exception], what: str) -> Callable[[str], str]:
    """A field check: the value as given where ``parse`` reads it, else "invalid WHAT 'value'"."""

    def check(v: str) -> str:
        try:
            parse(v)
        except error:
            raise ValueError(f"invalid {what} {v!r}") from None
        return v

    return check


_version = _parsed_by(Version, InvalidVersion, "version")
_specifier = _parsed_by(SpecifierSet, InvalidSpecifier, "specifier")
_requirement = _parsed_by(Requirement, InvalidRequirement, "requirement")


def _name(v: str) -> str:
    if not re.match(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$", v):
        raise ValueError(f"invalid package name {v!r}")
    return str(canonicalize_name(v))


def _code(v: str) -> str:
    gpu.parse_code(v)
    return v


def _capability(v: str) -> str:
    gpu.parse_capability(v)
    return v


def _cuda(v: str) -> str:
    if not re.match(r"^\d+\.\d+$", v):
        raise ValueError(f"invalid CUDA version {v!r} (expected e.g. '12.8')")
    return v


def _regex(v: str) -> str:
    try:
        re.compile(v)
    except re.error as e:
        raise ValueError(f"invalid regular expression {v!r}: {e}") from None

    why = linear_time_problem(v)  # `explain` must stay linear in the log: no nested quantifiers, ...
    if why:
        raise ValueError(f"regular expression {v!r} is not linear-time: {why}")
    return v


VersionStr = Annotated[str, AfterValidator(_version)]
SpecStr = Annotated[str, AfterValidator(_specifier)]
ReqStr = Annotated[str, AfterValidator(_requirement)]
Name = Annotated[str, AfterValidator(_name)]
Code = Annotated[str, AfterValidator(_code)]
CudaStr = Annotated[str, AfterValidator(_cuda)]
Capability = Annotated[str, AfterValidator(_capability)]
DriverStr = Annotated[str, Field(pattern=r"^\d{2,4}(\.\d{1,4}){0,2}$")]  # an NVIDIA Linux driver version: 580.65.06
NonEmpty = Annotated[str, Field(min_length=1)]
TargetName = Annotated[str, Field(pattern=r"^sm\d+$")]
# A Hugging Face model_type (config.json's "model_type": glm_moe_dsa, deepseek_v3): an identifier, nothing a
# generated file could read as code or markup (no quote, no newline, no space)
ModelType = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")]
# A local version label naming a build variant: +cu128, +cu130, +cpu, +rocm6.4; +cu126.cf: conda-forge's own build
Variant = Annotated[str, Field(pattern=r"^(cu\d{3,4}(\.cf)?|cpu|rocm\d+(\.\d+)*)$")]
Engine = Literal["sglang", "vllm"]
StackName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")]
Timestamp = Annotated[str, Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")]
SignatureId = Annotated[str, Field(pattern=r"^[a-z0-9-]+$")]
Regex = Annotated[str, AfterValidator(_regex)]
Count = Annotated[int, Field(ge=0)]
Versions = Annotated[tuple[VersionStr, ...], Field(min_length=1)]
Names = Annotated[tuple[Name, ...], Field(min_length=1)]
TargetNames = Annotated[tuple[str, ...], Field(min_length=1)]
Globs = Annotated[tuple[NonEmpty, ...], Field(min_length=1)]
# Python identifiers as a module exports them (transformers' GenerationConfig): case kept, unlike Names
Identifiers = Annotated[tuple[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], ...], Field(min_length=1)]
TorchReleases = Annotated[tuple[VersionStr, ...], Field(min_length=2)]
# the rows' mappings are read-only views of the validated dicts; those a row may leave out default to empty (a
# factory in the dataclass, which pydantic does not show in the JSON Schema: said here)
_EMPTY = Field(json_schema_extra={"default": {}})
ProductPlatforms = Annotated[Mapping[NonEmpty, tuple[Platform, ...]], _EMPTY, AfterValidator(MappingProxyType)]
# release -> model types ([[model_types]]): every list non-empty
ModelTypesBy = Annotated[Mapping[VersionStr, Annotated[tuple[ModelType, ...], Field(min_length=1)]], _EMPTY,
                         AfterValidator(MappingProxyType)]
TorchPairs = Annotated[Mapping[VersionStr, SpecStr], Field(min_length=1), AfterValidator(MappingProxyType)]
CudartMajors = Annotated[Mapping[VersionStr, Annotated[int, Field(ge=0, le=99)]], _EMPTY,
                         AfterValidator(MappingProxyType)]
Pins = Annotated[Mapping[Name, VersionStr], Field(min_length=1), AfterValidator(MappingProxyType)]
Overrides = Annotated[Mapping[Name, VersionStr], _EMPTY, AfterValidator(MappingProxyType)]


class KernelGroup(BaseModel):
    """Kernels of a wheel's main modules that carry the same GPU code (:func:`glmcompat.model.gpu.kernel_groups`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kernels: Annotated[int, Field(ge=1)]
    code: tuple[Code, ...] = Field(min_length=1)
    example: NonEmpty  # one of them, by its (mangled) name


def _kernel_code(g: KernelGroup) -> gpu.KernelCode:
    return gpu.KernelCode(g.kernels, g.code, g.example)


# an [[arch_probe]] row's kernel group: validated as a KernelGroup, kept as a glmcompat.model.gpu.KernelCode
KernelGroupIn = Annotated[KernelGroup, AfterValidator(_kernel_code)]


# -- the checks spanning fields of one row -----------------------------------------------------------


def _target_ok(t: Target) -> Target:
    if t.platforms:
        extra = sorted(set(t.platforms) - set(t.products))
        missing = [p for p in t.products if p not in t.platforms]
        if extra:
            raise ValueError(f"platforms names {extra[0]!r}, which is not one of the products")
        if missing:
            raise ValueError(f"platforms does not say where product {missing[0]!r} ships")
        empty = [p for p, v in t.platforms.items() if not v]
        if empty:
            raise ValueError(f"platforms of product {empty[0]!r} is empty")
    return t


def _torch_ok(t: TorchBuild) -> TorchBuild:
    if t.cuda is None and (t.sass or t.ptx):
        raise ValueError("a CPU-only build (cuda absent) carries no GPU code: sass and ptx must be empty")
    return t


def _family_ok(f: FamilyRule) -> FamilyRule:
    extra = sorted(set(f.cudart) - set(f.pairs))
    if extra:
        raise ValueError(f"cudart names releases the row does not pair: {', '.join(extra)}")
    return f


def _arch_probe_ok(a: ArchProbe) -> ArchProbe:
    extra = sorted({c for g in a.kernel_code for c in g.code} - set(a.sass) - set(a.ptx))
    if extra:
        raise ValueError(f"kernel_code names code the row's sass/ptx do not list: {', '.join(extra)}")
    return a


def _signature_ok(s: Signature) -> Signature:
    if s.family is not None and s.family == s.id:
        raise ValueError(f"family {s.family!r} is the signature itself")
    if (s.family is None) != (s.family_why is None):
        raise ValueError("family and family_why go together: the family and why this cause is always a case of it")
    return s


# a field of an [[other_cause]] row's ``shows`` or ``remedy``: one of its pattern's named groups, filled from the match
OTHER_FIELD = re.compile(r"\{(\w+)\}")


def _other_cause_ok(o: OtherCause) -> OtherCause:
    groups = set(re.compile(o.pattern).groupindex)
    stray = sorted({f for text in (o.shows, o.remedy) for f in OTHER_FIELD.findall(text)} - groups)
    if stray:
        raise ValueError(f"{{{stray[0]}}} names no group of the pattern")
    return o


def _model_types_ok(m: ModelTypeReleases) -> ModelTypeReleases:
    if m.newest != m.harvested[-1]:
        raise ValueError(f"newest {m.newest!r} is not the last harvested release ({m.harvested[-1]!r})")
    stray = sorted(v for v in (*m.first, *m.removed) if v not in m.harvested)
    if stray:
        raise ValueError(f"{stray[0]!r} is not a harvested release")
    named = [t for ts in m.first.values() for t in ts]
    twice = sorted({t for t in named if named.count(t) > 1})
    if twice:
        raise ValueError(f"model type {twice[0]!r} is first known by two releases")
    return m


# The checks spanning fields of one row, by table (the rest of a row is checked by the types its fields name)
_ROW_CHECKS: dict[str, Any] = {"target": _target_ok, "torch": _torch_ok, "family": _family_ok,
                               "arch_probe": _arch_probe_ok, "model_types": _model_types_ok,
                               "signature": _signature_ok, "other_cause": _other_cause_ok}


def _lists_to_tuples(cls: Any, v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


# One TOML file of the matrix: a field per table (glmcompat.matrix.rows.Tables, the one declaration of the tables),
# each a tuple of its rows, validated by the types their fields name (resolved in this module: model_rebuild below)
# and by the table's row checks (above); then the file's schema version.
if TYPE_CHECKING:  # to a type checker, a model whose fields Tables types
    class _MatrixFile(BaseModel):
        pass
else:
    _MatrixFile = create_model(
        "MatrixFile",
        __config__=ConfigDict(extra="forbid", frozen=True),
        __validators__={"_lists_to_tuples": field_validator("*", mode="before")(classmethod(_lists_to_tuples))},
        **{t: (tuple[(Annotated[cls, AfterValidator(_ROW_CHECKS[t])] if t in _ROW_CHECKS else cls), ...], ())  # type: ignore[misc]
           for t, cls in ROWS.items()},
        schema_=(Literal[1], Field(alias="schema")),
    )


class MatrixFile(_MatrixFile, Tables):  # the fields are _MatrixFile's; Tables types them for a type checker
    """One TOML file of the matrix. Every table is optional; unknown tables are rejected."""


MatrixFile.model_rebuild(_types_namespace=globals())

TABLES = tuple(ROWS)


def dump(table: str, row: Fact, exclude_none: bool = False) -> dict[str, Any]:
    """A row as plain JSON data (:func:`glmcompat.matrix.rows.to_plain`)."""
    return to_plain(table, row, exclude_none)


class Matrix(Tables):
    """The whole matrix: the rows of every file (each table -- :class:`glmcompat.matrix.rows.Tables` -- a tuple of
    :mod:`glmcompat.matrix.rows` rows, in file order), with typed queries."""

    def __init__(self, files: tuple[str, ...] = (), **tables: tuple[Fact, ...]) -> None:
        unknown = sorted(set(tables) - set(TABLES))
        if unknown:
            raise TypeError(f"Matrix: unknown table {unknown[0]!r}")
        for t in TABLES:
            setattr(self, t, tuple(tables.get(t, ())))
        self.files = files
        self._view: Facts | None = None

    # -- targets ---------------------------------------------------------------------------------
    def targets(self) -> list[Target]:
        """All targets, by compute capability."""
        return sorted(self.target, key=lambda t: t.capability)

    def get_target(self, name: str) -> Target:
        """The target called ``name`` (``sm120``; ``sm_120`` and ``12.0`` are accepted too)."""
        try:
            return self.view().target(name)
        except InputError as e:
            raise MatrixError(e.message) from None

    # -- queries: the view (glmcompat.matrix.view.Facts) over the same rows ---------------------------
    def view(self) -> Facts:
        """The view the hot paths query (built once per Matrix, over the same row objects)."""
        if self._view is None:
            self._view = Facts({t: getattr(self, t) for t in TABLES})
        return self._view

    def kernel_for(self, package: str, version: str, platform: str = "x86_64") -> Kernel | None:
        """The kernel row of ``package==version`` (its ``platform`` wheel): the torch it was built for, its CUDA
        and GPU code."""
        return self.view().on(platform).kernel(canonicalize_name(package), version)

    def built_for(self, package: str, version: str, platform: str = "x86_64") -> str | None:
        """The torch version the extension ``package==version`` was built against, if known."""
        k = self.kernel_for(package, version, platform)
        return k.torch if k else None

    def plain(self) -> dict[str, Any]:
        """The rows as plain JSON-able data (what the JSON cache keeps and ``matrix show --json`` prints)."""
        return {t: [to_plain(t, r) for r in getattr(self, t)] for t in TABLES}


# ------------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------------


def locate_row(text: str, table: str, index: int, key: str | None) -> int | None:
    """1-based line of row ``index`` of ``[[table]]`` (and of ``key`` inside it), by scanning the text."""
    lines = text.splitlines()
    header = re.compile(r"^\s*\[\[\s*" + re.escape(table) + r"\s*\]\]")
    any_header = re.compile(r"^\s*\[")
    seen = -1
    for i, line in enumerate(lines):
        if header.match(line):
            seen += 1
            if seen == index:
                if key is None:
                    return i + 1
                keypat = re.compile(r"(^|[\s{,])\"?" + re.escape(key) + r"\"?\s*=")
                for j in range(i + 1, len(lines)):
                    if any_header.match(lines[j]) and not lines[j].lstrip().startswith("[\""):
                        break
                    if keypat.search(lines[j]):
                        return j + 1
                return i + 1
    if key is not None and index == -1:
        keypat = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
        for i, line in enumerate(lines):
            if keypat.match(line):
                return i + 1
    return None


def _quote(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


# The files parsed in this process, by their bytes' digest: a file validates the same wherever it lies, and its rows are
# immutable (frozen dataclasses, tuples, read-only mappings), so one parse serves every later read of the same bytes --
# ``matrix refresh`` and ``matrix add`` validate the whole matrix after each edit, and only the edited file changed.
# Bounded: the oldest entry goes first. A file that fails is parsed again (its error names the path it was read at).
_PARSED: BoundedMemo[bytes, tuple[MatrixFile, str]] = BoundedMemo(64)  # refresh parses from worker threads


def load_file(path: Path) -> tuple[MatrixFile, str]:
    """Parse and validate one matrix file; raise :class:`MatrixError` naming file, line and value."""
    raw = read_input(path, MatrixError, "a matrix file")
    key = hashlib.blake2b(raw, digest_size=20).digest()
    hit = _PARSED.get(key)
    if hit is None:
        hit = _PARSED.keep(key, _parse_file(str(path), raw))
    return hit


def _parse_file(p: str, raw: bytes) -> tuple[MatrixFile, str]:
    try:
        text = raw.decode("utf-8-sig")  # a UTF-8 byte-order mark (some editors write one) is dropped
    except UnicodeDecodeError as e:
        raise MatrixError(f"not UTF-8 text (byte {e.start})", path=p) from None
    data = toml_loads(text, MatrixError, p)
    try:
        return MatrixFile.model_validate(data), text
    except ValidationError as e:
        err = e.errors()[0]
        loc = [x for x in err["loc"] if not (isinstance(x, str) and x.startswith("function-"))]
        table = loc[0] if loc and isinstance(loc[0], str) else None
        index = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else -1
        key = next((x for x in reversed(loc[2:]) if isinstance(x, str)), None)
        if table is not None and index == -1:
            key = table
        line = locate_row(text, table, index, key) if table else None
        dotted = ".".join(str(x) for x in loc) or "(file)"
        if err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
            msg = f"unknown key {dotted!r}"
        elif err["type"] in ("missing", "missing_argument"):
            msg = f"missing key {dotted!r}"
        else:
            reason = err["msg"].removeprefix("Value error, ")
            if "input" in err and not isinstance(err["input"], dict | list):
                if repr(err["input"]) not in reason:
                    reason = f"{reason}: {_quote(err['input'])}"
            msg = f"{dotted}: {reason}"
        raise MatrixError(msg, path=p, line=line) from None


def _check_whole(rows: dict[str, list[tuple[Any, str, str, int]]]) -> None:
    """Cross-file checks. ``rows[table]`` holds (row, path, text, index in its file)."""

    def fail(msg: str, table: str, item: tuple[Any, str, str, int], key: str | None = None) -> None:
        _, path, text, idx = item
        raise MatrixError(msg, path=path, line=locate_row(text, table, idx, key))

    targets = {}
    for item in rows["target"]:
        t = item[0]
        if t.name in targets:
            fail(f"target {t.name!r} is defined twice", "target", item, "name")
        targets[t.name] = t
    # one kernel release -> one torch
    built: dict[tuple[str, Version, str], tuple[str, tuple[Any, str, str, int]]] = {}
    for item in rows["kernel"]:
        k = item[0]
        for v in k.versions:
            key = (k.package, Version(v), k.platform)
            if key in built and built[key][0] != k.torch:
                other = built[key][1]
                fail(
                    f"contradicting facts: {k.package} {v}{'' if k.platform == 'x86_64' else ' (' + k.platform + ')'} "
                    f"is mapped to torch {k.torch!r} here and to "
                    f"torch {built[key][0]!r} in {other[1]}",
                    "kernel",
                    item,
                    "torch",
                )
            built[key] = (k.torch, item)
    seen_torch: dict[tuple[Version, str | None, str], tuple[Any, str, str, int]] = {}
    for item in rows["torch"]:
        for v in item[0].versions:
            tkey = (Version(v), item[0].variant, item[0].platform)
            if tkey in seen_torch:
                what = f"+{item[0].variant} rows" if item[0].variant else "default-wheel rows"
                if item[0].platform != "x86_64":
                    what += f" on {item[0].platform}"
                fail(f"contradicting facts: torch {v!r} has two {what}", "torch", item, "versions")
            seen_torch[tkey] = item
    fam: dict[tuple[str, Version], str] = {}
    for item in rows["family"]:
        f = item[0]
        for v, spec in f.pairs.items():
            key2 = (f.package, Version(v))
            if key2 in fam and fam[key2] != spec:
                fail(f"contradicting facts: {f.package} {v!r} needs torch {fam[key2]!r} and {spec!r}", "family", item, v)
            fam[key2] = spec
    probes: dict[tuple[str, Version, Version, str], bool] = {}
    for item in rows["abi_probe"]:
        a = item[0]
        key3 = (a.package, Version(a.version), Version(a.torch), a.platform)
        if key3 in probes and probes[key3] != a.compatible:
            fail(f"contradicting facts: {a.package} {a.version} vs torch {a.torch} probed both ways", "abi_probe", item, "compatible")
        probes[key3] = a.compatible
    names: set[str] = set()
    for item in rows["stack"]:
        s = item[0]
        if s.name in names:
            fail(f"stack {s.name!r} is defined twice", "stack", item, "name")
        names.add(s.name)
        for t in s.targets:
            if targets and t not in targets:
                fail(f"stack {s.name!r} names unknown target {t!r}", "stack", item, "targets")
    for item in rows["target_requirement"]:
        for t in item[0].targets:
            if targets and t not in targets:
                fail(f"unknown target {t!r}", "target_requirement", item, "targets")
    ids: set[str] = set()
    for item in rows["signature"]:
        if item[0].id in ids:
            fail(f"signature {item[0].id!r} is defined twice", "signature", item, "id")
        ids.add(item[0].id)
    _check_families(rows["signature"], ids, fail)
    # a name belongs to one distribution: a module, an operator namespace, a C++ namespace listed once in its table
    for table, names_key in (("module", "modules"), ("op_namespace", "namespaces"), ("cxx_namespace", "namespaces")):
        listed: set[str] = set()
        for item in rows[table]:
            for name in getattr(item[0], names_key):
                if name in listed:
                    fail(f"{table} {name!r} is listed twice", table, item, names_key)
                listed.add(name)
    owned: set[str] = set()
    for item in rows["signature_package"]:
        sid = item[0].signature
        if sid in owned:
            fail(f"signature_package {sid!r} is defined twice", "signature_package", item, "signature")
        if ids and sid not in ids:
            fail(f"signature_package names unknown signature {sid!r}", "signature_package", item, "signature")
        owned.add(sid)
    # a cause outside packaging withholds signatures explain has, and is none of them
    for item in rows["other_cause"]:
        o = item[0]
        if o.id in ids:
            fail(f"other_cause {o.id!r} is a signature's id", "other_cause", item, "id")
        for sid in o.withholds:
            if ids and sid not in ids:
                fail(f"other_cause {o.id!r} withholds unknown signature {sid!r}", "other_cause", item, "withholds")


def _check_families(sigs: list[tuple[Any, str, str, int]], ids: set[str],
                    fail: Callable[[str, str, tuple[Any, str, str, int], str | None], None]) -> None:
    """A signature's ``family`` (the more general cause it is always a case of) is an existing signature id, one per id
    (rows sharing an id agree), and following families from any id never comes back to it (no cycle)."""
    family: dict[str, tuple[str, tuple[Any, str, str, int]]] = {}
    for item in sigs:
        s = item[0]
        if s.family is None:
            continue
        if s.family not in ids:
            fail(f"signature {s.id!r} names unknown family {s.family!r}", "signature", item, "family")
        if s.id in family and family[s.id][0] != s.family:
            fail(f"signature {s.id!r} has two families: {family[s.id][0]!r} and {s.family!r}", "signature", item,
                 "family")
        family[s.id] = (s.family, item)
    for start, (_, item) in family.items():
        seen, at = [start], family[start][0]
        while at in family:
            if at in seen:
                fail(f"signature {start!r}: family cycle {' -> '.join([*seen[seen.index(at):], at])}", "signature",
                     item, "family")
            seen.append(at)
            at = family[at][0]


def load_matrix(paths: Sequence[str | Path] | None = None) -> Matrix:
    """Load and validate the matrix from ``paths`` (files or directories; default: the shipped one).

    Raises :class:`~glmcompat.model.errors.MatrixError` (one line: file, line, offending value).
    """
    files = matrix_files(paths)
    rows: dict[str, list[tuple[Any, str, str, int]]] = {t: [] for t in TABLES}
    for f in files:
        mf, text = load_file(f)
        for table in TABLES:
            for i, row in enumerate(getattr(mf, table)):
                rows[table].append((row, str(f), text, i))
    _check_whole(rows)
    return Matrix(**{t: tuple(r[0] for r in rows[t]) for t in TABLES}, files=tuple(str(f) for f in files))


def matrix_json_schema() -> dict[str, Any]:
    """JSON Schema of one matrix file."""
    schema = MatrixFile.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "glmcompat matrix file"
    return schema


__all__ = ["TABLES", "Matrix", "MatrixFile", "load_file", "load_matrix", "matrix_json_schema"]
