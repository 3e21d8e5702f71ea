"""verify's driver comparison (:mod:`glmcompat.ops.verify.driver`): the driver the ``driver`` probe read (NVML)
against the CUDA builds the ``installed`` probe found, as the probes' records carry them."""

from __future__ import annotations

from glmcompat.matrix.load import load_facts
from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.ops.verify.driver import findings


def _records(driver: str, packages: dict[str, str]) -> dict[str, ProbeDoc]:
    return {"driver": ProbeDoc(id="driver", status="passed", data={"driver": driver, "gpus": []}),
            "installed": ProbeDoc(id="installed", status="passed", data={"packages": packages})}


def test_an_installed_cuda_13_torch_on_a_570_driver_is_an_error() -> None:
    facts = load_facts()
    target = facts.target("sm90")
    found = [f for f in findings(_records("570.86", {"torch": "2.11.0+cu130", "nvidia-cuda-runtime-cu12": "12.8.90"}),
                                 facts, target) if f.packages]
    assert [(f.severity, f.pins) for f in found] == [("error", ("torch==2.11.0+cu130",))]
    assert "570.86 (read from NVML)" in found[0].message and ">= 580" in found[0].message


def test_the_test_gpus_driver_runs_the_image_stack() -> None:
    """The H200's driver (580.159.04, read by NVML there) and its image's torch 2.11.0+cu130: nothing to say."""
    facts = load_facts()
    assert [f for f in findings(_records("580.159.04", {"torch": "2.11.0+cu130"}), facts, facts.target("sm90"))
            if f.packages] == []
