"""ROCm/XPU builds of the torch family on an NVIDIA target (glmcompat/decide/rules/nonnvidia.py), judged per environment."""

from __future__ import annotations

import pytest

from glmcompat.decide.rules.nonnvidia import vendor_of
from glmcompat.decide.rules import evaluate, evaluate_lock
from glmcompat.matrix.load import load_facts
from glmcompat.model.environments import Environment
from glmcompat.readers.formats.common import Lock


@pytest.fixture(scope="module")
def facts():
    return load_facts()


@pytest.mark.parametrize(("name", "version", "vendor"), [
    ("torch", "2.9.1+rocm6.4", "AMD ROCm (HIP)"), ("torchvision", "0.24.1+rocm6.3", "AMD ROCm (HIP)"),
    ("torch", "2.9.1+xpu", "Intel XPU (oneAPI/SYCL)"), ("pytorch-triton-rocm", "3.5.1", "AMD ROCm (HIP)"),
    ("torch", "2.9.1+cu128", None), ("torch", "2.9.1", None), ("numpy", "2.2.6+rocm", None)])
def test_vendor_of(name, version, vendor):
    assert vendor_of(name, version) == vendor


def test_rocm_torch_cannot_run_on_nvidia_and_is_not_unknown(facts):
    found = evaluate({"torch": "2.9.1+rocm6.4"}, target="sm120", matrix=facts)
    assert [(f.rule, f.severity) for f in found] == [("non-nvidia", "error")]
    assert "cannot run on NVIDIA GPUs" in found[0].message and "CUDA build of torch 2.9.1" in found[0].remedy


def test_conflicting_rocm_extra_is_not_for_this_target(facts):
    cuda = Environment(name="extra cuda", packages={"torch": "2.9.1", "torchvision": "0.24.1"})
    rocm = Environment(name="extra rocm", packages={"torch": "2.9.1+rocm6.4", "torchvision": "0.24.1+rocm6.4"})
    lock = Lock("uv.lock", "uv.lock", (), None, (cuda, rocm))
    found = evaluate_lock(lock, "sm120", None, facts, False)
    assert not [f for f in found if f.severity == "error"]
    (w,) = [f for f in found if f.rule == "platform"]
    assert w.severity == "warning" and "AMD ROCm" in w.message and "extra rocm" in w.environments


def test_a_lock_of_rocm_only_fails(facts):
    rocm = Environment(name="", packages={"torch": "2.9.1+rocm6.4"})
    found = evaluate_lock(Lock("uv.lock", "uv.lock", (), None, (rocm,)), "sm120", None, facts, False)
    assert any(f.rule == "non-nvidia" and f.severity == "error" for f in found)
