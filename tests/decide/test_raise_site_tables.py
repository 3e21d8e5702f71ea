"""The raise-site tables of issue 38's sweeps by library (tests/fixtures/raise_sites/*-family.toml: each packaging or
compatibility message a library or tool can print, as it formats it, with its file and line at a release, listed by
scripts/harvest_raise_sites.py): every message the sweep judged a failure is named by the signature it should get, and
every notice stays unclaimed. What each family's table must cover is below; the families' own tests (the words of
each diagnosis, lines that share a signature's words) are in test_torch_raise_sites.py and
test_install_raise_sites.py."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, unclaimed

TABLES = Path(__file__).resolve().parents[1] / "fixtures" / "raise_sites"
COVERS = {  # family -> the libraries (or tools) its table must hold
    "torch": {"torch", "torchvision", "torchaudio", "triton", "numpy", "cuda-runtime", "cudnn", "cublas", "nccl"},
    "install": {"pip", "uv", "poetry", "pdm", "conda", "mamba", "setuptools", "build", "gcc", "nvcc", "ninja", "ld",
                "ld.so", "musl", "torch"},
    "system": {"cuda-driver", "cuda-runtime", "nvml", "nvidia-smi", "ld.so", "numpy"},
    "runtime": {"docker", "cdi", "nvidia-container-toolkit", "cudarc", "cuda-bindings", "windows", "nccl", "cudnn", "dyld",
                "ld.so"},
}
# the fewest messages each family's table must name (the system table lists every code of its enums, most of them no
# failure of the stack, and must name at least as many as the others)
NAMED = {"torch": 100, "install": 100, "system": 100, "runtime": 20}
MESSAGES = {family: tomllib.loads((TABLES / f"{family}-family.toml").read_text(encoding="utf-8"))["message"]
            for family in COVERS}
ALL = [(family, m) for family, ms in MESSAGES.items() for m in ms]


def harvester():  # scripts/harvest_raise_sites.py, the script that lists the raise sites (not a package module)
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts" / "harvest_raise_sites.py"
    spec = importlib.util.spec_from_file_location("harvest_raise_sites", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _id(case: tuple[str, dict[str, str]]) -> str:
    family, m = case
    return f"{family}-{m['library']}:{m['text'][:50]}"


@pytest.mark.parametrize("family", sorted(COVERS))
def test_the_table_covers_every_library_of_the_family(family: str) -> None:
    messages = MESSAGES[family]
    assert COVERS[family] <= {m["library"] for m in messages}
    assert all(m["source"] and m["text"] for m in messages)
    assert sum(bool(m["expect"]) for m in messages) >= NAMED[family]


@pytest.mark.parametrize("case", [c for c in ALL if c[1]["expect"]], ids=_id)
def test_each_message_is_named(case, tmp_path, capsys):
    diagnoses(case[1]["text"], case[1]["expect"], [], tmp_path, capsys)


@pytest.mark.parametrize("case", [c for c in ALL if not c[1]["expect"]], ids=_id)
def test_a_notice_is_not_claimed(case, tmp_path, capsys):
    unclaimed(case[1]["text"], tmp_path, capsys)
