"""One vocabulary of causes (issue 38): a message a library prints is read by one signature, the one whose cause states
the branch of the source that raises it.

Every line of every message of the raise-site tables (tests/fixtures/raise_sites/*.toml) is searched with the pattern of
every signature (glmcompat/matrix/data/*signatures*.toml). Where two ids' patterns both match a line, the pair must be a
deliberate refinement listed in :data:`REFINES` (a more specific id where the line shows more than the generic one
reads: the library a loader error names, the removed API an ImportError names), with the place that settles it and the
raise site it rests on; and explain must name one of them only for the message, the table's own where the table names
one of them. An overlap not listed is two ids for one cause: settle it at the raise site (the message goes to the id
whose cause states the branch that raises it), never by listing it here.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from tests.conftest import toml_file
from tests.decide.explaining import RAISE_SITES, each_row, explain

# the settled refinements: {the two ids} -> which one owns the line, and why (where it is settled; the raise site)
REFINES: dict[frozenset[str], str] = {
    frozenset({'undefined-symbol', 'bitsandbytes-cuda-setup'}):
        "undefined-symbol yields (glmcompat/model/signatures.py YIELDS): the line names bitsandbytes' own CPU library (libbitsandbytes_cpu.so lacking its GPU functions, bitsandbytes 0.3x)",
    frozenset({'undefined-symbol', 'cuda-toolkit-clash'}):
        'undefined-symbol yields (glmcompat/model/signatures.py YIELDS): the symbol or its version node is another NVIDIA library\'s (glibc elf/dl-lookup.c prints ", version <node>"), the [[nvidia_library]] rows name its owner',
    frozenset({'undefined-symbol', 'cudnn-sublibrary-missing'}):
        "undefined-symbol yields (glmcompat/model/signatures.py YIELDS): the symbol or node is cuDNN's own, its sub-libraries mixed",
    frozenset({'undefined-symbol', 'driver-too-old'}):
        "undefined-symbol yields (glmcompat/model/signatures.py YIELDS): a cu[A-Z] function is the driver API's (libcuda.so.1), the [[driver_api]] rows date it",
    frozenset({'undefined-symbol', 'extension-before-torch'}):
        "undefined-symbol yields (glmcompat/model/signatures.py YIELDS): a THP* symbol is torch's Python binding, exported once torch is imported",
    frozenset({'undefined-symbol', 'nccl-undefined-symbol'}):
        "undefined-symbol yields (glmcompat/model/signatures.py YIELDS): an nccl* symbol is NCCL's (libnccl.so.2)",
    frozenset({'undefined-symbol', 'vllm-undefined-symbol'}):
        "a vLLM module's own loader line (vllm/<module>.abi3.so): the wider reading wins (glmcompat/model/signatures.py _inside), and it is a case of undefined-symbol, its row's family (glmcompat/matrix/data/vllm-signatures.toml; tests/fixtures/raise_sites/vllmabi-signatures.toml)",
    frozenset({'undefined-symbol', 'nvjitlink-mismatch'}):
        "undefined-symbol yields (glmcompat/model/signatures.py YIELDS): an __nvJitLink* symbol is nvJitLink's",
    frozenset({'companion-api-removed', 'companion-too-old'}):
        "one ImportError's two directions, decided by the [[export]] rows (glmcompat/matrix/data/exports.toml: since/until against the installed release, glmcompat/decide/pythoncauses.py); a name no row holds is neither's",
    frozenset({'companion-api-removed', 'numpy-distutils-removed'}):
        "the line's module names the removal (numpy-distutils-removed's own row); companion-api-removed's builder finds no [[export]] row for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-api-removed', 'python-stdlib-removed'}):
        "the line's module names the removal (python-stdlib-removed's own row); companion-api-removed's builder finds no [[export]] row for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-api-removed', 'tgi-kernels-missing'}):
        "the line's module names the removal (tgi-kernels-missing's own row); companion-api-removed's builder finds no [[export]] row for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-api-removed', 'torch-six-removed'}):
        "the line's module names the removal (torch-six-removed's own row); companion-api-removed's builder finds no [[export]] row for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-api-removed', 'extension-not-built'}):
        "the line's module names the removal (extension-not-built's own row); companion-api-removed's builder finds no [[export]] row for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-too-old', 'distutils-version-missing'}):
        "the line's module or name is the removal distutils-version-missing reads (its row's raise site); companion-too-old's builder finds no companion release for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-too-old', 'numpy-distutils-removed'}):
        "the line's module or name is the removal numpy-distutils-removed reads (its row's raise site); companion-too-old's builder finds no companion release for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-too-old', 'numpy-too-new'}):
        "the line's module or name is the removal numpy-too-new reads (its row's raise site); companion-too-old's builder finds no companion release for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-too-old', 'python-stdlib-removed'}):
        "the line's module or name is the removal python-stdlib-removed reads (its row's raise site); companion-too-old's builder finds no companion release for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-too-old', 'scipy-misc-removed'}):
        "the line's module or name is the removal scipy-misc-removed reads (its row's raise site); companion-too-old's builder finds no companion release for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-too-old', 'tgi-kernels-missing'}):
        "the line's module or name is the removal tgi-kernels-missing reads (its row's raise site); companion-too-old's builder finds no companion release for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-too-old', 'torch-six-removed'}):
        "the line's module or name is the removal torch-six-removed reads (its row's raise site); companion-too-old's builder finds no companion release for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-too-old', 'extension-not-built'}):
        "the line's module or name is the removal extension-not-built reads (its row's raise site); companion-too-old's builder finds no companion release for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-too-old', 'build-backend-too-old'}):
        "the line's module or name is the removal build-backend-too-old reads (its row's raise site); companion-too-old's builder finds no companion release for it and the hit is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'companion-api-removed', 'numpy-too-new'}):
        "companion-api-removed yields to numpy-too-new on its line (glmcompat/decide/diagnose.py SUPERSEDED): the name imported from numpy is one a NumPy release removed from its namespace (glmcompat/matrix/data/numpy-api.toml, harvested from the real wheels), so the direction and the release are known; where it is not (no release read removed it, the installed numpy has it, it came back later) numpy-too-new drops the line (DROPPED np_import)",
    frozenset({'companion-too-old', 'torch-api-removed'}):
        "torch's removed torch.utils.ffi, named on the line (glmcompat/decide/diagnose.py SUPERSEDED)",
    frozenset({'build-header-missing', 'torch-thc-removed'}):
        "torch 1.11's removed THC headers, named on the line (glmcompat/decide/diagnose.py SUPERSEDED)",
    frozenset({'build-backend-too-old', 'python-stdlib-removed'}):
        "pkgutil.ImpImporter (Python 3.12, gone) is registered by setuptools' pkg_resources before 66.1: the build tooling's (glmcompat/decide/diagnose.py SUPERSEDED)",
    frozenset({'build-backend-too-old', 'package-not-installed'}):
        '"No module named \'distutils\'": Python 3.12 removed it (PEP 632); package-not-installed claims only a module of a distribution the matrix names (a tracked companion\'s, or a [[module]] row\'s imported in another package\'s frame) (glmcompat/decide/diagnose.py DROPPED)',
    frozenset({'package-not-installed', 'pkg-resources-removed'}):
        "pkg_resources, setuptools' module that setuptools 81 removed: its own row; package-not-installed claims only a module of a distribution the matrix names (a tracked companion's, or a [[module]] row's imported in another package's frame) (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'package-not-installed', 'python-stdlib-removed'}):
        "a standard-library module a Python release removed (imp, 3.12): its own row; package-not-installed claims only a module of a distribution the matrix names (a tracked companion's, or a [[module]] row's imported in another package's frame) (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'extension-not-built', 'package-not-installed'}):
        "a [[compiled]] package's own compiled module (glmcompat/matrix/data/extensions.toml): its extension was not built; the wider reading of the line wins (glmcompat/model/signatures.py _inside) or package-not-installed's is left out (glmcompat/decide/diagnose.py DROPPED)",
    frozenset({'library-needs-package', 'package-not-installed'}):
        "the library's own words name the package it needs and the feature (transformers' kernels hub loader); package-not-installed claims only a module of a distribution the matrix names (a tracked companion's, or a [[module]] row's imported in another package's frame) (glmcompat/decide/diagnose.py DROPPED; tests/fixtures/raise_sites/hf.toml)",
    frozenset({'lxc-cuda-init-hmm', 'driver-insufficient'}):
        '"cuInit failed: <the driver\'s error string>": the string\'s own id; lxc-cuda-init-hmm\'s generic cuInit reading is kept only where the log shows its scene, a Proxmox LXC container with nvidia_uvm\'s HMM (glmcompat/decide/cudacauses.py _hmm)',
    frozenset({'lxc-cuda-init-hmm', 'no-kernel-image'}):
        '"cuInit failed: <the driver\'s error string>": the string\'s own id; lxc-cuda-init-hmm\'s generic cuInit reading is kept only where the log shows its scene, a Proxmox LXC container with nvidia_uvm\'s HMM (glmcompat/decide/cudacauses.py _hmm)',
    frozenset({'lxc-cuda-init-hmm', 'cuda-system-not-ready'}):
        '"cuInit failed: <the driver\'s error string>": the string\'s own id; lxc-cuda-init-hmm\'s generic cuInit reading is kept only where the log shows its scene, a Proxmox LXC container with nvidia_uvm\'s HMM (glmcompat/decide/cudacauses.py _hmm)',
    frozenset({'lxc-cuda-init-hmm', 'driver-library-mismatch'}):
        '"cuInit failed: <the driver\'s error string>": the string\'s own id; lxc-cuda-init-hmm\'s generic cuInit reading is kept only where the log shows its scene, a Proxmox LXC container with nvidia_uvm\'s HMM (glmcompat/decide/cudacauses.py _hmm)',
    frozenset({'lxc-cuda-init-hmm', 'cuda-forward-compat-unsupported'}):
        '"cuInit failed: <the driver\'s error string>": the string\'s own id; lxc-cuda-init-hmm\'s generic cuInit reading is kept only where the log shows its scene, a Proxmox LXC container with nvidia_uvm\'s HMM (glmcompat/decide/cudacauses.py _hmm)',
    frozenset({'lxc-cuda-init-hmm', 'ptx-unsupported-toolchain'}):
        '"cuInit failed: <the driver\'s error string>": the string\'s own id; lxc-cuda-init-hmm\'s generic cuInit reading is kept only where the log shows its scene, a Proxmox LXC container with nvidia_uvm\'s HMM (glmcompat/decide/cudacauses.py _hmm)',
    frozenset({'lxc-cuda-init-hmm', 'ptx-jit-failed'}):
        '"cuInit failed: <the driver\'s error string>": the string\'s own id; lxc-cuda-init-hmm\'s generic cuInit reading is kept only where the log shows its scene, a Proxmox LXC container with nvidia_uvm\'s HMM (glmcompat/decide/cudacauses.py _hmm)',
    frozenset({'package-not-installed', 'version-requirement-unmet'}):
        'sglang\'s assert_pkg_version "<pkg> with minimum required version V is not installed": decided by the [[rename]] rows (glmcompat/matrix/data/extensions.toml: a distribution looked up by its old name is version-requirement-unmet, a companion absent package-not-installed)',
    frozenset({'library-needs-newer-package', 'version-requirement-unmet'}):
        'a library\'s own "<lib> requires <pkg> >= V" names the library that needs the newer package: the wider reading wins (glmcompat/model/signatures.py _inside)',
    frozenset({'cuda-lib-missing', 'cudnn-sublibrary-missing'}):
        'cuDNN\'s "Could not load library <sub-library>. Error: <the loader\'s error>": the sub-library did not load, the quoted error saying why (a library it needs: libnvrtc.so, libcublasLt.so.11); cuda-lib-missing\'s reading of that error alone is left out (glmcompat/decide/diagnose.py SUPERSEDED; glmcompat/decide/cudacauses.py names the library it needs)',
    frozenset({'pip-resolution-impossible', 'python-version-unsupported'}):
        "poetry's derivation whose words name a Python cause (\"X (V) requires Python C\", \"every version of X requires Python C\", \"... which requires Python C\"): the project's Python range against the dependency's, python-version-unsupported's; the generic conflict reading of the same line is left out (glmcompat/decide/reportcauses.py poetry_derivation, poetry_readings; tests/fixtures/raise_sites/fixr-signatures.toml)",
    frozenset({'cuda-lib-missing', 'nvrtc-missing'}):
        "the loader's line for NVRTC's own soname (libnvrtc.so.12: cannot open shared object file; ldd's => not found): NVRTC missing, nvrtc-missing's, a case of cuda-lib-missing (its row's family); cuda-lib-missing's reading of the same line is left out (glmcompat/decide/diagnose.py SUPERSEDED; tests/fixtures/raise_sites/fixq-signatures.toml)",
    frozenset({'cudnn-sublibrary-missing', 'nvrtc-missing'}):
        'cuDNN\'s "Could not load library <sub-library>. Error: libnvrtc.so: ...": the sub-library did not load, the quoted error saying why; nvrtc-missing\'s reading of that error alone is left out (glmcompat/decide/diagnose.py SUPERSEDED; tests/fixtures/raise_sites/fixq-signatures.toml)',
    frozenset({'cuda-toolkit-clash', 'cudnn-sublibrary-missing'}):
        "the symbol-version node's owner decides (glmcompat/decide/cudacauses.py _clash, the [[nvidia_library]] rows): another NVIDIA library's node is cuda-toolkit-clash's, cuDNN's own node where no other library needs it cudnn-sublibrary-missing's",
    frozenset({'cudart-missing', 'vllm-extension-import-failed'}):
        'vLLM\'s "Failed to import from vllm._C: ImportError(\'libcudart.so.N: ...\')": the quoted error names the CUDA runtime missing (glmcompat/decide/diagnose.py SUPERSEDED)',
    frozenset({'gpu-arch-not-in-build', 'no-kernel-image'}):
        "NCCL's \"Cuda failure 'no kernel image is available for execution on the device'\" where the log shows the NCCL build's target or the GPU: the NCCL build lacks the GPU's architecture, and no-kernel-image's reading of that line is left out (glmcompat/decide/diagnose.py SUPERSEDED; glmcompat/decide/extcauses.py _nccl_arch; tests/fixtures/raise_sites/fixf-signatures.toml); with neither shown no-kernel-image keeps it",
    frozenset({'libstdcxx-too-old', 'undefined-symbol'}):
        "DJL's java.lang.UnsatisfiedLinkError of its JNI library libdjl_torch (deepjavalibrary/djl tag v0.20.0 LibUtils.java:357-367, System.load) quoting the loader's \"version `GLIBCXX_...' not found\": libstdcxx-too-old's; undefined-symbol's DJL reading drops the line (glmcompat/decide/diagnose.py _undefined, DJL_OTHER; DROPPED djl_jni)",
    frozenset({'system-lib-missing', 'undefined-symbol'}):
        "DJL's java.lang.UnsatisfiedLinkError of its JNI library libdjl_torch (deepjavalibrary/djl tag v0.20.0 LibUtils.java:357-367, System.load) quotes the loader's error after the library's path: undefined-symbol reads the JNI library built for another libtorch only where that error is no missing file and no symbol version of another library (glmcompat/decide/diagnose.py _undefined, DJL_OTHER; DROPPED djl_jni), else the loader's own words are system-lib-missing's",
    frozenset({'cudart-missing', 'extension-cuda-mismatch'}):
        "the loader's libcudart.so.N of another package's module where the log's torch is built for another CUDA runtime (its +cuXYZ label, collect_env): an extension built for another CUDA than torch, extension-cuda-mismatch's (glmcompat/decide/extcauses.py _cudart_mismatch; diagnose.py SUPERSEDED); the runtime missing with no such torch in the log, or torch's own, cudart-missing's (diagnose.py DROPPED x_cudart)",
    frozenset({'extension-cuda-mismatch', 'vllm-extension-import-failed'}):
        'vLLM\'s "Failed to import from vllm._C: ImportError(\'libcudart.so.N: ...\')" beside a torch built for another CUDA runtime: vLLM\'s extension built for another CUDA than torch (glmcompat/decide/diagnose.py SUPERSEDED)',
    frozenset({'cuda-forward-compat-unsupported', 'gpu-arch-not-in-build'}):
        'ggml_cuda_init\'s "failed to initialize CUDA: <cudaGetErrorString>" is llama.cpp\'s own line: the wider reading wins (glmcompat/model/signatures.py _inside; tests/fixtures/raise_sites/system3-signatures.toml)',
    frozenset({'deepspeed-ops-mismatch', 'gpu-capability-too-old'}):
        'DeepSpeed\'s "Unable to JIT load the <op> op ... NVIDIA Inference is only supported on ..." names the GPU\'s capability as the reason: the wider reading wins (glmcompat/model/signatures.py _inside; tests/fixtures/raise_sites/gpucap-signatures.toml)',
    frozenset({'driver-library-mismatch', 'driver-too-old'}):
        "NGC's compat banner's status line is driver-too-old's detail, never a cause alone (glmcompat/decide/diagnose.py DROPPED ngc_status; tests/fixtures/raise_sites/ngc-signatures.toml)",
    frozenset({'driver-not-found', 'torch-dll-load-failed'}):
        "nvcuda.dll is the NVIDIA driver's own library: the wider reading wins (glmcompat/model/signatures.py _inside; tests/fixtures/raise_sites/runtime-family.toml)",
    frozenset({'nvcc-unsupported-arch', 'ptxas-too-old'}):
        'ptxas\'s "Value \'sm_XX\' is not defined for option \'gpu-name\'" inside XLA\'s "ptxas exited with non-zero error code": the wider reading wins (glmcompat/model/signatures.py _inside)',
    frozenset({'nvcc-unsupported-arch', 'triton-ptxas-arch'}):
        "the same ptxas line in triton's compile: triton-ptxas-arch's wider reading wins (glmcompat/model/signatures.py _inside; tests/fixtures/raise_sites/torch-family.toml)",
    frozenset({'ptxas-too-old', 'triton-ptxas-arch'}):
        'XLA\'s "ptxas exited with non-zero error code" names its own ptxas: the wider reading wins (glmcompat/model/signatures.py _inside)',
    frozenset({'libpython-missing', 'system-lib-missing'}):
        'dyld\'s "Library not loaded: <libpython>": CPython\'s library names its own signature (glmcompat/decide/diagnose.py DYLD_MISSING)',
    frozenset({'system-lib-missing', 'torch-lib-missing'}):
        'dyld\'s "Library not loaded: @rpath/libc10.dylib": torch\'s library names its own signature (glmcompat/decide/diagnose.py DYLD_MISSING)',
    frozenset({'conda-cuda-too-old', 'conda-unsatisfiable'}):
        "conda's unsatisfiable report naming the machine's __cuda (glmcompat/decide/diagnose.py VIRTUAL_PACKAGE)",
    frozenset({'build-isolation-no-torch', 'package-not-installed'}):
        "a compiled package's own no-torch words ending in Python's \"No module named 'torch'\" (auto-gptq 0.5-0.7.1, auto-round): the failed build names torch's absence, not a missing package of the environment (glmcompat/decide/diagnose.py drops package-not-installed of torch beside build-isolation-no-torch; tests/fixtures/raise_sites/iso-signatures.toml)",
    frozenset({'numpy-abi', 'package-not-installed'}):
        "torch's warning \"Failed to initialize NumPy: No module named 'numpy'\" (tensor_numpy.cpp is_numpy_available): numpy is absent, so no NumPy ABI is read; numpy-abi's reading of torch's words drops itself (glmcompat/decide/diagnose.py _numpy, DROPPED torch_np_absent; tests/fixtures/raise_sites/miss3a-signatures.toml)",
    frozenset({'build-isolation-no-torch', 'source-build-failed'}):
        'the failed build step of a log whose torch is missing from the isolated build environment (glmcompat/decide/pythoncauses.py isolated_torch, tests/fixtures/raise_sites/install-family.toml)',
    frozenset({'cuda-lib-missing', 'torch-dll-load-failed'}):
        "torch-dll-load-failed yields (glmcompat/decide/diagnose.py SUPERSEDED, fix-y): the DLL is DGL's own dgl.dll, whose CUDA build links the CUDA runtime, cuBLAS, cuSPARSE and cuRAND DLLs (dmlc/dgl cmake/modules/CUDA.cmake dgl_config_cuda)",
    frozenset({'package-not-installed', 'torch-six-removed'}):
        "package-not-installed's dotted reading (ns_module, fix-z2) names a missing distribution only where a [[module]] row lists the whole dotted module as a namespace package's part that another distribution than its top-level's ships (physicsnemo.sym, cuda.bindings: CPython's _find_and_load_unlocked names the first module it does not find); for any other dotted module its builder returns None and the hit is left out (glmcompat/decide/diagnose.py _part_missing, DROPPED ns_module; tests/fixtures/raise_sites/fixz-signatures.toml)",
    frozenset({'package-not-installed', 'companion-too-old'}):
        "package-not-installed's dotted reading (ns_module, fix-z2) names a missing distribution only where a [[module]] row lists the whole dotted module as a namespace package's part that another distribution than its top-level's ships (physicsnemo.sym, cuda.bindings: CPython's _find_and_load_unlocked names the first module it does not find); for any other dotted module its builder returns None and the hit is left out (glmcompat/decide/diagnose.py _part_missing, DROPPED ns_module; tests/fixtures/raise_sites/fixz-signatures.toml)",
    frozenset({'package-not-installed', 'companion-api-removed'}):
        "package-not-installed's dotted reading (ns_module, fix-z2) names a missing distribution only where a [[module]] row lists the whole dotted module as a namespace package's part that another distribution than its top-level's ships (physicsnemo.sym, cuda.bindings: CPython's _find_and_load_unlocked names the first module it does not find); for any other dotted module its builder returns None and the hit is left out (glmcompat/decide/diagnose.py _part_missing, DROPPED ns_module; tests/fixtures/raise_sites/fixz-signatures.toml)",
    frozenset({'package-not-installed', 'torch-api-removed'}):
        "package-not-installed's dotted reading (ns_module, fix-z2) names a missing distribution only where a [[module]] row lists the whole dotted module as a namespace package's part that another distribution than its top-level's ships (physicsnemo.sym, cuda.bindings: CPython's _find_and_load_unlocked names the first module it does not find); for any other dotted module its builder returns None and the hit is left out (glmcompat/decide/diagnose.py _part_missing, DROPPED ns_module; tests/fixtures/raise_sites/fixz-signatures.toml)",
    frozenset({'package-not-installed', 'numpy-distutils-removed'}):
        "package-not-installed's dotted reading (ns_module, fix-z2) names a missing distribution only where a [[module]] row lists the whole dotted module as a namespace package's part that another distribution than its top-level's ships (physicsnemo.sym, cuda.bindings: CPython's _find_and_load_unlocked names the first module it does not find); for any other dotted module its builder returns None and the hit is left out (glmcompat/decide/diagnose.py _part_missing, DROPPED ns_module; tests/fixtures/raise_sites/fixz-signatures.toml)",
    frozenset({'package-not-installed', 'tgi-kernels-missing'}):
        "package-not-installed's dotted reading (ns_module, fix-z2) names a missing distribution only where a [[module]] row lists the whole dotted module as a namespace package's part that another distribution than its top-level's ships (physicsnemo.sym, cuda.bindings: CPython's _find_and_load_unlocked names the first module it does not find); for any other dotted module its builder returns None and the hit is left out (glmcompat/decide/diagnose.py _part_missing, DROPPED ns_module; tests/fixtures/raise_sites/fixz-signatures.toml)",
}

NAMED = re.compile(r"^line \d+: ([a-z0-9-]+)", re.MULTILINE)


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    return [(s.id, re.compile(s.pattern)) for s in load_facts().rows("signature")]


def _messages() -> list[tuple[str, dict[str, object]]]:
    return [(f.name, m) for f in sorted(RAISE_SITES.glob("*.toml"))
            for m in toml_file(f).get("message", [])]


@functools.cache
def _overlaps() -> list[tuple[str, dict[str, object], list[frozenset[str]]]]:
    """Each table message with a line that two ids or more read: (its table, the message, the ids of each such line).
    Computed once, when a test first asks (every line searched with every signature: seconds, which each xdist worker
    paid at collection while it was a parametrization's table); a line that recurs in the tables is searched once."""
    pats, out = _patterns(), []
    read: dict[str, frozenset[str]] = {}  # a line -> the ids whose patterns match it
    for name, m in _messages():
        lines = []
        for line in str(m["text"]).splitlines():
            if line not in read:
                read[line] = frozenset(sid for sid, p in pats if p.search(line))
            lines.append(read[line])
        if over := [ids for ids in lines if len(ids) > 1]:
            out.append((name, m, over))
    return out


def _pairs(ids: frozenset[str]) -> set[frozenset[str]]:
    return {frozenset({a, b}) for a in ids for b in ids if a < b}


def test_every_overlap_is_a_listed_refinement() -> None:
    seen: dict[frozenset[str], str] = {}
    for name, m, over in _overlaps():
        for ids in over:
            for pair in _pairs(ids):
                seen.setdefault(pair, f"{name}: {str(m['text'])[:160]!r}")
    unlisted = {" / ".join(sorted(p)): where for p, where in seen.items() if p not in REFINES}
    assert not unlisted, unlisted


def test_every_listed_refinement_is_met_in_a_table() -> None:
    met = {p for _, _, over in _overlaps() for ids in over for p in _pairs(ids)}
    assert not [sorted(p) for p in REFINES if p not in met]
    assert all("tests/" in why or "glmcompat/" in why for why in REFINES.values())  # each names where it is settled


def test_one_id_names_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """explain names one id of each overlapping line's ids only, the table's own where it is one of them: every
    overlapping message checked, each failing one named (its table and the head of its text)."""

    def check(case: tuple[str, dict[str, object], list[frozenset[str]]]) -> None:
        _, m, over = case
        _, out = explain(str(m["text"]), tmp_path, capsys)
        named = set(NAMED.findall(out))
        for ids in over:
            both = named & ids
            assert len(both) <= 1, (sorted(both), out)
            if m["expect"] in ids:
                assert both == {m["expect"]}, (m["expect"], sorted(both), out)

    each_row(((f"{n}:{str(m['text'])[:50]}", (n, m, over)) for n, m, over in _overlaps()), check)


def test_the_tables_are_read() -> None:
    assert len(_messages()) > 1000 and len(_overlaps()) > 10
    assert Path(RAISE_SITES).is_dir()
