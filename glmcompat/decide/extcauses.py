"""Causes and remedies of the torch ecosystem's compiled extensions' own checks (issue 38's sweep of PyTorch
Geometric's companions, DGL, CuPy, Numba, OpenMMLab, detectron2, pytorch3d, AutoGPTQ / AutoAWQ, NATTEN, bitsandbytes;
the messages: tests/fixtures/raise_sites/extensions-signatures.toml). Pure: no I/O.

The rows' alternatives for these libraries capture groups prefixed ``x_`` (in new rows and in widened existing ones):
``x_pkg`` (and ``x_pkg2`` ...) the package or module the line names, read as its distribution; the rest the versions
and libraries the line prints. :func:`ext_package` names the package of such a hit, :func:`ext_cause` builds its cause
where the row's own builder does not read these groups.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from glmcompat.decide.cudacauses import CUDA_BUILDERS, cudart_release, named_gpu, torch_cuda
from glmcompat.decide.enginecauses import at_least
from glmcompat.decide.logenv import Env
from glmcompat.decide.logenv import shown as _shown
from glmcompat.matrix.view import Facts
from glmcompat.model.causes import CAUSE_OF
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import Hit, module_package

Cause = tuple[str, str]


def _first(g: Mapping[str, str], *keys: str) -> str:
    return next((g[k].strip() for k in keys if g.get(k, "").strip()), "")


def _pkg_group(g: Mapping[str, str]) -> str:
    return next((g[k] for k in sorted(g) if k.startswith("x_pkg") and g[k].strip()), "")


def ext_package(h: Hit) -> str:
    """The distribution an ``x_pkg`` group of the hit names (a module, a library file or a package as the line prints
    it: ``torch_sparse``, ``libpyg``, ``Numba``), or ""."""
    if h.id not in EXT_BUILDERS and h.id not in _WIDENED:  # another row's x_ groups (a branch's own prefix) are its own
        return ""
    if h.groups.get("x_sox"):  # torchaudio 2.1's own words of its sox extension (torchaudio/_extension/utils.py)
        return "torchaudio"
    if any(k.startswith("x_jtrt") for k in h.groups):  # jetson-inference's tensorNet, its own [TRT] log lines
        return "jetson-inference"
    if any(k.startswith("x_te_") for k in h.groups):  # TransformerEngine's checks of the flash-attn it finds
        return "transformer-engine"
    raw = _pkg_group(h.groups).strip().strip("'\"`")
    if not raw:  # a top-level extension module the line names (exllama_kernels, libnatten), not a package's _C
        raw = next((h.groups[k] for k in sorted(h.groups) if k.startswith("x_mod") and h.groups[k][:1].isalpha()), "")
    if not raw:
        return ""
    raw = raw.removesuffix(".so").split(".", 1)[0]
    return module_package(raw) if raw[:1].islower() or "_" in raw else module_package(raw.lower())


def _who(h: Hit, env: Env) -> tuple[str, str]:
    pkg = ext_package(h) or h.package
    return pkg, _shown(pkg, env.version(pkg) or (h.version if pkg == h.package else "")) if pkg else ""


def _cu(cuda: str) -> str:
    return "cu" + cuda.replace(".", "") if cuda else ""


def _cudart_mismatch(h: Hit, env: Env, facts: Facts, pkg: str, who: str) -> Cause | None:
    """extension-cuda-mismatch by the loader: a package's module links the CUDA runtime of its build (libcudart.so.N),
    and the log's torch is built for another CUDA (its runtime of another major, or up to CUDA 10 another release);
    None where the module is torch's own, or the log shows no torch CUDA, or the same runtime (cudart-missing's then)."""
    lib = h.groups.get("x_cudart", "")
    want, have, torch = cudart_release(lib), torch_cuda(env, facts), env.version("torch")
    if not pkg or pkg == "torch" or not want or not have:
        return None
    mine = have if "." in want else have.split(".", 1)[0]  # CUDA 11+: one runtime per major
    if mine == want:
        return None
    tv = f"torch {torch}" if torch else "the installed torch"
    return (f"{who} was built for CUDA {want} (its compiled module links {lib}), and {tv} is built for CUDA {have}: "
            f"an extension built for another CUDA than torch, so the environment has no CUDA {want} runtime and the "
            "loader stops before it reaches any symbol (a wheel of the extension taken for another torch or CUDA)",
            f"install the {pkg} build for CUDA {mine} ({tv}, {_cu(have)}: its release or wheel index page for that torch "
            f"and CUDA), or the torch build for CUDA {want} that {pkg} was built against")


# the packages whose own _C is loaded, then checked against torch's CUDA, at import (pytorch/vision@0341aa50
# torchvision/extension.py: _register_extensions loads _C, _check_cuda_version compares): the loader's missing libcudart
# of that _C is the same pair, <pkg>-cuda-mismatch (the torchvision-cuda-mismatch row's source)
FAMILY_CUDA = ("torchvision",)


def family_runtime(h: Hit, env: Env, facts: Facts) -> Hit:
    """extension-cuda-mismatch by the loader (``libcudart.so.N: cannot open shared object file``) where the module that
    did not load is torchvision's own _C (the traceback's path under that package, or the import statement the error
    ends: ``from torchvision import _C``) and the log's torch is built for another CUDA: the package's build for one
    CUDA next to torch's for another, which its own import check words as torchvision-cuda-mismatch; the loader stops
    before that check runs."""
    g = h.groups
    if h.id != "extension-cuda-mismatch" or "x_cudart" not in g:
        return h
    mod = (g.get("importing") or g.get("typed_import") or "").split(".", 1)[0]
    pkg = h.package or ext_package(h) or (module_package(mod) if mod else "")
    want, have = cudart_release(g["x_cudart"]), torch_cuda(env, facts)
    if pkg not in FAMILY_CUDA or not want or not have:
        return h
    if (have if "." in want else have.split(".", 1)[0]) == want:  # CUDA 11+: one runtime per major
        return h
    sid = f"{pkg}-cuda-mismatch"
    row = next((r for r in facts.rows("signature") if r.id == sid), None)
    return replace(h, id=sid, package=pkg, groups={**g, "torch_cuda": have, "built_cuda": want},
                   source=row.source if row is not None else h.source, rule=CAUSE_OF.get(sid, ""))


def _cuda_mismatch(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """extension-cuda-mismatch: the extension's CUDA and torch's, as the line prints them."""
    g = h.groups
    pkg, who = _who(h, env)
    if "x_cudart" in g:
        return _cudart_mismatch(h, env, facts, pkg, who)
    built, have = _first(g, "x_built_cuda"), _first(g, "x_torch_cuda") or env.cuda.get("torch_cuda", "")
    torch = env.version("torch")
    if not pkg:
        return None
    tv = f"torch {torch}" if torch else "the installed torch"
    return (f"{who}'s compiled extension was built for CUDA {built or 'another release'}, and {tv} for CUDA "
            f"{have or 'another release'}: {pkg} checks at import that its build's CUDA and torch.version.cuda agree "
            "(their majors) and refuses the pair (a wheel taken from the index page of another torch or CUDA)",
            f"install the {pkg} build for {tv} and {_cu(have) or 'its CUDA'} (the wheel index page for that torch and "
            f"CUDA: torch-{torch.split('+')[0] if torch else '<torch>'}+{_cu(have) or 'cuXYZ'}), or the torch build for "
            f"CUDA {built or 'the CUDA it was built for'}")


def _not_built(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """extension-not-built: the package and the compiled module it lacks."""
    g = h.groups
    pkg, who = _who(h, env)
    mod = _first(g, "x_mod", "x_mod2", "x_mod3", "x_mod4", "x_mod5", "x_mod6", "x_what")
    subject = who or "the package"
    feat = g.get("x_feat", "CUDA").replace("GPU", "CUDA")
    if feat.endswith("METIS"):
        return (f"{subject}'s compiled extension was built without {feat} (a source build without WITH_{feat}=1, or a "
                "wheel built so), so the partitioning it needs is absent",
                f"install a {pkg or 'package'} build with {feat} (its prebuilt wheels for the installed torch and CUDA "
                f"carry it), or rebuild it with WITH_{feat}=1")
    if "x_cpuops" in g:  # NameError on _C: claimed only where the log shows the package's own fallback warning
        if not env.notes.get("cpu_ops"):
            return None
        return (f"{subject}'s compiled C++/CUDA extension (_C) was never built or installed: its import failed, so the "
                "package warned \"Failed to load custom C++ ops. Running on CPU mode Only!\" and left _C undefined, then "
                "called _C for a tensor on the GPU (its CPU fallback runs only on the CPU): NameError: name '_C' is not "
                "defined",
                f"build {pkg or 'the package'}'s extension with the CUDA toolkit of torch's CUDA visible (CUDA_HOME set, "
                "nvcc on PATH; FORCE_CUDA=1 where its setup.py reads it), from a clean checkout: pip install "
                "--no-build-isolation -e . (or python setup.py build_ext --inplace), then check that its _C module "
                "imports; or run the model on the CPU")
    if g.get("x_gqk"):  # GPTQModel's kernels: torch.ops extensions it builds (JIT) or loads for the running torch
        return (f"{subject}'s {g['x_gqk']} kernels (compiled torch.ops extensions it builds or loads for the running "
                "torch at run time) are not available: no prebuilt kernel matches this torch and CUDA, and building one "
                "failed or was not possible (no CUDA toolkit of torch's CUDA, no compiler)",
                f"reinstall {pkg or 'the package'} with its kernels built for the installed torch and CUDA (pip install "
                "--no-build-isolation with the CUDA toolkit of torch's CUDA on PATH and CUDA_HOME), or choose a backend "
                "that needs no compiled kernel")
    if g.get("x_awqk"):  # AutoAWQ's kernels live in a separate distribution, built per torch and CUDA
        dist = canonicalize(g["x_awqk"])
        return (f"AutoAWQ's {g.get('x_awqk_what', 'CUDA')} kernels did not import: they come from the separate {dist} "
                f"package, which is not installed or was built for another torch or CUDA (its compiled modules then fail "
                "to import, and AutoAWQ only records that they are missing)",
                f"install {dist} built for the installed torch and CUDA (pip install {dist}, or its release wheel for this "
                "CUDA / ROCm), or load the model through a backend that needs no such kernel")
    if "x_origin" in g:  # the loader's find_spec(...).origin of a compiled module the package's __init__ did not find
        frame = g.get("frame", "")
        compiled = {p for r in facts.rows("compiled") for p in r.packages}
        if frame not in compiled:
            return None  # a bare AttributeError, or one in another package's frame: not this package's loader
        parts = g.get("frame_file", "").replace("\\", "/").split("/")
        init = f" ({parts[-2]}/__init__.py)" if len(parts) > 1 and parts[-1] == "__init__.py" else ""
        return (f"{subject}'s compiled extension for this build is missing: its __init__{init} looks its compiled modules up "
                "by name ({library}_cuda where torch sees a GPU, else {library}_cpu) with importlib's PathFinder, finds "
                "none with this Python's extension suffix and fails on the spec it did not get (None): a CPU-only "
                "wheel on a GPU machine, a wheel for another torch, CUDA or Python, or an install that skipped the build",
                f"install the {pkg} wheel built for the installed torch and its CUDA from PyG's wheel index (the page for "
                f"torch-<version>+<cuXYZ>: pip install {pkg} -f <that page>), or build it from source with the CUDA "
                f"toolkit of torch's CUDA visible (FORCE_CUDA=1 pip install --no-build-isolation --no-cache-dir {pkg})")
    if any(k.startswith("x_nocuda") for k in g):  # a library (not a torch extension) whose build left CUDA out
        opt = g.get("x_cmake", "")
        what = "GPU" if "GPU" in (g.get("x_nocuda", "") + g.get("x_nocuda2", "")) else "CUDA"
        return (f"{subject} is a build without {what} support: its {what} code was compiled out (a CPU-only wheel or "
                "package, or a source build configured without its CUDA option or without the CUDA toolkit), and the "
                "program asked it for the GPU",
                f"install the {what} build of {pkg or 'the package'} for the machine's CUDA, or build it from source with "
                f"its CUDA option on{' (' + opt + ')' if opt else ''} and the CUDA toolkit visible; or run it on the CPU")
    if "x_pkg12" in g or any(k.startswith("x_cpu") for k in g):
        return (f"{subject}'s compiled extension was built without CUDA{' (its ' + g['x_cpu'].strip() + ')' if g.get('x_cpu') else ''}: "
                "no CUDA toolkit or GPU was visible when it was compiled (FORCE_CUDA unset), so its GPU kernels are "
                "absent and a GPU tensor reaches its CPU-only build",
                f"rebuild {pkg or 'it'} with the CUDA toolkit of torch's CUDA visible (CUDA_HOME set, FORCE_CUDA=1, "
                "pip install --no-build-isolation), or install its prebuilt CUDA wheel for the installed torch")
    if g.get("x_op"):  # the compiled extension is there but lacks an op this release's Python code calls
        return (f"{subject}'s compiled extension {mod or ''} lacks the op {g['x_op']} that this release's Python code "
                "loads: the compiled part is of another release than the Python files (an older source build left in "
                "place, or two distributions of the package, e.g. mmcv and mmcv-full, installed over each other)",
                f"uninstall every distribution of {pkg or 'the package'} (pip uninstall mmcv mmcv-full mmcv-lite), then "
                "install one release whose compiled extension matches it, built for the installed torch and CUDA (its "
                "prebuilt wheel, or a clean source build)")
    if g.get("x_cc"):  # the package ships one compiled module per GPU architecture, none at or below this GPU's
        cc = g["x_cc"]
        return (f"{subject} was compiled for other GPU architectures than this GPU's (compute capability {_cc(cc)}): "
                "it ships one compiled module per architecture it was built for and has none at or below this one "
                "(built on another machine, or for a newer GPU only)",
                f"rebuild {pkg or 'it'} for this GPU (TCNN_CUDA_ARCHITECTURES={cc}, or build on this machine with torch "
                "seeing the GPU: pip install --no-build-isolation)")
    if (sci := next((k for k in g if k.startswith("x_sci")), "")):  # a scientific package's own words for it
        return _sci_not_built(g, sci, pkg, who)
    if g.get("x_pkg16"):  # torch-tensorrt's C++ runtime library did not load
        return (f"{subject}'s C++ runtime library (libtorchtrt_runtime) did not load: the install has no runtime "
                "library (a Python-only build), or it was built for another torch than the installed one, so the "
                "features that need it are disabled",
                f"install the {pkg or 'torch-tensorrt'} release built for the installed torch (their versions are paired: "
                "torch-tensorrt 2.X with torch 2.X, from the same CUDA index), not a source build without its C++ runtime")
    if g.get("x_part") in ("cuda", "gpu"):  # the package's own CUDA module, beside the CPU one its Python code imports
        sub = g.get("x_submod", mod)
        return (f"{subject} was built without its CUDA part: its own compiled CUDA module {sub} is missing, as a source "
                "build makes where no CUDA toolkit was found at build time (CUDA_HOME unset, no nvcc, or torch seeing no "
                "GPU), compiling the CPU modules only, while the package's Python code imports the CUDA one when torch "
                "sees a GPU",
                f"rebuild {pkg or 'it'} with the CUDA toolkit of torch's CUDA visible (CUDA_HOME set, FORCE_CUDA=1, pip "
                f"install --no-build-isolation --no-cache-dir {pkg or '<package>'}), or install its prebuilt CUDA wheel for "
                "the installed torch and CUDA")
    lacks = f"its compiled extension {g.get('x_submod') or mod}" if mod else "its compiled extension"
    return (f"{subject} is installed without {lacks}: a Python-only install (a source build that skipped or failed its "
            "C++/CUDA build, the lite package instead of the full one), or a wheel built for another Python, torch or "
            "platform whose extension does not match this one",
            f"reinstall {pkg or 'the package'} with its compiled extension for this Python, torch and CUDA (its prebuilt "
            "wheel for them, or a source build with the CUDA toolkit of torch's CUDA: pip install --no-build-isolation)")


def _sci_not_built(g: Mapping[str, str], sci: str, pkg: str, who: str) -> Cause:
    """extension-not-built in a scientific package's own words (extension-not-built's x_sci alternatives): its compiled
    modules did not import, and the package raised its own error over the loader's."""
    subject, pkg = who or pkg or "the package", pkg or "the package"
    reinstall = (f"reinstall {pkg} from its wheel for this Python and platform, in the Python that runs (python -m pip "
                 f"install --force-reinstall --no-cache-dir {pkg})")
    if sci in ("x_sci4", "x_sci5"):  # the loader of a package several distributions ship (cv2's opencv-python builds)
        mod = g.get("x_pkg24") or "the same module"
        return (f"{subject}'s loader did not find its native module for this Python "
                + (f"(its {g['x_cfg']} is missing) " if g.get("x_cfg") else "")
                + "and gave up: the install is incomplete, most often because several distributions that ship the same "
                f"module ({mod}: its GUI, headless and contrib builds) were installed over each other and one was then "
                "uninstalled, removing files the other needs",
                f"uninstall every distribution that ships {mod} (`pip list` shows them; pip uninstall each), then "
                f"install one of them alone; or {reinstall}")
    if sci in ("x_sci6", "x_sci7"):  # a package's own shared library, loaded with ctypes
        lib = g.get("x_so") or g.get("x_so2") or "its shared library"
        return (f"{subject} could not load its own shared library {lib}: the file is missing (an interrupted install, "
                "a wheel of another platform) or one of its dependencies does not load on this system (the errors the "
                "loader lists after it name which: a libstdc++ or glibc older than the one it was built against)",
                f"{reinstall}; where the loader's errors name a missing or older system library, install that (or a "
                f"{pkg} build from conda-forge, which brings its own)")
    return (f"{subject}'s compiled modules did not import, and it says so in its own words: the install is broken or "
            "does not fit this interpreter (a wheel for another Python version or platform, an install interrupted or "
            "overwritten, a NumPy other than the one it was built for, or its source tree imported in place of the "
            "install); the error chained before it names the module that failed and why",
            f"{reinstall}, and run Python outside the package's source tree; where the chained error is NumPy's, install "
            f"the NumPy {pkg} was built for")


def _torch_version_missing(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """extension-torch-version-missing: the library for the torch the path names, or the load that failed."""
    g = h.groups
    if _first(g, "x_pkg4") == "flashattention":  # dorado's CMake: its prebuilt flash-attention against the libtorch it links
        return _dorado_flashattention(g)
    pkg, who = _who(h, env)
    lib = _first(g, "x_lib", "x_lib2")
    torch = _first(g, "x_torch", "x_torch2") or env.version("torch")
    built = _first(g, "x_built")
    if built:
        subject = who or "the extension"
        return (f"{subject} was built for torch {built}, and the installed torch is {torch}: its compiled library "
                "needs symbols of the torch it was built against, which this torch does not export",
                f"install the {pkg or 'extension'} build for torch {torch} (the wheel index page for that torch and its "
                f"CUDA), or torch {built}")
    if not pkg:
        return None
    tv = f"torch {torch}" if torch else "the installed torch"
    if lib:
        return (f"{who} ships its compiled library per torch release it was built for ({lib} for {tv}) and has none "
                f"for {tv}: this {pkg} release was built for other torch releases",
                f"install the {pkg} release built for {tv} (its wheel index for that torch and CUDA), or the torch "
                f"release this {pkg} was built for")
    return (f"{who}'s compiled library for {tv} did not load: it was built for another torch (or another build of it) "
            "than the installed one",
            f"install the {pkg} release built for {tv} (its wheel index for that torch and CUDA), or the torch release "
            f"this {pkg} was built for")


def _dorado_flashattention(g: Mapping[str, str]) -> Cause:
    """extension-torch-version-missing of dorado's CMake check (cmake/FlashAttention.cmake): the prebuilt flashattention
    library records the libtorch build it was made for (share/torch-hash: the SHA-256 of dorado's own libtorch archive),
    and the build links another (a libtorch of the user's, DORADO_LIBTORCH_DIR, has no such hash)."""
    want = _first(g, "x_fa_hash")
    made = f" ({want[:12]}...)" if want else ""
    return ("dorado's build refuses its prebuilt flashattention library: the archive records the libtorch build it was "
            f"compiled against{made} (its share/torch-hash, the hash of the libtorch archive dorado downloads for this "
            "platform and CUDA), and the libtorch this build links is another one (a libtorch given by "
            "DORADO_LIBTORCH_DIR, e.g. a system, conda or Spack build, or another dorado libtorch archive)",
            "build dorado with the libtorch it downloads itself (leave DORADO_LIBTORCH_DIR unset), the one the prebuilt "
            "flashattention was compiled against; or build flash-attention against your libtorch and pass it with "
            "DORADO_FLASHATTENTION_PATH")


def _duplicates(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """duplicate-package-distributions: the distributions the line lists."""
    dups = [d.strip() for d in _first(h.groups, "x_dups").split(",") if d.strip()]
    pkg, _ = _who(h, env)
    what = ", ".join(dups) if dups else f"several distributions of {pkg or 'the package'}"
    return (f"{what} are installed side by side: each ships the same Python package (one build per CUDA major), so "
            "one's files overwrite the other's and the import loads a mixture built for different CUDA releases",
            f"pip uninstall {' '.join(dups) if dups else 'every one of them'}, then install the one for torch's CUDA "
            "major alone")


def _version_check(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """version-requirement-unmet of an extension's import check (Numba's, DGL's): the dependency, what it needs, what
    the environment has."""
    g = h.groups
    if any(k.startswith("x_jtrt") for k in g):
        return _jetson_tensorrt(g)
    if any(k.startswith("x_te_") for k in g):
        return _te_flash_attn(g, env)
    pkg, who = _who(h, env)
    dep = _first(g, "x_dep", "x_dep2", "x_dep3", "x_dep4", "x_dep5", "x_dep6", "x_dep7", "x_dep8", *_SCI_DEPS)
    need = _first(g, "x_need", "x_need2", "x_need3", "x_need4", "x_need5", "x_need6", "x_need7",
                  *(k.replace("dep", "need") for k in _SCI_DEPS))
    have = _first(g, "x_have", "x_have2", "x_have3", "x_have4", "x_have7",
                  *(k.replace("dep", "have") for k in _SCI_DEPS)).rstrip(".")
    if any(k in g for k in _SCI_BUILT):  # a source build's floor of the library it compiles against (no wheel fit)
        return _built_against(h, env, dep, need, have)
    lo, hi = _first(g, "x_lo8").rstrip("."), _first(g, "x_hi8").rstrip(".")
    if lo and hi:  # a range the package was built and tested for: the side the found version is on
        have8 = _first(g, "x_have8").rstrip(".")
        base = have8.split("+", 1)[0]
        older = _vkey(base) < _vkey(lo)
        dep_pkg = "torch" if dep.lower() in ("pytorch", "torch") else dep.lower()
        side = f"older than {lo}" if older else f"newer than {hi}"
        return (f"{who or 'the package'}'s setup.py builds only against {dep} {lo} to {hi} (the range this release "
                f"supports) and found {dep} {have8}, {side}",
                f"install {dep_pkg} within that range (pip install '{dep_pkg}>={lo},<={hi}'), or a "
                f"{'' if older else 'newer '}release of {pkg or 'the package'} that supports {dep} {base}"
                + ("" if older else " (IGNORE_TORCH_VER=1 builds it anyway, untested)"))
    if dep == "CUDA" and need:  # the CUDA torch was built with (torch.version.cuda)
        floor = need.lstrip(">= ")
        torch_cuda = env.cuda.get("torch_cuda", "")
        return (f"{who or 'the package'} builds only against a torch built for CUDA {floor} or newer, and the installed "
                f"torch was built for {'CUDA ' + torch_cuda if torch_cuda else 'an older CUDA'}",
                f"install the torch build for CUDA {floor} or newer (the cu{floor.replace('.', '')} index or a newer "
                f"one), then build {pkg or 'it'} again")
    if need and " or " not in need and not need.startswith((">", "<")):
        need = f"{need} or greater"
    if not (dep and need):
        return None
    if not pkg or canonicalize(pkg) == canonicalize(dep):  # the line names only the dependency (a setup.py's assert)
        pkg, who = "the package", "the package being built or imported"
    dep_pkg = {"pytorch": "torch", "python": "python", "llvm": dep}.get(dep.lower()) or module_package(dep.lower())
    if dep == "LLVM":  # numba's check of the LLVM its binding package was built with: that package, not an LLVM, moves
        return (f"{who} checks at import that the LLVM its LLVM binding package was built against is {need} and finds "
                f"{'LLVM ' + have if have else 'an older one'}: the binding package installed is older than the one this "
                f"release of {pkg} requires",
                f"upgrade the binding package the message names (\"Please update ...\") to the release {pkg} requires "
                f"(pip install -U {pkg} brings its pinned one), or install the {pkg} release made for the installed one")
    have_txt = f"{dep} {have}" if have else f"the installed {dep}"
    if need.endswith("or less") or need.startswith("<"):
        top = need.replace(" or less", "").lstrip("<= ")
        parts = top.split(".")
        below = f"<{parts[0]}.{int(parts[1]) + 1}" if len(parts) == 2 and parts[1].isdigit() else f"<={top}"
        fix = (f"install {dep_pkg} {top} or older (pip install '{dep_pkg}{below}'), or a release of {pkg} that supports "
               f"{have_txt}")
    else:
        bare = need.replace(" or greater", "").lstrip(">= ")
        fix = (f"install {dep_pkg} {bare} or newer (pip install '{dep_pkg}>={bare}'), or a release of {pkg} that still "
               f"supports {have_txt}")
    if dep_pkg == "python":
        fix = f"run it on Python {need.replace(' or greater', '')} or newer, or install a release of {pkg} that supports {have_txt}"
    return (f"{who} checks at import that {dep} is {need} and finds {have_txt}: the environment's {dep} is outside the "
            f"range this release of {pkg} supports", fix)


def _jetson_tensorrt(g: Mapping[str, str]) -> Cause:
    """version-requirement-unmet of jetson-inference's gates of the TensorRT it was compiled against (its tensorNet's
    #if NV_TENSORRT_MAJOR branches): the feature refused, the TensorRT it needs (the line's, else the gate's: INT8 from
    4.0, ONNX, UFF, the DLA and the experimental networks from 5.0) and the one it was built against where the line
    prints it."""
    fmt, net, dev = _first(g, "x_jtrt_fmt"), _first(g, "x_jtrt_net"), _first(g, "x_jtrt_dev")
    int8 = bool(_first(g, "x_jtrt_int8", "x_jtrt_int8b"))
    need = _first(g, "x_jtrt_need", "x_jtrt_need2", "x_jtrt_need4") or ("4.0" if int8 else "5.0")
    have = _first(g, "x_jtrt_have", "x_jtrt_have3", "x_jtrt_have5")
    what = (f"importing {fmt} models" if fmt else f"its {net} network" if net else f"running on the {dev} accelerator"
            if dev else "INT8 precision")
    built = f"TensorRT {have}" if have else f"a TensorRT older than {need}"
    instead = ("; on this TensorRT, a Caffe model (prototxt and caffemodel), the format jetson-inference imports below "
               "TensorRT 5" if fmt else "; on this TensorRT, FP16 or FP32 precision" if int8 else
               "; on this TensorRT, the GPU (--device=GPU)" if dev else "")
    return (f"jetson-inference (its tensorNet, whose TensorRT version checks are compiled in from the TensorRT headers it "
            f"was built against) refuses {what}: that needs TensorRT {need} or newer, and it was built against {built}",
            f"install TensorRT {need} or newer (on a Jetson: a JetPack / L4T release that carries it) and rebuild "
            f"jetson-inference against it (cmake and make in its build directory, then sudo make install){instead}")


def _te_flash_attn(g: Mapping[str, str], env: Env) -> Cause:
    """version-requirement-unmet of TransformerEngine's checks of the flash-attn it finds (its FlashAttention backend):
    the range its release supports and the flash-attn found (the import-time warning), or the one bound its
    FlashAttention's assert names, or flash-attn 2 that its variable-length (thd) attention needs; the installed
    flash-attn from the log where the line does not print it."""
    te = env.version("transformer-engine")
    who = f"TransformerEngine {te}" if te else "TransformerEngine"
    lo, hi = _first(g, "x_te_lo").rstrip("."), _first(g, "x_te_hi").rstrip(".")
    bound, ver = _first(g, "x_te_bound"), _first(g, "x_te_ver").rstrip(".")
    have = _first(g, "x_te_have").rstrip(".") or env.version("flash-attn")
    found = f"flash-attn {have}" if have else "the installed flash-attn"
    newer = "a newer TransformerEngine release (each raises the newest flash-attn its FlashAttention backend accepts)"
    if _first(g, "x_te_v2"):
        return (f"{who}'s FlashAttention backend needs flash-attn 2 for variable sequence lengths (the thd format, packed "
                f"sequences) and found {found}, a flash-attn 1.x",
                "install flash-attn 2 (pip install 'flash-attn>=2' --no-build-isolation, the release the TransformerEngine "
                "release supports), or use the bshd/sbhd format without packed sequences")
    if lo and hi:
        older = bool(have) and _vkey(have) < _vkey(lo)
        side = f", older than {lo}" if older else f", newer than {hi}" if have and _vkey(have) > _vkey(hi) else ""
        return (f"{who} supports flash-attn >= {lo}, <= {hi} in its FlashAttention backend (the range this release was "
                f"tested with) and found {found}{side}: it does not use that flash-attn (its attention falls back to "
                "another backend, or a caller that requires flash-attn stops)",
                f"install flash-attn within that range (pip install 'flash-attn>={lo},<={hi}' --no-build-isolation), or "
                + (f"{newer} whose range includes flash-attn {have}" if not older else f"flash-attn {lo} or newer"))
    if bound == "maximum":
        return (f"{who}'s FlashAttention backend supports flash-attn up to {ver} (the newest this release was tested "
                f"with) and found {found}, newer than that: its assert fails when the attention layer is made",
                f"install flash-attn {ver} or older (pip install 'flash-attn<={ver}' --no-build-isolation), or {newer} "
                f"whose range includes {found}")
    return (f"{who}'s FlashAttention backend requires flash-attn {ver} or newer and found {found}, older than that: its "
            "assert fails when the attention layer is made",
            f"install flash-attn {ver} or newer (pip install 'flash-attn>={ver}' --no-build-isolation), within the range "
            "the TransformerEngine release supports")


# the dependency groups of the scientific packages' own checks (version-requirement-unmet's x_dep9 onwards: SciPy's,
# pandas', Matplotlib's floor of NumPy and its other dependencies), each with its x_needN / x_haveN; and those of a source
# build's floor of the library it compiles against (h5py's and PyTables' HDF5, llvmlite's LLVM)
_SCI_DEPS = ("x_dep9", "x_dep10", "x_dep11", "x_dep12", "x_dep13", "x_dep14", "x_dep15")
_SCI_BUILT = ("x_dep13", "x_dep14", "x_dep15")


def _built_against(h: Hit, env: Env, dep: str, need: str, have: str) -> Cause:
    """A source build's check of the library it compiles against: the installer built the package because no wheel of
    it fits this Python and platform, and the library the build found is outside what it supports."""
    pkg, who = _who(h, env)
    pkg = pkg or "the package"
    have = have.strip("()").replace(", ", ".")  # h5py prints the version it found as a tuple: (1, 10, 4)
    floor = need if dep == "LLVM" else f"{need} or newer"  # llvmlite builds against one LLVM series only
    return (f"{who or pkg} is being built from source (no wheel of it fits this Python and platform, or its source was "
            f"asked for) and its build needs {dep} {floor}, but the {dep} it found is {have or 'another release'}",
            f"install a release of {pkg} that has a wheel for this Python and platform (or run a Python it publishes "
            f"wheels for), so nothing is built; or install {dep} {floor} (its development files) and point the build at it"
            + (" (LLVM_CONFIG=/path/to/llvm-config)" if dep == "LLVM" else f" ({dep}_DIR=/path/to/{dep.lower()})"))


def _vkey(v: str) -> tuple[int, ...]:
    """A dotted release's numeric parts (2.1.2 -> (2, 1, 2)), for comparing the releases a line prints."""
    return tuple(int(p) for p in (("".join(c for c in x if c.isdigit()) or "0") for x in v.split(".")))


def _cuda_lib(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """cuda-lib-missing where a library's own message names the missing CUDA library (bitsandbytes' setup error)."""
    lib = _first(h.groups, "x_cudalib", "x_cudalib2")
    pkg, who = _who(h, env)
    if not lib:
        return None
    major = lib.split(".so.", 1)[1].split(".", 1)[0] if ".so." in lib else ""
    return (f"{who or 'the library'} links {lib}, which the loader cannot find: the CUDA {major + '.x ' if major else ''}"
            "runtime libraries (a CUDA toolkit's lib64, or the nvidia-* wheels of that CUDA major) are not on its path",
            f"install the CUDA {major + ' ' if major else ''}runtime libraries that ship {lib} (the nvidia-* wheel of "
            f"CUDA {major or 'that major'}, or a CUDA toolkit on LD_LIBRARY_PATH), or a {pkg or 'package'} build for "
            "the CUDA the environment has")


def _bnb_cuda(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """bitsandbytes-cuda-setup in the form of its newer releases' messages (no binary for the CUDA torch has) and of
    0.41's CUDA SETUP lines; None for its generic lines (the row's own builder)."""
    g = h.groups
    if ("x_bnb_detect" in g or "x_bnb_failed" in g) and len([k for k in g if k.startswith("x_")]) == 1:
        return None
    pkg, who = _who(h, env)
    cuda = _first(g, "x_bnb_req")
    lib = _first(g, "x_bnb_lib", "x_bnb_lib2")  # the binary it looked for: libbitsandbytes_cuda129.so is CUDA 12.9's
    kind = "ROCm" if "_rocm" in lib.lower() else "CUDA"
    if lib:
        digits = "".join(c for c in lib.lower().split("_cuda", 1)[-1].split("_rocm", 1)[-1].split(".", 1)[0]
                         if c.isdigit())
        cuda = cuda or (f"{digits[:-1]}.{digits[-1]}" if len(digits) >= 2 else "")
    what = _first(g, "x_bnb_what") or ("CUDA runtime library" if "x_bnb_rt" in g else "")
    if what == "CUDA runtime library":
        return (f"{who or 'bitsandbytes'} looked for the CUDA runtime (libcudart.so) on LD_LIBRARY_PATH and the loader's "
                "paths and found none: releases before 0.43 do not find the CUDA runtime torch brings in its nvidia-* "
                "wheels, so a CUDA library of bitsandbytes' own cannot be chosen",
                f"install {pkg or 'bitsandbytes'} 0.43 or newer (it uses torch's CUDA), or add the directory holding "
                "libcudart.so to LD_LIBRARY_PATH")
    if what:
        return (f"{who or 'bitsandbytes'} did not find the NVIDIA driver's CUDA library (libcuda.so) on the loader's "
                "paths: no driver is installed or visible to this process (a container started without the GPU), or the "
                "loader's cache is stale",
                "run on a machine (or container) with the NVIDIA driver visible (nvidia-smi works there), then `sudo "
                f"ldconfig`; or install {pkg or 'bitsandbytes'} 0.43 or newer")
    if g.get("x_bnb_old"):
        return (f"{who or 'bitsandbytes'} found CUDA {g['x_bnb_old']}, which this release has no library for",
                f"install torch built for CUDA 11 or newer and a {pkg or 'bitsandbytes'} release that ships a library "
                "for it")
    if "x_bnb_src" in g:
        return (f"{who or 'bitsandbytes'} has no native library at all: it runs from a source checkout whose C++/CUDA "
                "library was never compiled, so none loads for the CUDA torch was built with",
                f"install a {pkg or 'bitsandbytes'} wheel (which ships its compiled libraries), or compile the checkout "
                "for torch's CUDA (cmake -DCOMPUTE_BACKEND=cuda -S . && make) before importing it")
    what = f" ({lib})" if lib else ""
    if kind == "ROCm":
        return (f"{who or 'bitsandbytes'} has no native library for ROCm {cuda or 'the ROCm torch was built with'}{what}: "
                "this release ships pre-compiled libraries for other ROCm versions only, so it cannot load its GPU code",
                f"install a release of {pkg or 'it'} that ships a library for ROCm {cuda or 'torch.version.hip'} (or "
                "torch built for a ROCm it ships), or build it from source for this ROCm")
    return (f"{who or 'bitsandbytes'} has no native library for CUDA {cuda or 'the CUDA torch was built with'}{what}: "
            "it loads the library of the CUDA torch was built with (torch.version.cuda, or BNB_CUDA_VERSION's override), "
            "and this release ships pre-compiled libraries for other CUDA versions only, so it cannot load its GPU code",
            f"install a release of {pkg or 'it'} that ships a library for CUDA {cuda or 'torch.version.cuda'} "
            "(pip install -U it), or a torch built for a CUDA it ships; unset BNB_CUDA_VERSION unless you mean it; or "
            "build it from source for this CUDA")


def _bnb_cpu(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """bitsandbytes-cpu-library where 0.37-0.41's CUDA SETUP line names the CPU library it loaded; None for the row's
    other messages (the row's own text)."""
    lib = h.groups.get("x_bnb_cpu_loaded", "")
    if not lib:
        return None
    pkg, who = _who(h, env)
    name = lib.replace("\\", "/").rsplit("/", 1)[-1]
    torch = env.version("torch")
    cpu_torch = torch.endswith("+cpu")
    return (f"{who or 'bitsandbytes'} loaded its CPU library ({name}), so its GPU functions (8-bit optimizers, 8-bit "
            "matmul, GPU quantization) are unavailable: releases 0.37-0.41 choose it where torch sees no GPU "
            "(torch.cuda.is_available() is False" + (f": torch {torch} is a CPU-only build" if cpu_torch else "")
            + ") or they find no libcuda.so / libcudart.so on the loader's paths (LD_LIBRARY_PATH, CONDA_PREFIX/lib, "
            "/usr/local/cuda/lib64)",
            ("install a CUDA build of torch (torch.cuda.is_available() must be True), then " if cpu_torch else
             "make torch see the GPU (torch.cuda.is_available() must be True) and put the directory holding libcudart.so "
             "on LD_LIBRARY_PATH, or ")
            + f"install {pkg or 'bitsandbytes'} 0.43 or newer (it uses torch's own CUDA); `python -m bitsandbytes` "
            "shows what it looked for")


def _toolkit(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """cuda-toolkit-not-found where Numba's CUDA target finds no NVVM (the toolkit's compiler library), or RETURNN finds
    the CUDA runtime it loaded in no CUDA toolkit."""
    if rt := h.groups.get("x_rn_cudart", ""):  # RETURNN: the loaded libcudart's parents hold no nvcc, cuda.h, libcudart.so
        return (f"RETURNN compiles its CUDA kernels with a CUDA toolkit and looks for it from the CUDA runtime the process "
                f"loaded, {rt}: no parent directory of it is a CUDA toolkit (bin/nvcc, include/cuda.h and the lib "
                "directory's libcudart.so together), so that runtime came with a package (Anaconda's cudatoolkit, a pip "
                "nvidia-cuda-runtime wheel), not a CUDA installation, and there is no nvcc to compile with",
                "install a CUDA toolkit of the CUDA the framework uses (its bin/nvcc, include and lib64) and put its "
                "lib64 first on LD_LIBRARY_PATH (its bin on PATH), so the runtime loaded is the toolkit's own")
    if "x_sgl_libdir" in h.groups:  # sgl-kernel's import: the CUDA toolkit directory it preloads libcudart.so.12 from
        return ("sgl_kernel (sgl-kernel's import, its __init__.py) looks for a CUDA toolkit to preload the CUDA runtime "
                "libcudart.so.12 from: CUDA_HOME or CUDA_PATH, else the directory above `which nvcc`, else /usr/local/cuda; "
                "that directory has no lib or lib64 and no libcudart.so.12 below it (no CUDA toolkit installed there: the "
                "pip wheels of torch carry the CUDA runtime, not a toolkit directory), so the import raises",
                "install a CUDA 12 toolkit (its lib64 holds libcudart.so.12) or point CUDA_HOME at a directory whose lib or "
                "lib64 holds it (the nvidia-cuda-runtime-cu12 wheel's site-packages/nvidia/cuda_runtime); or upgrade "
                "sgl-kernel, whose later releases only try that preload and do not raise")
    if "x_nvvm" not in h.groups and "x_libdevice" not in h.groups:
        return None
    pkg, who = _who(h, env)
    if "x_libdevice" in h.groups:  # NVVM loaded, but the toolkit's libdevice (nvvm/libdevice/libdevice.10.bc) is absent
        need = _first(h.groups, "x_libdevice_need", "x_libdevice_need2")
        return (f"{who or 'the CUDA JIT (numba)'} links every kernel it compiles at run time with libdevice "
                "(nvvm/libdevice/libdevice.10.bc, the CUDA toolkit's math library for NVVM), and found none where it looks "
                "(CUDA_HOME, the conda environment, the nvidia-cuda-nvcc wheel): the pip wheels of torch carry the CUDA "
                "runtime, not the toolkit's nvvm directory" + (f"; it asks for a CUDA toolkit {need} or newer" if need else ""),
                "install the CUDA toolkit's nvvm part for the CUDA in use (pip install the nvidia-cuda-nvcc wheel of that CUDA major, -cu12 for CUDA 12, or numba-cuda[cu12]; "
                "conda install -c conda-forge cuda-nvcc cuda-nvrtc; CUDA 11: cudatoolkit) or point CUDA_HOME at a full toolkit "
                "(one whose nvvm/libdevice holds libdevice.10.bc)")
    return (f"{who or 'the CUDA JIT'} compiles its kernels at run time with libNVVM, the CUDA toolkit's compiler "
            "library, and found none: the pip wheels of torch carry the CUDA runtime, not NVVM (no CUDA toolkit, or its "
            "nvvm/lib64 not where it looks)",
            "install a CUDA toolkit (or the nvidia-cuda-nvcc wheel of torch's CUDA major, which ships nvvm) and point "
            "CUDA_HOME at it (numba: NUMBA_CUDA_NVVM to the libnvvm path)")


def _nvrtc_arch(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """nvcc-unsupported-arch where NVRTC (the run-time compiler a package JIT-compiles its kernels with) refuses the
    GPU's architecture."""
    if "x_nvrtc" not in h.groups:
        return None
    pkg, who = _who(h, env)
    return (f"{who or 'the package'} JIT-compiles its kernels with NVRTC (libnvrtc of the CUDA release it was built "
            "for), and that NVRTC does not know this GPU's architecture: the CUDA release is older than the GPU",
            f"install the {pkg or 'package'} build for a CUDA release that supports this GPU (for a GPU newer than its "
            "CUDA major, the build for the next CUDA major) with that CUDA's NVRTC")


def _sci_tool(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """build-tool-missing in a source build's own words (llvmlite's llvm-config or CMake): pip builds the package because
    no wheel of it fits this Python and platform, and the build's toolchain is not there."""
    tool = _first(h.groups, "x_tool", "x_tool2", "x_tool4").replace("cmake", "CMake")
    if "x_pkg2" in h.groups:  # llvmlite's advice after its llvm-config search (its documentation's using-pip section)
        tool = "llvm-config"
    if not tool:
        return None
    pkg, who = _who(h, env)
    return (f"{who or 'the package'} is being built from source (no wheel of it fits this Python and platform, or its "
            f"source was asked for), and its build needs {tool}, which is not installed or not on PATH"
            + (" (the llvm-config of the one LLVM release it builds against)" if tool == "llvm-config" else ""),
            f"install a release of {pkg or 'the package'} that has a wheel for this Python and platform (or run a Python "
            "it publishes wheels for: a newer package release for a newer Python), so nothing is built; or install "
            + ("that LLVM release and set LLVM_CONFIG to its llvm-config" if tool == "llvm-config" else f"{tool} (pip "
               f"install {tool.lower()}, or the system's package) and build again"))


def _sci_python(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """python-version-unsupported in a setup.py's own guard (numba's, llvmlite's): the source build refuses this Python."""
    py, rng = _first(h.groups, "x_py"), _first(h.groups, "x_range").rstrip(".")
    if not py:
        return None
    pkg, who = _who(h, env)
    return (f"the setup.py of {who or 'the package being built'} refuses Python {py}: it supports only {rng}, and pip "
            f"built it from source because no wheel of that release fits Python {py} (a pin older than this Python)",
            f"install a release of {pkg or 'the package'} that supports Python {py} (a newer one, with wheels for it), or "
            f"run it on a Python within {rng}")


def _sox(h: Hit, env: Env) -> Cause:
    """system-lib-missing in torchaudio 2.1's words: its sox extension (libtorchaudio_sox.so, which links libsox.so) did
    not load, the sox library is not installed."""
    func = _first(h.groups, "x_sox_func")
    have = env.version("torchaudio")
    who = f"torchaudio {have}" if have else "torchaudio"
    return (f"{who}'s sox extension (torchaudio/lib/libtorchaudio_sox.so) links the system's sox library, libsox.so, "
            "which the wheel does not bundle, and it is not installed on this machine (or image), so the extension did "
            f"not load and {func + '()' if func else 'its sox I/O'} that needs it fails",
            "install the sox library with its unversioned libsox.so (Debian/Ubuntu: apt-get install sox libsox-dev; "
            "conda install -c conda-forge sox), or use another backend: torchaudio.load(..., backend=\"soundfile\") with "
            "the soundfile package, or the ffmpeg backend")


def _sci_geos(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """system-lib-missing in Shapely 1.x's loader's words: the GEOS C library it loads with ctypes is not there."""
    if _first(h.groups, "x_sox"):
        return _sox(h, env)
    lib = _first(h.groups, "x_geos")
    if not lib:
        return None
    pkg, who = _who(h, env)
    return (f"{who or 'the package'} loads the GEOS C library (lib{lib}) with ctypes and finds none of its variants "
            f"({_first(h.groups, 'x_variants') or 'none listed'}): this install has no bundled copy (a source or conda "
            "install without GEOS, or a platform without a wheel) and the system has no GEOS",
            f"install {pkg or 'the package'} from its wheel for this platform (which bundles GEOS), or install GEOS's C "
            "library (Debian/Ubuntu: apt-get install libgeos-c1v5 or libgeos-dev; conda install geos)")


def _header(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """build-header-missing where NVRTC compiles a kernel at run time and cannot open a CUDA header."""
    if (lib := _first(h.groups, "x_hlib", "x_hlib2")):  # a source build's own search for the library it compiles against
        pkg, who = _who(h, env)
        return (f"{who or 'the package'} is being built from source (no wheel of it fits this Python and platform, or "
                f"its source was asked for), and its build finds no {lib} installation (its headers and library) to "
                "compile against",
                f"install a release of {pkg or 'the package'} that has a wheel for this Python and platform, so nothing is "
                f"built; or install {lib}'s development files (Debian/Ubuntu: apt-get install lib{lib.lower()}-dev; conda "
                f"install {lib.lower()}) and point the build at them ({lib.upper()}_DIR=/path/to/{lib.lower()})")
    head = _first(h.groups, "x_header")
    if not head:
        return None
    pkg, who = _who(h, env)
    return (f"{who or 'the package'} compiles its kernels at run time with NVRTC, which includes {head} from the CUDA "
            "headers, and finds none: no CUDA toolkit's include directory (or the nvidia-cuda-runtime wheel's "
            "include) is where it looks",
            f"install the CUDA headers of the CUDA major {pkg or 'it'} was built for (a CUDA toolkit, or the "
            "nvidia-cuda-runtime wheel of that major with its include directory) and point CUDA_PATH at it")


def _build_cuda(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """flash-attn-build-cuda-too-old in the words of another package's setup.py (mamba-ssm's, causal-conv1d's)."""
    need = _first(h.groups, "x_need")
    pkg, who = _who(h, env)
    if not (need and pkg):
        return None
    nvcc = env.cuda.get("nvcc", "")
    built = torch_cuda(env, facts)
    fits = bool(built) and at_least(built, need)
    toolkit = f"the CUDA {built} toolkit (torch's own CUDA)" if fits else f"a CUDA toolkit >= {need} of torch's CUDA major"
    return (f"{pkg}'s setup.py builds its CUDA extension with the nvcc it finds (CUDA_HOME, else PATH) and refuses a "
            f"CUDA toolkit older than {need}{': the toolkit found is ' + nvcc if nvcc else ''}"
            + (f" (torch is built for CUDA {built})" if built else ""),
            f"point CUDA_HOME at {toolkit}, so that nvcc -V prints {built if fits else need + ' or newer'}, or install the prebuilt {pkg} wheel for "
            "the installed torch and CUDA")


def _dll(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """torch-dll-load-failed in the words of Python's own ctypes on Windows (a package's DLL loaded by path)."""
    dll = _first(h.groups, "x_dll")
    if not dll:
        return None
    name = dll.replace("\\\\", "\\").replace("/", "\\").rsplit("\\", 1)[-1]
    pkg, who = _who(h, env)
    return (f"Windows could not load {name}{' of ' + who if who else ''}, or a DLL it depends on: the file is there but "
            "a dependency is not (the Microsoft Visual C++ runtime, a CUDA DLL of the major it was built for, torch's own "
            "DLLs of the release it was built against)",
            "install the latest Microsoft Visual C++ Redistributable for x64, and the build of "
            f"{pkg or 'the package'} for the installed torch and CUDA; the Dependencies tool (lucasg/Dependencies) on "
            f"{name} names the one missing")


def _cc(x: str) -> str:
    """A compute capability as a library prints it (50, 80, 100) -> 5.0, 8.0, 10.0."""
    return f"{x[:-1]}.{x[-1]}"


def _natten_cc(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """gpu-capability-too-old in the words of a kernel library that names two floors (one per input type)."""
    low, high = _first(h.groups, "x_cc_min"), _first(h.groups, "x_cc_min2")
    if not low:
        return None
    pkg, who = _who(h, env)
    return (f"{who or 'the library'}'s fused kernels run only on GPUs of compute capability {_cc(low)} or newer for "
            f"FP16/FP32 inputs, and {_cc(high) if high else 'a higher one'} or newer for BF16: this GPU (or this input "
            "type on it) is below that; no package version changes that",
            f"use FP16/FP32 inputs on a GPU of compute capability {_cc(low)} or newer (BF16 needs "
            f"{_cc(high) if high else 'a newer GPU'}), or turn the fused kernels off for this GPU")


def _builtins(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """nvrtc-missing where NVRTC loaded but not its builtins library (NVRTC's own message); where the loader found no
    libnvrtc.so.<major> at all (its own line, fix-q), the words cuda-lib-missing's builder gives that library."""
    if lib := h.groups.get("x_nvl_lib", ""):
        g = {k: v for k, v in h.groups.items() if k not in ("x_nvl_lib", "x_nvl_major", "x_nvl_ldd")}
        g.update({"library": lib, **({"major": h.groups["x_nvl_major"]} if "x_nvl_major" in h.groups else {}),
                  **({"ldd": h.groups["x_nvl_ldd"]} if "x_nvl_ldd" in h.groups else {})})
        return CUDA_BUILDERS["cuda-lib-missing"](replace(h, groups=g), env, facts)
    lib = _first(h.groups, "x_builtins", "x_builtins2", "x_builtins3").rstrip(".")
    if not lib:
        return None
    if "x_builtins2" in h.groups:
        pkg, who = _who(h, env)
        return (f"NVRTC (the CUDA run-time compiler{' ' + who + ' uses' if who else ''}) found {lib} but cannot use it: "
                "the builtins library is of another CUDA release than libnvrtc (two CUDA installs mixed on the loader's "
                "path), or damaged",
                "keep one NVRTC on the loader's path: the nvidia-cuda-nvrtc wheel of the CUDA release the package was "
                "built for (reinstall it), without another CUDA toolkit's lib64 ahead of it in LD_LIBRARY_PATH")
    pkg, who = _who(h, env)
    tail = lib.split("builtins", 1)[1].rsplit("_", 1)[-1]  # .so.12.1, or 64_121.dll on Windows
    ver = "".join(c for c in tail if c.isdigit() or c == ".").strip(".")
    cuda = ver if "." in ver else (f"{ver[:-1]}.{ver[-1]}" if len(ver) >= 2 else "")
    return (f"NVRTC (the CUDA run-time compiler{' ' + who + ' uses' if who else ''}) loaded, but not its builtins "
            f"library {lib}{' of CUDA ' + cuda if cuda else ''}: libnvrtc and libnvrtc-builtins come together (the "
            "nvidia-cuda-nvrtc wheel, or a CUDA toolkit's lib64), and this one is missing or not on the loader's path",
            f"install the nvidia-cuda-nvrtc wheel of CUDA {cuda or 'the release libnvrtc is of'} (or the CUDA toolkit "
            "that ships it) and put its lib directory on the loader's path")


def _hdf5(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """hdf5-version-mismatch: the HDF5 a module was built against and the one loaded, as h5py's warning or HDF5's own
    check prints them (the headers' release first)."""
    g = h.groups
    built, run = _first(g, "hdf5_built", "hdf5_headers"), _first(g, "hdf5_run", "hdf5_lib")
    if not built:
        return None
    pkg, who = _who(h, env)
    subject = who or g.get("hdf5_h5py") or "a compiled module"
    return (f"{subject} was built against HDF5 {built} and runs against the HDF5 {run} library: two HDF5 installations "
            "meet in this process (a pip wheel's bundled libhdf5 beside a conda or system HDF5, or LD_LIBRARY_PATH "
            "pointing at another), and HDF5 "
            + ("warns of the mismatch (data may be corrupted or the process may crash)" if "hdf5_h5py" in g else
               "aborts on the mismatch (\"Bye...\", unless HDF5_DISABLE_VERSION_CHECK is set)"),
            f"install every package that uses HDF5 from one source (all from conda-forge, or all as pip wheels, each "
            f"with its own HDF5), so the HDF5 {built} the module was built for is the one loaded; take the other HDF5's "
            "directory out of LD_LIBRARY_PATH (HDF5_DISABLE_VERSION_CHECK=1 only silences the check)")


def _cutlass_arch(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """cutlass-arch-conditional: a CUTLASS / CuTe kernel's error path, compiled in where its arch-specific target was
    not; the target the log's nvcc command built for (the ``nvcc_arch`` note) is named, with the target it needed."""
    built = env.notes.get("nvcc_arch", "")
    g = h.groups
    need = g.get("x_cutlass_need", "") or ("the architecture-specific target" if "x_cutlass_mma" in g else "")
    macro = _first(g, "x_cute_macro", "x_cute_macro2")
    what = (f"the CuTe operation {g['x_cute_op'].strip()} needs {macro}" if g.get("x_cute_op") else
            f"CuTe's TMA needs {macro}" if macro else
            "the CUTLASS kernel uses arch-conditional MMA instructions (wgmma, tcgen05, the block-scaled MMA)")
    if built:
        num = built.split("_", 1)[1].rstrip("af")
        here = (f"it was compiled for {built}, the portable target without the 'a' suffix, where those instructions "
                f"do not exist: the kernel was built empty and runs its error path" if not built.endswith(("a", "f"))
                else f"the build command shown targets {built}; the kernel was compiled for another architecture's "
                "target than the one its instructions need (the log's first build target may not be this kernel's)")
        return (f"{what}, which CUTLASS enables only for {need or 'the architecture-specific target'} (sm_{num}a for this "
                f"build's architecture); {here}",
                f"compile for the architecture-specific target: nvcc -gencode arch=compute_{num}a,code=sm_{num}a "
                f"(CMake: CUTLASS_NVCC_ARCHS={num}a or CMAKE_CUDA_ARCHITECTURES={num}a) instead of {built}")
    return (f"{what}, which CUTLASS enables only for {need or 'the architecture-specific target'} (sm_90a, sm_100a, "
            "sm_120a: the 'a' suffix); the kernel was compiled for a target without it, so it was built empty and runs "
            "its error path", h.remedy)


def _nccl_arch(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """gpu-arch-not-in-build from NCCL's own CUDA check of its kernels (NCCL_DEBUG=WARN's "Cuda failure 'named symbol
    not found'", 'invalid device function', 'no kernel image ...'): the NCCL build carries no code for the GPU, named
    only where the log shows what the build targeted (the ``nvcc_arch`` note: NVCC_GENCODE's first -gencode) or the
    GPU; None otherwise (the same CUDA error has other causes)."""
    g = h.groups
    if "x_fmha_kernel" in g or "x_fmha_min2" in g:
        return _fmha_arch(h, env)
    err = g.get("x_nccl_arch", "").strip()
    if not err:
        return None
    built = env.notes.get("nvcc_arch", "")
    gpu = named_gpu(env, facts)
    if not built and gpu is None:
        return None
    if built and gpu is not None and built.split("_", 1)[1].rstrip("af") == gpu[1]:
        return None  # the build's target is the GPU's own: its kernels are there, the failure is another's
    on = ""
    if gpu is not None:
        cc = f"compute capability {gpu[1][:-1]}.{gpu[1][-1]}, sm_{gpu[1]}" if gpu[1].isdigit() else ""
        on = f" on the {gpu[0]} ({cc})" if gpu[0] and cc else f" on the {gpu[0]}" if gpu[0] else f" on a GPU of {cc}"
    target = (f"the NCCL build was compiled for {built} (NVCC_GENCODE / -gencode: the first target the log's build "
              "command names)" if built else "the NCCL build (a source build of libnccl) carries no code for it")
    num = gpu[1] if gpu is not None and gpu[1].isdigit() else "XX"
    return (f"NCCL failed to set up its kernels{on} with \"Cuda failure '{err}'\": {target}, and CUDA finds no kernel "
            f"image for this GPU in it (NCCL's device code is compiled only for the NVCC_GENCODE targets, and cubins "
            f"run only on their own architecture), so every collective fails",
            f"rebuild NCCL with the GPU's architecture among its targets (make -j src.build NVCC_GENCODE=\"-gencode="
            f"arch=compute_{num},code=sm_{num}\", keeping {built or 'the other targets'} for other GPUs; with "
            "NVCC_GENCODE unset NCCL builds every architecture its CUDA toolkit supports), or use a prebuilt NCCL built "
            "for it (the nvidia-nccl wheel torch pins)")


def _fmha_arch(h: Hit, env: Env) -> Cause | None:
    """gpu-arch-not-in-build from the memory-efficient attention kernels' own check of the architecture their code was
    compiled for ("FATAL: kernel `fmha_cutlassF_..._sm80` is for sm80-sm100, but was built for sm70"; xFormers 0.0.16's
    "this function is for sm80, but was built for sm700"): the kernel the dispatcher chose for the GPU ran as code of an
    older architecture, so the build has no image of the GPU's own; None where the code is newer than the kernel's
    range (the kernels stop below that GPU: no architecture was left out of a build)."""
    g = h.groups
    low = g.get("x_fmha_min") or g.get("x_fmha_min2", "")
    built = g.get("x_fmha_built") or g.get("x_fmha_arch2", "")
    if not (low.isdigit() and built.isdigit()):
        return None
    arch = int(built) // 10 if "x_fmha_arch2" in g and int(built) >= 100 else int(built)  # 0.0.16 prints __CUDA_ARCH__
    if arch >= int(low):
        return None
    kernel = g.get("x_fmha_kernel", "")
    span = f"sm{low}-sm{g['x_fmha_max']}" if g.get("x_fmha_max") else f"sm{low}"
    pkg = h.package if h.package in ("xformers", "torch") else ""
    ver = env.version(pkg) if pkg else ""
    if pkg == "torch":
        who = (f"torch{' ' + ver if ver else ''}'s memory-efficient attention (scaled_dot_product_attention's "
               "EFFICIENT backend, CUTLASS kernels it carries from xformers)")
        fix = ("install a torch build whose architectures include the GPU's (PyTorch's CUDA wheels for the driver's "
               "CUDA; torch.cuda.get_arch_list() lists a build's), or rebuild torch with TORCH_CUDA_ARCH_LIST naming "
               "the GPU's compute capability")
    else:
        who = (f"xformers{' ' + ver if ver else ''}' memory-efficient attention (its CUTLASS kernels, 0.0.17 to 0.0.28; "
               "torch 2.x carries the same kernels in scaled_dot_product_attention's memory-efficient backend)"
               if pkg else "xformers' memory-efficient attention (its CUTLASS kernels, 0.0.17 to 0.0.28; torch 2.x carries "
               "the same kernels in scaled_dot_product_attention's memory-efficient backend)")
        fix = ("install an xformers build made for the installed torch and CUDA that includes the GPU's architecture "
               "(the xformers wheel from PyTorch's index for torch's CUDA), or rebuild it with TORCH_CUDA_ARCH_LIST naming "
               "the GPU's compute capability (8.0 for an A100: TORCH_CUDA_ARCH_LIST=\"8.0\" pip install "
               "--no-build-isolation -v -U git+https://github.com/facebookresearch/xformers.git)")
    named = f"kernel {kernel}" if kernel else "kernel"
    return (f"{who}: the {named} is for GPUs of {span} and ran as code built for sm{arch}: the build carries no image "
            f"of this GPU's architecture (sm{low} or newer), so CUDA ran the sm{arch} code (its PTX compiled at load) in "
            "which that kernel is compiled out, and the attention's output is wrong or empty",
            fix)


# signature id -> its cause builder for the new rows (:data:`glmcompat.decide.diagnose.BUILDERS` holds these)
EXT_BUILDERS: dict[str, Callable[[Hit, Env, Facts], Cause | None]] = {
    "extension-cuda-mismatch": _cuda_mismatch,
    "extension-not-built": _not_built,
    "extension-torch-version-missing": _torch_version_missing,
    "duplicate-package-distributions": _duplicates,
    "hdf5-version-mismatch": _hdf5,
    "cutlass-arch-conditional": _cutlass_arch,
}
# existing rows widened with x_ alternatives -> the builder of those alternatives (the row's own builder otherwise)
_WIDENED: dict[str, Callable[[Hit, Env, Facts], Cause | None]] = {
    "version-requirement-unmet": _version_check,
    "cuda-lib-missing": _cuda_lib,
    "bitsandbytes-cuda-setup": _bnb_cuda,
    "bitsandbytes-cpu-library": _bnb_cpu,
    "cuda-toolkit-not-found": _toolkit,
    "nvcc-unsupported-arch": _nvrtc_arch,
    "build-header-missing": _header,
    "flash-attn-build-cuda-too-old": _build_cuda,
    "torch-dll-load-failed": _dll,
    "gpu-capability-too-old": _natten_cc,
    "nvrtc-missing": _builtins,
    "build-tool-missing": _sci_tool,
    "python-version-unsupported": _sci_python,
    "system-lib-missing": _sci_geos,
    "gpu-arch-not-in-build": _nccl_arch,
}


def ext_cause(h: Hit, env: Env, facts: Facts) -> Cause | None:
    """The cause of a widened row's ``x_`` alternative, or None (the row's own builder then)."""
    build = _WIDENED.get(h.id)
    if build is None or not any(k.startswith("x_") for k in h.groups):
        return None
    return build(h, env, facts)


__all__ = ["EXT_BUILDERS", "ext_cause", "ext_package"]
