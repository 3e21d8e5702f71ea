"""The probe groups of torch and the kernel packages (torch, torchvision, torchaudio, sgl_kernel, vLLM,
flashinfer, Triton): each imports its package, checks its operators and runs a kernel against a float64 reference.
Run inside a probe process (:mod:`glmcompat.ops.verify.gpuchecks`); every GPU package is imported by its group."""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import tempfile
import time
from fnmatch import fnmatchcase
from typing import Any, cast

from glmcompat.ops.verify.harness import (
    Probe,
    Skipped,
    close_to,
    cuda_device,
    import_into,
    installed,
    locate,
    op_names,
    ops_probe,
    probe,
    require,
    require_torch,
    rmsnorm_case,
    silu_and_mul_case,
    smoke_bf16,
    start_group,
)
from glmcompat.ops.verify.records import DeviceData, ImportData, OpsData, error_text

def _import_torch(p: Probe, module: str) -> Any:
    """``import:torch``: the import, and the build it finds (its CUDA, its C++ ABI)."""
    torch = import_into(p, module)
    v = getattr(torch, "version", None)
    imported = cast(ImportData, p.data)
    imported["cuda"] = getattr(v, "cuda", None)
    imported["cxx11_abi"] = bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", False)) if hasattr(torch, "_C") else None
    imported["debug"] = None
    return torch


def group_torch(opts: dict[str, Any]) -> None:
    if (r := start_group("torch", opts, _import_torch)) is None:
        return
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
        close_to("fp32", a.to(dev) @ b.to(dev), ref, 1e-3, 1e-3, p)
        close_to("bf16", a.to(dev, torch.bfloat16) @ b.to(dev, torch.bfloat16), ref, 3e-2, 0.5, p)
        p.summary = "fp32 and bf16 matmul match the float64 CPU reference"


def group_torchvision(opts: dict[str, Any]) -> None:
    if (r := start_group("torchvision", opts)) is None:
        return
    with probe("ops:torchvision", r) as p:
        require_torch()
        ops_probe(p, "torchvision", ["nms", "roi_align"], locate("torchvision", "_C*.so"),
                   r["import:torchvision"] == "passed")
    with probe("smoke:torchvision-nms", r) as p:
        require(r, "ops:torchvision", "ops:torchvision")
        import torch  # lazy: package under test, imported by its own group
        import torchvision  # lazy: package under test, imported by its own group

        dev = cuda_device(opts)
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
    if (r := start_group("torchaudio", opts)) is None:
        return
    with probe("ops:torchaudio", r) as p:
        require_torch()
        libs = locate("torchaudio", "lib/libtorchaudio*.so")
        if r["import:torchaudio"] != "passed":
            ops_probe(p, "torchaudio", [], libs, False)
        import torch  # lazy: package under test, imported by its own group

        for lib in libs:  # the extension library must load into this torch
            torch.ops.load_library(lib)
        names = op_names("torchaudio") or []
        p.data["registered"] = len(names)
        p.summary = f"{len(libs)} extension librar{'y' if len(libs) == 1 else 'ies'} loaded, " \
                    f"{len(names)} torchaudio:: operators"


def group_sgl_kernel(opts: dict[str, Any]) -> None:
    if (r := start_group("sgl_kernel", opts)) is None:
        return
    with probe("ops:sgl_kernel", r) as p:
        require_torch()
        libs = locate("sgl_kernel", "common_ops*.so", "*/common_ops*.so")
        ops_probe(p, "sgl_kernel", ["rmsnorm", "silu_and_mul"], libs[:1], r["import:sgl_kernel"] == "passed")
    smoke_bf16(r, opts, "smoke:sgl_kernel-rmsnorm", "ops:sgl_kernel", "rmsnorm", "rmsnorm", rmsnorm_case,
               lambda torch, dev, xw: _sgl_kernel().rmsnorm(*xw, 1e-6))
    smoke_bf16(r, opts, "smoke:sgl_kernel-silu_and_mul", "ops:sgl_kernel", "silu_and_mul", "silu_and_mul",
               silu_and_mul_case, lambda torch, dev, x: _sgl_kernel().silu_and_mul(*x))


def _sgl_kernel() -> Any:
    import sgl_kernel  # lazy: package under test, imported by its own group

    return sgl_kernel


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
    if (r := start_group("vllm", opts)) is None:
        return
    core_patterns = (opts.get("primary_modules") or {}).get("vllm") or VLLM_CORE
    mods: list[tuple[str, str, str]] = []
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
        require_torch()
        if not mods:
            spec = importlib.util.find_spec("vllm")
            mods = vllm_modules(list(spec.submodule_search_locations or [])[0]) if spec else []
        present = {rel.split("/")[-1].split(".", 1)[0]: path for _n, rel, path in mods}
        wanted = {ns: (libs, ops) for ns, (libs, ops) in VLLM_OPS.items() if any(m in present for m in libs)}
        if not wanted:
            raise Skipped("vllm has no module that registers " + " or ".join(f"{ns}::" for ns in VLLM_OPS))
        names_by_ns = {}
        for ns in wanted:
            names = op_names(ns)
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
    smoke_bf16(r, opts, "smoke:vllm-rms_norm", "ops:vllm", "rms_norm", "torch.ops._C.rms_norm", rmsnorm_case,
               lambda torch, dev, xw: _into_out(torch, dev, torch.ops._C.rms_norm, *xw, 1e-6))
    smoke_bf16(r, opts, "smoke:vllm-silu_and_mul", "ops:vllm", "silu_and_mul", "torch.ops._C.silu_and_mul",
               silu_and_mul_case, lambda torch, dev, x: _into_out(torch, dev, torch.ops._C.silu_and_mul, *x))


def _into_out(torch: Any, dev: Any, op: Any, *args: Any) -> Any:
    """Run a vLLM operator that writes into its first argument: a fresh (64, 1024) bf16 tensor, returned once done."""
    out = torch.empty(64, 1024, device=dev, dtype=torch.bfloat16)
    op(out, *args)
    torch.cuda.synchronize(dev)
    return out


def group_flashinfer(opts: dict[str, Any]) -> None:
    if (r := start_group("flashinfer", opts)) is None:
        return
    with probe("smoke:flashinfer-rmsnorm", r) as p:
        require(r, "import:flashinfer", "import:flashinfer")
        if not (opts.get("jit") or installed("flashinfer_jit_cache")):
            raise Skipped("flashinfer would JIT-compile this kernel with nvcc (tens of seconds): "
                       "install flashinfer-jit-cache or pass --jit")
        import flashinfer  # lazy: package under test, imported by its own group
        import torch  # lazy: package under test, imported by its own group

        dev = cuda_device(opts)
        g = torch.Generator().manual_seed(0)
        x = torch.randn(16, 512, generator=g)
        w = torch.randn(512, generator=g)
        ref = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()
        out = flashinfer.norm.rmsnorm(x.to(dev, torch.float16), w.to(dev, torch.float16), 1e-6)
        close_to("rmsnorm", out, ref, 2e-2, 2e-2, p)
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
    with contextlib.ExitStack() as stack:

        def fresh_cache(p: Probe, module: str) -> Any:
            """--jit: compile from scratch (Triton's own cache would skip its compiler), in a cache of this run's."""
            os.environ["TRITON_CACHE_DIR"] = stack.enter_context(
                tempfile.TemporaryDirectory(prefix="glmcompat-triton-cache-"))
            return import_into(p, module)

        if (r := start_group("triton", opts, fresh_cache if opts.get("jit") else import_into)) is not None:
            _triton_smoke(opts, r)


def _triton_smoke(opts: dict[str, Any], r: dict[str, str]) -> None:
    with probe("smoke:triton-kernel", r) as p:
        require(r, "import:triton", "import:triton")
        require_torch()
        import torch  # lazy: package under test, imported by its own group

        dev = cuda_device(opts)
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
            close_to("add", out, x.double() * 2 + y.double(), 1e-6, 1e-6, p)
        # Triton keeps compiled kernels in its cache: a later run loads the kernel from there instead
        # of compiling it (as the server will). Say which happened; --jit always compiles.
        p.data["compiled"] = bool(_triton_cache_entries() - before)
        p.summary = ("a Triton kernel compiled, ran and matches the torch reference" if p.data["compiled"] else
                     "a Triton kernel (from Triton's cache; --jit recompiles it) ran and matches the torch "
                     "reference")

