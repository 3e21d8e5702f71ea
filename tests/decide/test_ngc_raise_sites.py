"""The messages of tests/fixtures/raise_sites/ngc-signatures.toml (issue 38, branch fix-ngc): NVIDIA's NGC container
entrypoint (the host's kernel driver older than the image's CUDA with forward compatibility unavailable, the container
started without the GPU; its compatibility notices, banner and SHMEM note left unclaimed) and DeepSpeed's op builder
(every compute capability filtered out for an op, the op's own reason for refusing a JIT build, its CUDA checks, and a
failed build where torch found no CUDA runtime and no nvcc step shows); each named with its words, each notice
unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("ngc-signatures.toml")


def test_the_table_covers_both_raise_sites_and_their_notices():
    assert {m["library"] for m in MESSAGES} == {"ngc", "deepspeed"}
    assert sum(not m["expect"] for m in MESSAGES) >= 10


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
