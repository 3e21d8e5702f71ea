"""The messages of tests/fixtures/raise_sites/ngc-signatures.toml (issue 38, branch fix-ngc): NVIDIA's NGC container
entrypoint (the host's kernel driver older than the image's CUDA with forward compatibility unavailable, the container
started without the GPU; its compatibility notices, banner and SHMEM note left unclaimed) and DeepSpeed's op builder
(every compute capability filtered out for an op, the op's own reason for refusing a JIT build, its CUDA checks, and a
failed build where torch found no CUDA runtime and no nvcc step shows); each named with its words, each notice
unclaimed."""

from __future__ import annotations


from tests.decide.explaining import each_row, read_as_tabled, row_id, table

MESSAGES = table("ngc-signatures.toml")


def test_the_table_covers_both_raise_sites_and_their_notices():
    assert {m["library"] for m in MESSAGES} == {"ngc", "deepspeed"}
    assert sum(not m["expect"] for m in MESSAGES) >= 10


# left undone, each a strict expected failure (by row_id): torch's "No CUDA runtime is found, using CUDA_HOME=..." before
# pip's failed build of deepspeed is read as nvcc-missing, but the diagnosis does not name the package being built
# ("deepspeed", one of the row's words): its own test, one a row, passed only because the log's path (the test's
# temporary directory, named by the row's id) held "deepspeed"
UNDONE = {"deepspeed:No CUDA runtime is found, using CUDA_HOME='/usr/lo#5b1df6ab"}


def test_each_message(tmp_path, capsys):
    def check(m):
        read_as_tabled(m, tmp_path, capsys)

    each_row([(row_id(m), m) for m in MESSAGES], check, UNDONE)
