"""GPU-code facts read from the cubins themselves, on facts recorded from real wheels
(scripts/record_kernel_facts.py) and, marked ``network``, on the wheels live.

* coverage per kernel (issue #21, cause 3): vllm 0.9.1 carries PTX, but only for some kernels;
* the CUDA toolkit of each kernel row (issue #22, item 3): read from its cubins, on the row's own platform.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from glmcompat.matrix.rows import ArchProbe, Kernel
from glmcompat.model.gpu import KernelCode, uncovered
from glmcompat.ops.wheelprobe import ArchResult, ModuleArch, arch_verdict, merge_kernel_code

from tests.conftest import run_cli

DATA = Path(__file__).parents[1] / "data" / "fatbin"
VLLM = json.loads((DATA / "arch-vllm-0.9.1.json").read_text())
TOOLKITS = json.loads((DATA / "toolkits.json").read_text())


def _vllm(target: str | None, cap: tuple[int, int] | None) -> ArchResult:
    mods = arch_verdict([ModuleArch.from_cached_json(d) for d in VLLM["modules"]], cap)
    return ArchResult("vllm", "0.9.1", VLLM["wheel"], mods, target, VLLM["primary"], VLLM["platform"],
                      bytes_fetched=0, bytes_total=VLLM["bytes_total"], seconds=0.0, cached=True)


def test_vllm_0_9_1_recorded_kernels() -> None:
    r = _vllm(None, None)
    assert r.primary == ["vllm/_C.abi3.so", "vllm/_moe_C.abi3.so"]
    assert r.ptx == ["compute_52", "compute_89", "compute_90"]  # "carries PTX": the old per-library test passed it
    assert sum(g.kernels for g in r.kernel_code) == 3342
    assert r.toolkits == {"12.8": 321}  # every cubin of both main modules
    assert all(m.unreadable == 0 for m in r.modules)


def test_vllm_0_9_1_does_not_cover_sm120() -> None:
    r = _vllm("sm120", (12, 0))
    assert not r.ok and r.not_running == ["vllm/_C.abi3.so", "vllm/_moe_C.abi3.so"]
    gaps = r.uncovered
    assert sum(g.kernels for g in gaps) == 1725
    assert {g.code for g in gaps} == {("sm_70", "sm_75", "sm_80", "sm_89", "sm_90", "sm_100"),
                                     ("sm_80", "sm_89", "sm_90", "sm_100"),
                                     ("sm_70", "sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_100a")}
    names = {m["member"]: m for m in VLLM["modules"]}
    examples = {g["example"] for g in names["vllm/_C.abi3.so"]["kernel_code"]}
    assert any("cross_device_reduce" in e for e in examples)
    # the Marlin kernels run on sm_120 through their compute_90 PTX
    marlin = next(g for g in r.kernel_code if g.code == ("sm_80", "sm_87", "sm_90", "compute_90"))
    assert marlin not in gaps and marlin.kernels == 999


@pytest.mark.parametrize(("target", "cap"), [("sm80", (8, 0)), ("sm86", (8, 6)), ("sm89", (8, 9)), ("sm90", (9, 0)),
                                             ("sm100", (10, 0)), ("sm103", (10, 3))])
def test_vllm_0_9_1_covers_older_targets(target: str, cap: tuple[int, int]) -> None:
    """Kernels of one generation (allspark's sm_80/sm_89 only, the sm_90a CUTLASS kernels) are not counted."""
    r = _vllm(target, cap)
    assert r.ok and r.uncovered == []


def test_matrix_row_is_the_recorded_probe() -> None:
    code = load_facts().gpu_code("vllm", "0.9.1")
    assert code is not None
    sass, ptx, row = code
    assert isinstance(row, ArchProbe)
    r = _vllm(None, None)
    assert list(sass) == r.sass and list(ptx) == r.ptx
    assert [(g.kernels, g.code) for g in row.kernel_code] == [(g.kernels, g.code) for g in r.kernel_code]
    assert row.source.startswith("glmcompat arch vllm==0.9.1 --target sm120")
    assert sum(g.kernels for g in uncovered(row.kernel_code, (12, 0))) == 1725


def test_merge_kernel_code() -> None:
    a = KernelCode(3, ("sm_80", "sm_90"), "k1")
    b = KernelCode(5, ("sm_80", "sm_90"), "k2")
    c = KernelCode(4, ("sm_90a",), "k3")
    assert merge_kernel_code([a, c, b]) == [KernelCode(8, ("sm_80", "sm_90"), "k1"), c]


@pytest.mark.parametrize(("version", "gap"), [("0.9.0", "1712 of the 3297"), ("0.9.0.1", "1712 of the 3297"),
                                              ("0.9.1", "1725 of the 3342")])
def test_check_judges_vllm_per_kernel(tmp_path: Path, version: str, gap: str) -> None:
    """`check` reads the recorded kernel groups: vllm 0.9.x carries PTX, yet most of its kernels cannot run on sm120."""
    req = tmp_path / "requirements.txt"
    req.write_text(f"vllm=={version}\ntorch==2.8.0\n")
    found = {}
    for target in ("sm120", "sm100", "sm90"):
        r = run_cli("check", str(req), "--target", target, "--json", "--allow-unknown")
        doc = json.loads(r.stdout)
        found[target] = [f for f in doc["findings"] if f["rule"] == "gpu-code" and f"vllm=={version}" in f["packages"]]
    assert found["sm100"] == [] and found["sm90"] == []
    (msg,) = found["sm120"]
    assert msg["severity"] == "error"
    assert msg["message"].startswith(f"{gap} kernels of vllm {version} have no code for sm120"), msg["message"]
    assert msg["evidence"][0]["source"].startswith(f"glmcompat arch vllm=={version} --target sm120")


# -- the CUDA toolkit of the kernel rows -----------------------------------------------------------------


def _kernel_rows() -> list[Kernel]:
    rows = [k for k in load_facts().all_rows("kernel") if isinstance(k, Kernel)]
    return [k for k in rows if k.cuda is not None and not k.variant]


def test_every_kernel_row_cuda_is_its_cubins_toolkit() -> None:
    """Each release of each kernel row (on the row's platform): the release that built its cubins is the row's."""
    checked = 0
    wrong = []
    for row in _kernel_rows():
        for v in row.versions:
            rec = TOOLKITS["releases"].get(f"{row.package}=={v} {row.platform}")
            assert rec is not None, (row.package, v, row.platform)
            if "error" in rec or not rec["toolkits"]:
                continue
            checked += 1
            if rec["toolkits"] != [row.cuda]:
                wrong.append((row.package, v, row.platform, row.cuda, rec["toolkits"]))
    assert wrong == []
    assert checked > 150


@pytest.mark.parametrize(("pin", "toolkit"), [("sgl-kernel==0.3.3", "12.4"), ("sgl-kernel==0.2.9", "12.4"),
                                              ("sgl-kernel==0.3.6.post2", "12.4"), ("sgl-kernel==0.3.9", "12.9"),
                                              ("sgl-kernel==0.3.15", "12.9"), ("vllm==0.16.0", "12.9"),
                                              ("vllm==0.19.0", "12.9")])
def test_toolkits_named_in_the_issue(pin: str, toolkit: str) -> None:
    assert TOOLKITS["releases"][f"{pin} x86_64"]["toolkits"] == [toolkit]


def test_kernel_rows_do_not_claim_the_wheels_state_no_minor() -> None:
    from glmcompat.matrix.store import default_matrix_dir

    for f in ("kernels.toml", "vllm.toml", "aarch64.toml"):
        text = (default_matrix_dir() / f).read_text()
        assert "state no minor" not in text and "do not state the minor" not in text, f


# -- live (network) ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_index(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient

    cache = Cache(tmp_path_factory.mktemp("cache"))
    with IndexClient(cache=cache) as ic:
        yield ic, cache


@pytest.mark.network
def test_live_vllm_0_9_1_per_kernel(real_index) -> None:  # type: ignore[no-untyped-def]
    from glmcompat.ops.wheelprobe import probe_arch

    ic, cache = real_index
    r = probe_arch("vllm", "0.9.1", index=ic, cache=cache, target="sm120")
    assert r.wheel == VLLM["wheel"] and not r.ok
    assert sum(g.kernels for g in r.uncovered) == 1725
    assert json.loads(json.dumps([m.cached_json() for m in r.modules])) == VLLM["modules"]


@pytest.mark.network
def test_live_kernel_cuda_drift(real_index) -> None:  # type: ignore[no-untyped-def]
    """The audit of a row's CUDA field against its wheels: a row claiming 12.8 for 12.4-built releases drifts."""
    import dataclasses

    from glmcompat.ops.wheelprobe import kernel_cuda_drift, probe_toolkit

    ic, cache = real_index
    row = next(k for k in _kernel_rows() if k.package == "sgl-kernel" and "0.3.3" in k.versions)
    assert kernel_cuda_drift(dataclasses.replace(row, versions=("0.3.3",)), index=ic, cache=cache) == []
    wrong = dataclasses.replace(row, versions=("0.3.3",), cuda="12.8")
    assert kernel_cuda_drift(wrong, index=ic, cache=cache) == [("0.3.3", "12.8", ["12.4"])]
    r = probe_toolkit("sgl-kernel", "0.3.3", index=ic, cache=None)
    assert r.modules == {"sgl_kernel/common_ops.abi3.so": {"12.4": r.modules["sgl_kernel/common_ops.abi3.so"]["12.4"]}}
    assert r.bytes_fetched < 0.05 * r.bytes_total
