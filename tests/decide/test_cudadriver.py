"""The driver rule (:mod:`glmcompat.decide.cudadriver`) on the shipped matrix: a CUDA 13 build needs driver >= 580
(minor-version compatibility), a CUDA 12 build >= 525.60.13."""

from __future__ import annotations

import pytest

from glmcompat.decide import cudadriver
from glmcompat.decide.rules import evaluate
from glmcompat.matrix.load import load_facts
from glmcompat.model.machine import Machine, Provenance


@pytest.fixture(scope="module")
def facts():  # type: ignore[no-untyped-def]
    return load_facts()


def machine(driver: str) -> Machine:
    return Machine(("sm120",), Provenance("flag", "--target"), driver, Provenance("flag", "--driver"))


def test_torch_2_11_needs_580(facts) -> None:  # type: ignore[no-untyped-def]
    found = [f for f in evaluate({"torch": "2.11.0"}, target="sm120", matrix=facts, machine=machine("570.86"))
             if f.rule == "driver"]
    assert len(found) == 1 and found[0].severity == "error"
    assert "CUDA 13.0" in found[0].message and ">= 580" in found[0].message and "570.86 (--driver)" in found[0].message
    assert found[0].remedy.startswith("use torch==2.10.0 (CUDA 12.8)") and "580.65.06" in found[0].remedy
    assert not [f for f in evaluate({"torch": "2.11.0"}, target="sm120", matrix=facts, machine=machine("580.95.05"))
                if f.rule == "driver"]
    assert not [f for f in evaluate({"torch": "2.11.0"}, target="sm120", matrix=facts) if f.rule == "driver"]


@pytest.mark.parametrize(("name", "version", "cuda"), [
    ("torch", "2.9.1+cu130", "13.0"), ("nvidia-cuda-runtime-cu12", "12.8.90", "12.8"), ("nvidia-cublas-cu12", "12.8.4.1", "12"),
    ("cuda-toolkit", "13.0.2", "13.0"), ("sgl-kernel", "0.3.21", "12.9")])
def test_the_cuda_of_each_build(facts, name: str, version: str, cuda: str) -> None:  # type: ignore[no-untyped-def]
    b = cudadriver.build_of(name, version, facts)
    assert b is not None and b.cuda == cuda


def test_the_floor_of_a_set(facts) -> None:  # type: ignore[no-untyped-def]
    assert cudadriver.floor({"torch": "2.10.0", "torchvision": "0.25.0"}, facts) == ("525.60.13", "torch 2.10.0 (CUDA 12.8)")
    assert cudadriver.floor({"numpy": "2.3.0"}, facts) is None
    assert not cudadriver.runs("13.0", "575.51.03", facts) and cudadriver.runs("12.9", "570.86", facts)
