"""Builds of the torch family for another vendor's GPUs on an NVIDIA target: ``torch==2.9.1+rocm6.4`` (AMD ROCm/HIP)
and ``+xpu`` (Intel oneAPI/SYCL) link no CUDA at all, so no NVIDIA GPU runs them; torch then reports
``torch.cuda.is_available() == False`` or runs on the CPU. Every glmcompat target is an NVIDIA compute capability, so
such a build is an error (``+cpu`` builds are the gpu-code rule's: no GPU code). A lock whose ROCm/XPU extras are
declared as conflicting with its CUDA extra installs those builds only in their own environments:
``glmcompat.decide.rules.evaluate_lock`` leaves those environments out as "not for this target" (:func:`vendor_of`)
where another environment serves the target."""

from __future__ import annotations


from packaging.version import InvalidVersion, Version

from glmcompat.decide.rules.context import Context, Rule
from glmcompat.model.findings import Finding

ID = "non-nvidia"
# the torch family and the triton builds PyTorch publishes for other vendors beside them
FAMILY = ("torch", "torchvision", "torchaudio", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-rocm", "triton-xpu")
_VENDORS = (("rocm", "AMD ROCm (HIP)"), ("xpu", "Intel XPU (oneAPI/SYCL)"))
EVIDENCE = ("documentation", "https://pytorch.org/get-started/locally/ (a ROCm build of torch runs on AMD GPUs through HIP, "
            "an XPU build on Intel GPUs; each is a separate build from its own index, without CUDA)")


def vendor_of(name: str, version: str) -> str | None:
    """'AMD ROCm (HIP)' / 'Intel XPU (oneAPI/SYCL)' for a build of the torch family for that vendor's GPUs (its local
    label ``+rocm6.4`` / ``+xpu``, or a ``*-rocm``/``*-xpu`` triton), else None."""
    if name not in FAMILY:
        return None
    for key, vendor in _VENDORS:
        if name.endswith("-" + key):
            return vendor
    try:
        local = Version(version).local or ""
    except InvalidVersion:
        return None
    return next((vendor for key, vendor in _VENDORS if local.startswith(key)), None)


def check(ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    t = ctx.target
    for name in sorted(set(FAMILY) & ctx.packages.keys()):
        ver = ctx.packages[name]
        vendor = vendor_of(name, ver)
        if vendor is None:
            continue
        pub = Version(ver).public
        remedy = (f"install a CUDA build of torch {pub} (the default index's wheel, or a +cuXYZ build from PyTorch's "
                  "CUDA index)" if name == "torch" else
                  f"install the CUDA build of {name} {pub} that matches the CUDA torch (drop the {vendor.split()[0]} index)")
        out.append(Finding(
            rule="non-nvidia", severity="error", packages=(ctx.pin(name),),
            message=f"Because {name} {ver} is a build for {vendor} GPUs and {t.name} (compute capability "
            f"{t.compute_capability}) is an NVIDIA GPU, we can conclude that it cannot run on NVIDIA GPUs: it links no "
            "CUDA runtime and carries no NVIDIA GPU code",
            evidence=(("metadata", f"the local label of {name} {ver} is that of a build for {vendor} GPUs"), EVIDENCE), remedy=remedy))
    return out


RULE = Rule(id=ID, family="nonnvidia", check=check, reads=(), evidence=("metadata",), remedy="replace",
            doc="ROCm and XPU builds of the torch family, which cannot run on an NVIDIA target",
            names=FAMILY)
