"""CUDA error numbers printed without their string, and the package whose own kernel had no code for the GPU (issue 38,
fix-kern): each message of tests/fixtures/raise_sites/kern-signatures.toml (nvdiffrast's "Cuda error: <n>[<call>;]",
onnxruntime's CudaCall and CudaKernel::Compute lines, a program's own "CUDA error <n>", cudaError_t / CUresult numbers) is
named by the signature whose cause that number is, with the package the log names and its remedy (onnxruntime's release
arch list, not TORCH_CUDA_ARCH_LIST); out-of-remit numbers (OOM, illegal address, launch failure, unknown) and numbers
no CUDA error printer prints stay unclaimed."""

from __future__ import annotations

from tests.decide.explaining import each_row, message_id, read_as_tabled, row_id, table

MESSAGES = table("kern-signatures.toml")


def test_the_table_maps_each_claimed_number_and_keeps_near_misses():
    named = {m["expect"] for m in MESSAGES if m["expect"]}
    assert named == {"no-kernel-image", "driver-insufficient", "ptx-unsupported-toolchain",
                     "cuda-forward-compat-unsupported", "cuda-system-not-ready", "gpu-image-invalid"}
    assert len([m for m in MESSAGES if not m["expect"]]) >= 6
    assert all(m["source"] for m in MESSAGES)


def test_each_message_is_read_as_tabled(tmp_path, capsys):
    ids = [message_id(m) for m in MESSAGES]
    each_row([(row_id(m) if ids.count(message_id(m)) > 1 else message_id(m), m) for m in MESSAGES],
             lambda m: read_as_tabled(m, tmp_path, capsys))
