"""A requirements file's torch pin without a local label, read from a PyTorch variant index (glmcompat/ops/indexpins.py
with_index_labels): pip installs the highest build any index it reads offers for ``==X``, and ``X+cu128`` sorts above
``X``, so ``--extra-index-url https://host/whl/cu128`` with ``torch==2.7.1`` installs torch 2.7.1+cu128 (CUDA 12.8,
sm_120 code), not PyPI's CUDA 12.6 wheel. Hosts are placeholders; nothing is read over the network."""

from __future__ import annotations

import pytest

from glmcompat.matrix.load import load_facts
from glmcompat.ops.indexpins import index_label, with_index_labels
from glmcompat.readers.formats import read_lock
from tests.conftest import run_cli

CU128 = "https://pytorch-index.invalid/whl/cu128"


@pytest.mark.parametrize(("url", "label"), [
    (CU128, "cu128"), (CU128 + "/", "cu128"), ("https://pytorch-index.invalid/whl/cpu", "cpu"),
    ("https://pytorch-index.invalid/whl/rocm6.3", "rocm6.3"), ("https://pytorch-index.invalid/whl/xpu", "xpu"),
    ("https://pytorch-index.invalid/whl/nightly/cu130", "cu130"),
    ("https://pytorch-index.invalid/whl/cu113/torch_stable.html", "cu113"),
    ("https://pytorch-index.invalid/whl/torch_stable.html", None), ("https://files.index.invalid/simple", None),
    ("https://mirror.invalid/cuda/simple", None), ("https://mirror.invalid/cu128x", None)])
def test_the_label_an_index_names(url, label):
    assert index_label(url) == label


def _packages(tmp_path, text: str, name: str = "requirements.txt") -> dict[str, str]:
    p = tmp_path / name
    p.write_text(text)
    lock = with_index_labels(read_lock(p, use_cache=False), load_facts())
    (env,) = [e for e in lock.sets if e.platform == "x86_64"]
    return dict(env.packages)


def test_an_extra_variant_index_gives_the_torch_family_its_label(tmp_path):
    got = _packages(tmp_path, f"--extra-index-url {CU128}\ntorch==2.7.1\ntorchvision==0.22.1\nnumpy==2.2.6\n")
    assert (got["torch"], got["torchvision"], got["numpy"]) == ("2.7.1+cu128", "0.22.1+cu128", "2.2.6")
    # a replacing --index-url: the only source, whatever the matrix holds
    got = _packages(tmp_path, "--index-url https://pytorch-index.invalid/whl/cu118\ntorch==2.7.1\n")
    assert got["torch"] == "2.7.1+cu118"
    # an explicit label is kept; the family takes what the indexes offer for its torch release, whatever torch's label
    got = _packages(tmp_path, f"--extra-index-url {CU128}\ntorch==2.7.0+cu128\ntorchvision==0.22.0\n")
    assert (got["torch"], got["torchvision"]) == ("2.7.0+cu128", "0.22.0+cu128")
    got = _packages(tmp_path, f"--extra-index-url {CU128}\ntorch==2.7.1+cpu\ntorchvision==0.22.1\n")
    assert (got["torch"], got["torchvision"]) == ("2.7.1+cpu", "0.22.1+cu128")
    # torchvision alone: the torch its row pins (0.22.1: torch==2.7.1) was published for cu128
    assert _packages(tmp_path, f"--extra-index-url {CU128}\ntorchvision==0.22.1\n")["torchvision"] == "0.22.1+cu128"


def test_an_extra_index_without_the_release_leaves_pypis_build(tmp_path):
    """PyTorch's cu121 index has no torch 2.7.1 (2.7 was built for 11.8, 12.6 and 12.8): PyPI's wheel installs."""
    assert _packages(tmp_path, "--extra-index-url https://pytorch-index.invalid/whl/cu121\ntorch==2.7.1\n")["torch"] == "2.7.1"
    assert _packages(tmp_path, "torch==2.7.1\n")["torch"] == "2.7.1"  # no index named: as before
    # the highest build of several extra indexes wins, as in pip
    got = _packages(tmp_path, "--extra-index-url https://pytorch-index.invalid/whl/cu126\n"
                              f"--extra-index-url {CU128}\ntorch==2.7.1\n")
    assert got["torch"] == "2.7.1+cu128"


def test_conda_packages_keep_conda_s_build(tmp_path):
    """conda's pytorch is conda's build (its pytorch-cuda names the CUDA); only the pip section reads the index."""
    got = _packages(tmp_path, "channels: [pytorch, nvidia]\ndependencies:\n  - pytorch=2.4.1\n  - pytorch-cuda=12.4\n"
                              f"  - pip\n  - pip:\n    - --extra-index-url {CU128}\n    - torchao==0.5.0\n",
                    "environment.yml")
    assert got["torch"] == "2.4.1+cu124"


@pytest.mark.parametrize(("text", "code", "says"), [
    (f"--extra-index-url {CU128}\ntorch==2.7.1\ntorchvision==0.22.1\n", 0, "safe"),
    ("torch==2.7.1\ntorchvision==0.22.1\n", 1, "torch 2.7.1 carries"),
    ("--extra-index-url https://pytorch-index.invalid/whl/cpu\ntorch==2.7.1\n", 1, "CPU-only build"),
])
def test_check_judges_the_build_that_installs(tmp_path, text, code, says):
    p = tmp_path / "requirements.txt"
    p.write_text(text)
    r = run_cli("check", str(p), "--target", "sm120", "--platform", "x86_64")
    assert r.returncode == code and says in r.stdout + r.stderr, r.stdout + r.stderr


def test_the_family_follows_torch_s_cuda(tmp_path):
    """torch 2.9.1 and torchaudio 2.9.1 from the cu130 index are both CUDA 13 builds: no runtime mismatch (reading
    torch alone as +cu130 would pair it with PyPI's CUDA 12 torchaudio, an error)."""
    p = tmp_path / "requirements.txt"
    p.write_text("--extra-index-url https://pytorch-index.invalid/whl/cu130\ntorch==2.9.1\ntorchaudio==2.9.1\n")
    assert run_cli("check", str(p), "--target", "sm90", "--platform", "x86_64").returncode == 0
    p.write_text("torch==2.9.1+cu130\ntorchaudio==2.9.1\n")
    assert run_cli("check", str(p), "--target", "sm90", "--platform", "x86_64").returncode == 1


def test_torch_2_0_from_the_cu118_index_runs_on_hopper(tmp_path):
    """torch 2.0.1's default wheel is CUDA 11.7 (no sm_90); from PyTorch's cu118 index pip installs 2.0.1+cu118, whose
    build script adds 9.0 (pytorch/builder release/2.0 manywheel/build_cuda.sh)."""
    p = tmp_path / "requirements.txt"
    p.write_text("--extra-index-url https://pytorch-index.invalid/whl/cu118\ntorch==2.0.1\ntorchvision==0.15.2\n")
    assert run_cli("check", str(p), "--target", "sm90", "--platform", "x86_64").returncode == 0
    p.write_text("torch==2.0.1\ntorchvision==0.15.2\n")
    assert run_cli("check", str(p), "--target", "sm90", "--platform", "x86_64").returncode == 1


def test_a_torch_the_file_does_not_pin_takes_the_index_s_label_too(tmp_path):
    """vllm 0.9.2 pins torch==2.7.0 (its row); with PyTorch's cu128 index pip installs 2.7.0+cu128 (sm_120 code)."""
    got = _packages(tmp_path, f"--extra-index-url {CU128}\nvllm==0.9.2\n")
    assert got["torch"] == "2.7.0+cu128"
    assert "torch" not in _packages(tmp_path, "vllm==0.9.2\n")  # no index: the installer's torch stays implied
    p = tmp_path / "requirements.txt"
    p.write_text(f"--extra-index-url {CU128}\nvllm==0.9.2\n")
    assert run_cli("check", str(p), "--target", "sm120", "--platform", "x86_64").returncode == 0
    p.write_text("vllm==0.9.2\n")
    r = run_cli("check", str(p), "--target", "sm120", "--platform", "x86_64")
    assert r.returncode == 1 and "vllm 0.9.2 pins torch==2.7.0 exactly" in r.stdout + r.stderr
