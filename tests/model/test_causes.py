"""One vocabulary of causes (issue 38, item 2): the same break, found by ``check`` (a set's pins), ``verify`` (what the
probes read of an installation) and ``explain`` (a real log from a public thread, tests/fixtures/explain/logs), carries
the same cause id and reads the same sentence (:meth:`glmcompat.model.causes.Break.sentence`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from glmcompat.decide.diagnose import Env, diagnose
from glmcompat.decide.rules import evaluate
from glmcompat.matrix.load import load_facts
from glmcompat.model.artifacts import ArtifactFacts
from glmcompat.model.causes import CAUSE_OF, Break
from glmcompat.model.findings import CHECK_RULES
from glmcompat.model.machine import Machine
from glmcompat.model.signatures import scan_log
from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.ops.verify.assemble import assemble
from glmcompat.ops.verify.extensions import cause_of
from glmcompat.ops.verify.plan import Options

from tests.conftest import run_cli

LOGS = Path(__file__).parents[1] / "fixtures" / "explain" / "logs"
# The GLM-5 incident's line (tests/decide/test_explain.py): sgl-kernel 0.3.21 next to torch 2.10.0.
SGL_KERNEL = ("ImportError: /venv/lib/python3.12/site-packages/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: "
              "_ZN3c1013MessageLoggerC1EPKcii")


def _log(name: str) -> str:
    return (LOGS / name).read_text()


def explain(text: str, versions: dict[str, str], cuda: dict[str, str] | None = None) -> list[Any]:
    """What ``explain`` says of ``text``, in the environment the log came from."""
    facts = load_facts()
    scan = scan_log(text.splitlines(), facts.rows("signature"))
    return diagnose(scan.hits, Env(versions=versions, cuda=cuda or {}), facts)


def verify(versions: dict[str, str], *records: dict[str, Any], target: str | None = None) -> dict[str, Any]:
    """What ``verify`` reports of the probes' ``records`` over an installation of ``versions``."""
    facts = load_facts()
    installed = {"id": "installed", "status": "passed", "summary": "", "seconds": 0.1,
                 "data": {"packages": versions, "findings_by_target": {}, "installation": []}}
    recs = [ProbeDoc(**r) for r in (installed, *records)]
    return assemble(recs, facts, Options(), facts.target(target) if target else None).to_json()


def explained(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for p in report["probes"] for e in p.get("explained") or ()]


def test_the_numpy_abi_break_reads_the_same_in_check_verify_and_explain() -> None:
    text = _log("kizagan-3-numpy.log")  # NeuralNine/kizagan#3: cv2 built against NumPy 1.x, imported next to NumPy 2
    versions = {"opencv-python": "4.9.0.80", "numpy": "2.0.0"}
    said = Break(rule="numpy-abi", package="opencv-python", version="4.9.0.80", against="2.0.0").sentence()
    (hit,) = [h for h in explain(text, versions) if h.id == "numpy-abi"]
    assert (hit.rule, hit.package) == ("numpy-abi", "opencv-python") and said in hit.cause
    art = ArtifactFacts(name="opencv-python", version="4.9.0.80", artifact="opencv_python-4.9.0.80-cp37-abi3-manylinux.whl",
                        numpy_abi=1, numpy_member="cv2/cv2.abi3.so")
    (f,) = [f for f in evaluate(versions, target="sm90", matrix=load_facts(), artifacts={("opencv-python", "4.9.0.80"): art})
            if f.rule == "numpy-abi"]
    assert said in f.message
    kind, cause = cause_of(text, "2.0.0")  # verify's extension probe on the same import error
    failure = {"kind": kind, "module": "cv2.cv2", "file": "cv2/cv2.abi3.so", "cause": cause, "error": text}
    report = verify(versions, {"id": "extension:opencv-python", "status": "failed", "summary": cause, "seconds": 0.1,
                               "data": {"version": "4.9.0.80", "failures": [failure]}})
    (v,) = [f for f in report["findings"] if f["packages"] == ["opencv-python==4.9.0.80"]]
    assert v["rule"] == "numpy-abi" and said in v["message"]


def test_the_torch_abi_break_reads_the_same_in_check_verify_and_explain() -> None:
    versions = {"sgl-kernel": "0.3.21", "torch": "2.10.0"}
    said = Break(rule="abi", package="sgl-kernel", version="0.3.21", against="2.10.0", built="2.9.1").sentence()
    (hit,) = explain(SGL_KERNEL, versions)
    assert (hit.id, hit.rule) == ("undefined-symbol", "abi") and said in hit.cause
    (f,) = [f for f in evaluate(versions, target="sm90", matrix=load_facts()) if f.rule == "abi"]
    assert said in f.message
    report = verify(versions, {"id": "import:sgl_kernel", "status": "failed", "summary": "", "seconds": 0.1,
                               "error": SGL_KERNEL})
    (e,) = explained(report)
    assert e["rule"] == "abi" and said in e["cause"]
    kind, cause = cause_of(SGL_KERNEL, None)  # verify's extension probe on the same import error
    failure = {"kind": kind, "module": "sgl_kernel.common_ops", "file": "sgl_kernel/sm100/common_ops.abi3.so",
               "cause": cause, "error": SGL_KERNEL}
    report = verify(versions, {"id": "extension:sgl-kernel", "status": "failed", "summary": cause, "seconds": 0.1,
                               "data": {"version": "0.3.21", "failures": [failure]}})
    (v,) = [f for f in report["findings"] if f["packages"] == ["sgl-kernel==0.3.21"]]
    assert v["rule"] == "abi" and said in v["message"]


def test_the_driver_break_reads_the_same_in_check_verify_and_explain() -> None:
    text = _log("fooocus-1313-driver-too-old.log")  # lllyasviel/Fooocus#1313: driver 470.86 (CUDA 11.4)
    versions = {"torch": "2.10.0"}  # a build for CUDA 12.8 on that driver
    said = Break(rule="driver", package="torch", version="2.10.0", against="470.86", built="12.8").sentence()
    (hit,) = explain(text, versions, {"driver": "470.86"})
    assert (hit.id, hit.rule) == ("driver-too-old", "driver") and said in hit.cause
    (f,) = [f for f in evaluate(versions, target="sm90", matrix=load_facts(), machine=Machine(("sm90",), driver="470.86"))
            if f.rule == "driver"]
    assert said in f.message
    report = verify(versions, {"id": "driver", "status": "passed", "summary": "", "seconds": 0.1,
                               "data": {"driver": "470.86"}}, target="sm90")
    (v,) = [f for f in report["findings"] if f["rule"] == "driver"]
    assert said in v["message"]


def test_the_cpu_only_torch_reads_the_same_in_check_verify_and_explain() -> None:
    text = _log("detectron2-460-cpu-torch.log")  # facebookresearch/detectron2#460: "Torch not compiled with CUDA enabled"
    versions = {"torch": "2.9.1+cpu"}
    said = Break(rule="gpu-code", package="torch", version="2.9.1+cpu", built="cpu").sentence()
    (hit,) = explain(text, versions)
    assert (hit.id, hit.rule) == ("torch-cpu-only", "gpu-code") and hit.cause.startswith(said)
    found = [f for f in evaluate(versions, target="sm90", matrix=load_facts()) if f.rule == "gpu-code"]
    assert found and all(f.message.startswith(said) for f in found)
    report = verify(versions, {"id": "ops:torch-matmul", "status": "failed", "summary": "", "seconds": 0.1, "error": text})
    (e,) = explained(report)
    assert e["rule"] == "gpu-code" and e["cause"].startswith(said)


@pytest.mark.parametrize(("log", "rule"), [("exo-109-numpy.log", "numpy-abi"), ("faster-whisper-1278-insufficient.log", "driver"),
                                           ("detectron2-460-cpu-torch.log", "gpu-code")])
def test_explain_json_names_the_cause_id(log: str, rule: str) -> None:
    r = run_cli("explain", str(LOGS / log), "--json")
    assert r.returncode == 1 and [s["rule"] for s in json.loads(r.stdout)["signatures"]] == [rule], r.stdout + r.stderr


def test_every_cause_id_is_a_check_rule() -> None:
    assert set(CAUSE_OF.values()) <= set(CHECK_RULES)
    ids = {s.id for s in load_facts().rows("signature")}
    assert set(CAUSE_OF) - ids <= {"torch-symbol"}  # the one kind that is verify's, not a signature's
