"""The system sweep of issue 38: every message of the MACHINE's libraries that a failure log can carry, from their
headers, listed as their callers print them, each with the signature that must claim it or "" with the reason it is
no packaging or compatibility failure. Writes tests/fixtures/raise_sites/system-family.toml
(tests/decide/test_raise_site_tables.py asserts every row).

Read from the wheels (pip download --no-deps into DIR, then unzip each into DIR/x; libcudart.so.12 is loaded with ctypes
for its own error names and texts):
  nvidia-cuda-runtime-cu12==12.9.79   nvidia/cuda_runtime/include/cuda.h (CUresult), driver_types.h (cudaError_t)
  nvidia-nvml-dev-cu12==12.9.79       nvidia/nvml_dev/include/nvml.h (nvmlReturn_t)
  nvidia-ml-py==13.615.71             pynvml.py (NVMLError's table of nvmlErrorString texts, its class names)
and the [[nvidia_library]] rows of glmcompat/matrix/data/nvidia-libraries.toml (the loader's messages by owner).

    python scripts/harvest_system_messages.py DIR
"""

from __future__ import annotations

import json
import re
import string
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "raise_sites" / "system-family.toml"
RUNTIME = "nvidia_cuda_runtime_cu12-12.9.79 wheel nvidia/cuda_runtime/include"
NVML_H = "nvidia-nvml-dev-cu12 12.9.79 wheel nvidia/nvml_dev/include/nvml.h"
PYNVML = "nvidia-ml-py 13.615.71 wheel pynvml.py"
NUMBA_DRV = ("numba/numba numba/cuda/cudadrv/driver.py (Driver._check_ctypes_error: CudaAPIError(retcode, \"Call to %s "
             "results in %s\" % (fname, errname)), printed \"[%s] %s\")")
NUMBA_RT = ("numba/numba numba/cuda/cudadrv/runtime.py (Runtime._check_error: CudaRuntimeAPIError(retcode, \"Call to %s "
            "results in %s\"))")

# the codes that tell of a packaging or compatibility failure -> the signature that claims them (CUresult and
# cudaError_t share their numbers)
CLAIMED = {
    34: "cuda-stub-driver", 35: "driver-insufficient", 36: "driver-insufficient", 98: "no-kernel-image",
    200: "gpu-image-invalid", 209: "no-kernel-image", 218: "ptx-jit-failed", 221: "ptx-jit-unavailable",
    222: "ptx-unsupported-toolchain", 223: "ptx-jit-unavailable", 300: "gpu-image-invalid", 802: "cuda-system-not-ready",
    803: "driver-library-mismatch", 804: "cuda-forward-compat-unsupported",
}
# why the rest is no failure of the stack (explain must claim none of them), by code range or code
WHY = [
    (range(1, 3), "a wrong argument or exhausted memory: the program's fault"),
    (range(3, 5), "CUDA not (or no longer) initialized: cuInit not called, a fork after init, a failing GPU; no cause of "
                  "the stack alone (lxc-cuda-init-hmm claims it only with its scene)"),
    (range(5, 9), "the profiler's state"),
    (range(9, 34), "a wrong call of the runtime API: the program's fault"),
    (range(37, 98), "a wrong call of the runtime API, or the device busy or exclusive: the program's or the machine's state"),
    (range(100, 101), "no GPU visible (CUDA_VISIBLE_DEVICES, a container without the GPU): not a packaging failure "
                      "(torch-family.toml keeps cudaErrorNoDevice unclaimed)"),
    (range(101, 200), "the device chosen or its license, the runtime's start: the machine's state"),
    (range(201, 218), "mapping, contexts, ECC, limits: the program's or the hardware's state"),
    (range(219, 221), "graphics interop, NVLink errors: the hardware's state"),
    (range(224, 300), "an execution affinity, device-side sync or a contained error: the program's build or the hardware"),
    (range(301, 400), "a file, a shared object's symbol or the OS refusing: the program's files"),
    (range(400, 700), "a handle, a symbol or a query: the program's fault"),
    (range(700, 800), "a fault in a running kernel (illegal address, launch failure, assert): the program's or the GPU's"),
    (range(800, 802), "not permitted or not supported on this device: the program's use of it"),
    (range(805, 900), "MPS, CUDA Dynamic Parallelism: the machine's services or the program's build"),
    (range(900, 1000), "stream capture, graphs, timeouts, clusters: the program's fault, or unknown"),
]
NVML_CLAIMED = {"NVML_ERROR_DRIVER_NOT_LOADED": "driver-not-found", "NVML_ERROR_LIBRARY_NOT_FOUND": "driver-not-found",
                "NVML_ERROR_LIB_RM_VERSION_MISMATCH": "driver-library-mismatch"}
NVML_WHY = ("NVML's own state, a query the device does not support, permissions or a GPU fault (lost, reset required, "
            "infoROM): the machine's state, or a call the program made; NVML_ERROR_FUNCTION_NOT_FOUND and "
            "NVML_ERROR_ARGUMENT_VERSION_MISMATCH are optional calls their callers fall back from")


def why(code: int) -> str:
    return next(w for r, w in WHY if code in r)


def _enum(text: str, pat: str) -> list[tuple[str, int, int]]:
    """(name, value, line) of each enumerator the pattern names."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(pat, line)
        if m is not None:
            out.append((m.group(1), int(m.group(2)), n))
    return out


def _row(library: str, source: str, text: str, expect: str) -> dict[str, str]:
    return {"library": library, "source": source, "text": text, "expect": expect}


def cuda_rows(d: Path) -> list[dict[str, str]]:
    rows = []
    cu = (d / "x/nvidia/cuda_runtime/include/cuda.h").read_text()
    for name, code, line in _enum(cu, r"^\s+(CUDA_ERROR_[A-Z_0-9]+)\s*=\s*(\d+)"):
        claimed = CLAIMED.get(code, "")
        rows.append(_row("cuda-driver", f"{RUNTIME}/cuda.h:{line} ({name} = {code}"
                         + (")" if claimed else f": {why(code)})") + f", as {NUMBA_DRV} prints it",
                         f"numba.cuda.cudadrv.driver.CudaAPIError: [{code}] Call to cuInit results in {name}", claimed))
    rt = (d / "x/nvidia/cuda_runtime/include/driver_types.h").read_text()
    for name, code, line in _enum(rt, r"^\s+(cudaError[A-Za-z0-9]+)\s*=\s*(\d+)"):
        claimed = CLAIMED.get(code, "")
        rows.append(_row("cuda-runtime", f"{RUNTIME}/driver_types.h:{line} ({name} = {code}"
                         + (")" if claimed else f": {why(code)})") + f", as {NUMBA_RT} prints it",
                         f"numba.cuda.cudadrv.runtime.CudaRuntimeAPIError: [{code}] Call to cudaGetDeviceCount results in "
                         f"{name}", claimed))
    return rows


def cudart_rows(d: Path) -> list[dict[str, str]]:
    """The runtime's own names and texts, asked of the real libcudart.so.12 (cudaGetErrorName / cudaGetErrorString are
    table lookups: no GPU and no driver needed), as torch's C10_CUDA_CHECK and CuPy print them."""
    import ctypes  # lazy: only this listing loads the wheel's library

    lib = ctypes.CDLL(str(d / "x/nvidia/cuda_runtime/lib/libcudart.so.12"))
    lib.cudaGetErrorString.restype = lib.cudaGetErrorName.restype = ctypes.c_char_p
    rt = (d / "x/nvidia/cuda_runtime/include/driver_types.h").read_text()
    rows = []
    for name, code, line in _enum(rt, r"^\s+(cudaError[A-Za-z0-9]+)\s*=\s*(\d+)"):
        text = lib.cudaGetErrorString(code).decode()
        assert lib.cudaGetErrorName(code).decode() == name, (code, name)
        claimed = CLAIMED.get(code, "")
        src = (f"nvidia_cuda_runtime_cu12-12.9.79 wheel nvidia/cuda_runtime/lib/libcudart.so.12: cudaGetErrorString({code}) "
               f"and cudaGetErrorName({code}) called through ctypes ({name}, driver_types.h:{line}"
               + (")" if claimed else f": {why(code)})"))
        rows.append(_row("cuda-runtime", src + "; torch prints it as \"CUDA error: <string>\" (torch-2.9.1 wheel "
                         "torch/include/c10/cuda/CUDAException.h C10_CUDA_CHECK)", f"RuntimeError: CUDA error: {text}", claimed))
        rows.append(_row("cuda-runtime", src + "; CuPy prints it as \"<name>: <string>\" (cupy_backends/cuda/api/runtime.pyx "
                         "CUDARuntimeError)", f"cupy_backends.cuda.api.runtime.CUDARuntimeError: {name}: {text}", claimed))
    return rows


def nvml_rows(d: Path) -> list[dict[str, str]]:
    rows = []
    header = (d / "x/nvidia/nvml_dev/include/nvml.h").read_text()
    py = (d / "x/pynvml.py").read_text()
    texts = dict(re.findall(r"^\s+(NVML_ERROR_[A-Z_]+):\s+\"([^\"]+)\",$", py, re.M))
    for name, code, line in _enum(header, r"^\s+(NVML_ERROR_[A-Z_]+)\s*=\s*(\d+)"):
        cls = "NVMLError_" + string.capwords(name.replace("NVML_ERROR_", ""), "_").replace("_", "")  # pynvml.py:1101
        text = texts.get(name)
        claimed = NVML_CLAIMED.get(name, "")
        src = f"{NVML_H}:{line} ({name} = {code}{')' if claimed else ': ' + NVML_WHY + ')'}; pynvml's class {cls} ({PYNVML}:1087-1112)"
        rows.append(_row("nvml", src + (f" and its text ({PYNVML}:1040-1061)" if text else ""),
                         f"pynvml.{cls}: {text}" if text else f"pynvml.{cls}", claimed))
        if text and name in ("NVML_ERROR_DRIVER_NOT_LOADED", "NVML_ERROR_UNKNOWN", "NVML_ERROR_NO_PERMISSION"):
            rows.append(_row("nvidia-smi", f"nvidia-smi prints nvmlInit's failure as \"Failed to initialize NVML: "
                             f"<nvmlErrorString>\" ({name}, {NVML_H}:{line})", f"Failed to initialize NVML: {text}", claimed))
    return rows


SMI = [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
     "driver is installed and running.", "driver-not-found",
     "nvidia-smi, where nvmlInit returns NVML_ERROR_DRIVER_NOT_LOADED (no kernel module): NVIDIA's driver README, "
     "\"Using nvidia-smi\"; pytorch/pytorch#67991"),
    ("Failed to initialize NVML: Driver/library version mismatch", "driver-library-mismatch",
     "nvidia-smi, NVML_ERROR_LIB_RM_VERSION_MISMATCH (nvml.h:1216); NVIDIA/nvidia-container-toolkit#394"),
    ("NVML library version: 550.54", "",
     "nvidia-smi's second line after a version mismatch (nvmlSystemGetNVMLVersion): a release, no failure by itself"),
    ("No devices were found", "",
     "nvidia-smi with a driver loaded and no GPU it may use (NVML_ERROR_GPU_NOT_FOUND's state): the machine's state"),
    ("Unable to determine the device handle for GPU0000:01:00.0: Unknown Error", "",
     "nvidia-smi when nvmlDeviceGetHandleByIndex fails (a GPU fallen off the bus): a hardware fault"),
    ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object "
     "file: no such file or directory: unknown", "driver-not-found",
     "NVIDIA/libnvidia-container src/driver.c driver_init_1_svc (xdlopen of SONAME_LIBNVML): the host has no driver"),
]

# the loader's words (glibc elf/dl-lookup.c _dl_lookup_symbol_x; elf/dl-version.c match_symbol: "version `%s' not found
# (required by %s)"; elf/dl-load.c "cannot open shared object file"), by the library that owns the symbol or node
GLIBC = "glibc elf/dl-lookup.c _dl_lookup_symbol_x and elf/dl-version.c match_symbol (bminor/glibc@04277e02d7f54d3582bebcf8386b317018cd5e1d)"
# a library of another NVIDIA family that needs each owner's functions (the requiring side of the clash)
NEEDER = {"libcublasLt": "libcublas.so.12", "libcublas": "libcusolver.so.11", "libcudnn": "libcudnn_cnn.so.9",
          "libnvJitLink": "libcusparse.so.12", "libcusparseLt": "libtorch_cuda.so", "libcusparse": "libcusolver.so.11",
          "libcufft": "libtorch_cuda.so", "libcurand": "libtorch_cuda.so", "libcusolver": "libtorch_cuda.so",
          "libnvrtc": "libcudnn_engines_runtime_compiled.so.9", "libcudart": "libcudnn_graph.so.9",
          "libcupti": "libtorch_cuda.so", "libnccl": "libtorch_cuda.so"}
FUNCTION = {"libcublasLt": "cublasLtGetStatusString", "libcublas": "cublasGemmStridedBatchedEx_64",
            "libcudnn": "cudnnGetLibConfig", "libnvJitLink": "__nvJitLinkComplete_12_4",
            "libcusparseLt": "cusparseLtMatmulPlanInit", "libcusparse": "cusparseSpSV_updateMatrix",
            "libcufft": "cufftXtSetJITCallback", "libcurand": "curandGenerateNormal", "libcusolver": "cusolverDnXsyevBatched",
            "libnvrtc": "nvrtcGetPCHHeapSize", "libcudart": "cudaGetDriverEntryPointByVersion",
            "libcupti": "cuptiActivityEnableHWTrace", "libnccl": "ncclCommWindowRegister"}
# the families whose own signature names a clash inside the family (cuDNN's sub-libraries of two installs mixed: the
# needer of libcudnn above is a cuDNN sub-library itself)
OWN_ID = {"libnvJitLink": "nvjitlink-mismatch", "libnccl": "nccl-undefined-symbol", "libcudnn": "cudnn-sublibrary-missing"}


def loader_rows() -> list[dict[str, str]]:
    libs = tomllib.loads((ROOT / "glmcompat/matrix/data/nvidia-libraries.toml").read_text())["nvidia_library"]
    rows = []
    for lib in libs:
        stem = lib["library"]
        major = "12" if lib.get("cuda_soname") else "9" if stem == "libcudnn" else "2" if stem == "libnccl" else \
            "0" if stem == "libcusparseLt" else "11" if stem in ("libcufft", "libcusolver") else "10"
        node = f"{stem}.so.{major}"
        needer = NEEDER[stem]
        fn = FUNCTION[stem]
        path = f"/venv/lib/python3.11/site-packages/nvidia/{'cublas' if 'cublas' in needer else 'cudnn' if 'cudnn' in needer else 'cusparse' if 'cusparse' in needer else 'cusolver'}/lib/{needer}" \
            if needer.startswith(("libcublas", "libcudnn", "libcusparse", "libcusolver")) else \
            f"/venv/lib/python3.11/site-packages/torch/lib/{needer}"
        sid = OWN_ID.get(stem, "cuda-toolkit-clash")
        src = (f"{GLIBC}: \"<library>: undefined symbol: <name>, version <node>\", the owner of {fn} and of the node "
               f"{node} by nvidia-libraries.toml ({stem}); reproduced with gcc-built stand-ins: "
               "scripts/record_system_messages.py (system-real.toml)")
        rows.append(_row("ld.so", src, f"OSError: {path}: undefined symbol: {fn}, version {node}", sid))
        if sid in ("cuda-toolkit-clash", "cudnn-sublibrary-missing"):
            rows.append(_row("ld.so", f"{GLIBC}: \"<provider>: version `<node>' not found (required by <library>)\", the "
                             f"provider's release without the node {node}; reproduced: scripts/record_system_messages.py",
                             f"ImportError: /usr/local/cuda/lib64/{node}: version `{node}' not found (required by {path})",
                             sid))
    rows += [
        _row("ld.so", f"{GLIBC}: a torch C++ symbol in an extension (the torch ABI, not a clash of NVIDIA libraries)",
             "ImportError: /venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined "
             "symbol: _ZN3c104cuda9SetDeviceEi", "undefined-symbol"),
        _row("ld.so", f"{GLIBC}: two cuDNN 8 copies mixed, a C++ symbol of one sub-library under the other's node "
             "(pytorch/pytorch#104591)", "ImportError: /usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8: undefined symbol: "
             "_ZN5cudnn3cnn34layerNormFwd_execute_internal_implERKNS_7backend11VariantPackEP11CUstream_stRNS0_18LayerNorm"
             "FwdParamsERKNS1_20NormForwardOperationEmb, version libcudnn_ops_infer.so.8", "cudnn-sublibrary-missing"),
        _row("ld.so", f"{GLIBC}: torch's own library needing a cuDNN function the cuDNN found first lacks (no node)",
             "ImportError: /venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
             "cudnnGetLibConfig", "cuda-toolkit-clash"),
        _row("ld.so", f"{GLIBC}: a cuDNN sub-library needing a sibling's C++ internal (no node)",
             "OSError: /venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: undefined symbol: "
             "_ZN11nvrtcHelper4loadEb", "cuda-toolkit-clash"),
        _row("ld.so", f"{GLIBC}: a CUDA driver API function (libcuda.so.1's, the driver's, not a wheel's)",
             "ImportError: /venv/lib/python3.11/site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: "
             "cuGreenCtxStreamCreate", "driver-too-old"),
    ]
    return rows


NUMPY_H = "numpy/core/include/numpy/__multiarray_api.h"
NUMPY = [
    ("RuntimeError: module compiled against API version a but this version of numpy is 9", "numpy-too-old",
     f"numpy-1.10.4 cp27 wheel {NUMPY_H}:1680-1681 (\"API version %x but this version of numpy is %x\": bare hex up to "
     "NumPy 1.10; the same at numpy-1.8.2 and 1.9.3 :1675-1676)"),
    ("RuntimeError: module compiled against API version 9 but this version of numpy is", "numpy-too-old",
     f"numpy-1.9.3 cp27 wheel {NUMPY_H}:1675-1676, the line a terminal or a quote wrapped before the running version "
     "(abidrahmank/OpenCV2-Python-Tutorials#35)"),
    ("RuntimeError: module compiled against API version 0xb but this version of numpy is 0xa", "numpy-too-old",
     f"numpy-1.11.3 cp35 wheel {NUMPY_H}:1494-1495 (\"0x%x\" from NumPy 1.11); numpy-1.26.4 wheel :1516-1524 with \" . "
     "Check the section C-API incompatibility ...\" (system-real.toml records it)"),
    ("RuntimeError: module compiled against ABI version 0x1000009 but this version of numpy is 0x2000000", "numpy-abi",
     f"numpy-1.26.4 wheel {NUMPY_H}:1510-1515 (NPY_VERSION of NumPy 1.x against NumPy 2's ABI)"),
    ("RuntimeError: module compiled against ABI version 0x2000000 but this version of numpy is 0x1000009", "numpy-too-old",
     f"numpy-1.26.4 wheel {NUMPY_H}:1510-1515 read under NumPy 1.x by a module of NumPy 2's ABI"),
    ("RuntimeError: module compiled against ABI version 1000009 but this version of numpy is 1000009", "",
     f"numpy-1.9.3 cp27 wheel {NUMPY_H}:1669-1670 (bare hex): NumPy 1.x kept one ABI version, so the bare form never "
     "differs in a real run; the line is no failure explain can name"),
    ("RuntimeError: module compiled against NumPy 2.0 but running on NumPy 1.x", "numpy-too-old",
     "numpy-2.0.0 wheel numpy/_core/include/numpy/__multiarray_api.h:1517"),
    ("RuntimeError: module was compiled against NumPy C-API version 0x12 (NumPy 2.0) but the running NumPy has C-API "
     "version 0x11.", "numpy-too-old",
     "numpy-2.3.5 wheel numpy/_core/include/numpy/__multiarray_api.h (_import_array's NPY_FEATURE_VERSION check; recorded "
     "in system-real.toml)"),
    ("ImportError: numpy._core.multiarray failed to import", "numpy-too-old",
     "numpy-2.3.5 wheel numpy/_core/include/numpy/__multiarray_api.h:1601 and :1612 (only NumPy 2's headers spell "
     "numpy._core)"),
    ("ImportError: numpy.core._multiarray_umath failed to import", "numpy-too-old",
     "numpy-1.26.4 wheel numpy/core/include/numpy/__ufunc_api.h:243-248 (headers of NumPy 1.16+ under an older NumPy)"),
    ("ImportError: numpy.core.multiarray failed to import", "numpy-abi",
     f"numpy-1.26.4 wheel {NUMPY_H}:1558 (import_array's ImportError; alone in a log, NumPy 2 refusing a 1.x module, "
     "system-real.toml; after a C-API version line it is that line's)"),
    ("AttributeError: _ARRAY_API not found", "numpy-abi",
     f"numpy-1.24.4 wheel {NUMPY_H}:1489 (NumPy 2's numpy.core shim has no _ARRAY_API for a 1.x module)"),
    ("AttributeError: _UFUNC_API not found", "numpy-abi",
     "numpy-1.26.4 wheel numpy/core/include/numpy/__ufunc_api.h:251-255 (import_umath; NumPy 2's shim refuses _UFUNC_API "
     "as _ARRAY_API: numpy-2.3.5 wheel numpy/core/_multiarray_umath.py:17)"),
    ("ImportError: numpy.core.umath failed to import", "",
     "the headers of NumPy 1.15 and before (import_umath of numpy.core.umath): alone it says neither direction; after a "
     "C-API version line that line is named"),
    ("A module that was compiled using NumPy 1.x cannot be run in", "numpy-abi",
     "numpy-2.0.2 wheel numpy/core/_multiarray_umath.py:15-44 (recorded under numpy 2.3.5 in system-real.toml)"),
    ("ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 from "
     "PyObject", "numpy-abi", "cython-3.3.0 wheel Cython/Utility/ImportExport.c:466-471 (PyArray_Descr 96 bytes in 1.x, 88 "
     "in NumPy 2)"),
    ("ValueError: numpy.ndarray size changed, may indicate binary incompatibility. Expected 88 from C header, got 80 from "
     "PyObject", "numpy-too-old", "cython-3.3.0 wheel Cython/Utility/ImportExport.c:466-471 (ndarray grew in NumPy 1.20)"),
    ("RuntimeWarning: numpy.ufunc size changed, may indicate binary incompatibility. Expected 216 from C header, got 192 "
     "from PyObject", "", "cython-3.3.0 wheel Cython/Utility/ImportExport.c:466-471 as a warning: harmless by itself "
     "(numpy.org \"numpy.ufunc size changed\", filtered by NumPy since 1.15)"),
    ("RuntimeError: Numpy is not available", "",
     "torch-2.9.1 wheel torch/csrc/utils/tensor_numpy.cpp (TORCH_CHECK(is_numpy_available(), \"Numpy is not available\")): "
     "numpy absent or its import failed before; the earlier lines name which, so this line alone is not claimed"),
]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    d = Path(args[0])
    rows = cuda_rows(d) + cudart_rows(d) + nvml_rows(d) + [_row("nvidia-smi", s, t, e) for t, e, s in SMI] + loader_rows() + \
        [_row("numpy", s, t, e) for t, e, s in NUMPY]
    head = ["# The machine's raise sites (issue 38, the system sweep): the CUDA driver API's every CUresult and the runtime's",
            "# every cudaError_t (as numba prints their names), NVML's every nvmlReturn_t (as pynvml raises it) and nvidia-smi's",
            "# words, the dynamic loader's undefined-symbol and version-node messages by the NVIDIA library that owns the",
            "# symbol (nvidia-libraries.toml), and NumPy's C-API / ABI checks in each phrasing its releases had. `expect`: the",
            "# signature explain must name; \"\" (with the reason in `source`) where it is no packaging or compatibility",
            "# failure and explain must claim nothing. Written by scripts/harvest_system_messages.py; do not edit.",
            "schema = 1", ""]
    body = []
    for r in rows:
        body += ["[[message]]"] + [f"{k} = {json.dumps(r[k], ensure_ascii=False)}" for k in ("library", "source", "text",
                                                                                            "expect")] + [""]
    OUT.write_text("\n".join(head + body), encoding="utf-8")
    print(f"wrote {OUT}: {len(rows)} messages, {sum(bool(r['expect']) for r in rows)} claimed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
