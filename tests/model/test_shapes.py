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
