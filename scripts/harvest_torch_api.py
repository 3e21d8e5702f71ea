"""Harvest when each torch API that companions (transformers, accelerate, diffusers, peft, vLLM, SGLang, ...) use
behind a torch version check first appeared (and, where the wheels tell it, the first release without it), for
``glmcompat/matrix/data/torch-api.toml`` (issue 38: a companion's own frame failing on
``AttributeError: module 'torch.utils._pytree' has no attribute 'register_pytree_node'`` or
``ImportError: cannot import name 'sdpa_kernel' from 'torch.nn.attention'`` is torch too old for that companion only
where the name is newer than the torch installed).

Needs the index (read at run time, as pip would: ``glmcompat.edges.index.default_index_url``); each torch wheel is read
with HTTP range requests (its central directory and the few ``.py``/``.pyi`` members named in :data:`TARGETS`), never
downloaded whole. Run: ``python scripts/harvest_torch_api.py > glmcompat/matrix/data/torch-api.toml``.

How a release is read (with :mod:`ast`, never imported): a name is in module ``M`` where ``M``'s file (``M.py`` or
``M/__init__.py``), or one of the extra files :data:`TARGETS` lists for it (a module that star-imports another, the
``torch/_C/__init__.pyi`` stub that declares torch's C-defined dtypes and functions), binds it at module level (def,
class, assignment, import; inside ``if``/``try``/``with`` blocks too, never inside a function or class) or lists it in
``__all__``, or where the wheel ships a submodule of that name (``M/name.py`` or ``M/name/__init__.py``); a dtype of
``torch`` is there where the wheel's c10 ``ScalarType.h`` lists its scalar type (:data:`SCALAR_TYPE_HEADERS`). A name of the
oldest release read has ``since`` = that release (there or earlier).
"""

from __future__ import annotations

import ast
import re
import sys
from functools import partial
from pathlib import Path

from packaging.version import Version

from glmcompat.edges.index import IndexClient
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.readers.wheelzip import RemoteZip, WheelError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harvest_exports import (  # noqa: E402  (a sibling script: the one writer of [[export]] rows and the release walk)
    export_rows, grouped, read_releases, releases, since_until, wheel_source)

# torch's dtypes are C objects (torch/csrc/utils/tensor_dtypes.cpp names each c10::ScalarType in lower case: Float8_e4m3fn
# -> torch.float8_e4m3fn): a release has the dtypes of the ScalarType list its bundled header declares
SCALAR_TYPE_HEADERS = ("torch/include/c10/core/ScalarType.h", "torch/include/torch/headeronly/core/ScalarType.h")
SCALAR_TYPE = re.compile(r"_\(\s*(?:c10::|at::|::)?[\w:<>]+\s*,\s*(\w+)\s*\)")

OLDEST = "1.0.0"
C_STUB = "torch/_C/__init__.pyi"
# module -> (the names companions use that changed across torch 1.x-2.x, extra files that define the module's names)
TARGETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "torch": (("compile", "compiler", "export", "_dynamo", "func", "library", "xpu", "mps", "accelerator", "amp",
               "nested", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
               "float4_e2m1fn_x2", "uint16", "uint32", "uint64", "get_default_device", "set_default_device", "vmap",
               "inference_mode", "set_float32_matmul_precision", "get_float32_matmul_precision", "cond",
               "is_autocast_cpu_enabled", "get_autocast_dtype", "sym_int", "_assert_async", "fft", "linalg", "special",
               "overrides", "fx", "ao", "quantization", "hub", "futures", "use_deterministic_algorithms",
               "set_deterministic", "searchsorted", "bucketize", "result_type", "channels_last", "testing",
               "are_deterministic_algorithms_enabled", "is_deterministic"), (C_STUB,)),
    "torch.utils._pytree": (("register_pytree_node", "_register_pytree_node", "tree_map_only", "tree_leaves",
                             "tree_flatten_with_path", "register_constant", "tree_map", "tree_flatten",
                             "tree_unflatten", "PyTree"), ()),
    "torch.compiler": (("is_compiling", "is_dynamo_compiling", "is_exporting", "disable", "allow_in_graph", "reset",
                        "set_stance", "cudagraph_mark_step_begin", "assume_constant_result", "compile"), ()),
    "torch._dynamo": (("is_compiling", "allow_in_graph", "mark_static_address", "disable", "mark_dynamic",
                       "maybe_mark_dynamic", "reset", "config"), ()),
    "torch.library": (("custom_op", "register_fake", "impl_abstract", "register_kernel", "register_autograd", "opcheck",
                       "infer_schema", "triton_op", "wrap_triton", "register_torch_dispatch", "define", "impl",
                       "Library", "CustomOpDef", "get_ctx", "register_vmap"), ()),
    "torch.nn": (("attention", "RMSNorm", "Buffer", "CircularPad2d", "ZeroPad1d", "Mish", "SiLU", "LazyLinear", "GELU",
                  "Identity", "Flatten", "Unflatten", "Hardswish", "MultiheadAttention", "TransformerEncoder",
                  "TransformerEncoderLayer", "Transformer"),
                 ("torch/nn/modules/__init__.py",)),
    "torch.nn.attention": (("sdpa_kernel", "SDPBackend", "flex_attention", "bias", "varlen", "activate_flash_attention_impl"), ()),
    "torch.nn.attention.flex_attention": (("flex_attention", "create_block_mask", "BlockMask", "and_masks", "or_masks",
                                           "noop_mask", "create_mask", "AuxRequest"), ()),
    "torch.nn.functional": (("scaled_dot_product_attention", "rms_norm", "mish", "silu", "gelu", "hardswish",
                             "hardsigmoid", "multi_head_attention_forward"), ()),
    "torch.nn.utils": (("parametrize", "parametrizations", "stateless", "skip_init", "clip_grads_with_norm_",
                        "get_total_norm", "fuse_conv_bn_eval"), ()),
    "torch.nn.utils.parametrizations": (("weight_norm", "orthogonal", "spectral_norm"), ()),
    "torch.distributed": (("tensor", "_tensor", "device_mesh", "fsdp", "checkpoint", "_composable", "pipelining",
                           "_symmetric_memory", "is_torchelastic_launched", "get_default_backend_for_device"), ()),
    "torch.distributed.tensor": (("DTensor", "Replicate", "Shard", "Partial", "distribute_tensor", "distribute_module",
                                  "DeviceMesh", "init_device_mesh", "parallel", "experimental", "placement_types"), ()),
    "torch.distributed.device_mesh": (("init_device_mesh", "DeviceMesh"), ()),
    "torch.distributed.fsdp": (("fully_shard", "FullyShardedDataParallel", "MixedPrecisionPolicy", "FSDPModule",
                                "CPUOffloadPolicy", "MixedPrecision", "ShardingStrategy", "FullStateDictConfig",
                                "StateDictType"), ()),
    "torch.distributed.checkpoint": (("state_dict", "save", "load", "FileSystemReader", "FileSystemWriter",
                                      "async_save", "format_utils"), ()),
    "torch.amp": (("GradScaler", "custom_fwd", "custom_bwd", "autocast", "is_autocast_available"), ()),
    "torch.cuda.amp": (("GradScaler", "custom_fwd", "custom_bwd", "autocast"), ()),
    "torch.cpu.amp": (("autocast", "GradScaler"), ()),
    "torch.sparse": (("to_sparse_semi_structured", "SparseSemiStructuredTensor", "semi_structured"), ()),
    "torch.export": (("export", "Dim", "ExportedProgram", "load", "save", "draft_export", "export_for_training",
                      "ShapesCollection"), ()),
    "torch.utils.checkpoint": (("checkpoint", "checkpoint_sequential", "create_selective_checkpoint_contexts",
                                "CheckpointPolicy", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled"), ()),
    "torch.xpu": (("is_available", "device_count", "empty_cache", "manual_seed", "synchronize", "current_device",
                   "get_device_name", "memory_allocated", "max_memory_allocated", "is_bf16_supported",
                   "mem_get_info"), ("torch/xpu/memory.py", "torch/xpu/random.py")),
    "torch.mps": (("empty_cache", "current_allocated_memory", "driver_allocated_memory", "manual_seed",
                   "synchronize", "device_count", "set_per_process_memory_fraction", "recommended_max_memory"), ()),
    "torch.backends.mps": (("is_available", "is_built"), ()),
    "torch.cuda": (("is_bf16_supported", "mem_get_info", "OutOfMemoryError", "is_current_stream_capturing",
                    "get_device_properties", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
                    "MemPool", "use_mem_pool", "get_per_process_memory_fraction", "set_per_process_memory_fraction"),
                   ("torch/cuda/memory.py",)),
    "torch.backends.cuda": (("sdp_kernel", "is_flash_attention_available", "enable_cudnn_sdp", "SDPAParams",
                             "flash_sdp_enabled", "enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp",
                             "can_use_flash_attention", "can_use_efficient_attention", "cudnn_sdp_enabled",
                             "preferred_linalg_library", "allow_fp16_bf16_reduction_math_sdp"), ()),
    "torch.serialization": (("add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals"), ()),
    "torch.optim.lr_scheduler": (("LRScheduler", "_LRScheduler"), ()),
    "torch.func": (("functional_call", "vmap", "grad", "jacrev", "stack_module_state"), ()),
    "torch.accelerator": (("current_accelerator", "device_count", "is_available", "synchronize",
                           "current_device_index", "empty_cache"), ()),
    # the older (torch 1.x) modules and names companions call, private ones too: torchvision 0.7's
    # torchvision/ops/boxes.py (@torch.jit._script_if_tracing), torchvision 0.11's torchvision/utils.py
    # (_log_api_usage_once: torch._C._log_api_usage_once), transformers' utils/fx.py (torch.fx) and
    # pytorch_utils.py (torch.overrides), accelerate's and transformers' quantizers (torch.ao.quantization, before it
    # torch.quantization)
    "torch.jit": (("_script_if_tracing", "script_if_tracing", "is_scripting", "is_tracing", "_overload_method",
                   "interface", "unused", "ignore", "export", "Final", "Attribute", "trace_module", "annotate",
                   "freeze", "optimize_for_inference", "fork", "wait", "_unwrap_optional", "isinstance",
                   "enable_onednn_fusion"), ()),
    "torch._C": (("_log_api_usage_once", "_get_tracing_state", "_set_cublas_allow_tf32", "_jit_set_profiling_executor",
                  "_jit_set_profiling_mode", "_jit_override_can_fuse_on_gpu", "_cuda_getDeviceCount",
                  "_get_cudnn_allow_tf32", "_set_cudnn_allow_tf32", "_get_cublas_allow_tf32",
                  "_get_private_use1_backend_name", "_dynamo"), ()),
    "torch.fx": (("symbolic_trace", "GraphModule", "Graph", "Proxy", "Tracer", "Node", "wrap", "Interpreter",
                  "Transformer", "replace_pattern", "passes", "experimental", "_symbolic_trace", "_compatibility",
                  "proxy", "node", "graph_module"), ()),
    "torch.overrides": (("has_torch_function", "handle_torch_function", "TorchFunctionMode", "is_tensor_like",
                         "get_overridable_functions", "has_torch_function_unary", "has_torch_function_variadic",
                         "get_ignored_functions", "get_testing_overrides", "_get_current_function_mode"), ()),
    "torch.ao": (("quantization", "nn", "pruning", "ns"), ()),
    "torch.ao.quantization": (("quantize_dynamic", "QConfig", "get_default_qconfig", "prepare", "convert",
                               "quantize_fx", "default_dynamic_qconfig", "QuantStub", "DeQuantStub", "fuse_modules",
                               "prepare_qat", "float16_dynamic_qconfig", "per_channel_dynamic_qconfig"), ()),
    "torch.quantization": (("quantize_dynamic", "QConfig", "get_default_qconfig", "prepare", "convert",
                            "quantize_fx", "default_dynamic_qconfig", "QuantStub", "DeQuantStub", "fuse_modules",
                            "prepare_qat", "float16_dynamic_qconfig", "per_channel_dynamic_qconfig"), ()),
    "torch.utils.data": (("IterableDataset", "get_worker_info", "ChainDataset", "Subset", "random_split",
                          "DistributedSampler", "ConcatDataset", "WeightedRandomSampler", "default_collate",
                          "BatchSampler", "TensorDataset", "datapipes", "StackDataset"), ()),
}
# torch's C-defined names (torch._C): read from its stub where the wheel ships one (older wheels do not: unknown there)
C_MODULE = "torch._C"


def bound(source: bytes, stars: list[tuple[int, str]] | None = None) -> set[str]:
    """The names a module binds at module level (def, class, assignment, import, also inside if/try/with, never inside a
    function or class) and the strings of its ``__all__``; each ``from M import *`` (its level and module) is added to
    ``stars`` (torch/ao/quantization/__init__.py of torch 1.10 .. 1.13 binds QConfig and prepare that way)."""
    tree = ast.parse(source)
    out: set[str] = set()

    def targets(t: ast.AST) -> None:
        if isinstance(t, ast.Name):
            out.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)

    def visit(nodes: list[ast.stmt]) -> None:
        for st in nodes:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(st.name)
                continue
            if isinstance(st, ast.Assign):
                for t in st.targets:
                    targets(t)
                if any(isinstance(t, ast.Name) and t.id == "__all__" for t in st.targets) and \
                        isinstance(st.value, (ast.List, ast.Tuple)):
                    out.update(e.value for e in st.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
            elif isinstance(st, ast.AnnAssign):
                targets(st.target)
            elif isinstance(st, (ast.Import, ast.ImportFrom)):
                for a in st.names:
                    if a.name != "*":
                        out.add(a.asname or a.name.split(".")[0])
                    elif isinstance(st, ast.ImportFrom) and stars is not None:
                        stars.append((st.level, st.module or ""))
            for field in ("body", "orelse", "finalbody"):
                visit(getattr(st, field, []) or [])
            for h in getattr(st, "handlers", []) or []:
                visit(h.body)

    visit(tree.body)
    return out


def module_file(module: str, members: set[str]) -> str | None:
    base = module.replace(".", "/")
    return next((p for p in (f"{base}.py", f"{base}/__init__.py") if p in members), None)


def read(ic: IndexClient, version: str) -> tuple[str, str, dict[str, set[str] | None]]:
    """A release's wheel file name and, per target module, the target names it has (an absent module: none)."""
    # the Linux x86_64 wheel of a Python every release read has a wheel for: before torch 1.8 the newest CPython 3 its
    # release has a manylinux1 wheel for (3.7 or 3.8; 1.7.1's 3.9), 3.9 up to torch 2.5, 3.11 from 2.6 on
    v = Version(version)
    if v < Version("1.8"):  # cp37m's ABI tag: the Linux x86_64 wheel of the newest CPython 3 the release has one for
        linux = [x for x in ic.project("torch").files_for(version)
                 if re.fullmatch(r"torch-[\w.]+-cp3(\d)-cp3\dm?-manylinux1_x86_64\.whl", x.filename)]
        f = max(linux, key=lambda x: int(x.filename.split("-cp3", 1)[1].split("-", 1)[0]))
    else:
        f = ic.find_wheel("torch", version, python="cp39" if v < Version("2.6") else "cp311")
    z = RemoteZip(HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size))
    members = {m.name for m in z.members}
    texts: dict[str, set[str]] = {}

    def names_of(path: str, depth: int = 0) -> set[str]:
        """The names module file ``path`` binds, with the public names of each module it star-imports (that module's
        ``__all__`` where it has one, else its names without a leading underscore)."""
        if path not in texts:
            stars: list[tuple[int, str]] = []
            try:
                texts[path] = bound(z.read(path), stars) if path in members else set()
            except (SyntaxError, WheelError):
                texts[path] = set()
            package = path.rsplit("/", 1)[0] if path.endswith("/__init__.py") else path.rsplit("/", 1)[0]
            for level, mod in stars if depth < 4 else ():
                base = package.split("/")
                base = base[:len(base) - (level - 1)] if level else []
                target = "/".join(base + [p for p in mod.split(".") if p])
                found = next((t for t in (f"{target}.py", f"{target}/__init__.py") if t in members), None)
                if found is None:
                    continue
                names = names_of(found, depth + 1)
                texts[path] |= {n for n in names if not n.startswith("_")}
        return texts[path]

    dtypes: set[str] = set()
    for h in SCALAR_TYPE_HEADERS:
        if h in members:
            dtypes.update(n.lower() for n in SCALAR_TYPE.findall(z.read(h).decode("utf-8", "replace")))
    have: dict[str, set[str] | None] = {}
    for module, (names, extra) in TARGETS.items():
        own = module_file(module, members) if module != C_MODULE else (C_STUB if C_STUB in members else None)
        if own is None:
            have[module] = None if module == C_MODULE else set()  # no stub: torch._C's names are not told there
            continue
        defined = names_of(own).union(*(names_of(p) for p in extra)) | (dtypes if module == "torch" else set())
        base = module.replace(".", "/")
        have[module] = {n for n in names if n in defined or f"{base}/{n}.py" in members
                        or f"{base}/{n}/__init__.py" in members}
    return version, f.filename, have


def harvest(ic: IndexClient) -> list[str]:
    got = read_releases(lambda v: read(ic, v), releases(ic, "torch", OLDEST))
    lines: list[str] = []
    for module, (names, _) in TARGETS.items():
        told = [(version, have[module]) for version, _, have in got if have[module] is not None]
        oldest_told = told[0][0] if told else ""
        first, gone = since_until([(version, names_had) for version, names_had in told if names_had is not None])
        groups = grouped(first, gone, keep=set(names).__contains__)
        # in the oldest wheel that declares the module's names, where earlier wheels do not tell: unknown, no row
        told_groups = {k: ns for k, ns in groups.items() if not (k[0] == oldest_told and k[0] != got[0][0])}
        lines += export_rows("torch", module, told_groups, partial(
            wheel_source, f"{module.replace('.', '/')} (its .py file, or __init__.py, and submodules)",
            "harvest_torch_api.py", "torch", got))
    return lines


def main() -> int:
    print("# When each torch API that companions use behind a torch version check first appeared (since) and, where the")
    print("# wheels tell it, the first release without it (until): from the real torch wheels' .py files, harvested by")
    print("# scripts/harvest_torch_api.py (its docstring says how each release is read). explain reads it to tell torch too")
    print("# old (or too new) for the companion whose own frame fails on the name (issue 38). Generated: do not edit by hand.")
    print("schema = 1")
    print()
    with IndexClient() as ic:
        print("\n".join(harvest(ic)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
