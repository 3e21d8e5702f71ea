"""Causes and remedies of the failures that come from building or loading against what is already on the machine
rather than from a package's release (issue 38): torch's cpp_extension refusing a CUDA toolkit of another release, a
libstdc++.so.6 older than a library needs, an extension linking a torch library the installed torch lacks, and a
CUDA driver API function the loaded libcuda.so.1 does not export. Each builder takes a
:class:`~glmcompat.model.signatures.Hit`, the :class:`~glmcompat.decide.logenv.Env` and the matrix, as
:func:`glmcompat.decide.diagnose.diagnose` calls it. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from packaging.version import Version

from glmcompat.decide.cudacauses import CUDA_BUILDERS, CUDA_LABELS, invalid_function_file, min_driver
from glmcompat.decide.logenv import Env
from glmcompat.decide.logenv import public as _public
from glmcompat.decide.logenv import shown as _shown
from glmcompat.decide.logenv import v as _v
from glmcompat.matrix.rows import NcclCheck
from glmcompat.matrix.view import Facts
from glmcompat.model.machine import manylinux
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import Hit, module_package


def _major(cuda: str) -> str:
    return cuda.split(".", 1)[0]


def _torch_cuda(env: Env) -> str:
    """The CUDA the log's torch was built with: its collect_env line (or the second line of cpp_extension's own
    message), else its +cuXYZ label; "" where the log shows neither."""
    if env.cuda.get("torch_cuda"):
        return env.cuda["torch_cuda"]
    m = re.search(r"\+cu(\d{2,3})(\d)$", env.version("torch"))
    return f"{m.group(1)}.{m.group(2)}" if m else ""


def _label(cuda: str) -> str:
    """The PyTorch CUDA label of ``cuda``'s major nearest below or at it (cu121 for 12.2), else the major's oldest."""
    labels = CUDA_LABELS.get(_major(cuda), ())
    want = _v(cuda)
    at = [lab for lab in labels if want is not None and Version(f"{lab[2:-1]}.{lab[-1]}") <= want]
    return at[0] if at else (labels[-1] if labels else "")


# who refuses the toolkit, by the group of the match (torch's cpp_extension where none)
_CHECKER = {"ds_toolkit": "DeepSpeed's op builder (deepspeed's op_builder/builder.py)", "apex": "apex's setup.py"}


def _toolkit(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-toolkit-mismatch: the toolkit's CUDA (nvcc's release) against torch's, both as cpp_extension prints them
    (the second of the two-line form comes through the log's context)."""
    g = h.groups
    idf = invalid_function_file(h)
    if idf is not None:
        return None if idf[1] else _extension_arch(idf[0], env)
    toolkit = g.get("toolkit") or g.get("toolkit_arg") or g.get("ds_toolkit") or (
        env.cuda.get("nvcc", "") if "apex" in g or "cme_raise" in g else "")
    built = g.get("torch_cuda") or g.get("torch_arg") or g.get("ds_torch") or g.get("apex_torch") or _torch_cuda(env)
    if "cme_raise" in g and not toolkit:
        return _cut_mismatch(env, built)
    if not toolkit and not ("apex" in g and built):
        return None
    torch = env.version("torch")
    who = _shown("torch", torch) if torch else "the installed torch"
    on = f", built with CUDA {built}," if built else ""
    other_major = bool(built and toolkit) and _major(built) != _major(toolkit)
    kit = f"the CUDA {toolkit} toolkit" if toolkit else "a CUDA toolkit of another release"
    cause = (f"an extension is being compiled against {who}{on} with {kit} (the nvcc that CUDA_HOME "
             f"or PATH finds): {_CHECKER.get(next((k for k in _CHECKER if k in g), ''), 'torch.utils.cpp_extension')} "
             f"{'warns of' if 'apex' in g and 'apex_torch' not in g else 'refuses'} a "
             f"toolkit of another CUDA {'major ' if other_major else ''}"
             "than torch's before it compiles anything")
    label = _label(toolkit) if toolkit else ""
    if label:
        pin = f"torch=={_public(torch)}+{label}" if torch else "torch"
        other = f"install the torch build for CUDA {_major(toolkit)}.x ({pin} from PyTorch's {label} index)"
    else:
        other = f"install a torch build for CUDA {toolkit}" if toolkit else "install the torch build for the toolkit's CUDA"
    to = f"a CUDA {built} toolkit (conda install -c nvidia cuda-nvcc={built}, or the toolkit's runfile)" if built \
        else "a toolkit of torch's CUDA (python -c \"import torch; print(torch.version.cuda)\")"
    return cause, (f"point CUDA_HOME at {to} and rebuild, or {other}; then rebuild the extension with "
                   "pip install --no-build-isolation (an isolated build may download another torch than the installed one)")


def _cut_mismatch(env: Env, built: str) -> tuple[str, str]:
    """cuda-toolkit-mismatch read from the traceback's last frame, cpp_extension's raise of CUDA_MISMATCH_MESSAGE, where
    the message (its two versions) is cut from the log and the log shows no nvcc release."""
    torch = env.version("torch")
    who = _shown("torch", torch) if torch else "the installed torch"
    on = f" (built with CUDA {built})" if built else ""
    return (f"an extension is being compiled against {who}{on} with a CUDA toolkit (the nvcc that CUDA_HOME or PATH "
            "finds) of another CUDA release than torch's: the traceback ends in torch.utils.cpp_extension's "
            "_check_cuda_version raising CUDA_MISMATCH_MESSAGE (\"The detected CUDA version (X) mismatches the version "
            "that was used to compile PyTorch (Y)\", its versions cut from this log), which refuses it before compiling "
            "anything",
            "compare nvcc --version with python -c \"import torch; print(torch.version.cuda)\"; point CUDA_HOME at a "
            "toolkit of torch's CUDA and rebuild, or install the torch build for the toolkit's CUDA (its cuXYZ index); "
            "then rebuild the extension with pip install --no-build-isolation (an isolated build may download another "
            "torch than the installed one)")


def _extension_arch(path: str, env: Env) -> tuple[str, str]:
    """cuda-toolkit-mismatch read from cudaErrorInvalidDeviceFunction in an extension's own CUDA source (``path``): its
    GPU code was built by a toolkit and arch list that leave this GPU out."""
    torch = env.version("torch")
    who = _shown("torch", torch) if torch else "the installed torch"
    nvcc, built = env.cuda.get("nvcc", ""), _torch_cuda(env)
    kit = f"the CUDA {nvcc} toolkit" if nvcc else "the CUDA toolkit (nvcc) it was compiled with"
    on = f" (torch's is CUDA {built})" if built else ""
    name = re.split(r"[\\/]", path)[-1]
    return (f"a compiled extension's own CUDA kernel ({name}) has no code for this GPU (cudaErrorInvalidDeviceFunction: "
            f"\"not compiled for the proper device architecture\"): the extension was built by {kit}{on} and an arch list "
            f"(TORCH_CUDA_ARCH_LIST, or that toolkit's default) that leave this GPU out; {who} itself runs",
            "rebuild the extension against the installed torch with the CUDA toolkit of torch's CUDA (CUDA_HOME, "
            "python -c \"import torch; print(torch.version.cuda)\") and TORCH_CUDA_ARCH_LIST set to the GPU's compute "
            "capability (nvidia-smi --query-gpu=compute_cap --format=csv): remove its build/ directory, then pip install "
            "--no-build-isolation .")


# The GCC release whose libstdc++ first defines each symbol version (GCC's libstdc++ manual, doc/xml/manual/abi.xml,
# abi.versioning.history: "GCC 9.3.0: GLIBCXX_3.4.28, CXXABI_1.3.12" ...; 3.4.30 for GCC 12 (gcc r12-8767), 3.4.31 and
# 3.4.32 for GCC 13.1 and 13.2 (r13-2695, r13-5126)). A version not listed gets no GCC, only the name.
FIRST_GCC = {"3.4.19": "4.8.3", "3.4.20": "4.9.0", "3.4.21": "5.1.0", "3.4.22": "6.1.0", "3.4.23": "7.1.0",
             "3.4.24": "7.2.0", "3.4.25": "8.1.0", "3.4.26": "9.1.0", "3.4.27": "9.2.0", "3.4.28": "9.3.0",
             "3.4.29": "11.1.0", "3.4.30": "12.1.0", "3.4.31": "13.1.0", "3.4.32": "13.2.0"}
# ... and each CXXABI_ (the C++ ABI runtime's) version, the same table (abi.versioning.history: "GCC 7.1.0:
# GLIBCXX_3.4.23, CXXABI_1.3.11", "GCC 9.1.0: ..., CXXABI_1.3.12", "GCC 13.1.0: ..., CXXABI_1.3.14", "GCC 14.1.0: ...,
# CXXABI_1.3.15")
FIRST_GCC_CXXABI = {"1.3.7": "4.8.0", "1.3.8": "4.9.0", "1.3.9": "5.1.0", "1.3.10": "6.1.0", "1.3.11": "7.1.0",
                    "1.3.12": "9.1.0", "1.3.13": "11.1.0", "1.3.14": "13.1.0", "1.3.15": "14.1.0"}


def _needs(h: Hit, group: str) -> list[str]:
    """Every value of ``group`` the log's matches of the signature name: the first match's, then those later lines add
    (the hit's ``also``, :data:`glmcompat.model.signatures.COLLECTED_GROUPS`)."""
    first = h.groups.get(group, "")
    return [x for x in [first, *h.also.get(group, ())] if x]


def _age(need: str) -> tuple[int, ...]:
    """A GLIBCXX_/CXXABI_ need's age, as the first GCC whose libstdc++ defines it (its own number where the table has
    no row), comparable across the two prefixes where the table knows both."""
    name, _, ver = need.partition("_")
    gcc = (FIRST_GCC if name == "GLIBCXX" else FIRST_GCC_CXXABI).get(ver, "")
    nums = tuple(int(x) for x in ver.split(".") if x.isdigit())
    return (1, *(int(x) for x in gcc.split(".")), *nums) if gcc else (0, 0 if name == "CXXABI" else 1, *nums)


def _libstdcxx(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """libstdcxx-too-old: the symbol version the library needs (the newest of those the log's loader lines name), the
    libstdc++ the loader found, and who needs it."""
    g = h.groups
    needs = _needs(h, "need")
    need = max(needs, key=_age) if needs else ""
    others = [n for n in needs if n != need]
    loaded = g.get("loaded", "")
    by = g.get("by", "")
    name, _, ver = need.partition("_")
    gcc = (FIRST_GCC if name == "GLIBCXX" else FIRST_GCC_CXXABI).get(ver, "")
    pkg = h.package
    who = (_shown(pkg, env.version(pkg)) + "'s " if pkg else "") + (by.rsplit("/", 1)[-1] if by else "a compiled library")
    where = f"the libstdc++.so.6 the loader found ({loaded})" if loaded else "the libstdc++.so.6 the loader found"
    since = f" (libstdc++ of GCC {gcc} or newer)" if gcc else " (a symbol version of libstdc++)"  # the log's word first
    also = f", the newest of the versions the loader reports missing (also {', '.join(others)})" if others else ""
    cause = (f"{who} needs {need}{since}{also}, and {where} does not define it: it is older than the GCC runtime the "
             "library was built with, typically the system's libstdc++ found before the environment's newer one")
    up = f"the system's libstdc++6 to GCC {gcc.rsplit('.', 1)[0]} or newer" if gcc else "the system's libstdc++6"
    return cause, (f"put a libstdc++.so.6 that defines {need} first: the environment's own (export "
                   "LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH, after conda install -c conda-forge libstdcxx-ng), "
                   f"or upgrade {up}; `strings {loaded or '<libstdc++.so.6>'} | grep {name}_` lists "
                   "the versions it defines")


def _glibc(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """glibc-too-old: the glibc the library needs (the newest GLIBC_2.N of the log's loader lines; its manylinux
    tag), the libc the loader found, who needs it."""
    g = h.groups
    needs = _needs(h, "glibc")
    if not needs:
        return None
    need = max(needs, key=lambda x: tuple(int(p) for p in x.split(".")))
    others = [f"GLIBC_{n}" for n in needs if n != need]
    by, loaded, pkg = g.get("by", ""), g.get("loaded", ""), h.package
    who = (_shown(pkg, env.version(pkg)) + "'s " if pkg else "") + (by.rsplit("/", 1)[-1] if by else "a compiled library")
    tag = manylinux(need)
    also = f"; the loader also reports {', '.join(others)} missing" if others else ""
    return (f"{who} needs GLIBC_{need} (glibc >= {need}: a build for {tag} or a newer distribution{also}), and the "
            "machine's libc.so.6"
            + (f" ({loaded})" if loaded else "") + " is older: the installer put a build there that the machine's "
            "glibc does not run (a copied environment, a conda package, a wheel forced with --platform)",
            f"install {pkg or 'the package'}'s build for the machine's glibc (a wheel tagged at most the machine's "
            f"manylinux_2_N, `ldd --version`; an older release where {tag} is its only Linux wheel), or run it on a "
            f"distribution with glibc >= {need}")


def _cudnn_missing(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cudnn-not-found as Lua torch's cuDNN binding (cudnn.torch's ffi.lua) raises it: the cuDNN major its branch
    binds (R4: libcudnn.so.4), found by file name on the loader's path; None for torch's own warning (the row's words)."""
    r = h.groups.get("lua_cudnn", "")
    if not r:
        return None
    return (f"Lua torch's cuDNN binding (cudnn.torch, its R{r} branch) loads cuDNN {r} by file name (libcudnn.so.{r}, "
            f"libcudnn.{r}.dylib on macOS) through the loader's search path, and none was found there: libcudnn R{r} is "
            f"not installed, or its directory is not on the library path (a cuDNN of another major, libcudnn.so.N with "
            f"N other than {r}, does not answer for it)",
            f"install cuDNN {r} (libcudnn.so.{r}) for the machine's CUDA and put its lib directory on LD_LIBRARY_PATH "
            f"(DYLD_LIBRARY_PATH on macOS) or in /usr/local/lib, or set CUDNN_PATH to the libcudnn file (R5 and later "
            "branches), or install the cudnn.torch branch for the cuDNN major the machine has (its R5, R6, R7 "
            "branches: luarocks install cudnn from that branch)")


def _family_cuda(package: str) -> Callable[[Hit, Env, Facts], tuple[str, str] | None]:
    """torchvision-cuda-mismatch / torchaudio-cuda-mismatch: the package's own import check, with both CUDA releases
    it printed, and the release of the package paired with the log's torch (the matrix's family rows)."""
    def build(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        torch_cuda, built = h.groups.get("torch_cuda", ""), h.groups.get("built_cuda", "")
        if "mid_torch_cuda" in h.groups:  # the check's middle sentence alone (fix-n): it raises only for two releases
            torch_cuda, built = h.groups["mid_torch_cuda"], h.groups.get("mid_built_cuda", "")
            if torch_cuda == built:
                return None
        if not torch_cuda and not built:  # the message wrapped across lines: both releases as the log's notes read them
            torch_cuda, built = env.notes.get("wrapped_torch_cuda", ""), env.notes.get("wrapped_built_cuda", "")
        if not torch_cuda or not built:
            return None
        torch, ver = env.version("torch"), env.version(package)
        label = f"cu{torch_cuda.replace('.', '')}"
        fam = facts.family_for_torch(package, torch) if torch else None
        pin = f"{package}=={fam}+{label}" if fam else f"the {package} release paired with {_shown('torch', torch) if torch else 'that torch'}"
        if lib := h.groups.get("x_cudart", ""):  # the loader refused its _C first (glmcompat.decide.extcauses.family_runtime)
            return (f"{_shown(package, ver)} was built for CUDA {built} (its compiled _C links {lib}) and "
                    f"{_shown('torch', torch) if torch else 'torch'} for CUDA {torch_cuda}: the environment has no CUDA "
                    f"{built} runtime, so the loader stops at {package}'s _C before {package}'s own check that both were "
                    "compiled for the same CUDA (two indexes mixed: one from PyTorch's cuXYZ index, the other from another "
                    "or the default)",
                    f"install {pin} from PyTorch's {label} index, the index torch came from")
        return (f"{_shown(package, ver)} was built for CUDA {built} and {_shown('torch', torch) if torch else 'torch'} for "
                f"CUDA {torch_cuda}: {package} checks at import that both were compiled for the same CUDA and refuses "
                "this pair (two indexes mixed: one from PyTorch's cuXYZ index, the other from another or the default)",
                f"install {pin} from PyTorch's {label} index, the index torch came from")
    return build


def _building(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """nvcc-missing: the package being compiled (flash-attn's own warning names it) and what a prebuilt wheel needs."""
    jit = h.groups.get("building_jit", "")
    named = h.groups.get("building", "") or jit
    pkg = canonicalize(named) if named else (h.package if h.package and h.package != "torch" else "")
    flag = h.groups.get("build_flag", "")
    who = pkg or (f"a package's --{flag} extension build" if flag else "a package")
    if flag and not pkg:  # a setup.py option that builds CUDA extensions (apex's --cuda_ext), no package named
        cuda = _torch_cuda(env)
        return (f"the source build's --{flag} option compiles CUDA extensions and needs nvcc, the CUDA toolkit's "
                "compiler, which is not installed or not where CUDA_HOME points (a runtime image has none: only the "
                "devel images ship nvcc)",
                f"install the CUDA toolkit of torch's CUDA ({cuda or 'torch.version.cuda'}), set CUDA_HOME to it and "
                "rebuild with pip install --no-build-isolation, or build in a -devel image")
    if jit:  # a package that compiles its CUDA code at first import (no prebuilt extension), and disables itself
        cuda = _torch_cuda(env)
        return (f"{who} has no prebuilt compiled extension here, so it JIT-compiles its CUDA code at first import with "
                "nvcc, the CUDA toolkit's compiler, and found none (not on PATH): it disables itself, and its first "
                "CUDA op fails",
                f"install the CUDA toolkit of torch's CUDA ({cuda or 'torch.version.cuda'}) and put its bin on PATH "
                f"(CUDA_HOME set to it), or install a prebuilt {who} wheel for the installed torch and CUDA")
    torch = env.version("torch")
    cuda = _torch_cuda(env)
    nvcc = h.groups.get("nvcc", "")
    found = f" (CUDA_HOME points at {nvcc.rsplit('/bin', 1)[0]}, which holds no nvcc)" if nvcc else ""
    toolkit = f"the CUDA {cuda} toolkit (torch's CUDA)" if cuda else "the CUDA toolkit of torch's CUDA (torch.version.cuda)"
    return (f"{who} is being compiled from source (pip found no prebuilt wheel for this Python"
            + (f", torch {torch}" if torch else ", torch") + " and CUDA and took its sdist), and compiling its CUDA code "
            f"needs nvcc, the CUDA toolkit's compiler, which is not installed or not where CUDA_HOME points{found}",
            f"install {who}'s prebuilt wheel for this Python, torch and CUDA (its release's wheels name them, +cuXYtorchX.Y), "
            f"or install {toolkit}, set CUDA_HOME to it and build with pip install --no-build-isolation"
            f"{' ' + pkg if pkg else ''}")


def _dll(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """torch-dll-load-failed: which DLL, of which package (its path under site-packages), and the usual missing one."""
    path = h.groups.get("dll", "")
    parts = [p for p in re.split(r"[\\/]+", path) if p]
    imported = h.groups.get("dll_from", "")
    module = imported or h.groups.get("dll_module", "")
    name = parts[-1] if parts else (f"compiled module {module} (its .pyd)" if module else "compiled module (its .pyd)")
    low = [p.lower() for p in parts]
    at = next((i for i, p in enumerate(low) if p in ("site-packages", "dist-packages")), -1)
    pkg = (canonicalize(parts[at + 1]) if 0 <= at < len(parts) - 1 else
           module_package(imported.split(".", 1)[0]) if imported else (h.package or ""))
    who = f"{_shown(pkg, env.version(pkg))}'s {name}" if pkg else (name if parts else f"a {name}")
    if h.groups.get("dll_proc") and not parts:  # WinError 127 (ERROR_PROC_NOT_FOUND) of a module left to this reading
        return (f"Windows loaded {who} and the DLLs it links, and one of them lacks a procedure it imports (WinError 127, "
                "ERROR_PROC_NOT_FOUND): a DLL of another version than the one it was built with was found first on PATH "
                "(a CUDA runtime, cuDNN or Visual C++ runtime of another release, or another copy of the package's own "
                "DLLs)",
                f"put the DLLs of the release {pkg or 'the package'} was built with first on PATH (its tested CUDA and "
                "cuDNN, the latest Visual C++ Redistributable) and remove other CUDA, cuDNN or stray copies' directories "
                f"from it, or install the {pkg or 'package'} build made for the DLLs present; the Dependencies tool "
                "(lucasg/Dependencies) on that .pyd names the DLL that lacks the procedure")
    return (f"Windows could not load {who} or a DLL it depends on: the DLL itself is there, so one of its dependencies "
            "is missing (WinError 126: typically the Microsoft Visual C++ runtime, vcruntime140.dll / msvcp140.dll, or "
            "an OpenMP runtime the build links) or of another version found first on PATH (WinError 127)",
            "install the latest Microsoft Visual C++ Redistributable for x64 (https://aka.ms/vs/17/release/vc_redist.x64.exe), "
            f"then reinstall {pkg or 'the package'} from the index it came from; for WinError 127 remove other torch or "
            f"CUDA DLL directories from PATH; the Dependencies tool (lucasg/Dependencies) on {name if parts else 'that .pyd'} names the missing DLL")


def proc_not_found(h: Hit, facts: Facts) -> Hit:
    """torch-dll-load-failed where CPython's "DLL load failed while importing X" carries FormatMessage's text of
    ERROR_PROC_NOT_FOUND (WinError 127, "The specified procedure could not be found"): the module's DLLs loaded and one
    of them lacks a function the module imports, the Windows form of an undefined symbol: undefined-symbol of the
    extension (the module's package, or the package its frames name for a private module such as _C). torch's own
    modules, and the line without its reason (or with 126's, a dependent DLL missing), keep the row's reading; so do
    the modules of a framework with a C++ API of its own (a [[cxx_namespace]] row's package or host other than torch:
    tensorflow's _pywrap_tensorflow_internal, jaxlib's, onnxruntime's pybind module), which link that framework's own
    libraries, not torch's: one of its DLLs (or a CUDA, cuDNN or MSVC runtime DLL) of another version was found first."""
    if h.id != "torch-dll-load-failed" or "dll_proc" not in h.groups or "dll" in h.groups:
        return h
    module = (h.groups.get("dll_from") or h.groups.get("dll_module", "")).split(".", 1)[0]
    pkg = module_package(module) if module and not module.startswith("_") else h.package
    row = next((r for r in facts.rows("signature") if r.id == "undefined-symbol"), None)
    if not pkg or pkg == "torch" or row is None:
        return h
    frameworks = {p for r in facts.rows("cxx_namespace") for p in (r.package, *r.hosts) if p and p != "torch"}
    if pkg in frameworks or h.package in frameworks:
        return h  # a framework's own module: its own libraries, not torch's, lack the procedure
    return replace(h, id=row.id, cause=row.cause, remedy=row.remedy, source=row.source, package=pkg,
                   groups={**h.groups, "win_proc": h.groups.get("dll_module", "") or module})


def dll_clash(h: Hit, env: Env, facts: Facts) -> Hit:
    """torch-dll-load-failed where torch's own DLL loader (torch/__init__.py _load_dll_libraries: ctypes.WinError with
    ' Error loading "<dll>" or one of its dependencies.' appended) failed with WinError 127 (ERROR_PROC_NOT_FOUND) on
    one of NVIDIA's CUDA library DLLs it ships in torch\\lib (cublas64_11.dll, cudnn64_8.dll: the [[nvidia_soname]]
    rows' dlls): the DLL was found, and a function it imports is missing from the DLL of that name Windows bound it to,
    which a module of the same name already loaded in the process (a package imported first that bundles its own CUDA
    libraries) or found first on PATH supplied: two releases of one CUDA library, cuda-toolkit-clash (fix-q). WinError
    126 (a DLL not found), torch's own DLLs (c10.dll, torch_cpu.dll) and other codes keep the row's reading. The code is
    the one the log shows with that DLL's message (the notes' "dll_error <dll>", glmcompat.model.signatures.LogContext)."""
    if h.id != "torch-dll-load-failed" or not h.groups.get("dll"):
        return h
    name = next((p for p in reversed(re.split(r"[\\/]+", h.groups["dll"])) if p), "")
    row = next((r for r in facts.rows("signature") if r.id == "cuda-toolkit-clash"), None)
    if not name or env.notes.get(f"dll_error {name.lower()}") != "127" or row is None or facts.nvidia_dll(name) is None:
        return h
    return replace(h, id=row.id, cause=row.cause, remedy=row.remedy, source=row.source,
                   groups={**h.groups, "win_clash_dll": name})


def _bnb(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """bitsandbytes-cuda-setup where the log names the binary it looked for (its CUDA in the file name)."""
    binary = h.groups.get("binary") or h.groups.get("binary_nf", "")
    cuda = h.groups.get("cuda") or h.groups.get("cuda_nf", "")
    if not binary or not cuda:
        return None
    name = binary.replace("\\", "/").rsplit("/", 1)[-1]
    release = f"{cuda[:-1]}.{cuda[-1]}"
    torch_cuda = _torch_cuda(env)
    return (f"bitsandbytes looked for {name}, its build for CUDA {release} (torch's CUDA, or BNB_CUDA_VERSION's override), "
            "and the installed bitsandbytes has no such binary (a source build for other CUDA versions, or a release "
            "without that CUDA): it falls back to its CPU library and its GPU functions are unavailable",
            "unset BNB_CUDA_VERSION unless you set it on purpose (export BNB_CUDA_VERSION=), and install a bitsandbytes "
            f"release with a binary for {('CUDA ' + torch_cuda) if torch_cuda else 'the CUDA torch uses'} "
            f"(pip install -U bitsandbytes), or build it for CUDA {release}; `python -m bitsandbytes` shows what it loads")


def _torch_lib(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """torch-lib-missing: which of torch's libraries, and what that says of the installed torch."""
    lib = h.groups.get("library", "")
    torch = env.version("torch")
    pkg = h.package if h.package and h.package != "torch" else ""
    ext = _shown(pkg, env.version(pkg)) if pkg else "a compiled extension"
    have = _shown("torch", torch) if torch else "the installed torch"
    cpu = torch.endswith("+cpu")
    if lib.startswith("libcaffe2_nvrtc"):  # torch dlopens it by bare name when it first needs NVRTC (its lazy NVRTC)
        why = (f"torch loads {lib} (torch/lib's NVRTC shim) with dlopen by its bare name, which searches LD_LIBRARY_PATH "
               "and the loader's cache, not torch/lib: the process did not load it with torch's own libraries (a torch "
               "whose torch/lib is not on the loader's path, a relocated or partially copied torch)")
        fix = ("put torch's lib directory on the loader's path (export LD_LIBRARY_PATH=$(python -c \"import torch, os; "
               "print(os.path.dirname(torch.__file__))\")/lib:$LD_LIBRARY_PATH), or reinstall torch so that torch/lib "
               f"holds {lib}")
        return f"the loader cannot find {lib}: {why}", fix
    if "_cu.so" in lib or "_cpp.so" in lib:
        why = (f"{lib} belongs to torch's split CUDA build (libtorch_cuda_cu.so and libtorch_cuda_cpp.so in place of "
               f"one libtorch_cuda.so), so {ext} was built against a torch of that layout and {have} is not one")
        fix = f"install {pkg or 'the extension'}'s build for {have} (its wheel for that torch release and CUDA)"
    elif "cuda" in lib or "hip" in lib:
        why = (f"{have} has no {lib}: it is {'a CPU-only build' if cpu else 'a build without that GPU backend (a CPU-only or another GPU build)'}, "
               f"while {ext} was built against a {'CUDA' if 'cuda' in lib else 'ROCm'} torch")
        fix = (f"install the {'CUDA' if 'cuda' in lib else 'ROCm'} build of torch {_public(torch) if torch else ''} "
               f"{pkg or 'the extension'} was built for, or {pkg or 'the extension'}'s CPU build").replace("  ", " ")
    else:
        why = (f"the loader does not find {lib}, one of torch's core libraries, for {ext}: torch is not installed in "
               "this environment, or the extension was imported before torch (torch/lib is loaded by import torch)")
        fix = f"import torch before {pkg or 'the extension'}, and install {pkg or 'the extension'}'s build for {have}"
    return f"{ext} links {lib}, which the loader cannot find: {why}", fix


def _tensorrt_lib(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """tensorrt-lib-missing: the TensorRT library and its major, and the bindings' release where the log shows it."""
    lib = h.groups.get("library", "") or h.groups.get("trt_library", "")
    major = h.groups.get("major", "") or h.groups.get("trt_major", "")
    if not lib:  # a line that names no library (onnxruntime's "Please install TensorRT libraries"): the row's own words
        return None
    pkg = h.package or "the TensorRT bindings"
    ver = h.version or env.version(pkg) if h.package else ""
    return (f"{_shown(pkg, ver)} links {lib} (TensorRT {major}'s library), which the loader cannot find: the TensorRT "
            f"{major} libraries are not installed (the -libs wheel the bindings import first, or a TensorRT tarball or "
            "system package) or their directory is not on the loader's path",
            f"install the TensorRT {major} libraries of {_shown(pkg, _public(ver) if ver else '')}'s release (its -libs wheel of "
            f"the same version), or put the directory holding {lib} (a TensorRT tarball's lib) on LD_LIBRARY_PATH")


def _libpython(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """libpython-missing: CPython's shared library of the version the soname names."""
    lib, py = h.groups.get("library", ""), h.groups.get("pyver", "")
    mod = h.groups.get("importing", "")
    who = (f"{mod} (imported where the traceback ends), a compiled module," if mod else
           f"{h.package}'s compiled module" if h.package else "a compiled module")
    return (f"{who} links {lib}, CPython {py}'s shared library, which the loader cannot find: the Python {py} that runs "
            "was built without --enable-shared (pyenv's default, some images' source builds), or its lib directory is "
            "not on the loader's path",
            f"run a Python {py} that ships {lib} (pyenv: PYTHON_CONFIGURE_OPTS=--enable-shared pyenv install {py}; the "
            f"distribution's or conda's python{py}), or put the directory holding {lib} on LD_LIBRARY_PATH")


def _driver_api(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """driver-too-old through a CUDA driver API function (``cu`` and a capital: cuGreenCtxStreamCreate) the loaded
    libcuda.so.1 does not export: the CUDA release that added it (the matrix's ``[[driver_api]]`` rows, from the
    toolkit's cudaTypedefs.h) against the driver's."""
    sym = h.groups.get("driver_api", "")
    base = re.sub(r"(?:_v\d{1,2})?(?:_ptds|_ptsz)?$", "", sym)
    since = facts.driver_api_release(base)
    pkg = h.package if h.package and h.package != "torch" else ""
    who = _shown(pkg, env.version(pkg)) if pkg else "a compiled module"
    drv, driver = env.cuda.get("driver_cuda", ""), env.cuda.get("driver", "")
    shown = f"driver {driver}" + (f" (CUDA {drv})" if drv else "") if driver else (f"a CUDA {drv} driver" if drv else "")
    if since and (Version(since) < Version("11.0") or (drv and _v(drv) is not None and Version(drv) >= Version(since))):
        cause = (f"{who} calls {sym}, a CUDA driver API function every NVIDIA driver since CUDA {since} exports"
                 + (f" ({shown} among them)" if shown else "") + ", yet the libcuda.so.1 it resolved against lacks it: the "
                 "NVIDIA driver's libcuda.so.1 is not the one loaded (the toolkit's stub under lib64/stubs, a second "
                 "libcuda on LD_LIBRARY_PATH, or none: a container started without the NVIDIA runtime)")
        return cause, ("load the driver's own libcuda.so.1: drop stubs and other libcuda directories from LD_LIBRARY_PATH, "
                       "start the container with the NVIDIA runtime (docker run --gpus all); `ldconfig -p | grep libcuda` "
                       "shows which one the loader finds")
    own = min_driver(since, facts)[1] if since else ""  # minor-version compatibility does not add a function
    added = f", a CUDA driver API function added in CUDA {since}" if since else ", a CUDA driver API function"
    older = f"older than CUDA {since}" if since else "older than the CUDA its build uses"
    cause = (f"{who} calls {sym}{added}, and the NVIDIA driver's libcuda.so.1 does not export it: the driver"
             + (f" ({shown})" if shown else "") + f" is {older}, the release that introduced it")
    newer = (f"a newer NVIDIA driver (>= {own}, CUDA {since}'s)" if own else
             f"an NVIDIA driver for CUDA {since} or newer (nvidia-smi's \"CUDA Version\" >= {since})" if since
             else "a newer NVIDIA driver")
    whose = f"{pkg}'s" if pkg else "the module's"
    return cause, (f"install {newer}, or {whose} release built for the CUDA the driver supports (nvidia-smi's "
                   "\"CUDA Version\")")


def _driver(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """driver-too-old: torch's "found version" message (:mod:`glmcompat.decide.cudacauses`), or a driver API
    function the driver lacks."""
    if "driver_api" in h.groups:
        return _driver_api(h, env, facts)
    return CUDA_BUILDERS["driver-too-old"](h, env, facts)


# a C symbol of the CUDA driver API: cu and a capital (cuGreenCtxStreamCreate, cuMemAlloc_v2); the runtime's are
# cuda..., the libraries' cublas..., cudnn..., cufft...
DRIVER_API = re.compile(r"cu[A-Z]\w{1,80}")


Builder = Callable[[Hit, Env, Facts], "tuple[str, str] | None"]


def runtime_driver(build: Builder) -> Builder:
    """driver-not-found as the runtimes other than torch's say it, before ``build`` (the loader's and NVML's forms):
    a Rust crate's dlopen (cudarc: "Unable to find cuda lib under the names [\"cuda\", \"nvcuda\"]", later "Unable to
    dynamically load the \"cuda\" shared library"), the unversioned libcuda.so or Windows' nvcuda.dll not found, a
    binding's "Failed to dlopen libcuda.so.1". The library is the one the line names."""

    def driver(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        g = h.groups
        if "ngc_nodriver" in g or "ngc_nodriver2" in g:  # an NGC image's entrypoint found no driver in the container
            return ("the container was started without the GPU: the image's entrypoint found no NVIDIA driver in it (no "
                    "libcuda.so.1 mounted, or no /dev/nvidiactl device), so CUDA is unavailable and GPU code fails or "
                    "runs on the CPU",
                    "start the container with the GPU: docker run --gpus all (the NVIDIA Container Toolkit installed and "
                    "configured for the container runtime; --runtime=nvidia on older setups; a cluster's pod "
                    "requesting an nvidia.com/gpu resource), with a working NVIDIA driver on the host (nvidia-smi lists the GPU)")
        if "rt_setup" in g:  # a library's own CUDA setup that dlopens the driver's library by its unversioned name
            who = h.package if h.package and h.package != "torch" else "the library's CUDA setup"
            return (f"{who} looks for the NVIDIA driver's library by its unversioned name ({g['rt_setup']}, ctypes' "
                    "dlopen) to detect the GPU, and the loader finds none, so it falls back to its CPU library: the "
                    "driver's directory is not on the loader's path (on WSL2 the driver's libcuda.so lives in "
                    "/usr/lib/wsl/lib), only the versioned libcuda.so.1 is installed without the libcuda.so link, or no "
                    "NVIDIA driver is installed where this runs",
                    "make libcuda.so resolvable: on WSL2, export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH (or "
                    "sudo ldconfig /usr/lib/wsl/lib); elsewhere install the NVIDIA driver (nvidia-smi must list the GPU) "
                    "and run sudo ldconfig; or upgrade the library to a release that takes the GPU from torch instead of "
                    "libcuda.so")
        lib = g.get("rt_lib") or g.get("rt_dlopen") or g.get("rt_dll", "").replace("\\", "/").rsplit("/", 1)[-1] or (
            "libcuda.so / nvcuda.dll" if ("rt_cudarc" in g or "rt_cudarc2" in g) else "")
        if not lib:
            return build(h, env, facts)
        who = h.package if h.package and h.package != "torch" else "the program"
        return (f"{who} loads the NVIDIA driver's own library ({lib}) at run time, and the loader finds none: no NVIDIA "
                "driver is installed where this runs, a container was started without the GPU, or the driver's directory "
                "is not on the loader's path (on WSL2 the driver's libcuda.so lives in /usr/lib/wsl/lib, which must be on "
                "LD_LIBRARY_PATH; on Windows nvcuda.dll is in System32, installed by the driver)",
                "make the driver's library reachable: on WSL2, export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH; "
                "elsewhere install the NVIDIA driver (nvidia-smi must list the GPU) or start the container with --gpus "
                "all; the CUDA toolkit's lib64/stubs/libcuda.so is no substitute")

    return driver


# A symbol of torch's C++ API, by its mangled outermost namespace (Itanium ABI: _ZN, its cv-qualifiers, <length><name>):
# c10::, at::, torch::, caffe2::
TORCH_SYMBOL = re.compile(r"_ZN[rVKRO]{0,3}(?:3c10|2at|5torch|6caffe2)(?=\d|I|S|C|D)")
# A function or variable of CPython's C API (its reserved prefixes Py and _Py, PEP 7 "Naming conventions"): what an
# extension module leaves to a flat lookup by design (CPython's sysconfig LDSHARED on macOS: -bundle -undefined
# dynamic_lookup), the interpreter that loads it providing them
PYTHON_API = re.compile(r"_?Py[A-Z_]\w*")


def _flat_own(h: Hit, elf: str, lib: str) -> bool:
    """Whether dyld's "flat namespace" for a missing symbol is a defect of the referencing library's own build: the
    image recorded no library for the symbol (dyld 3 and before: "Expected in: flat namespace"; dyld 4: "symbol not found
    in flat namespace '_X'"; opensource-apple/dyld@3f928f32597888c5eac6003b9199d972d49857b5
    src/ImageLoaderMachOCompressed.cpp:732-753 resolveFlat, :809 the BIND_SPECIAL_DYLIB_FLAT_LOOKUP ordinal;
    apple-oss-distributions/dyld@fd8d0c4d52320ebf64db34f3cb280310d905c5ae (dyld-1378) dyld/Loader.cpp:2866-2909), so its
    static link found the symbol in none of the libraries it linked: a two-level image that linked a library of another
    release than the one loaded names that library in "Expected in:" instead. A flat miss is another build's only where
    the referencing image leaves that symbol to what loads before it by design: CPython's C API (an extension module
    of another Python), or, for a package other than torch, torch's C++ API (an extension left to the torch imported
    first); any other symbol (a CUDA runtime function in torch's own _C.so, a package's own function) is a library the
    build did not link or compile: that build's defect, no version mismatch."""
    if PYTHON_API.match(elf):
        return False
    pkg = h.package or (_site_package(lib) if lib else "")
    return not (TORCH_SYMBOL.match(elf) and pkg and pkg != "torch")


def dyld_symbol(build: Builder) -> Builder:
    """undefined-symbol as macOS's dyld says it ("Symbol not found: _X", with "Referenced from:" / "Expected in:"
    after it; dlopen(<library>, <mode>): before it in Python's ImportError): Mach-O names carry one more leading
    underscore than ELF's (_torch_library_impl is the C symbol torch_library_impl, __ZN... the C++ _ZN...), so the
    ELF name goes to ``build`` and the cause says the symbol as dyld spelled it."""

    def symbol(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        sym = h.groups.get("dyld_symbol") or h.groups.get("dyld_flat_symbol", "")
        if not sym:
            return build(h, env, facts)
        elf = sym[1:]
        lib = h.groups.get("dyld_library") or h.groups.get("dyld_flat_library", "")
        flat = "dyld_flat_symbol" in h.groups or env.notes.get("dyld_expected") == "flat namespace"
        if flat and _flat_own(h, elf, lib):
            return None  # the library's own build left the symbol's library out (or the symbol): no version mismatch
        got = build(replace(h, groups={**h.groups, "symbol": elf, **({"library": lib} if lib else {})}), env, facts)
        if got is not None:
            return (got[0].replace(f"({elf})", f"({sym})", 1) if sym not in got[0] else got[0]), got[1]
        who = f"{lib.rsplit('/', 1)[-1]}" if lib else "a compiled library"
        return (f"{who} needs the symbol {sym} (dyld: Symbol not found), which no library loaded with it exports: it was "
                "built against another release of the library that defines it (for a torch extension, another torch "
                "than the installed one), so macOS's loader refuses it",
                "install releases built for each other (the extension's release made for the installed torch: `pip show "
                "torch` and the extension's own version), or pin torch to the release the extension was built against")

    return symbol


# the directory a Homebrew formula's files are linked from: /opt/homebrew (Apple silicon) or /usr/local (Intel), then
# opt/<formula>/ or Cellar/<formula>/<version>/ (Homebrew's docs, "Installation": the prefixes of each architecture)
_BREW = re.compile(r"^(?P<prefix>/opt/homebrew|/usr/local)/(?:opt|Cellar)/(?P<formula>[\w@.+-]{1,80})/")
# a site-packages (or dist-packages) directory in a path, and the top-level directory after it: the package's own file
_SITE = re.compile(r"[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z_][\w.-]{0,80})")


def _site_package(path: str) -> str:
    """The distribution whose directory under site-packages holds ``path`` ("" where it is none): its .dylibs (a
    wheel's bundled libraries, delocate's) folded into the package (``PIL/.dylibs`` -> pillow's ``PIL``)."""
    m = _SITE.search(path)
    return module_package(m.group("top").removesuffix(".dylibs")) if m else ""


def _missing_dylib(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """A library macOS's loader did not find, as dyld says it (``Library not loaded: <install name>`` with the file that
    referenced it, or ``dlopen(<path>, <mode>):`` with ``tried: '<path>' (no such file)`` / ``image not found``): the
    library, the package whose file needs it, and how that library gets onto the machine (the package's own wheel, a
    Homebrew formula, OpenMP's runtime, CPython's shared library)."""
    g = h.groups
    lib = g.get("dyld_missing") or g.get("dyld_open", "")
    if not lib:
        return None
    name = lib.rsplit("/", 1)[-1]
    by = g.get("dyld_from", "")
    pkg = h.package or _site_package(by)
    owner = _site_package(lib) if lib.startswith("/") else ""
    who = (f"{_shown(pkg, env.version(pkg))}'s " if pkg else "") + (by.rsplit("/", 1)[-1] if by else (
        "compiled module" if pkg else "a compiled module"))
    what = f"the library {lib}" if name == lib else f"{name} ({lib})"
    head = (f"{who} links {what}, and macOS's loader (dyld) found no file for it in the places it searched"
            if "dyld_missing" in g else f"{who} loads {what} with dlopen, and macOS's loader (dyld) found no such file")
    torch = env.version("torch")
    if h.id == "torch-lib-missing":
        have = _shown("torch", torch) if torch else "the installed torch"
        own = pkg if pkg and pkg != "torch" else ""
        return (f"{head}: {name} is one of torch's own libraries (torch/lib), so torch is not installed whole in this "
                f"environment{', or ' + own + ' was built against a torch of another layout than ' + have if own else ''}",
                f"reinstall torch (python -m pip install --force-reinstall --no-deps torch{'==' + _public(torch) if torch else ''})"
                + (f", then install {own}'s build for {have}; import torch before {own}" if own else ""))
    if h.id == "libpython-missing":
        py = g.get("dyld_pyver") or g.get("dyld_fwver", "")
        return (f"{head}: it is CPython {py or '3.X'}'s shared library (or framework), which {who} was linked against and "
                f"the Python that runs does not provide (a Python {py or '3.X'} built without --enable-shared or "
                "--enable-framework, pyenv's default, or a module built for another Python installation)",
                f"run the module with the Python {py or '3.X'} it was built for, or rebuild/reinstall "
                f"{pkg or 'it'} with this Python (pyenv: PYTHON_CONFIGURE_OPTS=--enable-framework pyenv install {py or '3.X'})")
    brew = _BREW.match(lib)
    cuda = re.match(r"lib(?:cudart|cublas|cudnn|cufft|curand|cusparse|cusolver|nvrtc|nvToolsExt)\.?(?P<ver>\d{1,2}(?:\.\d)?)?", name)
    if cuda:
        ver = cuda.group("ver") or ""
        why = (f"{name} is a library of NVIDIA's CUDA {ver + ' ' if ver else ''}toolkit for macOS (its last release was "
               f"CUDA 10.2), which this Mac does not have where the build found it: {pkg or 'the package'} is a CUDA build")
        fix = (f"install {pkg or 'the package'}'s CPU (or MPS) build for macOS, or the CUDA {ver or '10.x'} toolkit for macOS "
               "with its lib directory on DYLD_LIBRARY_PATH (export DYLD_LIBRARY_PATH=/usr/local/cuda/lib)")
    elif owner:
        why = (f"{lib} is {owner}'s own file (its wheel ships it), so {owner} is not installed whole (a partial install, "
               "or files removed by another installer)")
        fix = f"reinstall {owner}: python -m pip install --force-reinstall --no-deps --no-cache-dir {owner}"
    elif lib.startswith(("@loader_path", "@rpath")) and pkg and re.match(r"lib(?:i?omp|iomp5|gomp)\b", name) is None:
        why = (f"{pkg}'s wheel bundles its own libraries next to its modules (its .dylibs or lib directory, found through "
               f"{lib.split('/', 1)[0]}), and {name} is not there: {pkg} is not installed whole, or its build expected "
               "the library from the system")
        fix = (f"reinstall {pkg} from its wheel for this macOS and architecture: python -m pip install --force-reinstall "
               f"--no-deps --no-cache-dir {pkg}; where the build links a library of the system, install it (Homebrew: "
               f"brew install {name.removeprefix('lib').split('.', 1)[0]})")
    elif brew:
        why = (f"{lib} is Homebrew's {brew.group('formula')} (in {brew.group('prefix')}, Homebrew's prefix on "
               f"{'Apple silicon' if brew.group('prefix') == '/opt/homebrew' else 'Intel Macs'}): the build linked "
               "Homebrew's copy, and this machine's Homebrew has no such formula installed (or it was upgraded to a "
               "new major, whose library has another name)")
        fix = (f"brew install {brew.group('formula')} (brew reinstall after an upgrade), or install {pkg or 'the package'}'s "
               "wheel that bundles its libraries instead of a build against Homebrew's")
    elif re.match(r"lib(?:i?omp|iomp5)\b", name):
        why = (f"{name} is the OpenMP runtime, which {pkg + chr(39) + 's build' if pkg else 'the build'} links and "
               "which macOS does not ship: it comes from Homebrew, conda or the wheel that bundles it")
        fix = ("install the OpenMP runtime: brew install libomp (for Homebrew's own prefix; in a conda environment, conda "
               f"install -c conda-forge llvm-openmp), or reinstall {pkg + ' from its wheel that bundles it' if pkg else 'the package'}"
               " (python -m pip install --force-reinstall --no-deps --no-cache-dir)")
    else:
        stem = name.removeprefix("lib").split(".", 1)[0]
        where = (f"not in {lib.rsplit('/', 1)[0]}, where the build found it" if lib.startswith("/") else
                 "in none of the directories dyld searched" + (f" for {lib.split('/', 1)[0]}" if "/" in lib else ""))
        why = f"{name} is not installed on this Mac ({where})"
        fix = (f"install the library {name} (Homebrew: brew install {stem}; `brew search {stem}` names the formula), or "
               f"install {pkg or 'the package'}'s wheel for macOS, which bundles the libraries it links")
    return f"{head}: {why}", fix


def _dyld_arch(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """dylib-wrong-arch: a Mach-O file of another CPU architecture than the process (macOS's dyld: "mach-o file, but
    is an incompatible architecture (have 'x86_64', need 'arm64e' or 'arm64')", dyld 2's "mach-o, but wrong
    architecture"): both architectures where the log names them, and the interpreter of the machine's to reinstall with."""
    g = h.groups
    have = g.get("arch_have") or g.get("arch_have2", "")
    need = " or ".join(a for a in (g.get("arch_need") or g.get("arch_need2", ""), g.get("arch_need_b", ""),
                                   g.get("arch_need_c", "")) if a)
    path = g.get("arch_tried") or g.get("arch_file", "")
    pkg = h.package or _site_package(path)
    name = path.rsplit("/", 1)[-1] if path else ""
    who = (f"{_shown(pkg, env.version(pkg))}'s {name or 'compiled module'}" if pkg else
           (path or "a compiled library"))
    pin = f" {pkg}{'==' + _public(env.version(pkg)) if env.version(pkg) else ''}" if pkg else " <package>"
    check = "python -c \"import platform; print(platform.machine())\" shows the interpreter's"
    arm_proc = "arm64" in need
    runs = "arm64" if arm_proc else "x86_64" if "x86_64" in need else need  # arm64e / x86_64h: the first graded arch
    built = have.replace(",", " and ") + (" (a universal file without the process's slice)" if "," in have else "")
    if have and need:
        if arm_proc:
            why = (f"{who} is built for {built} and the Python process loading it runs as {runs} "
                   f"(dyld needs {need}): an {have.replace(',', ' and ')} build installed into a native Apple silicon Python (by an x86_64 pip "
                   "run under Rosetta, an environment copied from an Intel Mac, a wheel cache of x86_64 wheels)")
            fix = (f"reinstall with the arm64 interpreter itself: arch -arm64 python -m pip install --force-reinstall "
                   f"--no-cache-dir{pin} (its arm64 or universal2 wheel); {check}")
        else:
            why = (f"{who} is built for {built} and the Python process loading it runs as {runs}: an {runs} interpreter "
                   f"(an Intel Python or conda running under Rosetta 2 on an Apple silicon Mac) with an "
                   f"{have.replace(',', ' and ')} build")
            fix = ("use an interpreter of the machine's architecture (on Apple silicon an arm64 Python: python.org's "
                   "universal2 build, Homebrew's /opt/homebrew/bin/python3 or an osx-arm64 conda; a new virtual environment made "
                   f"with it) and reinstall there: arch -arm64 python -m pip install --force-reinstall --no-cache-dir{pin}; "
                   f"on an Intel Mac install the x86_64 build instead; {check}")
    else:
        why = (f"{who} is a Mach-O file of another CPU architecture than the Python process loading it (macOS 11's loader "
               "does not say which: typically an x86_64 build in an arm64 Python on Apple silicon, or an arm64 build in "
               "an x86_64 Python running under Rosetta 2)")
        fix = (f"use an interpreter of the machine's architecture and reinstall there: arch -arm64 python -m pip install "
               f"--force-reinstall --no-cache-dir{pin} on Apple silicon (an x86_64 build on an Intel Mac); `file "
               f"{path or '<library>'}` shows the file's architecture, {check}")
    return why, fix


def dyld_library(build: Builder) -> Builder:
    """A missing library as macOS's dyld says it (the ``dyld_missing`` / ``dyld_open`` groups of torch-lib-missing,
    libpython-missing and system-lib-missing), before ``build`` (the Linux loader's forms)."""

    def missing(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        if "dyld_missing" in h.groups or "dyld_open" in h.groups:
            return _missing_dylib(h, env, facts)
        return build(h, env, facts)

    return missing


def nccl_releases(at: set[tuple[str, int]], facts: Facts) -> list[dict[str, NcclCheck]]:
    """The ``[[nccl_check]]`` rows (file -> row) of every NCCL release whose checks hold each (file, line) of ``at``
    that the rows read (a file no row reads tells nothing), oldest release first."""
    rows = facts.rows("nccl_check")
    read = {r.file for r in rows}
    at = {(f, n) for f, n in at if f in read}
    by: dict[str, dict[str, NcclCheck]] = {}
    for r in rows:
        by.setdefault(r.release, {})[r.file] = r
    return sorted((fs for fs in by.values() if all(f in fs and n in fs[f].checks for f, n in at)),
                  key=lambda fs: _v(next(iter(fs.values())).release) or Version("0"))


def _nccl_launch(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """nccl-too-old where NCCL's own kernel launch failed with "invalid argument": the WARN's file and line, and every
    NCCL INFO trace's, read against the lines of each release's checks (``[[nccl_check]]``); claimed only where every
    release they fit (the one the log's version line names, where it names one) launched its kernel at that line."""
    file, line = h.groups["nccl_launch_file"], int(h.groups["nccl_launch_line"])
    at = {(file, line)} | {(f, int(n)) for a in env.notes.get("nccl_at", "").split(", ") if a
                           for f, _, n in [a.rpartition(":")] if n.isdigit()}
    shown = env.cuda.get("nccl", "") or env.version("nccl")  # the release NCCL's version line names, where shown
    fits = [fs[file] for fs in nccl_releases(at, facts) if file in fs and (not shown or fs[file].release == shown)]
    if not fits or any(line not in r.launches for r in fits):
        return None
    releases = [r.release for r in fits]
    named = shown or " or ".join(releases)
    return (f"NCCL's launch of its own kernel failed with \"invalid argument\" ({file}:{line} is the kernel launch in "
            f"ncclLaunchKernel of NCCL {' and '.join(releases)}, the release{'s' if len(releases) > 1 else ''} whose checks "
            f"sit at every line the log names): the GPU refused the launch configuration NCCL {named} computes for it "
            "(the dynamic shared memory per block, the cluster size it asks), which that release sized for the GPUs it "
            f"knew, so NCCL {named} is too old for this GPU (a newer GPU generation than it supports)",
            f"use a newer NCCL than {named} (pip install -U nvidia-nccl-cu12, or the torch / container / TensorRT-LLM "
            "release that bundles a newer one), and make sure that libnccl.so.2 is the one loaded (no older copy first on "
            "LD_LIBRARY_PATH)")


def _nccl_old(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """nccl-too-old: NCCL's topology search failed on links it does not model; the NCCL version the log names."""
    if "nccl_launch_line" in h.groups:
        return _nccl_launch(h, env, facts)
    have = env.cuda.get("nccl", "") or env.version("nccl")
    nccl = f"NCCL {have}" if have else "the NCCL loaded"
    return (f"{nccl}'s topology detection could not build a path between the machine's GPUs (ncclInternalError: "
            "\"Failed to find reverse path\"): the GPUs and their links (NVLink / NVSwitch generation, PCI switches) are "
            f"newer than {nccl} knows, so {nccl} is too old for this machine (the NCCL torch bundles, or a container's)",
            f"use an NCCL release newer than {have or 'the one loaded'} that supports the GPUs (H100s: NCCL 2.15.1 or "
            "newer): pip install -U nvidia-nccl-cu12 (or a torch / container release that bundles it), with no older "
            "libnccl.so.2 first on LD_LIBRARY_PATH")


def _nccl_older(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """nccl-library-older-than-torch: NCCL 2.14-2.16 rejecting the undefined blocking attribute (INT_MIN) of the config
    a torch built against NCCL 2.17 or newer passes; the NCCL version the log names (torch's "NCCL version x.y.z")."""
    have = env.cuda.get("nccl", "") or env.version("nccl")
    nccl = f"NCCL {have}" if have else "the NCCL loaded"
    return (f"the libnccl.so.2 the process loaded, {nccl}, is older than the NCCL torch was built against: torch passes "
            "the communicator config of its newer NCCL headers (ncclConfig_t, its blocking attribute left undefined: "
            f"INT_MIN, -2147483648, from NCCL 2.17 on), which {nccl} rejects as invalid (ncclInvalidArgument; NCCL 2.14-2.16 "
            "accept only 0 or 1)",
            f"keep only the NCCL torch requires: install the nvidia-nccl-cu12 (or -cu11) version torch's METADATA pins "
            f"(`pip show torch`), drop the older libnccl ({nccl}) from LD_LIBRARY_PATH (a system or conda NCCL, a second "
            "nvidia-nccl wheel), or install a torch built for the NCCL that is there")


# signature id -> its cause builder (:data:`glmcompat.decide.diagnose.BUILDERS` holds these and the rest)
LOADER_BUILDERS: dict[str, Callable[[Hit, Env, Facts], tuple[str, str] | None]] = {
    "driver-too-old": _driver,
    "cuda-toolkit-mismatch": _toolkit,
    "libstdcxx-too-old": _libstdcxx,
    "glibc-too-old": _glibc,
    "cudnn-not-found": _cudnn_missing,
    "torchvision-cuda-mismatch": _family_cuda("torchvision"),
    "torchaudio-cuda-mismatch": _family_cuda("torchaudio"),
    "nvcc-missing": _building,
    "torch-dll-load-failed": _dll,
    "bitsandbytes-cuda-setup": _bnb,
    "torch-lib-missing": _torch_lib,
    "tensorrt-lib-missing": _tensorrt_lib,
    "libpython-missing": _libpython,
    "nccl-too-old": _nccl_old,
    "nccl-library-older-than-torch": _nccl_older,
    "dylib-wrong-arch": _dyld_arch,
}


__all__ = ["DRIVER_API", "FIRST_GCC", "FIRST_GCC_CXXABI", "LOADER_BUILDERS", "dll_clash", "dyld_library", "dyld_symbol",
           "proc_not_found", "runtime_driver"]
