"""Causes of the frameworks users run beside (or instead of) torch: TensorFlow's and XLA's CUDA loading and version
checks, JAX and its CUDA plugin, onnxruntime-gpu's execution providers, TensorRT, PaddlePaddle
(glmcompat/matrix/data/frameworks-signatures.toml).

Those rows carry what they name in their groups: ``fwpkg_<dist>`` names the package (its ``_`` read as ``-``, a
trailing ``_`` ending a name whose last character is a digit, ``fwpkg_ctranslate2_``: the row's
data, never this code, spells it), the other ``fx_`` groups the library and the versions the log prints, and an
``fx_notice`` group marks a notice the row reads only so that no narrower row claims it. A row that widens a signature of another file
(the matrix admits one row per signature) takes its cause from :data:`WIDENED`, or from that signature's own builder where it
reads the framework's line; the log's facts follow the cause; a notice is dropped."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from glmcompat.decide.logenv import Env
from glmcompat.matrix.view import Facts
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import Hit

Builder = Callable[[Hit, Env, Facts], "tuple[str, str] | None"]
PACKAGE = "fwpkg_"
FACT = "fx_"
NOTICE = "fx_notice"
_INDEX = re.compile(r"\d+$")  # fx_cc2, fwpkg_tensorflow2: the same group in another alternative of the row

# a fact group -> how the cause says it ({} the value)
LABELS = {
    "lib": "it asks for {}", "dll": "it asks for {}", "lib3": "it asks for {}", "provider_lib": "loading {}",
    "provider_dll": "loading {}", "comp": "the library checked: {}", "found": "found {}", "built": "built against {}",
    "have": "installed {}", "need": "needs {}", "plugin": "plugin {}", "cc": "the GPU's compute capability {}",
    "cc_built": "the engine built for compute capability {}", "min": "the oldest it supports: compute capability {}",
    "device": "device {}", "gpuarch": "the GPU's architecture {}", "archs": "the build's architectures {}",
    "isa": "instructions {}", "kernel": "kernel module {}", "dso": "libcuda.so.1 {}", "provider": "the provider asked for {}",
    "available": "available: {}", "cuda_need": "it needs CUDA {}", "cudnn_need": "it needs cuDNN {}",
    "arch": "the GPU architecture ptxas does not know: {}", "symbol": "it calls {}", "cudnn": "it requires cuDNN {}.x",
    "cuda": "and CUDA {}.x", "dnn": "{}", "ggml_arch": "its build has no CUDA architecture at or below {}",
    "ir": "the model's IR version {}", "ir_max": "the newest IR version this build reads: {}",
    "max": "the newest its build supports: compute capability {}",
    "sm": "the GPU's SM {}",
    "op": "it calls graphbolt::{}, an operator only its CUDA build registers",
    "dgl_dll": "{} did not load: a CUDA build's dgl.dll links the CUDA runtime, cuBLAS, cuSPARSE and cuRAND DLLs of its "
               "CUDA major, which the dgl wheel does not ship",
}
# a group marking a library that several programs bundle (ggml: llama.cpp, ollama): the row names no package, the
# package the log's paths named for the hit is kept
NAMED = "fx_named"
LIBRARIES = ("lib", "dll", "lib3")  # the fact groups that hold a library's name
# JAX's version numbers as its CUDA libraries report them -> (divisors) of major, minor, patch
_ENCODED = {"CUDA": (1000, 10), "cuDNN": (1000, 100, 1), "cuBLAS": (10000, 100, 1), "cuFFT": (1000, 100, 1),
            "cuSOLVER": (1000, 100, 1), "cuSPARSE": (1000, 100, 1)}


def _decoded(component: str, number: str) -> str:
    """``12010`` of CUDA -> ``12010 (12.1)``: the encoded version as JAX prints it, with its release."""
    div = _ENCODED.get(component)
    if div is None or not number.isdigit():
        return number
    n = int(number)
    if component == "cuDNN" and n >= 90000:  # cuDNN 9 numbers itself major*10000 + minor*100 + patch (90501: 9.5.1)
        div = (10000, 100, 1)
    parts = [str(n // div[0])]
    rest = n % div[0]
    for d in div[1:]:
        parts.append(str(rest // d))
        rest %= d
    return f"{number} ({'.'.join(parts)})"


def framework_package(h: Hit) -> str | None:
    """The package the row's ``fwpkg_`` group names; "" for a framework row that names none; None for another row."""
    names = [k for k in h.groups if k.startswith(PACKAGE)]
    if names:
        return canonicalize(_INDEX.sub("", names[0][len(PACKAGE):]).replace("_", "-").strip("-"))
    return "" if any(k.startswith(FACT) for k in h.groups) else None


def notice(h: Hit) -> bool:
    """Whether the hit is a notice a framework row read (never reported)."""
    return any(k.startswith(NOTICE) for k in h.groups)


# a CUDA library's soname (or Windows DLL name) whose major is the CUDA major it belongs to (CUDA 11 and later: cuBLAS,
# the runtime, NVRTC, cuSPARSE; cuFFT, cuRAND and cuSOLVER number their own majors), and cuDNN's, which is cuDNN's own
_CUDA_MAJOR = re.compile(r"(?:lib(?:cudart|cublasLt|cublas|nvrtc|cusparse)\.so\.|(?:cudart|cublasLt|cublas|nvrtc|cusparse)64_)(?P<m>1[1-9])")
_CUDNN_MAJOR = re.compile(r"(?:libcudnn\w{0,30}\.so\.|cudnn\w{0,30}64_)(?P<m>\d{1,2})(?!\d)")


def _built_for(library: str) -> str:
    """What a library's name says it was built for: ``libcublasLt.so.11`` -> CUDA 11, ``libcudnn.so.8`` -> cuDNN 8."""
    if (m := _CUDA_MAJOR.search(library)) is not None:
        return f"CUDA {m.group('m')}"
    if (m := _CUDNN_MAJOR.search(library)) is not None:
        return f"cuDNN {m.group('m')}"
    return ""


def _facts(h: Hit) -> list[str]:
    groups = {_INDEX.sub("", k[len(FACT):]): v for k, v in h.groups.items() if k.startswith(FACT) and v}
    comp = groups.get("comp", "")
    out = []
    for key in ("lib", "dll", "lib3"):
        if groups.get(key) and (major := _built_for(groups[key])):
            out.append(f"{groups[key]} is {major}'s")
    for key, value in groups.items():
        label = LABELS.get(key)
        if label is None:
            continue
        if key in ("found", "built") and comp:
            value = _decoded(comp, value)
        if key == "sm":  # TensorRT's 0x<major><minor:02x>: 0x809 is compute capability 8.9
            value = f"{value} (compute capability {int(value, 16) >> 8}.{int(value, 16) & 0xFF})"
        out.append(label.format(value.strip()))
    return out


# the causes and remedies of the framework alternatives that widen a row of another file (the matrix admits one row
# per id): glmcompat/matrix/data/frameworks-signatures.toml's header names them
WIDENED = {
    'cudart-missing': (
        "the framework could not load the CUDA runtime (libcudart) of the CUDA release its build was made for (tensorflow's DSO loader, onnxruntime-gpu's CUDA execution provider, paddlepaddle-gpu's loader): no CUDA runtime of that major (CUDA 10 and older: of that release) is on the loader's path, the framework being built for another CUDA than the machine has, so the GPU is not used",
        "install the framework build for the CUDA present (tensorflow: pip install 'tensorflow[and-cuda]' for 2.14+, else its tested CUDA on LD_LIBRARY_PATH; onnxruntime-gpu 1.19 or newer for CUDA 12, 1.18 or older for CUDA 11; paddlepaddle-gpu: the build for the CUDA present), or install that CUDA major's runtime (the nvidia-cuda-runtime wheel of that major, or the toolkit's lib64 on LD_LIBRARY_PATH)"),
    'cuda-lib-missing': (
        "the framework could not load a CUDA library (cuDNN, cuBLAS, cuFFT ...) of the CUDA/cuDNN majors its build was made for: tensorflow (and jaxlib's XLA, which shares its DSO loader) dlopens each by its versioned name, jax's CUDA backend asks each for its version, onnxruntime-gpu's CUDA execution provider links them, paddlepaddle-gpu loads them by name; that library of that major is not installed or not on the loader's path (the framework is built for another CUDA or cuDNN major than the machine has), so the GPU is not used",
        'install the framework build for the CUDA and cuDNN present, or the CUDA/cuDNN it needs: tensorflow: pip install \'tensorflow[and-cuda]\' (2.14+) or the toolkit and cuDNN of its tested configuration on LD_LIBRARY_PATH (tensorflow\'s tested build configurations (tensorflow.org/install/source#gpu): 2.18+ CUDA 12.5 with cuDNN 9.3; 2.16-2.17 CUDA 12.3, cuDNN 8.9; 2.15 CUDA 12.2, cuDNN 8.9; 2.12-2.14 CUDA 11.8, cuDNN 8.6; 2.5-2.11 CUDA 11.2, cuDNN 8.1; 2.4 CUDA 11.0, cuDNN 8.0; 2.1-2.3 CUDA 10.1, cuDNN 7.6; 1.13-2.0 CUDA 10.0, cuDNN 7.4; 1.5-1.12 CUDA 9.0, cuDNN 7); jax: pip install -U "jax[cuda12]" and unset LD_LIBRARY_PATH; onnxruntime-gpu: 1.19 or newer for CUDA 12 with cuDNN 9, 1.18 or older from the default index for CUDA 11 with cuDNN 8 (or its CUDA/cuDNN nvidia-* wheels on the loader\'s path); paddlepaddle-gpu: the build for the CUDA/cuDNN present (Paddle\'s install page)'),
    'tensorrt-lib-missing': (
        "the TensorRT libraries (libnvinfer of the TensorRT major asked for) are not on the loader's path: onnxruntime-gpu's TensorRT execution provider, paddlepaddle-gpu's TensorRT engine or tensorrt's own bindings link the TensorRT release they were built for, and that release is not installed (or its lib directory is not on LD_LIBRARY_PATH / PATH); tensorflow's TF-TRT warnings of the same kind are notices, never claimed",
        'install the TensorRT release the package was built for (pip install tensorrt of that major, or the TensorRT tarball with its lib directory on LD_LIBRARY_PATH, on Windows on PATH), or use a build of the package made for the TensorRT installed (or turn its TensorRT engine off)'),
    'cudnn-version-mismatch': (
        "the framework (tensorflow, or jaxlib: XLA's stream_executor cuda_dnn.cc) loaded an older cuDNN than the one its build was compiled with (a system cuDNN, a conda or another package's copy found first), so the DNN library is not initialized and convolutions fail",
        "make the cuDNN the build names (or a newer one of that major) the one the loader finds: install the nvidia-cudnn wheel of that version (pip install 'tensorflow[and-cuda]', or jax[cudaXY]) and drop the older copy's directory from LD_LIBRARY_PATH; or install the framework release built against the installed cuDNN"),
    'driver-library-mismatch': (
        "tensorflow's (and jaxlib's XLA's) CUDA diagnostics found the NVIDIA kernel module and the user-space driver library libcuda.so.1 of different releases (a driver upgraded without a reboot, or a container's libcuda of another release), so cuInit fails and no GPU is used",
        "make the kernel module and libcuda.so.1 one release: reboot after a driver upgrade (or reload the nvidia modules), or drop the stray libcuda.so.1 from the image / LD_LIBRARY_PATH so the host driver's is used"),
    'driver-not-found': (
        "no NVIDIA driver is found: tensorflow's notices on a machine without an NVIDIA GPU or driver (it runs on the CPU; never claimed), or, on Windows, tensorflow's import check found no nvcuda.dll (the driver's CUDA library, installed in C:\\Windows\\System32 by the NVIDIA driver): no NVIDIA driver is installed; or paddlepaddle-gpu's loader could not load the driver's own library (libcuda.so; nvcuda.dll on Windows): no NVIDIA driver is installed where this runs, a container was started without the GPU, or the driver's directory is not on the loader's path (on WSL2 /usr/lib/wsl/lib)",
        'install the NVIDIA driver for the GPU (nvidia-smi must list it), start a container with the GPU (--gpus all), or put the driver\'s directory on the loader\'s path (on WSL2: export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH); on a machine without an NVIDIA GPU, nothing: the framework runs on the CPU'),
    'system-lib-missing': (
        "the framework's import check on Windows (tensorflow's, onnxruntime's) found no Microsoft Visual C++ runtime DLL (msvcp140.dll, msvcp140_1.dll, vcruntime140_1.dll) its binaries link: the Visual C++ Redistributable for Visual Studio 2015-2019 is not installed",
        'install the Microsoft Visual C++ Redistributable (x64) for Visual Studio 2015-2022 (the latest supported Visual C++ downloads page), then start a new shell'),
    'version-requirement-unmet': (
        "jax and jaxlib (and jax's CUDA plugin) are released together, each release of jax accepting only a range of jaxlib versions and a plugin only of jaxlib's own version; the installed ones are of different releases (one upgraded alone), so jax refuses to import or ignores the plugin (and runs on the CPU)",
        'install jax, jaxlib and the CUDA plugin of one release together: pip install -U "jax[cuda12]" (or pin all three, e.g. jax==X jaxlib==X jax-cuda12-plugin==X jax-cuda12-pjrt==X), and uninstall a stray plugin of another release'),
    'cuda-toolkit-not-found': (
        "XLA (in tensorflow and jaxlib) needs a CUDA toolkit's ptxas and libdevice to compile GPU kernels at run time, and finds neither on PATH nor under the CUDA directories it searches",
        "install the nvidia-cuda-nvcc wheel of the framework's CUDA major (jax[cudaXY] and tensorflow[and-cuda] bring it), or point XLA at a toolkit: XLA_FLAGS=--xla_gpu_cuda_data_dir=/usr/local/cuda with its bin on PATH"),
}


def _framework(h: Hit, env: Env, facts: Facts, own: Builder | None = None) -> tuple[str, str] | None:
    """The cause of a framework row's hit: the signature's own builder's where it names the hit's package (it reads the
    log's environment: the CUDA the machine has), else the framework text of the signature; the log's facts after it."""
    if notice(h):
        return None
    pkg = h.package
    who = f"{pkg} {h.version}".strip() if pkg else ""
    row = framework_package(h)
    who += f" (its build: {row})" if row and who and row != pkg else ""  # onnxruntime, whose CUDA provider is -gpu's
    said = _facts(h)
    here = "; ".join(([who] if who else []) + said)
    libs = [v for k, v in h.groups.items() if k.startswith(FACT) and _INDEX.sub("", k[len(FACT):]) in LIBRARIES and v]
    major = re.search(r"\.so\.(\d{1,4})", libs[0]) if libs else None
    seen = {"library": libs[0], "major": major.group(1) if major else ""} if libs else {}  # as the own rows name them
    got = own(replace(h, groups={**seen, **h.groups}), env, facts) if own is not None and pkg else None
    read = got is not None and pkg in got[0] and all(lib in got[0] for lib in libs)  # it read the line, not its own groups
    cause, remedy = got if got is not None and read else WIDENED.get(h.id, (h.cause, h.remedy))
    return (f"{cause} (here: {here})" if here else cause), remedy


def framework_builder(h: Hit, own: Builder | None = None) -> Builder | None:
    """The cause builder of a framework row's hit, ahead of the signature's own builder ``own`` (which it asks first);
    None for another row."""
    if framework_package(h) is None:
        return None
    return lambda hit, env, facts: _framework(hit, env, facts, own)


def with_package(h: Hit) -> Hit:
    """A framework row's hit with the package its row names (none where the row names none, never a signature's
    default); the package the log's own paths named is kept where the row's is its GPU build of it (onnxruntime)."""
    pkg = framework_package(h)
    if pkg is None or (pkg and h.package and pkg.startswith(canonicalize(h.package) + "-")):
        return h
    if not pkg and any(k.startswith(NAMED) for k in h.groups):
        return h
    return replace(h, package=pkg, version="")


__all__ = ["framework_builder", "framework_package", "notice", "with_package"]
