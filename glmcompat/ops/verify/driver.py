"""verify's driver comparison: the NVIDIA driver NVML read (the ``driver`` probe) against every CUDA build installed
(the ``installed`` probe's distributions), through the driver rule (:func:`glmcompat.decide.cudadriver.check`); and
the kernel side it can read without initialising CUDA: an open kernel module with ``nvidia_uvm``'s HMM on, inside a
container, where CUDA initialisation can fail (the host-side fix is named)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import cast

from glmcompat.decide import cudadriver
from glmcompat.edges.machine import detect
from glmcompat.matrix.rows import Target
from glmcompat.matrix.view import Facts
from glmcompat.model.findings import Finding
from glmcompat.model.machine import Machine, Provenance
from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.ops.verify.records import DriverData, InstalledData


def in_container() -> bool:
    """Whether this process runs in a container (Docker, Podman, LXC): their marker files or variable."""
    return (os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")
            or os.environ.get("container", "") != "")


def findings(by_id: Mapping[str, ProbeDoc], facts: Facts, target: Target | None) -> list[Finding]:
    """The driver's findings: each installed CUDA build the driver NVML read cannot run (an error naming both), and
    the open module's HMM in a container (a warning)."""
    out: list[Finding] = []
    drv, inst = by_id.get("driver"), by_id.get("installed")
    driver = cast(DriverData, (drv.data if drv is not None and drv.status == "passed" else None) or {}).get("driver")
    packages = cast(InstalledData, (inst.data if inst is not None else None) or {}).get("packages", {})
    if driver and packages and target is not None:
        machine = Machine((target.name,), Provenance("default"), str(driver), Provenance("detected", "NVML"))
        out += cudadriver.check(dict(packages), target, facts, machine)
    seen = detect()
    if seen.kernel_module == "open" and seen.uvm_hmm and in_container():
        out.append(Finding(
            rule="driver", severity="warning", packages=(),
            message=f"the NVIDIA open kernel module ({seen.kernel_module_from}) runs with nvidia_uvm's HMM on "
                    f"({seen.uvm_hmm_from} is N) and this is a container: CUDA initialisation can fail here",
            remedy="on the host, load nvidia_uvm with HMM off (`options nvidia_uvm uvm_disable_hmm=1` in "
                   "/etc/modprobe.d, then reload the module or reboot)"))
    return out


__all__ = ["findings", "in_container"]
