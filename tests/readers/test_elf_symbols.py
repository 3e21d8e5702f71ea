"""One torch-symbol predicate (``glmcompat.readers.elf.needs_from_torch``) for ``abi``, ``matrix probe`` and ``verify``.

Offline from recorded data (``tests/data/abi/symbols.json.gz``, written by ``scripts/record_symbols.py``
from the real wheels; ``torch-*.dynsyms.json.gz``, an independent pyelftools reading of torch's libs):
torch's stable C ABI is C-named (``aoti_torch_*``, ``torch_*``), and an extension built for a newer
torch misses such names on an older one. ``-m network`` re-runs the probe live on the same pairs.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from glmcompat.ops.wheelprobe import ExtSummary, compare_abi, ext_summary_of
from glmcompat.readers.elf import check_torch_needs, needs_from_torch, read_elf, torch_shaped

DATA = Path(__file__).parents[1] / "data" / "abi"
STABLE_3 = ["torch_exception_get_what", "torch_exception_get_what_without_backtrace", "torch_new_stable_ivalue"]
VLLM_STABLE_3 = ["torch_dtype_float4_e2m1fn_x2", "torch_dtype_float8_e8m0fnu", "torch_from_blob"]
TV_MISSING_2_10 = json.loads((DATA / "extensions-vs-torch.json").read_text())


@cache
def recorded() -> dict[str, Any]:
    return json.loads(gzip.decompress((DATA / "symbols.json.gz").read_bytes()))


def verdict(pin: str, torch: str, **kw: Any) -> dict[str, list[str]]:
    """{member: sorted missing names} for the recorded extension against the recorded torch exports."""
    d = recorded()
    mods = compare_abi(ExtSummary.from_json(d["extensions"][pin]["modules"]), frozenset(d["torch"][torch]["exports"]), **kw)
    return {m.member: [s.symbol for s in m.missing] for m in mods}


def union(v: dict[str, list[str]]) -> list[str]:
    return sorted({s for names in v.values() for s in names})


# -- the predicate -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("symbol", "shaped"), [
    ("_ZN3c1013MessageLoggerC1EPKcii", True),
    ("_ZNK2at10TensorBase4sizeEl", True),
    ("_ZN5torch8autograd13_wrap_outputsEv", True),
    ("_ZTVN5torch8autograd4NodeE", True),  # vtable
    ("_ZTHN3c104impl26raw_local_dispatch_key_setE", True),  # TLS init
    ("_ZN6caffe28TypeMeta3NewEv", True),
    ("_ZN14at_cuda_detail3cub11EmptyKernelIvEEvv", True),
    ("aoti_torch_empty_strided", True),
    ("torch_new_stable_ivalue", True),
    ("torch_exception_get_what", True),
    ("THPDtypeType", True),
    ("_Z16THPVariable_WrapRKN2at10TensorBaseE", True),  # a C++ function at global scope
    ("aoti_record_function_start", True),
    ("_ZNSt6vectorIiSaIiEED1Ev", False),
    ("_ZN10torchaudio3fooEv", False),
    ("torchaudio_helper", False),  # "torch" but not "torch_"
    ("memcpy", False),
    ("cudaMalloc", False),
    ("PyObject_Call", False),
    ("mkl_serv_malloc", False),
])
def test_torch_shaped(symbol: str, shaped: bool) -> None:
    assert torch_shaped(symbol) is shaped
    assert needs_from_torch(symbol) is shaped


def test_known_exports_count_too() -> None:
    """A namespaced C++ name without torch's shape is needed from torch when a torch release exports it;
    C names and the C++ runtime's names are not (torch re-exports libstdc++ instantiations and bundled
    C libraries, which a module may bind elsewhere)."""
    fb = "_ZN6fbgemm13fbgemmSupportEv"
    replace = "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7replaceEmmPKcm"
    known = frozenset({fb, replace, "mkl_serv_malloc"})
    assert not needs_from_torch(fb)
    assert needs_from_torch(fb, known)
    assert not needs_from_torch(replace, known) and not needs_from_torch("mkl_serv_malloc", known)
    v = check_torch_needs([fb, replace, "mkl_serv_malloc", "memcpy"], frozenset(), known=known)
    assert v.needs == {fb} and v.missing == {fb}
    # the release being compared counts everything it exports (here: as provided, so not missing)
    v = check_torch_needs([replace, "mkl_serv_malloc"], frozenset({replace, "mkl_serv_malloc"}))
    assert v.needs == {replace, "mkl_serv_malloc"} and not v.missing


def test_check_torch_needs() -> None:
    torch = frozenset({"_ZN3c103fooEv", "memcpy_from_torch"})
    v = check_torch_needs(["_ZN3c103fooEv", "_ZN2at3barEv", "torch_from_blob", "memcpy_from_torch", "printf",
                           "_ZN3c105otherEv"], torch, siblings=frozenset({"_ZN3c105otherEv", "printf"}))
    # printf is defined by a sibling but is not torch's: it is not counted as needed from torch
    assert v.needs == {"_ZN3c103fooEv", "_ZN2at3barEv", "torch_from_blob", "memcpy_from_torch", "_ZN3c105otherEv"}
    assert v.missing == {"_ZN2at3barEv", "torch_from_blob"}


def test_one_predicate_everywhere() -> None:
    """No module keeps a torch-symbol predicate of its own (verify/static.py had one counting THP*,
    aoti_torch_*; elf.py's did not)."""
    root = Path(__file__).parents[2] / "glmcompat"
    for path in root.rglob("*.py"):
        text = path.read_text()
        assert "is_torch_symbol" not in text, path
        assert "_TORCH_C_SYM" not in text, path
        if path.name != "elf.py":
            assert "TORCH_NAMESPACES" not in text and "TORCH_C_PREFIXES" not in text, path


# -- the stable C ABI, from recorded wheels -----------------------------------------------------------


def test_torchaudio_2_11_1_vs_torch_2_11_0_misses_the_stable_abi() -> None:
    v = verdict("torchaudio==2.11.1", "2.11.0")
    assert union(v) == STABLE_3
    assert v["torchaudio/lib/libtorchaudio.so"] == STABLE_3


@pytest.mark.parametrize("torch", ["2.13.0", "2.14.1"])
def test_torchaudio_2_11_1_loads_on_2_13_and_later(torch: str) -> None:
    assert union(verdict("torchaudio==2.11.1", torch)) == []


def test_torchvision_0_29_2_vs_torch_2_11_0() -> None:
    v = verdict("torchvision==0.29.2", "2.11.0")
    assert union(v) == STABLE_3
    assert v["torchvision/_C_stable.so"] == STABLE_3 and v["torchvision/image_stable.so"] == STABLE_3
    for torch in ("2.13.0", "2.14.1"):
        assert union(verdict("torchvision==0.29.2", torch)) == []


def test_vllm_0_33_0_vs_torch_2_10_0() -> None:
    """``_C_stable_libtorch`` misses 3 C names on 2.10.0; other modules miss the exception/ivalue ones too."""
    v = verdict("vllm==0.33.0", "2.10.0")
    assert v["vllm/_C_stable_libtorch.abi3.so"] == VLLM_STABLE_3
    assert v["vllm/_qutlass_C.abi3.so"] == sorted(["torch_dtype_float4_e2m1fn_x2", "torch_dtype_float8_e8m0fnu",
                                                   *STABLE_3])
    assert union(v) == sorted(VLLM_STABLE_3 + STABLE_3)
    assert union(verdict("vllm==0.33.0", "2.14.0")) == []


@pytest.mark.parametrize(("pin", "torch"), [("torchaudio==2.11.1", "2.11.0"), ("torchvision==0.29.2", "2.11.0"),
                                            ("vllm==0.33.0", "2.10.0")])
def test_the_misses_are_c_names_a_cxx_only_predicate_never_saw(pin: str, torch: str) -> None:
    missing = union(verdict(pin, torch))
    assert missing and all(not s.startswith("_Z") for s in missing)
    # ...and a release that does export them is known: each is exported by the torch the wheel was built for
    newer = "2.14.0" if pin.startswith("vllm") else "2.13.0"
    assert set(missing) <= set(recorded()["torch"][newer]["exports"])


def test_recorded_verdicts_agree_with_offline_comparison() -> None:
    """What ``glmcompat abi`` printed when the data was recorded is what the pure core computes now."""
    d = recorded()
    for key, want in d["verdicts"].items():
        pin, _, torch = key.partition(" --torch ")
        mods = compare_abi(ExtSummary.from_json(d["extensions"][pin]["modules"]), frozenset(d["torch"][torch]["exports"]))
        got = {m.member: {"needs_from_torch": m.needs_from_torch, "missing": [s.symbol for s in m.missing]}
               for m in mods}
        assert got == want["modules"], key
        assert want["ok"] is (not union({k: v["missing"] for k, v in got.items()}))


def test_known_releases_change_nothing_here() -> None:
    """Passing every recorded torch's exports as ``known`` adds no miss to any recorded pair: every miss
    has torch's shape. (Counting C++ runtime names would: of the recorded releases only torch 2.13.0
    exports libstdc++'s ``std::string::replace``, which sgl-kernel 0.3.21 binds in libstdc++.)"""
    d = recorded()
    known = frozenset(s for t in d["torch"].values() for s in t["exports"])
    for pin in d["extensions"]:
        for torch in d["torch"]:
            assert verdict(pin, torch, known=known) == verdict(pin, torch), (pin, torch)


def test_weak_undefined_never_count() -> None:
    """torchvision 0.24.1's _C.so leaves a c10 TLS-init symbol WEAK undefined; 2.9.1 does not export it."""
    d = recorded()
    mod = d["extensions"]["torchvision==0.24.1"]["modules"]["torchvision/_C.so"]
    tls = "_ZTHN3c104impl26raw_local_dispatch_key_setE"
    assert tls in mod["weak_undefined"] and tls not in mod["undefined"]
    assert tls not in d["torch"]["2.9.1"]["exports"]
    assert verdict("torchvision==0.24.1", "2.9.1")["torchvision/_C.so"] == []


# -- the ground truth of tests/data/abi (pyelftools over the whole torch libraries) -------------------


@cache
def full_exports(torch: str) -> frozenset[str]:
    raw = (DATA / f"torch-{torch}-cp311-manylinux_2_28_x86_64.dynsyms.json.gz").read_bytes()
    return frozenset(s for lib in json.loads(gzip.decompress(raw))["libs"].values() for s in lib["exported"])


@pytest.mark.parametrize(("pin", "member"), [("sgl-kernel==0.3.21", "sgl_kernel/sm100/common_ops.abi3.so"),
                                             ("sgl-kernel==0.3.21", "sgl_kernel/sm90/common_ops.abi3.so"),
                                             ("torchvision==0.24.1", "torchvision/_C.so")])
def test_ground_truth_still_holds(pin: str, member: str) -> None:
    truth = TV_MISSING_2_10[member]
    ext = ExtSummary.from_json(recorded()["extensions"][pin]["modules"])
    assert list(ext.modules[member].needed) == truth["needed"]
    for torch in ("2.9.1", "2.10.0"):
        mods = {m.member: m for m in compare_abi(ext, full_exports(torch))}
        m = mods[member]
        assert len(m.missing) == truth["missing"][torch]
        assert m.needs_from_torch == truth["torch_expected"]
        if torch == "2.10.0":
            assert sorted(s.symbol for s in m.missing) == sorted(truth["missing_2_10"])
        # the compact export list recorded by scripts/record_symbols.py gives the same verdict
        small = {m.member: m for m in compare_abi(ext, frozenset(recorded()["torch"][torch]["exports"]))}
        assert small[member] == m


def test_recorded_exports_match_the_independent_reading() -> None:
    d = recorded()
    for torch in ("2.9.1", "2.10.0"):
        t = d["torch"][torch]
        assert t["exports_total"] == len(full_exports(torch))
        wanted = {s for e in d["extensions"].values() for m in e["modules"].values()
                  for s in m["undefined"] + m["weak_undefined"]}
        assert set(t["exports"]) == full_exports(torch) & wanted


# -- the same predicate end to end: abi (fake index) and verify (fake site-packages) -------------------


@pytest.mark.slow
def test_abi_probe_counts_the_stable_c_abi(tmp_path: Path) -> None:
    from glmcompat.edges.index import IndexClient
    from glmcompat.ops.wheelprobe import probe_abi, torch_exports
    from tests.abifakes import BASE, HAVE_GXX, Transport, build_fakes

    if not HAVE_GXX:
        pytest.skip("needs g++")
    fakes = build_fakes(tmp_path / "fakes")
    with IndexClient(BASE, client=Transport(fakes).client()) as ic:
        old = probe_abi("stableext", "1.0", "9.0.0", index=ic)
        new = probe_abi("stableext", "1.0", "9.1.0", index=ic)
        known = torch_exports("9.1.0", index=ic)
        assert "torch_new_stable_ivalue" in known - torch_exports("9.0.0", index=ic)
        with_known = probe_abi("stableext", "1.0", "9.0.0", index=ic, known=known)
    assert not old.ok and [s.symbol for s in old.missing] == ["torch_new_stable_ivalue"]
    assert old.modules[0].needs_from_torch == 2  # torch_c_api (exported) and torch_new_stable_ivalue
    assert new.ok and new.modules[0].needs_from_torch == 2
    assert with_known.modules == old.modules


def test_verify_and_abi_agree_on_a_stable_abi_miss(tmp_path: Path) -> None:
    import shutil

    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    from glmcompat.ops.verify.core import run
    from glmcompat.ops.verify.plan import Options
    from tests.ops.verify.test_verify import make_ext, make_torch, probe

    site = tmp_path / "site"
    site.mkdir()
    make_torch(site, "2.11.0")
    make_ext(site, "torchaudio", "2.11.1", "torch_new_stable_ivalue", ["torch>=2.13.0"], lib="lib/libtorchaudio.so")
    r = run(Options(paths=[str(site)], no_gpu=True, timeout=60)).to_json()
    abi = probe(r, "abi:torchaudio")
    assert abi["status"] == "failed"
    assert [f["missing"] for f in abi["data"]["files"]] == [["torch_new_stable_ivalue"]]
    # the probe's pure core on the same files says the same
    infos = {"torchaudio/lib/libtorchaudio.so": read_elf(site / "torchaudio" / "lib" / "libtorchaudio.so")}
    torch = read_elf(site / "torch" / "lib" / "libc10.so").defined
    mods = compare_abi(ext_summary_of(infos), torch)
    assert [s.symbol for s in mods[0].missing] == ["torch_new_stable_ivalue"]
    assert mods[0].needs_from_torch == abi["data"]["files"][0]["needs_from_torch"] == 2


# -- live (network) ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient

    cache = Cache(tmp_path_factory.mktemp("cache"))
    with IndexClient(cache=cache) as ic:
        yield ic, cache


@pytest.mark.network
@pytest.mark.parametrize(("pin", "torch", "missing"), [
    ("torchaudio==2.11.1", "2.11.0", STABLE_3),
    ("torchaudio==2.11.1", "2.13.0", []),
    ("torchvision==0.29.2", "2.11.0", STABLE_3),
    ("vllm==0.33.0", "2.10.0", sorted(VLLM_STABLE_3 + STABLE_3)),
])
def test_live_probe_matches_recorded(live, pin: str, torch: str, missing: list[str]) -> None:  # type: ignore[no-untyped-def]
    from glmcompat.ops.wheelprobe import parse_pin, probe_abi

    ic, cache = live
    pkg, ver = parse_pin(pin)
    r = probe_abi(pkg, ver, torch, index=ic, cache=cache)
    assert [s.symbol for s in r.missing] == missing
    want = recorded()["verdicts"][f"{pin} --torch {torch}"]
    assert r.wheel == want["wheel"] and r.torch_wheel == want["torch_wheel"]
    assert {m.member: {"needs_from_torch": m.needs_from_torch, "missing": [s.symbol for s in m.missing]}
            for m in r.modules} == want["modules"]
    if not r.cached:
        assert r.bytes_fetched <= 0.08 * r.bytes_total
