"""A fast view of the validated matrix, for hot paths (``glmcompat check``, ``lock``).

Validating the matrix (pydantic) costs a few hundred milliseconds; the check must answer in tens.
So the validated matrix is dumped once to JSON in the user cache directory, keyed by the matrix
files' paths and content (and glmcompat's code), and later runs read that JSON (a few milliseconds)
once its digest line and shape check out (:mod:`glmcompat.matrix.load`). The rows are frozen, slotted
dataclasses (:mod:`glmcompat.matrix.rows`, one per table: the same classes validation builds), built once per
load; the queries here answer with them. :class:`glmcompat.matrix.schema.Matrix` holds the validated rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any, Literal, TypeVar, overload

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.matrix.rows import (
    AbiEqual,
    AbiProbe,
    ArchProbe,
    Compiled,
    CudaArch,
    GccProgram,
    GpuProduct,
    CudaDriver,
    CxxNamespace,
    DriverApi,
    NvidiaLibrary,
    NvidiaSoname,
    EqualVersion,
    Export,
    Fact,
    FamilyRule,
    Jit,
    Kernel,
    ModelSupport,
    ModelTypeReleases,
    ModulePackage,
    NcclCheck,
    OpNamespace,
    PrimaryModules,
    Release,
    Rename,
    SetupTorch,
    Requires,
    Signature,
    OtherCause,
    SignaturePackage,
    Stack,
    StdlibRemoved,
    KeywordRemoved,
    Target,
    TargetRequirement,
    TorchBuild,
    TorchPython,
)
from glmcompat.model.errors import InputError
from glmcompat.model.names import local_cuda, normalize_target, product_key
from glmcompat.model.platforms import PER_PLATFORM, check_platform

Tables = dict[str, tuple[Fact, ...]]  # table -> its rows, in file order
R = TypeVar("R", bound=Fact)
# a shared library's soname: its stem and its major (libcufft.so.11 -> cufft, 11; libcudnn_ops_infer.so.8.9.2 -> 8)
_DLL_STEM = re.compile(r"([A-Za-z][\w-]{0,60}?)(?:64|32)?_\d")  # cudnn_ops_infer64_8.dll -> cudnn_ops_infer
_SONAME = re.compile(r"(?P<stem>lib[\w+-]{1,80}?)\.so\.(?P<major>\d{1,4})(?:\.\d{1,6}){0,3}")


_VERSIONS: dict[str, Version] = {}  # parsed once per process: the rules compare the matrix's versions per row, per environment


def _v(text: str) -> Version:
    v = _VERSIONS.get(text)
    if v is None:
        v = _VERSIONS[text] = Version(text)
    return v


class Facts:
    """Queries over the matrix's rows (:mod:`glmcompat.matrix.rows`)."""

    def __init__(self, data: Mapping[str, Sequence[Fact]] | Any, key: str = "", platform: str = "x86_64") -> None:
        """``data``: the rows of each table, or a whole :class:`~glmcompat.matrix.schema.Matrix` (its typed-row
        view's rows: ``Facts(load_matrix())``); anything else is an InputError."""
        if not isinstance(data, Mapping):
            view = getattr(data, "view", None)
            if not callable(view):
                raise InputError(f"Facts: expected a Matrix (glmcompat.load_matrix()) or the rows of each table, "
                                 f"not {type(data).__name__}")
            data = view().data
        self.data: Tables = {t: tuple(rows) for t, rows in data.items()}  # tuple(a tuple) is that tuple
        self.key = key  # identifies the matrix files (paths and content) and glmcompat's code
        self.platform = check_platform(platform)
        self._kernels: dict[tuple[str, Version, str | None], int] | None = None
        self._filtered: dict[str, tuple[Fact, ...]] = {}
        self._driver_api: dict[str, str] | None = None
        self._own: dict[str, str] | None = None
        self._families: dict[str, str] | None = None
        self._stdlib: dict[str, tuple[str, str]] | None = None
        self._archs: dict[str, dict[str, str]] | None = None
        self._gcc: dict[str, tuple[str, str, str]] | None = None
        self._model_types: dict[str, tuple[str, dict[str, tuple[str, str]]]] | None = None
        self._kernel_names: frozenset[str] | None = None  # kernel_packages()
        self._family_names: frozenset[str] | None = None  # family_packages()
        self._torch_at: dict[str, int | None] = {}  # _torch_index's answers (a lock's rules ask 300 times of one torch)
        self._views: dict[str, Facts] = {self.platform: self}

    def on(self, platform: str) -> Facts:
        """The same facts, answering for the wheels of ``platform`` (a view sharing the data)."""
        p = check_platform(platform)
        view = self._views.get(p)
        if view is None:
            view = self._views[p] = Facts(self.data, self.key, p)
            view._views = self._views
        return view

    @overload
    def rows(self, table: Literal["target"]) -> tuple[Target, ...]: ...
    @overload
    def rows(self, table: Literal["torch"]) -> tuple[TorchBuild, ...]: ...
    @overload
    def rows(self, table: Literal["family"]) -> tuple[FamilyRule, ...]: ...
    @overload
    def rows(self, table: Literal["kernel"]) -> tuple[Kernel, ...]: ...
    @overload
    def rows(self, table: Literal["abi_probe"]) -> tuple[AbiProbe, ...]: ...
    @overload
    def rows(self, table: Literal["arch_probe"]) -> tuple[ArchProbe, ...]: ...
    @overload
    def rows(self, table: Literal["abi_equal"]) -> tuple[AbiEqual, ...]: ...
    @overload
    def rows(self, table: Literal["compiled"]) -> tuple[Compiled, ...]: ...
    @overload
    def rows(self, table: Literal["setup_torch"]) -> tuple[SetupTorch, ...]: ...
    @overload
    def rows(self, table: Literal["rename"]) -> tuple[Rename, ...]: ...
    @overload
    def rows(self, table: Literal["primary_modules"]) -> tuple[PrimaryModules, ...]: ...
    @overload
    def rows(self, table: Literal["jit"]) -> tuple[Jit, ...]: ...
    @overload
    def rows(self, table: Literal["equal_version"]) -> tuple[EqualVersion, ...]: ...
    @overload
    def rows(self, table: Literal["requires"]) -> tuple[Requires, ...]: ...
    @overload
    def rows(self, table: Literal["model"]) -> tuple[ModelSupport, ...]: ...
    @overload
    def rows(self, table: Literal["model_types"]) -> tuple[ModelTypeReleases, ...]: ...
    @overload
    def rows(self, table: Literal["target_requirement"]) -> tuple[TargetRequirement, ...]: ...
    @overload
    def rows(self, table: Literal["release"]) -> tuple[Release, ...]: ...
    @overload
    def rows(self, table: Literal["stack"]) -> tuple[Stack, ...]: ...
    @overload
    def rows(self, table: Literal["signature"]) -> tuple[Signature, ...]: ...
    @overload
    def rows(self, table: Literal["other_cause"]) -> tuple[OtherCause, ...]: ...
    @overload
    def rows(self, table: Literal["cuda"]) -> tuple[CudaDriver, ...]: ...
    @overload
    def rows(self, table: Literal["driver_api"]) -> tuple[DriverApi, ...]: ...
    @overload
    def rows(self, table: Literal["nvidia_library"]) -> tuple[NvidiaLibrary, ...]: ...
    @overload
    def rows(self, table: Literal["nvidia_soname"]) -> tuple[NvidiaSoname, ...]: ...
    @overload
    def rows(self, table: Literal["export"]) -> tuple[Export, ...]: ...
    @overload
    def rows(self, table: Literal["module"]) -> tuple[ModulePackage, ...]: ...
    @overload
    def rows(self, table: Literal["op_namespace"]) -> tuple[OpNamespace, ...]: ...
    @overload
    def rows(self, table: Literal["cxx_namespace"]) -> tuple[CxxNamespace, ...]: ...
    @overload
    def rows(self, table: Literal["signature_package"]) -> tuple[SignaturePackage, ...]: ...
    @overload
    def rows(self, table: Literal["stdlib_removed"]) -> tuple[StdlibRemoved, ...]: ...
    @overload
    def rows(self, table: Literal["cuda_arch"]) -> tuple[CudaArch, ...]: ...
    @overload
    def rows(self, table: Literal["gcc_program"]) -> tuple[GccProgram, ...]: ...
    @overload
    def rows(self, table: Literal["gpu_product"]) -> tuple[GpuProduct, ...]: ...
    @overload
    def rows(self, table: Literal["torch_python"]) -> tuple[TorchPython, ...]: ...
    @overload
    def rows(self, table: Literal["nccl_check"]) -> tuple[NcclCheck, ...]: ...
    @overload
    def rows(self, table: Literal["keyword_removed"]) -> tuple[KeywordRemoved, ...]: ...
    @overload
    def rows(self, table: str) -> tuple[Fact, ...]: ...

    def rows(self, table: str) -> tuple[Any, ...]:
        """The rows of ``table``; of the per-platform tables, only those about this view's platform."""
        if table not in PER_PLATFORM:
            return self.data.get(table, ())
        got = self._filtered.get(table)
        if got is None:
            every: tuple[Any, ...] = self.data.get(table, ())  # the per-platform tables' rows have a platform
            got = tuple(r for r in every if r.platform == self.platform)
            if table == "torch":  # conda-forge's builds (+cu126.cf) are no index's wheel: only the label names one
                self._filtered["torch+conda"] = got
                got = tuple(r for r in got if not (getattr(r, "variant", None) or "").endswith(".cf"))
            self._filtered[table] = got
        return got

    def _torch_rows_every(self) -> tuple[TorchBuild, ...]:
        """This view's [[torch]] rows with conda-forge's builds (``rows("torch")`` leaves those out)."""
        self.rows("torch")
        return self._filtered["torch+conda"]  # type: ignore[return-value]

    def all_rows(self, table: str) -> tuple[Fact, ...]:
        """The rows of ``table`` for every platform (in file order)."""
        return self.data.get(table, ())

    # -- targets ----------------------------------------------------------------------------------
    def target(self, name: str) -> Target:
        """The target named ``name``: ``sm120`` / ``sm_120`` / ``12.0``, or one of its products by
        :func:`~glmcompat.model.names.product_key` (``rtx5090``, ``H100``, ``"RTX PRO 6000 Blackwell"``)."""
        key = normalize_target(name)
        product = product_key(name)
        for t in self.rows("target"):
            if t.name == key or t.compute_capability == name.strip():
                return t
        for t in self.rows("target"):
            if product and any(product_key(p) == product for p in t.products):
                return t
        known = ", ".join(t.name for t in self.rows("target"))
        raise InputError(f"unknown target {name!r} (known: {known}, or a product that `glmcompat targets` lists)")

    # -- kernels ----------------------------------------------------------------------------------
    def _kernel_index(self, package: str, version: str) -> int | None:
        """Index into ``kernel`` of the row for ``package==version``: the row of its labelled variant
        (``0.3.21+cu130``) where one is recorded, else the release's own row (public version)."""
        if self._kernels is None:
            self._kernels = {}
            for i, k in enumerate(self.rows("kernel")):
                for v in k.versions:
                    self._kernels[(k.package, _v(v), k.variant)] = i
        pv = _v(version)
        base = _v(pv.public)
        if pv.local is not None:
            labelled = self._kernels.get((package, base, pv.local))
            if labelled is not None:
                return labelled
        return self._kernels.get((package, base, None))

    def kernel(self, package: str, version: str) -> Kernel | None:
        i = self._kernel_index(package, version)
        return None if i is None else self.rows("kernel")[i]

    def kernel_cuda(self, package: str, version: str) -> str | None:
        """The CUDA runtime a kernel wheel links: its variant row's, else its ``+cuXYZ`` label's, else the
        release row's (a label never turns a known release into an unknown one)."""
        row = self.kernel(package, version)
        label = local_cuda(version)
        if row is not None and row.variant and row.variant == _v(version).local:
            return row.cuda
        if label is not None:
            return label
        return row.cuda if row else None

    def kernel_packages(self) -> set[str]:
        """Packages that are compiled torch extensions (rows on any platform: a kernel with rows only for
        x86_64 is still an extension on aarch64, and unknown there). Collected once (the judge asks for each package
        of a lock, again at each round of following pins); a fresh set each call."""
        if self._kernel_names is None:
            self._kernel_names = frozenset(k.package for k in self._all_kernels())
        return set(self._kernel_names)

    def _all_kernels(self) -> Iterator[Kernel]:
        for k in self.all_rows("kernel"):
            assert isinstance(k, Kernel)
            yield k

    def kernels_of(self, packages: set[str]) -> Iterator[tuple[str, Kernel]]:
        """(version, row) for every known release of ``packages`` (the index's builds, not labelled variants)."""
        for k in self.rows("kernel"):
            if k.package in packages and not k.variant:
                for v in k.versions:
                    yield v, k

    def mismatch_severity(self, package: str) -> str:
        """'warning' for packages whose extension load failure is survivable (torchao), else 'error'."""
        sev = {k.on_mismatch for k in self._all_kernels() if k.package == package}
        return "warning" if sev == {"warning"} else "error"

    def compatible_torches(self, package: str, version: str) -> set[str]:
        """Torch versions an ABI probe found ``package==version`` compatible with."""
        v = _v(_v(version).public)
        return {str(_v(p.torch)) for p in self.rows("abi_probe")
                if p.package == package and _v(p.version) == v and p.compatible}

    def abi_verdict(self, package: str, version: str, torch: str) -> AbiProbe | None:
        v, t = _v(_v(version).public), _v(_v(torch).public)
        for p in self.rows("abi_probe"):
            if p.package == package and _v(p.version) == v and _v(p.torch) == t:
                return p
        return None

    def abi_equal(self, a: str, b: str) -> Fact | None:
        """The row proving that torch ``a`` and ``b`` export the same symbols (None: not shown)."""
        va, vb = _v(_v(a).public), _v(_v(b).public)
        if va == vb:
            return Fact("metadata", "the same torch release")
        for r in self.rows("abi_equal"):
            vs = {_v(x) for x in r.torch}
            if va in vs and vb in vs:
                return r
        return None

    # -- torch ------------------------------------------------------------------------------------
    def _torch_index(self, version: str) -> int | None:
        """Index into ``torch`` of the row for the wheel ``version``: the variant row its local label
        names (``2.9.1+cu128``), or the default wheel's row when it has no label or the default's label.
        A pre-release or nightly without a row of its own (``2.7.0rc6``, ``2.8.0.dev20250501+cu128``) takes its
        release's row: release candidates are built from the release branch, nightlies by the same CI
        configuration for that CUDA. None when that build is not recorded."""
        if version in self._torch_at:
            return self._torch_at[version]
        found = self._torch_row_of(version)
        v = _v(version)
        if found is None and (v.is_prerelease or v.is_devrelease):
            found = self._torch_row_of(v.base_version + (f"+{v.local}" if v.local else ""))
        self._torch_at[version] = found
        return found

    def _torch_row_of(self, version: str) -> int | None:
        v = _v(version)
        pub = _v(v.public)
        default = None
        for i, t in enumerate(self._torch_rows_every()):
            if not any(_v(x) == pub for x in t.versions):
                continue
            if t.variant is None:
                default = i
                if v.local is None or (t.cuda and v.local == "cu" + t.cuda.replace(".", "")):
                    return i
            elif v.local == t.variant:
                return i
        return None if v.local is not None else default

    def torch_build(self, version: str) -> TorchBuild | None:
        i = self._torch_index(version)
        return None if i is None else self._torch_rows_every()[i]

    def export(self, module: str, name: str) -> Export | None:
        """The ``[[export]]`` row that lists ``name`` among the top-level exports of ``module`` (transformers,
        huggingface_hub); None where the harvested wheels never exported it there."""
        return next((r for r in self.rows("export") if r.module == module and name in r.names), None)

    def nvidia_symbol_owner(self, symbol: str) -> NvidiaLibrary | None:
        """The NVIDIA library (``[[nvidia_library]]`` rows) whose C functions' prefix ``symbol`` has, the longest
        prefix winning (cublasLt before cublas); None where no row's prefix fits."""
        best: tuple[int, NvidiaLibrary | None] = (0, None)
        for r in self.rows("nvidia_library"):
            for p in r.symbols:
                if symbol.startswith(p) and len(p) > best[0]:
                    best = (len(p), r)
        return best[1]

    def nvidia_soname_owner(self, soname: str) -> NvidiaLibrary | None:
        """The NVIDIA library whose soname or symbol-version node ``soname`` is (libcublasLt.so.11 -> libcublasLt,
        libcudnn_ops_infer.so.8 -> libcudnn); None where no row's ``nodes`` glob matches it."""
        return next((r for r in self.rows("nvidia_library") if any(fnmatchcase(soname, g) for g in r.nodes)), None)

    def nvidia_soname(self, soname: str) -> NvidiaSoname | None:
        """The ``[[nvidia_soname]]`` row of ``soname``'s library and major (libcufft.so.11 -> cuFFT 11, CUDA 12's, shipped
        by nvidia-cufft-cu12); None where no row lists them (a soname without a major, a library no row names)."""
        m = _SONAME.fullmatch(soname.replace("\\", "/").rsplit("/", 1)[-1])
        if m is None:
            return None
        return next((r for r in self.rows("nvidia_soname")
                     if r.major == m.group("major") and fnmatchcase(m.group("stem"), r.library)), None)

    def nvidia_dll(self, dll: str) -> tuple[str, NvidiaSoname] | None:
        """The Linux soname of the same NVIDIA library as the Windows DLL ``dll`` and its ``[[nvidia_soname]]`` row, by
        the rows' ``dlls`` (the win_amd64 wheels' names): cublas64_11.dll -> libcublas.so.11 (CUDA 11's),
        cudnn_ops_infer64_8.dll -> libcudnn_ops_infer.so.8, cufft64_11.dll -> libcufft.so.11 (CUDA 12's); None where no
        row lists it (a path's directories are dropped, case ignored as Windows does)."""
        name = dll.replace("\\", "/").rsplit("/", 1)[-1].lower()
        row = next((r for r in self.rows("nvidia_soname") if name in (d.lower() for d in r.dlls)), None)
        if row is None:
            return None
        stem = _DLL_STEM.match(next(d for d in row.dlls if d.lower() == name))
        return (f"lib{stem.group(1)}.so.{row.major}" if stem else f"{row.library.rstrip('*')}.so.{row.major}"), row

    def signature_package(self, signature: str) -> str:
        """The package signature ``signature`` names by itself (its text is that package's own: [[signature_package]]);
        "" where no row says."""
        if self._own is None:
            self._own = {r.signature: r.package for r in self.rows("signature_package")}
        return self._own.get(signature, "")

    def signature_family(self, signature: str) -> str:
        """The more general cause signature ``signature`` is always a case of (its row's ``family``: a no-kernel-image
        for torch-arch-unsupported); "" where it declares none."""
        if self._families is None:
            self._families = {r.id: r.family for r in self.rows("signature") if r.family}
        return self._families.get(signature, "")

    def stdlib_removed(self) -> Mapping[str, tuple[str, str]]:
        """The standard library's removals ([[stdlib_removed]] rows, in file order): module or name -> (the CPython
        release that removed it, its replacement)."""
        if self._stdlib is None:
            self._stdlib = {r.name: (r.removed, r.instead) for r in self.rows("stdlib_removed")}
        return self._stdlib

    def cuda_archs(self, which: Literal["first", "last", "ptxas"]) -> Mapping[str, str]:
        """The CUDA toolkits that know each GPU architecture ([[cuda_arch]] rows, in file order): architecture (``90a``,
        ``80``) -> the first toolkit whose nvcc builds it (``first``), the last whose nvcc still knows it (``last``), or
        the first whose ptxas knows it (``ptxas``); an architecture whose row leaves it out is not a key."""
        if self._archs is None:
            self._archs = {k: {r.arch: v for r in self.rows("cuda_arch") if (v := getattr(r, k)) is not None}
                           for k in ("first", "last", "ptxas")}
        return self._archs[which]

    def gcc_program(self, program: str) -> tuple[str, str, str] | None:
        """A program gcc's driver runs ([[gcc_program]] rows): what it is and the packages that install it on Debian/Ubuntu
        and on Fedora/RHEL; None where no row names it."""
        if self._gcc is None:
            self._gcc = {r.program: (r.what, r.apt, r.dnf) for r in self.rows("gcc_program")}
        return self._gcc.get(program)

    def model_type_known(self, model_type: str, package: str = "transformers") -> tuple[str, str, str] | None:
        """Which releases of ``package`` know ``model_type`` (config.json's): (the first harvested release that knows
        it, the first that no longer does or "", the newest release harvested); ("", "", newest) where no release up
        to the newest harvested knows it; None where the matrix has no [[model_types]] row for ``package``."""
        if self._model_types is None:
            self._model_types = {}
            for r in self.rows("model_types"):
                if r.package in self._model_types:
                    continue
                gone = {t: v for v, ts in r.removed.items() for t in ts}
                self._model_types[r.package] = (r.newest, {t: (v, gone.get(t, "")) for v, ts in r.first.items()
                                                           for t in ts})
        got = self._model_types.get(package)
        if got is None:
            return None
        newest, known = got
        first, removed = known.get(model_type, ("", ""))
        return first, removed, newest

    def driver_api_release(self, function: str) -> str:
        """The CUDA release whose driver API added ``function`` (``cuGreenCtxStreamCreate`` -> ``12.5``: the
        ``[[driver_api]]`` rows); "" where no row names it."""
        if self._driver_api is None:
            self._driver_api = {f: r.release for r in self.rows("driver_api") for f in r.functions}
        return self._driver_api.get(function, "")

    def torch_cuda(self, version: str) -> str | None:
        """CUDA runtime of a torch wheel: from its local label (``+cu126`` -> '12.6', ``+cpu`` -> ''), else the default's."""
        local = _v(version).local
        if local == "cpu":
            return ""
        label = local_cuda(version)
        if label is not None:
            return label
        tb = self.torch_build(version)
        if tb is None:
            return None
        return tb.cuda or ""  # a CPU-only build: no CUDA

    def gpu_code(self, package: str, version: str) -> tuple[tuple[str, ...], tuple[str, ...], Fact] | None:
        """(SASS, PTX, evidence row) of the wheel ``package==version``, keyed on the exact build: a version with a local
        label (``0.3.21+cu130``) is another build than the index's unlabelled wheel of that release (built by another
        CI job, often for another CUDA and arch list), so only a row recorded for that label answers for it (torch:
        :meth:`torch_build`'s rule, where the default wheel's own label names the default). None when that build's
        code is not recorded (:meth:`other_build_code` tells whether another build of the release is)."""
        v = _v(version)
        pub = _v(v.public)
        for p in self.rows("arch_probe"):
            if p.package == package and _v(p.version) == pub and p.variant == v.local:
                return p.sass, p.ptx, p
        if package == "torch":
            if v.local == "cpu":
                return (), (), Fact("metadata", "the +cpu local label: a CPU-only build")
            tb = self.torch_build(version)
            return (tb.sass, tb.ptx, tb) if tb else None
        k = self.kernel(package, version)
        if v.local is not None and (k is None or k.variant != v.local):
            return None  # a labelled build without a row of its own: the release row is another build's code
        if k is not None and k.sass is not None:
            return k.sass, k.ptx or (), k
        return None

    def other_build_code(self, package: str, version: str) -> str:
        """For a labelled ``version`` whose own build is not recorded (:meth:`gpu_code` is None): the version of the
        release's build whose code the matrix does record (the index's unlabelled ``0.3.21`` wheel), else ""."""
        v = _v(version)
        if v.local is None or self.gpu_code(package, version) is not None:
            return ""
        return v.public if self.gpu_code(package, v.public) is not None else ""

    def torch_forge_builds(self, version: str) -> tuple[TorchBuild, ...]:
        """The CUDA builds conda-forge made of torch ``version``'s release (its +cuXYZ.cf rows), for a conda-forge torch
        whose CUDA the file leaves to the solver (``pytorch=2.5.1=*cuda*``: labelled ``+cf``)."""
        pub = _v(_v(version).public)
        return tuple(t for t in self._torch_rows_every()
                     if (t.variant or "").endswith(".cf") and any(_v(x) == pub for x in t.versions))

    def torch_common_code(self, version: str) -> tuple[list[str], Fact] | None:
        """For a torch build whose variant is not recorded (``2.10.0+cu129``): the SASS that every recorded
        build of the same release carries (at least two of them), as a lower bound. A target that code runs
        on is covered whatever the unrecorded build adds or drops at the edges; one it does not run on stays
        unknown (absence from the intersection proves nothing)."""
        pub = _v(_v(version).public)
        builds = [t for t in self.rows("torch") if any(_v(x) == pub for x in t.versions)]
        if len(builds) < 2:
            return None
        label = local_cuda(version)
        if label is not None and all(b.cuda for b in builds):
            # the nearest recorded builds of the release on either side of its CUDA: an arch both carry is one
            # the release builds for across that CUDA range (PyTorch drops old archs and adds new ones as CUDA
            # grows, never one in the middle)
            want = _v(label)
            below = [b for b in builds if _v(b.cuda or "0") < want]
            above = [b for b in builds if _v(b.cuda or "0") > want]
            if below and above:
                builds = [max(below, key=lambda b: _v(b.cuda or "0")), min(above, key=lambda b: _v(b.cuda or "0"))]
        common = set(builds[0].sass)
        for b in builds[1:]:
            common &= set(b.sass)
        if any(not b.cuda for b in builds):
            return None  # a CPU-only build of the release: the builds share no GPU code to rely on
        labels = sorted(("+" + b.variant) if b.variant else f"default (+cu{(b.cuda or '').replace('.', '')})"
                        for b in builds)
        row = Fact("inferred", f"the SASS every recorded build of torch {pub} carries ({', '.join(labels)}): "
                               f"the unrecorded +{_v(version).local} build is taken to carry at least that")
        return sorted(common, key=lambda c: (len(c), c)), row

    # -- pairs and families -----------------------------------------------------------------------
    def family(self, package: str, version: str) -> tuple[str, FamilyRule] | None:
        """(torch specifier, row) that ``torchvision``/``torchaudio`` ``version`` was built for."""
        v = _v(_v(version).public)
        for f in self.rows("family"):
            if f.package == package:
                for ver, spec in f.pairs.items():
                    if _v(ver) == v:
                        return spec, f
        return None

    def family_cuda(self, package: str, version: str) -> tuple[str, Fact] | None:
        """(CUDA runtime major, evidence) a torchvision / torchaudio wheel links: its ``+cuXYZ`` label's (``+cpu``:
        '' for none), else what the release's index wheel links (the row's ``cudart``); None when unknown."""
        v = _v(version)
        if v.local == "cpu":
            return "", Fact("metadata", f"the local label of {package} {version} (a CPU-only build)")
        label = local_cuda(version)
        if label is not None:
            return label.split(".")[0], Fact("metadata", f"the local label of {package} {version} (a CUDA {label} build)")
        if self.platform != "x86_64":
            return None  # `cudart` was read from the x86_64 wheels
        pub = _v(v.public)
        for f in self.rows("family"):
            if f.package == package:
                for ver, major in f.cudart.items():
                    if _v(ver) == pub:
                        if not major:
                            return None  # links no CUDA runtime of its own
                        return str(major), Fact("abi-probe", (
                            f"`glmcompat abi {package}=={ver} --json`: the modules of {package}-{ver}'s cp311 manylinux "
                            f"x86_64 index wheel need libcudart.so.{major} (DT_NEEDED)"))
        return None

    def family_packages(self) -> set[str]:
        """The packages of the family rules on this platform, collected once; a fresh set each call."""
        if self._family_names is None:
            self._family_names = frozenset(f.package for f in self.rows("family"))
        return set(self._family_names)

    def family_for_torch(self, package: str, torch: str) -> str | None:
        """The newest ``package`` release built for exactly ``torch`` (an ``==`` pin); failing that, the
        newest whose torch requirement admits it (torchvision 0.29.1: ``>=2.14.0``)."""
        t = _v(_v(torch).public)
        exact = None
        admits = None
        for f in self.rows("family"):
            if f.package != package:
                continue
            for ver, spec in f.pairs.items():
                probe = self.abi_verdict(package, ver, str(t))
                if probe is not None and not probe.compatible:
                    continue  # its METADATA may admit this torch, but a probe proves it does not load
                if spec.startswith("==") and "*" not in spec:
                    if _v(spec[2:]) == t and (exact is None or _v(ver) > exact):
                        exact = _v(ver)
                elif SpecifierSet(spec).contains(t, prereleases=True) and (admits is None or _v(ver) > admits):
                    admits = _v(ver)
        best = exact or admits
        return str(best) if best else None

    def primary_modules(self, package: str) -> tuple[str, ...]:
        """Glob patterns of the modules whose GPU code decides for ``package`` (empty: every module)."""
        for r in self.rows("primary_modules"):
            if r.package == package:
                return r.modules
        return ()

    def jit(self, package: str, version: str) -> Jit | None:
        for j in self.rows("jit"):
            if j.package == package and SpecifierSet(j.versions).contains(version, prereleases=True):
                return j
        return None

    def model(self, model_type: str) -> ModelSupport:
        return _named(self.rows("model"), "model_type", model_type, "model type")

    def target_requirements(self, target: str) -> list[TargetRequirement]:
        return [r for r in self.rows("target_requirement") if target in r.targets]

    def stack(self, name: str) -> Stack:
        return _named(self.rows("stack"), "name", name, "stack")


def _named(rows: tuple[R, ...], key: str, value: str, what: str) -> R:
    """The row of ``rows`` whose ``key`` is ``value``; else an InputError naming the known ones."""
    for r in rows:
        if getattr(r, key) == value:
            return r
    known = ", ".join(sorted(getattr(r, key) for r in rows))
    raise InputError(f"unknown {what} {value!r} (known: {known})")
