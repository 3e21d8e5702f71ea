"""The child side of ``glmcompat verify``: one probe group per process.

Run as ``python -m glmcompat.ops.verify.gpuchecks GROUP OPTIONS_JSON``. A group imports one package (and
torch under it) and runs that package's probes in order: import, operator registration, kernel
smoke test. Each probe's result is printed as one marker line on stdout and flushed at once, so
when a later probe crashes the process or hangs until the parent kills it, the results before it
survive and the parent reports the rest as crashed or timed out.

Only the standard library (and :mod:`glmcompat.ops.verify.records`, which imports nothing else) is
imported at module level; each group imports what it probes, so a broken package can only break its
own group. ``static`` runs the rules and the ELF readers
(:mod:`glmcompat.ops.verify.static`) and imports no GPU package at all.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import importlib.util
import io
import json
import logging
import os
import selectors
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from fnmatch import fnmatchcase
from importlib.util import cache_from_source
from typing import Any, cast

from glmcompat.ops.verify.records import (
    GROUP_MODULE,
    MAX_RECORD,
    NONCE_ENV,
    DeviceData,
    DriverData,
    DriverGpu,
    GroupExit,
    ImportData,
    OpsData,
    ProbeRecord,
    absent,
    error_text,
    group_ids,
    marks,
)

# The parent hands the nonce over in the environment; it is taken out before any package under test is
# imported (os.environ no longer shows it to them).
MARK, EXIT, NOFORK, GATHER_MARK = marks(os.environ.pop(NONCE_ENV, ""))


class Skipped(Exception):
    """Raised inside a probe: it cannot run here (never a pass)."""


class Probe:
    """What one probe reports; filled in by the probe body."""

    def __init__(self, pid: str) -> None:
        self.id = pid
        self.summary = ""
        self.data: dict[str, Any] = {}
        self.warnings: list[str] = []
        self.degraded = False  # ran and passed what decides, but found a non-fatal problem: "warning"

    def fail(self, message: str) -> None:
        raise ProbeFailure(message)


class ProbeFailure(Exception):
    """A probe's own verdict of failure (not an exception from the code under test)."""


def emit(rec: ProbeRecord) -> None:
    # a newline first: a package may have left half a line on stdout, and the marker must start a line
    sys.stdout.write("\n" + MARK + rec.to_line() + "\n")
    sys.stdout.flush()


@contextlib.contextmanager
def probe(pid: str, results: dict[str, str]) -> Iterator[Probe]:
    p = Probe(pid)
    t0 = time.perf_counter()
    error: str | None = None
    try:
        yield p
        status = "warning" if p.degraded else "passed"
    except Skipped as e:
        status = "skipped"
        p.summary = str(e)
    except ProbeFailure as e:
        status = "failed"
        p.summary = p.summary or str(e).splitlines()[0]
        error = str(e)
    except BaseException as e:  # noqa: BLE001 - the point is to report anything the package raises
        if isinstance(e, KeyboardInterrupt):
            raise
        status = "failed"
        error = error_text(e)
        p.summary = p.summary or error.splitlines()[-1][:200]
    results[pid] = status
    emit(ProbeRecord(id=pid, status=status, summary=p.summary, seconds=round(time.perf_counter() - t0, 3),
                     error=error, data=p.data or None, warnings=tuple(p.warnings) or None))


def absent_group(group: str, opts: dict[str, Any]) -> bool:
    """Whether ``group``'s module is not installed; if so every probe of the group is reported skipped."""
    module = GROUP_MODULE[group]
    if installed(module):
        return False
    for pid in group_ids(group, opts):
        emit(absent(pid, module))
    return True


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(results: dict[str, str], pid: str, what: str) -> None:
    if results.get(pid) != "passed":
        raise Skipped(f"{what} did not pass")


def _bytecode_cached(module: str) -> bool:
    """Whether importing ``module`` will find (or leave behind) its bytecode in ``__pycache__``.

    False when its ``__init__``'s ``.pyc`` is missing or stale and Python will not write one there
    (``PYTHONDONTWRITEBYTECODE``, or a read-only installation): then every import compiles that
    package from source. Nothing is imported.
    """
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return True
    src = getattr(spec, "origin", None) if spec is not None else None
    if not src or not src.endswith(".py") or not os.path.isfile(src):
        return True
    try:
        pyc = cache_from_source(src)
    except (NotImplementedError, ValueError):
        return True  # this Python keeps no bytecode cache at all
    try:
        st = os.stat(src)
        with open(pyc, "rb") as f:
            head = f.read(16)
        flags = int.from_bytes(head[4:8], "little")
        if len(head) == 16 and head[:4] == importlib.util.MAGIC_NUMBER and (flags or (
                int.from_bytes(head[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
                and int.from_bytes(head[12:16], "little") == st.st_size & 0xFFFFFFFF)):
            return True
    except OSError:
        pass
    if sys.dont_write_bytecode:
        return False
    d = os.path.dirname(pyc)
    return os.access(d if os.path.isdir(d) else os.path.dirname(d), os.W_OK)


def bytecode_cache(opts: dict[str, Any], group: str) -> None:
    """Compile each imported package once into glmcompat's cache, where the image keeps no bytecode.

    An image installed without ``.pyc`` files (``uv pip install`` compiles none by default) and run
    with ``PYTHONDONTWRITEBYTECODE=1`` or a read-only ``site-packages`` compiles every module from
    source on every import. Then this process reads and writes ``.pyc`` files under
    ``opts["pycache"]`` (Python's own ``sys.pycache_prefix`` mechanism; each is checked against its
    source's mtime and size, so an edited or reinstalled file is recompiled). The import is the same
    code, run for real; the installation itself is never written to.
    """
    d = opts.get("pycache")
    module = GROUP_MODULE.get(group)
    if not d or sys.pycache_prefix or module is None:
        return
    if opts.get("pycache_mode") != "always" and _bytecode_cached(module):
        return
    sys.pycache_prefix = d
    sys.dont_write_bytecode = False


# --------------------------------------------------------------------------------------------
# Helpers that need torch (imported inside the groups only)
# --------------------------------------------------------------------------------------------


def _device(opts: dict[str, Any]) -> Any:
    import torch  # lazy: package under test, imported by its own group

    if opts.get("no_gpu"):
        raise Skipped("--no-gpu: GPU probes not run")
    if not torch.cuda.is_available() and torch.cuda.device_count() == 0:
        raise Skipped("no CUDA GPU visible to torch")
    return torch.device("cuda", int(opts.get("device", 0)))


def _rmsnorm_case() -> tuple[Any, Any, Any]:
    """(x, weight, float64 reference) of the rmsnorm smoke test every kernel package is held to."""
    import torch  # lazy: package under test, imported by its own group

    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 1024, generator=g)
    w = torch.randn(1024, generator=g)
    return x, w, x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()


def _silu_and_mul_case() -> tuple[Any, Any]:
    """(x, float64 reference) of the silu_and_mul smoke test."""
    import torch  # lazy: package under test, imported by its own group

    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 2048, generator=g)
    a, b = x.double().chunk(2, -1)
    return x, torch.nn.functional.silu(a) * b


def _close(name: str, got: Any, ref: Any, rtol: float, atol: float, p: Probe) -> None:
    import torch  # lazy: package under test, imported by its own group

    got = got.detach().double().cpu()
    ref = ref.detach().double().cpu()
    if got.shape != ref.shape:
        p.fail(f"{name}: shape {tuple(got.shape)} != reference {tuple(ref.shape)}")
    err = (got - ref).abs()
    bound = atol + rtol * ref.abs()
    worst = float((err - bound).max()) if err.numel() else 0.0
    p.data[f"{name}_max_abs_err"] = float(err.max()) if err.numel() else 0.0
    if not bool(torch.isfinite(got).all()) or worst > 0:
        p.fail(f"{name}: result differs from the torch reference (max abs error {float(err.max()):.3g}, "
               f"rtol {rtol}, atol {atol})")


def _op_names(namespace: str) -> list[str] | None:
    import torch  # lazy: package under test, imported by its own group

    lister = getattr(getattr(torch, "_C", None), "_dispatch_get_all_op_names", None)
    if lister is None:
        return None
    prefix = namespace + "::"
    return sorted(n for n in lister() if n.startswith(prefix))


def _ops_probe(p: Probe, namespace: str, expected: list[str], libs: list[str], import_ok: bool) -> None:
    """Operator registration: ``namespace::op`` for each expected op, with the loader error if missing."""
    import torch  # lazy: package under test, imported by its own group

    names = _op_names(namespace)
    if names is None:
        raise Skipped("this torch has no operator registry API (torch._C._dispatch_get_all_op_names)")
    d = cast(OpsData, p.data)
    d["registered"] = len(names)
    missing = [f"{namespace}::{op}" for op in expected if f"{namespace}::{op}" not in names]
    if not names:
        missing = missing or [f"{namespace}::*"]
    if not missing:
        p.summary = f"{len(names)} {namespace}:: operators registered"
        cuda = getattr(getattr(torch, "_C", None), "_dispatch_has_kernel_for_dispatch_key", None)
        if cuda is not None and expected:
            d["cuda_kernels"] = {op: bool(cuda(f"{namespace}::{op}", "CUDA")) for op in expected}
        return
    # Load the extension library directly: its loader error is the root cause of the missing operators.
    errors = []
    for lib in libs:
        try:
            torch.ops.load_library(lib)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{lib}: {error_text(e)}")
    msg = f"operator {missing[0]} does not exist"
    if len(missing) > 1:
        msg += f" (and {len(missing) - 1} more)"
    if not import_ok and not errors:
        msg += " (the package did not import)"
    p.fail("\n".join([msg, *errors]))


def _locate(module: str, *patterns: str) -> list[str]:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return []
    root = list(spec.submodule_search_locations)[0]
    out: list[str] = []
    for pat in patterns:
        out.extend(sorted(glob.glob(os.path.join(root, pat))))
    return out


def _import(p: Probe, module: str) -> Any:
    mod = importlib.import_module(module)
    ver = getattr(mod, "__version__", None)
    d = cast(ImportData, p.data)
    d["version"] = str(ver) if ver is not None else None
    d["file"] = getattr(mod, "__file__", None)
    p.summary = f"{module} {ver} imported" if ver else f"{module} imported"
    return mod


# --------------------------------------------------------------------------------------------
# Groups
# --------------------------------------------------------------------------------------------


def group_nvml(opts: dict[str, Any]) -> None:
    """The driver through NVML (no torch): driver version, GPUs and their compute capability."""
    r: dict[str, str] = {}
    with probe("driver", r) as p:
        d = cast(DriverData, p.data)
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError:
            raise Skipped("no NVIDIA driver (libnvidia-ml.so.1 not found)") from None
        rc = lib.nvmlInit_v2()
        if rc != 0:
            p.fail(f"nvmlInit failed with NVML error {rc}")
        buf = ctypes.create_string_buffer(96)
        lib.nvmlSystemGetDriverVersion(buf, 96)
        d["driver"] = buf.value.decode()
        cv = ctypes.c_int()
        if lib.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(cv)) == 0:
            d["cuda_driver"] = f"{cv.value // 1000}.{cv.value % 1000 // 10}"
        n = ctypes.c_uint()
        lib.nvmlDeviceGetCount_v2(ctypes.byref(n))
        gpus: list[DriverGpu] = []
        for i in range(n.value):
            h = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) != 0:
                continue
            lib.nvmlDeviceGetName(h, buf, 96)
            major, minor = ctypes.c_int(), ctypes.c_int()
            lib.nvmlDeviceGetCudaComputeCapability(h, ctypes.byref(major), ctypes.byref(minor))
            gpus.append({"index": i, "name": buf.value.decode(), "capability": f"{major.value}.{minor.value}"})
        lib.nvmlShutdown()
        d["gpus"] = gpus
        if not gpus:
            raise Skipped(f"NVIDIA driver {d['driver']} sees no GPU")
        p.summary = f"driver {d['driver']}, {len(gpus)} GPU(s): " + ", ".join(
            f"{g['name']} ({g['capability']})" for g in gpus)


def group_torch(opts: dict[str, Any]) -> None:
    if absent_group("torch", opts):
        return
    r: dict[str, str] = {}
    with probe("import:torch", r) as p:
        torch = _import(p, "torch")
        v = getattr(torch, "version", None)
        imported = cast(ImportData, p.data)
        imported["cuda"] = getattr(v, "cuda", None)
        imported["cxx11_abi"] = bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", False)) if hasattr(torch, "_C") else None
        imported["debug"] = None
    with probe("device", r) as p:
        require(r, "import:torch", "import:torch")
        torch = importlib.import_module("torch")  # not `import torch`: the name is bound above (import:torch)

        if opts.get("no_gpu"):
            raise Skipped("--no-gpu: GPU probes not run")
        if getattr(getattr(torch, "version", None), "cuda", None) is None:
            if opts.get("gpu_seen"):
                p.fail(f"torch {torch.__version__} is built without CUDA, but the driver sees a GPU")
            raise Skipped(f"torch {torch.__version__} is built without CUDA")
        if torch.cuda.device_count() == 0:
            if opts.get("gpu_seen"):
                torch.cuda.init()  # raises the driver's error (e.g. CUDA init failing in an LXC)
            raise Skipped("no CUDA GPU visible to torch")
        torch.cuda.init()
        idx = int(opts.get("device", 0))
        props = torch.cuda.get_device_properties(idx)
        found = cast(DeviceData, p.data)
        found.update(DeviceData(
            index=idx,
            name=props.name,
            capability=f"{props.major}.{props.minor}",
            multiprocessors=props.multi_processor_count,
            memory_bytes=props.total_memory,
            smem_per_block_optin=getattr(props, "shared_memory_per_block_optin", None),
            count=torch.cuda.device_count(),
            cuda_runtime=torch.version.cuda,
            torch_arch_list=list(torch.cuda.get_arch_list()),
        ))
        drv = getattr(torch._C, "_cuda_getDriverVersion", None)
        if drv is not None:
            d = int(drv())
            found["cuda_driver"] = f"{d // 1000}.{d % 1000 // 10}"
        p.summary = f"{props.name}, capability {props.major}.{props.minor}, CUDA runtime {torch.version.cuda}"
    with probe("smoke:torch-matmul", r) as p:
        require(r, "device", "device")
        torch = importlib.import_module("torch")  # not `import torch`: the name is bound above (import:torch)

        dev = torch.device("cuda", int(opts.get("device", 0)))
        g = torch.Generator().manual_seed(0)
        a = torch.randn(256, 192, generator=g)
        b = torch.randn(192, 128, generator=g)
        ref = a.double() @ b.double()
        _close("fp32", a.to(dev) @ b.to(dev), ref, 1e-3, 1e-3, p)
        _close("bf16", a.to(dev, torch.bfloat16) @ b.to(dev, torch.bfloat16), ref, 3e-2, 0.5, p)
        p.summary = "fp32 and bf16 matmul match the float64 CPU reference"


def group_torchvision(opts: dict[str, Any]) -> None:
    if absent_group("torchvision", opts):
        return
    r: dict[str, str] = {}
    with probe("import:torchvision", r) as p:
        _import(p, "torchvision")
    with probe("ops:torchvision", r) as p:
        if not installed("torch"):
            raise Skipped("torch is not installed")
        _ops_probe(p, "torchvision", ["nms", "roi_align"], _locate("torchvision", "_C*.so"),
                   r["import:torchvision"] == "passed")
    with probe("smoke:torchvision-nms", r) as p:
        require(r, "ops:torchvision", "ops:torchvision")
        import torch  # lazy: package under test, imported by its own group
        import torchvision  # lazy: package under test, imported by its own group

        dev = _device(opts)
        g = torch.Generator().manual_seed(0)
        xy = torch.rand(300, 2, generator=g) * 100
        wh = torch.rand(300, 2, generator=g) * 30 + 1
        boxes = torch.cat([xy, xy + wh], 1)
        scores = torch.rand(300, generator=g)
        keep = torchvision.ops.nms(boxes.to(dev), scores.to(dev), 0.5).cpu()
        ref = _nms_reference(boxes.double(), scores.double(), 0.5)
        p.data["kept"] = int(keep.numel())
        if keep.tolist() != ref:
            p.fail(f"nms on CUDA kept {keep.numel()} boxes, the reference keeps {len(ref)}")
        p.summary = f"nms on CUDA keeps the same {len(ref)} of 300 boxes as the reference"


def _nms_reference(boxes: Any, scores: Any, thr: float) -> list[int]:
    import torch  # lazy: package under test, imported by its own group

    order = torch.argsort(scores, descending=True).tolist()
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    keep: list[int] = []
    removed = [False] * len(order)
    for i in order:
        if removed[i]:
            continue
        keep.append(i)
        lt = torch.maximum(boxes[i, :2], boxes[:, :2])
        rb = torch.minimum(boxes[i, 2:], boxes[:, 2:])
        inter = (rb - lt).clamp(min=0).prod(1)
        iou = inter / (area[i] + area - inter)
        for j in (iou > thr).nonzero().flatten().tolist():
            removed[j] = True
    return keep


def group_torchaudio(opts: dict[str, Any]) -> None:
    if absent_group("torchaudio", opts):
        return
    r: dict[str, str] = {}
    with probe("import:torchaudio", r) as p:
        _import(p, "torchaudio")
    with probe("ops:torchaudio", r) as p:
        if not installed("torch"):
            raise Skipped("torch is not installed")
        libs = _locate("torchaudio", "lib/libtorchaudio*.so")
        if r["import:torchaudio"] != "passed":
            _ops_probe(p, "torchaudio", [], libs, False)
        import torch  # lazy: package under test, imported by its own group

        for lib in libs:  # the extension library must load into this torch
            torch.ops.load_library(lib)
        names = _op_names("torchaudio") or []
        p.data["registered"] = len(names)
        p.summary = f"{len(libs)} extension librar{'y' if len(libs) == 1 else 'ies'} loaded, " \
                    f"{len(names)} torchaudio:: operators"


def group_sgl_kernel(opts: dict[str, Any]) -> None:
    if absent_group("sgl_kernel", opts):
        return
    r: dict[str, str] = {}
    with probe("import:sgl_kernel", r) as p:
        _import(p, "sgl_kernel")
    with probe("ops:sgl_kernel", r) as p:
        if not installed("torch"):
            raise Skipped("torch is not installed")
        libs = _locate("sgl_kernel", "common_ops*.so", "*/common_ops*.so")
        _ops_probe(p, "sgl_kernel", ["rmsnorm", "silu_and_mul"], libs[:1], r["import:sgl_kernel"] == "passed")
    with probe("smoke:sgl_kernel-rmsnorm", r) as p:
        require(r, "ops:sgl_kernel", "ops:sgl_kernel")
        import sgl_kernel  # lazy: package under test, imported by its own group
        import torch  # lazy: package under test, imported by its own group

        dev = _device(opts)
        x, w, ref = _rmsnorm_case()
        out = sgl_kernel.rmsnorm(x.to(dev, torch.bfloat16), w.to(dev, torch.bfloat16), 1e-6)
        _close("rmsnorm", out, ref, 3e-2, 3e-2, p)
        p.summary = "rmsnorm (bf16) matches the torch reference"
    with probe("smoke:sgl_kernel-silu_and_mul", r) as p:
        require(r, "ops:sgl_kernel", "ops:sgl_kernel")
        import sgl_kernel  # lazy: package under test, imported by its own group
        import torch  # lazy: package under test, imported by its own group

        dev = _device(opts)
        x, ref = _silu_and_mul_case()
        out = sgl_kernel.silu_and_mul(x.to(dev, torch.bfloat16))
        _close("silu_and_mul", out, ref, 3e-2, 3e-2, p)
        p.summary = "silu_and_mul (bf16) matches the torch reference"


# vLLM's operator namespaces -> (the compiled modules that register them, the operators checked). From
# 0.24 the modules are built against torch's stable ABI under new names; the namespaces stay.
VLLM_OPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "_C": (("_C", "_C_stable_libtorch"), ("rms_norm", "silu_and_mul")),
    "_moe_C": (("_moe_C", "_moe_C_stable_libtorch"), ("topk_softmax",)),
}
# Without [[primary_modules]] for vllm in the matrix: the modules whose failure stops vLLM on a GPU.
VLLM_CORE = ("vllm/_C.*", "vllm/_moe_C.*", "vllm/_C_stable_libtorch.*", "vllm/_moe_C_stable_libtorch.*")


def vllm_modules(root: str) -> list[tuple[str, str, str]]:
    """(module name, path relative to site-packages, path) of vLLM's compiled modules under ``root``.

    The top level (``_C``, ``_moe_C``, ``_C_stable_libtorch``, ``_flashmla_C`` ...) and the bundled
    flash-attention (``vllm_flash_attn/_vllm_fa2_C`` ...); ``third_party`` builds (one per Python
    version) are left out. Nothing is imported.
    """
    out = []
    for sub in ("", "vllm_flash_attn"):
        for path in sorted(glob.glob(os.path.join(root, sub, "*.so"))):
            name = os.path.basename(path)
            parts = ["vllm", sub] if sub else ["vllm"]
            out.append((".".join([*parts, name.split(".", 1)[0]]), "/".join([*parts, name]), path))
    return out


def is_core(rel: str, patterns: list[str] | tuple[str, ...]) -> bool:
    return any(fnmatchcase(rel, p) for p in patterns)


def group_vllm(opts: dict[str, Any]) -> None:
    """``import vllm``; its compiled modules load; their operators register; one op against torch.

    vLLM itself imports its compiled modules lazily and logs (and survives) a failed import of most of
    them; here each is imported on purpose and its error kept. The core modules (``_C``, ``_moe_C``,
    or their ``*_stable_libtorch`` builds: ``[[primary_modules]]`` for vllm in the matrix) decide; a
    failure of an add-on (flash-attention, FlashMLA ...) is a warning.
    """
    if absent_group("vllm", opts):
        return
    core_patterns = (opts.get("primary_modules") or {}).get("vllm") or VLLM_CORE
    r: dict[str, str] = {}
    mods: list[tuple[str, str, str]] = []
    with probe("import:vllm", r) as p:
        _import(p, "vllm")
    with probe("load:vllm", r) as p:
        require(r, "import:vllm", "import:vllm")
        spec = importlib.util.find_spec("vllm")
        root = list(spec.submodule_search_locations or [])[0] if spec else ""
        mods = vllm_modules(root)
        core = [m for m in mods if is_core(m[1], core_patterns)]
        extra = [m for m in mods if m not in core]
        if not core:
            p.fail(f"vllm has none of its core compiled modules ({', '.join(core_patterns)}): a build without "
                   "CUDA kernels (CPU-only or from source without them)")
        loaded, failed, info = [], [], []
        for name, rel, _path in core + extra:
            t0 = time.perf_counter()
            entry: dict[str, Any] = {"module": name, "file": rel, "core": (name, rel, _path) in core}
            try:
                importlib.import_module(name)
                entry["loaded"] = True
                loaded.append(name)
            except BaseException as e:  # noqa: BLE001 - the loader's error is the finding
                if isinstance(e, KeyboardInterrupt):
                    raise
                entry["loaded"] = False
                entry["error"] = error_text(e)
                failed.append(entry)
            entry["seconds"] = round(time.perf_counter() - t0, 3)
            info.append(entry)
        p.data["modules"] = info
        bad_core = [e for e in failed if e["core"]]
        bad_extra = [e for e in failed if not e["core"]]
        for bad in bad_extra:
            p.warnings.append(f"{bad['module']} (optional) did not load: {bad['error'].splitlines()[-1]}")
        if bad_core:
            p.summary = f"{bad_core[0]['module']} does not load: {bad_core[0]['error'].splitlines()[-1][:160]}"
            p.fail("\n".join(f"{e['module']}: {e['error']}" for e in bad_core + bad_extra))
        n_core = sum(1 for e in info if e["core"])
        p.summary = f"{n_core} core module(s) loaded ({', '.join(e['module'] for e in info if e['core'])})"
        if extra:
            p.summary += f", {len(extra) - len(bad_extra)} of {len(extra)} optional"
        if bad_extra:
            p.degraded = True
            p.summary += f"; {', '.join(e['module'] for e in bad_extra)} did not load"
    with probe("ops:vllm", r) as p:
        if not installed("torch"):
            raise Skipped("torch is not installed")
        if not mods:
            spec = importlib.util.find_spec("vllm")
            mods = vllm_modules(list(spec.submodule_search_locations or [])[0]) if spec else []
        present = {rel.split("/")[-1].split(".", 1)[0]: path for _n, rel, path in mods}
        wanted = {ns: (libs, ops) for ns, (libs, ops) in VLLM_OPS.items() if any(m in present for m in libs)}
        if not wanted:
            raise Skipped("vllm has no module that registers " + " or ".join(f"{ns}::" for ns in VLLM_OPS))
        names_by_ns = {}
        for ns in wanted:
            names = _op_names(ns)
            if names is None:
                raise Skipped("this torch has no operator registry API (torch._C._dispatch_get_all_op_names)")
            names_by_ns[ns] = names
        registered = {ns: len(n) for ns, n in names_by_ns.items()}
        cast(OpsData, p.data)["registered"] = registered
        missing = [f"{ns}::{op}" for ns, (_libs, ops) in wanted.items() for op in ops
                   if f"{ns}::{op}" not in names_by_ns[ns]]
        if missing:
            # Load the modules' libraries directly: their loader error is the root cause.
            errors = []
            import torch  # lazy: package under test, imported by its own group

            for ns in {m.split("::")[0] for m in missing}:
                for mod in wanted[ns][0]:
                    if mod in present:
                        try:
                            torch.ops.load_library(present[mod])
                        except Exception as e:  # noqa: BLE001
                            errors.append(f"{os.path.basename(present[mod])}: {error_text(e)}")
            msg = f"operator {missing[0]} does not exist"
            if len(missing) > 1:
                msg += f" (and {len(missing) - 1} more: {', '.join(missing[1:])})"
            p.fail("\n".join([msg, *errors]))
        import torch  # lazy: package under test, imported by its own group

        has = getattr(getattr(torch, "_C", None), "_dispatch_has_kernel_for_dispatch_key", None)
        if has is not None:
            cast(OpsData, p.data)["cuda_kernels"] = {f"{ns}::{op}": bool(has(f"{ns}::{op}", "CUDA"))
                                                     for ns, (_libs, ops) in wanted.items() for op in ops}
        p.summary = ", ".join(f"{n} {ns}:: operators" for ns, n in registered.items()) + " registered"
    with probe("smoke:vllm-rms_norm", r) as p:
        require(r, "ops:vllm", "ops:vllm")
        import torch  # lazy: package under test, imported by its own group

        dev = _device(opts)
        x, w, ref = _rmsnorm_case()
        out = torch.empty(64, 1024, device=dev, dtype=torch.bfloat16)
        torch.ops._C.rms_norm(out, x.to(dev, torch.bfloat16), w.to(dev, torch.bfloat16), 1e-6)
        torch.cuda.synchronize(dev)
        _close("rms_norm", out, ref, 3e-2, 3e-2, p)
        p.summary = "torch.ops._C.rms_norm (bf16) matches the torch reference"
    with probe("smoke:vllm-silu_and_mul", r) as p:
        require(r, "ops:vllm", "ops:vllm")
        import torch  # lazy: package under test, imported by its own group

        dev = _device(opts)
        x, ref = _silu_and_mul_case()
        out = torch.empty(64, 1024, device=dev, dtype=torch.bfloat16)
        torch.ops._C.silu_and_mul(out, x.to(dev, torch.bfloat16))
        torch.cuda.synchronize(dev)
        _close("silu_and_mul", out, ref, 3e-2, 3e-2, p)
        p.summary = "torch.ops._C.silu_and_mul (bf16) matches the torch reference"


def group_flashinfer(opts: dict[str, Any]) -> None:
    if absent_group("flashinfer", opts):
        return
    r: dict[str, str] = {}
    with probe("import:flashinfer", r) as p:
        _import(p, "flashinfer")
    with probe("smoke:flashinfer-rmsnorm", r) as p:
        require(r, "import:flashinfer", "import:flashinfer")
        if not (opts.get("jit") or installed("flashinfer_jit_cache")):
            raise Skipped("flashinfer would JIT-compile this kernel with nvcc (tens of seconds): "
                       "install flashinfer-jit-cache or pass --jit")
        import flashinfer  # lazy: package under test, imported by its own group
        import torch  # lazy: package under test, imported by its own group

        dev = _device(opts)
        g = torch.Generator().manual_seed(0)
        x = torch.randn(16, 512, generator=g)
        w = torch.randn(512, generator=g)
        ref = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()
        out = flashinfer.norm.rmsnorm(x.to(dev, torch.float16), w.to(dev, torch.float16), 1e-6)
        _close("rmsnorm", out, ref, 2e-2, 2e-2, p)
        p.summary = "flashinfer rmsnorm (fp16) matches the torch reference"


_TRITON_SRC = '''
import triton
import triton.language as tl


@triton.jit
def _glmcompat_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0 + tl.load(y_ptr + offs, mask=mask), mask=mask)
'''


def _triton_cache_entries() -> set[str]:
    """The entries of Triton's kernel cache (one per compiled kernel or launcher), to tell a compile from a hit."""
    d = None
    try:
        from triton import knobs  # type: ignore[attr-defined,unused-ignore]  # typed Triton only  # lazy: package under test, imported by its own group

        d = knobs.cache.dir
    except Exception:  # noqa: BLE001 - older Triton: its environment variables and default
        pass
    d = d or os.environ.get("TRITON_CACHE_DIR") or os.path.join(
        os.environ.get("TRITON_HOME") or os.path.expanduser("~"), ".triton", "cache")
    try:
        return set(os.listdir(d))
    except OSError:
        return set()


def group_triton(opts: dict[str, Any]) -> None:
    if absent_group("triton", opts):
        return

    with contextlib.ExitStack() as stack:
        if opts.get("jit"):  # --jit: compile from scratch; Triton's own cache would skip its compiler
            os.environ["TRITON_CACHE_DIR"] = stack.enter_context(
                tempfile.TemporaryDirectory(prefix="glmcompat-triton-cache-"))
        _triton_probes(opts)


def _triton_probes(opts: dict[str, Any]) -> None:
    r: dict[str, str] = {}
    with probe("import:triton", r) as p:
        _import(p, "triton")
    with probe("smoke:triton-kernel", r) as p:
        require(r, "import:triton", "import:triton")
        if not installed("torch"):
            raise Skipped("torch is not installed")
        import torch  # lazy: package under test, imported by its own group

        dev = _device(opts)
        before = _triton_cache_entries()
        # @triton.jit needs the kernel's source file: write it once per run.
        with tempfile.TemporaryDirectory(prefix="glmcompat-triton-") as d:
            path = os.path.join(d, "glmcompat_triton_probe.py")
            with open(path, "w") as f:
                f.write(_TRITON_SRC)
            spec = importlib.util.spec_from_file_location("glmcompat_triton_probe", path)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            n = 10_000
            g = torch.Generator().manual_seed(0)
            x, y = torch.randn(n, generator=g), torch.randn(n, generator=g)
            out = torch.empty(n, device=dev)
            mod._glmcompat_add[((n + 1023) // 1024,)](x.to(dev), y.to(dev), out, n, BLOCK=1024)
            torch.cuda.synchronize(dev)
            _close("add", out, x.double() * 2 + y.double(), 1e-6, 1e-6, p)
        # Triton keeps compiled kernels in its cache: a later run loads the kernel from there instead
        # of compiling it (as the server will). Say which happened; --jit always compiles.
        p.data["compiled"] = bool(_triton_cache_entries() - before)
        p.summary = ("a Triton kernel compiled, ran and matches the torch reference" if p.data["compiled"] else
                     "a Triton kernel (from Triton's cache; --jit recompiles it) ran and matches the torch "
                     "reference")


def group_transformers(opts: dict[str, Any]) -> None:
    model = opts.get("model")
    if absent_group("transformers", opts):
        return
    r: dict[str, str] = {}
    with probe("import:transformers", r) as p:
        _import(p, "transformers")
    with probe(group_ids("transformers", opts)[1], r) as p:
        if not model:
            raise Skipped("no --model given")
        require(r, "import:transformers", "import:transformers")
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES  # lazy: package under test, imported by its own group

        # The mapping AutoConfig looks model types up in; a transformers that lacks the type raises
        # KeyError: 'glm_moe_dsa' there (transformers 4.57.1). Reading the names imports no model code.
        if model not in CONFIG_MAPPING_NAMES:
            raise KeyError(model)
        p.data["config_class"] = CONFIG_MAPPING_NAMES[model]
        p.summary = f"transformers knows model type {model!r} ({CONFIG_MAPPING_NAMES[model]})"


def group_sglang(opts: dict[str, Any]) -> None:
    if absent_group("sglang", opts):
        return
    r: dict[str, str] = {}
    with probe("import:sglang", r) as p:
        _import(p, "sglang")


def group_torchao(opts: dict[str, Any]) -> None:
    if absent_group("torchao", opts):
        return
    r: dict[str, str] = {}
    with probe("import:torchao", r) as p:
        # torchao swallows a failed load of its _C and only logs it: capture the log.
        buf = io.StringIO()
        h = logging.StreamHandler(buf)
        logging.getLogger().addHandler(h)
        logging.getLogger().setLevel(logging.DEBUG) if logging.getLogger().level > logging.INFO else None
        try:
            _import(p, "torchao")
        finally:
            logging.getLogger().removeHandler(h)
        log = buf.getvalue()
        for line in log.splitlines():
            if "Skipping import of cpp extensions" in line or "undefined symbol" in line:
                p.warnings.append(line.strip())
        if p.warnings:
            p.summary += ": its C++ extension did not load, its custom ops are disabled"


def group_gpu(opts: dict[str, Any]) -> None:
    """``--all-gpus``: one GPU's properties and a matmul on it."""
    idx = int(opts["device"])
    if absent_group("gpu", opts):
        return
    r: dict[str, str] = {}
    with probe(f"gpu:{idx}", r) as p:
        import torch  # lazy: package under test, imported by its own group

        dev = torch.device("cuda", idx)
        props = torch.cuda.get_device_properties(idx)
        cast(DeviceData, p.data).update(DeviceData(
            name=props.name, capability=f"{props.major}.{props.minor}", memory_bytes=props.total_memory,
            smem_per_block_optin=getattr(props, "shared_memory_per_block_optin", None)))
        g = torch.Generator().manual_seed(idx)
        a, b = torch.randn(256, 256, generator=g), torch.randn(256, 256, generator=g)
        _close("fp32", a.to(dev) @ b.to(dev), a.double() @ b.double(), 1e-3, 1e-3, p)
        p.summary = f"{props.name} ({props.major}.{props.minor}): matmul matches the reference"


def group_peer(opts: dict[str, Any]) -> None:
    """``--all-gpus``: which GPU pairs have peer access, and a copy across each pair."""
    if absent_group("peer", opts):
        return
    r: dict[str, str] = {}
    with probe("peer-access", r) as p:
        import torch  # lazy: package under test, imported by its own group

        n = torch.cuda.device_count()
        if n < 2:
            raise Skipped(f"{n} GPU(s): no pairs")
        matrix = [[i == j or bool(torch.cuda.can_device_access_peer(i, j)) for j in range(n)] for i in range(n)]
        p.data["matrix"] = matrix
        bad = []
        src = [torch.arange(1 << 16, device=f"cuda:{i}", dtype=torch.float32) for i in range(n)]
        for i in range(n):
            for j in range(n):
                if i != j and not torch.equal(src[i].to(f"cuda:{j}").cpu(), src[i].cpu()):
                    bad.append(f"{i}->{j}")
        if bad:
            p.fail(f"copies between GPUs gave wrong data: {', '.join(bad)}")
        no_peer = sum(1 for i in range(n) for j in range(n) if not matrix[i][j])
        p.summary = f"{n} GPUs: {n * (n - 1) - no_peer} of {n * (n - 1)} pairs have peer access; copies correct"


def group_nccl(opts: dict[str, Any]) -> None:
    """``--distributed``: an NCCL all-reduce across the ranks, then rank 0 gathers every rank's report.

    The parent writes this rank's report (JSON) on stdin once its other probes are done.
    """
    r: dict[str, str] = {}
    dist: Any = None
    with probe("nccl-all-reduce", r) as p:
        if opts.get("no_gpu"):
            raise Skipped("--no-gpu: GPU probes not run")
        import torch  # lazy: package under test, imported by its own group
        dist = importlib.import_module("torch.distributed")

        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        dist.init_process_group("nccl")
        t = torch.full((1 << 20,), float(rank + 1), device=f"cuda:{local}")
        dist.all_reduce(t)
        torch.cuda.synchronize()
        want = world * (world + 1) / 2
        p.data.update({"rank": rank, "world_size": world, "local_rank": local})
        if not bool((t == want).all()):
            p.fail(f"all-reduce over {world} ranks gave {float(t[0])}, expected {want}")
        p.summary = f"all-reduce over {world} ranks gives the right sum"
    report = json.loads(sys.stdin.read() or "{}")
    gathered: list[Any] = [None] * int(os.environ.get("WORLD_SIZE", "1"))
    if r.get("nccl-all-reduce") == "passed" and dist is not None:
        dist.all_gather_object(gathered, report)
        if int(os.environ["RANK"]) == 0:
            sys.stdout.write("\n" + GATHER_MARK + json.dumps(gathered) + "\n")
            sys.stdout.flush()
        dist.destroy_process_group()


def group_static(opts: dict[str, Any]) -> None:
    from glmcompat.ops.verify.static import run_static  # lazy: the static group only (module level is stdlib)

    for rec in run_static(opts):
        emit(rec)


def forkserver(opts: dict[str, Any]) -> None:
    """Import torch once, then fork one child per group (each its own process, under its own deadline).

    Every group imports torch first; importing it once and forking (before any CUDA call, which is
    safe) saves each group that import and the contention of many at once. A child's records are
    relayed as they come; when it ends (or is killed at its deadline) one exit line says how.
    If torch itself does not import, nothing is forked and the parent runs each group fresh.
    """
    bytecode_cache(opts, "forkserver")
    try:
        import torch  # noqa: F401  # lazy: package under test, imported by its own group
    except BaseException:  # noqa: BLE001
        sys.stdout.write("\n" + NOFORK + "\n")
        sys.stdout.flush()
        return
    timeout = float(opts.get("timeout", 120))
    sel = selectors.DefaultSelector()
    kids: dict[int, dict[str, Any]] = {}
    for g in opts["groups"]:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: run one group, then leave without the parent's atexit handlers
            rc = 0
            try:
                os.close(out_r)
                os.close(err_r)
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                bytecode_cache(opts, g)
                GROUPS[g](opts)
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                rc = 1
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(rc)
        os.close(out_w)
        os.close(err_w)
        kid = {"group": g, "pid": pid, "t0": time.monotonic(), "buf": b"", "err": b"", "open": 2, "timed_out": False,
               "skip": False}
        kids[pid] = kid
        sel.register(out_r, selectors.EVENT_READ, (kid, "out"))
        sel.register(err_r, selectors.EVENT_READ, (kid, "err"))
    pending = set(kids)
    while pending:
        now = time.monotonic()
        for pid in list(pending):
            k = kids[pid]
            if not k["timed_out"] and now - k["t0"] > timeout:
                k["timed_out"] = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for key, _ in sel.select(timeout=0.1):
            k, what = key.data
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fd)
                os.close(key.fd)
                k["open"] -= 1
            elif what == "err":
                k["err"] = (k["err"] + chunk)[-8192:]
            else:
                k["buf"] += chunk
                *lines, k["buf"] = k["buf"].split(b"\n")
                if lines and k["skip"]:  # the end of a line too long to relay
                    lines, k["skip"] = lines[1:], False
                if len(k["buf"]) > MAX_RECORD:  # a child printing without newlines: bounded memory
                    k["buf"], k["skip"] = b"", True
                for line in lines:
                    sys.stdout.write(line.decode("utf-8", "replace") + "\n")
                sys.stdout.flush()
        for pid in list(pending):
            k = kids[pid]
            if k["open"] == 0 or k["timed_out"]:
                done, status = os.waitpid(pid, os.WNOHANG if not k["timed_out"] else 0)
                if done == 0:
                    continue
                pending.discard(pid)
                rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                ended = GroupExit(group=k["group"], rc=rc, timed_out=k["timed_out"],
                                  stderr=k["err"].decode("utf-8", "replace"), seconds=round(time.monotonic() - k["t0"], 3))
                sys.stdout.write("\n" + EXIT + ended.to_line() + "\n")
                sys.stdout.flush()


GROUPS: dict[str, Callable[[dict[str, Any]], None]] = {
    "nvml": group_nvml,
    "static": group_static,
    "torch": group_torch,
    "torchvision": group_torchvision,
    "torchaudio": group_torchaudio,
    "sgl_kernel": group_sgl_kernel,
    "flashinfer": group_flashinfer,
    "triton": group_triton,
    "transformers": group_transformers,
    "sglang": group_sglang,
    "torchao": group_torchao,
    "vllm": group_vllm,
    "gpu": group_gpu,
    "peer": group_peer,
    "nccl": group_nccl,
    "forkserver": forkserver,
}


def main(argv: list[str]) -> int:
    group, opts = argv[0], json.loads(argv[1]) if len(argv) > 1 else {}
    if group != "forkserver":
        bytecode_cache(opts, group)
    GROUPS[group](opts)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # Every result is on stdout already. Leave without the interpreter's teardown, as the forked
    # groups do: with torch imported it takes about 0.3 s, and the parent waits for this exit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
