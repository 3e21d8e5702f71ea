"""The ABI and arch probes: pure core, fake wheels built by gcc (offline), real wheels (network)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from glmcompat.edges.cache import Cache
from glmcompat.edges.index import IndexClient
from glmcompat.model.errors import EnvironmentFailure, InputError
from glmcompat.ops.wheelprobe import (
    ExtSummary,
    ModuleArch,
    ModuleSymbols,
    arch_verdict,
    compare_abi,
    parse_pin,
    parse_target,
    primary_modules,
    probe_abi,
    probe_arch,
)
from tests.abifakes import BASE, HAVE_GXX, Transport, build_fakes

DATA = Path(__file__).parents[1] / "data" / "abi"
SGL_SASS = ["sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"]


# -- pure core ----------------------------------------------------------------------------------------


def test_parse_pin() -> None:
    assert parse_pin("SGL_Kernel==0.3.21") == ("sgl-kernel", "0.3.21")
    for bad in ("sgl-kernel", "sgl-kernel>=0.3", "sgl-kernel==not.a.version", "==1.0"):
        with pytest.raises(InputError):
            parse_pin(bad)


@pytest.mark.parametrize(("text", "want"), [("sm120", ("sm120", (12, 0))), ("sm_90", ("sm90", (9, 0))),
                                            ("12.1", ("sm121", (12, 1))), ("SM103", ("sm103", (10, 3)))])
def test_parse_target(text: str, want: tuple[str, tuple[int, int]]) -> None:
    assert parse_target(text) == want


def test_parse_target_bad() -> None:
    with pytest.raises(InputError, match="invalid target"):
        parse_target("blackwell")


def test_compare_abi() -> None:
    ext = ExtSummary({
        "pkg/_C.so": ModuleSymbols(("libc10.so", "libcudart.so.12", "libhelper.so"),
                                   ("_ZN3c104implEv", "_ZN2at3addEv", "memcpy", "torch_c_api", "_ZN3c105otherEv"), (), ()),
        "pkg/libhelper.so": ModuleSymbols((), (), (), ("_ZN3c105otherEv",)),
    })
    mods = compare_abi(ext, frozenset({"_ZN3c104implEv", "torch_c_api"}))
    c = next(m for m in mods if m.member == "pkg/_C.so")
    assert [s.symbol for s in c.missing] == ["_ZN2at3addEv"]  # the sibling provides c10::other
    assert c.needs_from_torch == 4  # three torch-namespace names and one C name torch exports
    assert c.cuda_majors == [12]


def test_cuda_warnings_grouped() -> None:
    from glmcompat.ops.wheelprobe import ModuleAbi, cuda_warnings

    mods = [ModuleAbi(f"v/_m{i}.so", ["libcudart.so.13"], [13], 1, []) for i in range(3)]
    mods += [ModuleAbi("v/_old.so", ["libcudart.so.11"], [11], 1, []), ModuleAbi("v/_ok.so", [], [], 1, [])]
    assert cuda_warnings(mods, "2.10.0", [12]) == [
        "3 modules (v/_m0.so, v/_m1.so, v/_m2.so) link CUDA runtime 13, torch 2.10.0 links 12",
        "v/_old.so links CUDA runtime 11, torch 2.10.0 links 12"]
    assert cuda_warnings(mods, "2.11.0", [13]) == ["v/_old.so links CUDA runtime 11, torch 2.11.0 links 13"]


def test_arch_verdict_matches_facts() -> None:
    mods = [ModuleArch("sgl_kernel/sm100/common_ops.abi3.so", SGL_SASS, [], {})]
    for cap, runs in (((12, 0), True), ((10, 3), False), ((12, 1), False), ((9, 0), True), ((10, 0), True),
                      ((8, 6), True), ((7, 5), False)):
        assert arch_verdict(mods, cap)[0].runs is runs, cap


def test_primary_modules() -> None:
    members = ["sgl_kernel/flash_ops.abi3.so", "sgl_kernel/sm90/common_ops.abi3.so",
               "sgl_kernel/sm100/common_ops.abi3.so", "lib/mscclpp.so"]
    assert primary_modules("sgl-kernel", members) == ["sgl_kernel/sm100/common_ops.abi3.so",
                                                      "sgl_kernel/sm90/common_ops.abi3.so"]
    assert primary_modules("other", members) == sorted(members)
    assert primary_modules("other", members, ["lib/*"]) == ["lib/mscclpp.so"]
    with pytest.raises(InputError, match="no module"):
        primary_modules("other", members, ["nope*"])


def test_ground_truth_missing_names() -> None:
    """The recorded 2.10.0 misses are exported by 2.9.1, not by 2.10.0, and have torch's shape."""
    from glmcompat.readers.elf import torch_shaped

    def exports(v: str) -> set[str]:
        d = json.loads(gzip.decompress((DATA / f"torch-{v}-cp311-manylinux_2_28_x86_64.dynsyms.json.gz").read_bytes()))
        return {s for lib in d["libs"].values() for s in lib["exported"]}

    old, new = exports("2.9.1"), exports("2.10.0")
    truth = json.loads((DATA / "extensions-vs-torch.json").read_text())
    for member, t in truth.items():
        for s in t["missing_2_10"]:
            assert s in old and s not in new and torch_shaped(s), (member, s)


# -- fake wheels built by gcc, served by an httpx transport ---------------------------------------------


@pytest.fixture(scope="module")
def fakes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    if not HAVE_GXX:
        pytest.skip("needs g++")
    return build_fakes(tmp_path_factory.mktemp("fakes"))


@pytest.mark.slow
def test_abi_compatible_and_not(fakes: dict[str, bytes], tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    t = Transport(fakes)
    with IndexClient(BASE, client=t.client(), cache=cache) as ic:
        good = probe_abi("ext", "1.0", "9.0.0", index=ic, cache=cache)
        bad = probe_abi("ext", "1.0", "9.1.0", index=ic, cache=cache)
    assert good.ok and good.missing == []
    assert not bad.ok
    assert [s.symbol for s in bad.missing] == ["_ZN3c1013MessageLoggerC1EPKcii"]
    mod = next(m for m in bad.modules if m.member == "ext/_C.so")
    assert mod.cuda_majors == [12] and "libc10.so" in mod.needed
    # MessageLogger, cuda::check, torch_c_api and cudaRuntimeGetVersion (this fake torch/lib exports it);
    # the weak optional_hook is ignored
    assert mod.needs_from_torch == 4
    assert 0 < good.bytes_fetched < good.bytes_total
    assert "MessageLogger::MessageLogger" in bad.missing[0].demangled or bad.missing[0].demangled == bad.missing[0].symbol


def test_patchelf_layout_reads_little(fakes: dict[str, bytes], tmp_path: Path) -> None:
    """torch's libc10.so here is 3 MB of incompressible middle: the probe reads its ends only."""
    t = Transport(fakes)
    with IndexClient(BASE, client=t.client(), cache=None) as ic:
        r = probe_abi("ext", "1.0", "9.0.0", index=ic, cache=None)
    assert r.bytes_fetched < 0.5 * r.bytes_total


def test_warm_repeat_does_no_network(fakes: dict[str, bytes], tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    with IndexClient(BASE, client=Transport(fakes).client(), cache=cache) as ic:
        cold = probe_abi("ext", "1.0", "9.1.0", index=ic, cache=cache)
        probe_arch("ext", "1.0", index=ic, cache=cache)
    offline = Transport(fakes, offline=True)
    with IndexClient(BASE, client=offline.client(), cache=cache, backoff=0) as ic:
        warm = probe_abi("ext", "1.0", "9.1.0", index=ic, cache=cache)
        arch = probe_arch("ext", "1.0", index=ic, cache=cache, target="sm120")
    assert offline.calls == []
    assert warm.cached and warm.bytes_fetched == 0
    assert [s.symbol for s in warm.missing] == [s.symbol for s in cold.missing]
    assert arch.cached and arch.ok


def test_offline_cold_fails_cleanly(fakes: dict[str, bytes], tmp_path: Path) -> None:
    with IndexClient(BASE, client=Transport(fakes, offline=True).client(), cache=Cache(tmp_path), backoff=0) as ic, \
            pytest.raises(EnvironmentFailure, match="cannot connect"):
        probe_abi("ext", "1.0", "9.1.0", index=ic, cache=Cache(tmp_path))


def test_arch_fake(fakes: dict[str, bytes]) -> None:
    with IndexClient(BASE, client=Transport(fakes).client()) as ic:
        r120 = probe_arch("ext", "1.0", index=ic, target="sm120")
        r121 = probe_arch("ext", "1.0", index=ic, target="sm_121")
    assert r120.sass == ["sm_80", "sm_90a", "sm_120a"] and r120.ptx == []
    assert r120.ok and not r121.ok
    assert r121.not_running == ["ext/_kernels.so"]
    d = r121.to_json()
    assert d["version"] == 1 and d["ok"] is False and d["missing"] == ["ext/_kernels.so"]
    assert {"bytes_fetched", "bytes_total"} <= set(d)


def test_torch_wheel_without_libs(fakes: dict[str, bytes]) -> None:
    files = dict(fakes)
    files["torch-9.2.0-cp311-cp311-manylinux_2_28_x86_64.whl"] = files["ext-1.0-cp310-abi3-manylinux2014_x86_64.whl"]
    with IndexClient(BASE, client=Transport(files).client()) as ic, pytest.raises(InputError, match="no torch/lib"):
        probe_abi("ext", "1.0", "9.2.0", index=ic)


# -- real wheels (network) -----------------------------------------------------------------------------

TRUTH = json.loads((DATA / "extensions-vs-torch.json").read_text())


@pytest.fixture(scope="module")
def real_index(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    cache = Cache(tmp_path_factory.mktemp("cache"))
    with IndexClient(cache=cache) as ic:
        yield ic, cache


@pytest.mark.network
@pytest.mark.parametrize(("pkg", "ver", "members"), [
    ("sgl-kernel", "0.3.21", ["sgl_kernel/sm100/common_ops.abi3.so", "sgl_kernel/sm90/common_ops.abi3.so"]),
    ("torchvision", "0.24.1", ["torchvision/_C.so"]),
])
def test_real_abi(real_index, pkg: str, ver: str, members: list[str]) -> None:  # type: ignore[no-untyped-def]
    ic, cache = real_index
    for torch, n in (("2.9.1", 0), ("2.10.0", 2)):
        r = probe_abi(pkg, ver, torch, index=ic, cache=cache)
        assert r.ok is (n == 0)
        for member in members:
            mod = next(m for m in r.modules if m.member == member)
            truth = TRUTH[member]
            assert len(mod.missing) == truth["missing"][torch] == n
            if n:
                assert sorted(s.symbol for s in mod.missing) == sorted(truth["missing_2_10"])
            assert mod.needed == truth["needed"]
            assert mod.needs_from_torch == truth["torch_expected"]
            assert mod.cuda_majors == [12]
        assert r.torch_cuda_majors == [12]
        if not r.cached:
            assert r.bytes_fetched <= 0.05 * r.bytes_total


@pytest.mark.network
def test_real_torch_exports_match_ground_truth(real_index) -> None:  # type: ignore[no-untyped-def]
    from glmcompat.ops.wheelprobe import _find, _Stats, _torch_summary

    ic, cache = real_index
    f = _find(ic, cache, "torch", "2.9.1", "cp311", "manylinux_x86_64")
    ours = set(_torch_summary(ic, cache, f, _Stats()).exports)
    d = json.loads(gzip.decompress((DATA / "torch-2.9.1-cp311-manylinux_2_28_x86_64.dynsyms.json.gz").read_bytes()))
    assert f.size == d["wheel_size"]
    assert ours == {s for lib in d["libs"].values() for s in lib["exported"]}


@pytest.mark.network
def test_real_arch_sgl_kernel(real_index) -> None:  # type: ignore[no-untyped-def]
    ic, cache = real_index
    r = probe_arch("sgl-kernel", "0.3.21", index=ic, cache=cache, target="sm120")
    assert r.sass == SGL_SASS and r.ptx == []
    assert r.ok
    for member in ("sgl_kernel/sm100/common_ops.abi3.so", "sgl_kernel/sm90/common_ops.abi3.so"):
        mod = next(m for m in r.modules if m.member == member)
        assert mod.counts == TRUTH[member]["fatbin"]["--list-elf"]
    for target in ("sm103", "sm121"):
        assert not probe_arch("sgl-kernel", "0.3.21", index=ic, cache=cache, target=target).ok
