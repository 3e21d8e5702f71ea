"""The GPU frameworks that share a machine with torch, swept from their sources (issue 38, branch sweep-gpu): each
packaging or compatibility message CuPy, JAX/jaxlib and its CUDA plugin, TensorFlow, onnxruntime-gpu, TensorRT and
PaddlePaddle print (tests/fixtures/raise_sites/gpu-frameworks-signatures.toml, read at the newest release and one
about two years older) is named by its signature with the package, library and versions the line gives; their
notices and out-of-remit failures (out of memory, a busy GPU, a missing plugin of the program's own) stay
unclaimed."""

from __future__ import annotations

from tests.decide.explaining import table

MESSAGES = table("gpu-frameworks-signatures.toml")
LIBRARIES = {"cupy", "jax", "jaxlib", "tensorflow", "onnxruntime-gpu", "tensorrt", "paddlepaddle-gpu"}


def test_the_table_covers_every_library_and_cites_its_source():
    assert LIBRARIES <= {m["library"] for m in MESSAGES}
    assert all(m["source"] and m["text"] for m in MESSAGES)
    assert sum(bool(m["expect"]) for m in MESSAGES) >= 40
    assert sum(not m["expect"] for m in MESSAGES) >= 10  # the near misses asserted unclaimed

