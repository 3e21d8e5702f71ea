"""The probe groups around the kernels: the driver through NVML, transformers, sglang, torchao, every GPU and
the pairs of them (``--all-gpus``), NCCL across ranks (``--distributed``) and the static checks. Run inside a probe
process (:mod:`glmcompat.ops.verify.gpuchecks`)."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import io
import json
import logging
import os
import sys
from typing import Any, cast

from glmcompat.ops.verify.extensions import NOT_A_MODULE, cause_of, numpy_version
from glmcompat.ops.verify.harness import (
    GATHER_MARK,
    Probe,
    Skipped,
    close_to,
    emit,
    import_into,
    probe,
    require,
    start_group,
)
from glmcompat.ops.verify.records import DeviceData, DriverData, DriverGpu, error_text, group_ids

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



def group_transformers(opts: dict[str, Any]) -> None:
    if (r := start_group("transformers", opts)) is None:
        return
    model = opts.get("model")
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
    start_group("sglang", opts)


def _import_torchao(p: Probe, module: str) -> Any:
    """``import:torchao``: torchao swallows a failed load of its _C and only logs it: the log is captured."""
    buf = io.StringIO()
    h = logging.StreamHandler(buf)
    logging.getLogger().addHandler(h)
    logging.getLogger().setLevel(logging.DEBUG) if logging.getLogger().level > logging.INFO else None
    try:
        mod = import_into(p, module)
    finally:
        logging.getLogger().removeHandler(h)
    log = buf.getvalue()
    for line in log.splitlines():
        if "Skipping import of cpp extensions" in line or "undefined symbol" in line:
            p.warnings.append(line.strip())
    if p.warnings:
        p.summary += ": its C++ extension did not load, its custom ops are disabled"
    return mod


def group_torchao(opts: dict[str, Any]) -> None:
    start_group("torchao", opts, _import_torchao)


def group_gpu(opts: dict[str, Any]) -> None:
    """``--all-gpus``: one GPU's properties and a matmul on it."""
    idx = int(opts["device"])
    if (r := start_group("gpu", opts, importer=None)) is None:
        return
    with probe(f"gpu:{idx}", r) as p:
        import torch  # lazy: package under test, imported by its own group

        dev = torch.device("cuda", idx)
        props = torch.cuda.get_device_properties(idx)
        cast(DeviceData, p.data).update(DeviceData(
            name=props.name, capability=f"{props.major}.{props.minor}", memory_bytes=props.total_memory,
            smem_per_block_optin=getattr(props, "shared_memory_per_block_optin", None)))
        g = torch.Generator().manual_seed(idx)
        a, b = torch.randn(256, 256, generator=g), torch.randn(256, 256, generator=g)
        close_to("fp32", a.to(dev) @ b.to(dev), a.double() @ b.double(), 1e-3, 1e-3, p)
        p.summary = f"{props.name} ({props.major}.{props.minor}): matmul matches the reference"


def group_peer(opts: dict[str, Any]) -> None:
    """``--all-gpus``: which GPU pairs have peer access, and a copy across each pair."""
    if (r := start_group("peer", opts, importer=None)) is None:
        return
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


def _imports(package: str) -> bool:
    """Whether ``package`` itself imports (an import already done returns at once)."""
    try:
        importlib.import_module(package)
    except BaseException:  # noqa: BLE001 - any failure means it does not
        return False
    return True


def _torch_global() -> bool:
    """Make the installed torch's libraries global in this process (``torch._C`` opened again with RTLD_GLOBAL,
    which glibc extends to the libraries it loaded: libtorch_cpu, libc10, ...), torch imported first; False where
    there is no torch to load."""
    try:
        torch = importlib.import_module("torch")
        ctypes.CDLL(torch._C.__file__, mode=os.RTLD_GLOBAL)
    except BaseException:  # noqa: BLE001 - no torch, or one that does not import: nothing to retry with
        return False
    return True


def group_ext(opts: dict[str, Any]) -> None:
    """Import each extension module of one distribution (``opts``: :meth:`ExtDist.opts`); one probe."""
    dist, version = str(opts["dist"]), str(opts.get("version") or "")
    r: dict[str, str] = {}
    with probe(f"extension:{dist}", r) as p:
        p.data.update({"version": version, "modules": len(opts["modules"])})
        if opts.get("torch"):
            with contextlib.suppress(BaseException):
                importlib.import_module("torch")  # as the package's own import does first (torch loads libc10)
        failures: list[dict[str, str]] = []
        global_torch: list[str] = []
        hidden: dict[str, tuple[str, list[str]]] = {}
        libraries = 0
        files: dict[str, str] = opts.get("files") or {}
        for mod in opts["modules"]:
            try:
                importlib.import_module(mod)  # a module another one imported already returns at once
            except BaseException as e:  # noqa: BLE001 - the point is to report anything the import raises
                if isinstance(e, KeyboardInterrupt):
                    raise
                text = error_text(e)
                gone = getattr(e, "name", None) if isinstance(e, ModuleNotFoundError) else None
                if gone and not (mod == gone or mod.startswith(gone + ".")):
                    # an optional dependency of a module the package imports only when it is there (zstandard's
                    # cffi backend): not a failure of the package
                    p.warnings.append(f"{mod}: not imported, it needs {gone}, which is not installed (optional)")
                    continue
                if NOT_A_MODULE in text:
                    libraries += 1  # a shared library with a module's name: loaded, not a module
                    continue
                kind, cause = cause_of(text, numpy_version())  # NumPy's printed message is on the probe's stderr
                if kind == "torch-symbol" and _torch_global():
                    # a module that does not link torch's libraries and finds their symbols in the process's global
                    # scope, once its package has made them global (cuda-core's _tensor_bridge: its aoti_shim.h says
                    # "made visible at runtime through ctypes.CDLL(torch._C, RTLD_GLOBAL)"): imported again so; only
                    # a symbol the installed torch really lacks still fails
                    try:
                        importlib.import_module(mod)
                    except BaseException as again:  # noqa: BLE001 - the point is to report anything it raises
                        if isinstance(again, KeyboardInterrupt):
                            raise
                        text = error_text(again)
                        kind, cause = cause_of(text, numpy_version())
                    else:
                        global_torch.append(mod)
                        continue
                if gone and mod.count(".") and _imports(mod.split(".")[0]):
                    # the file is there but the installed package does not make it importable (cuda-core's cu12/
                    # beside the cu13/ its cuda-bindings 13 selects): said once per folder, not once per module
                    # the missing package's folder where a parent is missing (cuda.core.cu12 and all below it: one
                    # line), else the module's own folder
                    folder = gone.replace(".", "/") if gone != mod else os.path.dirname(files.get(mod) or
                                                                                       mod.replace(".", "/"))
                    hidden.setdefault(folder, (text.splitlines()[-1][:200], []))[1].append(mod)
                    p.degraded = True
                    continue
                if kind in ("import", "missing-library") and mod.count(".") and _imports(mod.split(".")[0]):
                    # the package itself imports; one of its modules raises something else than an ABI error on its
                    # own: a module for another setup, or one that links an optional library the package loads only
                    # when it is there (cupyx._cutensor: libcutensor; numba's tbbpool: libtbb): said, and not a
                    # failure of the package
                    why = f" ({cause})" if kind == "missing-library" else ""
                    p.warnings.append(f"{files.get(mod) or mod}: {text.splitlines()[-1][:300]}{why}")
                    p.degraded = True
                    continue
                failures.append({"module": mod, "file": files.get(mod, ""), "kind": kind, "cause": cause,
                                 "error": text.strip()})
        for folder, (error, mods) in sorted(hidden.items()):
            p.warnings.append(f"{folder}/ ({len(mods)} extension module(s)): not imported ({error}): the installed "
                              "package does not make them importable here (modules for another setup)")
        p.data["libraries"] = libraries
        if global_torch:
            p.data["torch_global"] = global_torch
        if failures:
            p.data["failures"] = failures
            f = failures[0]
            more = f" (and {len(failures) - 1} more module(s))" if len(failures) > 1 else ""
            p.summary = f"{dist} {version}: {f['module']} does not import: {f['cause']}{more}"
            p.fail(p.summary + "\n" + "\n".join(f"{x['file'] or x['module']}: {x['error']}" for x in failures[:5]))
        unloaded = len(p.warnings) - len(hidden) + sum(len(m) for _, m in hidden.values())
        n = len(opts["modules"]) - libraries - unloaded
        p.summary = f"{dist} {version}: {n} extension module(s) import" + (
            f" ({len(global_torch)} once torch's libraries are loaded globally, as its package loads them)"
            if global_torch else "") + (f"; {unloaded} not (see the warnings)" if p.warnings else "")
