"""The causes the first runs of held-out sets CH and CI showed unnamed or named too loosely (issue 38, fix-p), each read
from its raise site: a loader's line cut after the library's name, uv's requirement with its markers, torch's
unsupported-GPU warning pasted from its second line, a pyarrow type's size check in a module built against another
pyarrow, pyarrow's dtype check compiled against an old NumPy, ld64's missing library; and where the log carries the
evidence of a sharper cause than a signature's own reading: torch's kernels failing on a GPU its own check calls too
old (gpu-capability-too-old), a CUDA runtime file named for a release whose version node it lacks
(extension-cuda-mismatch), TensorFlow's start-up probe of libcudart that TensorFlow itself says to ignore without a GPU.
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from glmcompat.decide.cudacauses import gpu_by_name, installed_torch, torch_cuda, torch_with_code
from glmcompat.decide.logenv import Env
from glmcompat.decide.logenv import shown as _shown
from glmcompat.matrix.view import Facts
from glmcompat.model.causes import CAUSE_OF
from glmcompat.model.signatures import Hit

Builder = Callable[[Hit, Env, Facts], "tuple[str, str] | None"]

# a signature's alternative whose groups are another alternative's under other names (a group name is never used twice
# in one pattern): signature -> {its group: the group the builders read}
ALIASES = {
    # glibc's loader line cut after the library's name ("error while loading shared libraries: libnvrtc.so.10.1")
    "cuda-lib-missing": {"cut_loader_lib": "library", "cut_loader_major": "major"},
    "cudart-missing": {"cut_loader_cudart": "library"},
    # uv's requirement with its markers ("nvidia-cuda-nvrtc-cu12{platform_machine == 'x86_64' ...}==12.8.93")
    "wheel-not-supported": {"uv_mk_tag": "uv_tag", "uv_mk_eg": "uv_eg", "uv_mk_other": "uv_tag_other"},
    # uv's installer hint ("You're using CPython 3.13 (`cp313`), but `torch` (v2.3.0) only has wheels with the following
    # Python ABI tag: `cp312`"): the resolver hint's words ("You require ..."), read the same (fix-s)
    "python-version-unsupported": {"use_impl": "hint_impl", "use_python": "hint_python", "use_tag": "hint_tag",
                                   "use_pkg": "hint_pkg", "use_ver": "hint_ver", "use_tags": "hint_tags"},
}


def aliased(h: Hit) -> Hit:
    """``h`` with its alternative's groups under the names the builders read (:data:`ALIASES`); uv's marked requirement
    as uv prints it without its markers (``nvidia-cuda-nvrtc-cu12==12.8.93``), its ``uv_pkg``."""
    names = ALIASES.get(h.id)
    if not names or not names.keys() & h.groups.keys():
        return h
    groups = dict(h.groups)
    for own, read in names.items():
        if own in groups and read not in groups:
            groups[read] = groups[own]
    if "uv_mk_name" in groups and "uv_pkg" not in groups:
        groups["uv_pkg"] = groups["uv_mk_name"] + groups.get("uv_mk_spec", "")
    return replace(h, groups=groups)


# --- torch's unsupported-GPU warning from its second line on (torch/cuda/__init__.py _check_cubins, and torch 2.13's
# _warn_unsupported_code): the arch list it prints, the GPU it names in its last sentence, the build it names ----------
CUBIN_GROUPS = frozenset({"cubin_list", "cubin_gpu", "wu_torch", "wu_none", "wu_list"})


def _first(h: Hit, group: str) -> str:
    """The group's value in the hit's first match, else in a later one's (the warning's lines are one hit)."""
    return (h.groups.get(group) or next(iter(h.also.get(group, ())), "")).strip()


def cubin_warning(build: Builder) -> Builder:
    """torch-arch-unsupported's builder, reading also torch's warning without its head (the line naming the GPU and its
    capability): its arch list, the GPU its last sentence names, and torch 2.13's build line; the rest to ``build``."""
    def wrapped(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        if not CUBIN_GROUPS & (h.groups.keys() | h.also.keys()) or h.groups.get("sm") or h.groups.get("cut_sm") or \
                h.groups.get("cc") or h.groups.get("old_cc"):
            return build(h, env, facts)
        return _cubin(h, env, facts)
    return wrapped


def _cubin(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    listed = _first(h, "cubin_list")
    name = _first(h, "cubin_gpu") or env.notes.get("gpu_name", "")
    torch = h.groups.get("wu_torch") or h.groups.get("wu_none") or env.version("torch")
    if not (listed or name or torch):
        return None
    build = installed_torch(torch, torch_cuda(env, facts))
    found = gpu_by_name(name, "", facts) if name else None
    sm = found[1] if found is not None else ""
    gpu = name or "the GPU"
    code = f"code only for {', '.join(listed.split())} (the arch list its warning prints)" if listed else "no code for it"
    cause = (f"{build} carries {code}, and its check at CUDA initialization finds none of it for {gpu}"
             + (f" (compute capability {sm[:-1]}.{sm[-1]}, sm_{sm})" if sm else "")
             + ": torch.cuda's check warns that the GPU is not compatible with this installation, and every CUDA kernel "
             "launch of torch then fails ('no kernel image is available')")
    if sm:
        pick = torch_with_code(sm, torch, facts)
        if pick is not None:
            ver, variant, cuda = pick
            return cause, (f"install torch=={ver}{'+' + variant if variant else ''} (a build for CUDA {cuda} that carries "
                           f"sm_{sm} code), with torchvision/torchaudio of the same build")
    newest = max((a for a in listed.split() if a.startswith("sm_")), key=lambda a: int(re.sub(r"\D", "", a) or 0), default="")
    return cause, ("find the GPU's compute capability (nvidia-smi --query-gpu=compute_cap --format=csv) and install a torch "
                   "build whose arch list (torch.cuda.get_arch_list()) includes it"
                   + (f": the installed build's newest is {newest}, so a GPU newer than that needs a build for a newer CUDA "
                      "(PyTorch's cu118 or newer index for an RTX 30 / Ampere GPU, cu128 or newer for an RTX 50 / Blackwell "
                      "one)" if newest else "")
                   + "; `glmcompat arch torch==<version>` lists a wheel's")


# --- torch's kernels on a GPU torch's own check calls too old: gpu-capability-too-old ---------------------------------
_TORCH_MIN = re.compile(r"minimum cuda capability supported by this library is (?P<min>\d{1,2}\.\d)")


def old_gpu_launch(h: Hit, hits: Sequence[Hit], env: Env, facts: Facts) -> Hit:
    """A no-kernel-image of torch's own kernels (no extension named) where the log's torch warned at CUDA initialization
    that the GPU is older than every capability it supports (its old_gpu_warn: "Found GPU0 <name> which is of cuda
    capability 3.0. PyTorch no longer supports this GPU because it is too old."): gpu-capability-too-old, the GPU below
    the build's floor, which is why its kernels have no image for it."""
    if h.id != "no-kernel-image" or h.package not in ("", "torch"):
        return h
    warned = next((o for o in hits if o.id == "torch-arch-unsupported" and o.groups.get("old_cc")), None)
    if warned is None or not ("too_old" in warned.groups or warned.also.get("too_old") or "too old" in warned.text):
        return h
    cc, name = warned.groups["old_cc"], warned.groups.get("old_gpu", "").strip() or "the GPU"
    floor = env.notes.get("torch_min_cc") or (m.group("min") if (m := _TORCH_MIN.search(warned.text)) is not None else "")
    sm = cc.replace(".", "")
    torch = env.version("torch")
    build = installed_torch(torch, torch_cuda(env, facts))
    cause = (f"{name} is of compute capability {cc} (sm_{sm}), older than the oldest capability {build} supports"
             + (f" ({floor})" if floor else "")
             + ": torch's own check at CUDA initialization says so (\"PyTorch no longer supports this GPU because it is too "
             "old\"), its builds carry no code for it, so each of its CUDA kernels fails to launch ('no kernel image is "
             "available for execution on the device')")
    pick = torch_with_code(sm, torch, facts) if sm.isdigit() else None
    last = facts.cuda_archs("last").get(sm, "")
    newer = f"of compute capability {floor} or newer" if floor else "this torch supports (a newer architecture)"
    if pick is not None:
        ver, variant, cuda = pick
        remedy = (f"install torch=={ver}{'+' + variant if variant else ''}, a build for CUDA {cuda} that still carries "
                  f"sm_{sm} code, or run on a GPU {newer}")
    else:
        remedy = (f"no torch wheel the matrix records carries sm_{sm} code: build torch from source with "
                  f"TORCH_CUDA_ARCH_LIST={cc}" + (f" and a CUDA toolkit that still targets it (CUDA {last} or older)" if last
                                                  else "")
                  + f", or run on a GPU {newer}")
    return replace(h, id="gpu-capability-too-old", cause=cause, remedy=remedy, package="torch",
                   groups={**h.groups, "torch_floor_gpu": name, "torch_floor_cc": cc}, rule=CAUSE_OF.get("gpu-capability-too-old", ""))


# --- a CUDA runtime file named for a release whose version node it lacks: extension-cuda-mismatch --------------------
_CUDART_NODE = re.compile(r"libcudart\.so\.\d{1,4}(?:\.\d{1,4})?")
_TORCH_OWN = re.compile(r"^lib(?:torch|c10|caffe2|cu|nv|nccl)")


def renamed_runtime(h: Hit, env: Env, facts: Facts) -> Hit:
    """cuda-toolkit-clash of glibc's "<provider>: version `libcudart.so.X' not found (required by <module>)" where the
    provider's own file name is that soname and the module is a package's extension (not torch's or NVIDIA's library):
    every CUDA runtime defines one version node, named as its soname, so a file of that name without it is another
    release's runtime put in its place (a symlink or copy): the extension was built for another CUDA than the
    environment's, extension-cuda-mismatch."""
    g = h.groups
    node, provider, requirer = g.get("vn_node", ""), g.get("vn_provider", ""), g.get("vn_requirer", "")
    if h.id != "cuda-toolkit-clash" or not _CUDART_NODE.fullmatch(node) or not provider:
        return h
    if provider.replace("\\", "/").rsplit("/", 1)[-1] != node:
        return h
    module = requirer.replace("\\", "/").rsplit("/", 1)[-1]
    if not module or _TORCH_OWN.match(module) or h.package in ("", "torch"):
        return h
    release = node.removeprefix("libcudart.so.")
    pkg = _shown(h.package, env.version(h.package))
    cause = (f"{pkg}'s compiled module {module} was built against CUDA {release}'s runtime (it needs the version node "
             f"{node}, which every libcudart of that release defines, named as its soname), and the file the loader found "
             f"under that name, {provider}, lacks it: it is another CUDA release's libcudart put in its place (a symlink "
             f"or copy), so {h.package} was built for another CUDA than the environment's")
    remedy = (f"rebuild or reinstall {h.package} against the environment's CUDA (its build of the CUDA torch and the "
              f"toolkit here use), or install CUDA {release}'s own runtime and remove the file named {node} that is not "
              f"it ({provider}); `ls -l {provider}` shows what it links to")
    return replace(h, id="extension-cuda-mismatch", cause=cause, remedy=remedy,
                   groups={**g, "renamed_runtime": provider}, rule=CAUSE_OF.get("extension-cuda-mismatch", ""))


# --- TensorFlow's start-up probe of libcudart ---------------------------------------------------------------------
def tf_probe_notice(out: list[Hit], env: Env) -> list[Hit]:
    """``out`` without cudart-missing's reading of TensorFlow's dso_loader line ("Could not load dynamic library
    'libcudart.so.11.0'") where the log shows TensorFlow's own notice after it ("Ignore above cudart dlerror if you do
    not have a GPU set up on your machine": its import probes the CUDA runtime, and runs on the CPU without one) and no
    failure of TensorFlow's GPU set-up ("Cannot dlopen some GPU libraries", read by cuda-lib-missing, which stays)."""
    if "tf_cudart_notice" not in env.notes or any("fx_scene_tf" in o.groups for o in out):
        return out
    return [o for o in out if not (o.id == "cudart-missing" and "fwpkg_tensorflow" in o.groups)]


# --- builders of the rows' new alternatives ------------------------------------------------------------------------
def _pyarrow_abi(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """pyarrow-abi: the type, its sizes, and the module's package (the traceback's) against the installed pyarrow."""
    g = h.groups
    kind = f"{g.get('pa_module', 'pyarrow.lib')}.{g.get('pa_type', '')}"
    header = g.get("pa_header") or g.get("pa_old_header", "")
    running = g.get("pa_object") or g.get("pa_old_object", "")
    pkg = h.package if h.package and h.package != "pyarrow" else ""
    who = _shown(pkg, env.version(pkg)) if pkg else "a compiled (Cython) module"
    pa = env.version("pyarrow")
    installed = f"the installed pyarrow {pa}" if pa else "the installed pyarrow"
    sizes = (f" ({header} bytes in the pyarrow headers it was compiled with, {running} in {installed})"
             if header and running else "")
    return (f"{who} was built against another pyarrow release than {installed}: it cimports pyarrow's extension type "
            f"{kind}, whose C struct has another size{sizes}, and Cython's check at import refuses to load a module "
            "whose cimported type changed size",
            f"install the pyarrow release {pkg or 'the module'} was built against (its Requires-Dist pins the range: "
            f"pip install {pkg + ' ' if pkg else ''}again so that pip resolves pyarrow with it) and make sure no other "
            f"pyarrow earlier on sys.path (a runtime's own) shadows it; or install the {pkg or 'module'} release built "
            f"for {installed}")


def descr_check(build: Builder) -> Builder:
    """numpy-too-new's builder, reading also pyarrow's refusal of a NumPy dtype as no numpy.dtype (a pyarrow compiled
    against NumPy < 1.16.6, whose PyArray_DescrCheck tested the exact type, under NumPy >= 1.20, whose dtypes are
    instances of subclasses of np.dtype); the rest to ``build``."""
    def wrapped(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        if "pa_descr" not in h.groups:
            return build(h, env, facts)
        np, pa = env.version("numpy"), env.version("pyarrow")
        column = h.groups.get("pa_column", "").strip()
        return (f"{_shown('pyarrow', pa)} was compiled against a NumPy older than 1.16.6, whose PyArray_DescrCheck tests "
                f"a dtype's exact type, and the installed {_shown('numpy', np) if np else 'NumPy'} (1.20 or newer) makes "
                "each dtype an instance of a subclass of np.dtype: pyarrow refuses the "
                f"{h.groups.get('pa_dtype', '')} dtype of column {column} as no numpy.dtype object, so every pandas "
                "conversion to Arrow fails",
                "upgrade pyarrow to a release built against NumPy 1.16.6 or newer (pyarrow 3.0 or newer: pip install -U "
                "pyarrow), or pin numpy<1.20 where that pyarrow must stay")
    return wrapped


def ld64_library(build: Builder) -> Builder:
    """link-library-missing's builder, reading also macOS ld64's words ("ld: library not found for -lcuda"); the rest to
    ``build``."""
    def wrapped(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        lib = h.groups.get("ld64_lib", "")
        if not lib:
            return build(h, env, facts)
        if lib == "cuda":
            return ("the link asks for -lcuda (libcuda.dylib, the CUDA driver library) and macOS's linker (ld64) finds no "
                    "libcuda.dylib, .tbd or .a in any directory it searches: the link's -L options do not name the CUDA "
                    "installation's library directory (its lib, /usr/local/cuda/lib for NVIDIA's installer), or no CUDA "
                    "driver for macOS is installed (NVIDIA's last, with CUDA 10.2, for macOS 10.13)",
                    "pass the CUDA library directory to the link (LDFLAGS=-L/usr/local/cuda/lib, or the package's "
                    "library_dirs / CUDA_HOME setting), with the CUDA driver for macOS installed; on a Mac without an "
                    "NVIDIA GPU and driver, build without the CUDA part")
        return (f"the link asks for -l{lib} and macOS's linker (ld64) finds no lib{lib}.dylib, .tbd or .a in any "
                "directory it searches (the -L options, then /usr/lib and /usr/local/lib): the library is not installed, "
                "or its directory is not passed with -L",
                f"install lib{lib} (Homebrew or the vendor's installer) and pass its lib directory to the link "
                f"(LDFLAGS=-L<prefix>/lib, or LIBRARY_PATH)")
    return wrapped


# the groups of a hit refined here whose cause and remedy are already built (old_gpu_launch, renamed_runtime): the row's
# own builder does not rebuild them
REFINED = frozenset({"torch_floor_gpu", "renamed_runtime"})


def refined(build: Builder) -> Builder:
    """``build``, except for a hit this module refined into its signature (its cause and remedy kept)."""
    def wrapped(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        if REFINED & h.groups.keys():
            return h.cause, h.remedy
        return build(h, env, facts)
    return wrapped


SHARP_BUILDERS: dict[str, Builder] = {"pyarrow-abi": _pyarrow_abi}
# signature id -> the wrapper that reads its new alternatives before its own builder (glmcompat.decide.diagnose.BUILDERS)
SHARP_WRAPPERS: dict[str, Callable[[Builder], Builder]] = {
    "torch-arch-unsupported": cubin_warning,
    "numpy-too-new": descr_check,
    "link-library-missing": ld64_library,
    "gpu-capability-too-old": refined,
    "extension-cuda-mismatch": refined,
}


__all__ = ["ALIASES", "SHARP_BUILDERS", "SHARP_WRAPPERS", "aliased", "old_gpu_launch", "renamed_runtime",
           "tf_probe_notice"]
