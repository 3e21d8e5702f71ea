"""What the probe processes and the parent of ``glmcompat verify`` share: the record type, the probe groups
(the ids each reports, the module each imports), the line protocol (nonce and markers) and the exact text of an
error. Standard library only: :mod:`glmcompat.ops.verify.gpuchecks` imports it at module level
inside the serving container, before any package under test."""

from __future__ import annotations

import traceback
from typing import Any

Record = dict[str, Any]

NONCE_ENV = "GLMCOMPAT_PROBE_NONCE"


MAX_RECORD = 4 << 20  # characters of one record line; longer lines are dropped, never buffered whole

# The probe groups, declared once for both sides. group -> the probe ids it reports: the probe process skips
# them all when its module is absent, and the parent reports the ones a group that dies never reported
# (``transformers``' second id names --model and ``gpu``'s the device: :func:`group_ids`).
GROUP_IDS: dict[str, tuple[str, ...]] = {
    "static": ("installed",),
    "torch": ("import:torch", "device", "smoke:torch-matmul"),
    "torchvision": ("import:torchvision", "ops:torchvision", "smoke:torchvision-nms"),
    "torchaudio": ("import:torchaudio", "ops:torchaudio"),
    "sgl_kernel": ("import:sgl_kernel", "ops:sgl_kernel", "smoke:sgl_kernel-rmsnorm", "smoke:sgl_kernel-silu_and_mul"),
    "flashinfer": ("import:flashinfer", "smoke:flashinfer-rmsnorm"),
    "triton": ("import:triton", "smoke:triton-kernel"),
    "transformers": ("import:transformers", "model"),
    "sglang": ("import:sglang",),
    "torchao": ("import:torchao",),
    "vllm": ("import:vllm", "load:vllm", "ops:vllm", "smoke:vllm-rms_norm", "smoke:vllm-silu_and_mul"),
    "nvml": ("driver",),
    "peer": ("peer-access",),
    "nccl": ("nccl-all-reduce",),
}
# group -> the module it imports: where that module is absent the group need not start (its probes are
# skipped), and its bytecode decides whether the group needs the bytecode cache
GROUP_MODULE: dict[str, str] = {
    "torch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio", "sgl_kernel": "sgl_kernel",
    "flashinfer": "flashinfer", "triton": "triton", "transformers": "transformers", "sglang": "sglang",
    "torchao": "torchao", "vllm": "vllm", "forkserver": "torch", "gpu": "torch", "peer": "torch", "nccl": "torch"}


def group_ids(group: str, opts: dict[str, Any]) -> list[str]:
    """The probe ids ``group`` reports when run with ``opts`` (the probe process's options)."""
    if group == "transformers":
        return ["import:transformers", f"model:{opts['model']}" if opts.get("model") else "model"]
    if group == "gpu":
        return [f"gpu:{int(opts.get('device', 0))}"]
    return list(GROUP_IDS.get(group, ()))


def marks(nonce: str) -> tuple[str, str, str, str]:
    """The (probe record, group exit, no fork, gathered reports) line markers of a probe process whose
    parent chose ``nonce``: a package under test that prints a marker line without the nonce (by accident
    or on purpose) is ignored, so it can neither spoof a result nor break the parent's parsing."""
    tag = f"@{nonce}" if nonce else ""
    return (f"@@glmcompat-probe{tag} ", f"@@glmcompat-exit{tag} ", f"@@glmcompat-nofork{tag}",
            f"@@glmcompat-gathered{tag} ")


def error_text(e: BaseException) -> str:
    """The exact error, with its chain (cause first), one exception per line."""
    chain: list[BaseException] = []
    cur: BaseException | None = e
    while cur is not None and cur not in chain and len(chain) < 6:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    lines = []
    for exc in reversed(chain):
        lines.append("".join(traceback.format_exception_only(type(exc), exc)).strip())
    return "\n".join(lines)


def absent(pid: str, module: str) -> Record:
    """Probe ``pid`` skipped because ``module`` is not installed: ``absent`` names the module (what decisions
    read; the summary is for people)."""
    return {"id": pid, "status": "skipped", "summary": f"{module} is not installed", "seconds": 0.0, "absent": module}


__all__ = ["GROUP_IDS", "GROUP_MODULE", "MAX_RECORD", "NONCE_ENV", "Record", "absent", "error_text", "group_ids",
           "marks"]
