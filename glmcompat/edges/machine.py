"""Read the machine glmcompat runs on, once, for a command whose target, driver or glibc is ``auto`` (and a lock's
default glibc): the NVIDIA driver from ``/sys/module/nvidia/version``, then ``/proc/driver/nvidia/version``, then
NVML (the order of uv's ``crates/uv-torch`` accelerator detection, NVML in place of ``nvidia-smi``); every GPU and
its compute capability through NVML; the kernel module's flavour (``/proc/driver/nvidia/version`` names the "Open
Kernel Module") and ``nvidia_uvm``'s HMM setting (``/sys/module/nvidia_uvm/parameters/uvm_disable_hmm``); glibc from
the running C library (``os.confstr``). ``root``: the directory the ``/sys`` and ``/proc`` paths are read under
(tests feed files recorded from real machines); ``nvml``: the NVML library to load (``GLMCOMPAT_NVML_LIBRARY``)."""

from __future__ import annotations

import os
import platform
import re

from glmcompat.edges import nvml as nvml_edge
from glmcompat.model.machine import Detected

SYS_VERSION = "sys/module/nvidia/version"
PROC_VERSION = "proc/driver/nvidia/version"
UVM_HMM = "sys/module/nvidia_uvm/parameters/uvm_disable_hmm"
NVML_ENV = "GLMCOMPAT_NVML_LIBRARY"
ROOT_ENV = "GLMCOMPAT_MACHINE_ROOT"  # where /sys and /proc are read (tests: recorded files); default /
_VERSION = re.compile(r"^\d{2,4}(\.\d{1,4}){0,2}$")


def _read(root: str, rel: str) -> str | None:
    try:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            return f.read(4096)
    except OSError:
        return None


def parse_sys_version(text: str) -> str | None:
    """The driver version in ``/sys/module/nvidia/version`` (``580.95.05``); None when it is not one."""
    v = text.strip()
    return v if _VERSION.match(v) else None


def parse_proc_version(text: str) -> tuple[str | None, str | None]:
    """(driver version, kernel module flavour "open" / "proprietary") of ``/proc/driver/nvidia/version``'s text:
    ``NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build ...`` (open) or ``NVRM
    version: NVIDIA UNIX x86_64 Kernel Module  375.74  Wed Jun 14 ...`` (proprietary); the version is the field
    after the first double space, as uv reads it."""
    line = text.splitlines()[0] if text.strip() else ""
    if not line.startswith("NVRM version:"):
        return None, None
    flavour = "open" if "Open Kernel Module" in line else "proprietary" if "Kernel Module" in line else None
    parts = [p.strip() for p in line.split("  ") if p.strip()]
    version = parts[1] if len(parts) > 1 and _VERSION.match(parts[1]) else None
    return version, flavour


def glibc() -> str | None:
    """The running C library's glibc version (``2.36``); None on another C library (musl)."""
    try:
        got = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError, AttributeError):
        got = None
    if got and got.startswith("glibc "):
        return got.split()[1]
    lib, ver = platform.libc_ver()
    return ver if lib == "glibc" and ver else None


def detect(root: str | None = None, nvml: str | None = None) -> Detected:
    """What this machine says of its driver, GPUs, glibc, CPU and kernel module (None where it cannot be read)."""
    root = root if root is not None else os.environ.get(ROOT_ENV) or "/"
    driver: str | None = None
    driver_from = ""
    sys_text = _read(root, SYS_VERSION)
    if sys_text is not None:
        driver = parse_sys_version(sys_text)
        driver_from = "/" + SYS_VERSION if driver else ""
    proc_text = _read(root, PROC_VERSION)
    flavour = None
    if proc_text is not None:
        pver, flavour = parse_proc_version(proc_text)
        if driver is None and pver is not None:
            driver, driver_from = pver, "/" + PROC_VERSION
    library = nvml if nvml is not None else os.environ.get(NVML_ENV) or None
    got = nvml_edge.read(library)
    if driver is None and got is not None and got.driver:
        driver, driver_from = got.driver, "NVML"
    gpus = got.gpus if got is not None else ()
    hmm_text = _read(root, UVM_HMM)
    hmm = None if hmm_text is None else {"N": True, "0": True, "Y": False, "1": False}.get(hmm_text.strip()[:1])
    machine = platform.machine() or None
    return Detected(driver=driver, driver_from=driver_from, gpus=gpus, gpus_from="NVML", glibc=glibc(),
                    glibc_from="the running C library (os.confstr)", arch={"amd64": "x86_64", "arm64": "aarch64"}.get(
                        (machine or "").lower(), machine), kernel_module=flavour,
                    kernel_module_from="/" + PROC_VERSION if flavour else "", uvm_hmm=hmm,
                    uvm_hmm_from="/" + UVM_HMM if hmm is not None else "")


__all__ = ["NVML_ENV", "ROOT_ENV", "detect", "glibc", "parse_proc_version", "parse_sys_version"]
