"""The frameworks users run beside (or instead of) torch (issue 38's sweep by library): each packaging or compatibility
message that TensorFlow (and the XLA it shares with jaxlib), JAX and its CUDA plugin, onnxruntime-gpu, TensorRT and
PaddlePaddle print, as the library formats it (tests/fixtures/raise_sites/frameworks-signatures.toml, from their
sources and wheels), is named by the signature it should get, with the package, the library and the versions the
line gives; the notices among them, and the lines that tell of no packaging failure (no GPU, out of memory), stay
unclaimed."""

from __future__ import annotations



from glmcompat.decide.frameworkcauses import framework_package
from glmcompat.model.signatures import Hit
from tests.decide.explaining import each_row, message_id, table, diagnoses, unclaimed

MESSAGES = table("frameworks-signatures.toml")
LIBRARIES = {"tensorflow", "jax", "jaxlib", "onnxruntime-gpu", "tensorrt", "paddlepaddle-gpu"}



def test_the_table_covers_every_framework():
    assert LIBRARIES <= {m["library"] for m in MESSAGES}
    assert all(m["source"] and m["text"] for m in MESSAGES)
    assert sum(bool(m["expect"]) for m in MESSAGES) >= 50
    assert all(m["words"] for m in MESSAGES if m["expect"])  # each claim names what the line gives


def test_each_message_is_named_with_its_package_library_and_versions(tmp_path, capsys):
    def check(m):
        diagnoses(m["text"], m["expect"], m["words"], tmp_path, capsys)

    each_row([(message_id(m, 60), m) for m in [m for m in MESSAGES if m["expect"]]], check)


def test_a_notice_or_an_environment_without_a_gpu_is_not_claimed(tmp_path, capsys):
    def check(m):
        unclaimed(m["text"], tmp_path, capsys)

    each_row([(message_id(m, 60), m) for m in [m for m in MESSAGES if not m["expect"]]], check)


# words the framework rows read, in lines that tell of no failure
UNCLAIMED = [
    "I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Successfully opened dynamic library libcudart.so.11.0",
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1418] Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 10813 MB memory) -> physical GPU (device: 0, name: Tesla K80, pci bus id: 0000:00:1e.0, compute capability: 3.7)",
    "I tensorflow/stream_executor/cuda/cuda_dnn.cc:369] Loaded cuDNN version 8100",
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:176] hostname: 7b5a3a9d1c6e",
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:200] libcuda reported version is: 470.57.2",
    "Ignore above cudart dlerror if you do not have a GPU set up on your machine.",
    "Available providers: 'TensorrtExecutionProvider, CUDAExecutionProvider, CPUExecutionProvider'",
    "jax 0.4.30 and jaxlib 0.4.30 are installed",
    "INFO: Found cuDNN version 90100, JAX was built against 90100",
]


def test_a_line_with_a_framework_rows_words_is_not_claimed(tmp_path, capsys):
    def check(line):
        unclaimed(line, tmp_path, capsys)

    each_row([(str(line), line) for line in UNCLAIMED], check)


def test_the_package_is_the_rows_data_and_a_repeated_group_reads_as_one():
    """fwpkg_<dist> names the package (its '_' read as '-', a trailing index of a repeated group dropped); a framework
    row that names none gives "", any other row None."""
    def hit(groups: dict[str, str]) -> Hit:
        return Hit("x", "", "", "", 1, 1, groups, "", "", "")
    assert framework_package(hit({"fwpkg_onnxruntime_gpu2": "Failed to load library"})) == "onnxruntime-gpu"
    assert framework_package(hit({"fx_lib": "libcudnn.so.8"})) == ""
    assert framework_package(hit({"library": "libcudnn.so.8"})) is None


def test_jax_versions_are_read_as_their_releases(tmp_path, capsys):
    """JAX prints each CUDA library's version as its encoded number (jax-0.4.30 wheel jax/_src/xla_bridge.py
    _version_check): cuBLAS 120103 is 12.1.3, cuSOLVER 11405 is 11.4.5, the CUDA runtime 12010 is 12.1."""
    out = diagnoses("Found cuBLAS version 120103, but JAX was built against version 120205, which is newer.",
                    "cuda-lib-too-old", ["120103 (12.1.3)", "120205 (12.2.5)", "jaxlib"], tmp_path, capsys)
    assert "cuDNN" not in out.split("cause:", 1)[1].split("hint:", 1)[0].split("(here:", 1)[1], out
