"""``glmcompat verify`` on vLLM: its compiled modules, their operators, their GPU code, one custom op.

vLLM wheels are far too large to install here, so the tests use stand-ins with vLLM's layout:

* offline (no torch, no GPU): a fake torch (``torch/lib/libc10.so`` compiled by gcc, linking a stub
  ``libcudart.so.13``) and a fake ``vllm`` whose ``_C.abi3.so`` / ``_moe_C.abi3.so`` are real Python
  extension modules compiled by gcc, importing either a symbol the fake torch exports or the
  torch-2.9-style one it does not, or linking a ``libcudart.so.12`` that is not there. The real dynamic
  loader imports them, so the dynamic verdicts are real and the static ones must agree;
* offline, the GPU code: ``tests/fixtures/vllm/built/{sm90a,sm120a}`` hold the torch extensions that
  ``scripts/build_vllm_fixture.py`` built (against torch 2.11.0+cu130, nvcc 13.0); their fatbins are
  judged against ``--target``;
* on a GPU (``gpu`` marker, skipped without torch and a GPU): the built fixture's variants end to
  end: ``consistent`` passes, ``inconsistent`` (sm_120a code only) fails at launch with "no kernel image
  is available", ``abi-broken`` and ``cudart12`` fail to import; static and dynamic agree in each.
  ``GLMCOMPAT_VLLM_FIXTURE=DIR`` names a built fixture (else it is built here, with nvcc).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from glmcompat.decide.diagnose import diagnose
from glmcompat.decide.logenv import Env
from glmcompat.matrix.load import load_facts
from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.model.signatures import match_signatures
from glmcompat.ops.verify.core import run
from glmcompat.ops.verify.plan import Options
from glmcompat.ops.verify.judge import agreement_of, judge_gpu_code, static_load_verdict
from glmcompat.ops.verify.kernels import VLLM_CORE, is_core, vllm_modules
from tests.ops.verify.gcconce import gcc
from tests.ops.verify.test_records import undeclared

ROOT = Path(__file__).resolve().parents[3]
BUILT = Path(__file__).resolve().parents[2] / "fixtures" / "vllm" / "built"

NEW_LOGGER = "_ZN3c1013MessageLoggerC1EPKciib"  # what the fake torch exports (torch 2.10-style)
OLD_LOGGER = "_ZN3c1013MessageLoggerC1EPKcii"  # what an extension built for torch 2.9 imports
CHECK_FAIL = "_ZN3c106detail14torchCheckFailEPKcS2_jS2_"
VERSION = "0.0.0+fixture"

_PY_INCLUDE = sysconfig.get_paths().get("include") or ""
needs_cc = pytest.mark.skipif(shutil.which("gcc") is None or not os.path.isfile(os.path.join(_PY_INCLUDE, "Python.h")),
                              reason="gcc and Python.h are needed to build the extension-module fixtures")


def probe(report: dict[str, Any], pid: str) -> dict[str, Any]:
    return next(p for p in report["probes"] if p["id"] == pid)


def agreement(report: dict[str, Any], package: str, aspect: str) -> dict[str, Any]:
    return next(a for a in report["agreement"] if a["package"] == package and a["aspect"] == aspect)


# -- fakes built with gcc ---------------------------------------------------------------------------


def _cc(src: str, out: Path, *args: str) -> None:
    gcc(src, out, out.name.split(".")[0] + "_src.c", *args)  # built once per distinct build (tests/ops/verify/gcconce.py)


def _dist(site: Path, name: str, version: str, files: list[str], requires: tuple[str, ...] = ()) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *[f"Requires-Dist: {r}" for r in requires]]
    (info / "METADATA").write_text("\n".join(meta) + "\n")
    (info / "RECORD").write_text("\n".join([f"{f},," for f in files] + [f"{info.name}/METADATA,,",
                                                                      f"{info.name}/RECORD,,"]) + "\n")


def make_torch(site: Path) -> None:
    """torch 2.10.0 whose libc10.so exports the new MessageLogger and links libcudart.so.13 (shipped)."""
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    _cc("void glmcompat_cudart13(void) {}\n", lib / "libcudart.so.13", "-Wl,-soname,libcudart.so.13")
    _cc(textwrap.dedent(f'''
        void logger(void) __asm__("{NEW_LOGGER}");
        void logger(void) {{}}
        void check_fail(void) __asm__("{CHECK_FAIL}");
        void check_fail(void) {{}}
    '''), lib / "libc10.so", "-Wl,-soname,libc10.so", "-Wl,--no-as-needed", str(lib / "libcudart.so.13"),
        "-Wl,-rpath,$ORIGIN")
    (site / "torch" / "__init__.py").write_text(textwrap.dedent('''
        import ctypes, os
        __version__ = "2.10.0"
        ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libc10.so"), mode=ctypes.RTLD_GLOBAL)
    '''))
    _dist(site, "torch", "2.10.0", ["torch/__init__.py", "torch/lib/libc10.so", "torch/lib/libcudart.so.13"])


def make_module(pkg: Path, name: str, symbol: str = NEW_LOGGER, cudart12: Path | None = None) -> str:
    """``vllm/<name>.abi3.so``: a real Python extension module that imports torch symbols."""
    base = name.rsplit("/", 1)[-1]
    out = pkg / f"{name}.abi3.so"
    out.parent.mkdir(parents=True, exist_ok=True)
    depth = name.count("/") + 1
    extra = ["-Wl,--no-as-needed", str(cudart12)] if cudart12 else []  # kept although no symbol of it is used
    _cc(textwrap.dedent(f'''
        #include <Python.h>
        extern void need_logger(void) __asm__("{symbol}");
        extern void need_check(void) __asm__("{CHECK_FAIL}");
        void glmcompat_fixture_uses_torch(void) {{ need_logger(); need_check(); }}
        static struct PyModuleDef def = {{PyModuleDef_HEAD_INIT, "{base}", NULL, 0, NULL}};
        PyMODINIT_FUNC PyInit_{base}(void) {{ return PyModule_Create(&def); }}
    '''), out, f"-I{_PY_INCLUDE}", "-L", str(pkg.parent / "torch" / "lib"), "-lc10", *extra,
        f"-Wl,-rpath,$ORIGIN/{'../' * depth}torch/lib")
    return f"vllm/{name}.abi3.so"


def make_vllm(site: Path, *, c_symbol: str = NEW_LOGGER, cudart12: bool = False, core: bool = True,
              addon_symbol: str | None = None) -> None:
    pkg = site / "vllm"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f'import torch  # noqa: F401\n__version__ = "{VERSION}"\n')
    files = ["vllm/__init__.py"]
    stub = None
    if cudart12:  # links a CUDA 12 runtime that this environment does not have
        stub = site.parent / "stub" / "libcudart.so.12"
        stub.parent.mkdir(exist_ok=True)
        _cc("void glmcompat_cudart12(void) {}\n", stub, "-Wl,-soname,libcudart.so.12")
    if core:
        files.append(make_module(pkg, "_C", c_symbol, stub))
        files.append(make_module(pkg, "_moe_C"))
    if addon_symbol:  # an add-on module, as vLLM's FlashMLA
        files.append(make_module(pkg, "_flashmla_C", addon_symbol))
    _dist(site, "vllm", VERSION, files, ("torch==2.10.0",))


def site_with(tmp_path: Path, **kw: Any) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    make_torch(site)
    make_vllm(site, **kw)
    return site


# -- offline, through the real loader ----------------------------------------------------------------


@needs_cc
def test_consistent_vllm_loads_and_agrees(tmp_path: Path) -> None:
    r = run(Options(paths=[str(site_with(tmp_path))], no_gpu=True, timeout=60)).to_json()
    assert probe(r, "import:vllm")["status"] == "passed"
    load = probe(r, "load:vllm")
    assert load["status"] == "passed", load
    assert [(m["module"], m["core"], m["loaded"]) for m in load["data"]["modules"]] == [
        ("vllm._C", True, True), ("vllm._moe_C", True, True)]
    assert probe(r, "abi:vllm")["status"] == "passed"
    # the fake torch has no operator registry; without a GPU the smoke tests are skipped, never passed
    assert probe(r, "ops:vllm")["status"] == "skipped"
    assert probe(r, "smoke:vllm-rms_norm")["status"] == "skipped"
    a = agreement(r, "vllm", "load")
    assert (a["static"], a["dynamic"], a["agree"]) == ("compatible", "loads", True)
    assert a["probes"] == ["abi:vllm", "import:vllm", "load:vllm"]
    assert r["ok"] is True, [p for p in r["probes"] if p["status"] == "failed"]
    assert undeclared(r) == []


@needs_cc
def test_vllm_built_for_another_torch(tmp_path: Path) -> None:
    """vllm/_C.abi3.so imports a symbol the installed torch lacks: static and dynamic both say so."""
    r = run(Options(paths=[str(site_with(tmp_path, c_symbol=OLD_LOGGER))], no_gpu=True, timeout=60)).to_json()
    abi = probe(r, "abi:vllm")
    assert abi["status"] == "failed" and "vllm/_C.abi3.so: undefined symbol: " + OLD_LOGGER in abi["error"]
    assert undeclared(r) == []  # the abi data of a failed comparison (missing, missing_demangled) is declared
    load = probe(r, "load:vllm")
    assert load["status"] == "failed"
    assert f"vllm/_C.abi3.so: undefined symbol: {OLD_LOGGER}" in load["error"]
    assert load["summary"].startswith("vllm._C does not load")
    # the most specific signature wins the line: vLLM's, not the generic undefined-symbol one
    assert [e["id"] for e in load["explained"]] == ["vllm-undefined-symbol"]
    a = agreement(r, "vllm", "load")
    assert (a["static"], a["dynamic"], a["agree"]) == ("incompatible", "fails to load", True)
    assert a["reasons"] == ["1 torch symbol(s) missing"]
    assert not any(f["rule"] == "static-dynamic" for f in r["findings"])
    assert r["ok"] is False


@needs_cc
def test_cuda_runtime_mismatch_is_part_of_the_static_verdict(tmp_path: Path) -> None:
    """Every torch symbol resolves, but _C links libcudart.so.12 next to a torch that links .so.13.

    The case an H200 run found (torchvision 0.25.0 / torchaudio 2.10.0 next to torch 2.11.0+cu130):
    the symbol check alone said "compatible" while the import failed, and verify reported a
    disagreement although its own CUDA-runtime finding had predicted the failure.
    """
    r = run(Options(paths=[str(site_with(tmp_path, cudart12=True))], no_gpu=True, timeout=60)).to_json()
    abi = probe(r, "abi:vllm")
    assert abi["data"]["files"][0]["missing"] == []
    assert abi["status"] == "failed" and "libcudart.so.12" in abi["error"] and "libcudart.so.13" in abi["error"]
    load = probe(r, "load:vllm")
    assert load["status"] == "failed" and "libcudart.so.12: cannot open shared object file" in load["error"]
    assert "cudart-missing" in [e["id"] for e in load["explained"]]
    a = agreement(r, "vllm", "load")
    assert (a["static"], a["dynamic"], a["agree"]) == ("incompatible", "fails to load", True)
    assert a["reasons"] == ["links libcudart.so.12, torch links libcudart.so.13"]
    assert not any(f["rule"] == "static-dynamic" for f in r["findings"])
    cuda = next(f for f in r["findings"] if f["rule"] == "cuda")
    assert cuda["evidence"][0]["source"] == "installed files: vllm/_C.abi3.so"


@pytest.mark.slow
@needs_cc
def test_broken_addon_is_a_warning(tmp_path: Path) -> None:
    """An add-on module (FlashMLA) that does not load: vLLM runs without it; a warning, not a failure."""
    r = run(Options(paths=[str(site_with(tmp_path, addon_symbol=OLD_LOGGER))], no_gpu=True, timeout=60)).to_json()
    load = probe(r, "load:vllm")
    assert load["status"] == "warning", load
    assert [(m["module"], m["core"], m["loaded"]) for m in load["data"]["modules"]] == [
        ("vllm._C", True, True), ("vllm._moe_C", True, True), ("vllm._flashmla_C", False, False)]
    assert load["warnings"][0].startswith("vllm._flashmla_C (optional) did not load: ImportError: ")
    assert "vllm-undefined-symbol" in [e["id"] for e in load["explained"]]
    a = agreement(r, "vllm", "load")
    assert (a["static"], a["dynamic"], a["agree"]) == ("incompatible", "fails to load", True)
    assert not any(p["status"] == "failed" for p in r["probes"] if p["id"] in ("import:vllm", "load:vllm"))


@needs_cc
def test_vllm_without_its_core_modules(tmp_path: Path) -> None:
    r = run(Options(paths=[str(site_with(tmp_path, core=False, addon_symbol=NEW_LOGGER))], no_gpu=True, timeout=60)).to_json()
    load = probe(r, "load:vllm")
    assert load["status"] == "failed" and "none of its core compiled modules" in load["error"]
    assert r["ok"] is False


def test_vllm_not_installed_is_skipped(tmp_path: Path) -> None:
    site = tmp_path / "empty"
    site.mkdir()
    r = run(Options(paths=[str(site)], no_gpu=True, timeout=60)).to_json()
    for pid in ("import:vllm", "load:vllm", "ops:vllm", "smoke:vllm-rms_norm", "smoke:vllm-silu_and_mul"):
        p = probe(r, pid)
        assert p["status"] == "skipped" and "not installed" in p["summary"], p


# -- offline, pure ------------------------------------------------------------------------------------


def test_module_discovery_and_core(tmp_path: Path) -> None:
    root = tmp_path / "vllm"
    (root / "vllm_flash_attn").mkdir(parents=True)
    (root / "third_party" / "deep_gemm").mkdir(parents=True)
    for f in ("_C_stable_libtorch.abi3.so", "_moe_C_stable_libtorch.abi3.so", "_flashmla_C.abi3.so",
              "vllm_flash_attn/_vllm_fa2_C.abi3.so", "third_party/deep_gemm/_C.cpython-312-x86_64-linux-gnu.so"):
        (root / f).write_bytes(b"")
    mods = vllm_modules(str(root))
    assert [(m, rel) for m, rel, _ in mods] == [
        ("vllm._C_stable_libtorch", "vllm/_C_stable_libtorch.abi3.so"),
        ("vllm._flashmla_C", "vllm/_flashmla_C.abi3.so"),
        ("vllm._moe_C_stable_libtorch", "vllm/_moe_C_stable_libtorch.abi3.so"),
        ("vllm.vllm_flash_attn._vllm_fa2_C", "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so")]
    pats = load_facts().primary_modules("vllm")
    assert tuple(pats) == VLLM_CORE  # the matrix row and the probe's fallback say the same
    assert [rel for _, rel, _ in mods if is_core(rel, pats)] == [
        "vllm/_C_stable_libtorch.abi3.so", "vllm/_moe_C_stable_libtorch.abi3.so"]
    assert is_core("vllm/_C.abi3.so", pats) and not is_core("vllm/_qutlass_C.abi3.so", pats)


def _gc(files: list[tuple[str, list[str]]]) -> ProbeDoc:
    return ProbeDoc(id="gpu-code:vllm", status="pending", summary="",
                    data={"version": "0.16.0", "files": [{"file": f, "sass": s, "ptx": [], "variant": None}
                                                             for f, s in files]})


def test_gpu_code_core_decides_addons_warn() -> None:
    pats = load_facts().primary_modules("vllm")
    # vllm 0.16.0's layout: FA3 is Hopper-only; on sm_120 vLLM runs without it
    layout = [("vllm/_C.abi3.so", ["sm_80", "sm_90", "sm_120"]), ("vllm/_moe_C.abi3.so", ["sm_80", "sm_90", "sm_120"]),
              ("vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so", ["sm_90a"])]
    p, findings = judge_gpu_code(_gc(layout), (12, 0), pats)
    assert p.status == "warning" and "_vllm_fa3_C" in (p.error or "")
    assert [f.severity for f in findings] == ["warning"]
    p, findings = judge_gpu_code(_gc(layout), (9, 0), pats)
    assert p.status == "passed" and not findings
    # the core module without code for the device fails, whatever the add-ons carry
    p, findings = judge_gpu_code(_gc([("vllm/_C.abi3.so", ["sm_120a"]), ("vllm/_moe_C.abi3.so", ["sm_90a"])]), (9, 0),
                                  pats)
    assert p.status == "failed" and p.summary == "vllm/_C.abi3.so carries no GPU code that runs on sm_90"
    assert [(f.severity, f.evidence[0][0]) for f in findings] == [("error", "arch-probe")]
    # without primary patterns every file decides (the old behaviour)
    given = _gc(layout)
    p, findings = judge_gpu_code(given, (12, 0))
    assert p.status == "failed"
    assert given == _gc(layout)  # the record given is left as it is: the verdict is a new record


def test_static_load_verdict() -> None:
    ok = _rec("abi:x", "passed", data={"torch_cudart": ["libcudart.so.13"],
                                      "files": [{"missing": [], "cudart": ["libcudart.so.13"]}]})
    assert static_load_verdict(ok) == (True, [])
    both = _rec("abi:x", "failed", data={"torch_cudart": ["libcudart.so.13"],
                                        "files": [{"missing": ["a", "b"], "cudart": ["libcudart.so.12"]},
                                                  {"missing": ["a"], "cudart": []}]})
    assert static_load_verdict(both) == (False, ["2 torch symbol(s) missing",
                                                 "links libcudart.so.12, torch links libcudart.so.13"])
    # a torch whose libraries link no libcudart (a CPU build, or a fake): no runtime verdict
    cpu = _rec("abi:x", "passed", data={"torch_cudart": [], "files": [{"missing": [], "cudart": ["libcudart.so.12"]}]})
    assert static_load_verdict(cpu) == (True, [])


def _rec(pid: str, status: str, **kw: Any) -> ProbeDoc:
    return ProbeDoc(id=pid, status=status, summary=kw.pop("summary", ""), **kw)


def test_agreement_gpu_code_aspect() -> None:
    abi = _rec("abi:vllm", "passed", data={"torch_cudart": [], "files": [{"missing": [], "cudart": []}]})
    dyn = [_rec("import:vllm", "passed"), _rec("load:vllm", "passed"), _rec("ops:vllm", "passed")]
    # sm_120a-only code on sm_90: the static verdict predicts the launch failure
    gc = _rec("gpu-code:vllm", "failed", summary="vllm/_C.abi3.so carries no GPU code that runs on sm_90")
    smoke = [_rec("smoke:vllm-rms_norm", "failed"), _rec("smoke:vllm-silu_and_mul", "failed")]
    probes = [abi, gc, *dyn, *smoke]
    got = agreement_of(probes, {p.id: p for p in probes})
    assert [(a.aspect, a.static, a.dynamic, a.agree) for a in got] == [
        ("load", "compatible", "loads", True), ("gpu-code", "incompatible", "fails to run", True)]
    assert got[1].probes == ("gpu-code:vllm", "smoke:vllm-rms_norm", "smoke:vllm-silu_and_mul")
    assert got[1].reasons == ("vllm/_C.abi3.so carries no GPU code that runs on sm_90",)
    # code for the device, yet the op fails: a disagreement (numerics, launch config ...)
    gc = replace(gc, status="passed")
    smoke[1] = replace(smoke[1], status="skipped")
    probes = [abi, gc, *dyn, *smoke]
    got = agreement_of(probes, {p.id: p for p in probes})
    assert [(a.aspect, a.agree) for a in got] == [("load", True), ("gpu-code", False)]
    assert got[1].probes == ("gpu-code:vllm", "smoke:vllm-rms_norm")
    # no smoke ran (no GPU): no gpu-code entry
    smoke = [replace(s, status="skipped") for s in smoke]
    probes = [abi, gc, *dyn, *smoke]
    assert [a.aspect for a in agreement_of(probes, {p.id: p for p in probes})] == ["load"]


def test_probe_errors_are_explained() -> None:
    """What verify names for a probe's error: its signatures' hits, through the diagnosis verify gives them (a refined
    reading whose condition the text does not show, an extension built for another CUDA than a torch it does not name,
    is left out there, as in assemble.py)."""
    facts = load_facts()
    sigs = facts.rows("signature")
    cases = {
        "vllm._C: ImportError: /venv/lib/python3.12/site-packages/vllm/_C.abi3.so: undefined symbol: "
        "_ZN3c1013MessageLoggerC1EPKciib": ["vllm-undefined-symbol"],
        "RuntimeError: CUDA error: no kernel image is available for execution on the device": ["no-kernel-image"],
        "vllm._C: ImportError: libcudart.so.12: cannot open shared object file: No such file or directory":
            ["cudart-missing"],
        "operator _C::rms_norm does not exist": ["vllm-op-missing"],
    }
    for text, ids in cases.items():
        assert [h.id for h in diagnose(match_signatures(text, sigs), Env(), facts)] == ids, text


# -- offline: the GPU code of the built fixtures ------------------------------------------------------


def _built_site(tmp_path: Path, arch: str) -> Path:
    site = tmp_path / arch
    shutil.copytree(BUILT / arch, site)
    (site / "torch" / "lib").mkdir(parents=True)
    _dist(site, "torch", "2.11.0", [])
    return site


@pytest.mark.slow
@pytest.mark.skipif(not (BUILT / "sm90a" / "vllm" / "_C.abi3.so").is_file(), reason="built fixture not present")
def test_built_fixture_gpu_code_against_target(tmp_path: Path) -> None:
    """The real torch extensions: sm_90a code runs on sm90 only, sm_120a on sm120 only."""
    for arch, runs_on, not_on in (("sm90a", "sm90", "sm120"), ("sm120a", "sm120", "sm90")):
        site = _built_site(tmp_path, arch)
        yes = run(Options(paths=[str(site)], no_gpu=True, target=runs_on, timeout=60)).to_json()
        gc = probe(yes, "gpu-code:vllm")
        assert gc["status"] == "passed", gc
        assert {f["file"]: f["sass"] for f in gc["data"]["files"]} == {
            "vllm/_C.abi3.so": [f"sm_{arch[2:]}"], "vllm/_moe_C.abi3.so": [f"sm_{arch[2:]}"]}
        no = run(Options(paths=[str(site)], no_gpu=True, target=not_on, timeout=60)).to_json()
        gc = probe(no, "gpu-code:vllm")
        assert gc["status"] == "failed" and "no kernel image is available" in gc["error"]
        assert "no-kernel-image" in [e["id"] for e in gc["explained"]]


# -- on a GPU -----------------------------------------------------------------------------------------


def _gpu() -> tuple[int, int] | None:
    try:
        import torch  # type: ignore[import-not-found]
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability(0)
    return (major, minor)


gpu = pytest.mark.skipif(_gpu() is None, reason="needs torch and an NVIDIA GPU")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture's variants, from GLMCOMPAT_VLLM_FIXTURE or built here (nvcc, g++, the installed torch)."""
    given = os.environ.get("GLMCOMPAT_VLLM_FIXTURE")
    if given:
        return Path(given)
    if shutil.which("nvcc") is None and not os.path.isdir("/usr/local/cuda"):
        pytest.skip("no nvcc to build the vllm fixture (or set GLMCOMPAT_VLLM_FIXTURE)")
    out = tmp_path_factory.mktemp("vllm-fixture")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_vllm_fixture.py"), str(out)], check=True)
    return out


def _verify(built: Path, variant: str) -> dict[str, Any]:
    return run(Options(paths=[str(built / variant)], timeout=300)).to_json()


@pytest.mark.gpu
@gpu
def test_gpu_consistent_fixture_passes(built: Path) -> None:
    if _gpu() != (9, 0):
        pytest.skip("the consistent variant carries sm_90a code: it runs on sm_90 only")
    r = _verify(built, "consistent")
    for pid in ("abi:vllm", "gpu-code:vllm", "import:vllm", "load:vllm", "ops:vllm", "smoke:vllm-rms_norm",
                "smoke:vllm-silu_and_mul"):
        assert probe(r, pid)["status"] == "passed", probe(r, pid)
    ops = probe(r, "ops:vllm")["data"]
    assert ops["cuda_kernels"] == {"_C::rms_norm": True, "_C::silu_and_mul": True, "_moe_C::topk_softmax": True}
    assert [(a["aspect"], a["static"], a["dynamic"], a["agree"]) for a in r["agreement"] if a["package"] == "vllm"] \
        == [("load", "compatible", "loads", True), ("gpu-code", "compatible", "runs", True)]


@pytest.mark.gpu
@gpu
def test_gpu_inconsistent_fixture_fails_at_launch(built: Path) -> None:
    if _gpu() == (12, 0):
        pytest.skip("the inconsistent variant carries sm_120a code: it runs on this GPU")
    r = _verify(built, "inconsistent")
    assert r["ok"] is False
    for pid in ("abi:vllm", "import:vllm", "load:vllm", "ops:vllm"):
        assert probe(r, pid)["status"] == "passed", probe(r, pid)
    gc = probe(r, "gpu-code:vllm")
    assert gc["status"] == "failed" and "sm_120a" in gc["error"]
    smoke = probe(r, "smoke:vllm-rms_norm")
    assert smoke["status"] == "failed" and "no kernel image is available" in smoke["error"], smoke
    assert "no-kernel-image" in [e["id"] for e in smoke["explained"]]
    a = agreement(r, "vllm", "gpu-code")
    assert (a["static"], a["dynamic"], a["agree"]) == ("incompatible", "fails to run", True)
    assert agreement(r, "vllm", "load")["agree"] is True


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("variant,text,sig", [
    ("abi-broken", "undefined symbol: _ZN3c1013MessageLoggerC1EPKcii", "vllm-undefined-symbol"),
    ("cudart12", "libcudart.so.12: cannot open shared object file", "cudart-missing"),
])
def test_gpu_fixture_that_does_not_load(built: Path, variant: str, text: str, sig: str) -> None:
    """A vLLM fixture that does not load, named by its cause. The cudart12 variant's module needs CUDA 12's runtime: where
    the installed torch is built for another CUDA major (torch.version.cuda, which verify reads), that is an extension
    built for another CUDA than torch (extension-cuda-mismatch, the refinement), else the runtime missing."""
    if variant == "cudart12":
        import torch

        if (torch.version.cuda or "").split(".")[0] not in ("", "12"):
            sig = "extension-cuda-mismatch"
    r = _verify(built, variant)
    assert r["ok"] is False
    assert probe(r, "abi:vllm")["status"] == "failed"
    load = probe(r, "load:vllm")
    assert load["status"] == "failed" and text in load["error"], load
    assert sig in [e["id"] for e in load["explained"]]
    ops = probe(r, "ops:vllm")
    assert ops["status"] == "failed" and "operator _C::rms_norm does not exist" in ops["error"]
    assert probe(r, "smoke:vllm-rms_norm")["status"] == "skipped"
    a = agreement(r, "vllm", "load")
    assert (a["static"], a["dynamic"], a["agree"]) == ("incompatible", "fails to load", True)
    assert not any(f["rule"] == "static-dynamic" for f in r["findings"])


def test_registry_script_reads_the_mapping() -> None:
    """scripts/vllm_model_registry.py: an architecture counts when it is a key of the registry's mappings."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("vllm_model_registry", ROOT / "scripts" / "vllm_model_registry.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks its module up
    try:
        spec.loader.exec_module(mod)
    finally:
        del sys.modules[spec.name]
    text = textwrap.dedent('''
        _TEXT_GENERATION_MODELS = {
            "DeepseekV32ForCausalLM": ("deepseek_v2", "DeepseekV3ForCausalLM"),
            "GlmMoeDsaForCausalLM": ("deepseek_v2", "GlmMoeDsaForCausalLM"),
        }
        # GlmMoeDsaForCausalLM is mentioned here but not registered
    ''')
    assert mod.registry_lines(text, "GlmMoeDsaForCausalLM") == [
        (4, '"GlmMoeDsaForCausalLM": ("deepseek_v2", "GlmMoeDsaForCausalLM"),')]
    assert mod.registry_lines(text, "GlmMoeDsa") == []
