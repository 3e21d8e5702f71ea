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
from dataclasses import replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from glmcompat.readers.elf import torch_shaped
from glmcompat.decide.buildcauses import SWEEP_BUILDERS, SWEEP_DROPPED, built_package, device_query_in_build, ignored_elsewhere
from glmcompat.decide.companioncauses import COMPANION_BUILDERS, COMPANION_DROPPED
from glmcompat.decide.cudacauses import CUDA_BUILDERS
from glmcompat.decide.enginecauses import ENGINE_BUILDERS
from glmcompat.decide.extcauses import EXT_BUILDERS, ext_cause, ext_package, family_runtime
from glmcompat.decide.frameworkcauses import framework_builder, framework_package, notice, with_package
from glmcompat.decide.installcauses import INSTALL_BUILDERS, companions, glibc_refusal, libcuda_of_a_build, torch_python_wheel
from glmcompat.decide.loadercauses import (DRIVER_API, LOADER_BUILDERS, TORCH_SYMBOL, dll_clash, dyld_library, dyld_symbol,
                                           proc_not_found, runtime_driver)
from glmcompat.decide.logenv import Env
from glmcompat.decide.logenv import local as _local
from glmcompat.decide.logenv import public as _public
from glmcompat.decide.logenv import shown as _shown
from glmcompat.decide.logenv import v as _v
from glmcompat.decide.sharpcauses import SHARP_BUILDERS, SHARP_WRAPPERS, aliased, old_gpu_launch, renamed_runtime, tf_probe_notice
from glmcompat.decide.reportcauses import (REPORT_DROPPED, REPORT_WRAPPERS, after_failed_install, failed_install_run,
                                           poetry_derivation, poetry_readings, side_notes)
from glmcompat.decide.pythoncauses import (PYTHON_BUILDERS, PYTHON_DROPPED, PYTHON_PACKAGE, arch_of_named_gpu, importing_module,
                                           isolated_torch, known_distributions, module_distribution, named_gpu,
                                           optional_missing, removed_attribute, removed_keyword, runs_on_sm, torch_missing_in_a_build)
from glmcompat.decide.torchpythons import hinted, pip_torch_pins, uv_torch_python
from glmcompat.matrix.view import Facts
from glmcompat.model.causes import CAUSE_OF, Break
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import Hit, module_package, name_tables


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
    return (f"{_shown(package, ver)} was built for {('torch' + wants + ', not') if wants else 'another torch than'} the "
            f"installed torch {torch} (ABI mismatch: its compiled extension does not load)",
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
        return (f"{package} {ver} was built against torch {built} ({row.evidence}); the installed torch, which the "
                f"{env.where} does not show, must be another: its compiled module {what}",
                f"install torch=={built} (the one {package} {ver} was built against), or the {package} release built "
                "for the installed torch (`pip show torch` names it)")
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
    if (colon := h.groups.get("colon_library", "")):
        # the loader's line cut after the library's name: an undefined symbol only where the log quotes a torch symbol
        quoted = env.notes.get("quoted_symbol", "")
        if not torch_shaped(quoted) or not h.package or h.package == "torch":
            return None
        h = replace(h, groups={**h.groups, "library": colon, "symbol": quoted})
    pkg = h.package
    sym = h.groups.get("symbol", "")
    if sym.startswith("nccl"):
        return _nccl(h, env, facts)
    if STD_SYMBOL.match(sym):
        return _libstdcxx(h)
    if (own := OWN_SYMBOL.match(sym)) is not None:
        start = 2 + len(own.group("len"))
        return _own_symbol(h, sym[start:start + int(own.group("len"))])
    if own_function(sym, facts):  # a plain function of the extension's own sources: its build left it out, not torch
        return None
    if (native := symbol_library(sym, facts)) is not None:  # a native library's C++ API (MPI::): not linked against it
        return _library_symbol(h, env, *native)
    if (owner := symbol_framework(sym, facts)) is not None:  # another framework's C++ API (tensorflow::, phi::, xla::)
        return _framework_symbol(h, env, *owner)
    if (not pkg or pkg == "torch") and (own_lib := _torch_own_library(h.groups.get("library", ""))) and (
            torch_shaped(sym) or LEGACY_TH.match(sym) is not None):
        return _stale_torch_library(own_lib, sym, env)
    if (jni := h.groups.get("djl_jni", "")):
        error = h.groups.get("djl_error", "")
        if DJL_OTHER.search(error):  # the JNI library's own dependency missing, or a libstdc++/glibc too old: not this
            return None
        return _djl(jni, m.group(1) if (m := re.search(r"undefined symbol: (\S{1,400})", error)) else "", env)
    if (own_lib := h.groups.get("own_load", "")):
        return _own_load(own_lib, module_package(h.groups.get("own_module", "")), env)
    cut = h.groups.get("cut_library", "")
    if cut and (not pkg or pkg == "torch"):  # the symbol cut off and no package's module: nothing to name honestly
        return None
    what = "needs a symbol the installed torch does not export" + (f" ({sym})" if sym else " (the log cuts its name off)"
                                                                    if cut else "")
    lib = (h.groups.get("library") or h.groups.get("bare_library") or cut).replace("\\", "/").rsplit("/", 1)[-1]
    if not pkg and (mod := EXT_MODULE.fullmatch(lib)) is not None and TORCH_SYMBOL.match(sym):
        return _module_symbol(mod.group("module"), lib, sym, env)
    if not pkg or pkg == "torch":
        return None
    if pkg in facts.family_packages():
        got = _family(pkg, env, facts)
    elif pkg in facts.kernel_packages():
        got = _kernel(pkg, env, facts, what)
    else:
        got = _untracked(pkg, env, what)
    # the library the loader names (torchvision/image.so, vllm/_C.abi3.so): which of the package's modules fails
    if got is None:
        if not lib:
            return None
        return (f"{pkg}'s compiled library {lib} {what}: {pkg} was built against another torch (or another build of it) "
                "than the installed one", f"install the {pkg} release built for the installed torch (`pip show torch "
                f"{pkg}` shows both versions), or pin torch to the one {pkg} was built against")
    if lib and lib not in got[0]:
        return f"{got[0]} (its library {lib} does not load)", got[1]
    return got


# DJL's cache folder of a libtorch and its JNI library: <version>-<flavor>-<classifier> (deepjavalibrary/djl tag v0.20.0
# engines/pytorch/pytorch-engine/src/main/java/ai/djl/pytorch/jni/LibUtils.java:221-223, findJniLibrary:
# cacheDir.resolve(version + '-' + flavor + '-' + classifier), then apiVersion + '-' + libdjl_torch)
DJL_DIR = re.compile(r"(?P<version>\d{1,2}\.\d{1,3}\.\d{1,3})-(?P<flavor>(?:cpu|cu\d{2,4}|rocm[\d.]{1,8})(?:-precxx11)?)-"
                     r"(?P<classifier>(?:linux|osx|win)-[\w]{1,12})/(?P<api>[\w.]{1,30}?)-libdjl_torch\.(?:so|dylib)$")


# what else the loader says of DJL's JNI library (java.lang.UnsatisfiedLinkError: <path>: <dlerror>): a file it needs
# missing, a symbol version of another library not found (libstdc++'s GLIBCXX_*, glibc's), another architecture
DJL_OTHER = re.compile(r"cannot open shared object file|No such file|not found|wrong ELF class|Can't find dependent libraries")


def _djl(jni: str, sym: str, env: Env) -> tuple[str, str]:
    """undefined-symbol of DJL's JNI library (libdjl_torch) for one libtorch build linked against another: a libtorch
    found on java.library.path or PYTORCH_LIBRARY_PATH, which DJL 0.20 takes for a pre-C++11-ABI build of its own
    version unless PYTORCH_FLAVOR and PYTORCH_VERSION say otherwise (LibUtils.java:531-547, LibTorch(Path))."""
    m = DJL_DIR.search(jni.replace("\\", "/"))
    lib = env.notes.get("djl_libtorch", "")
    jni_dir = jni.replace("\\", "/").rsplit("/", 1)[0]
    other = lib and not lib.startswith(jni_dir + "/")  # the libtorch it loaded lies outside DJL's own cache folder
    flavor, version = (m.group("flavor"), m.group("version")) if m else ("", "")
    old_abi = flavor.endswith("-precxx11")
    built = (f"for libtorch {version} {flavor}" if m else "for one libtorch build") + (
        " (the pre-C++11 ABI, _GLIBCXX_USE_CXX11_ABI=0)" if old_abi else "")
    loaded = f"the libtorch DJL loaded ({lib}, outside its cache folder: one found on java.library.path or " \
             "PYTORCH_LIBRARY_PATH)" if other else f"the libtorch DJL loaded{' (' + lib + ')' if lib else ''}"
    said = f" ({sym})" if sym else ""
    why = ("DJL takes a libtorch it finds there for a precxx11 build unless PYTORCH_FLAVOR says otherwise, and a system "
           "or self-built libtorch is built with the C++11 ABI (or is another version), so the precxx11 JNI library's "
           "symbols are not in it" if old_abi else
           "that libtorch is another version or ABI build than the one the JNI library was built for")
    return (f"DJL's PyTorch JNI library {jni.replace(chr(92), '/').rsplit('/', 1)[-1]} was built {built} and fails to link "
            f"against {loaded}{said}: {why}",
            "remove that libtorch from java.library.path, LD_LIBRARY_PATH and PYTORCH_LIBRARY_PATH so that DJL downloads the "
            "libtorch its JNI library was built for, or tell DJL what that libtorch is: PYTORCH_VERSION=<its version> and "
            "PYTORCH_FLAVOR=<cpu or cuXYZ, with -precxx11 only for a pre-C++11-ABI build>")


def _own_load(lib: str, pkg: str, env: Env) -> tuple[str, str]:
    """undefined-symbol where a package's own words hide the loader's error on its own library (fbgemm_gpu 0.2's "File
    fbgemm_gpu_py.so not found", printed for any failure of torch.ops.load_library on a file its wheel ships)."""
    torch, ver = env.version("torch"), env.version(pkg)
    here = f"torch {torch}" if torch else "the installed torch"
    module = lib.removesuffix(".so").removesuffix("_py")
    if torch.endswith("+cpu"):  # pytorch/FBGEMM#1235: a CPU torch lacks the libc10_cuda.so its CUDA build links
        return (f"{_shown(pkg, ver)} could not load its own compiled library {lib} ({module}'s __init__ prints \"File "
                f"{lib} not found\" for any failure to load it): {here} is a CPU-only build, without the CUDA libraries "
                f"(libc10_cuda.so, libtorch_cuda.so) the CUDA build of {pkg} links",
                f"install a CUDA build of torch (the index of its CUDA), or the CPU build of {pkg} (fbgemm-gpu-cpu)")
    return (f"{_shown(pkg, ver)} could not load its own compiled library {lib}: {module}'s __init__ prints \"File {lib} "
            "not found\" for any failure of torch.ops.load_library, and its wheel ships that file beside it, so what "
            f"fails is the library's link against {here}: {pkg} was built for another torch (an undefined symbol of "
            "torch's C++ API; a stable release is built for one torch release, a nightly for the nightly torch)",
            f"install the {pkg} release built for {here} (its stable release for a stable torch, the nightly for the "
            f"nightly torch, and its companions such as torchrec from the same channel), or the torch it was built for; "
            f"python -c \"import torch, {module}\" with {module} 0.3 or newer prints the loader's own error")


# torch's own libraries as the loader names them: a file of its package's lib directory (torch/lib/libATen.so.1,
# torch/lib/libtorch_cpu.so, torch/lib/libc10.so: where every torch wheel, conda package and source build puts them) or
# its Python extension module (torch/_C.cpython-*.so); and the C names of its legacy TH libraries (THNN_*, THC*, TH*)
TORCH_OWN_LIBRARY = re.compile(r"(?:^|/)torch/(?P<file>lib/[^/]{1,200}\.so[.\d]{0,12}|_C(?:\.[\w-]{1,80})?\.so)$")
LEGACY_TH = re.compile(r"TH[A-Z_]")


def _torch_own_library(library: str) -> str:
    """The file name of ``library`` where it is one of torch's own (:data:`TORCH_OWN_LIBRARY`), else ""."""
    m = TORCH_OWN_LIBRARY.search(library.replace("\\", "/"))
    return m.group("file").rsplit("/", 1)[-1] if m is not None else ""


def _stale_torch_library(lib: str, sym: str, env: Env) -> tuple[str, str]:
    """undefined-symbol where the library the loader names is torch's own and the symbol torch's too: torch's
    libraries come from two builds or installs (a stale copy from an older one loaded beside the new one)."""
    torch = env.version("torch")
    here = f"torch {torch}" if torch else "torch"
    return (f"torch's own library {lib} needs {sym}, a symbol of torch itself that the torch libraries loaded beside it "
            f"do not export: {here}'s libraries come from two builds or installs, a stale {lib} (or the library it "
            "needs) from an older build or install loaded beside the new one (a leftover build directory, an upgrade over "
            "a half-removed torch, a second torch on LD_LIBRARY_PATH or sys.path)",
            f"remove every copy of torch (pip uninstall torch until none is left, and a conda torch; for a source build, "
            f"python setup.py clean and delete build/ and torch/lib/), then install or rebuild one torch; check that no "
            f"other {lib} is found first (LD_LIBRARY_PATH, `python -c 'import torch; print(torch.__file__)'`)")


def _before_torch(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """extension-before-torch: a name of torch's Python binding library that every torch release exports (the row's
    pattern, read from the wheels) is missing: the extension was loaded before torch put that library in its scope."""
    sym = h.groups.get("symbol") or h.groups.get("dyld_symbol", "")
    lib = (h.groups.get("library") or "").replace("\\", "/").rsplit("/", 1)[-1]
    who = (_shown(h.package, env.version(h.package)) if h.package and h.package != "torch" else "a compiled extension")
    of = f" ({lib})" if lib else ""
    name = h.package if h.package and h.package != "torch" else "the extension"
    return (f"{who}{of} needs {sym}, a name of torch's Python binding library libtorch_python.so that every torch "
            f"release exports: {name} was loaded before `import torch` put that library in its scope (it leaves torch's "
            "THP names to it), so this is the import order, not a build against another torch",
            f"import torch before {name} (put `import torch` first in the script, notebook or entry point); where torch "
            f"is imported first already, {name}'s build did not link libtorch_python (torch.utils.cpp_extension's "
            "CppExtension/CUDAExtension link it): rebuild it so, or run with TORCH_USE_RTLD_GLOBAL=1")


# A CPython extension module's file, as the loader names it: the module's name, then the suffix the interpreter imports
# extension modules by (importlib.machinery.EXTENSION_SUFFIXES on Linux: ".cpython-38-x86_64-linux-gnu.so", ".abi3.so",
# ".so"; the name is the file's up to its first dot, python/cpython Lib/importlib/_bootstrap_external.py
# ExtensionFileLoader), a shared library's "lib<name>.so" left out
EXT_MODULE = re.compile(r"(?P<module>(?!lib)[A-Za-z_]\w{0,100})\.(?:cpython-\d{2,3}[a-z]{0,2}(?:-[\w-]{1,60})?\.|abi3\.)?so")


def _module_symbol(module: str, lib: str, sym: str, env: Env) -> tuple[str, str]:
    """undefined-symbol where the loader names an extension module no installed package ships (a project's own build:
    a detector's nms/nms_cpu.cpython-38-x86_64-linux-gnu.so) and the symbol is torch's: that module was built against another torch."""
    torch = env.version("torch")
    said = Break(rule="abi", package=f"the extension module {module}", against=_public(torch) if torch else "").sentence()
    here = f"torch {torch}" if torch else "the installed torch"
    return (f"{said}: {lib} is a module no installed package ships (a project's own build), and {sym} is a symbol of "
            f"torch's C++ API that {here} does not export",
            f"rebuild {module} against {here} from its project's source (remove the old build first: its build/ "
            f"directory and {lib}, then the project's build step, such as python setup.py build_ext --inplace or pip "
            f"install --no-build-isolation -e .), or install the torch {module} was built against")


# A symbol of the C++ standard library, by its mangled outermost scope: ::std and its abbreviations (St, Sa, Sb, Ss, Si,
# So, Sd; GCC libiberty/cp-demangle.c standard_subs[]), under a special name's prefix (TV vtable, TI typeinfo, TS its
# name, TT VTT) and a nested name's qualifiers; or the C++ ABI runtime's own entry points (__cxa_*, __gxx_personality)
STD_SYMBOL = re.compile(r"_Z(?:T[VTIS])?(?:N[rVK]{0,3}[RO]?)?S[tabsiod]\w*|__cxa_\w+|__gxx_personality\w*")


# The outermost namespace of a mangled C++ name (Itanium ABI <nested-name>: N [<CV-qualifiers>] [<ref-qualifier>]
# <source-name>, a <source-name> being <length><identifier>; GCC libiberty/cp-demangle.c d_nested_name, d_source_name),
# under a special name's prefix (TV vtable, TT VTT, TI typeinfo, TS its name, GV guard variable, TH/TW thread-local
# init/wrapper) or a local name's Z: _ZN10tensorflow8OpKernel... -> tensorflow, _ZNK3tsl6Status2okEv -> tsl,
# _ZTVN11onnxruntime8OpKernelE -> onnxruntime; a global function (_Z3foov) or a substitution (St, S_) has none here
NESTED = re.compile(r"_Z(?:T[VTIS]|GV|T[HW]|Z)?N[rVK]{0,3}[RO]?(?P<len>[1-9]\d{0,3})")


def outer_namespace(symbol: str) -> str:
    """The outermost namespace (or class) of a mangled C++ name, demangled; "" where it has none."""
    m = NESTED.match(symbol)
    if m is None:
        return ""
    name = symbol[m.end():m.end() + int(m.group("len"))]
    return name if len(name) == int(m.group("len")) and name.isidentifier() else ""


def symbol_library(symbol: str, facts: Facts) -> tuple[str, str] | None:
    """(namespace, library) where ``symbol`` is a C++ name of a native library no Python distribution ships, by its
    outermost namespace (a ``[[cxx_namespace]]`` row's ``library``: MPI:: is the MPI C++ bindings' libmpi_cxx.so);
    None otherwise."""
    ns = outer_namespace(symbol)
    row = next((r for r in facts.rows("cxx_namespace") if ns in r.namespaces), None) if ns else None
    return (ns, row.library) if row is not None and row.library else None


def _library_symbol(h: Hit, env: Env, ns: str, library: str) -> tuple[str, str]:
    """undefined-symbol where the symbol is a native library's C++ API (MPI::Datatype::Free, _ZN3MPI8Datatype4FreeEv,
    of the MPI C++ bindings' libmpi_cxx.so): the module was compiled using that library and not linked against it, so
    nothing loads it before the module needs its names."""
    pkg, sym = h.package, h.groups.get("symbol", "")
    lib = (h.groups.get("library") or h.groups.get("bare_library", "")).replace("\\", "/").rsplit("/", 1)[-1]
    who = (f"{_shown(pkg, env.version(pkg))}'s compiled library {lib}" if pkg and lib else _shown(pkg, env.version(pkg))
           if pkg else lib or "a compiled library")
    return (f"{who} needs {sym}, a symbol of {ns}:: ({library}'s C++ API), which no library loaded with it exports: it "
            f"was compiled using {library} ({ns} support built in) but not linked against it, so nothing loads "
            f"{library} before it (or the {ns} installed is another build, without these names)",
            f"rebuild it linked against {library} (the {ns} found at build time, on the linker's path), or without {ns} "
            f"support; until then, load the library first: LD_PRELOAD=<its lib directory>/{library} (of the {ns} "
            "installation it was built with)")


def symbol_framework(symbol: str, facts: Facts) -> tuple[str, str, tuple[str, ...]] | None:
    """(namespace, package, hosts) where ``symbol`` is a C++ name of a framework other than torch by its outermost
    namespace (the ``[[cxx_namespace]]`` rows: tensorflow:: is tensorflow's, phi:: paddlepaddle's, xla:: one of its
    hosts'); None for torch's namespaces, a namespace no row names, or one that names no package (std::, absl::)."""
    ns = outer_namespace(symbol)
    row = next((r for r in facts.rows("cxx_namespace") if ns in r.namespaces), None) if ns else None
    if row is None or row.package == "torch" or (row.package is None and not row.hosts):
        return None
    return ns, row.package or "", row.hosts


def _framework_version(env: Env, fw: str, note: str) -> str:
    """The release of ``fw`` a package's own ABI warning names (``fw_built``: what its custom ops were compiled against;
    ``fw_using``: the installed one), where the warning names ``fw`` ("TensorFlow 2.2.0")."""
    name, _, ver = env.notes.get(note, "").rpartition(" ")
    return ver if name and canonicalize(name) == canonicalize(fw) else ""


def _framework_symbol(h: Hit, env: Env, ns: str, package: str, hosts: tuple[str, ...]) -> tuple[str, str]:
    """undefined-symbol where the symbol is another framework's C++ API (a TensorFlow custom op's _ZN10tensorflow...,
    a Paddle custom op's _ZN3phi..., an onnxruntime EP's _ZN11onnxruntime...): the library was built against another
    release of that framework than the installed one, and torch has nothing to do with it."""
    pkg, sym = h.package, h.groups.get("symbol", "")
    path = (h.groups.get("library") or h.groups.get("bare_library", "")).replace("\\", "/")
    lib = path.rsplit("/", 1)[-1]
    if package:
        fw = package
    else:  # a namespace several frameworks ship (XLA's): the host the log shows, else each of them
        shown = [x for x in hosts if env.version(x) or (pkg and (pkg == x or pkg.startswith(x + "-")))
                 or f"/{x.replace('-', '_')}" in path]
        fw = shown[0] if len(shown) == 1 else " or ".join(hosts)
    built = _framework_version(env, fw, "fw_built")
    have = env.version(fw) or _framework_version(env, fw, "fw_using")
    of = f"{ns}::, {fw}'s C++ API" if package else f"{ns}::, XLA's C++ API that {fw} ships"
    if pkg and pkg == fw:  # the framework's own library lacks its own symbol: two of its installs mixed
        return (f"{_shown(fw, have)}'s own library {lib or 'a compiled module'} needs {sym} ({of}), which the {fw} "
                "library loaded with it does not export: files of two installs of it are mixed (another release left in "
                "site-packages, or two of its distributions installed side by side), not a torch mismatch",
                f"uninstall every copy of {fw} (pip uninstall {fw} until pip finds none, and its other distributions), "
                f"then install one release: pip install {fw}{'==' + have if have else ''}")
    who = _shown(pkg, env.version(pkg)) if pkg else (lib or "a compiled library")
    against = f"{fw} {built}" if built else f"another {fw} release"
    here = f"the installed {fw} {have}" if have else f"the installed {fw}"
    cause = (f"{who} needs {sym}, a symbol of {of}, which {here} does not export: "
             f"{'its library ' + lib + ' was' if pkg and lib else 'it was'} compiled against {against}"
             f"{' than the installed one' if not built else ''} (not against torch), and a C++ extension of {fw} loads "
             "only next to the release it was built with")
    if built:
        fix = (f"install the {fw} release {pkg or 'it'} was built for ({fw}=={built}), or the {pkg or 'extension'} release "
               f"built for {here}")
    else:
        fix = (f"install the {pkg or 'extension'} release built for {here} (its release notes or compatibility table "
               f"name the {fw} release each one is built against), or the {fw} release it was built for")
    if not pkg:
        fix += f"; a library of your own build: rebuild it against {here}"
    return cause, fix


# A C++ function of the global namespace (Itanium ABI: _Z <length><name> <parameters>, no N...E nesting), one parameter
# an at::Tensor (N2at6TensorE, or a reference to one): a function of the extension's own sources that takes torch's
# tensors; torch's own C++ API is in namespaces (c10::, at::, torch::, caffe2::) but for its Python bindings' and legacy
# TH libraries' global TH* functions (torch/csrc/autograd/python_variable.h THPVariable_Wrap(at::TensorBase); it took an
# at::Tensor before torch 1.10: _Z16THPVariable_WrapN2at6TensorE is torch's), which stay torch's
OWN_SYMBOL = re.compile(r"_Z(?P<len>\d{1,3})(?!TH)[A-Za-z_]\w*N2at6TensorE")


# Any other C++ function of the global namespace (Itanium ABI: _Z <length><name> <parameters>, no N...E nesting, no
# special-name prefix): a plain function of the extension's own sources (_Z24exl3_moe_cpu_pool_stressiiii), unless its
# name has the prefix of a library's global names: torch's (its Python bindings and C shims: the one predicate,
# glmcompat/readers/elf.py torch_shaped) and its legacy TH/THC libraries (TH*), CPython's C API (Py*, _Py*), the CUDA
# driver API (cu + a capital) and the NVIDIA libraries' C functions by their [[nvidia_library]] prefixes (cuda*,
# cublas*, cudnn*, nccl*...). torch's own C++ API is namespaced (c10::, at::, torch::, caffe2::), so such a name is no
# evidence of another torch: its absence is the extension's own build leaving its definition out, and is not claimed
GLOBAL_FUNCTION = re.compile(r"_Z(?P<len>[1-9]\d{0,3})(?=[A-Za-z_])")
FOREIGN_GLOBAL = re.compile(r"TH|_?Py|cu[A-Z]")


def own_function(symbol: str, facts: Facts) -> str:
    """The name of the global C++ function ``symbol`` where it is the extension's own (:data:`GLOBAL_FUNCTION`); "" for
    any other symbol (a namespaced name, a C name, a global name of torch's, CPython's or an NVIDIA library's)."""
    m = GLOBAL_FUNCTION.match(symbol)
    if m is None:
        return ""
    name = symbol[m.end():m.end() + int(m.group("len"))]
    if len(name) != int(m.group("len")) or not name.isidentifier() or len(symbol) == m.end() + len(name):
        return ""
    if torch_shaped(symbol) or FOREIGN_GLOBAL.match(name) or facts.nvidia_symbol_owner(name) is not None:
        return ""
    return name


def _own_symbol(h: Hit, name: str) -> tuple[str, str]:
    """An undefined symbol that is the extension's own function, not torch's: its build left that function out."""
    lib = h.groups.get("library", "")
    who = lib.rsplit("/", 1)[-1] if lib else (f"{h.package}'s compiled module" if h.package else "a compiled module")
    return (f"{who} calls {name}(), a function of its own sources (global namespace, taking torch tensors), not one of "
            "torch's: it was declared and called but never compiled into the module (its .cu/.cpp source left out of the "
            "build: built without CUDA, a source file added but not listed in setup.py, a stale build directory reused)",
            f"rebuild the extension from a clean tree (rm -rf build, then pip install -v --no-build-isolation .) with the "
            f"source that defines {name} in its sources list and CUDA enabled where it is a CUDA function; a prebuilt "
            "wheel missing it is a broken build of that release: install another build")


def _libstdcxx(h: Hit) -> tuple[str, str]:
    """An undefined symbol of the C++ standard library: the library was built with another compiler than the
    libstdc++.so.6 the loader found (a newer GCC, or another C++ runtime), not against another torch."""
    sym, lib = h.groups.get("symbol", ""), h.groups.get("library", "")
    who = lib or (f"{h.package}'s compiled module" if h.package else "a compiled module")
    return (f"{who} needs {sym}, a symbol of the C++ standard library that the libstdc++.so.6 the loader found does not "
            "export: it was built with another compiler (a newer GCC, or another C++ runtime) than that libstdc++",
            f"rebuild {lib.rsplit('/', 1)[-1] if lib else 'it'} with the compiler whose libstdc++ the process loads (CC and "
            "CXX set to it), or put that compiler's newer libstdc++.so.6 first (export LD_LIBRARY_PATH=$CONDA_PREFIX/lib, "
            "or conda install -c conda-forge libstdcxx-ng); `strings <libstdc++.so.6> | grep GLIBCXX` lists what one has")


def _asked_for(facts: Facts, importer: str, have: str, dist: str) -> str:
    """The requirement on ``dist`` that the installed ``importer`` release's metadata states, where the matrix holds it
    (its [[release]] row at that version, else its [[requires]] rows): ``triton==3.1.0``; "" where none does."""
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: only a missing module needs it

    pub = _public(have) if have else ""
    for r in facts.rows("release"):
        if r.package == importer and pub and r.version == pub:
            for q in r.requirements():
                if canonicalize(q.name) == dist and q.specifier:
                    return f"{dist}{q.specifier}"
    for row in facts.rows("requires"):
        try:
            req = Requirement(row.requires)
        except InvalidRequirement:
            continue
        if row.package == importer and canonicalize(req.name) == dist and req.specifier and (
                not pub or _v(pub) is None or SpecifierSet(row.versions).contains(pub, prereleases=True)):
            return f"{dist}{req.specifier}"
    return ""


def _imported_missing(h: Hit, env: Env, facts: Facts, mod: str, dist: str) -> tuple[str, str] | None:
    """``No module named 'm'`` raised in an installed distribution's own frame (a file under site-packages, a Cython
    module's init, a distribution's file in a source checkout) for a distribution the matrix knows: the importing
    package needs it at import and it is not installed (a dependency it does not declare or makes optional, an install
    with --no-deps). None for any other frame (the user's script or notebook cell: their own module, a typo) or a module
    of no distribution the matrix knows."""
    module = importing_module(h.groups, facts)
    if not module or dist not in known_distributions(facts):
        return None
    importer = module_distribution(module)
    if not importer or importer == dist:
        return None  # the package's own module missing (a broken install), not another package's
    have = env.version(importer)
    who = _shown(importer, have)
    want = _asked_for(facts, importer, have, dist)
    where = f" ({module})" if module != importer.replace("-", "_") else ""
    named = f" (the log's {mod} is {dist})" if canonicalize(mod) != dist else ""
    compiler = " (its inductor, torch.compile's backend, compiles GPU kernels with it)" if "inductor" in module else ""
    return (f"{who}{where} imports {mod} at import, and no {dist} is installed in the Python that runs{named}: {importer} "
            f"needs {dist}{compiler}" + (f" ({want}, its Requires-Dist)" if want else "") + ", and the install left it "
            "out (a dependency it does not declare or makes optional, an install with --no-deps, or another environment's pip)",
            f"install {want or dist} in the Python that runs (python -m pip install '{want or dist}')"
            + ("" if want else f"; where {importer} declares a release of it, `pip show {importer}` lists it (Requires-Dist)"))


def _not_installed(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """``No module named 'm'`` for a top-level module of a companion the matrix tracks (an engine's [[requires]] rows,
    its kernels, torch's families); None for any other module: that is no failure of the stack this reads."""
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: only a missing module needs it

    if "remote_missing" in h.groups:  # transformers' check of a checkpoint's remote code's imports
        missing = [canonicalize(m.strip().replace("_", "-")) for m in h.groups["remote_missing"].split(",") if m.strip()]
        names = ", ".join(missing)
        return (f"the checkpoint's remote modeling code (trust_remote_code) imports {names}, which is not installed in the "
                "Python that runs: transformers checks a remote model file's imports before it runs it",
                f"install {names} in that Python, each a build for the installed torch and CUDA where it is compiled "
                f"(pip install {' '.join(missing)}{' --no-build-isolation' if any('flash' in m for m in missing) else ''})")
    if "rc_missing" in h.groups:  # transformers 5's check of a checkpoint's requirements.txt (its remote code's needs)
        wanted = h.groups["rc_missing"].strip()
        return (f"the checkpoint's requirements.txt (read by transformers before it runs the checkpoint's remote code) "
                f"needs {wanted}, which is not installed in the Python that runs",
                f"install it in that Python (pip install {wanted}), with the checkpoint's other requirements")
    if "tf_backend" in h.groups:  # transformers' own words for a missing torch
        return (f"{h.groups.get('tf_needs', 'transformers')} needs torch, and torch is not installed in the Python that "
                "runs (transformers imports without it and fails at the first model class)",
                "install torch in that Python: the build for the machine's CUDA from PyTorch's cuXYZ index "
                "(python -m pip install torch --index-url <PyTorch's index>/cuXYZ), or the CPU build where there is no GPU")
    if "opt_feature" in h.groups:  # a server's optional import of a kernel package (TGI's Flash Attention models)
        return optional_missing(h, env, facts)
    if "rv_missing" in h.groups:  # a library's version check (transformers' require_version) found no such distribution
        return _required_missing(h, env, facts)
    if "ns_module" in h.groups:  # a dotted module: a namespace package's part that a distribution of its own ships
        return _part_missing(h.groups["ns_module"], env)
    mod = h.groups.get("module") or h.groups.get("min_missing", "")
    if "min_missing" in h.groups and canonicalize(mod) in {r.old for r in facts.rows("rename") if r.checkers}:
        return None  # a check by a renamed distribution's old name: version-requirement-unmet names the stale checker
    dist = module_package(mod) if mod else ""
    if dist == "torch" and "build_step" in env.notes:  # a build that imports torch, in pip's isolated environment
        pkg = canonicalize(env.notes.get("building") or env.notes.get("collecting", "")) or "the package"
        return (f"pip builds {pkg} from source in an isolated build environment (PEP 517 build isolation), which has no "
                f"torch: {pkg}'s build imports torch to compile against it, whatever torch the environment itself has",
                f"install torch first, then build {pkg} against it without isolation: pip install {pkg} "
                "--no-build-isolation (or install its prebuilt wheel for this torch and CUDA, where it has one)")
    if dist == "torch":
        return ("torch is not installed in the Python that runs (another environment's python, or an install that "
                "failed or was skipped)",
                "install torch with the Python that runs (python -m pip install torch), the build for the machine's "
                "CUDA from PyTorch's cuXYZ index")
    needs: dict[str, list[str]] = {}
    for r in facts.rows("requires"):
        try:
            req = Requirement(r.requires)
        except InvalidRequirement:
            continue
        if canonicalize(req.name) == dist:
            needs.setdefault(r.package, [])
            if str(req.specifier) not in needs[r.package]:
                needs[r.package].append(str(req.specifier))
    compiled = {p for r in facts.rows("compiled") for p in r.packages}
    if dist and not needs and dist in compiled and canonicalize(mod) != dist:
        # a compiled extension module that a [[compiled]] package builds under its own top-level name
        # (selective_scan_cuda of mamba-ssm): the package is missing, or installed without its extension
        return (f"{mod} does not import: it is {dist}'s compiled CUDA extension (a top-level module of its own), and "
                f"{dist} is not installed in the Python that runs, or was installed without building it (a source "
                "checkout used in place, a build that skipped the extension)",
                f"install {dist} built for the installed torch and CUDA with the Python that runs (its prebuilt wheel for "
                f"that torch, or pip install {dist} --no-build-isolation to compile it against the installed torch)")
    if not dist or (not needs and dist not in facts.kernel_packages() | facts.family_packages()):
        return _imported_missing(h, env, facts, mod, dist) if dist else None
    by = ", ".join(f"{p} {env.version(p)}".rstrip() for p in needs)
    want = "; ".join(f"{p} requires {dist}{' or '.join(s[:2])}" for p, s in needs.items())
    floor = h.groups.get("min_version", "").strip()
    if floor:  # the program's own start-up check names the release it needs (SGLang's assert_pkg_version)
        have = env.version(dist)
        return (f"the program's start-up check requires {mod} {floor} or newer (the log: minimum required version {floor}) "
                f"and {dist} {'is ' + have + ', older,' if have else 'is not installed'} in the Python that runs"
                f"{' (the matrix: ' + want + ')' if want else ''}: an upgrade or install that skipped it (--no-deps, "
                "an extra not asked for, another environment's pip)",
                f"install {dist}>={floor} in that Python (python -m pip install '{dist}>={floor}'), the build for the "
                "installed torch and CUDA" + (f"; the installed {' / '.join(needs)} lists the release it pins in its "
                                              "Requires-Dist (`pip show` names it)" if needs else ""))
    return (f"{mod} does not import: {dist}, which {by or 'the stack'} needs, is not installed in the Python that runs "
            f"({want or dist + ' is a companion the matrix tracks'}): an upgrade or install that skipped it (--no-deps, "
            "an extra not asked for, another environment's pip)",
            f"install the {dist} release " + (f"the installed {' / '.join(needs)} requires (`pip show {next(iter(needs))}` "
                                              "lists its Requires-Dist)" if needs else "the installed torch needs")
            + " with the Python that runs (python -m pip install ...)")


def _part_missing(mod: str, env: Env) -> tuple[str, str] | None:
    """``No module named 'top.part'`` where a [[module]] row lists ``top.part`` itself as the module of a distribution
    other than the one that ships ``top``: a namespace package's part shipped by its own distribution (cuda.bindings,
    physicsnemo.sym), not installed. CPython's _find_and_load_unlocked names the first module of the dotted path it does
    not find, its parent imported, so a deeper name (``top.part.sub``) means the part imported and is not read here; nor
    is any other dotted module (the user's own package, a relative import, a removed or compiled submodule)."""
    top = module_package(mod.split(".", 1)[0])
    dist = name_tables().modules.get(mod)
    if dist is None or dist == top:
        return None
    have = env.version(top)
    return (f"{mod} does not import: it is a part of the namespace package {mod.split('.', 1)[0]} that the distribution "
            f"{dist} ships, apart from {_shown(top, have)}, and {dist} is not installed in the Python that runs (the "
            f"parent imports, so the import fails at {mod})",
            f"install {dist} in the Python that runs (python -m pip install {dist}, the release its install page names "
            f"for the installed {top})")


def _required_missing(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """A library's start-up version check (transformers' require_version, which trainers and engines call for their
    optional backends) found the distribution it requires not installed; None for a package the matrix does not track."""
    req = h.groups["rv_missing"].strip()
    dist = canonicalize(re.split(r"[\s\[=<>!~;@(,]", req, maxsplit=1)[0])
    if dist not in companions(facts):
        return None
    torch = env.version("torch")
    on = f" next to {_shown('torch', torch)}" if torch else ""
    return (f"the program checks its dependencies' versions at start-up and requires {req}, and no {dist} is installed in "
            "the Python that runs (the check of an optional backend, such as an inference engine chosen in the "
            "configuration, that the base install does not bring)",
            f"install it in that Python: pip install '{req}' (the {dist} release built for the installed torch and CUDA"
            f"{on}: its own install page names the torch it pins), or choose a backend that is installed")


def _nccl(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    sym = h.groups.get("symbol", "nccl...")
    lib = h.groups.get("library", "a library")
    torch = env.version("torch")
    ncc = {k: env.seen.get(k) or env.versions.get(k, "") for k in ("nvidia-nccl-cu12", "nvidia-nccl-cu13")}
    have = [f"{k} {v}" for k, v in ncc.items() if v]
    major = (facts.torch_cuda(torch) or "").split(".")[0] if torch else ""
    shown = f" ({' and '.join(have)} in the {env.where})" if have else ""
    whose = (f"torch {torch} requires" if torch else "torch requires" if lib.startswith("libtorch")
             else "it was built against")
    cause = (f"{lib} needs {sym}, which the libnccl.so.2 loaded first does not define: another NCCL than the one "
             f"{whose} is loaded{shown}")
    if len(have) == 2 and major in ("12", "13"):
        other = "nvidia-nccl-cu12" if major == "13" else "nvidia-nccl-cu13"
        return cause, (f"pip uninstall {other} (torch {torch} is built for CUDA {major} and loads nvidia-nccl-cu{major}), "
                       "then reinstall that one with the version torch's METADATA pins")
    pkg = f"nvidia-nccl-cu{major}" if major in ("12", "13") else "nvidia-nccl-cu12 or -cu13 (torch's CUDA major)"
    return cause, (f"install the {pkg} version torch{' ' + torch if torch else ''} pins (`pip show torch` lists its "
                   "Requires-Dist) with pip install --force-reinstall --no-deps, and drop any system libnccl from "
                   "LD_LIBRARY_PATH")


def _model(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """model-type-unknown: the transformers releases that know the model type (its [[model]] row, else the
    [[model_types]] harvest of every release's CONFIG_MAPPING_NAMES). None where no release up to the newest harvested
    knows it (a checkpoint's own remote-code type, or a wrong config.json: no version of transformers helps), or where a
    bare KeyError neither names a model type nor runs through transformers."""
    mt = h.groups.get("model_type") or h.groups.get("mi_type") or h.groups.get("key") or ""
    row = None
    if mt:
        try:
            row = facts.model(mt)
        except Exception:  # noqa: BLE001 - an unknown model type is not an error here
            row = None
    known = facts.model_type_known(mt) if mt and row is None else None
    if known is not None and not known[0]:
        return None  # in no transformers release up to the newest harvested (known[2]): not a version failure
    if "key" in h.groups and row is None and known is None and h.package != "transformers":
        return None  # a bare KeyError that neither names a known model type nor runs through transformers
    have = env.version("transformers")
    if row is None and known is not None:
        return _model_by_release(mt, have, known)
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


def _model_by_release(mt: str, have: str, known: tuple[str, str, str]) -> tuple[str, str]:
    """The cause of a model type that [[model_types]] knows (first, removed, newest) and the installed ``have``."""
    first, removed, _ = known
    spec = f">={first}" + (f",<{removed}" if removed else "")
    hv = _v(_public(have)) if have else None
    shown = f"transformers {have}" if have else "the installed transformers"
    if hv is not None and removed and hv >= Version(removed):
        return (f"{shown} no longer knows model type {mt}: transformers {first} was the first release to know it and "
                f"{removed} removed it",
                f"install transformers{spec} (pip install 'transformers{spec}'), or the model's own code "
                "(trust_remote_code) where it ships one")
    if hv is not None and hv >= Version(first):
        return (f"transformers {have} knows {mt} (transformers{spec}), yet the process raised this: it imported "
                "another transformers (a second copy earlier on sys.path, or an engine's vendored one)",
                "run python -c \"import transformers; print(transformers.__version__, transformers.__file__)\" in the "
                "serving environment to see which copy is imported")
    older = f": it is older than transformers {first}, the first release that knows it" if hv is not None else \
        f": transformers {first} is the first release that knows it"
    return (f"{shown} does not know model type {mt}{older}",
            f"install transformers{spec} (pip install 'transformers{spec}'; as an override where the engine pins an "
            "older one)")


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
    first = facts.cuda_archs("first").get(code)  # an arch-specific code (90a) or a plain one (89): the [[cuda_arch]] rows
    nvcc = env.cuda.get("nvcc", "")
    last = facts.cuda_archs("last").get(code, "")
    if last and not h.groups.get("nvrtc"):  # an architecture a later toolkit dropped: the build asks for an old GPU's code
        return (f"the build asks nvcc{' ' + nvcc if nvcc else ''} for {arch}, an architecture the CUDA toolkits after "
                f"{last} dropped (CUDA {last} is the last whose nvcc knows it): the build's arch list (an old setup.py's "
                "or Makefile's -gencode flags, CMake's CUDA_ARCHITECTURES, TORCH_CUDA_ARCH_LIST) predates the toolkit",
                f"remove {arch} (and its sm_/compute_ pair) from the build's architecture flags and build for the GPU's "
                "own capability (TORCH_CUDA_ARCH_LIST=<major.minor of nvidia-smi --query-gpu=compute_cap>), or build "
                f"with CUDA {last} or older where that GPU is the target")
    torch = env.version("torch")
    built = env.cuda.get("torch_cuda") or (facts.torch_cuda(torch) if torch else None) or ""
    pkg = h.package if h.package and h.package != "torch" else "the build"
    who = "flashinfer's JIT" if pkg.startswith("flashinfer") else pkg
    cause = (f"{who} ran nvcc{' ' + nvcc if nvcc else ''}, which does not know {arch}"
             + (f" (the first CUDA toolkit that does is {first})" if first else ""))
    want = f"{first} or newer" if first else "newer"
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
    if h.groups.get("torch_runs"):  # the log names the GPU, and the installed torch's recorded code runs on it
        gpu, sm, torch = h.groups.get("gpu", "the GPU"), h.groups.get("sm", ""), env.version("torch")
        return (f"torch {torch} carries code for the {gpu} the log names (sm_{sm}), so the kernel that has none is a "
                "compiled extension's (one built without this GPU's architecture); the log names no module for it",
                f"run `glmcompat verify` on the GPU (its gpu-code probe names the module), then install that package's "
                f"build with SASS for sm_{sm}, or build it from source with TORCH_CUDA_ARCH_LIST={sm[:-1]}.{sm[-1]}")
    if not pkg or pkg == "torch":
        torch = env.version("torch")
        if not torch and not pkg:  # nothing of the log names the module: torch's kernels or an extension built through it
            cap = f" (sm_{env.capability.replace('.', '')})" if env.capability else ""
            return ("the log names no module for the failing kernel: torch's build or a compiled extension built through "
                    "torch.utils.cpp_extension (at install, or JIT-compiled at first use by a plugin loader) carries no "
                    f"code this GPU{cap} runs: its arch list stops below the GPU's architecture, or the CUDA toolkit that "
                    "built it does not know that architecture",
                    "run `glmcompat verify` on the GPU (its gpu-code probe names the module); rebuild an extension with "
                    "TORCH_CUDA_ARCH_LIST set to this GPU's capability (a JIT-built plugin: delete its build directory "
                    "under ~/.cache/torch_extensions so it is compiled again) with a torch and CUDA toolkit that know the "
                    "architecture, or install a torch build whose arch list (torch.cuda.get_arch_list()) includes it")
        if not torch:
            return None
        tb = facts.gpu_code("torch", torch)
        cap = f" (sm_{env.capability.replace('.', '')})" if env.capability else ""
        if tb is None:  # the matrix does not record this torch build's code: say what is known, never "no GPU code"
            arch = ("rebuild a source-built extension with TORCH_CUDA_ARCH_LIST set to this GPU's capability (its "
                    "major.minor, e.g. 5.2), or install a torch build whose arch list (torch.cuda.get_arch_list()) includes it")
            if not pkg:
                return (f"the log names no module for the failing kernel: torch {torch}'s build or a compiled extension "
                        f"(one built without this GPU's architecture) carries no code this GPU{cap} runs",
                        f"run `glmcompat verify` on the GPU (its gpu-code probe names the module); {arch}")
            return (f"torch {torch}'s build carries no code this GPU{cap} runs (the matrix does not record its GPU code: "
                    "torch.cuda.get_arch_list() lists it)",
                    "install a torch build whose arch list (torch.cuda.get_arch_list()) includes this GPU's capability")
        codes = ", ".join(tb[0]) if tb and tb[0] else "no GPU code"
        return (f"torch {torch} carries {codes}; none of it runs on this GPU{' (sm_' + env.capability.replace('.', '') + ')' if env.capability else ''}",
                "install a torch build whose arch list (torch.cuda.get_arch_list()) includes this GPU's capability")
    ver = env.version(pkg)
    cap = f" (sm_{env.capability.replace('.', '')})" if env.capability else ""
    if framework_package(h):  # a framework's own CUDA kernels (its row names it): a prebuilt release's arch list
        return (f"{_shown(pkg, ver)}'s own CUDA kernels carry no code this GPU{cap} runs: each release's GPU build is "
                "compiled for the CUDA architectures its packaging build lists (CMAKE_CUDA_ARCHITECTURES), and this GPU's "
                "is not among them (an older GPU a newer release dropped, or a newer one its CUDA does not know)",
                f"install a {pkg} release whose GPU build lists this GPU's compute capability (its release notes' CUDA "
                "requirements: an older release for an older GPU, one built with a newer CUDA for a newer GPU), or build "
                f"{pkg} from source with CMAKE_CUDA_ARCHITECTURES set to the GPU's capability")
    remedy = (f"install a {pkg} build with SASS for this GPU's capability (`glmcompat verify` reads the code each of "
              f"its modules carries), or build it from source with TORCH_CUDA_ARCH_LIST set to it")
    listed = _listed_code(pkg, env)
    if listed is not None:  # the log's own listing of the module's code: that build's arch list, over the matrix's
        named = named_gpu(env, facts)
        sm = named[1] if named else env.capability.replace(".", "")
        codes = ", ".join(listed[0] + listed[1])
        if sm and runs_on_sm(listed[0], listed[1], sm):
            return (f"{_shown(pkg, ver)} carries {codes} (the log's cuobjdump listing), which runs on this GPU "
                    f"(sm_{sm}): the kernel without code for it is another module's", f"run `glmcompat verify` on the "
                    "GPU (its gpu-code probe names the module), then install that package's build with SASS for "
                    f"sm_{sm}")
        return (f"{_shown(pkg, ver)} carries {codes} (the log's cuobjdump listing): none of it runs on this GPU"
                f"{' (sm_' + sm + ')' if sm else ''}; the module loaded and the failure shows at its first kernel "
                "launch", remedy)
    code = facts.gpu_code(pkg, ver) if ver else None
    other = facts.other_build_code(pkg, ver) if ver else ""
    if code is None and other:  # a labelled build: the release's recorded wheel is another build, its arch list not this one's
        return (f"the GPU architectures of {pkg} {ver} are not recorded: the +{_local(ver)} build is another build than "
                f"the index's {pkg} {other} wheel (whose code the matrix records), so that wheel's arch list says nothing "
                f"of it; its kernel has no code this GPU{cap} runs, and the failure shows at its first launch",
                f"list the architectures the +{_local(ver)} build carries with `cuobjdump --list-elf {_so_of(pkg, facts)}` "
                f"(each \"ELF file N: <name>.sm_XY.cubin\" names one); then {remedy}")
    carries = f" carries {', '.join(list(code[0]) + list(code[1]))}" if code and (code[0] or code[1]) else ""
    return (f"{_shown(pkg, ver)}{carries}: none of it runs on this GPU{cap}; the module loaded and the failure shows "
            "at its first kernel launch", remedy)


def _listed_code(pkg: str, env: Env) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The (SASS, PTX) the log's own listing of a compiled module shows (cuobjdump --list-elf / --list-ptx, or a grep of
    its sm_ names: the notes' listed_sass, listed_ptx), where the listed .so is ``pkg``'s or names no package; else
    None."""
    sass = tuple(a for a in env.notes.get("listed_sass", "").split(", ") if a)
    ptx = tuple(a for a in env.notes.get("listed_ptx", "").split(", ") if a)
    if not sass and not ptx:
        return None
    where = env.notes.get("listed_from", "").replace("\\", "/")
    m = re.search(r"[/](?:site|dist)-packages/(?P<mod>[A-Za-z_]\w{0,80})/", where)
    if m is not None and canonicalize(module_package(m.group("mod"))) != canonicalize(pkg):
        return None  # the listing is another package's module
    return sass, ptx


def _so_of(pkg: str, facts: Facts) -> str:
    """The compiled module whose GPU code decides for ``pkg`` ([[primary_modules]]'s first), as a path to list."""
    mods = facts.primary_modules(pkg)
    if mods:
        glob = mods[0] if mods[0].endswith(".so") else mods[0].rstrip("*").rstrip(".") + ".*so"
        return f"<site-packages>/{glob}"
    return f"<site-packages>/<{pkg}'s module>/*.so"


def own_import_failed(h: Hit, package: str) -> bool:
    """Whether a "partially initialized module 'P'" AttributeError (CPython's Objects/moduleobject.c module_getattro)
    is raised in P's own import: the traceback's frames are the installed package's (site-packages/P/...), or the
    module's origin that Python 3.13+ prints ("from '<path>'") is the installed package's __init__. Then P's own import
    failed part-way (an earlier attempt raised after some of its submodules were imported, and they stay in sys.modules
    while P's module does not get their attributes again); a user's file named like P is no such failure."""
    origin = h.groups.get("partial_from", "").replace("\\", "/")
    if origin:
        return re.search(rf"[/](?:site|dist)-packages/{re.escape(package)}/__init__\.py$", origin) is not None
    return h.package == package


TV_OPS = ("tv_op_nosuch", "tv_op_attr", "tv_op_gone")  # torch's lookup of a torchvision operator never registered (fix-n)


def _torchvision_op(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """torchvision-nms-missing read from torch's dispatcher: an operator of torchvision's namespace that was never
    registered, because torchvision registers its operators when its compiled _C loads and that load failed (torchvision
    0.5-0.7 import without it and fail at the first op; later releases at import or in _assert_has_ops)."""
    op = next(h.groups[k] for k in TV_OPS if k in h.groups)
    lookup = ("torch's dispatcher has no operator torchvision::" + op + ": torchvision registers its operators when its "
              "compiled extension (torchvision/_C) loads, and that load failed (torchvision 0.5-0.7 import without it "
              "and fail at the first op they call)")
    got = _family("torchvision", env, facts)
    if got is not None:
        return f"{lookup}: {got[0]}", got[1]
    return (f"{lookup}: that torchvision was not built for the installed torch (its _C links another torch's ABI, or "
            "another CUDA)", h.remedy)


def _torchvision_cut(env: Env, facts: Facts) -> tuple[str, str] | None:
    """torchvision-nms-missing where the log stops at torchvision's own import of _meta_registrations (its __init__.py
    loads the compiled _C through .extension first, then registers its ops' fake kernels: "operator torchvision::nms does
    not exist" where _C did not load) before any exception line: claimed only where the log's torch and torchvision are
    not one release and build of the family."""
    ver, torch = env.version("torchvision"), env.version("torch")
    if "py_exception" in env.notes or not ver or not torch:
        return None
    fam = facts.family_for_torch("torchvision", torch)
    if fam is None or (_public(ver) == fam and _local(ver) == _local(torch)):
        return None
    got = _family("torchvision", env, facts)
    if got is None:
        return None
    return ("the log stops at torchvision's own import of its _meta_registrations (torchvision/__init__.py loads the "
            "compiled _C first, then registers its ops against the installed torch: \"operator torchvision::nms does not "
            f"exist\" where _C did not load), before its error: {got[0]}", got[1])


def _torchvision(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    if "tv_meta_frame" in h.groups:
        return _torchvision_cut(env, facts)
    if "tv_backend" in h.groups:
        return _torchvision_without_cuda(h, env)
    if "tv_only_op" in h.groups:  # the dispatcher's list of the op's backends, its head cut: where it lacks CUDA
        keys = {k.strip() for k in h.groups.get("tv_keys", "").split(",")}
        return _torchvision_without_cuda(replace(h, groups={**h.groups, "tv_op": h.groups["tv_only_op"]}), env) \
            if "CUDA" not in keys else None
    if any(k in h.groups for k in TV_OPS):
        return _torchvision_op(h, env, facts)
    if "partial" not in h.groups:
        return _family("torchvision", env, facts)
    if not own_import_failed(h, "torchvision"):
        return None  # a module of the user's named torchvision, or no frame of the installed torchvision: not claimed
    attr = h.groups.get("partial_attr", "")
    chain = (f"torchvision's import failed part-way: its module was left partially initialized, without its "
             f"{'submodule ' + attr if attr else 'submodules'}, because an earlier import of torchvision raised while "
             "registering its C++ ops against the installed torch (torchvision/_meta_registrations.py: \"operator "
             "torchvision::nms does not exist\" where torchvision's _C did not load), and the next import found its "
             "submodules left in sys.modules")
    got = _family("torchvision", env, facts)
    restart = " then restart the Python process (a notebook's kernel or runtime), so that no half-imported module is left"
    if got is not None:
        return f"{chain}: {got[0]}", f"{got[1]};{restart}"
    return (f"{chain}: that torchvision was not built for the installed torch (its compiled _C links another torch's "
            "ABI)", f"{h.remedy};{restart}")


def _torchvision_without_cuda(h: Hit, env: Env) -> tuple[str, str]:
    """torchvision-nms-missing where torch's dispatcher finds no CUDA kernel of a torchvision op: a torchvision built
    without CUDA (a +cpu wheel, or a source build whose CUDA part was not compiled) beside a torch that runs on the GPU."""
    ver, torch = env.version("torchvision"), env.version("torch")
    op = h.groups.get("tv_op", "torchvision's op")
    built = (f"torchvision {ver} is a CPU-only build" if _local(ver) == "cpu" else
             f"{_shown('torchvision', ver)} was built without CUDA (a +cpu wheel, or a source build that did not compile "
             "its CUDA kernels: its setup.py builds them only with FORCE_CUDA=1, or where torch sees a GPU and a CUDA "
             "toolkit)")
    return (f"torch's dispatcher has no CUDA kernel of {op} to run on CUDA tensors: {built}, while the tensors (and "
            f"{_shown('torch', torch)}) are on the GPU; torchvision's compiled ops exist only for the backends its build "
            "compiled",
            f"install the torchvision build for torch's CUDA (the release paired with {_shown('torch', torch)}, from the "
            "same cuXYZ index torch came from), or rebuild torchvision from source with FORCE_CUDA=1 and the CUDA "
            "toolkit torch was built with")


def _torchaudio(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    got = _family("torchaudio", env, facts)
    lib = h.groups.get("library", "")
    if got is not None or not lib:
        return got
    sym = h.groups.get("symbol", "")
    return (f"torchaudio's {lib} needs a symbol no loaded torch library exports ({sym}): it was built against another "
            "torch than the installed one (torchaudio links torch's C++ ABI, so each release runs only with its torch)",
            "install the torchaudio release built for the installed torch (`glmcompat verify` names it from the matrix), "
            "or the torch this torchaudio was built for")


def _vllm_symbol(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    sym = h.groups.get("symbol", "")
    module = h.groups.get("module", "_C").rpartition("vllm/")[2]  # a checkout's .../vllm/vllm/_C: the package's own path
    return _kernel("vllm", env, facts, f"vllm/{module} needs {sym or 'a torch symbol'}")


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


# Pure-Python distributions a traceback runs through on its way to a compiled extension: never the one built against NumPy.
PURE_PYTHON = frozenset({"transformers", "accelerate", "datasets", "huggingface-hub", "diffusers", "peft", "tokenizers"})


# torch's first release built against NumPy 2 (its wheels run under NumPy 1.x and 2.x): the numpy-abi row's source
TORCH_NUMPY2 = "2.3"


def _torch_numpy(h: Hit, env: Env) -> tuple[str, str] | None:
    """numpy-abi read from torch's own words (tensor_numpy.cpp): its warning "Failed to initialize NumPy: _ARRAY_API not
    found" or the RuntimeError "Numpy is not available" that every conversion raises after it. A torch built against
    NumPy 1.x (before 2.3) under NumPy 2; None where the log's versions say otherwise (a NumPy older than 2, or a torch
    built against NumPy 2): then torch's NumPy failed for another reason the line does not tell."""
    np, torch = env.version("numpy"), env.version("torch")
    npv, tv, first = _v(np), _v(_public(torch)) if torch else None, _v(TORCH_NUMPY2)
    if (npv is not None and npv.major < 2) or (tv is not None and first is not None and tv >= first):
        return None
    said = Break(rule="numpy-abi", package="torch", version=torch, against=np).sentence()
    what = ("torch's \"Numpy is not available\": its NumPy bridge did not initialize, so it refuses every tensor-NumPy "
            "conversion" if "torch_np" in h.groups else "torch's warning \"Failed to initialize NumPy\" at import")
    return (f"{said} ({what}: torch releases before {TORCH_NUMPY2} are built against the NumPy 1.x C ABI, which "
            f"{'numpy ' + np if np else 'NumPy 2'} does not load)",
            f"pin numpy<2 next to this torch (python -m pip install 'numpy<2'), or upgrade torch to {TORCH_NUMPY2} or "
            "newer, built against NumPy 2 (with its torchvision/torchaudio)")


# pip's conflict report: "<parent> <version> depends on numpy<specifier>" (the notes' "pip_causes")
_NUMPY_DEPENDENT = re.compile(r"^(?P<p>[A-Za-z0-9][\w.-]{0,60}) (?P<v>\d[\w.+!]{0,40}) depends on numpy(?![\w-])")


def _numpy_dependent(env: Env) -> tuple[str, str]:
    """(the package, its version) pip's conflict report says depends on numpy, where it names one such package and no
    pure-Python one: the distribution whose compiled modules are built against NumPy's headers; ("", "") otherwise."""
    found = {(canonicalize(m.group("p")), m.group("v")) for c in env.notes.get("pip_causes", "").split("; ")
             if (m := _NUMPY_DEPENDENT.match(c)) is not None}
    return next(iter(found)) if len(found) == 1 and not {p for p, _ in found} & PURE_PYTHON else ("", "")


def _numpy_newer(pkg: str, ver: str, np: str) -> tuple[str, str]:
    """numpy-abi's import_array failure under a NumPy 1.x the log names: the module's headers are newer (its C-API
    version, or NumPy 2's ABI version), which _import_array refuses before "numpy.core.multiarray failed to import"."""
    who = _shown(pkg, ver) if pkg else "a compiled extension"
    return (f"{who} was built against a newer NumPy than the installed numpy {np}: its import_array checks the running "
            "NumPy's C-API version (and ABI version) against the headers it was compiled with, refuses an older one, "
            "and then raises \"numpy.core.multiarray failed to import\"",
            f"upgrade numpy (python -m pip install -U numpy) to the release {pkg or 'the extension'} was built against, "
            f"or install the {pkg or 'extension'} build made for numpy {np}")


def _numpy(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    if "torch_np_absent" in h.groups:  # torch's warning that numpy is not installed at all: no ABI of it is read
        return None
    if "torch_np" in h.groups or "torch_np_warn" in h.groups:
        return _torch_numpy(h, env)
    pkg = h.package if h.package and h.package != "numpy" else ""
    through = ""
    if pkg in PURE_PYTHON:  # a frame of a pure-Python package: the extension is imported below it
        pkg, through = "", pkg
    mod = h.groups.get("importing") or h.groups.get("typed_import") or ""
    if not pkg and not through and mod:  # the import statement the error ends ("import cv2": opencv-python)
        named = module_package(mod.split(".", 1)[0])
        pkg = named if named not in ("numpy", *PURE_PYTHON) else ""
    ver = env.version(pkg) if pkg else ""
    if not pkg and not through:  # no import named: the one package pip's report says depends on numpy
        pkg, ver = _numpy_dependent(env)
        ver = env.version(pkg) or ver if pkg else ""
    np = env.version("numpy")
    npv = _v(np) if np else None
    if npv is not None and npv.major < 2 and h.text.strip().endswith("multiarray failed to import"):
        return _numpy_newer(pkg, ver, np)
    cause = Break(rule="numpy-abi", package=pkg, version=ver, against=np).sentence()
    cause += f" (it is imported through {through})" if through else ""
    if pkg:
        return cause, (f"install a {pkg} release built for NumPy 2 (pip install -U {pkg}; its wheels for numpy>=2), "
                       f"or pin numpy<2 while {pkg} has none")
    return cause, ("upgrade the extension named in the traceback above to a release built for NumPy 2, or pin numpy<2 "
                   "(python -m pip install 'numpy<2')")


# NumPy's C-API version (NPY_API_VERSION, printed by import_array as 0x%x) -> the NumPy releases that carry it:
# numpy/numpy@00be3ef9459634aaf074c450008857bdf131b151 numpy/_core/code_generators/cversions.txt (one line per version,
# each commented with its releases; 0x1-0x5 and 0x8 name none there, so none is said here)
NUMPY_C_API = {6: ("1.6", "1.6"), 7: ("1.7", "1.7"), 9: ("1.8", "1.9"), 10: ("1.10", "1.12"), 11: ("1.13", "1.13"),
               12: ("1.14", "1.15"), 13: ("1.16", "1.19"), 14: ("1.20", "1.21"), 15: ("1.22", "1.22"),
               16: ("1.23", "1.24"), 17: ("1.25", "1.26"), 18: ("2.0", "2.0"), 19: ("2.1", "2.2"), 20: ("2.3", "2.3"),
               21: ("2.4", "2.4"), 22: ("2.5", "2.5")}


def numpy_c_api(hexa: str) -> str:
    """'0xa' -> 'C-API 0xa (NumPy 1.10-1.12)'; a version the table does not name stays the bare hex."""
    first, last = NUMPY_C_API.get(int(hexa, 16), ("", "")) if hexa else ("", "")
    rel = f" (NumPy {first}-{last})" if first != last else f" (NumPy {first})" if first else ""
    return f"C-API 0x{hexa}{rel}"


def _cython_sizes(g: Mapping[str, str]) -> tuple[int, int] | None:
    """Cython's type-size check of a NumPy type (__Pyx_ImportType): (the size the module's C header gave, the running
    type's), from either phrasing (0.29+: "Expected <header> from C header, got <object> from PyObject"; 0.24-0.28:
    "has the wrong size, try recompiling. Expected <object>, got <header>"); None where the line gives no sizes."""
    if g.get("cy_header") and g.get("cy_object"):
        return int(g["cy_header"]), int(g["cy_object"])
    if g.get("cy_old_header") and g.get("cy_old_object"):
        return int(g["cy_old_header"]), int(g["cy_old_object"])
    return None


def _numpy_sizes(h: Hit, env: Env) -> tuple[str, str] | None:
    """numpy-too-old from Cython's type-size check: the header's size larger than the running type's is a module
    compiled against a newer NumPy (its ValueError); the other way round is Cython's warning, or nothing, for an older
    NumPy's build that runs (None: no failure)."""
    g = h.groups
    sizes = _cython_sizes(g)
    if sizes is not None and sizes[0] <= sizes[1]:
        return None
    if sizes is None and "cy_wrong" not in g:
        return None
    if "cy_warned" in g:  # the check as a warning (RuntimeWarning: ...) printed by the warnings module: no failure
        return None
    pkg = h.package if h.package and h.package not in ("numpy", *PURE_PYTHON) else ""
    who = _shown(pkg, env.version(pkg)) if pkg else "a compiled (Cython) extension"
    np, kind = env.version("numpy"), f"numpy.{g.get('cy_type', '')}"
    what = (f"the {kind} type of the installed {'numpy ' + np if np else 'NumPy'} is {sizes[1]} bytes, smaller than the "
            f"{sizes[0]} bytes of the NumPy headers it was compiled with" if sizes is not None else
            f"the {kind} type of the installed {'numpy ' + np if np else 'NumPy'} is smaller than in the NumPy headers it "
            "was compiled with")
    return (f"{who} was built against a newer NumPy than the installed {'numpy ' + np if np else 'one'}: Cython's "
            f"binary-compatibility check at import finds {what}, and refuses to load it (the struct grew in a later NumPy)",
            f"upgrade numpy (pip install -U numpy, within {pkg or 'the extension'}'s Requires-Dist) to the release "
            f"{pkg or 'the extension'} was built against, or install {'a ' + pkg if pkg else 'an extension'} release (or "
            f"a source build) made for {'numpy ' + np if np else 'the installed numpy'}")


def _numpy_old(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """numpy-too-old: the reverse of numpy-abi, an extension built against a newer NumPy than the one installed."""
    if "cy_type" in h.groups:
        return _numpy_sizes(h, env)
    pkg = h.package if h.package and h.package not in ("numpy", *PURE_PYTHON) else ""
    who, np, need = _shown(pkg, env.version(pkg)) if pkg else "a compiled extension", env.version("numpy"), h.groups.get("needs")
    if need and np == need:  # "(NumPy 2.0)" of the message itself, the headers' release, read as a version
        np = ""
    need = need or ("2.0" if h.groups.get("abi_built") else None)  # NumPy 2's ABI version (0x2000000): any NumPy 2
    # numpy.core._multiarray_umath, imported by the headers of NumPy 1.16 and later (numpy-1.26.4 __ufunc_api.h:243-248)
    need = need or ("1.16" if h.groups.get("umath_import") else None)
    b_hex, h_hex = h.groups.get("built", ""), h.groups.get("have") or h.groups.get("run_have", "")
    built = f"NumPy {need}" if need else f"NumPy {numpy_c_api(b_hex)}" if b_hex else "a newer NumPy"
    built += " or later (its headers import numpy.core._multiarray_umath)" if h.groups.get("umath_import") else ""
    installed = ("numpy " + np if np else "NumPy") + (f", whose {numpy_c_api(h_hex)} is older" if h_hex else "")
    first = NUMPY_C_API.get(int(b_hex, 16), ("", ""))[0] if b_hex and not need else ""
    need = need or first
    return (f"{who} was built against {built}, newer than the installed {installed}: its import_array "
            "refuses a NumPy older than its headers",
            f"upgrade numpy (pip install -U 'numpy>={need}')" if need else
            f"upgrade numpy (pip install -U numpy) to the release {pkg or 'the extension'} was built against, or install "
            f"{'a ' + pkg if pkg else 'an extension'} release built for {'numpy ' + np if np else 'the installed numpy'}")


def _major_minor(version: str) -> str:
    """A Python version's major.minor (``3.12`` of ``3.12.3``)."""
    return ".".join(version.split(".")[:2])


def _xformers_python(h: Hit) -> tuple[str, str]:
    """The Python xformers was built for and the one running, where its warning's "Python" line says they differ in
    major.minor (a wheel's _C is built for one CPython): ("3.12.3", "3.10.12"), else ("", "")."""
    def read(group: str) -> str:  # the line after the PyTorch one: a later match of the signature (collected)
        return h.groups.get(group) or next(iter(h.also.get(group, ())), "")
    built, have = read("pyl_built"), read("pyl_have")
    return (built, have) if built and have and _major_minor(built) != _major_minor(have) else ("", "")


def _xformers(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    built = h.groups.get("built") or h.groups.get("cut_built", "")
    py_built, py_have = _xformers_python(h)
    if py_built:
        return _xformers_for_python(h, env, built, py_built, py_have)
    cuda = h.groups.get("cuda", "")
    # a message cut before its "(you have X)": the torch the log names is read from the very line that names the build
    have = h.groups.get("have", "")
    if not built:  # "xFormers wasn't build with CUDA support": the row's cause, the log's versions named below
        return _xformers_ops(env, facts)
    cu = f"{int(cuda) // 100}.{int(cuda) % 100}" if cuda.isdigit() else ""  # torch.version.cuda as 100 x major + minor
    ver = env.version("xformers")
    if not have:  # the log stops before the torch xformers found: the version it was built for, the rest unread
        return (f"xformers{' ' + ver if ver else ''} was built for torch {built}" + (f" (CUDA {cu})" if cu else "")
                + ", not the torch installed: its C++/CUDA operators are disabled (the log stops before it names that "
                  "torch)", f"install the xformers release built for the installed torch (from the same PyTorch index "
                            f"as torch), or torch=={built}")
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


def _xformers_for_python(h: Hit, env: Env, built: str, py_built: str, py_have: str) -> tuple[str, str]:
    """xformers' warning naming another Python than the running one (its compiled _C is for that CPython), and the
    torch as well where that differs too."""
    have, ver = h.groups.get("have", ""), env.version("xformers")
    pb, ph = _major_minor(py_built), _major_minor(py_have)
    torch_differs = bool(built and have and built != have)
    who = f"xformers{' ' + ver if ver else ''}"
    cause = (f"{who} was built for Python {pb} ({py_built}), and Python {py_have} runs it: its compiled extension "
             f"(xformers._C, built for CPython {pb}) does not load in Python {ph}, so its C++/CUDA operators are "
             "disabled (a wheel built for another Python: installed by another interpreter, or copied into this "
             "environment)")
    pick = (f"install the xformers wheel for Python {ph} in the Python that runs (python{ph} -m pip install "
            f"--force-reinstall {'xformers==' + ver if ver else 'xformers'}: pip picks the cp{ph.replace('.', '')} wheel), "
            f"or run the Python {pb} it was built for")
    if torch_differs:
        cause += f"; it was also built for torch {built}, and torch {have} is installed"
        pick = (f"install the xformers release built for torch {_public(have)} for Python {ph} in the Python that runs "
                f"(python{ph} -m pip install --force-reinstall xformers, from the same PyTorch index as torch), or run "
                f"Python {pb} with torch=={built}, the pair it was built for")
    return cause, pick


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


# vLLM's V1 sampler gates FlashInfer's sampling on FlashInfer 0.2.3 (its sampling API's new return): vLLM 0.8.x turns it
# off from that release on, 0.9.0 on below it (the vllm-0.8.5 and -0.9.0 wheels' vllm/v1/sample/ops/topk_topp_sampler.py)
VLLM_SAMPLER_FOLLOWS = "0.9.0"


def _flashinfer_sampler(h: Hit, env: Env) -> tuple[str, str]:
    """flashinfer-companion-version from vLLM's sampler notice: FlashInfer newer (vLLM 0.8.x) or older (0.9.0 on) than
    the sampling API vLLM's sampler calls; it runs on vLLM's PyTorch-native sampler."""
    vllm = _shown("vLLM", env.version("vllm"))
    bound = h.groups.get("fs_bound") or h.groups.get("fs_need", "0.2.3")
    # (the notice's own "FlashInfer>=v0.2.3" is no version of the installed FlashInfer: a version equal to it is not said)
    have = next((ver for d in ("flashinfer-python", "flashinfer") if (ver := env.version(d)) and ver != bound), "")
    fi = _shown("FlashInfer", have)
    if "fs_new" in h.groups:
        return (f"{vllm}'s V1 sampler turned FlashInfer's top-p & top-k sampling off: the installed {fi} is {bound} or "
                f"newer, whose sampling API (it no longer returns a success value) this vLLM's sampler was not written for "
                "(vLLM 0.8.x), so it samples with its slower PyTorch-native implementation",
                f"upgrade vLLM to {VLLM_SAMPLER_FOLLOWS} or later, whose sampler calls FlashInfer {bound}'s API, or install "
                f"flashinfer-python<{bound} (the FlashInfer this vLLM's sampler was written for)")
    need = bound
    return (f"{vllm}'s V1 sampler needs FlashInfer {need} or later for its top-p & top-k sampling and the installed {fi} "
            "is older, so it samples with its slower PyTorch-native implementation",
            f"install flashinfer-python>={need} (the FlashInfer build for vLLM's torch and CUDA)")


def _flashinfer(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    if "fs_new" in h.groups or "fs_old" in h.groups:
        return _flashinfer_sampler(h, env)
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


def _triton(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """triton-torch-mismatch: the triton the log shows against the one its torch pins (torch-releases.toml)."""
    torch, have = env.version("torch"), env.version("triton")
    pins = [r for r in facts.rows("release") if r.package == "torch" and torch and r.version == _public(torch)]
    want = next((t.split("==", 1)[1] for r in pins for t in r.requires if t.startswith("triton==")), "")
    name = h.groups.get("name") or h.groups.get("attr") or h.groups.get("tattr") or ""
    where = (f"triton's {h.groups['tclass']} class" if h.groups.get("tclass") else
             "triton" + (h.groups.get("module") or h.groups.get("attr_module") or ""))
    verb = "reads {} of {}" if h.groups.get("tclass") else "imports {} from {}"
    what = (f"{_shown('torch', torch)} {verb.format(name, where)}, which {_shown('triton', have)} does not have" if name
            else f"{_shown('torch', torch)}'s inductor handed triton's compile() a target that is not the GPUTarget of the "
                 f"triton it imported (another triton's, or the form an older triton took)" if h.groups.get("gputarget")
            else f"{_shown('torch', torch)}'s inductor found no triton it can import (none installed, or one too old)")
    old, new = _v(_public(have)), _v(want)
    side = ("newer" if old > new else "older") if old is not None and new is not None and old != new else ""
    cause = (f"{what}: triton {have} is {side} than the triton {want} torch {torch} pins" if side else
             f"{what}: torch {torch} pins triton {want}" if want else
             f"{what}: the installed triton is not the release torch was built against (too old, or too new: triton "
             "moves and removes the names torch's inductor imports)")
    fix = (("uninstall every triton package but one (`pip list` shows each: a nightly or a second copy under another name), then "
            if h.groups.get("gputarget") else "")
           + (f"install triton=={want}, the release torch {_public(torch)} pins (pip install 'triton=={want}')" if want
           else "install the triton release the installed torch pins (`pip show torch` lists it under Requires-Dist; on Windows, where torch pins none, the triton-windows release made for that torch)"))
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


def _for_torch_of(facts: Facts, package: str, dep: str, have: str) -> str:
    """The release of ``package`` built for ``dep`` ``have`` where ``dep`` is torch (the matrix's kernel and family rows),
    else ""."""
    if dep != "torch" or _v(_public(have)) is None:
        return ""
    return _newest_for_torch(facts, canonicalize(package), have) or facts.family_for_torch(canonicalize(package),
                                                                                          _public(have)) or ""


def _pip_pin(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """pip collecting a stack package at a companion's pin while the log shows another version of it installed: pip is
    about to replace it. None where the log shows no other version (an ordinary install)."""
    g = h.groups
    dep, pin, parent, pver = g["pin_dep"], g.get("pin_ver", ""), g.get("pin_parent") or g.get("pin_parent_any", ""), \
        g.get("pin_parent_ver", "")
    if not pver:  # pip 23.1+ prints the parent's requirement as asked ("(from torchtext)"): its version as the log shows it
        pver = next((x for x in (env.seen.get(canonicalize(parent)) or env.version(parent)).split(", ") if x), "")
    seen = [x for x in (env.seen.get(canonicalize(dep)) or env.version(dep)).split(", ") if x]
    others = [x for x in seen if x != pin and _public(x) != pin]
    if not others:
        return None
    have = others[0]
    label = _local(have)
    alt = _for_torch_of(facts, parent, dep, have)
    return (f"{parent}{f' {pver}' if pver else ''} requires {dep}=={pin}, but {dep} {have} is installed: pip collects {dep}=={pin} for it and "
            f"replaces {dep} {have} (uninstalls it){f', dropping the +{label} build for the default one' if label else ''}, "
            f"so everything built for {dep} {have} now runs against another {dep}",
            f"install the {parent} release built for {dep} {_public(have)}"
            + (f" ({parent}=={alt})" if alt and alt != pver else "")
            + (f" from the index {dep} {have} came from (its +{label} index)" if label else "")
            + f", or keep {dep} {have} and install {parent} with --no-deps only where {parent}{f' {pver}' if pver else ''} is "
            f"known to run on it; `pip install {parent}{f'=={pver}' if pver else ''} --dry-run` shows what pip would replace "
            "before it does")


def _pip_replaced(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """pip uninstalled a stack package the log's install command did not ask for: a companion's requirement pulled
    another release of it in. None where the command asked for it, or the log shows neither command nor companion."""
    g = h.groups
    gone, was = g["gone"], g.get("gone_ver", "")
    name = canonicalize(gone)
    command = env.notes.get("pip_command", "")
    asked = {canonicalize(re.split(r"[\[=<>!~;@ ]", t.strip("'\""), maxsplit=1)[0]) for t in command.split()
             if t and not t.startswith("-") and "://" not in t}
    collected = [canonicalize(x.strip()) for x in env.notes.get("collected", "").split(",") if x.strip()]
    by = [x for x in collected if x != name and x in asked] or [x for x in asked if x != name and x in collected]
    if not command or name in asked or not by:
        return None
    who = by[0]
    alt = _for_torch_of(facts, who, name, was)
    return (f"pip uninstalled {gone} {was} to install {who}: the {who} release pip chose requires another {gone} than the "
            f"installed {gone} {was}, so pip replaced it (the install command asked for {who} only), and what was built "
            f"for {gone} {was} now runs against another {gone}",
            f"install the {who} release built for {gone} {was}"
            + (f" ({who}=={alt}, pinned: pip install '{who}=={alt}')" if alt else f" (pin {who} to it)")
            + f", or pin {gone}=={was} in the same command so that pip picks a release of {who} that accepts it; `pip install "
            f"{who} --dry-run` shows what pip would replace")


def _pip_recollected(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """pip collecting a stack package a second time at another version (its resolver backtracked): the exact pin of a
    companion collected between the two candidates replaced the first. The companion is the pinned one whose release the
    matrix records as built for the later version, else the only one pinned between. None where the log shows no
    second candidate, or no single companion."""
    got = env.notes.get("pip_recollected", "").split()
    if len(got) != 3 or canonicalize(h.groups["recand"]) != got[0]:
        return None
    name, first, later = got
    pins = [p.split("==", 1) for p in env.notes.get("pip_recollect_pins", "").split(", ") if "==" in p]
    built = [(p, v) for p, v in pins if (k := facts.kernel(p, v)) is not None and _public(k.torch) == _public(later)] \
        if name == "torch" else []
    if not (built or len(pins) == 1):
        return None
    who, ver = (built or pins)[0]
    alt = _for_torch_of(facts, who, name, first)
    return (f"{who}=={ver} requires {name} {later}, so pip's resolver dropped the {name} {first} it had collected first "
            f"and took {name} {later} instead (pip collected {name} a second time after {who}=={ver}): what was meant to "
            f"run on {name} {first} gets {name} {later}",
            f"install the {who} release built for {name} {_public(first)}"
            + (f" ({who}=={alt})" if alt and alt != ver else " (or build it from source against it)")
            + f", or drop the {who}=={ver} pin; pin {name}=={first} in the same command (from the index it came from) so "
            f"that pip fails rather than replacing it; `pip install ... --dry-run` shows what pip would take")


def _pip_conflict(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """pip-requirement-conflict: the pair pip left installed against the package's own requirement (or is replacing)."""
    g = h.groups
    if "recand" in g:
        return _pip_recollected(h, env, facts)
    if "pin_dep" in g:
        return _pip_pin(h, env, facts)
    if "gone" in g:
        return _pip_replaced(h, env, facts)
    pkg, ver, req, dep, have = g.get("pkg", ""), g.get("ver", ""), g.get("req", ""), g.get("dep", "").strip(), g.get("have", "")
    need = req.split(";", 1)[0].strip()
    return (f"{pkg} {ver} requires {need}, but {dep} {have} is installed: pip put them side by side and only warned, so "
            f"{pkg} runs against a {dep} it was not built or tested with",
            f"install {need} (pip install '{need}'), or "
            + (f"{pkg}=={alt}, the release built for torch {_public(have)}" if dep == "torch" and _v(_public(have)) and (
                alt := _newest_for_torch(facts, canonicalize(pkg), have) or facts.family_for_torch(canonicalize(pkg), _public(have)))
               else f"the {pkg} release that requires {dep} {_public(have)} (its Requires-Dist; `pip index versions {pkg}` "
               "lists the releases)"))


Builder = Callable[[Hit, Env, Facts], "tuple[str, str] | None"]
BUILDERS: dict[str, Builder] = {
    **CUDA_BUILDERS,
    **LOADER_BUILDERS,
    **INSTALL_BUILDERS,
    **ENGINE_BUILDERS,
    **PYTHON_BUILDERS,
    **EXT_BUILDERS,
    **COMPANION_BUILDERS,
    "torchvision-nms-missing": _torchvision,
    "torchaudio-load-failure": _torchaudio,
    "undefined-symbol": _undefined,
    "extension-before-torch": _before_torch,
    "nccl-undefined-symbol": lambda h, e, f: _nccl(h, e, f),
    "package-not-installed": _not_installed,
    "model-type-unknown": _model,
    "ptx-unsupported-toolchain": _ptx,
    "nvcc-unsupported-arch": _nvcc,
    "no-kernel-image": _no_kernel,
    "vllm-undefined-symbol": _vllm_symbol,
    "numpy-abi": _numpy,
    "numpy-too-old": _numpy_old,
    "xformers-built-for-other-torch": _xformers,
    "flashinfer-companion-version": _flashinfer,
    "torchao-cpp-skipped": _torchao,
    "triton-torch-mismatch": _triton,
    "engine-arch-unsupported": _arch,
    "automodel-config-unmapped": _automodel,
    "gpu-too-old-for-triton": _old_gpu,
    "pip-requirement-conflict": _pip_conflict,
    **SWEEP_BUILDERS,  # last: the installers' sweep reads its own phrasings of rows above and hands them the rest
    **SHARP_BUILDERS,
}
for _sid, _wrap in SHARP_WRAPPERS.items():  # fix-p: the rows' new alternatives read first (glmcompat.decide.sharpcauses)
    BUILDERS[_sid] = _wrap(BUILDERS[_sid])
for _sid, _wrap in REPORT_WRAPPERS.items():  # fix-r: the installers' reports for any package (glmcompat.decide.reportcauses)
    BUILDERS[_sid] = _wrap(BUILDERS[_sid])
# the forms other loaders and runtimes print, read before the builders above (:mod:`glmcompat.decide.loadercauses`)
# the signatures that read macOS dyld's missing library (its "Library not loaded" or a dlopen's "tried: ... (no such
# file)"), and the lines after such a line that its "Reason:" may take (dyld 4 lists each path tried there)
DYLD_MISSING = ("torch-lib-missing", "libpython-missing", "system-lib-missing")
DYLD_REASON_LINES = 3
BUILDERS["driver-not-found"] = runtime_driver(BUILDERS["driver-not-found"])
BUILDERS["undefined-symbol"] = dyld_symbol(BUILDERS["undefined-symbol"])
for _sid in DYLD_MISSING:
    BUILDERS[_sid] = dyld_library(BUILDERS[_sid])
# The package a signature names by itself (its text is the package's own), where the log's paths may name another, is
# its [[signature_package]] row's (Facts.signature_package), unless the match has one of these groups: then its text
# is another's (a module's undefined driver API function,
# another framework's cuDNN check)
OWN_UNLESS = {"driver-too-old": ("driver_api", "image_cuda", "image_driver", "nvd_image", "nvd_image_b", "ngc_need",
                                 "ngc_status", "xla_driver", "xla_cut"),
              "cudnn-version-mismatch": ("framework", "framework_major", "jax_framework")}
# the signatures whose builder may find that the line was not their failure (-> the groups that say so)
# a failed build or install whose log shows the network failing under it: a network fault, no packaging cause
NETWORK_WITHHELD = frozenset({"source-build-failed"})
DROPPED = {"gpu-arch-not-in-build": ("x_nccl_warn",), "numpy-abi": ("torch_np", "torch_np_warn", "torch_np_absent"), "model-type-unknown": ("key", "model_type", "mi_type"), "undefined-symbol": ("dyld_symbol", "dyld_flat_symbol", "cut_library", "djl_jni", "colon_library"), "package-not-installed": ("module", "ns_module", "min_missing", "rv_missing"),
           "triton-libcuda-missing": ("ldc_tool", "ldc_missing", "tl_out"),
           "companion-too-old": ("submodule", "name", "attr", "kwarg", "kw_kwarg", "min_pkg", "undefined", "cy_module", "cy_sig_module",
                                 "mc_macro"),
           "pip-requirement-conflict": ("pin_dep", "gone", "recand"), "numpy-too-old": ("cy_type",), "numpy-too-new": ("np_import", "np_attr", "np_alias", "np_alias2", "np_alias3", "np_expired", "np_expired2", "np_module", "np_module2", "np_old"), "pip-resolution-impossible": ("ri_what", "ri_any"), "no-matching-distribution": ("req", "req_found", "uv_req", "uv_pkg", "uv_missing", "uv_dist", "nd_none"),
           "nccl-cuda-mismatch": ("nccl_err", "nccl_backend"), "nccl-too-old": ("nccl_launch_line",), "cuda-toolkit-clash": ("cublas_init", "clash_lib", "node_only", "vn_node", "torch_lib", "ltr_node"),
           "cudnn-sublibrary-missing": ("vn_cudnn_node", "ltr_cudnn_node"), "torchvision-nms-missing": ("partial", "tv_only_op", "tv_meta_frame"),
           "lxc-cuda-init-hmm": ("cuda_init",),
           "torch-cpu-only": ("cpu_version", "cpu_printed", "cpu_commented", "cuda_none", "built_false", "webui_no_gpu", "avail_false",
                             "deser_cuda", "cuda_asked", "cuda_said"),
           "torch-arch-unsupported": ("idf_file", "idf_at", "thc_exec"), "cuda-toolkit-mismatch": ("idf_file", "idf_at"),
           "version-requirement-unmet": ("rn_lookup", "rn_pkg"),
           # an NGC image's compat status line ("[[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]"): the refusal's
           # detail, or a notice's (its Minor Version Compatibility warning, which runs): never a cause alone
           "driver-too-old": ("ngc_status",),
           "extension-not-built": ("x_origin", "x_cpuops"),
           # the loader's libcudart.so.N of a package's module: an extension built for another CUDA only where the log's
           # torch is built for another runtime (else cudart-missing's)
           "extension-cuda-mismatch": ("x_cudart",),
           **PYTHON_DROPPED, **COMPANION_DROPPED}
DROPPED.update({k: DROPPED.get(k, ()) + v for k, v in SWEEP_DROPPED.items()})
# fix-o: the memory-efficient attention kernels' arch check where the code is newer than the kernel's range (no arch left
# out of a build: extcauses._fmha_arch reads it as none)
DROPPED["gpu-arch-not-in-build"] += ("x_fmha_kernel", "x_fmha_min2")
# fix-n (issue 38): the package a build asking for a GPU is of (build-needs-cuda-device: Spack's, pip's), named where the
# log's paths name torch; and the groups whose builder may find the line no such failure: torchvision's CUDA check
# quoted without its head naming one CUDA twice (the check raises only for two), Python 2.7-3.6's "cannot import name
# 'X'" with no import statement above it to name the module
PYTHON_PACKAGE = {**PYTHON_PACKAGE, "build-needs-cuda-device": built_package}
FIXN_DROPPED = {"torchvision-cuda-mismatch": ("mid_torch_cuda",), "companion-too-old": ("name_old", "name_old27")}
DROPPED.update({k: DROPPED.get(k, ()) + v for k, v in FIXN_DROPPED.items()})
DROPPED.update({k: DROPPED.get(k, ()) + v for k, v in REPORT_DROPPED.items()})


# a signature whose line names more than another's reading of it -> the generic signatures that read the same line less
# sharply (issue 38's one vocabulary: tests/decide/test_one_vocabulary.py lists each pair): torch 1.11's removed THC headers
# (a missing header, build-header-missing), torch's removed torch.utils.ffi module (a companion's missing submodule,
# companion-too-old); Python 3.12's removed pkgutil.ImpImporter, which setuptools' pkg_resources before 66.1 registers
# (build-backend-too-old, the build tooling, over python-stdlib-removed's old code); cuDNN's "Could not load library
# <sub-library>. Error: <the loader's error>" (cudnn-sublibrary-missing: its sub-library did not load, the quoted error
# saying why, over cuda-lib-missing's reading of that error alone); vLLM's "Failed to import from vllm._C:
# ImportError(...)" whose quoted error is the CUDA runtime missing (cudart-missing, over vllm-extension-import-failed's
# generic reading); the loader's libcudart.so.N of another package's module where the log's torch is built for another
# CUDA runtime (extension-cuda-mismatch: an extension built for another CUDA than torch, over cudart-missing's reading of
# the missing runtime alone and vLLM's generic one); a module setuptools 82 removed (pkg_resources): the removal, not a package merely missing
SUPERSEDED = {"torch-thc-removed": frozenset({"build-header-missing"}), "numpy-too-new": frozenset({"companion-api-removed"}),
              # a tracked companion's name a release removed ([[export]] rows): the removal, not its other direction (fix-m)
              "companion-api-removed": frozenset({"companion-too-old"}),
              "torch-api-removed": frozenset({"companion-too-old"}),
              "build-backend-too-old": frozenset({"python-stdlib-removed"}),
              "cudnn-sublibrary-missing": frozenset({"cuda-lib-missing", "nvrtc-missing"}),
              # fix-q: the loader's line for NVRTC's own soname (libnvrtc.so.12): NVRTC missing, cuda-lib-missing's case
              "nvrtc-missing": frozenset({"cuda-lib-missing"}),
              "cudart-missing": frozenset({"vllm-extension-import-failed"}),
              "extension-cuda-mismatch": frozenset({"cudart-missing", "vllm-extension-import-failed"}),
              # fix-v: the loader's libcudart.so.N of torchvision's own _C, torch built for another CUDA
              "torchvision-cuda-mismatch": frozenset({"cudart-missing"}),
              "pkg-resources-removed": frozenset({"package-not-installed"}),
              # fix-y: DGL's own dgl.dll, whose CUDA build links the CUDA DLLs (signatures.toml's cuda-lib-missing row)
              "cuda-lib-missing": frozenset({"torch-dll-load-failed"}),
              "gpu-arch-not-in-build": frozenset({"no-kernel-image"})}  # NCCL's "Cuda failure 'no kernel image ...'" where its build target shows
# the NumPy failures other than NumPy 2's ABI that torch's bare "Numpy is not available" may follow (numpy-abi's source)
TORCH_NUMPY_OTHER = frozenset({"numpy-too-old", "numpy-too-new"})
# the driver's absence (or a driver whose kernel module and libraries differ), and what torch then reports of it: a
# process that finds no usable driver counts no GPU ("No CUDA GPUs are available", cudaErrorNoDevice)
DRIVER_ABSENT = frozenset({"driver-not-found", "driver-library-mismatch"})
DRIVER_CONSEQUENCE = frozenset({"cuda-not-available"})
# a host compiler refused before anything compiles (nvcc's crt/host_config.h, torch's headers' #error): the failed build
# step that follows it (source-build-failed: pip's "error: command '...nvcc' failed", ninja's "FAILED:", "Failed building
# wheel") is its consequence, so the step's generic hit after it is left out (a missing header keeps both: the recorded
# runs of tests/fixtures/raise_sites/install-real.toml name the header and the failed build)
BUILD_FIRST_ERRORS = frozenset({"host-compiler-unsupported", "host-compiler-too-old"})
# a compile's own error (a missing header, a refused host compiler) above triton's failed launcher compile (its
# CalledProcessError, read as triton-libcuda-missing's link where the log keeps no such error): that error is the cause
COMPILE_ERRORS = BUILD_FIRST_ERRORS | {"build-header-missing"}
# uv's derivation whose root (its first clause) is a requirement no index it read has a version of: "Because there is no
# version of X==V and Y depends on X==V, we can conclude ..." (astral-sh/uv@210d1f6785e95a8c8c0d53e284408c9be1134700, tag
# 0.12.5, crates/uv-resolver/src/pubgrub/report.rs:275-290, "there is no version of {package}{set}" / "there are no
# versions of {package}"): the missing version, no-matching-distribution's reading of that clause, is the cause, and the
# conflict reading of the same derivation (pip-resolution-impossible) is left out
UV_ROOT_MISSING = re.compile(r"(?:And |So, )?[Bb]ecause there (?:is no version|are no versions) of ")
# uv's derivation whose root (its first clause) is a release none of whose wheels fits the interpreter: "Because all
# versions of X have no wheels with a matching Python ABI tag (e.g., `cp314`) and Y depends on X, ..." or "Because
# X==V has no wheels with ..." (optionally after "only the following versions of X are available: ... and"):
# IncompatibleDist's singular/plural messages (astral-sh/uv@210d1f6785e95a8c8c0d53e284408c9be1134700, tag 0.12.5,
# crates/uv-distribution-types/src/prioritized_distribution.rs:153-158, 225-237; report.rs:318-335 puts the range first,
# "all versions of {package}" at report.rs:2656): the tag check, wheel-not-supported's reading of it, is the cause, and the
# conflict reading of the same derivation (pip-resolution-impossible) is left out
UV_ROOT_NO_WHEEL = re.compile(r"(?:And |So, )?[Bb]ecause (?:only the following versions of [^\n]{1,600}? are available:?"
                              r"[^\n]{0,600}? and )?(?:all versions of )?[\w.\[\],=<>!~+*-]{1,160}"
                              r"(?:\{[^{}\n]{1,400}\}[\w.=<>!~+*-]{1,60})? ha(?:s|ve) no wheels with ")  # fix-p: {markers}
# a virtual package the machine lacks or has too old (conda's __cuda, __glibc): conda's unsatisfiable report whose line
# names it says why the solve failed, so the generic reading of the same report (its head, its other lines) is left out
VIRTUAL_PACKAGE = frozenset({"conda-cuda-too-old", "conda-glibc-too-old"})


# bitsandbytes 0.37-0.41's "CUDA SETUP: Loading binary .../libbitsandbytes_cpu.so...": the CPU library it loaded; and its
# warning "The installed version of bitsandbytes was compiled without GPU support" (the library it loaded has no GPU
# functions): both bitsandbytes-cpu-library's (issue 38's one vocabulary, tests/decide/test_one_vocabulary.py)
BNB_CPU_LOADED = "x_bnb_cpu_loaded"
BNB_NO_GPU = "x_bnb_nogpu"
# bitsandbytes-cuda-setup's groups that read why no CUDA library was chosen (a binary looked for and not found, a
# missing CUDA library, an old CUDA): where the log shows one, that reading stands over the CPU library's
_BNB_CUDA_WHY = ("binary", "binary_nf", "cpu_lib", "x_bnb_lib", "x_bnb_lib2", "x_bnb_rt", "x_bnb_req", "x_bnb_src",
                 "x_bnb_what", "x_bnb_detect", "x_bnb_failed", "x_bnb_old")


def _bnb_cpu_loaded(out: list[Hit]) -> list[Hit]:
    """bitsandbytes-cpu-library read from its warning ("compiled without GPU support") or from 0.37-0.41's line naming the
    CPU library it loaded, against bitsandbytes-cuda-setup: where bitsandbytes-cuda-setup read why no CUDA library was
    chosen, that stands and the CPU library's reading is left out; where it read only a plain line of its own ("CUDA Setup
    failed despite GPU being available") next to the loading line, the loading line, which names the library, stands; next
    to the warning alone, bitsandbytes-cuda-setup's (the log shows the GPU it found). The loading line alone (one line, no
    warning, no failure of bitsandbytes) is a CPU-only machine's ordinary start: left out."""
    cpu = [o for o in out if o.id == "bitsandbytes-cpu-library" and (BNB_CPU_LOADED in o.groups or BNB_NO_GPU in o.groups)]
    if not cpu:
        return out
    setup = [o for o in out if o.id == "bitsandbytes-cuda-setup"]
    if setup and not any(g in o.groups for o in setup for g in _BNB_CUDA_WHY) and any(BNB_CPU_LOADED in o.groups for o in cpu):
        return [o for o in out if o.id != "bitsandbytes-cuda-setup"]
    if setup:
        return [o for o in out if o not in cpu]
    return [o for o in out if not (o in cpu and BNB_CPU_LOADED in o.groups and o.count == 1)]


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


def spelled(h: Hit, cause: str) -> str:
    """The cause saying the package as the log spells it too: a distribution (torch-sparse) that the matched line names
    by its module (torch_sparse/_convert_cuda.so) ends "(the log's torch_sparse is torch-sparse)", so that what the user
    searches for (the log's word) is in what explain prints; the cause's own sentences are left whole (check, verify
    and explain word a break alike)."""
    pkg = h.package
    if not pkg or not cause:
        return cause
    word = re.compile(rf"(?<![\w.-]){re.escape(pkg)}(?![\w-])")
    if word.search(cause) is None:
        return cause
    modules = (m for m, p in name_tables().modules.items() if p == pkg)  # sklearn (scikit-learn), cv2 (opencv-python)
    for form in dict.fromkeys((pkg.replace("-", "_"), pkg.replace("_", "-"), pkg.replace("-", ""), *modules)):
        if form == pkg or form in cause:
            continue
        # the matched line, or the line of the frames that named the package (a traceback's "flash_attn_gpu.fwd(")
        if re.search(rf"(?<![\w-]){re.escape(form)}(?![\w-])", f"{h.text}\n{h.groups.get('named_by', '')}") is not None:
            return f"{cause} (the log's {form} is {pkg})"
    return cause


def _no_toolkit(h: Hit, home: str) -> Hit:
    """A failed source build (source-build-failed) in a log where torch found no CUDA runtime and guessed CUDA_HOME
    (cpp_extension's "No CUDA runtime is found, using CUDA_HOME='...'": no GPU where the build runs) and no compile step of
    nvcc shows: the build stopped before compiling, where it looks for the toolkit (DeepSpeed's op builder runs
    CUDA_HOME/bin/nvcc -V, installed_cuda_version): nvcc-missing, with the CUDA_HOME torch took."""
    g = h.groups
    raw = next((g[k] for k in ("pip_pkg", "step_pkg", "uv_pkg", "poetry_pkg", "pip_pkgs", "pip_failed") if g.get(k)), "")
    raw = re.split(r"[\s\[=<>!~;@(,`]", raw.strip(), maxsplit=1)[0] if raw.strip() else ""
    who = h.package or (canonicalize(raw) if raw else "") or "the package"
    cause = (f"the build of {who} ran where torch found no CUDA runtime (no GPU or driver visible: a docker build, a CPU "
             f"node) and took CUDA_HOME={home}, and it failed before any nvcc compile step: the CUDA toolkit it compiles "
             f"with ({home}/bin/nvcc) is missing or incomplete in the build environment (a *-runtime image, or pip's "
             "nvidia-* wheels, has CUDA's libraries but no nvcc)")
    remedy = ("install the CUDA toolkit (nvcc) of torch's CUDA (torch.version.cuda) in the build environment and point "
              "CUDA_HOME at it, or build in a -devel image (nvidia/cuda:<version>-devel-*, pytorch/pytorch:<tag>-devel); "
              "with no GPU visible at build time, name the architectures to build for (TORCH_CUDA_ARCH_LIST=\"8.0;8.6;9.0\"); "
              "or install a prebuilt wheel instead of building")
    return replace(h, id="nvcc-missing", cause=cause, remedy=remedy, rule=CAUSE_OF.get("nvcc-missing", ""))


def diagnose(hits: Sequence[Hit], env: Env, facts: Facts) -> list[Hit]:
    """Each hit with its cause and remedy built for ``env``; a hit that turns out not to be its signature's
    failure (a bare ``KeyError`` outside transformers) is left out. A hit keeps its package, and takes the
    version ``env`` holds for it."""
    out = []
    for h in hits:
        h = aliased(h)  # fix-p: an alternative's groups under the names the builders read (a cut line, uv's markers)
        h = old_gpu_launch(h, hits, env, facts)  # torch's kernels on a GPU its own check calls too old: gpu-capability-too-old
        h = renamed_runtime(h, env, facts)  # a libcudart file named for a release it is not: extension-cuda-mismatch
        h = family_runtime(h, env, facts)  # the loader's libcudart of torchvision's own _C: torchvision-cuda-mismatch (fix-v)
        h = arch_of_named_gpu(h, hits, env, facts)  # "no kernel image" of torch's own kernels on a GPU the log names
        h = isolated_torch(h, env, facts, hits)  # uv's failed build whose log shows torch missing from it: build isolation
        h = torch_missing_in_a_build(h, env, facts, hits)  # pip's setup.py run whose traceback ends in no torch
        h = libcuda_of_a_build(h, env, facts)  # ld's -lcuda in another build's link than triton's: link-library-missing
        h = torch_python_wheel(h, env, facts)  # pip's no torch for the log's Python: torch-python-unsupported
        h = uv_torch_python(h, env, facts)  # uv's tag check or hint on torch's wheels for a cpXY: the same (fix-s)
        h = pip_torch_pins(h, env, facts)  # pip's conflict of one project's torch pins and nothing else: the same (fix-s)
        h = proc_not_found(h, facts)  # Windows' WinError 127 of an extension module's import: undefined-symbol
        h = dll_clash(h, env, facts)  # WinError 127 loading one of torch's CUDA library DLLs: cuda-toolkit-clash (fix-q)
        h = removed_attribute(h, env, facts)  # a module attribute a release of its companion removed: companion-api-removed
        h = removed_keyword(h, env, facts)  # a keyword a release of its companion removed: companion-api-removed (fix-x)
        h = poetry_derivation(h, facts)  # poetry's derivation naming a Python cause or a package twice (fix-r)
        h = failed_install_run(h, hits, env)  # pip's failed resolution and the run that then failed on it (fix-w)
        own = ("" if any(g in h.groups for g in OWN_UNLESS.get(h.id, ())) else facts.signature_package(h.id)) or h.groups.get(
            "companion", "")
        if (named := ext_package(h) or (PYTHON_PACKAGE[h.id](h, env) if h.id in PYTHON_PACKAGE else "")) and named != h.package:
            own = named  # the package the log's frames named instead (the importing one) is kept as "framed"
            h = replace(h, groups={**h.groups, "framed": h.package}) if h.package else h
        if own:
            h = replace(h, package=own, version=h.groups.get("have", "") if own == h.groups.get("companion") else "")
        h = with_package(h)  # a framework row's hit: the package its row names (frameworkcauses)
        ver = env.version(h.package) if h.package else ""
        h = replace(h, version=ver or h.version)
        build = framework_builder(h, BUILDERS.get(h.id)) or BUILDERS.get(h.id)
        got = ext_cause(h, env, facts) or (build(h, env, facts) if build is not None else None)
        if got is None and (notice(h) or any(g in h.groups for g in DROPPED.get(h.id, ()))):
            continue
        if h.id == "undefined-symbol" and got is None and own_function(h.groups.get("symbol", ""), facts):
            continue  # the extension's own global function missing: its own build, no torch mismatch (not claimed)
        if h.id in NETWORK_WITHHELD and "net_fault" in env.notes:
            continue  # the build or install stopped on the network (a reset, a refused or timed-out connection)
        if h.id == "undefined-symbol" and DRIVER_API.fullmatch(h.groups.get("symbol", "")) and any(
                o.id == "driver-too-old" and o.line == h.line for o in hits):
            continue  # the same line's driver-too-old hit names the driver API function (no library path before it)
        if got is not None:
            h = replace(h, cause=spelled(h, got[0]), remedy=got[1])
        std = h.id == "undefined-symbol" and (STD_SYMBOL.match(h.groups.get("symbol", "")) is not None
                                              or OWN_SYMBOL.match(h.groups.get("symbol", "")) is not None)
        out.append(replace(h, rule="" if std else CAUSE_OF.get(h.id, "")))  # libstdc++'s symbol: no torch ABI break
    theirs = {o.line for o in out if o.id in DYLD_MISSING[:-1] and ("dyld_missing" in o.groups or "dyld_open" in o.groups)}
    if theirs:  # torch's or CPython's library: its own signature names it, not the generic one that reads every library
        out = [o for o in out if not (o.id == DYLD_MISSING[-1] and o.line in theirs)]
    arch = [o.line for o in out if o.id == "dylib-wrong-arch"]
    if arch:  # a path dyld tried was there, of another architecture: that, not a missing file, is why it did not load
        out = [o for o in out if not (("dyld_missing" in o.groups or "dyld_open" in o.groups)
                                      and any(0 <= a - o.line <= DYLD_REASON_LINES for a in arch))]
    if any(o.id == "numpy-too-old" for o in out):  # import_array's own ImportError after its version check refused
        out = [o for o in out if not (o.id == "numpy-abi" and o.text.strip().endswith("multiarray failed to import"))]
    broken = {o.package for o in out if o.id == "extension-not-built" and any(k.startswith("x_sci") for k in o.groups)}
    if broken:  # a package's own words for its compiled part that did not import: its import of its own module is that
        out = [o for o in out if not (o.id in ("companion-api-removed", "companion-too-old") and o.package in broken)]
    searched = [o.line for o in out if o.id == "build-header-missing" and "x_hlib2" in o.groups]
    if searched:  # a source build's own search for the library it compiles against: the loader's error it re-raises after
        out = [o for o in out if not (o.id == "system-lib-missing" and any(0 < o.line - s <= 3 for s in searched))]
    if any(o.id in TORCH_NUMPY_OTHER or (o.id == "package-not-installed" and o.groups.get("module") == "numpy")
           for o in out):  # torch's "Numpy is not available" after another NumPy error the log names: that one's
        out = [o for o in out if not (o.id == "numpy-abi" and "torch_np" in o.groups)]
    if any(o.id in DRIVER_ABSENT for o in out):  # no driver (or an unusable one): torch then counts no GPU, its consequence
        out = [o for o in out if o.id not in DRIVER_CONSEQUENCE]
    first_error = min((o.line for o in out if o.id in BUILD_FIRST_ERRORS), default=0)
    if first_error:  # the compile's own error above the failed step names why the build failed
        out = [o for o in out if not (o.id == "source-build-failed" and o.line > first_error)]
    compiled = min((o.line for o in out if o.id in COMPILE_ERRORS), default=0)
    if compiled:  # the compiler's own error above triton's failed launcher compile names why it failed
        out = [o for o in out if not (o.id == "triton-libcuda-missing" and "tl_out" in o.groups and o.line > compiled)]
    if any(o.id in VIRTUAL_PACKAGE for o in out):  # the solve failed on the machine's __cuda / __glibc, which it names
        out = [o for o in out if o.id != "conda-unsatisfiable"]
    out = _bnb_cpu_loaded(out)
    for sharp, generic in SUPERSEDED.items():  # a removal the line's own words name: the generic reading of it is left out
        lines = {o.line for o in out if o.id == sharp}
        out = [o for o in out if not (o.id in generic and o.line in lines)]
    if any(o.id == "nccl-too-old" and "nccl_launch_line" in o.groups for o in out):
        # NCCL's kernel launch refused by a GPU newer than the release knows (its WARN's file:line read against the
        # releases' checks): the ncclUnhandledCudaError it returns up the stack is that failure, not another (fix-t)
        out = [o for o in out if not (o.id == "nccl-cuda-mismatch" and "nccl_err" in o.groups)]
    if (home := env.notes.get("no_cuda_runtime", "")) and "nvcc_ran" not in env.notes and out and all(
            o.id == "source-build-failed" for o in out):
        out = [_no_toolkit(o, home) for o in out]  # a build with no GPU and no nvcc step shown: no toolkit in it
    if any(o.id == "build-isolation-no-torch" for o in out):  # the failed build step already names torch's absence
        out = [o for o in out if not (o.id == "package-not-installed" and o.groups.get("module") == "torch")]
    if UV_ROOT_MISSING.match(env.notes.get("uv_because", "") or env.notes.get("uv_because_wip", "")) and any(
            o.id == "no-matching-distribution" and "uv_req" in o.groups for o in out):
        out = [o for o in out if o.id != "pip-resolution-impossible"]  # the root: a pinned version no index has
    if UV_ROOT_NO_WHEEL.match(env.notes.get("uv_because", "") or env.notes.get("uv_because_wip", "")) and any(
            "wheel-not-supported" in (o.id, o.family) and "uv_pkg" in o.groups for o in out):
        out = [o for o in out if o.id != "pip-resolution-impossible"]  # the root: a release with no wheel for this Python
    # pip's refusal of a manylinux wheel whose glibc floor is above the machine's glibc, which the log shows: glibc-too-old
    out = [replace(o, id="glibc-too-old", cause=g[0], remedy=g[1], rule=CAUSE_OF.get("glibc-too-old", ""))
           if o.id == "wheel-not-supported" and (g := glibc_refusal(o, env)) is not None else o for o in out]
    out = hinted(out)  # uv's hint naming the Python torch lacks: the installer line's platform reading left out (fix-s)
    out = ignored_elsewhere(out)  # pip's skipped releases of other projects: the requirement it could not find stands
    out = device_query_in_build(out, env, facts)  # torch's no-GPU words where cpp_extension asked: the build's (fix-n)
    out = tf_probe_notice(out, env)  # TensorFlow's libcudart probe it says to ignore without a GPU (fix-p)
    out = poetry_readings(out)  # poetry's Python range or a package required twice, over its derivation's generic reading
    out = side_notes(out)  # pip's conflict report of packages outside the stack: the cause only where nothing else is (fix-r)
    out = after_failed_install(out, env)  # an import error of a package pip's failed resolution names: its consequence (fix-w)
    # the more general cause each is a case of, if any: its row's family, or, for a hit a refinement gave its own family
    # (pip's no-matching-distribution read as torch-python-unsupported: installcauses.torch_python_wheel), that one
    return [replace(o, family=o.family or facts.signature_family(o.id)) for o in out]


__all__ = ["BUILDERS", "Env", "diagnose", "extension_break", "package_cause"]
