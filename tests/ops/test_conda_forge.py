"""conda-forge's own torch builds are judged by the feedstock's arch lists (matrix/data/torch.toml, the +cuXYZ.cf rows),
not as PyTorch's builds of the same CUDA; a pip requirement that the conda torch meets leaves that torch in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

E09 = Path(__file__).parents[1] / "fixtures" / "heldout36e" / "e09" / "environment.yml"  # 0Jmins0/Distillation, real


@pytest.mark.parametrize("target", ["sm90", "sm120"])
def test_a_real_conda_forge_export(target):
    """pytorch 2.5.1 cuda126_generic (conda-forge: SASS sm_50..sm_90 and compute_90 PTX, which the driver JITs for
    sm_120) with pip's torch==2.5.1 beside it: pip keeps the conda build, so no PyPI CUDA 12.4 wheel is judged."""
    r = run_cli("check", str(E09), "--target", target, "--platform", "x86_64")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "torch 2.5.1 carries" not in r.stdout + r.stderr


@pytest.mark.parametrize(("channels", "build", "code", "says"), [
    # PyTorch's channel, CUDA 12.1: SASS up to sm_90 and no PTX
    ("[pytorch, nvidia]", "py3.11_cuda12.1_cudnn8.9.2_0", 1, "torch 2.4.1+cu121 carries"),
    # conda-forge's CUDA 12.0 build of the same release: 9.0+PTX
    ("[conda-forge]", "cuda120_py311h1b2c3d4_300", 0, "safe"),
])
def test_the_same_release_from_two_channels(tmp_path, channels, build, code, says):
    p = tmp_path / "environment.yml"
    p.write_text(f"channels: {channels}\ndependencies:\n  - python=3.11\n  - pytorch=2.4.1={build}\n")
    r = run_cli("check", str(p), "--target", "sm120", "--platform", "x86_64")
    assert r.returncode == code and says in r.stdout + r.stderr, r.stdout + r.stderr


def test_a_conda_forge_build_without_a_row_says_so(tmp_path):
    """A conda-forge build the rows do not record (CUDA 12.4 was never one of the feedstock's) fails closed on a GPU
    its release has no code for, naming conda-forge's recipe, not PyTorch's index."""
    p = tmp_path / "environment.yml"
    p.write_text("dependencies:\n  - pytorch=2.5.1=cuda124_py311h1b2c3d4_300\n")
    r = run_cli("check", str(p), "--target", "sm120", "--platform", "x86_64")
    assert r.returncode == 1 and "a conda-forge build" in r.stdout + r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("spec", ["pytorch=2.5.1=*cuda*", "pytorch-gpu=2.5.1", "pytorch=2.5.1"])
def test_conda_forge_s_cuda_left_to_its_solver(tmp_path, spec):
    """conda-forge alone, its CUDA not named: whichever CUDA build its solver takes (11.8, 12.0 or 12.6 for 2.5.1), each
    carries PTX (compute_89 / compute_90) the driver JIT-compiles for sm_120; PyPI's 2.5.1 wheel (no PTX) is not it."""
    p = tmp_path / "environment.yml"
    p.write_text(f"channels: [conda-forge]\ndependencies:\n  - {spec}\n")
    r = run_cli("check", str(p), "--target", "sm120", "--platform", "x86_64")
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_conda_forge_release_without_rows_fails_closed(tmp_path):
    """torch 2.2.2 has no conda-forge row (the feedstock skipped 2.2): nothing is assumed."""
    p = tmp_path / "environment.yml"
    p.write_text("channels: [conda-forge]\ndependencies:\n  - pytorch=2.2.2=*cuda*\n")
    r = run_cli("check", str(p), "--target", "sm120", "--platform", "x86_64")
    assert r.returncode == 1 and "2.2.2+cf" in r.stdout + r.stderr, r.stdout + r.stderr
