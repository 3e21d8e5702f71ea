"""``glmcompat explain`` on the exact text each family of set M raises (quoted from the raise site its [[signature]] row
cites), its other phrasings, and the lines that share its words but must stay unclaimed. The real logs are cases of
tests/fixtures/explain/heldout_m.toml (tinygrad/open-gpu-kernel-modules#47, ...)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, explain, unclaimed


@pytest.mark.parametrize(("text", "words", "absent"), [
    # nvidia-smi: "Failed to initialize NVML: Driver/library version mismatch" (NVML_ERROR_LIB_RM_VERSION_MISMATCH),
    # then the user-space NVML's release: the diagnosis names it
    ("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.183", ["535.183", "reboot"], []),
    # the kernel's NVRM line names the client's (user-space) release
    ("NVRM: API mismatch: the client has the version 550.54.14, but", ["550.54.14", "reboot"], []),
    # the bare line: no release known, the generic cause
    ("Failed to initialize NVML: Driver/library version mismatch", ["reboot"], ["driver 5"]),
])
def test_driver_library_mismatch_names_the_user_space_release(text: str, words: list[str], absent: list[str],
                                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and ": driver-library-mismatch" in out, out
    assert not [w for w in words if w not in out] and not [w for w in absent if w in out], out


def test_nvml_version_line_alone_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # nvidia-smi -q's header on a healthy machine shares the words
    unclaimed("Driver Version                            : 570.124.06\nNVML library version: 570.124", tmp_path, capsys)


@pytest.mark.parametrize(("text", "sid", "words"), [
    # aten/src/ATen/DynamicLibrary.cpp checkDL: "Error in dlopen or dlsym: " + dlerror(), for torch's bare-name dlopen
    ("RuntimeError: Error in dlopen or dlsym: libcaffe2_nvrtc.so: cannot open shared object file: No such file or directory",
     "torch-lib-missing", ["libcaffe2_nvrtc.so", "LD_LIBRARY_PATH"]),
    # cuDNN 8's front library: "Could not load library %s. Error: %s" where the sub-library's own dependency is missing:
    # cuDNN's sub-library did not load, the error saying why (issue 38's one vocabulary: cudnn-sublibrary-missing's alone)
    ("Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such file or "
     "directory", "cudnn-sublibrary-missing", ["libnvrtc.so", "ln -s"]),
    # the same with a versioned soname keeps the wheel's remedy (NVRTC's own soname: nvrtc-missing, a case of
    # cuda-lib-missing; fix-q, tests/fixtures/raise_sites/fixq-signatures.toml)
    ("ImportError: libnvrtc.so.12: cannot open shared object file: No such file or directory", "nvrtc-missing",
     ["libnvrtc.so.12", "nvidia-cuda-nvrtc-cu12"]),
    # a cuDNN sub-library itself missing stays cuDNN's
    ("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: No "
     "such file or directory", "cudnn-sublibrary-missing", ["libcudnn_ops_infer.so.8"]),
])
def test_nvrtc_missing_names_the_library_and_who_loads_it(text: str, sid: str, words: list[str], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, sid, words, tmp_path, capsys)


def test_nvrtc_words_without_the_loader_error_stay_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed("-- Found libnvrtc.so in /usr/local/cuda/lib64\ntorch/lib/libcaffe2_nvrtc.so", tmp_path, capsys)


@pytest.mark.parametrize(("text", "sid", "words"), [
    # NVIDIA/TensorRT python/packaging/bindings_wheel/tensorrt/__init__.py: `from .tensorrt import *` leaves
    # libnvinfer.so.N to the loader (glibc elf/dl-load.c "<soname>: cannot open shared object file")
    ('  File "/usr/lib/python3/dist-packages/tensorrt/__init__.py", line 75, in <module>\n    from .tensorrt import *\n'
     "ImportError: libnvinfer.so.10: cannot open shared object file: No such file or directory", "tensorrt-lib-missing",
     ["libnvinfer.so.10", "tensorrt", "TensorRT 10"]),
    ("OSError: libnvinfer_plugin.so.8: cannot open shared object file: No such file or directory", "tensorrt-lib-missing",
     ["libnvinfer_plugin.so.8", "TensorRT 8"]),
    # CPython's shared library, built only with --enable-shared (its soname libpython3.X.so.1.0)
    ("ImportError: libpython3.11.so.1.0: cannot open shared object file: No such file or directory", "libpython-missing",
     ["libpython3.11.so.1.0", "--enable-shared"]),
])
def test_a_missing_tensorrt_or_python_library_names_it(text: str, sid: str, words: list[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, sid, words, tmp_path, capsys)


def test_tensorrt_and_libpython_words_without_the_loader_error_stay_unclaimed(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("-- Found libnvinfer.so.10 at /usr/lib/x86_64-linux-gnu\nlinking against libpython3.10.so.1.0",
                         tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(("text", "words"), [
    # open-mmlab/mmdetection v2.x mmdet/__init__.py: f'MMCV=={mmcv.__version__} is used but incompatible. '
    # f'Please install mmcv>={mmcv_minimum_version}, <={mmcv_maximum_version}.'
    ("AssertionError: MMCV==1.6.0 is used but incompatible. Please install mmcv>=1.3.17, <=1.5.0.",
     ["mmcv>=1.3.17,<=1.5.0", "mmcv 1.6.0"]),
    # mmseg's bounds as digit_version tuples (pre-release places after the third)
    ("AssertionError: MMCV==1.3.8 is used but incompatible. Please install mmcv>=(1, 3, 13, 0, 0, 0), <=(1, 4, 0, 0, 0, 0).",
     ["mmcv>=1.3.13,<=1.4.0", "mmcv 1.3.8"]),
    # v3.x: MMEngine, an exclusive upper bound
    ("AssertionError: MMEngine==1.0.0 is used but incompatible. Please install mmengine>=0.7.1, <1.0.0.",
     ["mmengine>=0.7.1,<1.0.0", "mmengine 1.0.0"]),
    # a lower bound only
    ("AssertionError: MMCV==1.7.1 is used but incompatible. Please install mmcv>=2.0.0rc4.", ["mmcv>=2.0.0rc4"]),
])
def test_openmmlab_version_asserts_name_the_range(text: str, words: list[str], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "version-requirement-unmet", words, tmp_path, capsys)


def test_openmmlab_words_without_the_assert_stay_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("mmcv_minimum_version = '1.3.17'\nMMCV==2.1.0 is used here\nPlease install mmcv>=2.0.0 first",
                         tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(("text", "sid", "words"), [
    # text-generation-inference utils/flash_attn.py: ImportError f"GPU with CUDA capability {major} {minor} is not
    # supported for Flash Attention V2"
    ("ImportError: GPU with CUDA capability 7 5 is not supported for Flash Attention V2", "flash-attn-gpu-too-old",
     ["7.5", "8.0"]),
    # its models/__init__.py: FLASH_ATT_ERROR_MESSAGE = "{} requires Flash Attention enabled models."
    ("NotImplementedError: Sharded Falcon requires Flash Attention enabled models.", "flash-attn-gpu-too-old",
     ["Sharded Falcon", "Flash Attention", "8.0"]),
    # ptxas: "Feature '<feature>' requires .target sm_<N> or higher" for a data type's instruction
    ("ptxas /tmp/compile-ptx-src-1, line 9; error   : Feature '.bf16' requires .target sm_80 or higher",
     "gpu-dtype-unsupported", ["bf16", "sm_80", "float16"]),
    ("ptxas /tmp/x.ptx, line 3; error   : Feature 'cvt.rn.satfinite.e4m3x2.f32' requires .target sm_89 or higher",
     "gpu-dtype-unsupported", ["e4m3", "sm_89"]),
])
def test_a_gpu_too_old_for_the_kernel_names_what_it_lacks(text: str, sid: str, words: list[str], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, sid, words, tmp_path, capsys)


def test_ptxas_features_of_no_data_type_stay_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the same ptxas sentence for an instruction that is no data type's (shared-memory barriers, clusters)
    code, out = explain("ptxas /tmp/a.ptx, line 7; error   : Feature 'cp.async.bulk' requires .target sm_90 or higher\n"
                         "INFO: using Flash Attention enabled models", tmp_path, capsys)
    assert "gpu-dtype-unsupported" not in out and "flash-attn-gpu-too-old" not in out, out


@pytest.mark.parametrize(("text", "words"), [
    # uv sync: "Distribution `<dist> @ <source>` can't be installed because it doesn't have a source distribution or wheel
    # for the current platform", then its hint "You're on <OS> (`<tag>`), but `<pkg>` (v<version>) only has wheels for
    # the following platform(s): ..."
    ("error: Distribution `torch==2.6.0 @ registry+https://index.invalid/whl/cpu` can't be installed because it doesn't "
     "have a source distribution or wheel for the current platform\n\nhint: You're on Windows (`win_amd64`), but `torch` "
     "(v2.6.0) only has wheels for the following platform: `macosx_11_0_arm64`", ["torch==2.6.0", "win_amd64",
                                                                                 "macosx_11_0_arm64"]),
    # uv before the hint: the distribution alone
    ("error: Distribution `torch==2.5.1+cu121 @ registry+https://index.invalid/whl/cu121` can't be installed because it "
     "doesn't have a source distribution or wheel for the current platform", ["torch==2.5.1+cu121", "required-environments"]),
])
def test_uv_sync_without_a_wheel_for_the_host(text: str, words: list[str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "wheel-not-supported", words, tmp_path, capsys)  # uv's tag check (issue 38, one vocabulary)


def test_uv_platform_words_of_a_package_outside_the_stack_stay_unclaimed(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("error: Distribution `kaleido==0.2.1.post1 @ registry+https://index.invalid/simple` can't be "
                         "installed because it doesn't have a source distribution or wheel for the current platform",
                         tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(("text", "words", "claimed"), [
    # state-spaces/mamba: setup.py builds CUDAExtension(name="selective_scan_cuda"), imported by its ops
    ("ModuleNotFoundError: No module named 'selective_scan_cuda'", ["mamba-ssm", "selective_scan_cuda"], True),
    # Dao-AILab/causal-conv1d: its extension causal_conv1d_cuda
    ("ModuleNotFoundError: No module named 'causal_conv1d_cuda'", ["causal-conv1d", "causal_conv1d_cuda"], True),
    # a module that is no compiled package's own stays unclaimed
    ("ModuleNotFoundError: No module named 'my_scan_cuda'", [], False),
])
def test_a_compiled_packages_own_extension_module_names_the_package(text: str, words: list[str], claimed: bool,
                                                                    tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert (code == 1 and ": package-not-installed" in out) is claimed, out
    assert not [w for w in words if w not in out], out


@pytest.mark.parametrize(("text", "words", "absent"), [
    # CPython prints the failing frame's source line: the import statement just before the ImportError names the module
    ('  File "/app/run.py", line 3, in <module>\n    from tensorrt_llm.bindings import DataType\n'
     "ImportError: libpython3.10.so.1.0: cannot open shared object file: No such file or directory",
     ["tensorrt_llm.bindings", "libpython3.10.so.1.0"], []),
    # an import far before the error names nothing
    ("    import my_ext\nstep 1\nstep 2\nstep 3\nstep 4\n"
     "ImportError: libpython3.10.so.1.0: cannot open shared object file: No such file or directory",
     ["libpython3.10.so.1.0"], ["my_ext"]),
])
def test_the_import_a_loader_error_ends_names_the_module(text: str, words: list[str], absent: list[str], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and ": libpython-missing" in out, out
    assert not [w for w in words if w not in out] and not [w for w in absent if w in out], out
