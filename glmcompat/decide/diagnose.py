"""Causes and remedies of known failure signatures, built from what the log (or, in ``glmcompat verify``, the
environment) shows and from the matrix, never from fixed example versions.

A :class:`~glmcompat.model.signatures.Hit` says which signature matched and which package the log blames
(:func:`glmcompat.model.signatures.scan_log`). :func:`diagnose` rebuilds each hit's cause and remedy for
that package, at the versions the :class:`Env` holds (the environment's when there is one, else the log's),
through the matrix's rows: the torch a kernel release was built against, the torchvision / torchaudio
release of each torch, the transformers release that knows a model type. A remedy never asks to install
what is installed: where the installed release is the right one and its build is not (a CUDA torchvision
next to a ``+cpu`` torch), it names the build; where the package is half-installed, the reinstall.
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from glmcompat.matrix.view import Facts
from glmcompat.model.causes import CAUSE_OF, Break
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import Hit, LogContext

# The first CUDA toolkit whose nvcc knows each arch-specific architecture (NVIDIA's CUDA toolkit release notes:
# 12.0 added sm_90a, 12.8 sm_100a/sm_120a, 12.9 sm_103a/sm_121a and the family targets, 13.0 renamed sm_101 to
# sm_110). An architecture not listed gets no number, only the `nvcc --list-gpu-arch` test.
FIRST_TOOLKIT = {"90a": "12.0", "100a": "12.8", "101a": "12.8", "120a": "12.8", "103a": "12.9", "121a": "12.9",
                 "100f": "12.9", "103f": "12.9", "120f": "12.9", "110a": "13.0", "110f": "13.0"}


@dataclass(frozen=True)
class Env:
    """What is known of the environment the failure happened in.

    ``versions``: distribution -> version (canonical names); ``cuda``: ``driver_cuda`` (what nvidia-smi
    calls "CUDA Version": the newest CUDA the driver supports), ``driver``, ``nvcc`` (the toolkit),
    ``torch_cuda``; ``half_installed``: distribution -> the files its RECORD lists that are missing;
    ``capability``: the device's (``9.0``); ``where``: ``log`` or ``environment``, for the wording;
    ``seen``: every version the log shows of a distribution (``2.18.1, 2.29.7``)."""

    versions: Mapping[str, str] = field(default_factory=dict)
    cuda: Mapping[str, str] = field(default_factory=dict)
    half_installed: Mapping[str, Sequence[str]] = field(default_factory=dict)
    capability: str = ""
    where: str = "log"
    targets: Mapping[str, str] = field(default_factory=dict)  # package -> the --target folder it is installed in
    seen: Mapping[str, str] = field(default_factory=dict)
    libs: Mapping[str, str] = field(default_factory=dict)  # soname -> where the loader (ldd) found it

    @classmethod
    def from_log(cls, ctx: LogContext) -> Env:
        return cls(versions=dict(ctx.versions), cuda=dict(ctx.cuda), seen=dict(ctx.seen), libs=dict(ctx.libs))

    def version(self, package: str) -> str:
        return self.versions.get(canonicalize(package), "")


def _v(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _public(text: str) -> str:
    v = _v(text)
    return v.public if v is not None else text.split("+", 1)[0]


def _local(text: str) -> str | None:
    v = _v(text)
    return v.local if v is not None else None


def _shown(name: str, version: str) -> str:
    return f"{name} {version}" if version else name


def _build(facts: Facts, torch: str) -> str:
    """How a torch build is described: ``a CPU-only build``, ``built for CUDA 12.8``, ``the default build
    (CUDA 13.0)``."""
    label = _local(torch)
    if label == "cpu":
        return "a CPU-only build"
    cuda = facts.torch_cuda(torch)
    if label:
        return f"built for CUDA {cuda}" if cuda else f"the +{label} build"
    return f"the default build (CUDA {cuda})" if cuda else "the default build"


def _label_remedy(package: str, release: str, torch: str, facts: Facts) -> str:
    """How to get ``package==release`` in the build that matches ``torch``'s."""
    label = _local(torch)
    if label:
        where = "PyTorch's CPU index" if label == "cpu" else f"PyTorch's {label} index"
        return f"install {package}=={release}+{label} (from {where})"
    return f"install {package}=={release} from the default index (the build for the default torch)"


# --- the builders, one per kind of failure -----------------------------------------------------------


def _half(package: str, env: Env) -> tuple[str, str] | None:
    files = env.half_installed.get(canonicalize(package))
    if not files:
        return None
    ver = env.version(package)
    shown = ", ".join(list(files)[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return (f"{_shown(package, ver)} is half-installed: {len(files)} file(s) its RECORD lists are missing ({shown}), "
            "so its compiled extension cannot load whatever torch is installed",
            f"reinstall it: pip install --force-reinstall --no-deps {package}{'==' + ver if ver else ''}"
            + (f" --upgrade --target {env.targets[canonicalize(package)]}" if canonicalize(package) in env.targets else ""))


def _family(package: str, env: Env, facts: Facts) -> tuple[str, str] | None:
    """torchvision / torchaudio: the release built for each torch (the matrix's family rows)."""
    half = _half(package, env)
    if half is not None:
        return half
    ver, torch = env.version(package), env.version("torch")
    pin = facts.family(package, ver) if ver else None
    wants = pin[0] if pin else ""  # "==2.9.1"
    if not torch:
        if not wants:
            return None
        return (f"{package} {ver} was built for torch{wants}; the {env.where} does not show which torch it was loaded with",
                f"install torch{wants} (what {package} {ver} pins), or the {package} release built for the installed torch")
    fam = facts.family_for_torch(package, torch)
    if fam is None:
        return (f"{_shown(package, ver)} was built for {('torch' + wants) if wants else 'another torch'}, and torch {torch} "
                f"is installed; the matrix records no {package} release built for torch {_public(torch)}",
                f"install torch{wants} (what {package} {ver} pins)" if wants else
                f"install the {package} release whose METADATA pins torch=={_public(torch)}")
    if ver and _public(ver) == fam:
        if _local(ver) == _local(torch):
            return (f"{package} {ver} is the release and build for torch {torch}: the failure is not a version "
                    "mismatch (a half-installed or shadowed copy, or another library it links)",
                    f"run `glmcompat verify` to see which files and libraries it loads; reinstall it with "
                    f"pip install --force-reinstall --no-deps {package}=={ver}")
        theirs = _local(ver)
        theirs_text = (f"the +{theirs} build" if theirs else
                       f"the default build (for torch {_public(torch)}, CUDA {facts.torch_cuda(_public(torch)) or '?'})")
        other = ("a CUDA build of torch" if _local(torch) == "cpu" else f"the torch {_public(torch)} build it was made for")
        return (f"{package} {ver} is the release for torch {_public(torch)}, but {theirs_text}, while torch {torch} is "
                f"{_build(facts, torch)}: its extension links what this torch build does not have",
                f"{_label_remedy(package, fam, torch, facts)}, or {other} (torch=={_public(torch)}"
                f"{'+' + theirs if theirs else ''})")
    return (f"{_shown(package, ver)} was built for {('torch' + wants) if wants else 'another torch'}, and torch {torch} is "
            "installed (ABI mismatch: its compiled extension does not load)",
            f"install {package}=={fam}{'+' + (_local(torch) or '') if _local(torch) else ''} (built for torch {torch})"
            + (f", or torch{wants}" if wants else ""))


def _newest_for_torch(facts: Facts, package: str, torch: str) -> str | None:
    best: Version | None = None
    for v, row in facts.kernels_of({package}):
        if _public(row.torch) == _public(torch) and (vv := _v(v)) is not None and (best is None or vv > best):
            best = vv
    return str(best) if best else None


def _kernel(package: str, env: Env, facts: Facts, what: str) -> tuple[str, str] | None:
    """A compiled extension the matrix tracks (sgl-kernel, sglang-kernel, vLLM, xformers, torchao)."""
    half = _half(package, env)
    if half is not None:
        return half
    ver, torch = env.version(package), env.version("torch")
    row = facts.kernel(package, ver) if ver else None
    alt = _newest_for_torch(facts, package, torch) if torch else None
    alt_text = f"install {package}=={alt} (built for torch {_public(torch)})" if alt and alt != ver else ""
    if row is None:
        if not ver:
            return (f"{package}'s compiled module {what}: it was built against another torch than "
                    f"{'torch ' + torch if torch else 'the installed one'}",
                    (alt_text + ", or " if alt_text else "") +
                    (f"run `glmcompat abi` on {package}'s version (`pip show {package}`) with `--torch {_public(torch)}` "
                     "to see the torch it needs" if torch else
                     f"run `glmcompat abi` on {package}'s version and the installed torch's (`pip show {package} torch`) "
                     "to see the torch it needs"))
        return (f"{package} {ver} {what}; the matrix does not record the torch it was built against",
                (alt_text + ", or " if alt_text else "") +
                (f"run `glmcompat abi {package}=={ver} --torch {_public(torch)}`" if torch else
                 f"run `glmcompat abi {package}=={ver}` with `--torch` set to the installed torch (`pip show torch`)"))
    built = row.torch
    if not torch:
        return (f"{package} {ver} was built against torch {built} ({row.evidence}); the {env.where} does not show the "
                "torch it was loaded with, which must be another",
                f"install torch=={built} (the one {package} {ver} was built against)")
    if _public(torch) != _public(built):
        said = Break(rule="abi", package=package, version=ver, against=_public(torch), built=built).sentence()
        return (f"{said}; its compiled module {what}",
                f"install torch=={built}" + (f", or {alt_text[len('install '):]}" if alt_text else
                                              f" (no {package} release built for torch {_public(torch)} is recorded)"))
    return (f"{package} {ver} was built against torch {built}, the installed release; torch {torch} is "
            f"{_build(facts, torch)}, so the symbol it misses is the build's (or another library's)",
            f"install the torch {built} build {package} was made for (CUDA {row.cuda or '?'}), "
            f"or run `glmcompat verify` to see which symbols are missing")


def _untracked(package: str, env: Env, what: str) -> tuple[str, str] | None:
    """A compiled package the matrix does not track (flash-attn, deep-gemm, mamba-ssm ...): its label may name
    the torch it was built for (flash_attn-2.7.4.post1+cu12torch2.6cxx11abiFALSE)."""
    half = _half(package, env)
    if half is not None:
        return half
    ver, torch = env.version(package), env.version("torch")
    m = re.search(r"torch(\d+\.\d+)", ver)
    named = f" (its label names torch {m.group(1)})" if m else ""
    here = f"torch {torch}" if torch else "the installed torch"
    short = ".".join(_public(torch).split(".")[:2]) if torch else ""
    sym = re.search(r"\(([\w.$@]+)\)$", what)
    if sym and "__cxx11" in sym.group(1):  # the std::string of the C++11 ABI: torch was built without it
        return (f"{_shown(package, ver)}{named} was built with the C++11 ABI (_GLIBCXX_USE_CXX11_ABI=1) and {here} "
                f"without it: it {what}",
                f"install the {package} wheel labelled cxx11abiFALSE for {here}, or rebuild it against {here}: "
                f"pip install --no-build-isolation --no-deps --force-reinstall {package}{'==' + _public(ver) if ver else ''}")
    return (f"{_shown(package, ver)}{named} {what}: it was built against another torch than {here}",
            (f"install the {package} build made for torch {short} (a wheel whose label names torch{short}), or " if short else "")
            + f"rebuild it against {here}: pip install --no-build-isolation --no-deps --force-reinstall "
              f"{package}{'==' + _public(ver) if ver else ''}")


def _undefined(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    pkg = h.package
    sym = h.groups.get("symbol", "")
    if sym.startswith("nccl"):
        return _nccl(h, env, facts)
    what = "needs a symbol the installed torch does not export" + (f" ({sym})" if sym else "")
    if not pkg or pkg == "torch":
        return None
    if pkg in facts.family_packages():
        return _family(pkg, env, facts)
    if pkg in facts.kernel_packages():
        return _kernel(pkg, env, facts, what)
    return _untracked(pkg, env, what)


def _nccl(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    sym = h.groups.get("symbol", "nccl...")
    lib = h.groups.get("library", "a library")
    torch = env.version("torch")
    ncc = {k: env.seen.get(k) or env.versions.get(k, "") for k in ("nvidia-nccl-cu12", "nvidia-nccl-cu13")}
    have = [f"{k} {v}" for k, v in ncc.items() if v]
    major = (facts.torch_cuda(torch) or "").split(".")[0] if torch else ""
    shown = f" ({' and '.join(have)} in the {env.where})" if have else ""
    cause = (f"{lib} needs {sym}, which the libnccl.so.2 loaded first does not define: another NCCL than the one "
             f"{'torch ' + torch if torch else 'torch'} requires is loaded{shown}")
    if len(have) == 2 and major in ("12", "13"):
        other = "nvidia-nccl-cu12" if major == "13" else "nvidia-nccl-cu13"
        return cause, (f"pip uninstall {other} (torch {torch} is built for CUDA {major} and loads nvidia-nccl-cu{major}), "
                       "then reinstall that one with the version torch's METADATA pins")
    pkg = f"nvidia-nccl-cu{major}" if major in ("12", "13") else "nvidia-nccl-cu12 or -cu13 (torch's CUDA major)"
    return cause, (f"install the {pkg} version torch{' ' + torch if torch else ''} pins (`pip show torch` lists its "
                   "Requires-Dist) with pip install --force-reinstall --no-deps, and drop any system libnccl from "
                   "LD_LIBRARY_PATH")


def _model(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    mt = h.groups.get("model_type") or h.groups.get("key") or ""
    row = None
    if mt:
        try:
            row = facts.model(mt)
        except Exception:  # noqa: BLE001 - an unknown model type is not an error here
            row = None
    if "key" in h.groups and row is None and h.package != "transformers":
        return None  # a bare KeyError that neither names a known model type nor runs through transformers
    have = env.version("transformers")
    if row is None:
        what = f"model type {mt}" if mt else "the checkpoint's model type"
        return (f"transformers{' ' + have if have else ''} does not know {what}",
                f"install a newer transformers whose models/auto/configuration_auto.py lists {mt or 'it'} "
                f"(pip install -U transformers), or the model's own code (trust_remote_code) where it ships one")
    need = row.transformers
    try:
        knows = bool(have) and SpecifierSet(need).contains(_public(have), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        knows = False
    if knows:
        return (f"transformers {have} knows {mt} (transformers{need}), yet the process raised this: it imported "
                "another transformers (a second copy earlier on sys.path, or an engine's vendored one)",
                "run `glmcompat verify --model " + mt + "` in the serving environment to see which copy is imported")
    engines = [f"{e}{row.for_engine(e)}" for e in ("sglang", "vllm") if row.for_engine(e)]
    note = f"; the engine must serve it too ({' or '.join(engines)})" if engines else ""
    return (f"transformers{' ' + have if have else ''} does not know model type {mt}: it is native from transformers{need}",
            f"install transformers{need} (as an override where the engine pins an older one){note}")


def _ptx(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    drv = env.cuda.get("driver_cuda", "")
    torch = env.version("torch")
    built = env.cuda.get("torch_cuda") or (facts.torch_cuda(torch) if torch else None) or ""
    driver = env.cuda.get("driver", "")
    dshown = f"driver {driver}" if driver else "the driver"
    if drv and built:
        try:
            older = Version(drv) < Version(built)
        except InvalidVersion:
            older = True
        cause = (f"{dshown} supports CUDA up to {drv}, and {'torch ' + torch + ' was' if torch else 'the code was'} "
                 f"built with CUDA {built}" + ("" if older else " (another package's PTX may be newer still)"))
        return cause, (f"upgrade the NVIDIA driver to one for CUDA {built} or newer, or install builds for CUDA {drv} "
                       f"or older{' (torch ' + _public(torch) + '+cu' + drv.replace('.', '') + ' or an older CUDA label)' if torch else ''}")
    if built:
        return (f"the code was built with CUDA {built}{' (torch ' + torch + ')' if torch else ''}, newer than "
                f"{dshown} supports", f"upgrade the NVIDIA driver to one for CUDA {built} or newer (nvidia-smi's "
                "\"CUDA Version\" must be at least that), or install builds for the CUDA the driver supports")
    if drv:
        return (f"{dshown} supports CUDA up to {drv}, and the code was built with a newer CUDA",
                f"install builds for CUDA {drv} or older (a +cu{drv.replace('.', '')} torch), or upgrade the driver")
    return h.cause, h.remedy


def _nvcc(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    arch = h.groups.get("arch", "")
    code = arch.split("_", 1)[1] if "_" in arch else ""
    first = FIRST_TOOLKIT.get(code)
    nvcc = env.cuda.get("nvcc", "")
    torch = env.version("torch")
    built = env.cuda.get("torch_cuda") or (facts.torch_cuda(torch) if torch else None) or ""
    pkg = h.package if h.package and h.package != "torch" else "the build"
    who = "flashinfer's JIT" if pkg.startswith("flashinfer") else pkg
    cause = (f"{who} ran nvcc{' ' + nvcc if nvcc else ''}, which does not know {arch}"
             + (f" (the first CUDA toolkit that does is {first})" if first else ""))
    want = first or "a newer release"
    if built and first and _v(built) is not None and Version(built) >= Version(first):
        want = f"{built} (the CUDA torch {torch} was built with)"
    remedy = (f"point it at a CUDA {want} toolkit (CUDA_HOME=<toolkit>"
              + (", or FLASHINFER_NVCC=<toolkit>/bin/nvcc" if who.startswith("flashinfer") else "")
              + f"; `nvcc --list-gpu-arch` must list {arch})")
    if who.startswith("flashinfer"):
        remedy += ", or install flashinfer-jit-cache for this flashinfer so that nothing is compiled"
    return cause, remedy


def _no_kernel(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    pkg = h.package
    if not pkg or pkg == "torch":
        torch = env.version("torch")
        if not torch:
            return None
        tb = facts.gpu_code("torch", torch)
        codes = ", ".join(tb[0]) if tb and tb[0] else "no GPU code"
        return (f"torch {torch} carries {codes}; none of it runs on this GPU{' (sm_' + env.capability.replace('.', '') + ')' if env.capability else ''}",
                "install a torch build whose arch list (torch.cuda.get_arch_list()) includes this GPU's capability")
    ver = env.version(pkg)
    code = facts.gpu_code(pkg, ver) if ver else None
    carries = f" carries {', '.join(list(code[0]) + list(code[1]))}" if code and (code[0] or code[1]) else ""
    cap = f" (sm_{env.capability.replace('.', '')})" if env.capability else ""
    return (f"{_shown(pkg, ver)}{carries}: none of it runs on this GPU{cap}; the module loaded and the failure shows "
            "at its first kernel launch",
            f"install a {pkg} build with SASS for this GPU's capability (`glmcompat verify` reads the code each of its "
            f"modules carries), or build it from source with TORCH_CUDA_ARCH_LIST set to it")


def _torchvision(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    return _family("torchvision", env, facts)


def _torchaudio(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    return _family("torchaudio", env, facts)


def _vllm_symbol(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    sym = h.groups.get("symbol", "")
    return _kernel("vllm", env, facts, f"its module vllm/{h.groups.get('module', '_C')} needs {sym or 'a torch symbol'}")


def package_cause(package: str, env: Env, facts: Facts, what: str) -> tuple[str, str] | None:
    """(cause, remedy) for ``package``'s compiled extension that does not load next to the installed torch
    (``what`` says how it fails): half-installed first, then by kind (torchvision/torchaudio, a tracked
    kernel, any other compiled package)."""
    if package in facts.family_packages():
        return _family(package, env, facts)
    if package in facts.kernel_packages():
        return _kernel(package, env, facts, what)
    return _untracked(package, env, what)


# --- the driver, the CUDA libraries, NumPy and the companions (issue 38) -----------------------------------

# The oldest Linux driver of each CUDA toolkit (NVIDIA's CUDA Toolkit Release Notes, "CUDA Toolkit and Corresponding
# Driver Versions", Table 3, the GA release of each): a torch built for CUDA X.Y needs at least this driver for
# everything (PTX JIT included); within one major, minor-version compatibility runs the rest on the major's first driver.
MIN_DRIVER = {"11.8": "520.61.05", "12.0": "525.60.13", "12.1": "530.30.02", "12.2": "535.54.03", "12.3": "545.23.06",
              "12.4": "550.54.14", "12.5": "555.42.02", "12.6": "560.28.03", "12.8": "570.26", "12.9": "575.51.03",
              "13.0": "580.65.06"}
# The CUDA labels PyTorch publishes torch builds under, per CUDA major, newest first (its cuXYZ indexes).
CUDA_LABELS = {"11": ("cu118",), "12": ("cu129", "cu128", "cu126", "cu124", "cu121"), "13": ("cu130",)}


def driver_cuda(found: str) -> str:
    """The CUDA version a driver API version stands for (1000 x major + 10 x minor: ``12040`` -> ``12.4``)."""
    n = int(found[:6])
    return f"{n // 1000}.{(n % 1000) // 10}"


def _torch_cuda(env: Env, facts: Facts) -> str:
    """The CUDA the log's torch was built with: collect_env's line, its +cuXYZ label, else the matrix's default build."""
    if env.cuda.get("torch_cuda"):
        return env.cuda["torch_cuda"]
    torch = env.version("torch")
    label = _local(torch) or ""
    m = re.fullmatch(r"cu(\d{2,3})(\d)", label)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    return (facts.torch_cuda(_public(torch)) or "") if torch else ""


def _major(cuda: str) -> str:
    return cuda.split(".", 1)[0]


def _label_for(drv: str) -> str:
    """The newest PyTorch CUDA label whose builds run on a driver for CUDA ``drv`` (its major's, not newer)."""
    labels = CUDA_LABELS.get(_major(drv), ())
    for label in labels:
        if _v(f"{label[2:-1]}.{label[-1]}") is not None and Version(f"{label[2:-1]}.{label[-1]}") <= Version(drv):
            return label
    return labels[-1] if labels else ""


def _driver(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """driver-too-old / driver-insufficient: the driver's CUDA (the "found version", else nvidia-smi's) against
    torch's build."""
    found = h.groups.get("found", "")
    drv = driver_cuda(found) if found else env.cuda.get("driver_cuda", "")
    driver = env.cuda.get("driver", "")
    torch = env.version("torch")
    built = _torch_cuda(env, facts)
    reports = f"CUDA {drv}" + (f" ({found})" if found else "") if drv else "an older CUDA"
    if not drv and not built:
        return None
    need = MIN_DRIVER.get(built, "")
    said = Break(rule="driver", package="torch" if torch else "", version=torch, against=driver, built=built).sentence()
    cause = f"{said}; the driver reports {reports}" + (f", and CUDA {built} needs driver >= {need}" if need else "")
    label = _label_for(drv) if drv else ""
    if torch and label:
        build = (f"install torch=={_public(torch)}+{label} from PyTorch's {label} index (a build for the driver's CUDA "
                 f"{_major(drv)}.x)")
    elif label:
        build = (f"install builds for the driver's CUDA {_major(drv)}.x (torch from PyTorch's {label} index: CUDA "
                 f"{_major(drv)}.x builds run on a CUDA {drv} driver)")
    else:
        build = "install builds for the CUDA the driver supports (nvidia-smi's \"CUDA Version\")"
    newer = f"a newer driver (>= {need} for CUDA {built})" if need else "a newer NVIDIA driver"
    return cause, f"{build}, or {newer}"


def _forward_compat(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    driver, drv = env.cuda.get("driver", ""), env.cuda.get("driver_cuda", "")
    if not driver and not drv:
        return None
    shown = f"driver {driver}" + (f" (CUDA {drv})" if drv else "") if driver else f"a CUDA {drv} driver"
    return (f"the kernel's {shown} is paired with a newer CUDA forward-compatibility libcuda (cuda-compat) on a GPU that "
            "forward compatibility does not support (error 804)",
            f"remove the cuda-compat directory from LD_LIBRARY_PATH (or use an image without cuda-compat) and install "
            f"builds for CUDA {drv or 'the driver supports'}{' (PyTorch' + chr(39) + 's ' + _label_for(drv) + ' index)' if drv and _label_for(drv) else ''}, "
            "or upgrade the kernel driver")


def _dir_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else path


def _nvjitlink(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    need = h.groups.get("need", "").replace("_", ".")
    lib, provider = h.groups.get("library", "a CUDA library"), h.groups.get("provider", "libnvJitLink.so")
    loaded = env.libs.get(provider, "")
    where = f" (the loader took {loaded})" if loaded else ""
    cause = (f"{lib} (from torch's nvidia-* wheels) needs nvJitLink {need or 'newer'} ({h.groups.get('symbol', '')}), but "
             f"the {provider} loaded first is older{where}: an older CUDA toolkit's library on LD_LIBRARY_PATH wins over the "
             "one torch's wheels bring")
    drop = (f"remove {_dir_of(loaded)} from LD_LIBRARY_PATH" if loaded and "site-packages" not in loaded
            else "remove the CUDA toolkit's lib64 (e.g. /usr/local/cuda/lib64) from LD_LIBRARY_PATH")
    return cause, (f"{drop} so that torch's site-packages/nvidia/nvjitlink/lib is used, or install "
                   f"nvidia-nvjitlink-cu{need.split('.')[0] if need else '12'}>={need or '<the CUDA torch was built with>'}")


def _cudnn_version(text: str) -> str:
    parts = [p for p in re.split(r"[,\s()]+", text) if p]
    if len(parts) >= 2:
        return ".".join(parts)
    n = parts[0] if parts else ""
    if n.isdigit() and len(n) >= 4:  # cuDNN 7/8 as one number: 7102 = 7.1.2, 8500 = 8.5.0
        v = int(n)
        return f"{v // 1000}.{(v % 1000) // 100}.{v % 100}"
    return n


def _cudnn(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    built, found = _cudnn_version(h.groups.get("compiled", "")), _cudnn_version(h.groups.get("runtime", ""))
    torch = env.version("torch")
    loaded = next((p for so, p in env.libs.items() if so.startswith("libcudnn")), "")
    where = f" from {_dir_of(loaded)}" if loaded else ""
    cause = (f"{'torch ' + torch if torch else 'torch'} was built against cuDNN {built}, but cuDNN {found} was loaded{where}: "
             "another cuDNN on the loader's path (LD_LIBRARY_PATH, a system or conda copy) wins over the nvidia-cudnn wheel "
             "torch brings")
    drop = (f"remove {_dir_of(loaded)} from LD_LIBRARY_PATH" if loaded and "site-packages" not in loaded
            else "remove the directory holding the other libcudnn from LD_LIBRARY_PATH (or `unset LD_LIBRARY_PATH`)")
    return cause, f"{drop} so that torch loads its own cuDNN {built}, or install cuDNN {built} there"


# Pure-Python distributions a traceback runs through on its way to a compiled extension: never the one built against NumPy.
PURE_PYTHON = frozenset({"transformers", "accelerate", "datasets", "huggingface-hub", "diffusers", "peft", "tokenizers"})


def _numpy(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    pkg = h.package if h.package and h.package != "numpy" else ""
    through = ""
    if pkg in PURE_PYTHON:  # a frame of a pure-Python package: the extension is imported below it
        pkg, through = "", pkg
    ver = env.version(pkg) if pkg else ""
    np = env.version("numpy")
    cause = Break(rule="numpy-abi", package=pkg, version=ver, against=np).sentence()
    cause += f" (it is imported through {through})" if through else ""
    if pkg:
        return cause, (f"install a {pkg} release built for NumPy 2 (pip install -U {pkg}; its wheels for numpy>=2), "
                       f"or pin numpy<2 while {pkg} has none")
    return cause, ("upgrade the extension named in the traceback above to a release built for NumPy 2, or pin numpy<2 "
                   "(python -m pip install 'numpy<2')")


def _numpy_old(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """numpy-too-old: the reverse of numpy-abi, an extension built against a newer NumPy than the one installed."""
    pkg = h.package if h.package and h.package not in ("numpy", *PURE_PYTHON) else ""
    who, np, need = _shown(pkg, env.version(pkg)) if pkg else "a compiled extension", env.version("numpy"), h.groups.get("needs")
    built = f"NumPy {need}" if need else f"NumPy C-API 0x{h.groups['built']}" if h.groups.get("built") else "a newer NumPy"
    return (f"{who} was built against {built}, newer than the installed {'numpy ' + np if np else 'NumPy'}: its import_array "
            "refuses a NumPy older than its headers",
            f"upgrade numpy (pip install -U 'numpy>={need}')" if need else
            f"upgrade numpy (pip install -U numpy) to the release {pkg or 'the extension'} was built against, or install "
            f"{'a ' + pkg if pkg else 'an extension'} release built for {'numpy ' + np if np else 'the installed numpy'}")


def _xformers(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    built, have, cuda = h.groups.get("built", ""), h.groups.get("have", ""), h.groups.get("cuda", "")
    if not built:  # "xFormers wasn't build with CUDA support": the row's cause, the log's versions named below
        return _xformers_ops(env, facts)
    cu = f"{int(cuda) // 100}.{int(cuda) % 100}" if cuda.isdigit() else ""  # torch.version.cuda as 100 x major + minor
    ver = env.version("xformers")
    cause = (f"xformers{' ' + ver if ver else ''} was built for torch {built}" + (f" (CUDA {cu})" if cu else "")
             + f", and torch {have} is installed: its C++/CUDA operators are disabled")
    if _local(have) == "cpu":
        return cause + " (this torch is a CPU-only build)", (
            f"install a CUDA build of torch: torch=={_public(built)}+{_local(built) or 'cu' + cu.replace('.', '')} "
            f"from PyTorch's {_local(built) or 'CUDA'} index (the build xformers was made for), not the +cpu one")
    alt = _newest_for_torch(facts, "xformers", have)
    if alt and alt != ver:
        pick = f"install xformers=={alt} (built for torch {_public(have)})"
    else:
        label = _local(have)
        pick = (f"install the xformers release built for torch {_public(have)}"
                + (f" from PyTorch's {label} index (the index torch {have} came from)" if label else ""))
    return cause, f"{pick}, or torch=={built}"


def _xformers_ops(env: Env, facts: Facts) -> tuple[str, str] | None:
    """xformers' ops missing without its "built for" line: the versions the log shows, else the row's text."""
    ver, torch = env.version("xformers"), env.version("torch")
    if not torch:
        return None
    alt = (_newest_for_torch(facts, "xformers", torch) or facts.family_for_torch("xformers", _public(torch))
           if _v(_public(torch)) else None)
    return (f"{_shown('xformers', ver)}'s compiled extension does not load with torch {torch} (built for another torch, or "
            "without CUDA), so xformers disables its C++/CUDA operators: \"xFormers wasn't build with CUDA support\"",
            (f"install xformers=={alt}, the release built for torch {_public(torch)}" if alt else
             f"install the xformers release built for torch {_public(torch)}")
            + " (from the same PyTorch index as torch), or the torch this xformers was built for")


def _flashinfer(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    comp, have, want = h.groups.get("companion", ""), h.groups.get("have", ""), h.groups.get("want", "")
    if "unknown" in want:  # flashinfer-python without its _build_meta: a source checkout
        return (f"{comp} {have} is installed next to a flashinfer-python without a version ({want}: a source checkout "
                "or an editable install without flashinfer/_build_meta.py), and flashinfer refuses the pair",
                f"install flashinfer-python=={have} from the index, or build the checkout at {have}; "
                "FLASHINFER_DISABLE_VERSION_CHECK=1 skips the check for a development tree")
    return (f"{comp} {have} is installed next to flashinfer-python {want}: flashinfer refuses a {comp} of another "
            "version (its kernels are for one release)",
            f"install {comp}=={want} (flashinfer-python's version), or pip uninstall {comp} (flashinfer then builds its "
            "kernels itself)")


def _torchao(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    g = h.groups
    torch = g.get("torch") or g.get("found") or env.version("torch")
    ao = g.get("torchao") or env.version("torchao")
    need = g.get("need", "")
    shown = f"torchao {ao}" if ao else "torchao"
    if not torch:
        return None
    cause = (f"{shown} was built against another torch than torch {torch}"
             + (f" (it needs torch >= {need})" if need else "") + ", so it skipped loading its compiled ops "
             "(torchao/_C*.so): the Python API works, its custom CUDA kernels are absent")
    alt = _newest_for_torch(facts, "torchao", torch)
    if alt and alt != ao:
        pick = f"install torchao=={alt} (built for torch {_public(torch)})"
    else:
        pick = f"install the torchao release built for torch {_public(torch)} (pytorch/ao#2919 lists them)"
    return cause, pick + (f", or torch>={need}" if need else "")


def _cpu_torch(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    torch = env.version("torch")
    arm = env.cuda.get("platform", "") in ("aarch64", "arm64", "sbsa")
    drv = env.cuda.get("driver_cuda", "")
    label = _label_for(drv) if drv else ("cu130" if torch and (_v(_public(torch)) or Version("0")) >= Version("2.11") else "cu128")
    pin = f"torch=={_public(torch)}+{label}" if torch else f"torch (its +{label} build)"
    why = (" (on Linux aarch64, the package index's default torch wheels up to 2.10 are CPU-only)" if arm else
           " (a +cpu wheel, or a default wheel of a platform the index has no CUDA build for)")
    return (Break(rule="gpu-code", package="torch" if torch else "", version=torch, built="cpu").sentence() + why,
            f"install {pin} from PyTorch's {label} index"
            + (f" (driver CUDA {drv})" if drv else "") + ", with torchvision/torchaudio of the same build")


def _triton(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """triton-torch-mismatch: the triton the log shows against the one its torch pins (torch-releases.toml)."""
    torch, have = env.version("torch"), env.version("triton")
    pins = [r for r in facts.rows("release") if r.package == "torch" and torch and r.version == _public(torch)]
    want = next((t.split("==", 1)[1] for r in pins for t in r.requires if t.startswith("triton==")), "")
    name = h.groups.get("name") or h.groups.get("attr") or ""
    where = "triton" + (h.groups.get("module") or h.groups.get("attr_module") or "")
    what = (f"{_shown('torch', torch)} imports {name} from {where}, which {_shown('triton', have)} does not have" if name
            else f"{_shown('torch', torch)}'s inductor found no triton it can import (none installed, or one too old)")
    old, new = _v(_public(have)), _v(want)
    side = ("newer" if old > new else "older") if old is not None and new is not None and old != new else ""
    cause = (f"{what}: triton {have} is {side} than the triton {want} torch {torch} pins" if side else
             f"{what}: torch {torch} pins triton {want}" if want else
             f"{what}: the installed triton is not the release torch was built against (too old, or too new: triton "
             "moves and removes the names torch's inductor imports)")
    fix = (f"install triton=={want}, the release torch {_public(torch)} pins (pip install 'triton=={want}')" if want
           else "install the triton release the installed torch pins (`pip show torch` lists it under Requires-Dist; on Windows, where torch pins none, the triton-windows release made for that torch)")
    return cause, f"{fix}, or a torch release built for the installed triton"


def _arch(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """engine-arch-unsupported: the architecture against the engine releases the matrix says serve it."""
    named = h.groups.get("archs") or h.groups.get("arch") or h.groups.get("module_arch") or h.groups.get("noimpl")
    archs = [a.strip(" '\"") for a in (named or "").split(",")]
    arch = next((a for a in archs if a), "the checkpoint's architecture")
    engine = h.package if h.package in ("vllm", "sglang") else next((e for e in ("vllm", "sglang") if env.version(e)),
                                                                   "sglang" if h.groups.get("arch") else "")
    shown = _shown(engine, env.version(engine)) if engine else "the engine (vLLM or SGLang)"
    row = next((r for r in facts.rows("model") if arch in r.architectures), None)
    need = row.for_engine(engine) if row is not None and engine else None
    if h.groups.get("how") == "failed to be inspected":
        return (f"{shown} registers {arch} but its model file failed to import (a missing dependency or a compiled "
                "extension that did not load), so it reports the architecture as not inspectable",
                f"fix the first import error the log prints before this line (run `python -c \"import {engine or 'vllm'}\"` "
                "in the serving environment to see it), then serve again")
    if need:
        return (f"{shown} does not serve architecture {arch} (model type {row.model_type if row else ''}): {engine}{need} does",
                f"install {engine}{need} (pip install '{engine}{need}')")
    return (f"{shown} has no model class for architecture {arch}: the release is older than the model, or its model file "
            "failed to import (an \"Ignore import error when loading\" line above names it)",
            f"upgrade {engine or 'the engine'}{f' (pip install -U {engine})' if engine else ''} to a release whose supported models list "
            f"{arch}, or fix the import error printed above it")


def _automodel(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """automodel-config-unmapped: who defines the config class (remote code, an engine, transformers) says the cause."""
    config, auto, have = h.groups.get("config", ""), h.groups.get("auto", "AutoModel"), env.version("transformers")
    cls, parts = config.rsplit(".", 1)[-1], config.split(".")
    mt = parts[2] if parts[:2] == ["transformers", "models"] and len(parts) > 3 else ""
    mt = mt or (parts[-2].removeprefix("configuration_") if len(parts) > 1 else "")
    row = next((r for r in facts.rows("model") if r.model_type == mt), None)
    tf = _shown("transformers", have)
    if row is not None and not (have and _v(_public(have)) and SpecifierSet(row.transformers).contains(_public(have), prereleases=True)):
        return (f"{tf} has no {auto} for {cls} (model type {mt}): it is native from transformers{row.transformers}",
                f"install transformers{row.transformers} (pip install 'transformers{row.transformers}')")
    if parts[0] == "transformers_modules":
        return (f"{tf} maps no {auto} to {cls}, a config class of the model's remote code: the remote code was written "
                "for another transformers release",
                "install the transformers release the model's code was written for (the last one it loaded with), or load "
                "it with the class its config.json auto_map names (trust_remote_code=True)")
    return (f"{tf} knows {cls} but has no {auto} for it: the model is of another kind than {auto} (a vision-language "
            f"model), or {auto} maps it only in a newer transformers",
            f"load it with the model class its model card names (not {auto}), or upgrade transformers (pip install -U "
            "transformers)")


def _old_gpu(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """gpu-too-old-for-triton: the GPU and its capability, from the line."""
    gpu, cc, need = h.groups.get("gpu", "the GPU"), h.groups.get("cc", "?"), h.groups.get("need", "7.0")
    return (f"{gpu} is of compute capability {cc}, below the {need} triton compiles for, so torch.compile's inductor "
            "backend (and every Triton kernel) cannot run on it; no package version changes that",
            "run without torch.compile / Triton kernels on this GPU (TORCHDYNAMO_DISABLE=1, or the program's own switch: "
            f"compile=False, vLLM's --enforce-eager), or use a GPU of compute capability >= {need}")


def _cudnn_sub(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cudnn-sublibrary-missing: name the sub-library and whether it was absent or from another cuDNN."""
    lib = h.groups.get("library") or h.groups.get("any") or h.groups.get("dll") or ""
    why = h.groups.get("why") or ""
    m = re.search(r"\.so\.(\d+)|_(\d+)\.dll", lib)
    major = (m.group(1) or m.group(2)) if m else ""
    if not lib:
        return None
    if why == "undefined symbol":
        return (f"cuDNN loaded {lib} from another cuDNN than its own front library: two cuDNN copies are on the loader's "
                "path (LD_LIBRARY_PATH, /usr/lib, a conda or image copy next to the nvidia-cudnn wheel)",
                f"keep one cuDNN: remove the other copy's directory from LD_LIBRARY_PATH so that {lib} and libcudnn.so come "
                "from the same place (for torch, its nvidia-cudnn wheel)")
    return (f"cuDNN's front library loaded, but {lib} is not on the loader's path (a program that does not preload the "
            "nvidia-cudnn wheel, or a cuDNN installed without its sub-libraries)",
            f"add the directory holding {lib} to LD_LIBRARY_PATH (for the nvidia-cudnn wheel: python -c \"import nvidia.cudnn, "
            "os; print(os.path.dirname(nvidia.cudnn.__file__) + '/lib')\"), or install cuDNN "
            f"{major or 'of the major it names'} (the nvidia-cudnn wheel {major + '.x' if major else ''} for the CUDA in use, "
            f"or the system package libcudnn{major or 'N'})")


def _pip_conflict(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """pip-requirement-conflict: the pair pip left installed against the package's own requirement."""
    g = h.groups
    pkg, ver, req, dep, have = g.get("pkg", ""), g.get("ver", ""), g.get("req", ""), g.get("dep", "").strip(), g.get("have", "")
    need = req.split(";", 1)[0].strip()
    return (f"{pkg} {ver} requires {need}, but {dep} {have} is installed: pip put them side by side and only warned, so "
            f"{pkg} runs against a {dep} it was not built or tested with",
            f"install {need} (pip install '{need}'), or "
            + (f"{pkg}=={alt}, the release built for torch {_public(have)}" if dep == "torch" and _v(_public(have)) and (
                alt := _newest_for_torch(facts, canonicalize(pkg), have) or facts.family_for_torch(canonicalize(pkg), _public(have)))
               else f"the {pkg} release that requires {dep} {_public(have)} (its Requires-Dist; `pip index versions {pkg}` "
               "lists the releases)"))


# The first CUDA toolkit whose ptxas knows each base architecture (NVIDIA's CUDA toolkit release notes; FIRST_TOOLKIT
# above holds the arch-specific and family targets).
FIRST_PTXAS = {"89": "11.8", "90": "11.8", "100": "12.8", "101": "12.8", "120": "12.8", "103": "12.9", "121": "12.9",
               "110": "13.0"}


def _ptxas(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """triton-ptxas-arch: the architecture the GPU asked for and the first CUDA toolkit whose ptxas knows it."""
    arch, tool, have = h.groups.get("arch", ""), h.groups.get("tool", "ptxas"), env.version("triton")
    num = arch.removeprefix("sm_")
    need = FIRST_TOOLKIT.get(num) or FIRST_PTXAS.get(num.rstrip("af"), "")
    knob = "TRITON_PTXAS_BLACKWELL_PATH" if tool.endswith("blackwell") else "TRITON_PTXAS_PATH"
    return (f"the {tool} bundled with {_shown('triton', have)} does not know {arch}: the GPU is newer than the CUDA "
            f"toolkit that triton release ships{f' ({arch} needs the ptxas of CUDA >= {need})' if need else ''}",
            f"point {knob} at the ptxas of a CUDA toolkit{f' >= {need}' if need else ''} that lists {arch} (e.g. "
            f"/usr/local/cuda/bin/ptxas), or install a newer triton (the one torch pins in a build for CUDA "
            f"{need or 'that new'})")


def _cuda_bindings(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-bindings-driver: a driver function cuda-bindings found missing names what the driver lacks."""
    fn, driver = h.groups.get("function"), env.cuda.get("driver", "")
    if not fn:
        return None
    shown = f"the NVIDIA driver{' ' + driver if driver else ''}"
    return (f"cuda-python (cuda-bindings) looked up {fn} in libcuda.so.1 and {shown} does not have it: the function is "
            "newer than the driver (each CUDA release adds driver functions; the driver supports CUDA up to nvidia-smi's "
            "\"CUDA Version\")",
            f"upgrade the NVIDIA driver to one of the CUDA release that introduced {fn} or later, or install the "
            "cuda-bindings (and program) release for the CUDA the driver supports")


def _stub(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-stub-driver: where the log shows the stub was mapped from, name that directory."""
    shown = h.text.split("=>")[-1].strip() if "/stubs/libcuda" in h.text else ""
    stub = shown or next((p for so, p in env.libs.items() if so.startswith("libcuda") and "/stubs/" in p), "")
    if not stub:
        return None
    return (f"the process loaded {stub}, the CUDA toolkit's stub libcuda (a link-time placeholder), instead of the NVIDIA "
            "driver's libcuda.so.1: every CUDA call returns cudaErrorStubLibrary (34)",
            f"remove {_dir_of(stub)} from LD_LIBRARY_PATH (and from /etc/ld.so.conf.d, then ldconfig) so that the driver's "
            "libcuda.so.1 is found; in a container, start it with the NVIDIA runtime (docker run --gpus all)")


# soname stem -> the nvidia-* wheel that ships it (its -cu11 / -cu12 name; CUDA 13's wheels drop the suffix)
NVIDIA_WHEEL = {"nvJitLink": "nvjitlink", "cublas": "cublas", "cublasLt": "cublas", "cusparse": "cusparse",
                "cusparseLt": "cusparselt", "cusolver": "cusolver", "cufft": "cufft", "curand": "curand",
                "nvrtc": "cuda-nvrtc", "cupti": "cuda-cupti", "nvToolsExt": "nvtx", "nvshmem_host": "nvshmem"}


def _cuda_lib(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-lib-missing: the library, the wheel that ships it, and torch's pin of that wheel where the log shows torch."""
    lib, major = h.groups.get("library", ""), h.groups.get("major", "")
    stem = lib.removeprefix("lib").split(".so", 1)[0]
    base = NVIDIA_WHEEL.get(stem)
    if base is None or not major:
        return None
    wheel = f"nvidia-{base}-cu{major}" if major in ("11", "12") else f"nvidia-{base}"
    torch = env.version("torch")
    pins = [r for r in facts.rows("release") if r.package == "torch" and torch and r.version == _public(torch)]
    pin = next((t for r in pins for t in r.requires if t.startswith(wheel + "==")), "")
    return (f"{lib} is not on the loader's path: the {wheel} wheel that ships it is missing or not where "
            f"{_shown('torch', torch)} looks for it (site-packages/nvidia/{base.removeprefix('cuda-')}/lib)",
            f"install {pin or wheel} (pip install '{pin or wheel}'"
            + (f", the version torch {torch} pins)" if pin else "; `pip show torch` lists the version torch pins)")
            + ", or reinstall torch with its dependencies (pip install --force-reinstall torch from the index it came from)")


def _cudart(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    lib = h.groups.get("library", "")
    m = re.search(r"\.so\.(\d+)", lib)
    if m is None:
        return None
    want = m.group(1)
    pkg = h.package if h.package and h.package != "torch" else ""
    torch = env.version("torch")
    built = _torch_cuda(env, facts)
    who = f"{pkg}{' ' + env.version(pkg) if env.version(pkg) else ''}" if pkg else "a compiled extension"
    have = (f": torch {torch} is built for CUDA {built}" if torch and built else "")
    cause = (f"{who} was built for CUDA {want} (it links {lib}), and the environment has no CUDA {want} runtime{have}, "
             "so the loader stops before it reaches any symbol")
    if built and _major(built) != want:
        fix = (f"install {pkg or 'the extension'}'s build for CUDA {_major(built)} (the release built for torch {_public(torch)}), "
               f"or a torch built for CUDA {want}")
    else:
        fix = (f"install {pkg or 'the extension'}'s build for the installed torch's CUDA, or the CUDA {want} runtime "
               f"(the nvidia-cuda-runtime wheel for CUDA {want})")
    return cause, fix


Builder = Callable[[Hit, Env, Facts], "tuple[str, str] | None"]
BUILDERS: dict[str, Builder] = {
    "torchvision-nms-missing": _torchvision,
    "torchaudio-load-failure": _torchaudio,
    "undefined-symbol": _undefined,
    "nccl-undefined-symbol": lambda h, e, f: _nccl(h, e, f),
    "model-type-unknown": _model,
    "ptx-unsupported-toolchain": _ptx,
    "nvcc-unsupported-arch": _nvcc,
    "no-kernel-image": _no_kernel,
    "vllm-undefined-symbol": _vllm_symbol,
    "driver-too-old": _driver,
    "driver-insufficient": _driver,
    "cuda-forward-compat-unsupported": _forward_compat,
    "nvjitlink-mismatch": _nvjitlink,
    "cudnn-version-mismatch": _cudnn,
    "numpy-abi": _numpy,
    "numpy-too-old": _numpy_old,
    "xformers-built-for-other-torch": _xformers,
    "flashinfer-companion-version": _flashinfer,
    "torchao-cpp-skipped": _torchao,
    "torch-cpu-only": _cpu_torch,
    "cudart-missing": _cudart,
    "triton-torch-mismatch": _triton,
    "engine-arch-unsupported": _arch,
    "automodel-config-unmapped": _automodel,
    "gpu-too-old-for-triton": _old_gpu,
    "cudnn-sublibrary-missing": _cudnn_sub,
    "pip-requirement-conflict": _pip_conflict,
    "triton-ptxas-arch": _ptxas,
    "cuda-bindings-driver": _cuda_bindings,
    "cuda-stub-driver": _stub,
    "cuda-lib-missing": _cuda_lib,
}
# The package a signature names by itself (its text is the package's own), where the log's paths may name another.
OWN_PACKAGE = {"xformers-built-for-other-torch": "xformers", "torchao-cpp-skipped": "torchao", "torch-cpu-only": "torch",
               "driver-too-old": "torch", "cudnn-version-mismatch": "torch",
               "triton-torch-mismatch": "triton", "cuda-bindings-driver": "cuda-bindings",
               "cudnn-sublibrary-missing": "nvidia-cudnn", "flash-attn-gpu-too-old": "flash-attn"}
DROPPED = "model-type-unknown"  # the one signature whose builder may find that the line was not its failure


def extension_break(kind: str, package: str, version: str, env: Env, facts: Facts) -> Break | None:
    """The vocabulary's break (:class:`glmcompat.model.causes.Break`) for an extension module of ``package`` that does
    not import, by the kind verify's extension probe gave its error (``numpy-abi``, ``torch-symbol``, ...), at the
    versions ``env`` holds; None where the check has no cause for it (a NumPy-2 build next to NumPy 1.x among them)."""
    rule = CAUSE_OF.get(kind)
    if rule == "numpy-abi":
        np = env.version("numpy")
        v = _v(np)
        return Break(rule=rule, package=package, version=version, against=np) if v is None or v.major >= 2 else None
    if rule == "abi":
        torch = env.version("torch")
        row = facts.kernel(package, version) if version else None
        return Break(rule=rule, package=package, version=version, against=_public(torch) if torch else "",
                     built=row.torch if row is not None else "")
    return None


def diagnose(hits: Sequence[Hit], env: Env, facts: Facts) -> list[Hit]:
    """Each hit with its cause and remedy built for ``env``; a hit that turns out not to be its signature's
    failure (a bare ``KeyError`` outside transformers) is left out. A hit keeps its package, and takes the
    version ``env`` holds for it."""
    out = []
    for h in hits:
        own = OWN_PACKAGE.get(h.id) or h.groups.get("companion", "")
        if own:
            h = replace(h, package=own, version=h.groups.get("have", "") if own == h.groups.get("companion") else "")
        ver = env.version(h.package) if h.package else ""
        h = replace(h, version=ver or h.version)
        build = BUILDERS.get(h.id)
        got = build(h, env, facts) if build is not None else None
        if got is None and h.id == DROPPED and "key" in h.groups:
            continue
        if got is not None:
            h = replace(h, cause=got[0], remedy=got[1])
        out.append(replace(h, rule=CAUSE_OF.get(h.id, "")))
    return out


__all__ = ["BUILDERS", "Env", "FIRST_TOOLKIT", "diagnose", "extension_break", "package_cause"]
