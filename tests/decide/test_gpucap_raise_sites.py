"""A GPU older than what a program's binary or check needs, in the words of the programs users run beside torch
(gpu-post's and CudaMiner's kernel check, numba, DeepSpeed's op builder, TensorFlow, JAX, CuPy, llama.cpp, triton,
flash-attn, vLLM): each message (tests/fixtures/raise_sites/gpucap-signatures.toml, from their sources) is named by the
signature it should get, with the GPU, its capability and the minimum the line gives; notices and lines that only name
a capability stay unclaimed."""

from __future__ import annotations


from tests.decide.explaining import each_row, diagnoses, message_id, table, unclaimed

MESSAGES = table("gpucap-signatures.toml")


def test_the_table_covers_each_program():
    assert {"gpu-post", "numba", "deepspeed", "tensorflow", "jax", "cupy", "llama.cpp", "triton", "flash-attn",
            "vllm", "bitsandbytes", "torch-cpu"} <= {m["library"] for m in MESSAGES}
    assert all(m["source"] and m["text"] for m in MESSAGES)
    assert sum(not m["expect"] for m in MESSAGES) >= 5  # near misses


def test_each_message_is_named_with_the_gpu_and_the_minimum(tmp_path, capsys):
    def check(m):
        diagnoses(str(m["text"]).replace("\\n", "\n"), str(m["expect"]), list(m["words"]), tmp_path, capsys)

    each_row([(message_id(m, 60), m) for m in [m for m in MESSAGES if m["expect"]]], check)


def test_a_notice_or_a_capability_without_a_failure_is_not_claimed(tmp_path, capsys):
    def check(m):
        unclaimed(str(m["text"]).replace("\\n", "\n"), tmp_path, capsys)

    each_row([(message_id(m, 60), m) for m in [m for m in MESSAGES if not m["expect"]]], check)


def test_the_gpu_the_log_names_and_its_capability_fill_a_line_that_names_neither(tmp_path, capsys):
    """gpu-post's line names the device by its index only: the GPU the log names elsewhere (nvidia-smi's "NVIDIA
    GeForce RTX 5090") is named, with the capability the matrix's [[target]] row gives that product."""
    out = diagnoses("NVIDIA GeForce RTX 5090\nGPU #0: FATAL: the 'z' kernel requires 13.0 capability!",
                    "gpu-capability-too-old", ["RTX 5090", "12.0", "sm_120", "13.0"], tmp_path, capsys)
    assert "older than 13.0" not in out  # the GPU's own capability is said, not only the floor
