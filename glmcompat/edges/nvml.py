"""The GPUs the NVIDIA driver reports, through NVML (``libnvidia-ml.so.1``, with ctypes; no torch): each one's
name and compute capability. An empty list where there is no driver or no GPU: the caller says so."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    capability: str  # "9.0"


def gpus() -> list[Gpu]:
    """The driver's GPUs in NVML order; [] without a driver, without a GPU, or when NVML fails to start."""
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return []
    try:
        if lib.nvmlInit_v2() != 0:
            return []
    except AttributeError:
        return []
    out: list[Gpu] = []
    try:
        n = ctypes.c_uint()
        if lib.nvmlDeviceGetCount_v2(ctypes.byref(n)) != 0:
            return []
        buf = ctypes.create_string_buffer(96)
        for i in range(n.value):
            h = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) != 0:
                continue
            lib.nvmlDeviceGetName(h, buf, 96)
            major, minor = ctypes.c_int(), ctypes.c_int()
            if lib.nvmlDeviceGetCudaComputeCapability(h, ctypes.byref(major), ctypes.byref(minor)) != 0:
                continue
            out.append(Gpu(i, buf.value.decode(errors="replace"), f"{major.value}.{minor.value}"))
    finally:
        lib.nvmlShutdown()
    return out


__all__ = ["Gpu", "gpus"]
