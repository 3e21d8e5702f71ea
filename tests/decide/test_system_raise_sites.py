"""The system sweep of issue 38 (tests/fixtures/raise_sites/system-family.toml, written by
scripts/harvest_system_messages.py; its every row is asserted by test_raise_site_tables.py): here the REAL outputs of the
machine's libraries (system-real.toml, recorded by scripts/record_system_messages.py: NumPy's import_array checks from a
gcc-built extension under another NumPy's wheel, glibc's loader on gcc-built NVIDIA stand-ins), and the words each
diagnosis must name: the two libraries of a clash, the NumPy releases and the direction, the driver."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from tests.decide.explaining import each_row, diagnoses, explain, unclaimed

TABLES = Path(__file__).resolve().parents[1] / "fixtures" / "raise_sites"
REAL = tomllib.loads((TABLES / "system-real.toml").read_text(encoding="utf-8"))["run"]
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the loader's stand-ins")


def test_each_real_run_is_named(tmp_path, capsys):
    def check(run):
        code, out = explain(run["output"], tmp_path, capsys)
        assert code == 1, out
        for sid in run["expect"]:
            assert f": {sid}" in out, out

    each_row([(run["tool"][:70], run) for run in REAL], check)


def test_numpy_too_old_is_not_also_read_as_numpy_2(tmp_path, capsys):
    """import_array's ImportError after its C-API check is that check's, not NumPy 2 refusing a 1.x module."""
    run = next(r for r in REAL if "NPY_TARGET_VERSION 1.25" in r["tool"])
    out = diagnoses(run["output"], "numpy-too-old", ["C-API 0x11 (NumPy 1.25-1.26)", "C-API 0x10 (NumPy 1.23-1.24)",
                                                     "numpy>=1.25"], tmp_path, capsys)
    assert "numpy-abi" not in out


def test_numpy_2_headers_under_numpy_1_name_both_c_apis(tmp_path, capsys):
    run = next(r for r in REAL if "NPY_TARGET_VERSION 2.0" in r["tool"])
    out = diagnoses(run["output"], "numpy-too-old", ["NumPy 2.0", "C-API 0x11 (NumPy 1.25-1.26)", "numpy>=2.0"],
                    tmp_path, capsys)
    assert "installed numpy 2.0" not in out  # the headers' release in the message is not the installed NumPy


@pytest.mark.parametrize("line, words", [
    ("RuntimeError: module compiled against API version a but this version of numpy is 9",
     ["C-API 0xa (NumPy 1.10-1.12)", "C-API 0x9 (NumPy 1.8-1.9)", "numpy>=1.10"]),
    # the line a terminal wrapped before the running version, quoted ("> > >") as a thread re-posts it
    ("> > > RuntimeError: module compiled against API version 9 but this version of numpy is\n> > >  7",
     ["C-API 0x9 (NumPy 1.8-1.9)", "numpy>=1.8"]),
])
def test_numpys_bare_hex_check_of_releases_before_1_11(line, words, tmp_path, capsys):
    diagnoses(line, "numpy-too-old", words, tmp_path, capsys)


def test_a_clash_names_both_libraries_and_the_wheel(tmp_path, capsys):
    def check(run):
        out = diagnoses(run["output"], "cuda-toolkit-clash", [], tmp_path, capsys)
        if "cudnn_graph" in run["output"]:
            assert all(w in out for w in ("libcudnn_graph.so.9", "cudaGetDriverEntryPointByVersion", "libcudart.so.12",
                                          "nvidia-cuda-runtime-cu12")), out
        else:
            assert all(w in out for w in ("libcublas.so.11", "libcublasLt.so.11", "nvidia-cublas-cu11", "LD_LIBRARY_PATH")), out

    each_row([(run["tool"][:60], run) for run in [r for r in REAL if r["tool"].startswith("glibc")]], check)


@pytest.mark.parametrize("line, words", [
    # each owner by its prefix, the longest winning (cublasLt before cublas, cusparseLt before cusparse)
    ("OSError: /venv/lib/python3.11/site-packages/nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: "
     "cusparseLtMatmulPlanInit", ["libcusparse.so.12", "libcusparseLt", "cuSPARSELt", "nvidia-cusparselt"]),
    ("OSError: /venv/lib/python3.11/site-packages/nvidia/cusolver/lib/libcusolver.so.11: undefined symbol: "
     "cublasGemmStridedBatchedEx_64, version libcublas.so.12", ["libcusolver.so.11", "libcublas.so.12", "nvidia-cublas-cu12"]),
    ("ImportError: /venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: cudnnGetLibConfig, "
     "version libcudnn.so.9", ["libtorch_cuda.so", "libcudnn.so.9", "cuDNN"]),
])
def test_the_owner_of_a_symbol_comes_from_the_matrix(line, words, tmp_path, capsys):
    diagnoses(line, "cuda-toolkit-clash", words, tmp_path, capsys)


@pytest.mark.parametrize("line, words", [
    # two cuDNN 8 copies mixed (pytorch/pytorch#104591): a C++ symbol of one sub-library (cuDNN's namespace cudnn::)
    # under the other's node, the requiring one a system copy, so the remedy names its directory rather than a wheel's:
    # a symbol cuDNN owns missing inside cuDNN is its own sub-libraries' mix-up (fix-aa), not a clash of two libraries
    ("ImportError: /usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8: undefined symbol: _ZN5cudnn3cnn34layerNormFwd_execute_"
     "internal_implERKNS_7backend11VariantPackEP11CUstream_stRNS0_18LayerNormFwdParamsERKNS1_20NormForwardOperationEmb, "
     "version libcudnn_ops_infer.so.8", ["libcudnn_cnn_infer.so.8", "libcudnn_ops_infer.so.8", "/usr/lib/x86_64-linux-gnu",
                                         "two cuDNN installs"]),
    ("OSError: /venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn_cnn.so.9: undefined symbol: cudnnGetLibConfig, "
     "version libcudnn.so.9", ["libcudnn_cnn.so.9", "libcudnn.so.9", "cudnnGetLibConfig"]),
])
def test_a_cudnn_symbol_inside_cudnn_is_its_sub_libraries_mixed(line, words, tmp_path, capsys):
    out = diagnoses(line, "cudnn-sublibrary-missing", words, tmp_path, capsys)
    assert "cuda-toolkit-clash" not in out


def test_the_owner_table_is_data():
    facts = load_facts()
    assert facts.nvidia_symbol_owner("cublasLtMatmul").library == "libcublasLt"
    assert facts.nvidia_symbol_owner("cublasCreate_v2").library == "libcublas"
    assert facts.nvidia_soname_owner("libcudnn_ops_infer.so.8").library == "libcudnn"
    assert facts.nvidia_symbol_owner("_ZN3c104cuda9SetDeviceEi") is None


@pytest.mark.parametrize("line, words", [
    # a C++ internal of no known prefix, needed by a cuDNN sub-library: its siblings of another release are found first
    ("OSError: /venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: undefined symbol: "
     "_ZN11nvrtcHelper4loadEb", ["libcudnn_cnn_infer.so.8", "libcudnn*", "two copies of cuDNN"]),
    # torch's own library needing an NVIDIA library's function (no node): the NVIDIA library found first is older
    ("ImportError: /venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: cudnnGetLibConfig",
     ["libtorch_cuda.so", "libcudnn", "cuDNN"]),
    ("OSError: /usr/local/lib/python3.8/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
     "cudaGraphInstantiateWithFlags, version libcudart.so.11.0", ["libtorch_cuda.so", "libcudart.so.11.0"]),
])
def test_a_clash_of_siblings_or_of_torchs_own_library(line, words, tmp_path, capsys):
    diagnoses(line, "cuda-toolkit-clash", words, tmp_path, capsys)


@pytest.mark.parametrize("line", [
    # torch's C++ symbol in torch's own library is no clash of NVIDIA libraries: the generic reading stays
    "ImportError: /venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
    "ImportError: /home/u/proj/build/mylib.so: undefined symbol: myproj_cublas_wrapper_init",
])
def test_no_clash_without_an_nvidia_library(line, tmp_path, capsys):
    _, out = explain(line, tmp_path, capsys)
    assert "cuda-toolkit-clash" not in out


@pytest.mark.parametrize("line, words", [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
     "driver is installed and running.\nRuntimeError: No CUDA GPUs are available", ["NVIDIA driver", "kernel module"]),
    ("Failed to initialize NVML: Driver Not Loaded", ["NVIDIA driver", "kernel module"]),
    ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", ["libnvidia-ml.so.1"]),
])
def test_no_driver_in_nvml_and_nvidia_smi_words(line, words, tmp_path, capsys):
    out = diagnoses(line, "driver-not-found", words, tmp_path, capsys)
    assert "cuda-not-available" not in out  # torch counting no GPU is the driver's absence, said once


@pytest.mark.parametrize("line", [
    # CUDA's init failing (cudaErrorInitializationError) without the Proxmox LXC / HMM scene: a failing board, a GPU
    # fallen off the bus (open-ce/open-ce#1371), no cause explain may guess
    "UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have a CUDA gpu. (Triggered "
    "internally at /opt/conda/conda-bld/pytorch/work/c10/cuda/CUDAFunctions.cpp:108.)",
    "numba.cuda.cudadrv.driver.CudaAPIError: [3] Call to cuInit results in CUDA_ERROR_NOT_INITIALIZED",
    "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error",
])
def test_cuda_init_failing_is_claimed_only_with_its_scene(line, tmp_path, capsys):
    unclaimed(line, tmp_path, capsys)


def test_cuda_init_failing_in_a_proxmox_lxc_is_the_hmm_incident(tmp_path, capsys):
    diagnoses("pve-manager/8.2.2, LXC container 101 with nvidia_uvm (HMM on)\nRuntimeError: CUDA driver initialization "
              "failed, you might not have a CUDA gpu.", "lxc-cuda-init-hmm", ["uvm_disable_hmm=1"], tmp_path, capsys)


@needs_gcc
def test_the_loader_still_prints_what_the_table_records(tmp_path):
    """glibc's words for a versioned symbol its provider lacks, from the real loader now (as system-real.toml has it)."""
    def cc(src: str, out: Path, *args: str) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        c = out.with_name(out.name.replace(".", "_") + ".c")
        c.write_text(textwrap.dedent(src))
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(c), *args], check=True, capture_output=True)

    wheel, system = tmp_path / "nvidia" / "cublas" / "lib", tmp_path / "cuda" / "lib64"
    (tmp_path / "new.map").write_text("libcublasLt.so.11 { global: cublasLtGetStatusString; local: *; };\n")
    (tmp_path / "old.map").write_text("libcublasLt.so.11 { global: cublasLtCreate; local: *; };\n")
    cc("const char* cublasLtGetStatusString(int s){return \"\";}\n", wheel / "libcublasLt.so.11",
       "-Wl,-soname,libcublasLt.so.11", f"-Wl,--version-script,{tmp_path / 'new.map'}")
    cc("extern const char* cublasLtGetStatusString(int);\nint f(void){return cublasLtGetStatusString(0)!=0;}\n",
       wheel / "libcublas.so.11", "-Wl,-soname,libcublas.so.11", "-L", str(wheel), "-l:libcublasLt.so.11",
       "-Wl,-rpath,$ORIGIN")
    cc("int cublasLtCreate(void){return 0;}\n", system / "libcublasLt.so.11", "-Wl,-soname,libcublasLt.so.11",
       f"-Wl,--version-script,{tmp_path / 'old.map'}")
    r = subprocess.run([sys.executable, "-S", "-c", f"import ctypes; ctypes.CDLL({str(wheel / 'libcublas.so.11')!r})"],
                       capture_output=True, text=True, env={"LD_LIBRARY_PATH": str(system)})
    assert "libcublas.so.11: undefined symbol: cublasLtGetStatusString, version libcublasLt.so.11" in r.stderr
