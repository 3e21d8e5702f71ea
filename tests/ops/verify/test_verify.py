"""``glmcompat verify`` without a GPU, on real artifacts.

A fake site-packages is built in a temporary folder: a ``torch/lib/libc10.so`` compiled by gcc that
exports torch-2.10-style symbols, and extension ``.so`` files compiled by gcc that import either a
symbol it exports (consistent) or the torch-2.9-style one it does not (the ABI break torch 2.10 made).
The fake packages load those libraries with the real dynamic loader, so the dynamic outcome (import)
is real too, and the static verdict must agree with it. No torch is needed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from glmcompat.model.errors import InputError
from glmcompat.model.findings import Finding
from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.ops.verify.core import run
from glmcompat.ops.verify.plan import Options
from tests.ops.verify.conftest import given_sites_only
from tests.ops.verify.gcconce import gcc
from tests.ops.verify.test_records import undeclared

from tests.conftest import run_cli

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the ELF fixtures")

# torch 2.10 exports MessageLogger(char const*, int, int, bool); torch 2.9's extensions import the
# 3-argument form (`glmcompat abi sgl-kernel==0.3.21 --torch 2.10.0`).
NEW_LOGGER = "_ZN3c1013MessageLoggerC1EPKciib"
OLD_LOGGER = "_ZN3c1013MessageLoggerC1EPKcii"
CHECK_FAIL = "_ZN3c106detail14torchCheckFailEPKcS2_jS2_"

TORCH_INIT = '''\
import ctypes, os
__version__ = "{version}"
ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libc10.so"), mode=ctypes.RTLD_GLOBAL)
'''
EXT_INIT = '''\
import ctypes, os
import torch  # noqa: F401  (loads libc10.so first, as the real package does)
__version__ = "{version}"
ctypes.CDLL(os.path.join(os.path.dirname(__file__), "{lib}"))
'''


def _gcc(src: str, out: Path, *args: str) -> None:
    gcc(src, out, out.with_suffix(".c").name, *args)  # built once per distinct build (tests/ops/verify/gcconce.py)


def _dist(site: Path, name: str, version: str, files: list[str], requires: list[str] = ()) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(meta) + "\n")
    rec = [f"{f},," for f in files] + [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(rec) + "\n")


def make_torch(site: Path, version: str = "2.10.0") -> None:
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    _gcc(textwrap.dedent(f'''
        void logger(void) __asm__("{NEW_LOGGER}");
        void logger(void) {{}}
        void check_fail(void) __asm__("{CHECK_FAIL}");
        void check_fail(void) {{}}
    '''), lib / "libc10.so")
    (site / "torch" / "__init__.py").write_text(TORCH_INIT.format(version=version))
    _dist(site, "torch", version, ["torch/__init__.py", "torch/lib/libc10.so"])


def make_ext(site: Path, name: str, version: str, symbol: str, requires: list[str], lib: str = "_C.so") -> None:
    pkg = site / name
    (pkg / lib).parent.mkdir(parents=True, exist_ok=True)
    _gcc(textwrap.dedent(f'''
        extern void need_logger(void) __asm__("{symbol}");
        extern void need_check(void) __asm__("{CHECK_FAIL}");
        void PyInit__C(void) {{ need_logger(); need_check(); }}
    '''), pkg / lib, "-L", str(site / "torch" / "lib"), "-lc10", "-Wl,-rpath,$ORIGIN/../torch/lib")
    (pkg / "__init__.py").write_text(EXT_INIT.format(version=version, lib=lib))
    _dist(site, name, version, [f"{name}/__init__.py", f"{name}/{lib}"], requires)


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """torchvision 0.24.1 (built for torch 2.9.1) installed next to torch 2.10.0."""
    site = tmp_path_factory.mktemp("broken") / "site"
    site.mkdir()
    make_torch(site, "2.10.0")
    make_ext(site, "torchvision", "0.24.1", OLD_LOGGER, ["torch==2.9.1"])
    return site


@pytest.fixture(scope="module")
def good_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """torchvision 0.25.0 next to torch 2.10.0, the pair they were built as."""
    site = tmp_path_factory.mktemp("good") / "site"
    site.mkdir()
    make_torch(site, "2.10.0")
    make_ext(site, "torchvision", "0.25.0", NEW_LOGGER, ["torch==2.10.0"])
    return site


def probe(report: dict[str, Any], pid: str) -> dict[str, Any]:
    return next(p for p in report["probes"] if p["id"] == pid)


def test_broken_torchvision_static_and_dynamic_agree(broken_site: Path) -> None:
    """The issue's Done-when: no GPU, torchvision 0.24.1 next to another torch -> static findings, exit 1."""
    r = run(Options(paths=[str(broken_site)], no_gpu=True, timeout=60)).to_json()
    assert r["ok"] is False
    abi = probe(r, "abi:torchvision")
    assert abi["status"] == "failed"
    assert abi["data"]["files"][0]["missing"] == [OLD_LOGGER]
    assert abi["data"]["files"][0]["needs_from_torch"] == 2
    assert "undefined symbol: " + OLD_LOGGER in abi["error"]
    # the rules (same as `check`) flag the family pair from the dist-info METADATA
    inst = probe(r, "installed")
    assert inst["status"] == "failed"
    rules = {(f["rule"], tuple(f["packages"])) for f in r["findings"]}
    assert any(rule == "family" for rule, _ in rules), r["findings"]
    assert any(rule == "abi" and "torchvision==0.24.1" in pk for rule, pk in rules)
    # the real dynamic loader agrees: the import fails with the very symbol the static probe named
    imp = probe(r, "import:torchvision")
    assert imp["status"] == "failed"
    assert f"undefined symbol: {OLD_LOGGER}" in imp["error"]
    assert [e["id"] for e in imp["explained"]] == ["undefined-symbol"]
    assert r["agreement"] == [{"package": "torchvision", "aspect": "load", "static": "incompatible",
                               "dynamic": "fails to load", "reasons": ["1 torch symbol(s) missing"],
                               "probes": ["abi:torchvision", "import:torchvision"], "agree": True}]
    # GPU probes are skipped, never passed
    assert probe(r, "device")["status"] == "skipped"
    assert probe(r, "smoke:torchvision-nms")["status"] == "skipped"


@pytest.fixture(scope="module")
def good_report(good_site: Path) -> dict[str, Any]:
    """verify --no-gpu of good_site (a run each test here only reads)."""
    with pytest.MonkeyPatch.context() as mp:
        given_sites_only(mp)  # as for every in-process run here (set up after this module-scoped fixture)
        return run(Options(paths=[str(good_site)], no_gpu=True, timeout=60)).to_json()


def test_consistent_install_passes_without_gpu(good_report: dict[str, Any]) -> None:
    r = good_report
    assert probe(r, "abi:torchvision")["status"] == "passed"
    assert probe(r, "import:torchvision")["status"] == "passed"
    assert r["agreement"][0]["agree"] is True and r["agreement"][0]["static"] == "compatible"
    assert r["ok"] is True, [p for p in r["probes"] if p["status"] == "failed"] + r["findings"]
    assert not any(p["status"] == "passed" for p in r["probes"] if p["id"].startswith(("smoke:", "device")))


@pytest.mark.slow
def test_cli_exit_codes_and_json(broken_site: Path, good_site: Path) -> None:
    bad = run_cli("verify", "--no-gpu", "--json", "--path", str(broken_site))
    assert bad.returncode == 1, bad.stderr
    report = json.loads(bad.stdout)
    assert report["version"] == 1 and report["ok"] is False
    assert set(report) >= {"version", "ok", "device", "probes", "findings"}
    # without --no-gpu a machine with no GPU cannot pass: skipped is never passed
    good = run_cli("verify", "--path", str(good_site))
    assert good.returncode == 1
    assert "no-gpu" in good.stdout and "Traceback" not in good.stdout + good.stderr
    table = run_cli("verify", "--no-gpu", "--path", str(good_site))
    assert table.returncode == 0, table.stdout
    assert "abi:torchvision" in table.stdout and table.stdout.rstrip().splitlines()[-1].startswith("ok:")


def test_target_and_model_rules(broken_site: Path) -> None:
    r = run(Options(paths=[str(broken_site)], no_gpu=True, target="sm_120", timeout=60)).to_json()
    assert r["target"] == "sm120"
    assert "for sm120" in probe(r, "installed")["summary"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "sm999"], "unknown target 'sm999'"),
        (["--model", "no_such_model"], "unknown model type 'no_such_model'"),
        (["--timeout", "0"], "--timeout must be positive"),
        (["--timeout", "nan"], "--timeout must be positive"),  # issue 12: nan passed `<= 0` and was accepted
        (["--timeout", "inf"], "--timeout must be positive"),
        (["--bogus"], "unexpected argument '--bogus'"),
    ],
)
def test_bad_input_exits_2(args: list[str], message: str) -> None:
    r = run_cli("verify", "--no-gpu", *args)
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.startswith("error:")


def test_bad_input_in_process() -> None:
    with pytest.raises(InputError, match="unknown target"):
        run(Options(target="sm_1234", no_gpu=True))
    with pytest.raises(InputError, match="torchrun"):
        run(Options(distributed=True, no_gpu=True))


@pytest.mark.slow
def test_half_installed_crash_and_hang(tmp_path: Path) -> None:
    """A package whose files are gone, one that kills its process, one that hangs: reported, not fatal."""
    site = tmp_path / "site"
    site.mkdir()
    make_torch(site, "2.10.0")
    make_ext(site, "torchvision", "0.25.0", NEW_LOGGER, ["torch==2.10.0"])
    (site / "torchvision" / "_C.so").unlink()  # half-installed: RECORD lists it, the file is gone
    (site / "torchaudio").mkdir()
    (site / "torchaudio" / "__init__.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    (site / "sglang").mkdir()
    (site / "sglang" / "__init__.py").write_text("import time\ntime.sleep(60)\n")
    # --timeout bounds the whole run, and the hang keeps it running that long: 8 s is many times what the probes that
    # must pass take (import torch: a fraction of a second) on a loaded machine, and little more for the test to wait
    r = run(Options(paths=[str(site)], no_gpu=True, timeout=8)).to_json()
    assert r["ok"] is False
    half = [f for f in r["findings"] if (f["rule"], f["severity"]) == ("installation", "error")]
    assert [f["packages"] for f in half] == [["torchvision==0.25.0"]] and "torchvision/_C.so" in half[0]["message"]
    nodist = [f for f in r["findings"] if "belongs to no installed distribution" in f["message"]]
    assert {m for f in nodist for m in ("torchaudio", "sglang") if f"module {m} " in f["message"]} == {"torchaudio",
                                                                                                      "sglang"}
    crashed = probe(r, "import:torchaudio")
    assert crashed["status"] == "failed" and "SIGSEGV" in crashed["summary"]
    assert probe(r, "ops:torchaudio")["status"] == "failed"  # never reported: the process had died
    hung = probe(r, "import:sglang")
    assert hung["status"] == "failed" and "timed out after 8 s" in hung["summary"]
    assert probe(r, "import:torch")["status"] == "passed"  # the other groups carried on


def test_no_torch_installed_is_clear(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "torchvision").mkdir()
    (site / "torchvision" / "__init__.py").write_text("import torch\n")
    _dist(site, "torchvision", "0.24.1", ["torchvision/__init__.py"], ["torch==2.9.1"])
    r = run(Options(paths=[str(site)], no_gpu=True, timeout=30)).to_json()
    torch = probe(r, "import:torch")
    assert torch["status"] == "failed" and "torch is not installed" in torch["summary"]
    assert torch["absent"] == "torch"  # what the verdict reads (the summary is prose)
    assert any(f["rule"] == "import" and f["severity"] == "error" for f in r["findings"])
    assert all(Finding.from_json(f).to_json() == f for f in r["findings"])  # one Finding shape, as check's
    imp = probe(r, "import:torchvision")
    assert imp["status"] == "failed" and "No module named 'torch'" in imp["error"]
    assert r["ok"] is False


def test_torchao_mismatch_is_a_warning(tmp_path: Path) -> None:
    """torchao swallows a failed _C load (it logs and skips it): a warning with its consequence, not a failure."""
    site = tmp_path / "site"
    site.mkdir()
    make_torch(site, "2.10.0")
    make_ext(site, "torchao", "0.9.0", OLD_LOGGER, ["torch"], lib="_C.abi3.so")
    (site / "torchao" / "__init__.py").write_text(textwrap.dedent('''
        import ctypes, logging, os
        import torch
        __version__ = "0.9.0"
        try:
            ctypes.CDLL(os.path.join(os.path.dirname(__file__), "_C.abi3.so"))
        except Exception as e:
            logging.getLogger("torchao").warning(f"Skipping import of cpp extensions: {e}")
    '''))
    r = run(Options(paths=[str(site)], no_gpu=True, timeout=30)).to_json()
    abi = probe(r, "abi:torchao")
    assert abi["status"] == "warning"
    imp = probe(r, "import:torchao")
    assert imp["status"] == "passed" and imp["warnings"] and "Skipping import" in imp["warnings"][0]
    f = next(f for f in r["findings"] if f["rule"] == "abi")
    assert f["severity"] == "warning" and "custom C++/CUDA ops" in f["message"]
    assert r["agreement"][0] == {"package": "torchao", "aspect": "load", "static": "incompatible",
                                 "dynamic": "fails to load", "reasons": ["1 torch symbol(s) missing"],
                                 "probes": ["abi:torchao", "import:torchao"], "agree": True}


GPU_KERNEL = ("__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n"
              'extern "C" void launch(float* x) { k<<<1, 32>>>(x); }\n')
GPU_FLAGS = ["-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_120a,code=sm_120a", "-lc10",
             "-Xlinker", "-rpath,$ORIGIN/../torch/lib", "-Xlinker", f"--undefined={CHECK_FAIL}"]


def _sm120a_image(tmp_path_factory: pytest.TempPathFactory, libc10: Path) -> Path:
    """The extension with only sm_120a SASS, linked against ``libc10`` (the fake torch's): built by the real nvcc once
    per kernel, flags, libc10 and nvcc, and kept for later sessions as tests/readers/test_fatbin.py keeps its
    libraries (nvcc takes about 2 s of CPU; its bytes for the same inputs are the library every run would build)."""
    from tests.readers.test_fatbin import _built  # lazy: the nvcc keeper, only for this test

    lib = libc10.read_bytes()

    def build(d: Path) -> Path:
        (d / "torch" / "lib").mkdir(parents=True)
        (d / "torch" / "lib" / "libc10.so").write_bytes(lib)
        (d / "k.cu").write_text(GPU_KERNEL)
        out = d / "image.so"
        subprocess.run(["nvcc", *GPU_FLAGS[:5], "-o", str(out), str(d / "k.cu"), "-L", str(d / "torch" / "lib"),
                        *GPU_FLAGS[5:]], check=True, capture_output=True)
        return out

    return _built(tmp_path_factory, [GPU_KERNEL, GPU_FLAGS, hashlib.sha256(lib).hexdigest()], "image.so", build)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is needed to build a real fatbin")
def test_gpu_code_against_target(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """An extension with only sm_120a SASS: runs on sm120, not on sm90 (judged against --target)."""
    site = tmp_path / "site"
    site.mkdir()
    make_torch(site, "2.10.0")
    make_ext(site, "torchvision", "0.25.0", NEW_LOGGER, ["torch==2.10.0"])
    so = site / "torchvision" / "image.so"
    shutil.copyfile(_sm120a_image(tmp_path_factory, site / "torch" / "lib" / "libc10.so"), so)
    on90 = run(Options(paths=[str(site)], no_gpu=True, target="sm90", timeout=30)).to_json()
    gc = probe(on90, "gpu-code:torchvision")
    assert gc["status"] == "failed" and "sm_120a" in gc["error"] and "sm_90" in gc["error"]
    assert undeclared(on90) == []  # the judged gpu-code data (runs, decides, judged_for) as records.py declares it
    on120 = run(Options(paths=[str(site)], no_gpu=True, target="sm120", timeout=30)).to_json()
    assert probe(on120, "gpu-code:torchvision")["status"] == "passed"
    nogpu = run(Options(paths=[str(site)], no_gpu=True, timeout=30)).to_json()
    assert probe(nogpu, "gpu-code:torchvision")["status"] == "skipped"


# -- on a real GPU (skipped without one) -----------------------------------------------------------


def _have_gpu() -> bool:
    try:
        import torch  # type: ignore[import-not-found]
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@pytest.mark.gpu
@pytest.mark.skipif(not _have_gpu(), reason="needs torch and an NVIDIA GPU")
def test_gpu_installed_stack_passes() -> None:
    r = run(Options(timeout=300)).to_json()
    assert probe(r, "device")["status"] == "passed"
    assert probe(r, "smoke:torch-matmul")["status"] == "passed"
    assert r["device"]["capability"] and r["target"]
    for a in r["agreement"]:
        assert a["agree"], a


@pytest.mark.gpu
@pytest.mark.skipif(not _have_gpu(), reason="needs torch and an NVIDIA GPU")
def test_gpu_target_mismatch_is_reported() -> None:
    import torch  # type: ignore[import-not-found]

    major, minor = torch.cuda.get_device_capability(0)
    other = "sm120" if (major, minor) != (12, 0) else "sm90"
    r = run(Options(target=other, timeout=300)).to_json()
    dev = probe(r, "device")
    assert dev["status"] == "failed"
    assert f"device is sm_{major}{minor}, target is sm_{other[2:]}" in dev["error"]
    assert r["ok"] is False


def test_report_is_json_serialisable(good_report: dict[str, Any]) -> None:
    r = good_report
    assert json.loads(json.dumps(r)) == r
    assert os.path.isabs(probe(r, "import:torchvision")["data"]["file"])


SPOOF = '''\
import sys
# what a package under test might print: the old, nonce-free markers (a spoofed pass, a record for a probe
# that does not exist, malformed JSON, wrong types, an exit line without its keys), and half a line
print('@@glmcompat-probe {"id": "import:torchaudio", "status": "passed", "summary": "SPOOFED", "seconds": 0}')
print('@@glmcompat-probe {"id": "import:spoofed", "status": "passed", "summary": "SPOOFED", "seconds": 0}')
print('@@glmcompat-probe {not json')
print('@@glmcompat-probe [1, 2]')
print('@@glmcompat-exit {}')
print('@@glmcompat-exit []')
print('@@glmcompat-gathered 5')
print('@@glmcompat-nofork')
sys.stdout.write("half a line, no newline")
raise ImportError("torchaudio is broken on purpose")
'''


@pytest.mark.parametrize("fork", [True, False])
def test_a_package_printing_markers_cannot_spoof_or_crash_verify(tmp_path: Path, fork: bool) -> None:
    """Issue 12: probe records were parsed from any stdout line that began with the marker, so a package under
    test could pass a failing probe, and an exit line without "group" killed the reader thread (every later
    record lost). Records now carry a per-process nonce, and malformed ones are ignored."""
    site = tmp_path / "site"
    site.mkdir()
    make_torch(site, "2.10.0")
    make_ext(site, "torchvision", "0.25.0", NEW_LOGGER, ["torch==2.10.0"])
    (site / "torchaudio").mkdir()
    (site / "torchaudio" / "__init__.py").write_text(SPOOF)
    _dist(site, "torchaudio", "2.10.0", ["torchaudio/__init__.py"], ["torch==2.10.0"])
    r = run(Options(paths=[str(site)], no_gpu=True, timeout=30, fork=fork)).to_json()
    imp = probe(r, "import:torchaudio")
    assert imp["status"] == "failed" and "broken on purpose" in imp["error"]
    assert all(p.get("summary") != "SPOOFED" for p in r["probes"])
    assert not any(p["id"] == "import:spoofed" for p in r["probes"])
    assert probe(r, "import:torchvision")["status"] == "passed"  # the other groups' records still arrive
    assert probe(r, "import:torch")["status"] == "passed"


def test_probe_processes_find_glmcompat_without_an_install():
    """The probe processes import glmcompat from where this one did, even where it is not installed (a
    checkout on PYTHONPATH inside a serving container): -S leaves out site-packages and every .pth."""
    import subprocess
    import sys

    from glmcompat.ops.verify.core import _child_env

    r = subprocess.run([sys.executable, "-P", "-S", "-c", "import glmcompat.ops.verify.gpuchecks"],
                       env=_child_env([]), capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, r.stderr


def test_assemble_judges_without_changing_the_records() -> None:
    """The report carries new records for the verdicts; the probes' records handed to ``assemble`` stay as given."""
    import copy

    from glmcompat.matrix.load import load_facts
    from glmcompat.ops.verify.assemble import assemble

    raw: list[dict[str, Any]] = [
        {"id": "device", "status": "passed", "summary": "", "seconds": 0.1,
         "data": {"capability": "9.0", "name": "H100", "torch_arch_list": ["sm_120"]}},
        {"id": "driver", "status": "passed", "summary": "", "seconds": 0.1,
         "data": {"driver": "580.0", "cuda_driver": "13.0", "gpus": []}},
        {"id": "import:torch", "status": "skipped", "summary": "torch is not installed", "seconds": 0.0,
         "absent": "torch"},
        {"id": "installed", "status": "passed", "summary": "2 packages", "seconds": 0.1,
         "data": {"packages": {}, "findings_by_target": {"sm90": []}, "installation": []}},
        {"id": "gpu-code:sgl-kernel", "status": "pending", "summary": "", "seconds": 0.0,
         "data": {"version": "0.3.21", "files": [{"file": "sgl_kernel/common_ops.so", "sass": ["sm_90a"], "ptx": [],
                                                    "variant": None}]}},
    ]
    records = [ProbeDoc(**r) for r in raw]
    given = copy.deepcopy(records)
    report = assemble(records, load_facts(), Options(), None).to_json()
    assert records == given
    assert report["target"] == "sm90"
    assert probe(report, "device")["status"] == "failed" and probe(report, "device")["data"]["target"] == "sm90"
    assert probe(report, "import:torch")["status"] == "failed"
    assert "findings_by_target" not in probe(report, "installed")["data"]
    gc = probe(report, "gpu-code:sgl-kernel")
    assert gc["status"] == "passed" and gc["data"]["files"][0]["runs"] == ["sm_90a"]

