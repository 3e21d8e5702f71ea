"""The messages of tests/fixtures/raise_sites/ext-signatures.toml (issue 38, sweep-ext): compiled torch-extension
packages' own compatibility checks and load failures (mmcv / mmdet, tiny-cuda-nn, gsplat / nerfacc, kaolin, apex,
torch-tensorrt, deepspeed, spconv), each named with its words, and each notice left unclaimed."""

from __future__ import annotations


from tests.decide.explaining import table

MESSAGES = table("ext-signatures.toml")


def test_the_table_covers_the_sweeps_libraries():
    assert {"mmcv", "mmdet", "tiny-cuda-nn", "gsplat", "nerfacc", "kaolin", "apex", "torch-tensorrt", "deepspeed",
            "spconv"} <= {m["library"] for m in MESSAGES}
    assert all(m["source"] and m["text"] for m in MESSAGES)

