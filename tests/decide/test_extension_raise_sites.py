"""The torch ecosystem's compiled extensions' raise sites (issue 38's sweep by library): each packaging or
compatibility message that PyTorch Geometric's companions, DGL, CuPy, Numba, OpenMMLab, detectron2, pytorch3d,
AutoGPTQ / AutoAWQ, mamba-ssm / causal-conv1d, NATTEN and bitsandbytes print, as the library formats it
(tests/fixtures/raise_sites/extensions-signatures.toml, each with its file and line in the library's source), is named
by the signature it should get, with the package, versions and library the line gives; the lines that share a
signature's words but tell of no failure stay unclaimed."""

from __future__ import annotations



from tests.decide.explaining import each_row, message_id, table, diagnoses, explain, unclaimed

MESSAGES = table("extensions-signatures.toml")
LIBRARIES = {"torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib", "dgl", "cupy", "numba",
             "mmcv", "mmdet", "detectron2", "pytorch3d", "auto-gptq", "autoawq", "mamba-ssm", "causal-conv1d", "natten",
             "bitsandbytes", "spconv", "deepspeed"}



def test_the_table_covers_every_library_and_cites_each_message():
    assert LIBRARIES <= {m["library"] for m in MESSAGES}
    assert all(m["source"] and m["text"] for m in MESSAGES)
    assert all(m["expect"] or m.get("why") for m in MESSAGES)  # a notice says why it names no failure
    assert sum(bool(m["expect"]) for m in MESSAGES) >= 60


def test_each_message_is_named_with_its_package_and_versions(tmp_path, capsys):
    def check(m):
        out = diagnoses(m["text"], m["expect"], m.get("words", []), tmp_path, capsys)
        assert out.count("known failure signature") == 1 and out.count("\nline ") == 1, out  # one diagnosis, no second guess

    each_row([(message_id(m), m) for m in [m for m in MESSAGES if m["expect"]]], check)


def test_a_notice_is_not_claimed(tmp_path, capsys):
    def check(m):
        unclaimed(m["text"], tmp_path, capsys)

    each_row([(message_id(m), m) for m in [m for m in MESSAGES if not m["expect"]]], check)


# words the new rows read, in lines that tell of no failure (or of a failure that is not a packaging one)
UNCLAIMED = [
    "torch_sparse: PyTorch has CUDA version 12.1 and torch_sparse has CUDA version 12.1",
    "Detected that PyTorch and torch_scatter were compiled with the same CUDA version (12.1)",
    "Loaded module '_version_cuda' from /usr/lib/python3/site-packages/torch_scatter",
    "Found shared library 'libpyg' at /usr/lib/python3/site-packages/libpyg.so",
    "DGL requires a graph with self-loops for GATConv; call dgl.add_self_loop(g)",
    "Loaded the DGL C++ GraphBolt library libgraphbolt_pytorch_2.4.0.so",
    "Numba needs a type signature for this function; pass one to @jit",
    "numba.core.errors.TypingError: Failed in nopython mode pipeline (step: nopython frontend)",
    "CUDA driver library found: /usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "libNVVM found: /usr/local/cuda/nvvm/lib64/libnvvm.so",
    "mmcv._ext loaded with 142 ops",
    "detectron2 compiled successfully with CUDA 12.1",
    "pytorch3d compiled with GPU support",
    "CUDA extension installed: autogptq_cuda_64, autogptq_cuda_256",
    "Exllama kernel is installed, using exllama for inference",
    "Requested CUDA device: 0",
    "libnatten loaded; NATTEN built with the CUDA backend",
    "cupy-cuda12x 13.3.0 is installed",
    "torch_scatter was compiled with CUDA support (12.1)",
    "Not compiled with METIS? No: torch_sparse.partition available",
    "spconv compiled with cuda 12.0",
    "Could not find module 'models' in the registry; using the default backbone",
    "Device API cuda is enabled for dgl",
    "Fused kernels are available on this device (compute capability 90)",
]


def test_a_line_with_a_signatures_words_is_not_claimed(tmp_path, capsys):
    def check(line):
        unclaimed(line, tmp_path, capsys)

    each_row([(str(line), line) for line in UNCLAIMED], check)


def test_a_numba_numpy_ceiling_names_a_pip_specifier_pip_accepts(tmp_path, capsys):
    """Numba's ceiling "2.0 or less" is numpy<2.1 (PEP 440 allows a wildcard only with == and !=, so numpy<=2.0.* is
    no specifier pip accepts)."""
    out = diagnoses("ImportError: Numba needs NumPy 2.0 or less. Got NumPy 2.1.", "version-requirement-unmet",
                    ["numpy<2.1", "NumPy 2.1"], tmp_path, capsys)
    assert ".*" not in out, out


def test_cupy_duplicate_warning_names_both_distributions_from_its_list(tmp_path, capsys):
    """CuPy's warning lists the distributions three lines under its header (cupy/_environment.py:676-702): the
    diagnosis names those, not only the header's words."""
    text = ("  CuPy may not function correctly because multiple CuPy packages are installed\n"
            "  in your environment:\n\n    cupy-cuda11x, cupy-cuda12x\n\n"
            "  Follow these steps to resolve this issue:")
    out = diagnoses(text, "duplicate-package-distributions", ["pip uninstall cupy-cuda11x cupy-cuda12x"], tmp_path,
                    capsys)
    assert "line 4" in out, out


def test_torch_own_extension_is_not_an_extension_not_built(tmp_path, capsys):
    """torch's own _C missing is a broken torch (torch-install-broken), never a companion's missing build."""
    code, out = explain("ModuleNotFoundError: No module named 'torch._C'", tmp_path, capsys)
    assert "extension-not-built" not in out, out


def test_the_cuda_mismatch_names_the_wheel_page_of_torchs_cuda(tmp_path, capsys):
    """torch_scatter's check with the torch the log shows: the remedy names the wheel index page of that torch and its
    CUDA (torch-2.4.0+cu121), the build the extension needs."""
    text = ("torch 2.4.0+cu121\n"
            "RuntimeError: Detected that PyTorch and torch_scatter were compiled with different CUDA versions. PyTorch "
            "has CUDA version 12.1 and torch_scatter has CUDA version 11.8. Please reinstall the torch_scatter that "
            "matches your PyTorch install.")
    diagnoses(text, "extension-cuda-mismatch", ["torch-scatter", "torch-2.4.0+cu121", "CUDA 11.8"], tmp_path, capsys)
