"""Causes and remedies of the installers', builders' and loaders' failures (issue 38's sweep of their raise sites:
glmcompat/matrix/data/install-signatures.toml): an interpreter outside a package's Requires-Python, a source build that
failed, build tooling older than the install needs, conda's __cuda virtual package, a system library or a linker
library missing, a library of the wrong ELF class, glibc's static TLS and executable-stack refusals, a glibc wheel on
musl; and poetry's, pdm's, uv's and distutils' phrasings of causes signatures.toml names (their own wording, by the
tool that printed them). Each builder takes a :class:`~glmcompat.model.signatures.Hit`, the
:class:`~glmcompat.decide.logenv.Env` and the matrix, as :func:`glmcompat.decide.diagnose.diagnose` calls it. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from glmcompat.decide.installcauses import INSTALL_BUILDERS, companions
from glmcompat.decide.logenv import Env
from glmcompat.decide.logenv import shown as _shown
from glmcompat.matrix.view import Facts
from glmcompat.model.causes import CAUSE_OF
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import Hit

Builder = Callable[[Hit, Env, Facts], "tuple[str, str] | None"]


def _g(h: Hit, *names: str) -> str:
    """The first of ``names`` the match captured (stripped), or ""."""
    return next((h.groups[n].strip() for n in names if h.groups.get(n, "").strip()), "")


def _name(text: str) -> str:
    """The distribution a requirement or a solver's clause opens with (``vllm==0.6.3`` -> ``vllm``)."""
    return canonicalize(re.split(r"[\s\[=<>!~;@(,`]", text.strip(), maxsplit=1)[0]) if text.strip() else ""


def _stack(names: list[str], facts: Facts) -> list[str]:
    """The names among ``names`` the matrix tracks as the stack's (its companions, torch's, NVIDIA's libraries)."""
    tracked = companions(facts)
    return [n for n in names if n and (n in tracked or n.startswith(("nvidia-", "torch")) or n == "triton")]


def _python(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """python-version-unsupported: the package, the interpreter and the range, as each installer prints them."""
    pkg = _name(_g(h, "pkg", "uv_pkg", "hint_pkg", "poetry_pkg", "multi_pkg"))
    py = _g(h, "python", "uv_python", "uv_interp", "uv_req_python", "lock_python", "hint_python") or (
        env.notes.get("pip_python", "") if "multi_pkg" in h.groups else "")
    need = _g(h, "requires", "uv_requires", "uv_proj_req", "uv_req_req", "lock_req", "poetry_requires", "multi_requires")
    tool = ("uv" if any(k.startswith(("uv_", "lock_", "hint_")) for k in h.groups)
            else "poetry" if any(k.startswith("poetry_") for k in h.groups)
            else "pdm" if "pdm_range" in h.groups else "pip")
    if "ignored" in h.groups:  # pip's list: "0.6.4 Requires-Python >=3.9; 0.7.0 Requires-Python >=3.9"
        pairs = re.findall(r"(\S{1,60}) Requires-Python (\S{1,60})", h.groups["ignored"])
        if pairs:
            ranges = sorted({r.rstrip(";,") for _, r in pairs})
            return (f"pip skipped releases {', '.join(v for v, _ in pairs[:6])} because each requires Python "
                    f"{' or '.join(ranges)}, which the Python that runs pip is not: the releases left (if any) do not "
                    "satisfy the requirement",
                    f"run pip with a Python in {ranges[0]} (a venv made with it: uv venv --python X.Y), or pin a release "
                    "whose Requires-Python includes this Python")
    if "hint_tags" in h.groups:
        tags = h.groups["hint_tags"].strip()
        return (f"{_shown(h.groups['hint_pkg'], h.groups.get('hint_ver', ''))} publishes wheels only for the Python "
                f"tags {tags}, and the interpreter is {h.groups.get('hint_impl', 'Python')} {py} "
                f"({h.groups.get('hint_tag', '')}): no wheel of that release fits it",
                f"run with a Python whose tag is among {tags} (uv venv --python X.Y), or a {h.groups['hint_pkg']} "
                f"release that publishes {h.groups.get('hint_tag', 'this Python')} wheels")
    if "poetry_range" in h.groups:
        rng = h.groups["poetry_range"]
        return (f"the project declares Python {rng} (pyproject's requires-python / tool.poetry python), and some "
                "dependency supports only part of that range, so poetry cannot pick one version for all of it",
                f"narrow the project's Python range to what the dependencies accept (the lines below name each: e.g. "
                f"python = \">=3.9\" in place of {rng}), or add a python marker to the dependency")
    if "pdm_range" in h.groups:
        return (f"the project's requires-python ({h.groups['pdm_range'].rstrip('.')}) includes Python versions some "
                "dependency does not support, so pdm cannot pick one version for all of them",
                "narrow requires-python in pyproject.toml to the range the dependencies accept (pdm lists them), or "
                "add a python marker to the dependency")
    who = _shown(pkg, "") if pkg else "a package"
    if not (py or need):
        return None
    what = "the project's" if h.groups.keys() & {"uv_proj_req", "uv_req_req", "lock_req"} else f"{who}'s"
    return (f"{what} Python requirement is {need or 'a range'} and the interpreter {tool} runs with is Python "
            f"{py or '(another version)'}: every release whose Requires-Python excludes it is skipped",
            f"run with a Python in {need or 'the range'} (uv venv --python X.Y / uv python pin X.Y, a conda "
            f"environment with that python), or pin a release of {pkg or 'the package'} whose Requires-Python includes "
            f"Python {py or 'this one'}")


_IGNORED_VERSION = re.compile(r"(?:^|;)\s{0,4}(?P<v>\d[\w.!+]{0,60}) Requires-Python ")


def ignored_elsewhere(hits: list[Hit]) -> list[Hit]:
    """``hits`` without python-version-unsupported's reading of pip's "Ignored the following versions that require a
    different python version: ..." where the requirement pip then could not find accepts none of those versions.

    pip's list is its finder's, for the whole run: every release any project's lookup skipped for its Requires-Python,
    each "<version> Requires-Python <specifier>", the project unnamed (pip-23.2.1 wheel
    pip/_internal/index/package_finder.py:244 and :707-713, requires_python_skipped_reasons over _logged_links), printed
    before "Could not find a version that satisfies the requirement ..." (pip/_internal/resolution/resolvelib/factory.py
    _report_single_requirement_conflict). Where that requirement's specifier accepts none of the listed versions, the
    skipped releases were another project's (numpy's 1.21.x before torch==2.0.1), not why it failed: the requirement's
    own hit (no-matching-distribution) names the cause. A requirement without a specifier, or one some listed version
    satisfies, keeps both readings."""
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: only these logs need it
    from packaging.version import InvalidVersion, Version  # lazy: only these logs need it

    ignored = [h for h in hits if h.id == "python-version-unsupported" and "ignored" in h.groups]
    # (pip's requirement read as torch-python-unsupported where its listing or the log names the Python: the same hit)
    asked = [h for h in hits if h.id in ("no-matching-distribution", "torch-python-unsupported")
             and (h.groups.get("req_found") or h.groups.get("req"))]
    if not ignored or not asked:
        return hits
    drop = []
    for h in ignored:
        after = next((a for a in asked if a.line >= h.line), None)
        if after is None:
            continue
        raw = (after.groups.get("req_found") or after.groups.get("req", "")).strip().rstrip(",;")
        try:
            spec = Requirement(raw).specifier
        except InvalidRequirement:
            continue
        versions = []
        for m in _IGNORED_VERSION.finditer(h.groups["ignored"]):
            try:
                versions.append(Version(m.group("v")))
            except InvalidVersion:
                continue
        if str(spec) and versions and not any(spec.contains(v, prereleases=True) for v in versions):
            drop.append(h)
    return [h for h in hits if h not in drop]


def _source_build(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """source-build-failed: the package being built, where the line names it, and the installer."""
    raw = _g(h, "pip_pkg", "step_pkg", "uv_pkg", "poetry_pkg", "pip_pkgs", "pip_failed")
    noted = ""
    if not raw:  # the line names no package: the one the installer's own lines say it was building (or failed to)
        noted = (env.notes.get("build_failed") or env.notes.get("building") or "").strip()
        raw, _, noted_ver = noted.partition("==")
    else:
        noted_ver = ""
    raw = re.split(r"[\s\[=<>!~;@(,`]", raw.strip(), maxsplit=1)[0] if raw.strip() else ""
    pkg = canonicalize(raw) if raw else ""
    ver = _g(h, "uv_ver", "poetry_ver") or noted_ver or (env.version(pkg) if pkg else "")
    tool = ("uv" if h.groups.keys() & {"uv_pkg", "uv_backend"} else "poetry" if "poetry_pkg" in h.groups
            else "the build front end" if "pep517" in h.groups else "pip" if any(k.startswith("pip_") for k in h.groups)
            else "")
    # the package as the log spells it (flash_attn), and its distribution name where that differs (flash-attn)
    what = _shown(raw if raw == pkg else f"{raw} ({pkg})", ver) if pkg else ""
    of = f" of {what} (the package the installer was building)" if noted and what else ""
    if "ext_name" in h.groups or "torch_ext" in h.groups:
        ext = h.groups.get("ext_name", "")
        return (f"torch's cpp_extension build of {('the extension ' + ext) if ext else 'an extension'}{of} failed (ninja "
                "compiles its C++/CUDA sources, then links them): the compiler's first error above this line is why",
                "read the first `error:` of the compile output above and fix that (a header, nvcc, the host compiler, "
                "the CUDA toolkit's release against torch's); set MAX_JOBS=1 to see one compile's output at a time")
    if "cmd" in h.groups or "ninja_out" in h.groups or "ninja_stop" in h.groups or "ld_fail" in h.groups:
        cmd = h.groups.get("cmd", "") or ("the linker" if "ld_fail" in h.groups else "the compiler")
        return (f"a compile step of the build ({cmd}){of} exited with an error, so the package was not built: its own "
                "first error, above this line, is the cause",
                "read the first `error:` above this line and fix that (its own signature is listed where glmcompat "
                "knows it), or install a release with a wheel for this Python and platform instead of building")
    who = f"{tool} built {what} from source" if tool and what else (f"{tool} built a package from source" if tool
                                                                      else "a package was built from source")
    return (f"{who} (no wheel of it fits this Python and platform, or its source was asked for) and the build failed: "
            "the build's own output, above this line, names why (a compiler, header, CUDA toolkit or build dependency it "
            "needs)",
            f"read the build output's first error and fix that, or avoid the build: install a release of "
            f"{pkg or 'the package'} that has a wheel for this Python and platform (`pip download --only-binary=:all: "
            f"--no-deps {pkg or '<package>'}` tells whether one exists)")


def _tooling(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """build-backend-too-old: which piece of the tooling is missing, by the line's words."""
    if h.groups.keys() & {"hook", "hook_old"}:
        return ("pip's editable install (pip install -e) asks the project's build backend for PEP 660's build_editable "
                "hook, and the backend pip installed for the build has none (setuptools before 64, or an old backend the "
                "project's [build-system] requires)",
                "require a backend with the hook (setuptools>=64 in [build-system] requires, then pip install -e . again), "
                "or install without -e")
    if "command" in h.groups:
        return ("`setup.py bdist_wheel` ran with a setuptools that has no bdist_wheel command: the wheel package "
                "provided it until setuptools 70.1, and neither is new enough here",
                "install the build tooling (pip install -U setuptools wheel) in the environment that runs setup.py, or "
                "build through pip (pip wheel .), which installs the project's build requirements")
    if "impimporter" in h.groups:
        return ("Python 3.12 removed pkgutil.ImpImporter, and the pkg_resources of setuptools before 66.1 still uses it "
                "at import: an old setuptools (or pip, which vendors it) pinned in the build environment of a Python 3.12 "
                "or newer",
                "upgrade setuptools and pip in that environment (pip install -U pip setuptools; for pip's isolated "
                "build, raise the project's setuptools pin in [build-system] requires), or build with Python 3.11")
    if "setuptools_min" in h.groups:
        return (f"torch's cpp_extension compares the CUDA toolkit's version with torch's through the build environment's "
                f"setuptools, which is older than it needs ({h.groups['setuptools_min']})",
                "upgrade setuptools where the extension is built (pip install -U setuptools; for pip's isolated build, the "
                "project's [build-system] requires), then build again")
    if "distutils" in h.groups:
        return ("the code being built or imported imports distutils, which this Python lacks: Python 3.12 removed it (PEP "
                "632), and Debian's and Ubuntu's older Pythons ship it apart (python3-distutils); an old setup.py, or a "
                "package release from before 3.12",
                "install setuptools in that environment (it provides a distutils shim: pip install setuptools), or a "
                "release of the package that supports Python 3.12, or run on Python 3.11; on Debian/Ubuntu's Python "
                "before 3.12, apt-get install python3-distutils")
    return None


def _conda_cuda(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """conda-cuda-too-old: the CUDA release the builds need and the driver's, where the report prints them; a __cuda
    that any version would satisfy (libmamba's "__cuda =* *") is a machine without the virtual package at all."""
    lm = _g(h, "lm_cuda_ver", "lm_cuda_list")
    need = (_g(h, "cuda_need") or (re.search(r"[\d.]{2,12}", h.groups.get("cuda_range", "")) or [""])[0]
            or (re.search(r"\d{1,2}(?:\.\d{1,2})?", lm) or [""])[0])
    have = _g(h, "driver_cuda", "mamba_have") or env.cuda.get("driver_cuda", "")
    by = _g(h, "by", "spec", "mamba_by", "mamba_by2")
    if "lm_cuda" in h.groups and not need and not have:
        return ("the CUDA builds requested need the __cuda virtual package, and this machine has none: conda derives "
                "__cuda from the NVIDIA driver's libcuda.so.1, so a login node, a docker build or a container without the "
                "driver (no GPU visible) has no __cuda, and the solver excludes every CUDA build",
                "solve on a node with the GPU and its driver (nvidia-smi works there), or set CONDA_OVERRIDE_CUDA to the "
                "CUDA version the target nodes' driver supports (nvidia-smi's \"CUDA Version\" there, e.g. "
                "CONDA_OVERRIDE_CUDA=12.4) for the solve")
    if not (need or have or by):
        return None
    drv = (f"the driver's CUDA is {have}" if have and have != "0"
           else "the machine's __cuda (the CUDA version its driver supports) is older, or absent (no GPU, no driver, or "
                "a solve on a machine without the GPU)")
    return (f"{by or 'the requested CUDA builds'} need{'s' if by else ''} the __cuda virtual package"
            f"{' at ' + need + ' or newer' if need else ''}, and {drv}: conda's solver excludes every build that needs a "
            "newer driver",
            f"update the NVIDIA driver to one for CUDA {need or 'the release requested'} (nvidia-smi shows the CUDA "
            f"version the driver supports), or request builds for CUDA {have or 'the driver'}'s release or older "
            f"(pytorch-cuda / cuda-version); solving on a machine without the GPU: CONDA_OVERRIDE_CUDA={need or '12.4'} "
            "(the CUDA the target machine's driver supports)")


def _conda_glibc(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """conda-glibc-too-old: the glibc the builds need (the report's __glibc spec) and the machine's, where it prints it
    (classic conda's own __glibc==2.N=0 record)."""
    spec = _g(h, "glibc_need", "glibc_range", "lm_glibc_ver", "lm_glibc_list", "ls_glibc")
    need = (re.search(r"2\.\d{1,3}", spec) or [""])[0]
    have = _g(h, "glibc_have")
    by = _g(h, "by", "spec", "mamba_by", "ls_by")
    if not (need or have or by):
        return None
    return (f"{by or 'the requested builds'} need{'s' if by else ''} the __glibc virtual package"
            f"{' at ' + need + ' or newer' if need else ''}, and the machine's glibc{' is ' + have if have else ' is older'}"
            ": conda derives __glibc from the running C library, and its solver excludes every build made for a newer "
            "glibc",
            f"install builds made for glibc {have or 'the machine has'} (an older release, or a channel whose builds "
            "target glibc 2.17, such as conda-forge's), or run on a distribution with glibc "
            f"{need + ' or newer' if need else 'new enough'} (`ldd --version` shows the machine's); only when solving for "
            f"another machine (an image, the compute nodes) set CONDA_OVERRIDE_GLIBC{'=' + need if need else ''} to that "
            "machine's glibc: on an older glibc the builds fail to load (GLIBC_2.N not found)")


def _cxx_standard(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cxx-standard-unsupported: the dialect, and whether the host compiler or nvcc refused it."""
    std = _g(h, "gcc_std", "nvcc_std")
    torch = _g(h, "torch_std", "torch_std2")
    if torch:
        return (f"torch's headers need C++{torch} (c10/util/C++17.h checks it), and the compiler building the extension "
                f"compiles an older dialect: an old host compiler, or flags that ask for -std=c++14 or older",
                f"build with a compiler that supports C++{torch} (gcc 9 or newer: CC/CXX pointing at it) and drop any "
                f"-std=c++14 from the extension's flags (torch's BuildExtension adds -std=c++{torch})")
    if not std:
        return None
    who = "nvcc" if "nvcc_std" in h.groups else "the host C++ compiler"
    return (f"{who} does not know the dialect -std={std} the build asks for: "
            + ("CUDA 11 added c++17 and CUDA 12 c++20" if who == "nvcc" else "gcc 5 added c++17 and gcc 8 c++20"),
            f"build with a newer {'CUDA toolkit (CUDA_HOME)' if who == 'nvcc' else 'compiler (gcc 9 or newer: CC/CXX)'} "
            f"that accepts -std={std}, or a release of the extension whose build asks for a dialect this one knows")


def _system_lib(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    lib = _g(h, "library", "libgcc")
    if not lib:
        return None
    base = lib.split(".so", 1)[0]
    apt = {"libGL": "libgl1", "libEGL": "libegl1", "libgthread-2": "libglib2.0-0", "libglib-2": "libglib2.0-0",
           "libgomp": "libgomp1", "libgcc_s": "libgcc-s1", "libSM": "libsm6", "libXext": "libxext6",
           "libXrender": "libxrender1", "libsndfile": "libsndfile1", "libaio": "libaio1", "libnuma": "libnuma1",
           "libibverbs": "libibverbs1", "libatomic": "libatomic1", "libopenblas": "libopenblas0"}.get(base, "")
    old_ssl = base in ("libssl", "libcrypto") and lib.endswith(".so.1.1")
    return (f"a compiled module links {lib}, which this machine (or image) does not have: manylinux wheels assume the "
            "base system's libraries, and a slim image lacks them"
            + (" (OpenSSL 1.1, which distributions since 2022 replace with OpenSSL 3)" if old_ssl else ""),
            (f"install it: apt-get install {apt} (Debian/Ubuntu)" if apt else
             f"install the system package that provides {lib} (`apt-file search {lib}` or `dnf provides '*/{lib}'`)")
            + ("; for OpenCV, its headless wheel needs no libGL" if base == "libGL" else "")
            + ("; or a release of the package built against OpenSSL 3" if old_ssl else ""))


def _link_lib(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    lib = _g(h, "link_lib")
    if not lib:
        return None
    if lib == "cuda":  # the driver's library: a build links the toolkit's stub of it (libcuda_of_a_build)
        out = _g(h, "link_out")
        of = f" of {out}" if out else ""
        return (f"the link{of} asks for -lcuda (libcuda.so, the CUDA driver API library) and the linker finds it in none "
                "of its directories: the NVIDIA driver installs only libcuda.so.1, and a build links against the CUDA "
                "toolkit's stub, lib64/stubs/libcuda.so (the toolkit's driver-dev component), which is not in the -L "
                "directories the build passes (a CUDA_HOME without it, such as a conda environment with only the runtime)",
                "point the linker at the toolkit's stubs directory (export LIBRARY_PATH=$CUDA_HOME/lib64/stubs, or "
                "-L$CUDA_HOME/lib64/stubs; /usr/local/cuda/lib64/stubs for a system toolkit), or install the component "
                "that has it (a full CUDA toolkit; in a conda environment, conda install cuda-driver-dev of the "
                "environment's CUDA release, lib/stubs/libcuda.so); link only: never put the stubs directory on "
                "LD_LIBRARY_PATH at run time, where the driver's libcuda.so.1 must load")
    cuda = lib.startswith(("cu", "nv", "nccl"))
    return (f"the extension's link asks for -l{lib} (lib{lib}.so) and the linker finds it in none of its directories"
            + (": the CUDA toolkit's library directory (or that component) is not where the linker looks" if cuda
               else ": the library's development files are not installed"),
            (f"point the linker at the toolkit's libraries (LIBRARY_PATH=$CUDA_HOME/lib64, or install the toolkit "
             f"component that has lib{lib}.so)" if cuda else
             f"install lib{lib}'s development package (the -dev / -devel package that has lib{lib}.so), or add its "
             "directory to LIBRARY_PATH"))


def _elf_class(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    lib, bits = _g(h, "library"), _g(h, "bits")
    if not bits:
        return None
    other = "64" if bits == "32" else "32"
    what = lib or "a library"
    return (f"{what} is a {bits}-bit build (ELFCLASS{bits}) and the process loading it is {other}-bit: the loader found "
            "that file first on its path",
            f"make the {other}-bit library be found: remove {what.rsplit('/', 1)[0] if '/' in what else 'its directory'} "
            f"from LD_LIBRARY_PATH, or install the {other}-bit package; `file {what}` shows its class")


def _of_library(cause: str, remedy: str) -> Callable[[Hit, Env, Facts], tuple[str, str] | None]:
    """A builder whose cause and remedy name the library the line names (``{lib}``; ``{base}``: its file name)."""
    def build(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        lib = _g(h, "library")
        if not lib:
            return None
        return cause.format(lib=lib), remedy.format(lib=lib, base=lib.rsplit("/", 1)[-1])
    return build


# elf-invalid
_elf_invalid = _of_library(
    "{lib} is no ELF object for Linux: a Git LFS pointer or an HTML page saved under the library's name, a download "
    "cut short, a macOS or Windows binary, or a linker script",
    "reinstall the package that ships {base} (pip install --force-reinstall --no-deps <package>), then check the file: "
    "`file {lib}` should say ELF 64-bit LSB shared object; for a repository's binary, fetch its LFS objects (git lfs "
    "pull)")
# static-tls-exhausted
_tls = _of_library(
    "{lib} uses initial-exec thread-local storage and was loaded late (dlopen), after glibc had handed out its static "
    "TLS reserve to the libraries loaded before it",
    "preload it: LD_PRELOAD={lib} python ..., or import the package that brings it first; glibc 2.32+: "
    "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384")
# execstack-refused
_execstack = _of_library(
    "{lib} is marked as needing an executable stack, and glibc 2.41 and newer refuse to load such a library with "
    "dlopen (older glibc made the stack executable)",
    "clear the mark on that file (execstack -c {lib}, or patchelf --clear-execstack {lib}), or install a release built "
    "without it, or allow it: GLIBC_TUNABLES=glibc.rtld.execstack=2")


def _musl(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    by = _g(h, "by", "reloc_by")
    need = _g(h, "musl_lib") or (h.groups.get("musl_sym", "") + " (a glibc symbol)" if h.groups.get("musl_sym") else "")
    if not by:
        return None
    glibc = bool(re.match(r"ld-linux|lib(?:c|m|dl|pthread|rt)\.so\.6", need)) or "musl_sym" in h.groups
    if not glibc:
        return (f"musl's loader found no {need}, which {by} needs: that library is not installed on this musl "
                "(Alpine) system",
                f"install the Alpine package that provides {need} (apk search), or run on a glibc-based image")
    return (f"{by} is built for glibc (a manylinux build) and this system's C library is musl (Alpine): it needs {need}, "
            "which musl does not provide",
            "run on a glibc-based image (python:3.X-slim, Debian, Ubuntu); the GPU stack publishes no musllinux wheels")


# --- the phrasings of other tools for causes signatures.toml names: their own wording, then the row's builder ----------

def _no_dist(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    pkg = _g(h, "poetry_pkg", "pdm_pkg")
    missing = _g(h, "poetry_nf_pkg", "poetry_nf_name")
    if missing:  # poetry's PackageNotFoundError (src/poetry/repositories/repository.py, pypi_repository.py)
        if not _stack([_name(missing)], facts):
            return None
        ver = _g(h, "poetry_nf_ver")
        return (f"poetry found no {_shown(missing, ver)} in the sources it reads"
                + (" (no release of that version, or none built for this Python and platform)" if ver else
                   " (the source does not serve the project: a PyTorch or vendor index without it, or a mistyped name)"),
                f"add the source that serves {missing} ([[tool.poetry.source]], e.g. PyTorch's index for a +cuXYZ build, "
                f"with `source = ...` on the dependency), or pin a version the source has; then poetry lock")
    if not pkg:
        return INSTALL_BUILDERS["no-matching-distribution"](h, env, facts)
    if not _stack([_name(pkg)], facts):
        return None
    tool, ver = ("poetry", h.groups.get("poetry_ver", "")) if "poetry_pkg" in h.groups else ("pdm", "")
    return (f"{tool} found {_shown(pkg, ver)} but none of its files fits this machine: no wheel for this Python version, "
            "platform or CPU (and no source distribution), or the lock's hashes name files the index no longer serves",
            f"pin a release of {pkg} that publishes a wheel for this Python and platform (the index's page lists its "
            f"files; {tool} lock after the change), or mark it for the platforms it has wheels for (a markers "
            f"constraint); for torch's CUDA builds, add PyTorch's own index as a source")


def _wheel(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    wheel = _g(h, "poetry_wheel", "pdm_url")
    if not wheel:
        return INSTALL_BUILDERS["wheel-not-supported"](h, env, facts)
    wheel = wheel.rsplit("/", 1)[-1].replace("%2B", "+").replace("%2b", "+")
    got = INSTALL_BUILDERS["wheel-not-supported"](Hit(h.id, h.cause, h.remedy, h.text, h.line, h.count,
                                                      {"wheel": wheel}, h.source, h.package, h.version), env, facts)
    if got is None:
        return None
    tool = "poetry" if "poetry_wheel" in h.groups else "pdm"
    return got[0].replace("pip refused", f"{tool} refused", 1).replace("runs pip", f"runs {tool}"), got[1].replace(
        "run pip with", f"run {tool} with").replace(" (pip picks", f" ({tool} picks")


def _resolution(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    text = _g(h, "poetry_because", "poetry_dep", "pdm_pkg", "uv_url_pkg", "uv_dep").rstrip(". ")
    if not text:
        if "too_deep" in h.groups:
            return ("pip's resolver gave up: the requirements leave it so many candidate versions to try (packages "
                    "without lower bounds) that it passed its limit of rounds",
                    "give the packages pip backtracks over lower bounds (pkg>=X in place of pkg), or resolve with uv "
                    "(uv pip install), which explains a conflict where there is one")
        return INSTALL_BUILDERS["pip-resolution-impossible"](h, env, facts)
    names = [canonicalize(w) for w in re.findall(r"[A-Za-z][\w.-]{0,60}", text)]
    stack = _stack(names, facts)
    if not stack:
        return None
    if "uv_url_pkg" in h.groups:
        return (f"the requirements give {text} from two different URLs (or indexes), and uv installs one file per "
                "package: it cannot pick",
                f"name {text} once, from one URL or index (one [[tool.uv.index]] with its source pinned in "
                "[tool.uv.sources]), and drop the other requirement")
    if "uv_dep" in h.groups:
        return (f"uv found no set of versions that satisfies every requirement at once: because {text}, so nothing was "
                "installed",
                f"change the requirement uv's derivation ends with ({', '.join(stack[:3])}) to a version both accept; "
                "`uv pip install --dry-run` with the new pin checks it")
    tool = "poetry" if "poetry_because" in h.groups or "poetry_dep" in h.groups else "pdm"
    return (f"{tool} found no set of versions that satisfies every requirement at once"
            + (f": because {text}" if tool == "poetry" else f" (for {text})") + ", so nothing was installed",
            f"change the requirement the explanation names ({', '.join(stack[:3])}) to a version every dependant "
            f"accepts, and check it with {tool} lock; where a torch build is named by a local label (+cu121), add "
            "PyTorch's index as a source for it")


def _gcc_program(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """build-tool-missing where gcc's (or clang's) driver cannot run a program of its own: the program and the package
    that installs it."""
    prog = _g(h, "gcc_prog", "gcc_prog2", "gcc_ld")
    clang = h.groups.get("clang_prog", "")
    if not prog and not clang:
        return None
    if clang:
        prog = clang.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".exe")
    what, apt, dnf = facts.gcc_program(prog) or ("a program of the toolchain", "build-essential", "gcc")  # [[gcc_program]]
    driver = h.groups.get("gcc_driver", "") or h.groups.get("clang_driver", "") or ("gcc" if not clang else "clang")
    ver = re.search(r"-(\d{1,2})[.\d]{0,6}(?:\.exe)?$", driver)  # gcc-12: its own versioned packages
    if ver and apt in ("gcc", "g++", "gfortran", "gobjc", "gobjc++", "gnat", "gccgo", "gdc"):
        apt = f"{apt}-{ver.group(1)}"
    who = f"the build of {_shown(h.package, env.version(h.package))}" if h.package else "the build"
    said = f"{driver} cannot run {prog}" + (f" ({clang})" if clang and clang != prog else "")
    return (f"{who} compiles with {driver}, and {said}, {what}: it is not installed ({apt} provides it; "
            + ("a gcc without g++ has no cc1plus, so C++ sources (and nvcc's host code) cannot be compiled)"
               if prog == "cc1plus" else "the compiler driver alone does not bring it)"),
            f"install {apt} where the build runs (apt-get install {apt}, or build-essential; dnf install {dnf}; "
            "conda install -c conda-forge " + ("binutils" if apt == "binutils" else "cxx-compiler") + "), then build again")


def _build_tool(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    if (got := _gcc_program(h, env, facts)) is not None:
        return got
    tool = _g(h, "compiler", "exec_compiler", "vc_compiler")
    if not tool and "msvc" not in h.groups:
        return INSTALL_BUILDERS["build-tool-missing"](h, env, facts)
    if "vc_compiler" in h.groups and tool.rsplit("\\", 1)[-1].lower() in ("cl", "cl.exe"):
        return ("torch's cpp_extension runs the compiler cl (MSVC) to check its version before building the extension, "
                "and cannot run it: the Microsoft C++ Build Tools are not installed, or the shell is no Visual Studio "
                "developer prompt (cl.exe not on PATH)",
                "build from an \"x64 Native Tools Command Prompt for VS\" (or run vcvars64.bat first), after installing "
                "the Microsoft C++ Build Tools (the \"Desktop development with C++\" workload)")
    if "vc_compiler" in h.groups:
        return (f"torch's cpp_extension runs the compiler {tool} (CXX, else c++) to check its version before building the "
                "extension, and cannot run it: no C++ compiler is installed, or CXX names one that is not on PATH",
                "install a C++ compiler where the build runs (apt-get install g++ / build-essential, dnf install gcc-c++, "
                "conda install -c conda-forge cxx-compiler) or point CXX at one, then build again")
    if "msvc" in h.groups:
        ver = h.groups.get("msvc_ver", "")
        said = (f"\"Microsoft Visual C++ {ver}{' or greater' if 'msvc_greater' in h.groups else ''} is required\""
                if ver else "\"Unable to find vcvarsall.bat\"")
        who = f"the build of {_shown(h.package, env.version(h.package))}" if h.package else "the build"
        if ver.startswith("9."):  # Python 2.7's compiler (setuptools' msvc.py: version 9.0, aka.ms/vcpython27)
            return (f"{who} compiles C/C++ sources on Windows for Python 2.7, and setuptools finds no Microsoft Visual "
                    f"C++ {ver} compiler: {said}",
                    "install the Microsoft Visual C++ Compiler for Python 2.7, or a release with a Windows wheel for this "
                    "Python (or a Python 3 that has one)")
        return (f"{who} compiles C/C++ sources on Windows, and setuptools finds no Microsoft C++ compiler: {said} (the "
                f"Microsoft C++ Build Tools, MSVC {ver or '14.0'} or greater, and their vcvarsall.bat are not installed)",
                "install the Microsoft C++ Build Tools (the \"Desktop development with C++\" workload), then build again "
                "in a new shell, or install a release with a Windows wheel for this Python")
    nvcc = tool.rsplit("/", 1)[-1] == "nvcc"
    return (f"the build runs {tool}, which is not installed or not on PATH"
            + (": the CUDA toolkit's nvcc (CUDA_HOME/bin)" if nvcc else ": no C/C++ compiler in this environment"),
            ("install the CUDA toolkit and point CUDA_HOME at it (its bin/nvcc), or a release with a wheel" if nvcc else
             "install a compiler where the build runs (apt-get install build-essential, dnf install gcc-c++, conda "
             "install -c conda-forge cxx-compiler), or a release with a wheel for this Python and platform"))


def _conda_build(text: str) -> tuple[str, str]:
    """(name, version) of a conda build as libsolv prints it (``pytorch-2.5.1-py3.11_cuda12.4_cudnn9.1.0_0``), or of a
    spec (``pytorch-cuda >=12.4,<12.5``, ``pytorch 2.5.1**``); the name as the matrix knows it (conda's pytorch: torch)."""
    text = text.strip()
    parts = text.split(" ", 1) if " " in text else text.rsplit("-", 2)
    name = parts[0] if len(parts) > 1 else text
    ver = parts[1].strip(" *=") if len(parts) > 1 else ""
    return name, ver


def _conda_stack(names: list[str], facts: Facts) -> list[str]:
    """The names among conda's ``names`` that are the stack's (conda's own names read as the matrix's: the readers'
    table of them, glmcompat.readers.formats.conda), and conda's CUDA packages."""
    from glmcompat.readers.formats.conda import _CONDA_NAMES, _CUDA_PACKAGES  # lazy: only conda's reports need it

    return [n for n in names if n in _CUDA_PACKAGES or _stack([_CONDA_NAMES.get(_name(n), _name(n))], facts)]


def _libsolv(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """conda-unsatisfiable from libsolv's problem rules (src/problems.c solver_problemruleinfo2str, as conda's libmamba
    solver and mamba print them) and libmamba's explained tree (libmamba/src/solver/problems_graph.cpp): the builds they
    name; None where none is the stack's (a system package manager's libsolv report)."""
    g = h.groups
    solver = "conda's libmamba solver" if "lm_pkg" in g else "conda's solver (libsolv)"
    if "ls_pkg" in g:
        (name, ver), dep = _conda_build(g["ls_pkg"]), g.get("ls_dep", "").strip()
        dname = _conda_build(dep)[0]
        stack = _conda_stack([name, dname], facts)
        if not stack:
            return None
        return (f"{solver} cannot install {name} {ver}: it requires {dep}, and no build that provides {dep} can be "
                "installed next to the rest (the environment's python, the other packages requested, what the channels "
                "read publish), so it installed nothing",
                f"relax the pin that narrows {dname} or {name} (request a {name} build whose {dname} requirement the "
                f"channels meet: `conda search '{name}' --info` lists each build's dependencies), or install into a fresh "
                "environment (conda create -n <name> python=3.X <packages>); `conda install --dry-run` checks it")
    if "ls_both" in g:
        (a, av), (b, bv) = _conda_build(g["ls_both"]), _conda_build(g.get("ls_both2", ""))
        if not _conda_stack([a, b], facts):
            return None
        return (f"{solver} was asked for two builds of one package, {g['ls_both'].strip()} and "
                f"{g.get('ls_both2', '').strip()} (two requested specs, or one requested and one the environment holds "
                f"or another package pins), and only one {a} can be installed",
                f"request one {a} version ({av} or {bv}): drop the other pin, or the package that pins it, or install into "
                "a fresh environment")
    if "ls_cpkg" in g:
        (a, av), (b, _) = _conda_build(g["ls_cpkg"]), _conda_build(g.get("ls_ctarget", ""))
        if not _conda_stack([a, b, _conda_build(g.get("ls_cdep", ""))[0]], facts):
            return None
        return (f"{solver} cannot install {a} {av} with {g.get('ls_ctarget', '').strip()}: {a} declares a conflict (or a "
                f"constraint) with {g.get('ls_cdep', '').strip()}, which that build provides",
                f"request builds of {a} and {b} that accept each other (relax one of the pins), or install into a fresh "
                "environment")
    name, ver, why = g.get("lm_pkg", ""), g.get("lm_ver", "").strip("*=").rstrip("*"), g.get("lm_why", "")
    if name != "python" and not _conda_stack([name], facts):
        return None
    what = ("it requires packages (the lines under it) that cannot be installed with the rest" if "requires" in why else
            "no build of it fits the rest (the environment's python, the platform, the channels read)" if "viable" in why
            else "it conflicts with the versions the report lists above it")
    return (f"{solver} cannot install {name} {ver}: {what}, so it installed nothing",
            f"relax the pin on {name} (or the one it conflicts with, named above it) to a version the channels publish for "
            "this environment, or install into a fresh environment (conda create -n <name> python=3.X <packages>); "
            "`conda install --dry-run` checks it")


def _conda_missing(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """conda-package-not-found with the package the report names (libmamba's "does not exist", libsolv's
    "nothing provides requested", "package ... does not exist")."""
    spec = _g(h, "lm_missing", "requested", "ls_absent")
    if not spec:
        return None
    name, ver = _conda_build(spec if "lm_missing" not in h.groups else f"{spec} {_g(h, 'lm_missing_spec')}")
    shown = f"{name} {ver}".strip()
    return (f"conda found no {shown} in the channels it read, for this platform (linux-64, linux-aarch64, osx-arm64): "
            "the package is published on another channel, or not for this platform, or not at that version",
            f"name the channel that publishes {name} (conda install -c conda-forge '{spec.strip()}', or the vendor's "
            f"channel), or pick a version published for this platform (`conda search -c <channel> '{name}'` lists them)")


_CONDA_TARGET = re.compile(r" -> (?P<pkg>[A-Za-z0-9_][\w.-]{0,80})\[version='(?P<spec>[^'\n]{1,200})'\]$")
_CONDA_SPEC = re.compile(r"(?P<pkg>[A-Za-z0-9_][\w.-]{0,80}?)(?P<op>==?|>=|<=|[<>])(?P<ver>\d[\w.*]{0,40})$")


def _conda_chained(names: list[str], env: Env) -> tuple[str, str] | None:
    """conda-unsatisfiable from the chains of conda's conflict report (conda 4.7-4.14 conda/exceptions.py
    UnsatisfiableError, class "direct": " -> ".join of each chain's MatchSpecs, a range printed as
    "<name>[version='<spec>']", the user's own request as its bare spec, "cudatoolkit=10.0"), kept in the notes'
    "conda_chains" and "conda_requests": for the first of ``names`` a chain ends in whose range a user's spec (or another
    chain's range) falls outside of, the range the chain needs and what the other chains or the user's spec ask for;
    None where no chain names one of them so."""
    chains = [c for c in env.notes.get("conda_chains", "").split("; ") if c]
    requests = [_CONDA_SPEC.match(r) for r in env.notes.get("conda_requests", "").split(", ") if r]
    for name in names:
        ends = [(c, m.group("spec")) for c in chains if (m := _CONDA_TARGET.search(c)) is not None and m.group("pkg") == name]
        if not ends:
            continue
        asked = [f"{m.group('pkg')}{m.group('op')}{m.group('ver')}" for m in requests if m is not None and m.group("pkg") == name]
        specs = list(dict.fromkeys(spec for _, spec in ends))
        if not asked and len(specs) < 2:
            continue  # no version the chains disagree on: the report's packages tell it (the caller's reading)
        needs = "; ".join(f"{c.split(' -> ', 1)[0].split('[', 1)[0]} needs {name} {spec}" for c, spec in
                          dict.fromkeys((c, spec) for c, spec in ends))
        against = (f"and {' and '.join(asked)} is requested, outside {'that range' if len(specs) == 1 else 'those ranges'}"
                   if asked else "and the other chains for it ask for versions outside that range")
        low = re.search(r">=\s{0,2}(\d[\w.]{0,40})", specs[0])
        want = f"{name}={low.group(1)}" if low else f"{name}[version='{specs[0]}']"
        return (f"conda's solver found no set of builds for the packages requested: its conflict report for {name} shows "
                f"{needs} (the chain {min((c for c, _ in ends), key=len)}), {against}, so it installed nothing",
                f"request {name} in the range the chain needs ({want}, within {specs[0]}), or drop that pin and let "
                f"conda pick {name} for the packages that need it, or request builds of those packages made for the "
                f"{name} you pinned; `conda install --dry-run` checks it")
    return None


# libsolv's problem rules of a package itself (src/problems.c solver_problemruleinfo2str): why the build cannot be taken,
# and what lets the solve take it
_EXCLUDED = {
    "is excluded by strict repo priority": (
        "strict channel priority excludes it: a channel listed before the one that publishes this build also publishes "
        "{name}, and with channel_priority strict conda takes {name} only from that first channel, whose builds do not "
        "fit the rest",
        "let the solve take {name} {ver} from its channel: conda config --set channel_priority flexible (or, for one "
        "command, CONDA_CHANNEL_PRIORITY=flexible conda env create -f environment.yml), or list that channel first "
        "(the order of -c flags, or of channels: in environment.yml), or request a {name} version the first channel "
        "publishes"),
    "is not installable": (
        "libsolv marks that build not installable (a requirement of its own that nothing can meet, or a constraint that "
        "excludes it)",
        "request another {name} version (`conda search '{name}'` lists the builds the channels publish for this "
        "platform), or relax the pin that names {name} {ver}"),
    "does not have a compatible architecture": (
        "that build is for another architecture than this platform's",
        "request a {name} build for this platform (`conda search '{name}' --platform <subdir>` lists them), or run on "
        "the platform the build is for"),
    "is disabled": (
        "that build is disabled in the solve (filtered out: a channel's or the user's exclusion)",
        "request another {name} build, or lift the exclusion that disables {name} {ver}"),
    "can only be installed by a direct request": (
        "that build can only be installed when requested by name, not pulled in as another package's dependency",
        "request {name} {ver} directly (name it in the install command or environment file)"),
}


def _excluded(build: str, why: str, head: bool, facts: Facts) -> tuple[str, str] | None:
    """conda-unsatisfiable of libsolv's problem rule of a build itself ("package python-3.7.13-haa1d7c7_1 is excluded by
    strict repo priority"): the build's package and version, and what lets the solve take it; None where the package is
    neither python nor the stack's (a system package manager's libsolv report)."""
    name, ver = _conda_build(build)
    if name != "python" and not _conda_stack([name], facts):
        return None
    cause, fix = _EXCLUDED.get(why.strip(), _EXCLUDED["is not installable"])
    solver = "conda's libmamba solver" if head else "conda's solver (libsolv)"
    return (f"{solver} cannot install {name} {ver} (the build {build.strip()}): " + cause.format(name=name, ver=ver)
            + ", so it installed nothing", fix.format(name=name, ver=ver))


def _conda(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    if any(k in h.groups for k in ("ls_pkg", "ls_both", "ls_cpkg", "lm_pkg")):
        return _libsolv(h, env, facts)
    if "solver" in h.groups and (noted := env.notes.get("conda_excluded", "")) and "conda_other_problem" not in env.notes:
        # the report's head with libsolv's problem of a build itself below it (the first the log shows) and no problem
        # of another rule beside it (that one, where there, is the cause: this a notice of the channels' order)
        build, _, why = noted.partition(" ")
        if (read := _excluded(build, why, h.groups["solver"].startswith("LibMamba"), facts)) is not None:
            return read
    need, by = _g(h, "np_need"), _g(h, "np_by")
    if need:
        return (f"conda's solver found no build that provides {need}, which {by} needs, on the channels it read, so "
                "it installed nothing",
                f"add the channel that publishes {need.split(' ', 1)[0]} (-c conda-forge, -c nvidia), or request a "
                f"version of {by.rsplit('-', 2)[0]} whose dependencies the channels provide")
    if "mamba_head" in h.groups:
        return None  # the report's head: its lines below name the cause (their own signatures)
    conflicts = [c for c in env.notes.get("conda_conflicts", "").split(", ") if c] or [_g(h, "conflict_pkg")]
    conflicts = [c for c in conflicts if c] or [_g(h, "cc_pkg")]
    conflicts = [c for c in conflicts if c]
    if "cc_pkg" in h.groups and "conda_conflicts" not in env.notes and not _conda_stack(
            [_g(h, "cc_pkg")] + [c.split(" -> ", 1)[0].split("[", 1)[0] for c in env.notes.get("conda_chains", "").split("; ")],
            facts):
        return None  # chains without their head, of packages none of which is the stack's
    tracked_chains = [c for c in conflicts if _conda_stack([c], facts)]
    if (chained := _conda_chained(tracked_chains or conflicts, env)) is not None:
        return chained
    if conflicts:  # the classic solver's "Package <name> conflicts for:" blocks (conda/exceptions.py, class "direct")
        tracked = set(_stack([_name(c) for c in conflicts], facts))
        first = next((c for c in conflicts if _name(c) in tracked), conflicts[-1])
        shown = ", ".join(conflicts[:6]) + (f" and {len(conflicts) - 6} more" if len(conflicts) > 6 else "")
        return (f"conda's solver found no set of builds for the packages requested: it lists conflicts for {shown}, each "
                "asked for by two chains of requirements (the requested specs, the environment's python, what they "
                f"depend on) whose versions do not meet; for {first}, the versions one chain accepts are not among "
                "those the other can take, so it installed nothing",
                f"make the chains under \"Package {first} conflicts for:\" meet: drop or relax the pin that narrows "
                f"{first} (a version or a companion pinned to a release the channels do not pair with it), or install "
                "into a fresh environment (conda create -n <name> python=3.X <packages>) whose python the builds "
                "support; `conda install --dry-run` checks it")
    return INSTALL_BUILDERS["conda-unsatisfiable"](h, env, facts)



def _cmake_cuda_floor(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """torch-cmake-cuda-too-old: the floor torch's CMake config names (CUDA, or cuDNN), and the toolkit the log shows."""
    need, cudnn = _g(h, "need"), _g(h, "cudnn_need")
    if not (need or cudnn):
        return None
    what = f"CUDA {need}" if need else f"cuDNN {cudnn}"
    have = env.cuda.get("nvcc", "")
    return (f"the torch (libtorch) being built against needs {what} or newer, and the "
            f"{'CUDA toolkit' if need else 'cuDNN'} CMake found is older{f' (nvcc {have})' if have and need else ''}: "
            "its CMake config (Caffe2/public/cuda.cmake) refuses it",
            f"point CMake at a {'CUDA toolkit' if need else 'cuDNN'} of {what} or newer, best the libtorch's own CUDA "
            "release (torch.version.cuda; CUDA_HOME / -DCUDAToolkit_ROOT and CMAKE_CUDA_COMPILER), or build against an "
            "older libtorch whose floor the installed toolkit meets")


def _toolkits_mixed(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """cuda-toolkit-versions-conflict: the nvcc release and where its headers are, as torch's CMake config prints them."""
    nvcc = _g(h, "nvcc_version") or next(iter(h.also.get("nvcc_version", ())), "").strip()
    where = _g(h, "nvcc_include") or next(iter(h.also.get("nvcc_include", ())), "").strip()
    findcuda = _g(h, "findcuda")
    if "cccl_ctk" in h.groups:  # CCCL's check: nvcc's release against the CUDART_VERSION of the headers it includes
        return ("the build mixes two CUDA releases: the nvcc that compiles is of one release and the CUDA toolkit headers "
                "it includes (cuda_runtime_api.h's CUDART_VERSION) of another, and CCCL (cuda/std/__cccl/cuda_toolkit.h) "
                "refuses the pair: a pip nvidia-cuda-nvcc wheel's nvcc with a system toolkit's headers or the "
                "nvidia-cuda-runtime wheel's (pip installs those wheels at independent versions), or one toolkit's nvcc "
                "with another's include directory (CUDA_HOME, -I, CPATH)",
                "compile with the nvcc and headers of one CUDA release: point CUDA_HOME and PATH at one toolkit (its nvcc "
                "and its include directory), or align the pip wheels (nvidia-cuda-nvcc, nvidia-cuda-runtime, "
                "and the headers' nvidia-cuda-* wheels at one release: `pip list | grep nvidia-cuda` shows them), and "
                "clear the JIT's build cache that holds the old include paths")
    if "ccver_hdr" in h.groups:  # an nvcc before 9.0 (__CUDACC_VER__ on its command line) on CUDA 9+ headers
        header = h.groups["ccver_hdr"].replace("\\", "/")
        root = header.split("/include/", 1)[0] if "/include/" in header else ""
        release = re.search(r"cuda-(\d{1,2}\.\d{1,2})(?:/|$)", root)
        headers = (f"the CUDA {release.group(1)} toolkit's ({root})" if release
                   else f"a CUDA 9.0 or later toolkit's ({root})" if root else "a CUDA 9.0 or later toolkit's")
        return ("the build mixes two CUDA toolkits: the nvcc that compiles is older than CUDA 9.0 (nvcc before 9.0 "
                f"defines __CUDACC_VER__ on its command line) and the CUDA headers it includes are {headers}, which "
                "define __CUDACC_VER__ themselves (CUDA 9.0 on), hence the warning that it is redefined; the old nvcc's "
                "front end then fails "
                "on the newer headers (parse errors inside CUDA's or torch's headers): an older toolkit's nvcc comes first "
                "on PATH while CUDA_HOME (or the include path) points at the newer toolkit",
                f"use one toolkit for every part: put {root or 'the toolkit CUDA_HOME points at'}/bin first on PATH "
                "(export PATH=$CUDA_HOME/bin:$PATH; `which nvcc` and `nvcc --version` must show that toolkit's release) or "
                "point CUDA_HOME at the toolkit of the nvcc on PATH, then rebuild from a clean build directory")
    if not (nvcc or findcuda):
        return None
    first = (f"the CUDA compiler is V{nvcc} (headers in {where})" if nvcc
             else f"FindCUDA's nvcc says CUDA {findcuda}")
    return (f"the build mixes two CUDA toolkits: {first}, and the CUDA toolkit whose headers and libraries CMake found "
            "(CUDA_HOME / CUDAToolkit_ROOT) is another release; torch's CMake config refuses the mismatch",
            "use one toolkit for every part: point CUDA_HOME, PATH (its bin first) and CMAKE_CUDA_COMPILER / CUDACXX at "
            "the same toolkit, remove the other toolkit's bin from PATH, and re-run CMake from a clean build directory")

def _torch_build_off(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """torch-cmake-cuda-not-found and torch-without-cudnn as torch's own CMake says them while building torch from source
    (cmake/Dependencies.cmake turning USE_CUDA or cuDNN off): the torch being built, not a libtorch being built against."""
    if "torch_build" in h.groups:
        return ("this torch source build asked for CUDA (USE_CUDA) and its CMake found no CUDA toolkit (no nvcc on PATH, "
                "CUDA_HOME / CUDAToolkit_ROOT unset or wrong), so it turned USE_CUDA off: the torch it builds is CPU-only "
                "(torch.cuda.is_available() False, torch.version.cuda None)",
                "install a CUDA toolkit and point the build at it (export CUDA_HOME=/usr/local/cuda-X.Y, "
                "PATH=$CUDA_HOME/bin:$PATH, or CMAKE_CUDA_COMPILER=$CUDA_HOME/bin/nvcc), remove the build directory "
                "(CMake caches what it found) and build again; or install a CUDA wheel of torch instead of building")
    if "cmake_cudnn" in h.groups:
        return ("this torch source build asked for cuDNN (USE_CUDNN) and its CMake found none (no cudnn.h / libcudnn where "
                "it looks), so it builds torch without cuDNN: torch.backends.cudnn.is_available() is False in the result",
                "install cuDNN for the toolkit (the nvidia-cudnn wheel, a conda cudnn, or NVIDIA's archive) and point the "
                "build at it (CUDNN_ROOT, or CUDNN_INCLUDE_DIR and CUDNN_LIB_DIR), remove the build directory and build "
                "again until it no longer says \"CuDNN not found\"; or install a CUDA wheel of torch, which links cuDNN")
    return None


# --- a source build asking for a GPU (issue 38, fix-n: glmcompat/matrix/data/build-device-signatures.toml) -----------

# what shows a source build running in the log (the notes glmcompat.model.signatures reads): Spack's build phase, a
# setup.py build or install command, a setup.py frame, pip's failed build, torch's cpp_extension choosing architectures
BUILD_SHOWN = ("spack_phase", "setup_cmd", "setup_frame", "build_failed", "arch_query")
# torch's words of a machine without a usable GPU that its device query raises (cuda-not-available's "No CUDA GPUs are
# available", driver-not-found's "Found no NVIDIA driver"): build-needs-cuda-device where cpp_extension asked
DEVICE_QUERY = {"cuda-not-available": "No CUDA GPUs are available", "driver-not-found": "Found no NVIDIA driver"}


def _built(h: Hit, env: Env) -> tuple[str, str]:
    """(the package the build is of, Spack's package name where Spack builds it): Spack's phase line names its package
    (py-torchvision: the Python distribution torchvision), pip's its failed build; "" where the log names none."""
    spack = env.notes.get("spack_phase", "")
    if spack:
        return canonicalize(spack.removeprefix("py-")), spack
    raw = env.notes.get("build_failed") or env.notes.get("building") or ""
    return (_name(raw) if raw else h.package if h.package and h.package != "torch" else ""), ""


def built_package(h: Hit, env: Env) -> str:
    """The package a build that asks for a GPU is of (build-needs-cuda-device's package), or ""."""
    return _built(h, env)[0]


def _needs_device(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """build-needs-cuda-device: a build that asks torch for the GPU to compile for on a machine without one. None where
    the log shows no build (the runtime's "no CUDA-capable device" of a program: no packaging failure), or an IndexError
    whose traceback does not end in cpp_extension's _get_cuda_arch_flags."""
    g = h.groups
    if "nd_index" in g:
        if g.get("frame_func") != "_get_cuda_arch_flags":
            return None
        how = ("torch's cpp_extension (torch 1.8 and later) takes the architectures from the GPUs it sees, found none, "
               "and fails on the empty list (IndexError in _get_cuda_arch_flags)")
    else:
        if not any(k in env.notes for k in BUILD_SHOWN):
            return None
        no = ("no NVIDIA driver" if "driver" in g.get("nd_query", "") else "no CUDA-capable device")
        how = (f"torch's device query (torch.cuda.get_device_capability(), which torch's cpp_extension up to torch 1.7 "
               f"calls for the architectures) found {no}")
    pkg, spack = _built(h, env)
    who = f"the build of {pkg}" if pkg else "the source build"
    cause = (f"{who} asks torch for the GPU to compile its CUDA code for (with TORCH_CUDA_ARCH_LIST unset), and the "
             f"machine the build runs on has none visible (a login or build node, a docker build, a sandbox): {how}")
    arch = ("export TORCH_CUDA_ARCH_LIST with the compute capabilities of the GPUs it will run on (e.g. "
            "\"7.0;7.5;8.0;8.6+PTX\") and FORCE_CUDA=1 (where its setup.py builds the CUDA part only when torch sees a "
            "GPU) before the build, so that it asks no GPU")
    if spack:
        return cause, (f"{arch}; with Spack, use a release whose {spack} recipe passes py-torch's cuda_arch variant on as "
                       f"TORCH_CUDA_ARCH_LIST (spack install {spack} ^py-torch+cuda cuda_arch=<capability, e.g. 70>), "
                       "or build on a node with the GPU")
    return cause, f"{arch}; or build on a machine with the GPU"


def device_query_in_build(hits: list[Hit], env: Env, facts: Facts) -> list[Hit]:
    """``hits`` with torch's no-GPU words (:data:`DEVICE_QUERY`) read as build-needs-cuda-device where the log's traceback
    runs through torch's cpp_extension choosing the architectures (its _get_cuda_arch_flags frame): the build asked for
    the GPU, not a program at run time."""
    if "arch_query" not in env.notes:
        return hits
    out = []
    for h in hits:
        said = DEVICE_QUERY.get(h.id, "")
        if said and said in h.text:
            q = replace(h, id="build-needs-cuda-device", groups={**h.groups, "nd_query": h.id})
            got = _needs_device(q, env, facts)
            if got is not None:
                pkg = built_package(q, env) or h.package
                h = replace(q, cause=got[0], remedy=got[1], rule=CAUSE_OF.get("build-needs-cuda-device", ""), package=pkg,
                            version=env.version(pkg) if pkg else "")
        out.append(h)
    return out


# signature id -> its cause builder (:data:`glmcompat.decide.diagnose.BUILDERS` holds these after the rest: the widened
# rows' builders here read their new phrasings and hand the others to the row's own builder)
SWEEP_BUILDERS: dict[str, Builder] = {
    "torch-cmake-cuda-not-found": _torch_build_off,
    "torch-without-cudnn": _torch_build_off,
    "python-version-unsupported": _python,
    "source-build-failed": _source_build,
    "build-backend-too-old": _tooling,
    "conda-cuda-too-old": _conda_cuda,
    "conda-glibc-too-old": _conda_glibc,
    "cxx-standard-unsupported": _cxx_standard,
    "system-lib-missing": _system_lib,
    "link-library-missing": _link_lib,
    "elf-wrong-class": _elf_class,
    "elf-invalid": _elf_invalid,
    "static-tls-exhausted": _tls,
    "execstack-refused": _execstack,
    "musl-glibc-wheel": _musl,
    "no-matching-distribution": _no_dist,
    "wheel-not-supported": _wheel,
    "pip-resolution-impossible": _resolution,
    "build-tool-missing": _build_tool,
    "torch-cmake-cuda-too-old": _cmake_cuda_floor,
    "cuda-toolkit-versions-conflict": _toolkits_mixed,
    "conda-unsatisfiable": _conda,
    "conda-package-not-found": _conda_missing,
    "build-needs-cuda-device": _needs_device,
}
# the groups of the widened rows whose builder may find the line outside the stack (glmcompat.decide.diagnose.DROPPED)
SWEEP_DROPPED = {"no-matching-distribution": ("poetry_pkg", "pdm_pkg", "poetry_nf_pkg", "poetry_nf_name"),
                 "pip-resolution-impossible": ("poetry_because", "poetry_dep", "pdm_pkg", "uv_url_pkg", "uv_dep", "ri_caused"),
                 "wheel-not-supported": ("uv_dist", "uv_pkg", "wa_pkg", "on_pkg"),
                 "conda-unsatisfiable": ("ls_pkg", "ls_both", "ls_cpkg", "lm_pkg", "cc_pkg"),
                 "build-needs-cuda-device": ("nd_thc", "nd_cuda", "nd_index")}


__all__ = ["SWEEP_BUILDERS", "SWEEP_DROPPED", "built_package", "device_query_in_build", "ignored_elsewhere"]
