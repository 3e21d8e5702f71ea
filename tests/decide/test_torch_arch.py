"""`torch-arch-unsupported`: both warnings torch/cuda/__init__.py (torch 2.13.0) formats when its build carries no
kernels for the GPU, as that source formats them (_check_cubins' incompatible_device_warn and
_warn_unsupported_code's first line), read with the GPU, its capability and the first CUDA that builds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.cli import main

CUBINS = ("\nNVIDIA GeForce RTX 5080 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
          "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
          "If you want to use the NVIDIA GeForce RTX 5080 GPU with PyTorch, please check the instructions at "
          "https://pytorch.org/get-started/locally/\n")
CAPABILITY = ("Found GPU0 NVIDIA B200 which is of compute capability (CC) 10.0.\n"
              "The following list shows the CCs this version of PyTorch was built for and the hardware CCs it supports:\n"
              "- 8.0 which supports hardware CC >=8.0,<9.0\n")


@pytest.mark.parametrize(("text", "words"), [
    ("torch==2.6.0+cu124\n" + CUBINS, ["NVIDIA GeForce RTX 5080", "sm_120", "torch 2.6.0+cu124",
                                       "the first CUDA that builds sm_120 is 12.8", "torch==2.7.0+cu128"]),
    (CAPABILITY, ["NVIDIA B200", "sm_100", "cu128"]),
])
def test_both_phrasings(text: str, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "x.log"
    log.write_text(text)
    assert main(["explain", "--color", "never", str(log)]) == 1
    out = "\n".join(x for x in capsys.readouterr().out.splitlines() if not x.lstrip().startswith("matched:"))
    assert ": torch-arch-unsupported" in out
    missing = [w for w in words if w not in out]
    assert not missing, f"{missing} not in:\n{out}"
