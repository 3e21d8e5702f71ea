"""Reading the machine (:mod:`glmcompat.edges.machine`): driver version files as real machines wrote them (copied from
public reports, tests/fixtures/machine/proc_versions.toml) under a test root, and NVML through a stand-in library
built here with gcc from tests/fixtures/machine/fake_nvml.c (the real ctypes calls run; nothing of glmcompat is
replaced). `check --target auto` end to end, as a process: the machine read is the point."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from glmcompat.edges import machine as edge
from glmcompat.edges import nvml
from tests.conftest import FIXTURES, have, run_cli

RECORDED = tomllib.loads((FIXTURES / "machine" / "proc_versions.toml").read_text())["version"]


@pytest.fixture(scope="module")
def fake_nvml(tmp_path_factory: pytest.TempPathFactory) -> str:
    if not have("gcc"):
        pytest.skip("gcc is needed to build the stand-in NVML library")
    out = tmp_path_factory.mktemp("nvml") / "libnvidia-ml-fake.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(out), str(FIXTURES / "machine" / "fake_nvml.c")],
                   check=True)
    return str(out)


def _root(tmp_path: Path, files: dict[str, str]) -> str:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return str(tmp_path)


@pytest.mark.parametrize("rec", RECORDED, ids=[r["driver"] for r in RECORDED])
def test_proc_version_of_real_machines(rec: dict[str, str]) -> None:
    assert edge.parse_proc_version(rec["text"]) == (rec["driver"], rec["flavour"]), rec["source"]


@pytest.mark.parametrize("text", ["", "garbage\n", "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64\n"])
def test_an_unreadable_proc_version_names_nothing(text: str) -> None:
    assert edge.parse_proc_version(text)[0] is None


def test_sys_module_version_wins_over_proc(tmp_path: Path) -> None:
    rec = RECORDED[0]
    root = _root(tmp_path, {edge.SYS_VERSION: "580.95.05\n", edge.PROC_VERSION: rec["text"],
                            edge.UVM_HMM: "N\n"})
    got = edge.detect(root, nvml=str(tmp_path / "none.so"))
    assert (got.driver, got.driver_from) == ("580.95.05", "/sys/module/nvidia/version")
    assert got.kernel_module == "open" and got.uvm_hmm is True and got.gpus == ()


def test_proc_version_when_sys_is_absent(tmp_path: Path) -> None:
    rec = RECORDED[-1]
    got = edge.detect(_root(tmp_path, {edge.PROC_VERSION: rec["text"], edge.UVM_HMM: "Y\n"}),
                      nvml=str(tmp_path / "none.so"))
    assert (got.driver, got.kernel_module, got.uvm_hmm) == ("375.74", "proprietary", False)


def test_nothing_on_a_machine_without_a_driver(tmp_path: Path) -> None:
    got = edge.detect(str(tmp_path), nvml=str(tmp_path / "none.so"))
    assert got.driver is None and got.gpus == () and got.kernel_module is None and got.uvm_hmm is None
    assert got.glibc  # this machine runs glibc


def test_nvml_gives_the_driver_and_every_gpu(tmp_path: Path, fake_nvml: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_NVML_DRIVER", "580.159.04")
    monkeypatch.setenv("FAKE_NVML_GPUS", "NVIDIA H200:9.0;NVIDIA RTX PRO 6000 Blackwell:12.0")
    got = edge.detect(str(tmp_path), nvml=fake_nvml)
    assert (got.driver, got.driver_from) == ("580.159.04", "NVML")
    assert [(g.name, g.capability, g.target) for g in got.gpus] == [
        ("NVIDIA H200", "9.0", "sm90"), ("NVIDIA RTX PRO 6000 Blackwell", "12.0", "sm120")]
    monkeypatch.setenv("FAKE_NVML_INIT_FAIL", "1")
    assert nvml.read(fake_nvml) is None


def test_check_target_auto_without_a_driver_exits_2(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.txt"
    lock.write_text("torch==2.11.0\n")
    r = run_cli("check", str(lock), "--target", "auto",
                env={"GLMCOMPAT_MACHINE_ROOT": str(tmp_path), "GLMCOMPAT_NVML_LIBRARY": str(tmp_path / "none.so")})
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("error: --target auto: no NVIDIA driver was found on this machine (NVML); name a target, "
                                "e.g. --target sm120"), r.stderr


def test_check_target_auto_judges_every_gpu_with_the_driver_read(tmp_path: Path, fake_nvml: str) -> None:
    """Two kinds of GPU: both targets; the driver from /proc (a recorded 565 open module): torch 2.11.0 (CUDA 13.0)
    does not run there, and the verdict names the machine and where each value came from."""
    lock = tmp_path / "requirements.txt"
    lock.write_text("torch==2.11.0\n")
    root = _root(tmp_path / "root", {edge.PROC_VERSION: RECORDED[1]["text"]})
    env = {"GLMCOMPAT_MACHINE_ROOT": root, "GLMCOMPAT_NVML_LIBRARY": fake_nvml,
           "FAKE_NVML_GPUS": "NVIDIA H200:9.0;NVIDIA RTX PRO 6000 Blackwell:12.0"}
    r = run_cli("check", str(lock), "--target", "auto", "--driver", "auto", env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "on sm90 (compute capability 9.0)" in r.stdout and "on sm120 (compute capability 12.0)" in r.stdout
    assert ("machine: target sm90, sm120 (read from NVML); NVIDIA driver 565.57.01 (read from /proc/driver/nvidia/"
            "version)") in r.stdout
    assert "needs NVIDIA driver >= 580" in r.stdout
    again = run_cli("check", str(lock), "--target", "auto", "--driver", "auto", env={**env, "FAKE_NVML_GPUS": ""})
    assert again.returncode == 2 and "the NVIDIA driver reports no GPU" in again.stderr  # never a replayed verdict
