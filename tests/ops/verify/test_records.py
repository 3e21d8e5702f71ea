"""The record a probe process emits (:class:`glmcompat.model.outputs.probe.ProbeDoc`, the report's own entry): its
JSON line, the parent's refusal of a malformed one, and the per-kind ``data`` declarations
(:func:`undeclared`, which the tests that run real probes call on their reports)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from glmcompat.model.outputs.probe import ExplainedDoc, ProbeDoc
from glmcompat.ops.verify import records as R
from glmcompat.ops.verify.records import absent

# probe kind -> the TypedDict of its data; (TypedDict, key) -> the TypedDict of each entry of that list
KIND: dict[str, Any] = {"driver": R.DriverData, "device": R.DeviceData, "import": R.ImportData, "ops": R.OpsData,
                        "installed": R.InstalledData, "abi": R.AbiData, "gpu-code": R.GpuCodeData,
                        "extension": R.ExtensionData}
ENTRIES: dict[tuple[Any, str], Any] = {(R.DriverData, "gpus"): R.DriverGpu, (R.AbiData, "files"): R.AbiFile,
                                       (R.GpuCodeData, "files"): R.GpuCodeFile,
                                       (R.ExtensionData, "failures"): R.ExtensionFailure}


def undeclared(report: dict[str, Any]) -> list[str]:
    """``probe id: key`` for each key of a probe's ``data`` in ``report`` (``verify --json``'s document) that the
    TypedDict of its kind does not declare: the declarations in records.py must not drift from what probes emit."""
    out = []
    for p in report["probes"]:
        td = KIND.get(p["id"].split(":", 1)[0])
        if td is None or "data" not in p:
            continue
        for k, v in p["data"].items():
            if k not in td.__annotations__:
                out.append(f"{p['id']}: {k}")
            entry = ENTRIES.get((td, k))
            if entry is not None:
                out.extend(f"{p['id']}: {k}[].{kk}" for e in v for kk in e if kk not in entry.__annotations__)
            if td is R.InstalledData and k == "half_installed":
                out.extend(f"{p['id']}: {k}.{kk}" for h in v.values() for kk in h if kk not in R.HalfInstalled.__annotations__)
    return out


def test_undeclared_finds_a_key_no_typeddict_declares() -> None:
    report = {"probes": [
        {"id": "abi:vllm", "status": "passed", "data": {"version": "1", "files": [{"file": "a.so", "stray": 1}]}},
        {"id": "driver", "status": "passed", "data": {"driver": "580", "gpus": [{"index": 0, "name": "H200",
                                                                                   "capability": "9.0"}]}},
        {"id": "device", "status": "passed", "data": {"name": "H200", "surprise": True}},
        {"id": "smoke:torch-matmul", "status": "passed", "data": {"fp32_max_abs_err": 0.0}},  # free form
    ]}
    assert undeclared(report) == ["abi:vllm: files[].stray", "device: surprise"]


def test_a_probe_record_travels_as_one_json_line() -> None:
    """The record a probe process emits is the record the parent reads: fields not reported stay absent (never
    null), an empty list reported stays an empty list, and a value JSON cannot hold is written as its ``str``."""
    rec = ProbeDoc(id="abi:vllm", status="failed", summary="s", seconds=0.25, error="E",
                   data={"version": "0.16.0", "files": [{"file": "vllm/_C.abi3.so", "missing": ["x"]}]},
                   warnings=())
    line = rec.to_line()
    assert json.loads(line) == {"id": "abi:vllm", "status": "failed", "summary": "s", "seconds": 0.25, "error": "E",
                                "data": {"version": "0.16.0", "files": [{"file": "vllm/_C.abi3.so", "missing": ["x"]}]},
                                "warnings": []}
    assert ProbeDoc.parse(json.loads(line)) == rec
    assert json.loads(ProbeDoc(id="x", status="passed", data={"o": object}).to_line()) == {
        "id": "x", "status": "passed", "data": {"o": str(object)}}
    skipped = absent("import:torch", "torch")
    assert ProbeDoc.parse(json.loads(skipped.to_line())) == skipped
    assert skipped.to_json() == {"id": "import:torch", "status": "skipped", "summary": "torch is not installed",
                                 "seconds": 0.0, "absent": "torch"}


@pytest.mark.parametrize("bad", [
    None, [], "x", {"status": "passed"}, {"id": 1, "status": "passed"}, {"id": "x", "status": "great"},
    {"id": "x", "status": "passed", "seconds": True}, {"id": "x", "status": "passed", "seconds": "1"},
    {"id": "x", "status": "passed", "summary": 3}, {"id": "x", "status": "passed", "error": []},
    {"id": "x", "status": "passed", "data": []}, {"id": "x", "status": "passed", "warnings": "w"},
    {"id": "x", "status": "passed", "absent": 0},
])
def test_a_malformed_probe_record_is_refused(bad: Any) -> None:
    assert ProbeDoc.parse(bad) is None


def test_a_probe_record_is_its_report_entry() -> None:
    """The record a probe emits is the report's entry: its line holds every field the probe reported (the fields it
    did not report are absent), and the signatures its text shows are added to the same record."""
    rec = ProbeDoc(id="import:torch", status="skipped", summary="torch is not installed", seconds=0.0,
                   absent="torch", warnings=("w",), data={"k": (1, 2)})
    assert json.loads(rec.to_line()) == rec.to_json() == {
        "id": "import:torch", "status": "skipped", "summary": "torch is not installed", "seconds": 0.0,
        "absent": "torch", "warnings": ["w"], "data": {"k": [1, 2]}}
    assert ProbeDoc(id="x", status="passed").to_json() == {"id": "x", "status": "passed"}
    hit = ExplainedDoc(id="sig", cause="c", remedy="r", match="m", package=None, version=None)
    assert replace(rec, explained=(hit,)).to_json() == {**rec.to_json(), "explained": [hit.to_json()]}


def test_a_group_exit_travels_as_one_json_line() -> None:
    ended = R.GroupExit(group="torchvision", rc=-11, timed_out=False, stderr="Segmentation fault", seconds=1.5)
    assert R.GroupExit.parse(json.loads(ended.to_line())) == ended
    assert R.GroupExit.parse({"group": "torch", "rc": None, "timed_out": True, "seconds": 3}) == R.GroupExit(
        group="torch", rc=None, timed_out=True, seconds=3)


@pytest.mark.parametrize("bad", [
    None, {"rc": 0, "timed_out": False, "seconds": 0.0}, {"group": "g", "rc": True, "timed_out": False, "seconds": 0},
    {"group": "g", "rc": 0, "timed_out": 0, "seconds": 0}, {"group": "g", "rc": 0, "timed_out": False},
    {"group": "g", "rc": 0, "timed_out": False, "seconds": 0, "stderr": 1},
])
def test_a_malformed_group_exit_is_refused(bad: Any) -> None:
    assert R.GroupExit.parse(bad) is None
