"""``glmcompat explain`` on failures of building or loading against what is on the machine (issue 38, set E): a CUDA
driver API function the driver's libcuda.so.1 lacks, a libstdc++.so.6 older than a library needs, an extension
linking a torch library the installed torch lacks, torch's cpp_extension refusing another CUDA toolkit, and the CUDA
release a libcudart soname names.

The loader's messages come from the real dynamic loader on gcc-built libraries (as the NCCL case of test_diagnose.py);
torch's own texts are cited from the file and line that print them."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from glmcompat.decide.diagnose import Env, diagnose
from glmcompat.matrix.load import load_facts
from glmcompat.model.signatures import Hit, scan_log

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the loader fixtures")


def explain(log: str) -> list[Hit]:
    facts = load_facts()
    scan = scan_log(log.splitlines(), facts.rows("signature"))
    return diagnose(scan.hits, Env.from_log(scan.context), facts)


def cc(src: str, out: Path, *args: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    c = out.with_name(out.name.replace(".", "_") + ".c")
    c.write_text(textwrap.dedent(src))
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(c), *args], check=True, capture_output=True)


def load(lib: Path) -> str:
    """What Python prints when it loads ``lib`` (ctypes binds every symbol at load, as an extension import does)."""
    r = subprocess.run([sys.executable, "-S", "-c", f"import ctypes; ctypes.CDLL({str(lib)!r})"],
                       capture_output=True, text=True)
    assert r.returncode != 0, r
    return r.stderr


@pytest.fixture
def driver_api_failure(tmp_path: Path) -> str:
    """An extension that calls cuGreenCtxStreamCreate (CUDA 12.5's), loaded against a libcuda.so.1 without it."""
    drv = tmp_path / "driver"
    cc("int cuInit(unsigned f) { return 0; }\nint cuGreenCtxStreamCreate(void) { return 0; }\n", drv / "libcuda.so.1",
       "-Wl,-soname,libcuda.so.1")
    ext = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "sgl_kernel" / "common_ops.abi3.so"
    cc("extern int cuGreenCtxStreamCreate(void);\nint use(void) { return cuGreenCtxStreamCreate(); }\n", ext,
       "-L", str(drv), "-l:libcuda.so.1", f"-Wl,-rpath,{drv}")
    cc("int cuInit(unsigned f) { return 0; }\n", drv / "libcuda.so.1", "-Wl,-soname,libcuda.so.1")  # an older driver
    err = load(ext)
    assert "undefined symbol: cuGreenCtxStreamCreate" in err
    return err


@needs_gcc
def test_a_driver_api_function_the_driver_lacks_from_the_real_loader(driver_api_failure: str) -> None:
    log = "| NVIDIA-SMI 550.54.14   Driver Version: 550.54.14   CUDA Version: 12.4 |\n" + driver_api_failure
    hits = explain(log + "sgl-kernel 0.2.7\n")
    assert [h.id for h in hits] == ["driver-too-old"]  # the generic undefined-symbol lies inside it
    h = hits[0]
    assert (h.package, h.version) == ("sgl-kernel", "0.2.7")
    assert "cuGreenCtxStreamCreate, a CUDA driver API function added in CUDA 12.5" in h.cause
    assert "driver 550.54.14 (CUDA 12.4)" in h.cause and "older than CUDA 12.5" in h.cause
    assert "NVIDIA driver for CUDA 12.5 or newer" in h.remedy and "sgl-kernel's release" in h.remedy


@needs_gcc
def test_a_driver_api_function_of_an_older_release_is_no_old_driver(driver_api_failure: str) -> None:
    """Where the driver is as new as the function's release, its libcuda.so.1 exports it: the one loaded is another."""
    log = "Driver Version: 570.26   CUDA Version: 12.8\n" + driver_api_failure
    h = next(h for h in explain(log) if h.id == "driver-too-old")
    assert "every NVIDIA driver since CUDA 12.5 exports" in h.cause and "not the one loaded" in h.cause
    assert "LD_LIBRARY_PATH" in h.remedy


def test_the_release_of_a_driver_api_function() -> None:
    facts = load_facts()
    assert facts.driver_api_release("cuGreenCtxStreamCreate") == "12.5"
    assert facts.driver_api_release("cuGreenCtxDestroy") == "12.4"
    assert facts.driver_api_release("cuInit") == "2.0"
    assert facts.driver_api_release("cudaMalloc") == ""  # the runtime's, not the driver's
    # a path-less message: one hit, and no claim that torch lacks the symbol
    hits = explain("ImportError: undefined symbol: cuGreenCtxDestroy\n")
    assert [h.id for h in hits] == ["driver-too-old"] and "CUDA 12.4" in hits[0].cause


@needs_gcc
def test_a_missing_libstdcxx_version_from_the_real_loader(tmp_path: Path) -> None:
    """A library built against a libstdc++ with GLIBCXX_3.4.30, loaded next to one without it (glibc's own text)."""
    std = tmp_path / "usr" / "lib"
    for nodes in (("GLIBCXX_3.4", "GLIBCXX_3.4.30"), ("GLIBCXX_3.4",)):  # build against the newer, run the older
        script = tmp_path / "ver.map"
        script.write_text("".join(f"{n} {{ global: f_{n.replace('.', '_')}; }};\n" for n in nodes)
                          + "GLIBCXX_LOCAL { local: *; };\n")
        src = "".join(f"int f_{n.replace('.', '_')}(void) {{ return 0; }}\n" for n in nodes)
        cc(src, std / "libstdc++.so.6", "-Wl,-soname,libstdc++.so.6", f"-Wl,--version-script,{script}")
        if len(nodes) == 2:
            lib = tmp_path / "site-packages" / "torch" / "lib" / "libtorch_python.so"
            cc("extern int f_GLIBCXX_3_4_30(void);\nint use(void) { return f_GLIBCXX_3_4_30(); }\n", lib,
               "-L", str(std), "-l:libstdc++.so.6", f"-Wl,-rpath,{std}")
    err = load(lib)
    assert "version `GLIBCXX_3.4.30' not found (required by" in err
    hits = explain(err)
    assert [h.id for h in hits] == ["libstdcxx-too-old"]
    h = hits[0]
    assert h.package == "torch" and h.groups["loaded"].endswith("libstdc++.so.6")
    assert "needs GLIBCXX_3.4.30 (libstdc++ of GCC 12.1.0 or newer)" in h.cause and "libtorch_python.so" in h.cause
    assert "LD_LIBRARY_PATH=$CONDA_PREFIX/lib" in h.remedy and "GCC 12.1 or newer" in h.remedy


@needs_gcc
def test_a_missing_torch_library_from_the_real_loader(tmp_path: Path) -> None:
    """An extension built against a CUDA torch (it needs libc10_cuda.so) next to a CPU-only torch/lib."""
    lib = tmp_path / "site-packages" / "torch" / "lib"
    cc("int c10_cuda(void) { return 0; }\n", lib / "libc10_cuda.so", "-Wl,-soname,libc10_cuda.so")
    ext = tmp_path / "site-packages" / "torch_scatter" / "_version_cuda.so"
    cc("extern int c10_cuda(void);\nint use(void) { return c10_cuda(); }\n", ext, "-L", str(lib), "-lc10_cuda",
       f"-Wl,-rpath,{lib}")
    (lib / "libc10_cuda.so").unlink()  # torch's CPU build has no CUDA libraries
    err = load(ext)
    assert "libc10_cuda.so: cannot open shared object file" in err
    h = next(h for h in explain("[pip3] torch==2.13.0+cpu\n" + err) if h.id == "torch-lib-missing")
    assert "torch 2.13.0+cpu has no libc10_cuda.so: it is a CPU-only build" in h.cause
    assert "install the CUDA build of torch 2.13.0" in h.remedy


def test_torchs_split_cuda_library() -> None:
    h = next(h for h in explain("OSError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory\n")
             if h.id == "torch-lib-missing")
    assert "split CUDA build" in h.cause and "libtorch_cuda_cu.so" in h.cause


# torch-2.13.0+cpu wheel torch/utils/cpp_extension.py:341-344 and :646 (raise RuntimeError(CUDA_MISMATCH_MESSAGE,
# cuda_str_version, torch.version.cuda): Python prints the arguments' tuple); earlier releases formatted the message
# over two lines ("...used to compile\nPyTorch ({1}). Please make sure to use the same CUDA versions.").
NEW_FORM = str(RuntimeError("The detected CUDA version (%s) mismatches the version that was used to compile"
                            "PyTorch (%s). Please make sure to use the same CUDA versions.", "12.8", "13.0"))
OLD_FORM = ("RuntimeError:\nThe detected CUDA version (12.2) mismatches the version that was used to compile\n"
            "PyTorch (11.3). Please make sure to use the same CUDA versions.\n")
# :345-347, logged where only the minor differs: a warning, no failure
MINOR = ("The detected CUDA version (12.8) has a minor version mismatch with the version that was used to compile "
         "PyTorch (12.6). Most likely this shouldn't be a problem.")


@pytest.mark.parametrize(("log", "toolkit", "built", "label"), [(OLD_FORM, "12.2", "11.3", "cu121"),
                                                                  ("RuntimeError: " + NEW_FORM, "12.8", "13.0", "cu128")])
def test_cpp_extension_refuses_another_cuda_toolkit(log: str, toolkit: str, built: str, label: str) -> None:
    hits = explain("torch==2.9.1\n" + log)
    assert [h.id for h in hits] == ["cuda-toolkit-mismatch"]
    h = hits[0]
    assert f"built with CUDA {built}, with the CUDA {toolkit} toolkit" in h.cause
    assert f"CUDA_HOME at a CUDA {built} toolkit" in h.remedy and f"torch==2.9.1+{label}" in h.remedy
    assert "--no-build-isolation" in h.remedy


def test_a_minor_cuda_toolkit_difference_is_no_failure() -> None:
    assert explain(MINOR + "\n") == []


@pytest.mark.parametrize(("lib", "cuda"), [("libcudart.so.10.1", "CUDA 10.1"), ("libcudart.so.11.0", "CUDA 11 "),
                                           ("libcudart.so.12", "CUDA 12 ")])
def test_the_cuda_release_a_runtime_soname_names(lib: str, cuda: str) -> None:
    """Up to CUDA 10 the runtime's soname carries the release; from 11 on only the major (11.x: libcudart.so.11.0)."""
    h = next(h for h in explain(f"ImportError: {lib}: cannot open shared object file: No such file or directory\n")
             if h.id == "cudart-missing")
    assert f"built for {cuda}" in h.cause + " ", h.cause


@needs_gcc
def test_a_newer_glibc_from_the_real_loader(tmp_path: Path) -> None:
    """A library linked against a glibc with GLIBC_2.99, loaded next to the machine's libc.so.6 (glibc's own text)."""
    fake = tmp_path / "newer-glibc"
    script = tmp_path / "libc.map"
    script.write_text("GLIBC_2.99 { global: f_2_99; local: *; };\n")
    cc("int f_2_99(void) { return 0; }\n", fake / "libc.so.6", "-Wl,-soname,libc.so.6", f"-Wl,--version-script,{script}")
    lib = tmp_path / "site-packages" / "sgl_kernel" / "common_ops.abi3.so"
    cc("extern int f_2_99(void);\nint use(void) { return f_2_99(); }\n", lib, "-L", str(fake), "-l:libc.so.6")
    err = load(lib)
    assert "version `GLIBC_2.99' not found (required by" in err
    hits = explain(err + "sgl-kernel 0.3.21\n")
    assert [h.id for h in hits] == ["glibc-too-old"]
    h = hits[0]
    assert h.package == "sgl-kernel" and h.rule == "glibc"
    # the node and the module as the loader spells them, then what they mean (the word-form rule)
    assert "sgl-kernel 0.3.21's common_ops.abi3.so needs GLIBC_2.99 (glibc >= 2.99: a build for manylinux_2_99" in h.cause
    assert h.cause.endswith("(the log's sgl_kernel is sgl-kernel)")
    assert "glibc >= 2.99" in h.remedy


@pytest.mark.parametrize("line", [
    # old TH/THC errors end " at <file>:<line>" of torch's tree (open-mmlab/mmskeleton#30, torch 0.3/0.4)
    "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
    "torch/csrc/cuda/Module.cpp:107",
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=74 error=35 : CUDA driver version is insufficient "
    "for CUDA runtime version",
    # TORCH_WARN's suffix (c10/util/Logging.cpp): "(Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)"
    "UserWarning: CUDA initialization: CUDA driver version is insufficient for CUDA runtime version (Triggered "
    "internally at ../c10/cuda/CUDAFunctions.cpp:108.)"])
def test_torchs_source_tree_names_torch(line: str) -> None:
    from glmcompat.model.signatures import mentions

    assert [m[2] for m in mentions(line) if m[1] == "torchsrc"] == ["torch"]
    assert [(h.id, h.package) for h in explain(line + "\n")] == [("driver-insufficient", "torch")]


def test_another_projects_source_tree_names_no_torch() -> None:
    from glmcompat.model.signatures import mentions

    # cutorch (Lua torch) has its own THC copy under cutorch/lib/THC (torch/cutorch#318)
    line = "cuda runtime error (35) : ... at /tmp/luarocks_cutorch-scm-1-384/cutorch/lib/THC/THCGeneral.c:16"
    assert not [m for m in mentions(line) if m[1] == "torchsrc"]


# torchvision-0.24.1 wheel torchvision/extension.py:78-83 (its import-time CUDA check)
TV_CUDA = ("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
           "PyTorch has CUDA Version={t} and torchvision has CUDA Version={tv}. Please reinstall the torchvision that "
           "matches your PyTorch install.")
# torchaudio-2.9.1 wheel torchaudio/_extension/utils.py:128-132
TA_CUDA = ("RuntimeError: Detected that PyTorch and TorchAudio were compiled with different CUDA versions. PyTorch has "
           "CUDA version {t} whereas TorchAudio has CUDA version {ta}. Please install the TorchAudio version that matches "
           "your PyTorch version.")


def test_torchvision_and_torchaudio_built_for_another_cuda() -> None:
    h = next(h for h in explain("[pip3] torch==2.9.1+cu128\n" + TV_CUDA.format(t="12.8", tv="13.0") + "\n")
             if h.id == "torchvision-cuda-mismatch")
    assert h.package == "torchvision" and "built for CUDA 13.0 and torch 2.9.1+cu128 for CUDA 12.8" in h.cause
    assert h.remedy.startswith("install torchvision==") and "+cu128 from PyTorch's cu128 index" in h.remedy
    h = next(h for h in explain(TA_CUDA.format(t="12.6", ta="12.8") + "\n") if h.id == "torchaudio-cuda-mismatch")
    assert h.package == "torchaudio" and "built for CUDA 12.8 and torch for CUDA 12.6" in h.cause
    assert "from PyTorch's cu126 index" in h.remedy


def test_torchvisions_custom_ops_text_is_its_torch_mismatch() -> None:
    # torchvision-0.24.1 wheel torchvision/extension.py:44-54 (_assert_has_ops)
    log = ("[pip3] torch==2.13.0+cpu\n[pip3] torchvision==0.28.0\nRuntimeError: Couldn't load custom C++ ops. This can "
           "happen if your PyTorch and torchvision versions are incompatible, or if you had errors while compiling "
           "torchvision from source.\n")
    h = next(h for h in explain(log) if h.id == "torchvision-nms-missing")
    assert "CPU-only" in h.cause and "install torchvision==0.28.0+cpu" in h.remedy


@needs_gcc
def test_torchaudio_built_for_another_torch_from_the_real_loader(tmp_path: Path) -> None:
    lib = tmp_path / "site-packages" / "torch" / "lib"
    cc("int _ZN3c104cuda20CUDACachingAllocator9allocatorE;\n", lib / "libc10_cuda.so", "-Wl,-soname,libc10_cuda.so")
    ta = tmp_path / "site-packages" / "torchaudio" / "lib" / "libtorchaudio.so"
    cc("extern int _ZN3c104cuda20CUDACachingAllocator9allocatorE;\nint use(void) { return "
       "_ZN3c104cuda20CUDACachingAllocator9allocatorE; }\n", ta, "-L", str(lib), "-lc10_cuda", f"-Wl,-rpath,{lib}")
    cc("int other;\n", lib / "libc10_cuda.so", "-Wl,-soname,libc10_cuda.so")  # another torch's c10
    err = load(ta)
    assert "libtorchaudio.so: undefined symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE" in err
    hits = explain(err)
    assert [h.id for h in hits] == ["torchaudio-load-failure"]  # the generic undefined-symbol lies inside it
    assert hits[0].package == "torchaudio" and "built against another torch" in hits[0].cause


@pytest.mark.parametrize("line", [
    # torch-2.13.0+cpu wheel torch/utils/cpp_extension.py:3302-3303 (_join_cuda_home)
    "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
    # :628 (_check_cuda_version)
    "FileNotFoundError: nvcc not found at '/usr/local/cuda/bin/nvcc'. Ensure CUDA path '/usr/local/cuda' is correct.",
    # Dao-AILab/flash-attention setup.py check_if_cuda_home_none("flash_attn")
    "UserWarning: flash_attn was requested, but nvcc was not found.  Are you sure your environment has nvcc available?"])
def test_building_without_nvcc(line: str) -> None:
    h = next(h for h in explain("[pip3] torch==2.9.1+cu128\n" + line + "\n") if h.id == "nvcc-missing")
    assert "needs nvcc" in h.cause and "the CUDA 12.8 toolkit" in h.remedy and "prebuilt wheel" in h.remedy
    if "flash_attn" in line:
        assert h.cause.startswith("flash-attn is being compiled") and "--no-build-isolation flash-attn" in h.remedy


def test_a_dll_torch_cannot_load_on_windows() -> None:
    # torch-2.13.0+cpu wheel torch/__init__.py:267-269: ctypes.WinError plus ' Error loading "<dll>" or one of its dependencies.'
    line = ('OSError: [WinError 126] The specified module could not be found. Error loading '
            '"C:\\venv\\Lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.')
    h = next(h for h in explain("torch==2.6.0\n" + line + "\n") if h.id == "torch-dll-load-failed")
    assert "torch 2.6.0's c10.dll" in h.cause and "Visual C++ Redistributable" in h.remedy


def test_bitsandbytes_without_a_cuda_binary() -> None:
    # bitsandbytes-0.41.1 wheel bitsandbytes/cextension.py:20-27
    h = next(h for h in explain("RuntimeError: \n        CUDA Setup failed despite GPU being available. Please run the "
                                "following command to get more information:\n") if h.id == "bitsandbytes-cuda-setup")
    assert "pip install -U bitsandbytes" in h.remedy


def test_another_packages_cuda_library() -> None:
    # onnxruntime's provider bridge (onnxruntime/core/session/provider_bridge_ort.cc) names the provider library it loads
    log = ("Cuda compilation tools, release 12.1, V12.1.66\n[E:onnxruntime:Default, provider_bridge_ort.cc:1209 "
           "onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library "
           "libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: No such file "
           "or directory\n")
    h = next(h for h in explain(log) if h.id == "cuda-lib-missing")
    assert h.package == "onnxruntime" and "built for CUDA 11" in h.cause and "environment's CUDA is 12.1" in h.cause
    assert "its CUDA 12 build" in h.remedy and "torch" not in h.cause


def test_no_kernel_image_of_an_unrecorded_torch_names_both_suspects() -> None:
    h = next(h for h in explain("RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
                                "Built with pytorch 1.7, cuda 10.2\n") if h.id == "no-kernel-image")
    assert "no GPU code" not in h.cause and "torch 1.7's build or a compiled extension" in h.cause
    assert "TORCH_CUDA_ARCH_LIST" in h.remedy


@pytest.mark.parametrize(("line", "named"), [
    # bitsandbytes-0.45.5 wheel bitsandbytes/cextension.py:70 (logger.warning("... at %r", cuda_binary_path))
    ("Could not find the bitsandbytes CUDA binary at PosixPath('/venv/site-packages/bitsandbytes/libbitsandbytes_cuda128.so')",
     "libbitsandbytes_cuda128.so, its build for CUDA 12.8"),
    # :91-99
    ("CUDA Setup failed despite CUDA being available. Please run the following command to get more information:", "")])
def test_bitsandbytes_later_phrasings(line: str, named: str) -> None:
    h = next(h for h in explain(line + "\n") if h.id == "bitsandbytes-cuda-setup")
    assert named in h.cause and "pip install -U bitsandbytes" in h.remedy


def test_bitsandbytes_warning_is_the_cpu_librarys() -> None:
    """:77-80 (get_native_library: the loaded library has no GPU functions, the CPU one) and 0.41's cextension.py
    (AttributeError of the CPU library or of none): bitsandbytes-cpu-library's, not bitsandbytes-cuda-setup's (issue 38's
    one vocabulary)."""
    hits = explain("The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit "
                   "multiplication, and GPU quantization are unavailable.\n")
    assert [h.id for h in hits] == ["bitsandbytes-cpu-library"]
    assert "CPU-only" in hits[0].cause and "torch.cuda.is_available()" in hits[0].remedy
