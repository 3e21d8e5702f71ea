"""torch's own pins (glmcompat/decide/rules/torchpins.py): the recorded METADATA rows, their severities and what they skip."""

from __future__ import annotations

from pathlib import Path

import pytest

import glmcompat
from glmcompat.decide.rules import evaluate
from glmcompat.decide.rules.torchpins import pinned_by
from glmcompat.matrix.load import load_facts
from glmcompat.model.environments import Environment


@pytest.fixture(scope="module")
def facts():
    return load_facts()


def test_rows_hold_the_pins_torch_2_9_1_declares(facts):
    row = next(r for r in facts.rows("release") if r.package == "torch" and r.version == "2.9.1")
    assert {"triton==3.5.1", "nvidia-cudnn-cu12==9.10.2.21", "nvidia-nccl-cu12==2.27.5"} <= set(row.requires)
    assert row.evidence == "metadata" and "METADATA" in row.source
    assert {"triton", "nvidia-nccl-cu12"} <= pinned_by(facts, "2.9.1")


def test_departure_names_both_versions_and_torchs_pin(facts):
    (f,) = evaluate({"torch": "2.9.1", "triton": "3.2.0"}, target="sm90", matrix=facts)
    assert f.rule == "torch-pins" and f.severity == "error"
    assert "triton==3.5.1" in f.message and "triton 3.2.0" in f.message and f.remedy.startswith("pin triton==3.5.1")


def test_an_override_on_purpose_is_a_warning_naming_it(facts):
    env = Environment(packages={"torch": "2.9.1", "nvidia-nccl-cu12": "2.28.0"}, overrides={"nvidia-nccl-cu12": "==2.28.0"})
    (f,) = evaluate(env.packages, target="sm90", matrix=facts, env=env)
    assert f.severity == "warning" and "overrides it with nvidia-nccl-cu12==2.28.0" in f.message


@pytest.mark.parametrize("torch", ["2.9.1+cu126", "2.9.1+cpu"])
def test_other_builds_pin_their_own_libraries_and_are_not_judged_here(facts, torch):
    found = evaluate({"torch": torch, "nvidia-cudnn-cu12": "9.1.0.70"}, target="sm90", matrix=facts, allow_unknown=True)
    assert not [f for f in found if f.rule == "torch-pins"]


def test_a_safe_set_moves_torchs_pinned_packages_with_torch(facts):
    # the set's triton and NCCL follow torch 2.10.0 (triton==3.6.0, nvidia-nccl-cu12==2.27.5); the safe set moves torch
    # to 2.9.1 and with it triton to 2.9.1's pin (3.5.1); NCCL, pinned alike by both, stays
    pins = {"torch": "2.10.0", "sgl-kernel": "0.3.21", "triton": "3.6.0", "nvidia-nccl-cu12": "2.27.5"}
    got = glmcompat.check_versions(pins, "sm90").safe_set
    assert got is not None and got["torch"] == "2.9.1" and got["triton"] == "3.5.1" and "nvidia-nccl-cu12" not in got
    assert glmcompat.check_versions({**pins, **got}, "sm90").ok


HELDOUT = Path(__file__).resolve().parents[1] / "fixtures" / "heldout36c"


def _lock_findings(path):
    from glmcompat.decide.rules import evaluate_lock
    from glmcompat.readers.formats import read_lock

    return evaluate_lock(read_lock(path), "sm90", None, load_facts(), False)


def test_lock_without_torchs_nvidia_libraries_is_an_error():
    """A real Pipfile.lock made on macOS (tests/fixtures/heldout36c/c09): torch 2.2.1 and none of the nvidia-*
    packages its METADATA pins on Linux x86_64. pipenv installs the lock as it stands, so torch has no cuBLAS/cuDNN to
    load: an error naming torch's pins. A lock that holds them (c08's pdm.lock, torch 2.1.2) has no such finding."""
    errs = [f for f in _lock_findings(HELDOUT / "c09" / "Pipfile.lock")
            if f.rule == "torch-pins" and f.severity == "error"]
    assert len(errs) == 1 and "nvidia-cublas-cu12==12.1.3.1" in errs[0].message
    assert "the lock installs none of them" in errs[0].message and "torch-2.2.1" in errs[0].evidence[0][1]
    assert not [f for f in _lock_findings(HELDOUT / "c08" / "pdm.lock") if f.rule == "torch-pins"]


def test_requirements_file_leaves_them_to_the_installer(tmp_path):
    """A requirements file is resolved at install: pip adds torch's nvidia-* requirements, so their absence says
    nothing."""
    f = tmp_path / "requirements.txt"
    f.write_text("torch==2.2.1\n")
    assert not [g for g in _lock_findings(f) if g.rule == "torch-pins"]
