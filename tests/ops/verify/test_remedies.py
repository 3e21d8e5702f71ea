"""``glmcompat verify``: remedies that, applied, make it pass; one count per fact; half-installed packages.

Real ELF built by gcc stands in for torch's and torchvision's libraries (as in tests/ops/verify/test_verify.py); a real
pip installs the half-installed case from a real wheel and applies the remedy verify prints.
"""

from __future__ import annotations

import hashlib
import base64
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import pytest

from glmcompat.ops.verify.core import run
from glmcompat.ops.verify.plan import Options

from tests.ops.verify.test_verify import NEW_LOGGER, _dist, _gcc, make_ext, make_torch, probe

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the ELF fixtures")

# c10::cuda::set_device(signed char): defined by libc10_cuda.so of a CUDA torch, absent from a +cpu torch
CUDA_SYM = "_ZN3c104cuda10set_deviceEa"


def make_cuda_torchvision(site: Path, version: str) -> None:
    """A torchvision whose _C.so and image.so both need a CUDA-only torch symbol (the default index's build)."""
    pkg = site / "torchvision"
    pkg.mkdir()
    for lib in ("_C.so", "image.so"):
        _gcc(textwrap.dedent(f'''
            extern void need_cuda(void) __asm__("{CUDA_SYM}");
            extern void need_logger(void) __asm__("{NEW_LOGGER}");
            void PyInit_x(void) {{ need_cuda(); need_logger(); }}
        '''), pkg / lib, "-L", str(site / "torch" / "lib"), "-lc10", "-Wl,-rpath,$ORIGIN/../torch/lib")
    (pkg / "__init__.py").write_text(
        f"import ctypes, os\nimport torch\n__version__ = {version!r}\n"
        "ctypes.CDLL(os.path.join(os.path.dirname(__file__), '_C.so'))\n")
    _dist(site, "torchvision", version, ["torchvision/__init__.py", "torchvision/_C.so", "torchvision/image.so"],
          ["torch==2.13.0"])


def abi_finding(r: dict[str, Any], pkg: str) -> dict[str, Any]:
    return next(f for f in r["findings"] if f["rule"] == "abi" and any(p.startswith(pkg + "==") for p in f["packages"]))


@pytest.mark.slow
def test_cpu_torch_with_the_cuda_torchvision_then_the_remedy(tmp_path: Path) -> None:
    """torch 2.13.0+cpu and torchvision 0.28.0 (its release, built for the CUDA torch): the remedy is the +cpu
    torchvision, never the 0.28.0 that is installed; applied, verify passes."""
    site = tmp_path / "site"
    site.mkdir()
    make_torch(site, "2.13.0+cpu")  # exports MessageLogger and torchCheckFail, no c10::cuda
    make_cuda_torchvision(site, "0.28.0")
    r = run(Options(paths=[str(site)], no_gpu=True, timeout=60)).to_json()
    assert r["ok"] is False
    f = abi_finding(r, "torchvision")
    assert "install torchvision==0.28.0+cpu" in f["remedy"] and "a CUDA build of torch" in f["remedy"]
    assert "install torchvision==0.28.0 " not in f["remedy"] + " "
    # one count per fact: both files need the same one symbol
    abi = probe(r, "abi:torchvision")
    assert abi["summary"].startswith("1 of the torch symbols")
    assert "needs 1 torch symbol(s)" in f["message"] and "in 2 files" in f["message"]
    assert r["agreement"][0]["reasons"] == ["1 torch symbol(s) missing"]
    # the import's explanation says the same, from the environment
    imp = probe(r, "import:torchvision")
    assert [e["id"] for e in imp["explained"]] == ["undefined-symbol"]
    assert imp["explained"][0]["package"] == "torchvision"
    assert "torchvision==0.28.0+cpu" in imp["explained"][0]["remedy"]
    # apply it: the +cpu build of torchvision 0.28.0 needs no CUDA symbol
    shutil.rmtree(site / "torchvision")
    shutil.rmtree(site / "torchvision-0.28.0.dist-info")
    make_ext(site, "torchvision", "0.28.0+cpu", NEW_LOGGER, ["torch==2.13.0"])
    fixed = run(Options(paths=[str(site)], no_gpu=True, timeout=60)).to_json()
    assert fixed["ok"] is True, [p for p in fixed["probes"] if p["status"] == "failed"] + fixed["findings"]


def _wheel(out: Path, site: Path, name: str, version: str) -> Path:
    """A real wheel of the files ``_dist`` recorded for ``name`` in ``site`` (RECORD with hashes)."""
    info = f"{name}-{version}.dist-info"
    files = [ln.split(",")[0] for ln in (site / info / "RECORD").read_text().splitlines()
             if ln and not ln.startswith(info)]
    whl = out / f"{name}-{version}-py3-none-linux_x86_64.whl"
    rows = []
    with zipfile.ZipFile(whl, "w") as z:
        def add(arc: str, data: bytes) -> None:
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{arc},sha256={digest},{len(data)}")
        for f in files:
            add(f, (site / f).read_bytes())
        add(f"{info}/METADATA", (site / info / "METADATA").read_bytes())
        add(f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n")
        z.writestr(f"{info}/RECORD", "\n".join(rows + [f"{info}/RECORD,,"]) + "\n")
    return whl


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--disable-pip-version-check", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def pip_installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a folder of torchvision 0.25.0's real wheel, a site where the real pip installed it beside torch 2.10.0):
    the same for each layout, so made once; each test installs from the folder and changes a copy of the site."""
    tmp = tmp_path_factory.mktemp("pip-installed")
    src = tmp / "src"
    src.mkdir()
    make_torch(src, "2.10.0")
    make_ext(src, "torchvision", "0.25.0", NEW_LOGGER, ["torch==2.10.0"])
    wheels = tmp / "wheels"
    wheels.mkdir()
    _wheel(wheels, src, "torchvision", "0.25.0")
    site = tmp / "site"
    site.mkdir()
    shutil.copytree(src / "torch", site / "torch")
    shutil.copytree(src / "torch-2.10.0.dist-info", site / "torch-2.10.0.dist-info")
    _pip("--target", str(site), "--find-links", str(wheels), "torchvision==0.25.0")
    return wheels, site


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["installed", "overlay"])
def test_half_installed_distribution_then_the_remedy(tmp_path: Path, layout: str,
                                                     pip_installed: tuple[Path, Path]) -> None:
    """A torchvision installed by pip whose _C.so is gone: verify says half-installed (not an ABI mismatch,
    not "static compatible, fails to load"), and its reinstall command, run, makes verify pass.
    ``overlay``: the package alone is copied in front (another --path), its metadata stays behind."""
    wheels, installed = pip_installed
    site = tmp_path / "site"
    shutil.copytree(installed, site, symlinks=True)
    paths = [str(site)]
    broken = site
    if layout == "overlay":
        over = tmp_path / "overlay"
        over.mkdir()
        shutil.copytree(site / "torchvision", over / "torchvision")
        (over / "torch").symlink_to(site / "torch")  # the fixture's _C.so finds libc10.so at $ORIGIN/../torch/lib
        paths = [str(over), str(site)]
        broken = over
    (broken / "torchvision" / "_C.so").unlink()
    r = run(Options(paths=paths, no_gpu=True, timeout=60)).to_json()
    assert r["ok"] is False
    half = [f for f in r["findings"] if (f["rule"], f["severity"]) == ("installation", "error")]
    assert [f["packages"] for f in half] == [["torchvision==0.25.0"]], r["findings"]
    assert "torchvision/_C.so" in half[0]["message"]
    assert f"--target {broken.resolve()}" in half[0]["remedy"]
    abi = probe(r, "abi:torchvision")
    assert abi["status"] == "failed" and "half-installed" in abi["summary"]
    agree = next(a for a in r["agreement"] if a["package"] == "torchvision")
    assert agree["static"] == "incompatible" and agree["agree"] is True
    assert any("half-installed" in x for x in agree["reasons"])
    assert not any(f["rule"] == "static-dynamic" for f in r["findings"])
    # apply the remedy as printed, with the wheel served from a local folder instead of the index
    cmd = half[0]["remedy"].split("pip install ", 1)[1].split()
    _pip("--find-links", str(wheels), *cmd)
    fixed = run(Options(paths=paths, no_gpu=True, timeout=60)).to_json()
    assert fixed["ok"] is True, [p for p in fixed["probes"] if p["status"] == "failed"] + fixed["findings"]


def test_half_installed_copy_is_found_after_another_copy_was_imported(tmp_path, monkeypatch):
    """On the H200: the runner had imported the image's torchvision, and the half-installed copy put in front with
    --path was judged by the image's files. The path search, not sys.modules, decides which copy is checked."""
    import sys
    from importlib import metadata

    from glmcompat.ops.verify.static import half_installed

    def copy(root, with_so):
        pkg = root / "torchvision"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        if with_so:
            (pkg / "_C.so").write_bytes(b"\x7fELF")
        info = root / "torchvision-0.26.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torchvision\nVersion: 0.26.0\n")
        (info / "RECORD").write_text("torchvision/__init__.py,,\ntorchvision/_C.so,,\n"
                                     "torchvision-0.26.0.dist-info/METADATA,,\ntorchvision-0.26.0.dist-info/RECORD,,\n")

    image, half = tmp_path / "image", tmp_path / "half"
    copy(image, True)
    copy(half, False)
    saved = {k: v for k, v in sys.modules.items() if k == "torchvision" or k.startswith("torchvision.")}
    for k in saved:
        del sys.modules[k]
    monkeypatch.syspath_prepend(str(image))
    try:
        import torchvision  # noqa: F401  (the image's copy, imported first)

        monkeypatch.syspath_prepend(str(half))
        first = {"torchvision": next(d for d in metadata.distributions(path=[str(half)]))}
        found = half_installed(first)
        assert found["torchvision"][2] == ["torchvision/_C.so"], found
    finally:
        for k in [k for k in sys.modules if k == "torchvision" or k.startswith("torchvision.")]:
            del sys.modules[k]
        sys.modules.update(saved)
