"""The matrix's rows as frozen, slotted dataclasses: what :class:`glmcompat.matrix.view.Facts` answers with.

One class per table, with exactly the fields of its pydantic model in :mod:`glmcompat.matrix.schema` (the test
``tests/test_rows.py`` holds the two equal): lists are tuples, and the genuine mappings (a target's platforms, a
family's pairs, a stack's pins and overrides) read-only :class:`types.MappingProxyType` views. A field the TOML may
leave out has the validated model's default. Standard library only: the warm paths import this module, never
pydantic.

The JSON cache (:mod:`glmcompat.matrix.load`) keeps each table's rows as lists of values in the order of
:data:`FIELDS`; :func:`from_values` turns them back into rows, :func:`from_plain` turns a row of the validated
matrix's plain dump (``Matrix.plain()``, a dict per row) into one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from glmcompat.model.gpu import KernelCode

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the warm paths do not import typing for this module
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


def _empty_ints() -> Mapping[str, int]:
    return MappingProxyType({})


def _empty_platforms() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Fact:
    """What every row carries: how it is known (``evidence``) and where it was read (``source``). Also the
    evidence of an answer no single row holds (a torch release is ABI-equal to itself)."""

    evidence: str
    source: str


@dataclass(frozen=True, slots=True)
class Target(Fact):
    """A GPU target: its compute capability, products (and the platforms each ships on), shared memory, minimum CUDA."""

    name: str
    compute_capability: str
    products: tuple[str, ...]
    min_cuda: str
    # product -> the platforms it ships on; empty: every product on x86_64
    platforms: Mapping[str, tuple[str, ...]] = field(default_factory=_empty_platforms)
    smem_per_block_optin: int | None = None


@dataclass(frozen=True, slots=True)
class TorchBuild(Fact):
    """torch wheels of some releases (one build ``variant``, one ``platform``): their CUDA runtime and GPU code."""

    versions: tuple[str, ...]
    sass: tuple[str, ...]
    variant: str | None = None
    platform: str = "x86_64"
    cuda: str | None = None  # None: a CPU-only build
    ptx: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FamilyRule(Fact):
    """torchvision / torchaudio releases -> the torch specifier each was built for."""

    package: str
    pairs: Mapping[str, str]  # release -> the torch specifier it was built for
    failure: str | None = None
    cudart: Mapping[str, int] = field(default_factory=_empty_ints)  # release -> libcudart major its index wheel links
    on_mismatch: str = "error"  # the severity of a proven break (a failed load that only some uses reach: "warning")
    consequence: str | None = None  # what a failed load does, said in a proven break's finding


@dataclass(frozen=True, slots=True)
class Kernel(Fact):
    """A compiled extension's releases: the torch they were built against, their CUDA runtime and GPU code."""

    package: str
    versions: tuple[str, ...]
    torch: str
    variant: str | None = None
    platform: str = "x86_64"
    cuda: str | None = None
    sass: tuple[str, ...] | None = None  # None: its GPU code is not curated
    ptx: tuple[str, ...] | None = None
    on_mismatch: str = "error"
    consequence: str | None = None


@dataclass(frozen=True, slots=True)
class AbiProbe(Fact):
    """A measured verdict: an extension's undefined torch symbols against what a torch exports."""

    package: str
    version: str
    torch: str
    compatible: bool
    missing: int
    platform: str = "x86_64"
    symbols: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ArchProbe(Fact):
    """A measured GPU-code list, read from a wheel's fatbins (and, where read, its kernels grouped by their code)."""

    package: str
    version: str
    sass: tuple[str, ...]
    variant: str | None = None
    platform: str = "x86_64"
    ptx: tuple[str, ...] = ()
    kernel_code: tuple[KernelCode, ...] = ()


@dataclass(frozen=True, slots=True)
class AbiEqual(Fact):
    """torch releases that export the same symbols."""

    torch: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Compiled(Fact):
    """Compiled torch extensions outside the tracked set."""

    packages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Rename(Fact):
    """A package published under a new name from some release on."""

    old: str
    new: str


@dataclass(frozen=True, slots=True)
class PrimaryModules(Fact):
    """The extension modules (glob patterns) whose GPU code decides for a package."""

    package: str
    modules: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Jit(Fact):
    """A package that JIT-compiles its kernels (no torch C++ ABI to match)."""

    package: str
    versions: str  # a specifier


@dataclass(frozen=True, slots=True)
class EqualVersion(Fact):
    """Two packages that must carry the same version."""

    packages: tuple[str, str]


@dataclass(frozen=True, slots=True)
class Requires(Fact):
    """While ``package`` is in ``versions``, ``requires`` must hold as well."""

    package: str
    versions: str  # a specifier
    requires: str  # a requirement


@dataclass(frozen=True, slots=True)
class ModelSupport(Fact):
    """The transformers (and engine) releases that know a model type."""

    model_type: str
    transformers: str
    architectures: tuple[str, ...] = ()
    sglang: str | None = None
    vllm: str | None = None
    failure: str | None = None
    sglang_config: str | None = None
    vllm_config: str | None = None

    def for_engine(self, engine: str) -> str | None:
        """The specifier of the ``engine`` (sglang, vllm) releases that serve the model (None: none known)."""
        return self.sglang if engine == "sglang" else self.vllm if engine == "vllm" else None

    def config_in(self, engine: str) -> str | None:
        """The ``engine`` releases that carry their own config class for the model type (None: none known), so that
        transformers need not know it there."""
        return self.sglang_config if engine == "sglang" else self.vllm_config if engine == "vllm" else None


@dataclass(frozen=True, slots=True)
class TargetRequirement(Fact):
    """A fix a target needs (a package specifier), and why."""

    targets: tuple[str, ...]
    package: str
    specifier: str
    reason: str
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class Release(Fact):
    """An engine release's own requirements (its METADATA)."""

    package: str
    version: str
    requires: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Stack(Fact):
    """A named set of pins for some targets and models, around one serving engine."""

    name: str
    description: str
    targets: tuple[str, ...]
    pins: Mapping[str, str]
    engine: str = "sglang"
    models: tuple[str, ...] = ()
    python: str = ">=3.11,<3.13"
    overrides: Mapping[str, str] = field(default_factory=_empty)
    exclude_newer: str | None = None


@dataclass(frozen=True, slots=True)
class Signature(Fact):
    """A known failure: the error text that shows it, its cause and one remedy."""

    id: str
    pattern: str
    cause: str
    remedy: str


# table -> its row class, in the order of the matrix's tables (glmcompat.matrix.schema.TABLES)
ROWS: dict[str, type[Fact]] = {
    "target": Target,
    "torch": TorchBuild,
    "family": FamilyRule,
    "kernel": Kernel,
    "abi_probe": AbiProbe,
    "arch_probe": ArchProbe,
    "abi_equal": AbiEqual,
    "compiled": Compiled,
    "rename": Rename,
    "primary_modules": PrimaryModules,
    "jit": Jit,
    "equal_version": EqualVersion,
    "requires": Requires,
    "model": ModelSupport,
    "target_requirement": TargetRequirement,
    "release": Release,
    "stack": Stack,
    "signature": Signature,
}

# table -> its row class's fields, in order (the order of a cached row's values)
FIELDS: dict[str, tuple[str, ...]] = {t: tuple(f.name for f in fields(cls)) for t, cls in ROWS.items()}


def _opt_tuple(v: list[str] | None) -> tuple[str, ...] | None:
    return None if v is None else tuple(v)


def _kernel_code(v: list[Mapping[str, Any]]) -> tuple[KernelCode, ...]:
    return tuple(KernelCode(g["kernels"], tuple(g["code"]), g["example"]) for g in v)


def _mapping_of_tuples(v: dict[str, list[str]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({k: tuple(x) for k, x in v.items()})


# table -> {field: how its JSON value (lists, objects) becomes the row's (tuples, read-only mappings); builtins
# where they do (no Python frame per value)}
_CONVERT: dict[str, dict[str, Callable[[Any], object]]] = {
    "target": {"products": tuple, "platforms": _mapping_of_tuples},
    "torch": {"versions": tuple, "sass": tuple, "ptx": tuple},
    "family": {"pairs": MappingProxyType, "cudart": MappingProxyType},
    "kernel": {"versions": tuple, "sass": _opt_tuple, "ptx": _opt_tuple},
    "abi_probe": {"symbols": tuple},
    "arch_probe": {"sass": tuple, "ptx": tuple, "kernel_code": _kernel_code},
    "abi_equal": {"torch": tuple},
    "compiled": {"packages": tuple},
    "primary_modules": {"modules": tuple},
    "equal_version": {"packages": tuple},
    "model": {"architectures": tuple},
    "target_requirement": {"targets": tuple},
    "release": {"requires": tuple},
    "stack": {"targets": tuple, "models": tuple, "pins": MappingProxyType, "overrides": MappingProxyType},
}
# table -> (position in FIELDS, converter), for from_values
_AT: dict[str, tuple[tuple[int, Callable[[Any], object]], ...]] = {
    t: tuple((FIELDS[t].index(k), fn) for k, fn in conv.items()) for t, conv in _CONVERT.items()}


def from_values(table: str, rows: list[list[Any]]) -> tuple[Fact, ...]:
    """The rows of ``table`` whose field values (JSON data, in :data:`FIELDS` order) are ``rows`` (the lists are
    consumed). TypeError or ValueError when they do not fit."""
    cls, n, conv = ROWS[table], len(FIELDS[table]), _AT.get(table, ())
    out = []
    for values in rows:
        if len(values) != n:
            raise ValueError(f"a [[{table}]] row has {n} fields, not {len(values)}")
        for i, fn in conv:
            values[i] = fn(values[i])
        out.append(cls(*values))
    return tuple(out)


def from_plain(table: str, row: Mapping[str, Any]) -> Fact:
    """The row of ``table`` a plain dict holds (``Matrix.plain()``'s rows; a key left out takes its default)."""
    conv = _CONVERT.get(table, {})
    kw: dict[str, Any] = {k: (conv[k](v) if k in conv else v) for k, v in row.items()}
    return ROWS[table](**kw)


def to_values(table: str, row: Mapping[str, Any]) -> list[Any]:
    """A plain row's values in :data:`FIELDS` order: what the JSON cache keeps (every key present, as
    ``Matrix.plain()`` writes them)."""
    return [row[k] for k in FIELDS[table]]
