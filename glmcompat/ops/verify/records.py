"""What the probe processes and the parent of ``glmcompat verify`` share: the ``data`` of each probe kind the
report's rules read (the record a probe emits is the report's own, :class:`glmcompat.model.outputs.probe.ProbeDoc`),
the probe groups (the ids each reports, the module each imports), the line protocol (nonce and markers) and the exact
text of an error. Standard library and that record only (itself standard library only):
:mod:`glmcompat.ops.verify.gpuchecks` imports it at module level inside the serving container, before any package
under test."""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from typing import Any, TypedDict

from glmcompat.model.outputs.probe import ProbeDoc


@dataclass(frozen=True, kw_only=True)
class GroupExit:
    """How one group forked by the fork server ended (its exit line): the parent reports the probes it never
    reported from it."""

    group: str
    rc: int | None
    """its exit status; negative: the signal that killed it"""
    timed_out: bool
    stderr: str = ""
    seconds: float

    def to_line(self) -> str:
        return json.dumps({"group": self.group, "rc": self.rc, "timed_out": self.timed_out, "stderr": self.stderr,
                           "seconds": self.seconds})

    @classmethod
    def parse(cls, e: Any) -> GroupExit | None:
        """The exit of ``e`` (an exit line's JSON), or None where it is not a well-formed one."""
        if not (isinstance(e, dict) and isinstance(e.get("group"), str)
                and (e.get("rc") is None or type(e.get("rc")) is int) and isinstance(e.get("timed_out"), bool)
                and isinstance(e.get("stderr", ""), str) and isinstance(e.get("seconds"), int | float)):
            return None
        return cls(group=e["group"], rc=e.get("rc"), timed_out=e["timed_out"], stderr=e.get("stderr", ""),
                   seconds=e["seconds"])


# ------------------------------------------------------------------------------------------------
# The data of the probe kinds the report's rules read (what the probes put in ``ProbeDoc.data``)
# ------------------------------------------------------------------------------------------------


class DriverGpu(TypedDict):
    index: int
    name: str
    capability: str


class DriverData(TypedDict, total=False):
    """``driver``: the NVIDIA driver through NVML."""

    driver: str
    cuda_driver: str
    gpus: list[DriverGpu]


class DeviceData(TypedDict, total=False):
    """``device`` (and ``gpu:N``): the GPU as torch sees it; ``target``, ``target_smem_per_block_optin``: the
    parent's verdict against the target."""

    index: int
    name: str
    capability: str
    multiprocessors: int
    memory_bytes: int
    smem_per_block_optin: int | None
    count: int
    cuda_runtime: str | None
    torch_arch_list: list[str]
    cuda_driver: str
    target: str
    target_smem_per_block_optin: int | None


class ImportData(TypedDict, total=False):
    """``import:<module>``: where the module came from (and for torch, its build)."""

    version: str | None
    file: str | None
    cuda: str | None
    cxx11_abi: bool | None
    debug: None


class OpsData(TypedDict, total=False):
    """``ops:<module>``: the operators registered (vllm: per namespace) and which have CUDA kernels."""

    registered: int | dict[str, int]
    cuda_kernels: dict[str, bool]


class HalfInstalled(TypedDict, total=False):
    """A distribution whose RECORD lists files not on disk."""

    files: list[str]
    where: str


class InstalledData(TypedDict, total=False):
    """``installed``: the distributions, the installation's findings and the rules' findings per target (as
    ``Finding.to_json`` writes them; added by the parent, :func:`glmcompat.ops.verify.assemble.installed_rules`, which
    then keeps the target's and drops ``findings_by_target``)."""

    packages: dict[str, str]
    installation: list[dict[str, Any]]
    half_installed: dict[str, HalfInstalled]
    findings_by_target: dict[str, list[dict[str, Any]]]


class AbiFile(TypedDict, total=False):
    """One extension file against torch's symbols."""

    file: str
    needs_from_torch: int
    missing: list[str]
    missing_demangled: list[str]
    cudart: list[str]


class AbiData(TypedDict, total=False):
    """``abi:<distribution>``: its files' torch symbols and CUDA runtimes against the installed torch."""

    version: str
    torch: str | None
    files: list[AbiFile]
    missing_files: list[str]
    torch_cudart: list[str]
    torch_libs_seconds: float


class GpuCodeFile(TypedDict, total=False):
    """One extension file's GPU code; ``runs``, ``decides``: the parent's verdict against the device."""

    file: str
    sass: list[str]
    ptx: list[str]
    variant: str | None
    runs: list[str]
    decides: bool


class GpuCodeData(TypedDict, total=False):
    """``gpu-code:<distribution>``: the GPU code of its files; ``judged_for``: the capability judged against."""

    version: str
    files: list[GpuCodeFile]
    judged_for: str


class ExtensionFailure(TypedDict):
    """One extension module that does not import: the file that owns it and the cause."""

    module: str
    file: str
    kind: str
    """numpy-abi, torch-symbol, undefined-symbol, missing-library or import"""
    cause: str
    error: str


class ExtensionData(TypedDict, total=False):
    """``extension:<distribution>``: its extension modules imported in a probe process of their own."""

    version: str
    modules: int
    libraries: int
    """files with a module's name that are shared libraries, not modules (loaded, not imported)"""
    failures: list[ExtensionFailure]
    torch_global: list[str]
    """modules that do not link torch and import once torch's libraries are global in the process (as their
    package loads them): torch defines every symbol they need"""


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
    if group == "ext":
        return [f"extension:{opts['dist']}"]
    if group.startswith("ext:"):  # forked by the fork server: ext:<distribution>
        return [f"extension:{group[4:]}"]
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


def absent(pid: str, module: str) -> ProbeDoc:
    """Probe ``pid`` skipped because ``module`` is not installed: ``absent`` names the module (what decisions
    read; the summary is for people)."""
    return ProbeDoc(id=pid, status="skipped", summary=f"{module} is not installed", seconds=0.0, absent=module)


__all__ = ["GROUP_IDS", "GROUP_MODULE", "MAX_RECORD", "NONCE_ENV", "AbiData",
           "AbiFile", "DeviceData", "DriverData", "DriverGpu", "ExtensionData", "ExtensionFailure", "GpuCodeData", "GpuCodeFile", "GroupExit", "HalfInstalled",
           "ImportData", "InstalledData", "OpsData", "absent", "error_text", "group_ids", "marks"]
