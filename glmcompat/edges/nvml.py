"""The GPUs the NVIDIA driver reports, through NVML (``libnvidia-ml.so.1``, with ctypes; no torch): each one's
name and compute capability, and the driver's version. An empty list where there is no driver or no GPU: the caller
says so. ``library``: the NVML shared library to load (default ``libnvidia-ml.so.1``; tests hand a fake one built
with gcc)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from glmcompat.model.machine import Gpu

LIBRARY = "libnvidia-ml.so.1"


@dataclass(frozen=True)
class Nvml:
    """What NVML answered: the driver version (None: it did not say) and the GPUs."""

    driver: str | None
    gpus: tuple[Gpu, ...]


def read(library: str | None = None) -> Nvml | None:
    """The driver version and GPUs NVML reports; None without NVML (no library, or it fails to start)."""
    try:
        lib = ctypes.CDLL(library or LIBRARY)
    except OSError:
        return None
    try:
        if lib.nvmlInit_v2() != 0:
            return None
    except AttributeError:
        return None
    out: list[Gpu] = []
    driver: str | None = None
    try:
        buf = ctypes.create_string_buffer(96)
        try:
            if lib.nvmlSystemGetDriverVersion(buf, 96) == 0:
                driver = buf.value.decode(errors="replace").strip() or None
        except AttributeError:
            pass
        n = ctypes.c_uint()
        if lib.nvmlDeviceGetCount_v2(ctypes.byref(n)) != 0:
            return Nvml(driver, ())
        for i in range(min(n.value, 64)):
            h = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) != 0:
                continue
            buf = ctypes.create_string_buffer(96)
            lib.nvmlDeviceGetName(h, buf, 96)
            major, minor = ctypes.c_int(), ctypes.c_int()
            if lib.nvmlDeviceGetCudaComputeCapability(h, ctypes.byref(major), ctypes.byref(minor)) != 0:
                continue
            out.append(Gpu(i, buf.value.decode(errors="replace"), f"{major.value}.{minor.value}"))
    finally:
        try:
            lib.nvmlShutdown()
        except AttributeError:
            pass
    return Nvml(driver, tuple(out))


def gpus(library: str | None = None) -> list[Gpu]:
    """The driver's GPUs in NVML order; [] without a driver, without a GPU, or when NVML fails to start."""
    got = read(library)
    return [] if got is None else list(got.gpus)


__all__ = ["LIBRARY", "Gpu", "Nvml", "gpus", "read"]
