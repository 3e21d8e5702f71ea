"""The installed versions a pasted environment listing shows are read, in the layout of each tool that prints one
(glmcompat/model/signatures.py LogContext: _ROWS, _JSON_PAIR, _JSON_NAMED), and prose that names a series is not.

Where the tool runs here (pip, uv) its real output is a fixture recorded from it (tests/fixtures/envlist/: `pip freeze`,
`pip list`, `pip list --format=json`, `pip show`, `uv pip list`, `uv pip freeze` of this project's virtual environment);
otherwise the text is built from the tool's own format string, cited beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import LogContext

from tests.decide.explaining import diagnoses, explain

ENVLIST = Path(__file__).resolve().parents[1] / "fixtures" / "envlist"


def read(text: str) -> LogContext:
    ctx = LogContext()
    for line in text.splitlines():
        if line.strip():
            ctx.take(line)
    return ctx


def installed() -> dict[str, str]:
    """What `pip list --format=json` recorded: the ground truth the other recordings of the same environment list."""
    rows = json.loads((ENVLIST / "pip-list.json").read_text(encoding="utf-8"))
    return {canonicalize(r["name"]): r["version"] for r in rows}


@pytest.mark.parametrize("name", ["pip-freeze.txt", "pip-list.txt", "pip-list.json", "uv-pip-list.txt", "uv-pip-freeze.txt"])
def test_a_recorded_listing_gives_every_installed_version(name: str) -> None:
    want = installed()
    assert len(want) > 40 and "pytest" in want  # the recording is the environment's
    got = read((ENVLIST / name).read_text(encoding="utf-8")).versions
    wrong = {n: (v, got.get(n)) for n, v in want.items() if n not in ("pip", "setuptools") and got.get(n) != v}
    assert not wrong, wrong
    assert "package" not in got and "version" not in got  # the header row is no package


def test_pip_show_gives_each_block_its_version() -> None:
    got = read((ENVLIST / "pip-show.txt").read_text(encoding="utf-8")).versions
    want = installed()
    assert got["packaging"] == want["packaging"] and got["pytest"] == want["pytest"]


# torch/utils/collect_env.py (torch 2.4.1): env_info_fmt's "PyTorch version: {torch_version}", "CUDA used to build
# PyTorch: {cuda_compiled_version}", then get_pip_packages' `pip list --format=freeze` lines prefixed "[pip3] " and
# get_conda_packages' `conda list` lines prefixed "[conda] "; vLLM's collect_env.py (vllm 0.6.3) the same, plus
# "vLLM Version: {vllm_version}"
COLLECT_ENV = """PyTorch version: 2.4.1
Is debug build: False
CUDA used to build PyTorch: 12.4
ROCM used to build PyTorch: N/A
OS: Ubuntu 22.04.4 LTS (x86_64)
GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Python version: 3.10.14 (main, Apr  6 2024, 18:45:05) [GCC 11.2.0] (64-bit runtime)
CUDA runtime version: 12.4.131
Nvidia driver version: 550.54.15
Versions of relevant libraries:
[pip3] numpy==1.26.4
[pip3] triton==3.0.0
[conda] pytorch                   2.4.1           py3.10_cuda12.4_cudnn9.1.0_0    pytorch
[conda] torchvision               0.19.1              py310_cu124    pytorch
vLLM Version: 0.6.3.post1@f9bb8ab
"""
# conda/cli/main_list.py print_packages (conda 24.x): "# Name  Version  Build  Channel", one row each
CONDA_LIST = """# packages in environment at /opt/conda/envs/sd:
#
# Name                    Version                   Build  Channel
pytorch                   2.4.1           py3.10_cuda12.4_cudnn9.1.0_0    pytorch
torchvision               0.19.1              py310_cu124    pytorch
xformers                  0.0.28.post1             pypi_0    pypi
transformers              4.46.3             pyhd8ed1ab_0    conda-forge
"""
# transformers src/transformers/commands/env.py: format_dict's "- {prop}: {val}" of its info dict ("`transformers`
# version", "Huggingface_hub version", "PyTorch version (GPU?)", later "PyTorch version (accelerator?)")
TRANSFORMERS_ENV = """- `transformers` version: 4.46.3
- Platform: Linux-5.15.0-1057-azure-x86_64-with-glibc2.35
- Python version: 3.10.14
- Huggingface_hub version: 0.26.2
- Safetensors version: 0.4.5
- Accelerate version: 1.0.1
- Accelerate config: not found
- PyTorch version (GPU?): 2.4.1+cu124 (True)
- Tensorflow version (GPU?): not installed (NA)
- GPU type: NVIDIA GeForce RTX 5090
"""
# sglang python/sglang/check_env.py check_env: print(f"{k}: {v}") of "Python", the CUDA facts, "PyTorch" and
# get_package_versions(PACKAGE_LIST) (module names: sgl_kernel, flashinfer)
SGLANG_CHECK_ENV = """Python: 3.10.14 (main, Apr  6 2024, 18:45:05) [GCC 11.2.0]
CUDA available: True
GPU 0: NVIDIA H100 80GB HBM3
GPU 0 Compute Capability: 9.0
CUDA_HOME: /usr/local/cuda
NVCC: Cuda compilation tools, release 12.4, V12.4.131
CUDA Driver Version: 550.54.15
PyTorch: 2.4.0+cu121
sglang: 0.3.0
flashinfer: 0.1.6
triton: 3.0.0
transformers: 4.44.2
ulimit soft: 1048576
"""
# poetry src/poetry/console/commands/show.py: the name padded to the widest, the version padded, the description
POETRY_SHOW = """numpy        1.26.4      Fundamental package for array computing in Python
torch        2.4.1       Tensors and Dynamic neural networks in Python with strong GPU acceleration
transformers 4.46.3      State-of-the-art Machine Learning for JAX, PyTorch and TensorFlow
"""
# InvokeAI invokeai/app/api/routers/app_info.py AppDependencyVersions, as its About dialog copies it (JSON)
INVOKEAI = """{
  "accelerate": "1.0.1",
  "cuda": "12.4",
  "python": "3.10.11",
  "torch": "2.4.1+cu124",
  "xformers": "0.0.28.post1"
}
"""
# ComfyUI server.py system_stats: {"system": {..., "comfyui_version", "python_version": sys.version,
# "pytorch_version": torch_version}, "devices": [...]}, as the page's system info copies it
COMFYUI = ('{"system": {"os": "nt", "ram_total": 68604616704, "comfyui_version": "0.3.10", "python_version": '
           '"3.12.7 (tags/v3.12.7:0b05ead, Oct  1 2024) [MSC v.1941 64 bit (AMD64)]", "embedded_python": true, '
           '"pytorch_version": "2.4.1+cu124"}, "devices": [{"name": "cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync"}]}\n')
YAML = "torch: 2.4.1\ntransformers: 4.46.3\n"
# conda env export (conda/env/env.py): "- name=version=build", its pip section "- name==version"
CONDA_EXPORT = ("dependencies:\n  - pytorch=2.4.1=py3.10_cuda12.4_cudnn9.1.0_0\n  - pip:\n"
                "    - transformers==4.46.3\n")
MARKDOWN = "| Package | Version |\n|---|---|\n| torch | 2.4.1+cu124 |\n| `transformers` | 4.46.3 |\n"


@pytest.mark.parametrize(("text", "want"), [
    (COLLECT_ENV, {"torch": "2.4.1", "numpy": "1.26.4", "triton": "3.0.0", "torchvision": "0.19.1", "vllm": "0.6.3.post1"}),
    (CONDA_LIST, {"torch": "2.4.1", "torchvision": "0.19.1", "xformers": "0.0.28.post1", "transformers": "4.46.3"}),
    (TRANSFORMERS_ENV, {"transformers": "4.46.3", "huggingface-hub": "0.26.2", "safetensors": "0.4.5",
                        "accelerate": "1.0.1", "torch": "2.4.1+cu124"}),
    (SGLANG_CHECK_ENV, {"torch": "2.4.0+cu121", "sglang": "0.3.0", "flashinfer": "0.1.6", "triton": "3.0.0",
                        "transformers": "4.44.2"}),
    (POETRY_SHOW, {"numpy": "1.26.4", "torch": "2.4.1", "transformers": "4.46.3"}),
    (INVOKEAI, {"accelerate": "1.0.1", "torch": "2.4.1+cu124", "xformers": "0.0.28.post1"}),
    (COMFYUI, {"comfyui": "0.3.10", "torch": "2.4.1+cu124"}),
    (YAML, {"torch": "2.4.1", "transformers": "4.46.3"}),
    (CONDA_EXPORT, {"torch": "2.4.1", "transformers": "4.46.3"}),
    (MARKDOWN, {"torch": "2.4.1+cu124", "transformers": "4.46.3"}),
], ids=["collect_env", "conda-list", "transformers-env", "sglang-check_env", "poetry-show", "invokeai-json",
        "comfyui-json", "yaml", "conda-export", "markdown"])
def test_a_tools_listing_gives_its_versions(text: str, want: dict[str, str]) -> None:
    got = read(text).versions
    assert {n: got.get(n) for n in want} == want
    # what the listing says of the interpreter, the CUDA toolkit and the driver is no distribution's version
    assert not {"python", "cuda", "driver", "nvcc", "gcc", "os", "ulimit"} & got.keys(), got


def test_conda_builds_torch_cuda() -> None:
    """conda's pytorch build string names the CUDA it was built with: torch's variant is known without a local label."""
    assert read(CONDA_LIST).cuda.get("torch_cuda") == "12.4"


@pytest.mark.parametrize("prose", [
    "I installed torch 2.4 yesterday",
    "upgrading to transformers 4.47 fixed it for me",
    "torch 2.4 is broken on my machine",
    "works with numpy 1.26 but not with numpy 2.0",
    "Epoch 1.5 loss 0.25",
])
def test_prose_is_no_installed_version(prose: str) -> None:
    got = read(prose).versions
    assert not got, got


NO_KERNEL = ("RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
             "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
             "incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
             "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


@pytest.mark.parametrize(("listing", "torch"), [
    ('{"torch": "2.4.1+cu124", "numpy": "1.26.4"}\n', "2.4.1+cu124"),
    ("torch==2.4.1+cu124\n", "2.4.1+cu124"),
    ("Package    Version\n---------- -----------\ntorch      2.4.1+cu124\n", "2.4.1+cu124"),
    (CONDA_LIST, "2.4.1+cu124"),  # conda's build string gives the variant
    ("PyTorch version: 2.4.1\nCUDA used to build PyTorch: 12.4\n", "2.4.1+cu124"),
    ("- PyTorch version (GPU?): 2.4.1+cu124 (True)\n", "2.4.1+cu124"),
    ("PyTorch: 2.4.1+cu124\n", "2.4.1+cu124"),
    ("| torch | 2.4.1+cu124 |\n", "2.4.1+cu124"),
], ids=["json", "freeze", "pip-list", "conda-list", "collect_env", "transformers-env", "sglang", "markdown"])
def test_torchs_known_build_says_the_gpu_is_outside_its_arch_list(listing: str, torch: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """torch's own "no kernel image" with its build known from any listing: the matrix's record of that wheel's code
    (sm_50 ... sm_90, SASS only) is its arch list, and the GPU is outside it."""
    out = diagnoses(listing + NO_KERNEL, "torch-arch-unsupported", ["torch 2.4.1", f"the {torch} wheel", "sm_90",
                                                                     "CUDA 12.4", "matrix records"], tmp_path, capsys)
    assert "as the log prints it" not in out


def test_prose_leaves_torchs_build_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sentence naming a series ("torch 2.4") gives no build: torch's own launch (its CUDA check's tail, nothing else
    named) is read as torch's build lacking the GPU, with no version named and no arch list from the matrix's records."""
    code, out = explain("I installed torch 2.4 yesterday and now:\n" + NO_KERNEL, tmp_path, capsys)
    assert code == 1 and ": torch-arch-unsupported" in out and "the installed torch" in out, out
    assert "torch 2.4" not in out and "carries code only for" not in out, out


def test_an_extensions_kernel_is_not_torchs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With torch's build known but the failing kernel an extension's (its frames name it), torch's arch list says
    nothing of it: not torch-arch-unsupported."""
    text = ("torch==2.4.1+cu124\nTraceback (most recent call last):\n"
            '  File "/usr/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", line 90, in _flash_attn_forward\n'
            "    out, q, k, v = flash_attn_cuda.fwd(\n" + NO_KERNEL)
    _, out = explain(text, tmp_path, capsys)
    assert "torch-arch-unsupported" not in out, out
