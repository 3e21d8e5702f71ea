"""Every JSON kind glmcompat stores is checked against its shape when read back (glmcompat.model.shapes through
glmcompat.edges.cache.SHAPES): an entry of another shape is a miss, recomputed by the caller, never a crash."""

from __future__ import annotations

import pytest

from glmcompat.edges.cache import SHAPES, Cache, shape_ok

SHA = "ab" * 32
GOOD = {
    f"modelprobe-v1-{SHA}": {"package": "transformers", "version": "4.57.1", "wheel": "transformers-4.57.1-py3-none-any.whl",
                             "sha256": SHA, "names": ["llama"], "files": ["transformers/models/auto/configuration_auto.py"],
                             "where": {"llama": "transformers/models/auto/configuration_auto.py"}, "configs": [],
                             "configs_file": None},
    f"toolkit-v2-0-{SHA}": {"modules": {"sgl_kernel/common_ops.abi3.so": {"12.8": 3}}},
}
BAD = {
    f"modelprobe-v1-{SHA}": [{}, {**GOOD[f"modelprobe-v1-{SHA}"], "names": "llama"},
                             {**GOOD[f"modelprobe-v1-{SHA}"], "where": {"llama": 5}}],
    f"toolkit-v2-0-{SHA}": [{}, {"modules": 5}, {"modules": {"m.so": {"12.8": "3"}}}, {"modules": {"m.so": []}}],
}


def test_every_stored_probe_kind_has_a_shape() -> None:
    assert {k.split("-", 1)[0] for k in GOOD} <= SHAPES.keys()


@pytest.mark.parametrize("key", sorted(GOOD))
def test_an_entry_of_another_shape_is_a_miss(tmp_path, key: str) -> None:
    cache = Cache(tmp_path)
    cache.put_json(key, GOOD[key])
    assert cache.get_json(key) == GOOD[key]
    for bad in BAD[key]:
        assert not shape_ok(key, bad), bad
        cache.put_json(key, bad)
        assert cache.get_json(key) is None, bad


def _records() -> dict[str, tuple[object, object, object]]:
    """kind's key -> (a typed record, its stored JSON, the record read back from that JSON): what each probe stores
    is a typed record's ``to_json``, and what it reads back its ``from_json``."""
    from glmcompat.edges.index import IndexFile
    from glmcompat.model.gpu import KernelCode
    from glmcompat.ops.modelprobe import Known
    from glmcompat.ops.wheelprobe import (
        AbiResult,
        ExtSummary,
        MissingSymbol,
        ModuleAbi,
        ModuleArch,
        ModuleSymbols,
        TorchSummary,
        _pick_json,
        _pick_of_json,
    )

    known = Known("transformers", "4.57.1", "transformers-4.57.1-py3-none-any.whl", SHA, frozenset({"llama", "glm"}),
                  ("transformers/models/auto/configuration_auto.py",), 0,
                  {"llama": "transformers/models/auto/configuration_auto.py"}, frozenset({"glm"}), None)
    ext = ExtSummary({"p/_C.so": ModuleSymbols(("libc10.so", "libh.so"), ("_ZN3c104implEv",), ("w",), ()),
                      "p/libh.so": ModuleSymbols((), (), (), ("_ZN3c104implEv",))})
    torch = TorchSummary(frozenset({"a", "b"}), ("libcudart.so.12",), {"torch/lib/libc10.so": 2})
    arch = ModuleArch("p/_k.so", ["sm_90a"], ["compute_90"], {"sm_90a": 1}, None, [], {"12.8": 1},
                      [KernelCode(3, ("sm_90a",), "_Z1kv")], 0)
    abi = AbiResult("p", "1.0", "2.9.1", "p.whl", "t.whl",
                    [ModuleAbi("p/_C.so", ["libc10.so"], [12], 2, [MissingSymbol("_Z1xv", "x()")])], 10, [12],
                    ["w"], "aarch64", bytes_fetched=0, bytes_total=9, seconds=0.0, cached=True)
    pick = IndexFile("p-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", "https://index.invalid/p.whl", 5, SHA, ">=3.9",
                     False, "1.0", True, frozenset({"cp311-cp311-manylinux_2_28_x86_64"}), SHA, True, None)
    from glmcompat.edges.sources import IndexSource, ReleaseWheel

    wheel = ReleaseWheel("p-1.0-py3-none-any.whl", "https://index.invalid/p.whl", 5, SHA, True, SHA)
    memo = {"format": IndexSource.MEMO_FORMAT, "versions": ["1.0"], "wheels": {"1.0": wheel.to_json()}, "elsewhere": {}}
    return {
        f"wheels-{SHA}": (wheel, memo, ReleaseWheel.from_json(memo["wheels"]["1.0"])),
        f"modelprobe-v1-{SHA}": (known, known.to_json(), Known.from_json(known.to_json())),
        f"ext-v2-{SHA}": (ext, ext.to_json(), ExtSummary.from_json(ext.to_json())),
        f"torch-v1-{SHA}.meta": (torch, torch.meta_json(), TorchSummary.from_stored(torch.names_bytes(), torch.meta_json())),
        f"arch-v2-{SHA}": ([arch], [arch.cached_json()], [ModuleArch.from_cached_json(arch.cached_json())]),
        f"abi-v2-{SHA[:32]}-{SHA[:32]}": (abi, abi.to_json(), AbiResult.from_json(abi.to_json(), 0.0)),
        f"pick-{SHA}": (pick, _pick_json(pick), _pick_of_json(_pick_json(pick))),
    }


@pytest.mark.parametrize("key", sorted(_records()))
def test_a_stored_probe_record_has_its_kinds_shape_and_reads_back_equal(tmp_path, key: str) -> None:
    record, stored, back = _records()[key]
    assert shape_ok(key, stored) and back == record
    cache = Cache(tmp_path)
    cache.put_json(key, stored)
    assert cache.get_json(key) == stored  # JSON through the cache, as the probes store it
