"""The torch family's raise sites (issue 38's sweep by library): each packaging or compatibility message that torch,
torchvision, torchaudio, triton, NumPy and the CUDA runtime can print, as the library formats it
(tests/fixtures/raise_sites/torch-family.toml, listed from the wheels by scripts/harvest_raise_sites.py), is named by
the signature it should get; the sweep's harmless notices, and lines that share a signature's words but tell of no
failure, stay unclaimed."""

from __future__ import annotations



from tests.decide.explaining import each_row, table, diagnoses, unclaimed
from tests.decide.test_raise_site_tables import harvester as _harvester

MESSAGES = table("torch-family.toml")


# words a signature reads, in lines that tell of no failure
UNCLAIMED = [
    "INFO: Your compiler (g++ 11.4.0) is compatible with PyTorch",
    "Using ninja as the BuildExtension backend",
    "Found C compiler: /usr/bin/gcc (CC environment variable unset)",
    "torch.cuda: GPU 0 (NVIDIA H100) has cuda capability 9.0, which this PyTorch supports",
    "Known CUDA arch (9.0) and GPU supported",
    "PyTorch was compiled with CUDA support (12.8)",
    "is PyTorch linked with support for cuda devices: True",
    "cuda driver loaded, cuda enabled",
    "Opened libcuda.so.1 from /usr/lib/x86_64-linux-gnu",
    "PyTorch is compiled with NCCL support (2.21.5)",
    "triton package is installed (3.4.0)",
    "Installed triton version: 3.4.0",
    "API call is supported in the installed CUDA driver",
    "NumPy 2.0.2 is installed",
    "numpy._core.multiarray imported",
    "Loaded PyTorch C extensions from site-packages/torch/_C.cpython-311-x86_64-linux-gnu.so",
    "torch.compile is supported on Python 3.12",
    "PyTorch was compiled with cuDNN support (90100)",
    "cuDNN library found: libcudnn.so.9",
    "PTX JIT compiler library found: libnvidia-ptxjitcompiler.so.1",
    "FFmpeg 6 extension is available.",
    "TorchAudio is built with FFmpeg integration.",
    "Importing the numpy C-extensions succeeded.",
    "DeprecationWarning: `numpy.distutils` is deprecated since NumPy 1.23.0, as a result of the deprecation of `distutils` itself.",
    "Triton supports CUDA 12.8",
    "Found NVRTC library libnvrtc.so.12",
    "Distributed package has MPI built in",
    "system initialized: Fabric Manager running",
    "PTX JIT compilation succeeded for sm_90",
    "cuDNN status: CUDNN_STATUS_SUCCESS",
    "cuBLAS status: CUBLAS_STATUS_SUCCESS",
    "TorchCodec is optional for load; using the soundfile backend",
    "Found ptxas at /usr/local/cuda/bin/ptxas",
    "cuda video backend is available.",
    "NVTX functions installed",
    "libcublas.so.12 found in the system path: /venv/lib/python3.11/site-packages/nvidia/cublas/lib",
    "Found 1 active drivers (CudaDriver)",
    "UserWarning: torch.solve is deprecated since version 1.9 in favor of torch.linalg.solve",
]


def test_a_line_with_a_signatures_words_is_not_claimed(tmp_path, capsys):
    def check(line):
        unclaimed(line, tmp_path, capsys)

    each_row([(str(line), line) for line in UNCLAIMED], check)


def test_the_old_gpu_warning_names_the_gpu_and_its_capability(tmp_path, capsys):
    """torch's old-GPU warning as _check_capability prints it (torch-2.7.1 wheel torch/cuda/__init__.py:262): one
    diagnosis, naming the GPU and its compute capability."""
    text = ("UserWarning:\n    Found GPU0 Tesla K80 which is of cuda capability 3.7.\n"
            "    PyTorch no longer supports this GPU because it is too old.\n"
            "    The minimum cuda capability supported by this library is 5.0.\n")
    out = diagnoses(text, "torch-arch-unsupported", ["Tesla K80", "sm_37"], tmp_path, capsys)
    assert out.count("torch-arch-unsupported") == 1, out


def test_a_numpy_2_build_under_numpy_1_names_numpy_2(tmp_path, capsys):
    """NumPy 1.x's import_array refusing a module built with NumPy 2 (its ABI version 0x2000000): numpy>=2.0."""
    diagnoses("RuntimeError: module compiled against ABI version 0x2000000 but this version of numpy is 0x1000009",
              "numpy-too-old", ["numpy>=2.0"], tmp_path, capsys)


def test_triton_without_a_c_compiler_says_so(tmp_path, capsys):
    """triton's launcher build with no C compiler (triton-3.1.0 wheel triton/runtime/build.py:32): the C compiler,
    not ninja."""
    text = ('  File "/usr/lib/python3/site-packages/triton/runtime/build.py", line 32, in _build\n'
            "    raise RuntimeError(\"Failed to find C compiler. Please specify via CC environment variable.\")\n"
            "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.")
    out = diagnoses(text, "build-tool-missing", ["C compiler", "CC"], tmp_path, capsys)
    assert "ninja" not in out, out


def test_the_harvester_reads_raises_warnings_asserts_and_message_constants():
    """The shapes torch's sources raise in (quoted from the torch-2.7.1 and 2.9.1 wheels and triton-3.1.0's): a message
    held in a constant and formatted, a warning built by %, an f-string, an assert's message."""
    source = '''
CUDA_MISMATCH_MESSAGE = """
The detected CUDA version ({0}) mismatches the version that was used to compile
PyTorch ({1}). Please make sure to use the same CUDA versions.
"""
def check(cuda_str_version, torch_cuda_version):
    raise RuntimeError(CUDA_MISMATCH_MESSAGE.format(cuda_str_version, torch.version.cuda))
def check_again():
    raise RuntimeError(f"{CUDA_MISMATCH_MESSAGE}")
def lazy():
    if not hasattr(torch._C, "_cuda_getDeviceCount"):
        raise AssertionError("Torch not compiled with CUDA enabled")
def capability(d, name, major, minor):
    old_gpu_warn = """
    Found GPU%d %s which is of cuda capability %d.%d.
    PyTorch no longer supports this GPU because it is too old.
    """
    warnings.warn(old_gpu_warn % (d, name, major, minor))
def arch(arch):
    raise ValueError(f"Unknown CUDA arch ({arch}) or GPU not supported")
def preload(lib_name):
    raise ValueError(f"{lib_name} not found in the system path {sys.path}")
def libcuda_dirs(dirs):
    msg = 'libcuda.so cannot found!\\n'
    assert any(os.path.exists(os.path.join(path, 'libcuda.so')) for path in dirs), msg
'''
    got = {(kind, text.strip()) for _, kind, text in _harvester().sites(source)}
    mismatch = next(t for k, t in got if k == "raise RuntimeError")
    assert mismatch.startswith("The detected CUDA version ({0}) mismatches")
    assert ("raise AssertionError", "Torch not compiled with CUDA enabled") in got
    assert any(k == "warn" and "PyTorch no longer supports this GPU because it is too old." in t for k, t in got)
    assert ("raise ValueError", "Unknown CUDA arch ({arch}) or GPU not supported") in got
    assert ("assert", "libcuda.so cannot found!") in got
    assert any(k == "constant CUDA_MISMATCH_MESSAGE" for k, _ in got)
    assert ("raise ValueError", "{lib_name} not found in the system path {sys.path}") in got  # opens with a field
    assert ("raise RuntimeError", "{CUDA_MISMATCH_MESSAGE}") not in got  # a bare field: listed where it is bound
