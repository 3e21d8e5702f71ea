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

    @classmethod
    def from_log(cls, ctx: LogContext) -> Env:
        return cls(versions=dict(ctx.versions), cuda=dict(ctx.cuda), seen=dict(ctx.seen))

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
        return (f"{package} {ver} was built against torch {built}, and torch {torch} is installed: {what}",
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
}
DROPPED = "model-type-unknown"  # the one signature whose builder may find that the line was not its failure


def diagnose(hits: Sequence[Hit], env: Env, facts: Facts) -> list[Hit]:
    """Each hit with its cause and remedy built for ``env``; a hit that turns out not to be its signature's
    failure (a bare ``KeyError`` outside transformers) is left out. A hit keeps its package, and takes the
    version ``env`` holds for it."""
    out = []
    for h in hits:
        ver = env.version(h.package) if h.package else ""
        h = replace(h, version=ver or h.version)
        build = BUILDERS.get(h.id)
        got = build(h, env, facts) if build is not None else None
        if got is None and h.id == DROPPED and "key" in h.groups:
            continue
        if got is not None:
            h = replace(h, cause=got[0], remedy=got[1])
        out.append(h)
    return out


__all__ = ["BUILDERS", "Env", "FIRST_TOOLKIT", "diagnose", "package_cause"]
