"""The matrix's rows, declared once: one frozen, slotted dataclass per table.

These classes are what loading validates into, what :class:`glmcompat.matrix.view.Facts` answers with and what
refresh and curation read. Lists are tuples, and the genuine mappings (a target's platforms, a family's pairs, a
stack's pins and overrides) read-only :class:`types.MappingProxyType` views. Standard library only: the warm paths
import this module, never pydantic.

Validation: the field annotations name the checked types of :mod:`glmcompat.matrix.schema` (``VersionStr``,
``SpecStr``, ``Name`` ...). They stay strings here (``from __future__ import annotations``); to a type checker
they are the plain Python types declared under ``TYPE_CHECKING`` below, and pydantic resolves them in
:mod:`glmcompat.matrix.schema`'s namespace when it builds the file validator (``MatrixFile``), which also adds
the checks spanning fields of one row. ``__pydantic_config__`` rejects unknown keys.

The JSON cache (:mod:`glmcompat.matrix.load`) keeps each table's rows as lists of values in the order of
:data:`FIELDS`; :func:`from_values` turns them back into rows, :func:`to_plain` turns a row into plain JSON data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from glmcompat.model.gpu import KernelCode, parse_capability

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the warm paths do not import typing for this module
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator
    from typing import Any

    from packaging.requirements import Requirement

    # What the checked types of glmcompat.matrix.schema are to a type checker (pydantic reads them there)
    Evidence = str
    NonEmpty = str
    VersionStr = str
    SpecStr = str
    ReqStr = str
    Name = str
    Code = str
    CudaStr = str
    DriverStr = str
    Capability = str
    TargetName = str
    ModelType = str
    Variant = str
    Platform = str
    Severity = str
    Engine = str
    StackName = str
    Timestamp = str
    SignatureId = str
    Regex = str
    Count = int
    Versions = tuple[str, ...]
    Names = tuple[str, ...]
    TargetNames = tuple[str, ...]
    Globs = tuple[str, ...]
    Identifiers = tuple[str, ...]
    TorchReleases = tuple[str, ...]
    ProductPlatforms = Mapping[str, tuple[str, ...]]
    ModelTypesBy = Mapping[str, tuple[str, ...]]
    TorchPairs = Mapping[str, str]
    CudartMajors = Mapping[str, int]
    Pins = Mapping[str, str]
    Overrides = Mapping[str, str]
    KernelGroupIn = KernelCode


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


def _empty_ints() -> Mapping[str, int]:
    return MappingProxyType({})


def _empty_platforms() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({})


def _empty_model_types() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Fact:
    """A row of the matrix: what is claimed, how it is known (``evidence``) and where it was read (``source``).
    Also the evidence of an answer no single row holds (a torch release is ABI-equal to itself)."""

    __pydantic_config__ = {"extra": "forbid"}  # pydantic's config of these dataclasses: unknown keys are rejected

    evidence: Evidence
    source: NonEmpty


@dataclass(frozen=True, slots=True)
class Target(Fact):
    """A GPU target: what a card is and which GPU code runs on it (see :mod:`glmcompat.model.gpu`)."""

    name: TargetName
    compute_capability: Capability
    products: tuple[NonEmpty, ...]
    min_cuda: CudaStr
    # product -> the host platforms it ships on (H100: x86_64, GH200: aarch64); empty: x86_64 for every product
    platforms: ProductPlatforms = field(default_factory=_empty_platforms)
    smem_per_block_optin: int | None = None

    @property
    def ships_on(self) -> tuple[str, ...]:
        """The platforms some product of this target ships on, x86_64 first."""
        have = {p for v in self.platforms.values() for p in v} if self.platforms else {"x86_64"}
        return tuple(p for p in ("x86_64", "aarch64") if p in have)

    @property
    def capability(self) -> tuple[int, int]:
        return parse_capability(self.compute_capability)


@dataclass(frozen=True, slots=True)
class TorchBuild(Fact):
    """torch wheels for some versions: their CUDA runtime and GPU code. ``variant`` None: the default
    wheels on the package index; else the local label of a build on PyTorch's own index (``cu128``)."""

    versions: Versions
    sass: tuple[Code, ...]
    variant: Variant | None = None
    platform: Platform = "x86_64"
    cuda: CudaStr | None = None  # None: a CPU-only build (no libtorch_cuda.so; torch's default aarch64 wheels to 2.10.0)
    ptx: tuple[Code, ...] = ()


@dataclass(frozen=True, slots=True)
class FamilyRule(Fact):
    """torchvision / torchaudio release -> the torch requirement it was built for."""

    package: Name
    pairs: TorchPairs  # release -> the torch specifier it was built for
    failure: str | None = None
    # release -> the CUDA runtime major its index wheel links (DT_NEEDED libcudart.so.N; 0: none), read from the wheel
    cudart: CudartMajors = field(default_factory=_empty_ints)
    # a proven break (a probe's missing symbols) of a package whose failed load only some uses reach is a warning
    # that says what fails (torchcodec: only video and audio decoding imports it); default: an error
    on_mismatch: Severity = "error"
    consequence: str | None = None  # what a failed load does, said in a proven break's finding


@dataclass(frozen=True, slots=True)
class Kernel(Fact):
    """A compiled extension release tied to the torch C++ ABI."""

    package: Name
    versions: Versions
    torch: VersionStr
    variant: Variant | None = None  # a labelled build (sgl-kernel 0.3.21+cu130); None: the index's wheel
    platform: Platform = "x86_64"  # the wheel this row is about (an aarch64 wheel is a separate build)
    cuda: CudaStr | None = None
    sass: tuple[Code, ...] | None = None  # None: its GPU code is not curated
    ptx: tuple[Code, ...] | None = None
    on_mismatch: Severity = "error"
    consequence: str | None = None


@dataclass(frozen=True, slots=True)
class AbiProbe(Fact):
    """A measured verdict: the extension's undefined torch symbols vs what a torch exports."""

    package: Name
    version: VersionStr
    torch: VersionStr
    compatible: bool
    missing: Count
    platform: Platform = "x86_64"  # both wheels' (the extension's and torch's)
    symbols: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ArchProbe(Fact):
    """A measured GPU-code list read from a wheel's fatbins; ``kernel_code``, where read, its kernels grouped by
    the code they carry (a target runs the wheel only where it runs every group meant for newer GPUs:
    :func:`glmcompat.model.gpu.uncovered`)."""

    package: Name
    version: VersionStr
    sass: tuple[Code, ...]
    variant: Variant | None = None
    platform: Platform = "x86_64"
    ptx: tuple[Code, ...] = ()
    kernel_code: tuple[KernelGroupIn, ...] = ()


@dataclass(frozen=True, slots=True)
class AbiEqual(Fact):
    """torch releases that export the same symbols (an extension built against one loads next to the others)."""

    torch: TorchReleases


@dataclass(frozen=True, slots=True)
class Compiled(Fact):
    """Compiled torch extensions outside the tracked set (flash-attn, transformer-engine, ...): judged
    only as warnings that point at ``glmcompat verify``, unless their label names another torch."""

    packages: Names


@dataclass(frozen=True, slots=True)
class SetupTorch(Fact):
    """A package whose setup.py imports torch at its top (to build its extension with torch.utils.cpp_extension) and
    whose build requirements do not declare torch, at the releases its ``source`` reads: an isolated build of it (pip's
    or uv's PEP 517 build environment) fails at that import, whatever else the build would do."""

    package: Name


@dataclass(frozen=True, slots=True)
class Rename(Fact):
    """A package published under a new name from some release on (sgl-kernel -> sglang-kernel). ``checkers``: a program
    that looks the distribution up by its name at start-up (importlib.metadata.version in a version check) -> its first
    release that looks up the new name, where an older one's failed lookup of the old name reads as that check being
    stale (the old name is no longer what an install brings); empty where the old name's check failing means it is
    missing."""

    old: Name
    new: Name
    checkers: Overrides = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class PrimaryModules(Fact):
    """The extension modules whose GPU code decides whether a wheel runs on a target (glob patterns)."""

    package: Name
    modules: Globs


@dataclass(frozen=True, slots=True)
class Jit(Fact):
    """A package that JIT-compiles its kernels and does not link the torch C++ ABI."""

    package: Name
    versions: SpecStr


@dataclass(frozen=True, slots=True)
class EqualVersion(Fact):
    """Two packages that must carry the same version."""

    packages: tuple[Name, Name]


@dataclass(frozen=True, slots=True)
class Requires(Fact):
    """When ``package`` is in ``versions``, ``requires`` must hold as well."""

    package: Name
    versions: SpecStr
    requires: ReqStr


@dataclass(frozen=True, slots=True)
class ModelSupport(Fact):
    """The transformers (and engine) releases that know a model type."""

    model_type: ModelType
    transformers: SpecStr
    architectures: tuple[str, ...] = ()
    sglang: SpecStr | None = None
    vllm: SpecStr | None = None
    failure: str | None = None
    # The engine releases that register their own config class for the model type (its _CONFIG_REGISTRY or a config
    # module declaring the model_type): on those, transformers need not know the model type.
    sglang_config: SpecStr | None = None
    vllm_config: SpecStr | None = None

    def for_engine(self, engine: str) -> str | None:
        """The specifier of the ``engine`` (sglang, vllm) releases that serve the model (None: none known)."""
        return self.sglang if engine == "sglang" else self.vllm if engine == "vllm" else None

    def config_in(self, engine: str) -> str | None:
        """The ``engine`` releases that carry their own config class for the model type (None: none known), so that
        transformers need not know it there."""
        return self.sglang_config if engine == "sglang" else self.vllm_config if engine == "vllm" else None


@dataclass(frozen=True, slots=True)
class ModelTypeReleases(Fact):
    """Every model type (config.json's ``model_type``) a library's releases know, by release: ``first``, release ->
    the model types it is the first of ``harvested`` to know; ``removed``, release -> those the harvested release
    before it knew and it no longer does. A model type in no ``first`` list is known by no release up to ``newest``
    (a checkpoint's own remote-code type, or a wrong config.json). Harvested by
    scripts/harvest_transformers_model_types.py; read through :meth:`glmcompat.matrix.view.Facts.model_type_known`."""

    package: Name
    newest: VersionStr
    harvested: Versions
    first: ModelTypesBy
    removed: ModelTypesBy = field(default_factory=_empty_model_types)


@dataclass(frozen=True, slots=True)
class TargetRequirement(Fact):
    """A fix a target needs (a package specifier), and why."""

    targets: TargetNames
    package: Name
    specifier: SpecStr
    reason: NonEmpty
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class Release(Fact):
    """An engine release's own requirements (its METADATA)."""

    package: Name
    version: VersionStr
    requires: tuple[ReqStr, ...]

    def requirements(self) -> Iterator[Requirement]:
        """Its requirements as packaging reads them (one it cannot read is passed over: loading validated each)."""
        from packaging.requirements import InvalidRequirement, Requirement  # lazy: this module is standard library only

        for text in self.requires:
            try:
                yield Requirement(text)
            except InvalidRequirement:
                continue


@dataclass(frozen=True, slots=True)
class Stack(Fact):
    """A named set of pins for some targets and models, around one serving engine."""

    name: StackName
    description: NonEmpty
    targets: TargetNames
    pins: Pins
    engine: Engine = "sglang"  # the serving engine; its package is the set's root
    models: tuple[ModelType, ...] = ()
    python: SpecStr = ">=3.11,<3.13"
    overrides: Overrides = field(default_factory=_empty)
    exclude_newer: Timestamp | None = None


@dataclass(frozen=True, slots=True)
class Signature(Fact):
    """A known failure: the error text that shows it, its cause and one remedy."""

    id: SignatureId
    pattern: Regex
    cause: NonEmpty
    remedy: NonEmpty
    # the more general cause this one is always a case of (is-a, for every log this signature reads: torch-arch-unsupported
    # is a no-kernel-image), an existing signature id; explain names it beside this id (one vocabulary, issue 38).
    # ``family_why`` says why the is-a holds universally (required with ``family``)
    family: SignatureId | None = None
    family_why: NonEmpty | None = None


@dataclass(frozen=True, slots=True)
class OtherCause(Fact):
    """A failure whose cause lies outside packaging and compatibility, as the log shows it (the compiler killed for
    memory, a misspelled LD_LIBRARY_PATH, an index pip ignored): ``pattern`` reads the line that shows it, its named
    groups filling the ``{group}`` fields of ``shows`` (what the log shows) and ``remedy`` (the usual one). Where a log
    holds such a line, explain names no signature for that line, nor any signature of ``withholds`` (those that read the
    failure it explains: the failed build step after the killed compiler), and says what the log shows instead. Rows
    may share an ``id`` (one cause, several raise sites)."""

    id: SignatureId
    pattern: Regex
    shows: NonEmpty
    remedy: NonEmpty
    withholds: tuple[SignatureId, ...] = ()


@dataclass(frozen=True, slots=True)
class CudaDriver(Fact):
    """A CUDA toolkit release and the NVIDIA Linux driver it needs: ``driver``, the toolkit's own minimum (NVIDIA's
    release notes, "CUDA Toolkit and Corresponding Driver Versions"), and ``minor_compat``, the minimum on which a
    build for it still runs through minor-version compatibility (the same for every release of a major; PTX JIT
    excepted: PTX needs a driver at least as new as ``driver``). ``forward_compat``: a data-center GPU runs it on an
    older driver through NVIDIA's cuda-compat package."""

    release: CudaStr
    driver: DriverStr
    minor_compat: DriverStr
    forward_compat: bool = False


@dataclass(frozen=True, slots=True)
class DriverApi(Fact):
    """The CUDA driver API functions (exports of the NVIDIA driver's libcuda.so.1) that CUDA ``release`` added, by
    their names without a _vN revision (the toolkit's cudaTypedefs.h, scripts/cuda_driver_api.py): a driver older
    than ``release`` does not export them."""

    release: CudaStr
    functions: Globs


@dataclass(frozen=True, slots=True)
class NvidiaLibrary(Fact):
    """An NVIDIA CUDA library that NVIDIA's nvidia-* wheels ship (``wheel``, with the CUDA major as its -cuNN suffix, in
    site-packages/nvidia/``folder``/lib): its soname's stem (``libcublasLt``), the prefixes of the C functions it
    exports (``symbols``: cublasLt) and the names of its symbol-version nodes (``nodes``: libcublasLt.so.12), so that a
    loader error on one of its symbols in another library names the owner (issue 38); ``cuda_soname`` where the
    soname's number is the CUDA major (libcublas.so.12 of CUDA 12, shipped by nvidia-cublas-cu12)."""

    library: NonEmpty
    symbols: Globs
    nodes: Globs
    wheel: Name
    folder: NonEmpty
    cuda_soname: bool = False  # the soname's number is the CUDA major (libcublas.so.12: CUDA 12, nvidia-cublas-cu12)


@dataclass(frozen=True, slots=True)
class NvidiaSoname(Fact):
    """One soname major of an NVIDIA library (``library``, a glob of its soname's stem: libcufft, libnpp*) and the CUDA
    majors whose toolkits and nvidia-* wheels ship it (``cuda``), with those wheels (``wheels``): a library that numbers
    its own releases says nothing of CUDA by its number alone (libcufft.so.10 is CUDA 10.1 to 11.8's, libcufft.so.11
    CUDA 12's; libcurand.so.10 every CUDA from 10.1 to 13), which these rows read from the wheels' files. ``dlls``: the
    Windows names of the same libraries at that major (the win_amd64 wheels' nvidia/<folder>/bin/*.dll: cublas64_11.dll
    is libcublas.so.11, cudart64_110.dll libcudart.so.11.0, cudnn_ops_infer64_8.dll libcudnn_ops_infer.so.8)."""

    library: NonEmpty
    major: NonEmpty
    cuda: Versions
    wheels: tuple[Name, ...] = ()
    dlls: tuple[NonEmpty, ...] = ()


@dataclass(frozen=True, slots=True)
class Export(Fact):
    """Public names of a companion's top-level ``module`` that its release ``since`` first exports (its wheel's
    ``__init__.py``; since = the oldest release read: there or earlier), and ``until``, the first release without them
    where the wheels tell it (scripts/harvest_exports.py): an import of one fails on a release outside that range."""

    package: Name
    module: NonEmpty
    since: VersionStr
    names: Identifiers
    until: VersionStr | None = None


@dataclass(frozen=True, slots=True)
class ModulePackage(Fact):
    """Top-level modules (a path component under site-packages, a module a frame or an import names) and the
    distribution that ships them (its wheel's top_level.txt / RECORD); a module no row lists names the distribution of
    its own name (``_`` read as ``-``)."""

    package: Name
    modules: tuple[NonEmpty, ...]


@dataclass(frozen=True, slots=True)
class OpNamespace(Fact):
    """torch.ops namespaces (``torch.ops.NS.op``, ``operator NS::op``) and the distribution that registers them."""

    package: Name
    namespaces: tuple[NonEmpty, ...]


@dataclass(frozen=True, slots=True)
class CxxNamespace(Fact):
    """C++ namespaces a native library prints in its errors and the distribution whose code they are; ``package`` None:
    a language's, a header library's or a helper's namespaces (``std::``, ``detail::``), which name no package."""

    namespaces: tuple[NonEmpty, ...]
    package: Name | None = None
    hosts: tuple[Name, ...] = ()  # package None: the distributions that ship a namespace several share (xla::, tsl::)
    # package None: the native library (no Python distribution ships it) whose C++ API the namespace is (MPI:: is the MPI
    # C++ bindings' library, Open MPI's libmpi_cxx.so): an undefined symbol of it is a build not linked against it
    library: NonEmpty | None = None


@dataclass(frozen=True, slots=True)
class SignaturePackage(Fact):
    """The package a signature names by itself (its text is that package's own), where the log's paths may name
    another."""

    signature: SignatureId
    package: Name


@dataclass(frozen=True, slots=True)
class StdlibRemoved(Fact):
    """A module or name of the standard library (``name``: ``imp``, ``time.clock``, ``collections``: the ABC aliases) that
    CPython release ``removed`` took out (its "What's New" page, or the PEP that removed it), and what replaces it
    (``instead``): old code that uses it fails on that release and later (python-stdlib-removed)."""

    name: NonEmpty
    removed: VersionStr
    instead: NonEmpty


@dataclass(frozen=True, slots=True)
class KeywordRemoved(Fact):
    """Keyword arguments of a companion's callable (``callable``: ``Trainer.__init__``, as CPython 3.10+ names it in
    "<callable>() got an unexpected keyword argument 'k'") that release ``until`` of ``package`` (its top-level
    ``module``) took out (the project's changelog or upgrade guide): code written against an older release passes
    them and fails on that release and later (companion-api-removed)."""

    package: Name
    module: NonEmpty
    callable: NonEmpty
    keywords: Identifiers
    until: VersionStr


@dataclass(frozen=True, slots=True)
class CudaArch(Fact):
    """A GPU architecture as nvcc and ptxas name it (``arch``: ``80``, ``90a``, ``120f``) and the CUDA toolkits that know it
    (NVIDIA's CUDA toolkit release notes): ``first``, the first whose nvcc builds code for it; ``last``, the last whose
    nvcc still knows it where a later one dropped it; ``ptxas``, the first whose ptxas knows it, where a row says so."""

    arch: NonEmpty
    first: CudaStr | None = None
    last: CudaStr | None = None
    ptxas: CudaStr | None = None


@dataclass(frozen=True, slots=True)
class GpuProduct(Fact):
    """NVIDIA's GPU products of one compute capability, named as NVIDIA's CUDA GPU compute-capability lists name them
    (``GeForce GTX 1080 Ti``, ``Tesla P40``, ``NVIDIA RTX A6000``): what a log's GPU name says of its architecture where
    no [[target]] row lists the product (a GPU glmcompat locks nothing for)."""

    compute_capability: Capability
    products: tuple[NonEmpty, ...]


@dataclass(frozen=True, slots=True)
class GccProgram(Fact):
    """A program gcc's driver runs (``program``: ``cc1plus``, ``collect2``, ``as``), what it is (``what``) and the package
    that installs it on Debian/Ubuntu (``apt``) and on Fedora/RHEL (``dnf``): a build whose compiler cannot run it lacks
    that package (build-tool-missing)."""

    program: NonEmpty
    what: NonEmpty
    apt: NonEmpty
    dnf: NonEmpty


@dataclass(frozen=True, slots=True)
class TorchPython(Fact):
    """The CPython versions (``3.10``; ``3.13t`` free-threaded) one torch release ships wheels for on one platform
    (``os``: linux-x86_64, linux-aarch64, windows-x86_64, macos-arm64, macos-x86_64), read from the cpXY tags of its
    wheel filenames on the index (scripts/harvest_torch_pythons.py): a Python none of them names cannot install it."""

    release: VersionStr
    os: NonEmpty
    pythons: tuple[NonEmpty, ...]


@dataclass(frozen=True, slots=True)
class NcclCheck(Fact):
    """The lines of one source ``file`` of an NCCL ``release`` that check a CUDA call (CUDACHECK, CUCHECK and their GOTO
    forms; NCCL's WARN "Cuda failure ..." names that file and line), and of those the lines that launch NCCL's own
    kernel (ncclLaunchKernel's cuLaunchKernel / cuLaunchKernelEx), read at each release tag of NVIDIA/nccl
    (scripts/harvest_nccl_checks.py): a failure's file:line tells which releases could have printed it, and whether it
    was the kernel launch."""

    release: VersionStr
    file: NonEmpty
    checks: tuple[int, ...]
    launches: tuple[int, ...] = ()


class Tables:
    """The matrix's tables, declared once: each table's name, its row class and its place in the order of the tables.
    Everything else is derived from this class: :data:`ROWS` (and so :data:`FIELDS` and ``schema.TABLES``), the
    file validator's fields (``schema.MatrixFile``) and the whole matrix's attributes (``schema.Matrix``, a
    subclass)."""

    target: tuple[Target, ...]
    torch: tuple[TorchBuild, ...]
    family: tuple[FamilyRule, ...]
    kernel: tuple[Kernel, ...]
    abi_probe: tuple[AbiProbe, ...]
    arch_probe: tuple[ArchProbe, ...]
    abi_equal: tuple[AbiEqual, ...]
    compiled: tuple[Compiled, ...]
    setup_torch: tuple[SetupTorch, ...]
    rename: tuple[Rename, ...]
    primary_modules: tuple[PrimaryModules, ...]
    jit: tuple[Jit, ...]
    equal_version: tuple[EqualVersion, ...]
    requires: tuple[Requires, ...]
    model: tuple[ModelSupport, ...]
    model_types: tuple[ModelTypeReleases, ...]
    target_requirement: tuple[TargetRequirement, ...]
    release: tuple[Release, ...]
    stack: tuple[Stack, ...]
    signature: tuple[Signature, ...]
    other_cause: tuple[OtherCause, ...]
    cuda: tuple[CudaDriver, ...]
    driver_api: tuple[DriverApi, ...]
    nvidia_library: tuple[NvidiaLibrary, ...]
    nvidia_soname: tuple[NvidiaSoname, ...]
    export: tuple[Export, ...]
    module: tuple[ModulePackage, ...]
    op_namespace: tuple[OpNamespace, ...]
    cxx_namespace: tuple[CxxNamespace, ...]
    signature_package: tuple[SignaturePackage, ...]
    stdlib_removed: tuple[StdlibRemoved, ...]
    cuda_arch: tuple[CudaArch, ...]
    gcc_program: tuple[GccProgram, ...]
    gpu_product: tuple[GpuProduct, ...]
    torch_python: tuple[TorchPython, ...]
    nccl_check: tuple[NcclCheck, ...]
    keyword_removed: tuple[KeywordRemoved, ...]


def _row_class(annotation: str) -> type[Fact]:
    """The row class of a :class:`Tables` annotation (``"tuple[Target, ...]"`` -> :class:`Target`)."""
    found: type[Fact] = globals()[annotation.removeprefix("tuple[").partition(",")[0]]
    return found


# table -> its row class, in the order of the matrix's tables (glmcompat.matrix.schema.TABLES)
ROWS: dict[str, type[Fact]] = {t: _row_class(a) for t, a in Tables.__annotations__.items()}

# table -> its row class's fields, in order (the order of a cached row's values)
FIELDS: dict[str, tuple[str, ...]] = {t: tuple(f.name for f in fields(cls)) for t, cls in ROWS.items()}


def _opt_tuple(v: list[str] | None) -> tuple[str, ...] | None:
    return None if v is None else tuple(v)


def _kernel_code(v: list[Mapping[str, Any]]) -> tuple[KernelCode, ...]:
    return tuple(KernelCode(g["kernels"], tuple(g["code"]), g["example"]) for g in v)


def _mapping_of_tuples(v: dict[str, list[str]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({k: tuple(x) for k, x in v.items()})


# a field's type (its annotation) -> how its JSON value (lists, objects) becomes the row's (tuples, read-only
# mappings); builtins where they do (no Python frame per value). The other types are JSON's own.
_BY_TYPE: dict[str, Callable[[Any], object]] = {
    "Versions": tuple, "Names": tuple, "TargetNames": tuple, "Globs": tuple, "Identifiers": tuple, "TorchReleases": tuple,
    "ProductPlatforms": _mapping_of_tuples, "ModelTypesBy": _mapping_of_tuples,
    "TorchPairs": MappingProxyType, "CudartMajors": MappingProxyType, "Pins": MappingProxyType,
    "Overrides": MappingProxyType,
}


def _converter(annotation: str) -> Callable[[Any], object] | None:
    """How a cached value of a field typed ``annotation`` becomes the row's (None: as JSON reads it)."""
    if annotation.startswith("tuple[KernelGroupIn"):
        return _kernel_code
    if annotation.startswith("tuple["):
        return _opt_tuple if annotation.endswith("| None") else tuple
    return _BY_TYPE.get(annotation)


# table -> {field: its converter} (the tables with one), derived from the row classes' field types
_CONVERT: dict[str, dict[str, Callable[[Any], object]]] = {
    t: conv for t, cls in ROWS.items()
    if (conv := {f.name: fn for f in fields(cls) if (fn := _converter(str(f.type))) is not None})}
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


def to_values(table: str, row: Mapping[str, Any]) -> list[Any]:
    """A plain row's values in :data:`FIELDS` order: what the JSON cache keeps (every key present, as
    ``Matrix.plain()`` writes them)."""
    return [row[k] for k in FIELDS[table]]


def _json(v: object) -> Any:
    """A row's value as JSON data: tuples as lists, mappings as dicts, a kernel group as a dict."""
    if isinstance(v, tuple):
        return [_json(x) for x in v]
    if isinstance(v, Mapping):
        return {k: _json(x) for k, x in v.items()}
    if isinstance(v, KernelCode):
        return {"kernels": v.kernels, "code": list(v.code), "example": v.example}
    return v


def to_plain(table: str, row: Fact, exclude_none: bool = False) -> dict[str, Any]:
    """``row`` (of ``table``) as plain JSON data, every field in :data:`FIELDS` order (``exclude_none``: without the
    fields that are None): what ``matrix show --json`` prints and the JSON cache keeps."""
    out = {k: _json(getattr(row, k)) for k in FIELDS[table]}
    return {k: v for k, v in out.items() if v is not None} if exclude_none else out
